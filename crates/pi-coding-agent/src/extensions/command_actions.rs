//! The session actions of a command's `ctx`: `waitForIdle`, `newSession`, `fork`,
//! `navigateTree`, `switchSession`, each awaited and answering `{cancelled}`.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/extensions/runner.ts` (`bindCommandContext`,
//! `createCommandContext`) and the modes' `commandContextActions` (`modes/print-mode.ts`,
//! `modes/rpc/rpc-mode.ts`): the mode binds a [`CommandActions`]; the runtime host's
//! ([`crate::runtime::RuntimeHost`]) replaces the session, a lone session
//! ([`SessionActions`]) only navigates its tree and waits. Unbound, every action resolves at
//! once to `{cancelled: false}` and does nothing (pi's defaults).

use futures::future::BoxFuture;
use std::path::PathBuf;

use crate::session::{NavigateTreeOptions, SessionError, WeakAgentSession};
use crate::storage::ForkPosition;

/// What a session action answers: `{cancelled}` (an extension's `session_before_*` hook
/// cancelled it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActionOutcome {
    /// A hook cancelled the action; nothing changed.
    pub cancelled: bool,
}

/// Why a session action failed; its text is the failing layer's (pi's thrown message).
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// The session could not be replaced (the runtime host's error, e.g. `Invalid entry ID
    /// for forking`, `Stored session working directory does not exist: …`).
    #[error(transparent)]
    Replace(Box<dyn std::error::Error + Send + Sync>),
    /// `navigateTree` failed (`Entry <id> not found`, …).
    #[error(transparent)]
    Navigate(#[from] SessionError),
}

impl From<ActionError> for super::HandlerError {
    fn from(e: ActionError) -> Self {
        super::HandlerError::new(e.to_string())
    }
}

/// `ctx.newSession(options)`: `{parentSession?}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NewSessionOptions {
    /// Written as `parentSession` into the new session's header.
    pub parent_session: Option<String>,
}

/// The session actions a mode binds to command contexts. Every method has pi's unbound
/// default: resolve at once, `{cancelled: false}`, nothing happens. An [`ActionError`] is
/// what the action failed with (e.g. `Invalid entry ID for forking`); the command sees its
/// text as a thrown error.
pub trait CommandActions: Send + Sync {
    /// `ctx.waitForIdle()`: resolves when the session has no run and no compaction.
    fn wait_for_idle(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// `ctx.newSession({parentSession?})`.
    fn new_session(
        &self,
        _options: NewSessionOptions,
    ) -> BoxFuture<'_, Result<ActionOutcome, ActionError>> {
        Box::pin(async { Ok(ActionOutcome::default()) })
    }

    /// `ctx.fork(entryId, {position})`.
    fn fork(
        &self,
        _entry_id: String,
        _position: ForkPosition,
    ) -> BoxFuture<'_, Result<ActionOutcome, ActionError>> {
        Box::pin(async { Ok(ActionOutcome::default()) })
    }

    /// `ctx.navigateTree(targetId, {summarize?, customInstructions?, replaceInstructions?,
    /// label?})`.
    fn navigate_tree(
        &self,
        _target_id: String,
        _options: NavigateTreeOptions,
    ) -> BoxFuture<'_, Result<ActionOutcome, ActionError>> {
        Box::pin(async { Ok(ActionOutcome::default()) })
    }

    /// `ctx.switchSession(sessionPath)`.
    fn switch_session(&self, _path: PathBuf) -> BoxFuture<'_, Result<ActionOutcome, ActionError>> {
        Box::pin(async { Ok(ActionOutcome::default()) })
    }
}

/// pi's unbound command context: every action is a no-op answering `{cancelled: false}`.
#[derive(Clone, Copy, Debug, Default)]
pub struct UnboundActions;

impl CommandActions for UnboundActions {}

/// The actions of a session without a runtime host (library use): `waitForIdle` and
/// `navigateTree` act on the session ([`crate::session::AgentSession::wait_for_idle`],
/// [`crate::session::AgentSession::navigate_tree`]); replacing the session needs a host, so
/// `newSession`, `fork` and `switchSession` keep pi's unbound no-op. Holds the session
/// weakly (the session holds its hooks, which hold these actions).
#[derive(Clone, Debug)]
pub struct SessionActions(pub WeakAgentSession);

impl CommandActions for SessionActions {
    fn wait_for_idle(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(session) = self.0.upgrade() {
                session.wait_for_idle().await;
            }
        })
    }

    fn navigate_tree(
        &self,
        target_id: String,
        options: NavigateTreeOptions,
    ) -> BoxFuture<'_, Result<ActionOutcome, ActionError>> {
        Box::pin(async move {
            let Some(session) = self.0.upgrade() else {
                return Ok(ActionOutcome::default());
            };
            navigate(&session, &target_id, options).await
        })
    }
}

/// `session.navigateTree(...)` reduced to `{cancelled}` as pi's modes do.
///
/// # Errors
/// [`ActionError::Navigate`] (`Entry <id> not found`, …).
pub(crate) async fn navigate(
    session: &crate::session::AgentSession,
    target_id: &str,
    options: NavigateTreeOptions,
) -> Result<ActionOutcome, ActionError> {
    let r = session.navigate_tree(target_id, options).await?;
    Ok(ActionOutcome {
        cancelled: r.cancelled,
    })
}
