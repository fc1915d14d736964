//! [`HostError`]: why the runtime host could not replace its session.
//!
//! Each variant keeps the text of the layer it comes from (pi's thrown messages), so a mode
//! shows it unchanged: RPC answers it as the command's `error`, the interactive mode as an
//! error notice, an extension command sees it as the `ctx.newSession`/`fork`/`switchSession`
//! failure ([`crate::extensions::ActionError::Replace`]).

use super::targets::{ForkError, MissingSessionCwd};
use crate::storage::StoreError;

/// Why a session could not be built for a target (the [`super::SessionFactory`]'s error):
/// the text the caller reports, e.g. a model that cannot be resolved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BuildError {
    /// The message, without an `Error: ` prefix.
    pub message: String,
}

impl BuildError {
    /// A build failure with this message.
    pub fn new(message: impl Into<String>) -> Self {
        BuildError {
            message: message.into(),
        }
    }
}

/// Why a [`super::RuntimeHost`] start or session replacement failed.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The target session's stored cwd no longer exists.
    #[error(transparent)]
    MissingCwd(#[from] MissingSessionCwd),
    /// Opening or creating the target store failed
    /// (`Session file is not a valid pi session: <path>`, I/O errors).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No fork was made (`Invalid entry ID for forking`, `This session has not been saved
    /// yet. …`).
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// Clone of a session with no current entry.
    #[error("Cannot clone session: no current entry selected")]
    NothingToClone,
    /// The factory could not build the next session.
    #[error(transparent)]
    Build(#[from] BuildError),
}
