//! Extensions as a Rust API: the hook runner and every extension event.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/extensions/`.
//! An extension is a Rust value implementing [`Extension`] (or a closure in
//! [`FnExtension`]): its factory gets an [`ExtensionApi`] and registers handlers with
//! `pi.on::<Event, _>(handler)`, tools, commands and flags. The runner
//! ([`ExtensionRunner`]) dispatches in load order, then registration order, isolates
//! failing and panicking handlers, and chains the results of the behaviour-changing events.
//! See `docs/extensions.md`.
//!
//! | module | concept |
//! |---|---|
//! | [`events`] | every extension event: payloads, results, pi's names |
//! | [`extension`] | [`Extension`], [`ExtensionApi`] (`pi` during loading), handler type, flags, commands |
//! | [`runner`] | [`ExtensionRunner`]: loading, generic and `session_before_*` dispatch, commands, `ui_prompt_*` |
//! | [`dispatch`] | the chained events: input, before_agent_start, context, message_end, tool_call, tool_result, provider hooks, user_bash, trust, resources |
//! | [`command_actions`] | a command `ctx`'s awaited session actions ([`CommandActions`]) |
//! | `session_hooks` | [`ExtensionHooks`]: binding a session, `user_bash`, the request executor |
//! | `hook_bridge` | every session hook as its extension event; the agent's events mirrored |
//! | `tool_registry` | the tools `setActiveTools` chooses from: `--tools`/`--exclude-tools`, overrides, run-time registration |
//! | [`context`] | `ctx`: mode, UI ([`Ui`]), cancellation, read access to the session |
//! | [`api`] | [`Pi`]: the run-time `pi` (a request queue for the session) and the event bus |
//! | [`remote`] | extensions as processes speaking `docs/extension-protocol.md` |
//! | [`errors`] | handler errors, `{extensionPath, event, error}` records, the error channel per mode |

pub mod api;
pub mod command_actions;
pub mod command_info;
pub mod config_hooks;
pub mod context;
pub mod dispatch;
pub mod errors;
pub mod events;
pub mod exec;
pub mod extension;
mod hook_bridge;
pub mod provider_hooks;
pub mod remote;
pub mod runner;
pub mod session_hooks;
pub mod tool_info;
mod tool_registry;

pub use api::{
    DeliverAs, EventBus, ExtensionRequest, Pi, STALE_MESSAGE, SendMessageOptions, StaleError,
};
pub use command_actions::{
    ActionError, ActionOutcome, CommandActions, NewSessionOptions, SessionActions, UnboundActions,
};
pub use command_info::{CommandInfo, CommandSource};
pub use config_hooks::RunnerTrustAnswer;
pub use context::{
    DialogOptions, EntryLog, ExtensionContext, NoUi, NotifyLevel, SessionView, Ui, UiHandle,
    WidgetPlacement, WorkingIndicator,
};
pub use dispatch::{
    DiscoveredPath, DiscoveredResources, MESSAGE_END_ROLE_ERROR, ToolCallOutcome,
    blocking_failure_text,
};
pub use errors::{
    ErrorListener, ExtensionErrorRecord, HandlerError, HandlerResult, Mode, mode_error_listener,
};
pub use exec::{ExecOptions, ExecResult};
pub use extension::{
    CommandHandler, CommandSpec, Extension, ExtensionApi, ExtensionLoadError, FlagSpec, FlagType,
    FlagValue, FnExtension, Handler, LoadedExtension, ShortcutHandler, ShortcutSpec,
};
pub use runner::{ExtensionRunner, ExtensionRunnerBuilder, ResolvedCommand};
pub use session_hooks::{ExtensionHooks, ShutdownHandler};
pub use tool_info::{ToolInfo, ToolSource};
