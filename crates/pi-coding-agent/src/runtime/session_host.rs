//! [`SessionHost`]: the seam through which a mode replaces its session.
//!
//! A mode holds a `dyn SessionHost` (RPC mode's `new_session`, `switch_session`, `fork`,
//! `clone` commands; the coming interactive mode's `/new`, `/resume`, `/fork`); the runtime
//! implements it ([`super::RuntimeHost`]), and tests implement it with scripted outcomes.

use std::sync::Arc;

use futures::future::BoxFuture;

use super::error::HostError;
use crate::extensions::ExtensionHooks;
use crate::session::AgentSession;
use crate::storage::ForkPosition;

/// The outcome of a session-replacing command: `None` when an extension cancelled it.
pub type Replacement = Result<Option<AgentSession>, HostError>;

/// The outcome of `fork`: the new session (`None`: cancelled) and the forked user text.
pub type ForkReplacement = Result<(Option<AgentSession>, String), HostError>;

/// Session replacement (pi's runtime host): `new_session`, `switch_session`, `fork`,
/// `clone`. The host tears the current session down (`session_shutdown`) and builds, binds
/// and returns the next one; a mode (RPC) then re-subscribes to it.
/// [`RuntimeHost`](super::RuntimeHost) is the implementation the binary uses.
pub trait SessionHost: Send + Sync {
    /// `newSession({parentSession?})`.
    fn new_session(
        &self,
        current: AgentSession,
        parent_session: Option<String>,
    ) -> BoxFuture<'_, Replacement>;

    /// `switchSession(path)`.
    fn switch_session(&self, current: AgentSession, path: String) -> BoxFuture<'_, Replacement>;

    /// `fork(entryId, {position})`: [`ForkPosition::Before`] forks before a user message
    /// (and returns its text), [`ForkPosition::At`] clones at the entry (`clone` passes the
    /// leaf).
    fn fork(
        &self,
        current: AgentSession,
        entry_id: String,
        position: ForkPosition,
    ) -> BoxFuture<'_, ForkReplacement>;

    /// The extension hooks of the session last returned (default: none). RPC mode binds its
    /// UI, `extension_error` output and `ctx.shutdown()` handler to them.
    fn extensions(&self) -> Option<Arc<ExtensionHooks>> {
        None
    }

    /// Installs RPC mode's rebind callback, which a host calls with each replacement
    /// session before its `session_start` (pi's `setRebindSession`). Default: ignored (RPC
    /// mode then rebinds when the replacement is returned).
    fn set_rebind(&self, _rebind: Option<RebindFn>) {}
}

/// A mode's rebind callback: the replacement session and its extension hooks.
pub type RebindFn = Arc<dyn Fn(&AgentSession, Option<&Arc<ExtensionHooks>>) + Send + Sync>;
