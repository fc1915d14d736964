//! The runtime host as the session actions of extension commands: `ctx.newSession`,
//! `ctx.fork`, `ctx.switchSession` replace the host's session, `ctx.navigateTree` and
//! `ctx.waitForIdle` act on its current session.
//!
//! Mirrors the `commandContextActions` pi-coding-agent 0.85.0 binds in every mode
//! (`modes/print-mode.ts`, `modes/rpc/rpc-mode.ts`): each action awaits the host and answers
//! `{cancelled}`.

use futures::future::BoxFuture;
use std::path::PathBuf;

use super::error::HostError;
use super::host::WeakRuntimeHost;
use crate::extensions::command_actions::navigate;
use crate::extensions::{ActionError, ActionOutcome, CommandActions, NewSessionOptions};
use crate::session::NavigateTreeOptions;
use crate::storage::ForkPosition;

/// [`CommandActions`] routed to a [`super::RuntimeHost`] (held weakly: the host owns the
/// session whose hooks hold these actions). Once the host is gone every action is pi's
/// unbound no-op.
#[derive(Clone, Debug)]
pub struct HostActions(pub(crate) WeakRuntimeHost);

fn outcome(cancelled: bool) -> ActionOutcome {
    ActionOutcome { cancelled }
}

impl CommandActions for HostActions {
    fn wait_for_idle(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Some(host) = self.0.upgrade() {
                host.session().wait_for_idle().await;
            }
        })
    }

    fn new_session(
        &self,
        options: NewSessionOptions,
    ) -> BoxFuture<'_, Result<ActionOutcome, ActionError>> {
        Box::pin(async move {
            let Some(host) = self.0.upgrade() else {
                return Ok(ActionOutcome::default());
            };
            Ok(outcome(host.new_session(options.parent_session).await?))
        })
    }

    fn fork(
        &self,
        entry_id: String,
        position: ForkPosition,
    ) -> BoxFuture<'_, Result<ActionOutcome, ActionError>> {
        Box::pin(async move {
            let Some(host) = self.0.upgrade() else {
                return Ok(ActionOutcome::default());
            };
            Ok(outcome(host.fork(&entry_id, position).await?.cancelled))
        })
    }

    fn navigate_tree(
        &self,
        target_id: String,
        options: NavigateTreeOptions,
    ) -> BoxFuture<'_, Result<ActionOutcome, ActionError>> {
        Box::pin(async move {
            let Some(host) = self.0.upgrade() else {
                return Ok(ActionOutcome::default());
            };
            navigate(&host.session(), &target_id, options).await
        })
    }

    fn switch_session(&self, path: PathBuf) -> BoxFuture<'_, Result<ActionOutcome, ActionError>> {
        Box::pin(async move {
            let Some(host) = self.0.upgrade() else {
                return Ok(ActionOutcome::default());
            };
            Ok(outcome(host.switch_session(&path).await?))
        })
    }
}

impl From<HostError> for ActionError {
    fn from(e: HostError) -> Self {
        ActionError::Replace(Box::new(e))
    }
}
