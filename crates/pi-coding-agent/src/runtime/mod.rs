//! Session replacement: the runtime host that owns the current session and replaces it
//! (`new_session`, `switch_session`, `fork`, `clone`) for library users and the binary.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/agent-session-runtime.ts` (`AgentSessionRuntime`,
//! `CreateAgentSessionRuntimeFactory`).
//!
//! | module | concept |
//! |---|---|
//! | [`error`] | [`HostError`], [`BuildError`]: why a start, build or replacement failed |
//! | [`actions`] | [`HostActions`]: extension commands' `ctx.new_session`/`fork`/`switch_session`/`navigate_tree` |
//! | [`factory`] | [`SessionFactory`]: builds a session for a store (the seam) |
//! | [`targets`] | the target stores: new, opened, forked/cloned; cwd check; error texts |
//! | [`host`] | [`RuntimeHost`]: hooks, teardown, build, listeners, bind |
//! | [`session_host`] | [`SessionHost`]: the replacement seam a mode drives (implemented by [`RuntimeHost`]) |

pub mod actions;
pub mod error;
pub mod factory;
pub mod host;
pub mod session_host;
pub mod targets;

pub use actions::HostActions;
pub use error::{BuildError, HostError};
pub use factory::{BuiltSession, SessionFactory, SessionTarget};
pub use host::{ForkOutcome, HostSubscription, RuntimeHost, WeakRuntimeHost};
pub use session_host::{ForkReplacement, RebindFn, Replacement, SessionHost};
pub use targets::{INVALID_FORK_ENTRY, SESSION_NOT_SAVED};
