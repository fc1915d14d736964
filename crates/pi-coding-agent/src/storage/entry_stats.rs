//! Counts and usage totals over session entries, summed in file order as pi sums them
//! (`AgentSession.getSessionStats`): what `/session`, RPC `get_session_stats` and the footer
//! show. Kept in the session index for the entries before a resumed window.

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantContent, Usage};
use serde_json::Value;

use super::entry::{EntryKind, SessionEntry};

/// Message counts and JavaScript-double sums of the usage of a run of entries.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EntryStats {
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
    /// The usage summed.
    pub usage: UsageTotals,
}

/// Usage and cost summed as pi sums them (JavaScript doubles, in file order); also the
/// interactive footer's running totals.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UsageTotals {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Cache-read tokens.
    pub cache_read: f64,
    /// Cache-write tokens.
    pub cache_write: f64,
    /// Cost.
    pub cost: f64,
}

impl UsageTotals {
    /// Adds a message's usage.
    pub fn add(&mut self, u: &Usage) {
        self.input += u.input;
        self.output += u.output;
        self.cache_read += u.cache_read;
        self.cache_write += u.cache_write;
        self.cost += u.cost.total;
    }

    /// Adds a stored `usage` object (compaction / branch summary): missing fields count 0.
    pub fn add_json(&mut self, v: &Value) {
        let n = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        self.input += n("input");
        self.output += n("output");
        self.cache_read += n("cacheRead");
        self.cache_write += n("cacheWrite");
        self.cost += v
            .get("cost")
            .and_then(|c| c.get("total"))
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
    }
}

impl EntryStats {
    /// Counts one entry (the next one in file order).
    pub fn add(&mut self, entry: &SessionEntry) {
        match &entry.kind {
            EntryKind::Compaction { usage: Some(u), .. }
            | EntryKind::BranchSummary { usage: Some(u), .. } => self.usage.add_json(u),
            EntryKind::Message { message } => {
                self.total_messages += 1;
                match message {
                    AgentMessage::User(_) => self.user_messages += 1,
                    AgentMessage::ToolResult(r) => {
                        self.tool_results += 1;
                        if let Some(u) = &r.usage {
                            self.usage.add(u);
                        }
                    }
                    AgentMessage::Assistant(a) => {
                        self.assistant_messages += 1;
                        self.tool_calls += a
                            .content
                            .iter()
                            .filter(|c| matches!(c, AssistantContent::ToolCall(_)))
                            .count() as u64;
                        self.usage.add(&a.usage);
                    }
                    AgentMessage::Custom(_) => {}
                }
            }
            _ => {}
        }
    }
}
