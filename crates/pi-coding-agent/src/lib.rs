//! # pi-coding-agent
//!
//! The product layer of pi-rs — the Rust port of pi-coding-agent 0.85.0: a coding agent you
//! can embed. The `pi` binary is a thin shell over this crate ([`run_command_line`]).
//!
//! ## The layers
//!
//! pi-rs is four library crates, each using only the ones below it:
//!
//! | crate | what it gives |
//! |---|---|
//! | `pi-ai` | one streaming interface over LLM providers, models, and the scripted `faux` provider for tests |
//! | `pi-agent-core` | the agent loop: a model, tools ([`pi_agent_core::AgentTool`]), and the loop's events |
//! | `pi-tui` | the terminal toolkit of the interactive mode |
//! | `pi-coding-agent` | this crate: sessions, persistence, compaction, retry, extensions, tools, the modes |
//!
//! Inside this crate a library user meets five things:
//!
//! 1. **[`AgentSession`]** — one conversation: [`AgentSession::builder`] takes a model, the
//!    settings, tools and a system prompt; [`AgentSession::prompt`] runs a turn (with
//!    auto-retry and auto-compaction); [`AgentSession::subscribe`] delivers every
//!    [`AgentSessionEvent`].
//! 2. **The session store** — [`SessionStore`] appends every entry to a JSONL session file and
//!    reads one back: its [`SessionEntry`]s, their tree, and the [`SessionContext`] the next
//!    request is built from.
//! 3. **Extensions** — an [`Extension`] registers handlers for session [`extensions::events`],
//!    commands and tools through its [`ExtensionApi`]; the handlers receive an
//!    [`ExtensionContext`]. An [`ExtensionRunner`] holds the loaded ones.
//! 4. **Tools** — the built-in `read`, `bash`, `edit`, `write`, `grep`, `find` and `ls`
//!    ([`tools`]), each an `AgentTool`.
//! 5. **The runtime host** — [`RuntimeHost`] owns the current session and replaces it (new,
//!    resume, fork) the way `/new`, `/resume` and `/fork` do.
//!
//! Around them: the settings ([`SettingsManager`]), the model registry ([`ModelRegistry`],
//! models.json plus the built-in catalogue) and the credential store ([`AuthStorage`],
//! auth.json), as pi's SDK exposes them, and RPC mode ([`rpc`]) to drive a session over
//! JSONL.
//!
//! ## A session, prompted
//!
//! The scripted provider answers with what it is given; the events are printed as
//! `pi --mode json` writes them.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//!
//! use pi_ai::providers::faux::{FauxOptions, FauxProvider, faux_assistant_message, faux_text};
//! use pi_coding_agent::{AgentSession, AgentSessionEvent, PromptOptions, SettingsManager};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let faux = FauxProvider::new(FauxOptions::default());
//! faux.set_responses(vec![
//!     faux_assistant_message(vec![faux_text("Hello from the model.")], Default::default()).into(),
//! ]);
//! let stream = faux.clone();
//! let session = AgentSession::builder()
//!     .model(faux.model())
//!     .settings(Arc::new(Mutex::new(SettingsManager::in_memory(Default::default()))))
//!     .system_prompt("You are a demo.")
//!     .stream_fn(Arc::new(move |m, c, o| stream.stream(&m, &c, o)))
//!     .build()?;
//!
//! let settled = Arc::new(Mutex::new(0));
//! let seen = settled.clone();
//! let _subscription = session.subscribe(move |event| {
//!     println!("{}", event.to_json_line());
//!     if matches!(event, AgentSessionEvent::AgentSettled) {
//!         *seen.lock().unwrap() += 1;
//!     }
//!     Ok(())
//! });
//! session.prompt("Say hello.", PromptOptions::default()).await?;
//!
//! assert_eq!(*settled.lock().unwrap(), 1);
//! # Ok(())
//! # }
//! ```
//!
//! `examples/session_events.rs` adds a tool and an auto-retried failure.
//!
//! ## What is public
//!
//! The modules below are the API; the command line, the launch, the interactive, print and
//! json modes, the RPC internals and the platform glue are private, reachable only through
//! [`run_command_line`]. The layer's building blocks the fuzz targets and benchmarks use
//! (the session store's line index, labels, the SSE parser of pi-ai) sit in public modules
//! already, so no internals feature is needed.
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

/// The version this build reports (`pi --version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The pi-coding-agent release whose behaviour this crate reproduces.
pub const REFERENCE_VERSION: &str = "0.85.0";

mod app;
mod auth_command;
mod cli;
pub mod compaction;
pub mod config;
mod entry;
pub mod extensions;
pub mod messages;
mod modes;
pub mod packages;
mod platform;
pub mod rpc;
pub mod runtime;
pub mod session;
pub mod storage;
mod sync;
pub mod tools;

pub use config::auth::AuthStorage;
pub use config::registry::ModelRegistry;
pub use config::settings::SettingsManager;
pub use entry::{export_process_environment, run_command_line};
pub use extensions::{
    Extension, ExtensionApi, ExtensionContext, ExtensionRunner, FnExtension, HandlerError,
    HandlerResult,
};
pub use runtime::RuntimeHost;
pub use session::{
    AgentSession, AgentSessionBuilder, AgentSessionEvent, PromptOptions, SessionError,
    SessionSubscription,
};
pub use storage::{SessionContext, SessionEntry, SessionStore, build_session_context};
