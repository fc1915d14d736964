//! [`SummaryError`] and [`CompactionError`]: why a summary or a compaction failed.
//!
//! The texts are pi's (pi-coding-agent 0.85.0 `core/compaction/compaction.ts`,
//! `core/agent-session.ts`). The session reports a [`CompactionError`] prefixed by the
//! compaction's reason (`Compaction failed: …`, `Auto-compaction failed: …`, `Context overflow
//! recovery failed: …`); RPC `compact` answers it unprefixed.

use super::prepare::NothingToCompact;
use crate::storage::StoreError;

/// Why a summary request gave no usable summary (`label` names the request, e.g.
/// `Summarization`, `Turn prefix summarization`, `Branch summarization`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SummaryError {
    /// The response ended with an error (`Unknown error` when it carried no message).
    #[error("{label} failed: {message}")]
    Failed {
        /// The request.
        label: &'static str,
        /// The response's error message.
        message: String,
    },
    /// The response hit its token cap.
    #[error("{label} failed: generation hit the token cap and the summary is incomplete")]
    Truncated {
        /// The request.
        label: &'static str,
    },
    /// The response called a tool instead of answering with text.
    #[error("{label} attempted to call a tool")]
    ToolCall {
        /// The request.
        label: &'static str,
    },
}

/// Why a compaction (manual or automatic) made no compaction entry.
#[derive(Debug, thiserror::Error)]
pub enum CompactionError {
    /// The session's compactor has no manual compaction.
    #[error("Compaction is not available")]
    Unavailable,
    /// The session has no model.
    #[error("No model selected")]
    NoModel,
    /// The model's provider has no credential.
    #[error("No API key found for {0}.")]
    NoApiKey(String),
    /// The request auth failed (a broken credential, an OAuth refresh, a key command); its
    /// text is the auth layer's.
    #[error("{0}")]
    Auth(String),
    /// The branch has nothing to summarize (`Already compacted`, `Nothing to compact …`).
    #[error(transparent)]
    NothingToCompact(#[from] NothingToCompact),
    /// An extension cancelled it, or it was aborted.
    #[error("Compaction cancelled")]
    Cancelled,
    /// The summary request failed.
    #[error(transparent)]
    Summary(#[from] SummaryError),
    /// Writing the entry or rebuilding the context failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}
