//! Session statistics and context usage (RPC `get_session_stats`, footers).
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession.getSessionStats` / `getContextUsage`:
//! statistics scan **all** entries (every branch); token totals add assistant
//! usage, tool-result `usage` and compaction / branch-summary `usage`; the context estimate is
//! unknown (`tokens: null`) after a compaction until an assistant answered with real usage.

use pi_agent_core::AgentMessage;
use pi_ai::StopReason;
use serde::Serialize;

use super::agent_session::{AgentSession, lock};
use crate::compaction::tokens::{context_tokens, estimate_context_tokens};
use crate::storage::EntryType;
use crate::storage::context::context_path;

/// `{tokens, contextWindow, percent}`; `tokens`/`percent` are `null` while unknown.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    /// Estimated context tokens.
    pub tokens: Option<u64>,
    /// The model's window.
    pub context_window: u64,
    /// `tokens / contextWindow · 100`.
    pub percent: Option<f64>,
}

/// `{input, output, cacheRead, cacheWrite, total}`: JavaScript numbers summed in doubles, as
/// pi sums them (no count wraps; write with [`pi_ai::json`] for pi's number spelling).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenTotals {
    /// Input tokens.
    #[serde(serialize_with = "pi_ai::json::js_number")]
    pub input: f64,
    /// Output tokens.
    #[serde(serialize_with = "pi_ai::json::js_number")]
    pub output: f64,
    /// Cache-read tokens.
    #[serde(serialize_with = "pi_ai::json::js_number")]
    pub cache_read: f64,
    /// Cache-write tokens.
    #[serde(serialize_with = "pi_ai::json::js_number")]
    pub cache_write: f64,
    /// The sum of the four.
    #[serde(serialize_with = "pi_ai::json::js_number")]
    pub total: f64,
}

/// `getSessionStats()`'s result.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    /// The session file (omitted in memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    /// The session id.
    pub session_id: String,
    /// `user` message entries.
    pub user_messages: u64,
    /// `assistant` message entries.
    pub assistant_messages: u64,
    /// Tool calls in assistant messages.
    pub tool_calls: u64,
    /// `toolResult` message entries.
    pub tool_results: u64,
    /// All `message` entries.
    pub total_messages: u64,
    /// Token totals.
    pub tokens: TokenTotals,
    /// Total cost.
    pub cost: f64,
    /// [`AgentSession::context_usage`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_usage: Option<ContextUsage>,
}

/// Usage and cost summed as pi sums them; the interactive footer keeps its totals with it.
pub(crate) use crate::storage::entry_stats::UsageTotals as Totals;

impl AgentSession {
    /// `getContextUsage()`: `None` without a model or with a window ≤ 0.
    pub fn context_usage(&self) -> Option<ContextUsage> {
        let window = self.model()?.context_window;
        if window == 0 {
            return None;
        }
        let unknown = {
            let store = lock(&self.inner.store);
            let (path, _) = context_path(&store);
            match path
                .iter()
                .rposition(|&i| *store.kind_at(i) == EntryType::Compaction)
            {
                None => false,
                Some(c) => !path[c + 1..].iter().rev().any(|&i| {
                    *store.kind_at(i) == EntryType::Message
                        && store.entry_at(i).ok().is_some_and(|e| {
                            matches!(e.message(), Some(AgentMessage::Assistant(a))
                                if !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error)
                                    && context_tokens(&a.usage) > 0)
                        })
                }),
            }
        };
        if unknown {
            return Some(ContextUsage {
                tokens: None,
                context_window: window,
                percent: None,
            });
        }
        let tokens = self
            .inner
            .agent
            .with_state(|s| estimate_context_tokens(&s.messages).tokens);
        Some(ContextUsage {
            tokens: Some(tokens),
            context_window: window,
            percent: Some(tokens as f64 / window as f64 * 100.0),
        })
    }

    /// `getSessionStats()`.
    ///
    /// # Errors
    /// Stored entries cannot be read back.
    pub fn session_stats(&self) -> Result<SessionStats, crate::storage::StoreError> {
        let mut stats = SessionStats {
            session_file: self.session_file().map(|p| p.display().to_string()),
            session_id: self.session_id(),
            user_messages: 0,
            assistant_messages: 0,
            tool_calls: 0,
            tool_results: 0,
            total_messages: 0,
            tokens: TokenTotals::default(),
            cost: 0.0,
            context_usage: None,
        };
        let counted = lock(&self.inner.store).entry_stats()?;
        stats.user_messages = counted.user_messages;
        stats.assistant_messages = counted.assistant_messages;
        stats.tool_calls = counted.tool_calls;
        stats.tool_results = counted.tool_results;
        stats.total_messages = counted.total_messages;
        let totals = counted.usage;
        stats.tokens = TokenTotals {
            input: totals.input,
            output: totals.output,
            cache_read: totals.cache_read,
            cache_write: totals.cache_write,
            total: totals.input + totals.output + totals.cache_read + totals.cache_write,
        };
        stats.cost = totals.cost;
        stats.context_usage = self.context_usage();
        Ok(stats)
    }
}
