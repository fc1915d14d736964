//! Compaction and branch summaries.
//!
//! | module | concept (pi 0.85.0 `core/compaction/`) |
//! |---|---|
//! | `tokens` | settings, `contextTokens`, `estimateTokens`, `estimateContextTokens`, `shouldCompact` |
//! | `prepare` | `prepareCompaction`, `findCutPoint`, file operations |
//! | `fit` | pi-rs's own: the summarization request fits the model's window |
//! | `serialize` | `serializeConversation` |
//! | `summarize` | `compact`, `generateSummary`, turn-prefix summaries, summarization retry |
//! | `branch` | `collectEntriesForBranchSummary`, `prepareBranchEntries`, `generateBranchSummary` |
//! | `prompts` | the instructions (pi-rs's own prose) |
//!
//! When and how a compaction runs inside a session (triggers, events, hooks) lives in the
//! session layer (`session::auto_compaction`); this module is the policy and the summary calls.

pub mod branch;
pub(crate) mod error;
pub mod fit;
pub mod prepare;
pub mod prompts;
pub mod serialize;
pub(crate) mod summarize;
pub mod tokens;

pub use error::{CompactionError, SummaryError};
pub use fit::Omitted;
pub use prepare::{CompactionPreparation, FileOps, NothingToCompact, prepare_compaction};
pub use summarize::{
    CompactionResult, SummarizationRetryEvent, Summarizer, SummaryRetry, SummaryText,
};
pub use tokens::{CompactionSettings, estimate_context_tokens, estimate_tokens, should_compact};
