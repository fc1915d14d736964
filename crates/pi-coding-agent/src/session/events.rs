//! `AgentSessionEvent`: the 23 events a session publishes to its listeners.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSessionEvent` (`core/agent-session.ts`): the ten core
//! [`AgentEvent`]s re-published (with `agent_end` extended by `willRetry`) plus thirteen product
//! events. JSON is pi's: `type` first, then the payload in the order pi builds it, optional fields
//! omitted when absent.
//!
//! [`AgentSessionEvent::to_json_mode`] is the projection `pi --mode json` and RPC write
//! (pi's `modes/json-event.js`): `message_update` becomes `{type, usage, assistantMessageEvent}`
//! with the block event stripped of `partial` (and `toolcall_start` given the call's `id` and
//! `toolName`); every other event is written verbatim.

use std::sync::Arc;

use pi_agent_core::{AgentEvent, AgentMessage};
use pi_ai::{ModelThinkingLevel, Usage};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::storage::SessionEntry;

/// Why a compaction runs (`manual`, `threshold`, `overflow`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionReason {
    /// `/compact`, RPC `compact`, `ctx.compact()`.
    Manual,
    /// The context crossed `contextWindow − reserveTokens`.
    Threshold,
    /// The provider reported a context overflow (or a recoverable length stop).
    Overflow,
}

/// `CompactionResult = {summary, firstKeptEntryId, tokensBefore, estimatedTokensAfter?,
/// usage?, details?}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionResult {
    /// The summary text.
    pub summary: String,
    /// First entry kept verbatim.
    pub first_kept_entry_id: String,
    /// Estimated context tokens before compaction.
    pub tokens_before: u64,
    /// Estimated context tokens of the rebuilt context.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_tokens_after: Option<u64>,
    /// Usage of the summarization call(s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    /// Extra data (`{readFiles, modifiedFiles}` for the default summary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// The `source` of `summarization_retry_attempt_start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SummarizationSource {
    /// `{source:"compaction", reason}`.
    Compaction(CompactionReason),
    /// `{source:"branchSummary"}`.
    BranchSummary,
}

/// One session event. `Agent` carries the nine core events other than `agent_end` unchanged
/// (shared, not copied); `AgentEnd` is the core `agent_end` plus `willRetry`.
// The core event is shared behind an `Arc`; the other payloads are small.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum AgentSessionEvent {
    /// A core event: `agent_start`, `turn_start`, `turn_end`, `message_start`,
    /// `message_update`, `message_end`, `tool_execution_start|update|end` (never `agent_end`).
    Agent(Arc<AgentEvent>),
    /// `{type:"agent_end", messages, willRetry}`; `willRetry` = retry enabled ∧ attempt <
    /// maxRetries ∧ the run's last assistant message is retryable.
    AgentEnd {
        /// Messages produced by the low-level run.
        messages: Vec<AgentMessage>,
        /// Whether the session will retry this run.
        will_retry: bool,
    },
    /// `{type:"agent_settled"}`: the product-level run is over (no retry, compaction or queued
    /// continuation remains).
    AgentSettled,
    /// `{type:"queue_update", steering, followUp}`: copies of the display queues.
    QueueUpdate {
        /// Pending steering texts.
        steering: Vec<String>,
        /// Pending follow-up texts.
        follow_up: Vec<String>,
    },
    /// `{type:"compaction_start", reason}`.
    CompactionStart {
        /// Trigger.
        reason: CompactionReason,
    },
    /// `{type:"compaction_end", reason, result?, aborted, willRetry, errorMessage?}`.
    CompactionEnd {
        /// Trigger.
        reason: CompactionReason,
        /// The applied result (absent on failure or abort).
        result: Option<CompactionResult>,
        /// Whether it was cancelled or aborted.
        aborted: bool,
        /// Whether the interrupted run continues.
        will_retry: bool,
        /// Failure text (non-abort failures only).
        error_message: Option<String>,
    },
    /// `{type:"entry_appended", entry}` (only `pi.appendEntry()`).
    EntryAppended {
        /// The appended entry.
        entry: SessionEntry,
    },
    /// `{type:"session_info_changed", name}` (`name` omitted when cleared).
    SessionInfoChanged {
        /// The new session name.
        name: Option<String>,
    },
    /// `{type:"thinking_level_changed", level}`.
    ThinkingLevelChanged {
        /// The effective level.
        level: ModelThinkingLevel,
    },
    /// `{type:"auto_retry_start", attempt, maxAttempts, delayMs, errorMessage}`: a retry was
    /// scheduled; emitted before sleeping.
    AutoRetryStart {
        /// 1-based attempt.
        attempt: u32,
        /// `retry.maxRetries`.
        max_attempts: u32,
        /// `baseDelayMs · 2^(attempt−1)`.
        delay_ms: u64,
        /// The failed response's `errorMessage` (or `Unknown error`).
        error_message: String,
    },
    /// `{type:"auto_retry_end", success, attempt, finalError?}`.
    AutoRetryEnd {
        /// Whether a retry succeeded.
        success: bool,
        /// The last attempt.
        attempt: u32,
        /// Why the sequence failed (`Retry cancelled` on abort).
        final_error: Option<String>,
    },
    /// `{type:"summarization_retry_scheduled", attempt, maxAttempts, delayMs, errorMessage}`.
    SummarizationRetryScheduled {
        /// 1-based attempt.
        attempt: u32,
        /// `retry.maxRetries`.
        max_attempts: u32,
        /// Backoff before the attempt, ms.
        delay_ms: u64,
        /// The failed call's error text.
        error_message: String,
    },
    /// `{type:"summarization_retry_attempt_start", source, reason?}`.
    SummarizationRetryAttemptStart {
        /// What is being summarized.
        source: SummarizationSource,
    },
    /// `{type:"summarization_retry_finished"}`.
    SummarizationRetryFinished,
    /// `{type:"bash_execution_update", id?, delta}`: a chunk of a user `!` command.
    BashExecutionUpdate {
        /// The RPC request id, when given.
        id: Option<String>,
        /// Output chunk.
        delta: String,
    },
}

impl AgentSessionEvent {
    /// pi's `type` string.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentSessionEvent::Agent(e) => e.kind(),
            AgentSessionEvent::AgentEnd { .. } => "agent_end",
            AgentSessionEvent::AgentSettled => "agent_settled",
            AgentSessionEvent::QueueUpdate { .. } => "queue_update",
            AgentSessionEvent::CompactionStart { .. } => "compaction_start",
            AgentSessionEvent::CompactionEnd { .. } => "compaction_end",
            AgentSessionEvent::EntryAppended { .. } => "entry_appended",
            AgentSessionEvent::SessionInfoChanged { .. } => "session_info_changed",
            AgentSessionEvent::ThinkingLevelChanged { .. } => "thinking_level_changed",
            AgentSessionEvent::AutoRetryStart { .. } => "auto_retry_start",
            AgentSessionEvent::AutoRetryEnd { .. } => "auto_retry_end",
            AgentSessionEvent::SummarizationRetryScheduled { .. } => {
                "summarization_retry_scheduled"
            }
            AgentSessionEvent::SummarizationRetryAttemptStart { .. } => {
                "summarization_retry_attempt_start"
            }
            AgentSessionEvent::SummarizationRetryFinished => "summarization_retry_finished",
            AgentSessionEvent::BashExecutionUpdate { .. } => "bash_execution_update",
        }
    }

    /// The core event, for the nine re-published core variants.
    pub fn core(&self) -> Option<&AgentEvent> {
        match self {
            AgentSessionEvent::Agent(e) => Some(e),
            _ => None,
        }
    }

    /// The json-mode / RPC projection (pi's `toJsonEvent`): `message_update` becomes
    /// `{type, usage, assistantMessageEvent}` without `partial`; everything else is the full
    /// event.
    pub fn to_json_mode(&self) -> Value {
        serde_json::to_value(JsonMode(self, None)).unwrap_or(Value::Null)
    }

    /// [`AgentSessionEvent::to_json_mode`] as one JSON line (numbers spelled as JavaScript
    /// writes them), without the trailing newline. Written straight from the event: no
    /// intermediate `Value`, so a line costs one pass over what it holds.
    pub fn to_json_line(&self) -> String {
        pi_ai::json::to_string(&JsonMode(self, None)).unwrap_or_default()
    }

    /// Writes [`AgentSessionEvent::to_json_line`] to `out` as it is serialized, without the
    /// line in memory.
    ///
    /// # Errors
    /// The writer's error.
    pub fn write_json_line(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        self.write_json_line_with(out, None)
    }

    /// [`AgentSessionEvent::write_json_line`] with a `message_update`'s `usage` as taken by
    /// [`AgentSessionEvent::live_usage`] (`None`: read from the partial now).
    ///
    /// # Errors
    /// The writer's error.
    pub fn write_json_line_with(
        &self,
        out: &mut impl std::io::Write,
        usage: Option<&Usage>,
    ) -> std::io::Result<()> {
        pi_ai::json::to_writer(out, &JsonMode(self, usage)).map_err(std::io::Error::from)
    }

    /// For a `message_update`: the live partial's usage now, the one part of its json line
    /// that changes after the event (the block event itself does not).
    pub fn live_usage(&self) -> Option<Usage> {
        match self.core() {
            Some(AgentEvent::MessageUpdate { message, .. }) => Some(message.read().usage),
            _ => None,
        }
    }
}

/// The json-mode projection of an event, serialized in place; a `message_update` with the
/// usage given, or else its partial's usage as it is now.
struct JsonMode<'a>(&'a AgentSessionEvent, Option<&'a Usage>);

impl Serialize for JsonMode<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let AgentSessionEvent::Agent(e) = self.0
            && let AgentEvent::MessageUpdate {
                assistant_message_event,
                message,
            } = &**e
        {
            let mut m = s.serialize_map(None)?;
            m.serialize_entry("type", "message_update")?;
            match self.1 {
                Some(usage) => m.serialize_entry("usage", usage)?,
                None => m.serialize_entry("usage", &message.read().usage)?,
            }
            m.serialize_entry(
                "assistantMessageEvent",
                &assistant_message_event.json_projection(),
            )?;
            return m.end();
        }
        self.0.serialize(s)
    }
}

impl Serialize for AgentSessionEvent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let AgentSessionEvent::Agent(e) = self {
            return e.serialize(s);
        }
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", self.kind())?;
        match self {
            AgentSessionEvent::Agent(_)
            | AgentSessionEvent::AgentSettled
            | AgentSessionEvent::SummarizationRetryFinished => {}
            AgentSessionEvent::AgentEnd {
                messages,
                will_retry,
            } => {
                m.serialize_entry("messages", messages)?;
                m.serialize_entry("willRetry", will_retry)?;
            }
            AgentSessionEvent::QueueUpdate {
                steering,
                follow_up,
            } => {
                m.serialize_entry("steering", steering)?;
                m.serialize_entry("followUp", follow_up)?;
            }
            AgentSessionEvent::CompactionStart { reason } => m.serialize_entry("reason", reason)?,
            AgentSessionEvent::CompactionEnd {
                reason,
                result,
                aborted,
                will_retry,
                error_message,
            } => {
                m.serialize_entry("reason", reason)?;
                if let Some(r) = result {
                    m.serialize_entry("result", r)?;
                }
                m.serialize_entry("aborted", aborted)?;
                m.serialize_entry("willRetry", will_retry)?;
                if let Some(e) = error_message {
                    m.serialize_entry("errorMessage", e)?;
                }
            }
            AgentSessionEvent::EntryAppended { entry } => m.serialize_entry("entry", entry)?,
            AgentSessionEvent::SessionInfoChanged { name } => {
                if let Some(n) = name {
                    m.serialize_entry("name", n)?;
                }
            }
            AgentSessionEvent::ThinkingLevelChanged { level } => {
                m.serialize_entry("level", level)?
            }
            AgentSessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            }
            | AgentSessionEvent::SummarizationRetryScheduled {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => {
                m.serialize_entry("attempt", attempt)?;
                m.serialize_entry("maxAttempts", max_attempts)?;
                m.serialize_entry("delayMs", delay_ms)?;
                m.serialize_entry("errorMessage", error_message)?;
            }
            AgentSessionEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } => {
                m.serialize_entry("success", success)?;
                m.serialize_entry("attempt", attempt)?;
                if let Some(e) = final_error {
                    m.serialize_entry("finalError", e)?;
                }
            }
            AgentSessionEvent::SummarizationRetryAttemptStart { source } => match source {
                SummarizationSource::Compaction(reason) => {
                    m.serialize_entry("source", "compaction")?;
                    m.serialize_entry("reason", reason)?;
                }
                SummarizationSource::BranchSummary => {
                    m.serialize_entry("source", "branchSummary")?
                }
            },
            AgentSessionEvent::BashExecutionUpdate { id, delta } => {
                if let Some(id) = id {
                    m.serialize_entry("id", id)?;
                }
                m.serialize_entry("delta", delta)?;
            }
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::{AssistantContent, AssistantMessage, AssistantMessageEvent, PartialMessage};
    use serde_json::json;

    fn js(e: &AgentSessionEvent) -> Value {
        serde_json::to_value(e).unwrap()
    }

    #[test]
    fn product_events_serialize_with_pi_field_names() {
        assert_eq!(
            js(&AgentSessionEvent::AutoRetryStart {
                attempt: 1,
                max_attempts: 3,
                delay_ms: 50,
                error_message: "x".into()
            }),
            json!({"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":50,"errorMessage":"x"})
        );
        assert_eq!(
            js(&AgentSessionEvent::AutoRetryEnd {
                success: true,
                attempt: 1,
                final_error: None
            }),
            json!({"type":"auto_retry_end","success":true,"attempt":1})
        );
        assert_eq!(
            js(&AgentSessionEvent::AutoRetryEnd {
                success: false,
                attempt: 2,
                final_error: Some("Retry cancelled".into())
            }),
            json!({"type":"auto_retry_end","success":false,"attempt":2,"finalError":"Retry cancelled"})
        );
        assert_eq!(
            js(&AgentSessionEvent::QueueUpdate {
                steering: vec!["a".into()],
                follow_up: vec![]
            }),
            json!({"type":"queue_update","steering":["a"],"followUp":[]})
        );
        assert_eq!(
            js(&AgentSessionEvent::CompactionEnd {
                reason: CompactionReason::Overflow,
                result: None,
                aborted: false,
                will_retry: false,
                error_message: Some("e".into())
            }),
            json!({"type":"compaction_end","reason":"overflow","aborted":false,"willRetry":false,"errorMessage":"e"})
        );
        assert_eq!(
            js(&AgentSessionEvent::SummarizationRetryAttemptStart {
                source: SummarizationSource::Compaction(CompactionReason::Threshold)
            }),
            json!({"type":"summarization_retry_attempt_start","source":"compaction","reason":"threshold"})
        );
        assert_eq!(
            js(&AgentSessionEvent::SessionInfoChanged { name: None }),
            json!({"type":"session_info_changed"})
        );
        assert_eq!(
            js(&AgentSessionEvent::ThinkingLevelChanged {
                level: ModelThinkingLevel::High
            }),
            json!({"type":"thinking_level_changed","level":"high"})
        );
        assert_eq!(
            js(&AgentSessionEvent::BashExecutionUpdate {
                id: None,
                delta: "d".into()
            }),
            json!({"type":"bash_execution_update","delta":"d"})
        );
        assert_eq!(
            js(&AgentSessionEvent::AgentEnd {
                messages: vec![],
                will_retry: true
            }),
            json!({"type":"agent_end","messages":[],"willRetry":true})
        );
        assert_eq!(
            js(&AgentSessionEvent::AgentSettled),
            json!({"type":"agent_settled"})
        );
    }

    #[test]
    fn json_mode_projects_message_update_with_usage_and_tool_call_identity() {
        let mut m = AssistantMessage::empty("a", "p", "m");
        m.usage.input = 7.0;
        m.content.push(AssistantContent::ToolCall(pi_ai::ToolCall {
            id: "call_1".into(),
            name: "read".into(),
            ..Default::default()
        }));
        let partial = PartialMessage::new(m);
        let ev = AgentSessionEvent::Agent(Arc::new(AgentEvent::MessageUpdate {
            assistant_message_event: AssistantMessageEvent::ToolcallStart {
                content_index: 0,
                partial: partial.clone(),
            },
            message: partial,
        }));
        let v = ev.to_json_mode();
        assert_eq!(v["type"], "message_update");
        assert_eq!(v["usage"]["input"], 7);
        assert!(v.get("message").is_none());
        assert_eq!(
            v["assistantMessageEvent"],
            json!({"type":"toolcall_start","contentIndex":0,"id":"call_1","toolName":"read"})
        );
        // Full serialization keeps message and partial.
        let full = js(&ev);
        assert!(full.get("message").is_some());
        assert!(full["assistantMessageEvent"].get("partial").is_some());
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["type", "usage", "assistantMessageEvent"]);
    }
}
