//! RPC mode (`pi --mode rpc`): JSONL commands in, responses and events out.
//!
//! Mirrors pi-coding-agent 0.85.0 `modes/rpc/`.
//!
//! The public part: [`run_rpc`] serves one session over any reader and writer (the client
//! writes commands, reads responses and events), [`serve_stdio`] does it on stdin/stdout as
//! `pi --mode rpc` does, [`RpcRuntime`] adds the optional seams (extensions, the model list,
//! session replacement), and [`LineReader`] reads the LF-only JSONL records a client receives.
//!
//! Inside (private): `binary` (the session from the command line), `framing` (LF-only JSONL
//! input records), `commands` (one record → a command, a UI response, or an error), `output`
//! (the single writer of responses, events, UI requests and `extension_error`s), `ui` (the
//! extension UI sub-protocol, a [`crate::extensions::Ui`]), `handlers` (every command against
//! the session), `server` (the read loop, concurrency, events, lifecycle) and `stdio`
//! (stdin/stdout and SIGTERM/SIGHUP).

pub(crate) mod binary;
pub(crate) mod commands;
pub(crate) mod framing;
pub(crate) mod handlers;
pub(crate) mod output;
pub(crate) mod server;
pub(crate) mod stdio;
pub(crate) mod ui;

use std::sync::Arc;

use pi_ai::Model;

use crate::config::skills::Skill;
use crate::config::templates::PromptTemplate;
use crate::extensions::ExtensionHooks;
use crate::runtime::SessionHost;
use crate::session::AgentSession;

pub use framing::{LineReader, MAX_RECORD_BYTES, RecordTooLong};
pub use server::run_rpc;
pub use stdio::serve_stdio;

/// The available-models snapshot (models whose provider has auth), in registry order.
pub type ModelSource = Arc<dyn Fn() -> Vec<Model> + Send + Sync>;

/// Everything RPC mode drives: the session and the optional runtime seams. Only `session`
/// is required; a command whose seam is missing answers with an error naming it.
#[derive(Clone)]
pub struct RpcRuntime {
    /// The session (replaced by session-replacing commands).
    pub session: AgentSession,
    /// The extension hooks the session was built with: UI, `extension_error`, commands,
    /// `user_bash`.
    pub extensions: Option<Arc<ExtensionHooks>>,
    /// Available models (`get_available_models`, `set_model`, `cycle_model`); default: the
    /// session's current model.
    pub models: Option<ModelSource>,
    /// Session replacement.
    pub host: Option<Arc<dyn SessionHost>>,
    /// Prompt templates (`get_commands`).
    pub templates: Vec<PromptTemplate>,
    /// Skills (`get_commands`).
    pub skills: Vec<Skill>,
    /// Await the extensions' `session_start {reason:"startup"}` once the RPC UI is bound and
    /// before the first command is read (pi's `runRpcMode`), so that its handlers' dialogs
    /// and notifications reach the client. The binary sets it; a library caller that bound
    /// the session itself leaves it off.
    pub bind_startup: bool,
}

impl std::fmt::Debug for RpcRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcRuntime")
            .field("session", &self.session)
            .field("extensions", &self.extensions.is_some())
            .field("host", &self.host.is_some())
            .finish_non_exhaustive()
    }
}

impl RpcRuntime {
    /// A runtime with only a session.
    pub fn new(session: AgentSession) -> Self {
        RpcRuntime {
            session,
            extensions: None,
            models: None,
            host: None,
            templates: Vec::new(),
            skills: Vec::new(),
            bind_startup: false,
        }
    }
}

impl From<AgentSession> for RpcRuntime {
    fn from(session: AgentSession) -> Self {
        RpcRuntime::new(session)
    }
}
