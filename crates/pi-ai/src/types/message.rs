//! Messages: user, assistant and tool result, tagged by `role`.
//!
//! Mirrors pi-ai 0.85.1 `UserMessage`, `AssistantMessage`, `ToolResultMessage`, `StopReason`.
//! Key order follows the order in which pi creates the fields (role first).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::content::{AssistantContent, ToolCall, UserContent, UserMessageContent};
use super::usage::Usage;

/// Milliseconds since the Unix epoch.
pub type Timestamp = i64;

/// The current time in ms since the Unix epoch.
pub fn now_ms() -> Timestamp {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Reads a missing or `null` field as its default: pi's `transformMessages` treats null
/// content (hand-built histories, old session files) as empty content.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Why an assistant message ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// In flight; never final.
    #[default]
    Pending,
    /// Normal end.
    Stop,
    /// Output cap reached.
    Length,
    /// The model requested tool calls.
    ToolUse,
    /// Failure (see `errorMessage`).
    Error,
    /// Cancelled (see `errorMessage`).
    Aborted,
    /// The request continues asynchronously.
    Deferred,
}

impl StopReason {
    /// pi's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Pending => "pending",
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
            StopReason::Deferred => "deferred",
        }
    }
    /// `error` or `aborted`.
    pub fn is_failure(self) -> bool {
        matches!(self, StopReason::Error | StopReason::Aborted)
    }
}

/// `{role:"user", content, timestamp}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    /// A string or text/image blocks (`null` reads as no blocks).
    #[serde(default, deserialize_with = "null_as_default")]
    pub content: UserMessageContent,
    /// ms epoch.
    #[serde(default)]
    pub timestamp: Timestamp,
}

impl UserMessage {
    /// A user message with one text block, stamped now.
    pub fn text(text: impl Into<String>) -> Self {
        UserMessage {
            content: UserMessageContent::Blocks(vec![UserContent::text(text)]),
            timestamp: now_ms(),
        }
    }
}

/// A diagnostic attached to an assistant message: `{type, timestamp, error?, details?}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    /// Diagnostic kind.
    #[serde(rename = "type")]
    pub kind: String,
    /// ms epoch.
    pub timestamp: Timestamp,
    /// Error text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Free-form details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// `{role:"assistant", content, api, provider, model, usage, stopReason, timestamp, …}`.
///
/// Serialized and read by hand (`assistant_serde.rs`) so that the key order of pi survives:
/// see [`AssistantMessage::error_before_timestamp`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AssistantMessage {
    /// Text, thinking and tool-call blocks (`null` reads as none).
    pub content: Vec<AssistantContent>,
    /// Wire API id.
    pub api: String,
    /// Provider id.
    pub provider: String,
    /// Model id (Anthropic: the server-reported id).
    pub model: String,
    /// Token usage and cost.
    pub usage: Usage,
    /// Why it ended.
    pub stop_reason: StopReason,
    /// ms epoch.
    pub timestamp: Timestamp,
    /// Provider response id.
    pub response_id: Option<String>,
    /// Completions: the chunk model when it differs from `model`.
    pub response_model: Option<String>,
    /// Thinking level the provider used.
    pub provider_thinking_level: Option<String>,
    /// Diagnostics.
    pub diagnostics: Option<Vec<Diagnostic>>,
    /// The provider's finish string.
    pub raw_stop_reason: Option<String>,
    /// Error text for `error` / `aborted`.
    pub error_message: Option<String>,
    /// Provider end-of-turn marker.
    pub end_turn: Option<bool>,
    /// Deferred-request handle.
    pub deferred: Option<Value>,
    /// Not a field of its own: where `errorMessage` goes among the keys. pi writes it after
    /// `timestamp` when a provider's stream fails (the key is added to the message being
    /// streamed) and right after `stopReason`, before `timestamp`, for a message it builds whole:
    /// a request that fails before it is sent (pi-ai `lazyStream`'s setup error) and a failed
    /// run (pi-agent-core `handleRunFailure`). Reading a message records the order it had, so it
    /// is written back as it was read.
    pub error_before_timestamp: bool,
    /// Not a field of its own either: whether `deferred` and `responseId` go before
    /// `timestamp`, around `errorMessage` (`…, stopReason, deferred, errorMessage, responseId,
    /// timestamp`), as pi-ai's faux provider builds its messages; a streamed message has them
    /// after `timestamp`. Recorded on read like [`Self::error_before_timestamp`].
    pub ids_before_timestamp: bool,
    /// Not a field of its own either: whether `diagnostics` is the last key, as pi writes it
    /// when a provider's failure handler appends the first diagnostic after `errorMessage`
    /// (Bedrock's `bedrock_response_failure`); otherwise it sits before `rawStopReason`.
    /// Recorded on read (a `diagnostics` key after a streamed `errorMessage`).
    pub diagnostics_last: bool,
}

impl AssistantMessage {
    /// The message of a request that failed before anything was sent (pi-ai 0.85.1
    /// `lazyStream`: auth resolution or setup threw): no content, zero usage,
    /// `stopReason: "error"`, `errorMessage` before `timestamp`, stamped now.
    pub fn setup_error(api: &str, provider: &str, model: &str, error: String) -> Self {
        AssistantMessage {
            stop_reason: StopReason::Error,
            error_message: Some(error),
            error_before_timestamp: true,
            ..AssistantMessage::empty(api, provider, model)
        }
    }

    /// An empty in-flight message (`stopReason: pending`, zero usage, stamped now).
    pub fn empty(api: &str, provider: &str, model: &str) -> Self {
        AssistantMessage {
            api: api.to_owned(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            timestamp: now_ms(),
            ..Default::default()
        }
    }

    /// The tool calls in content order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content
            .iter()
            .filter_map(AssistantContent::as_tool_call)
    }

    /// The text blocks joined without separator.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for c in &self.content {
            if let AssistantContent::Text(t) = c {
                s.push_str(&t.text);
            }
        }
        s
    }
}

/// An assistant message serialized on its own, with `"role":"assistant"` first, as pi writes
/// it in events (`partial`, `done.message`, `error.error`).
#[derive(Serialize)]
pub struct AssistantWithRole<'a> {
    role: &'static str,
    #[serde(flatten)]
    message: &'a AssistantMessage,
}

impl AssistantMessage {
    /// This message with its `role` for standalone serialization.
    pub fn with_role(&self) -> AssistantWithRole<'_> {
        AssistantWithRole {
            role: "assistant",
            message: self,
        }
    }
}

/// `{role:"toolResult", toolCallId, toolName, content, details?, usage?, addedToolNames?, isError, timestamp}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The call this answers.
    pub tool_call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// Text/image blocks for the model (`null` reads as none).
    #[serde(default, deserialize_with = "null_as_default")]
    pub content: Vec<UserContent>,
    /// Structured data for UIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Usage the tool itself incurred.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Tools the result made available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_tool_names: Option<Vec<String>>,
    /// Whether the tool failed.
    #[serde(default)]
    pub is_error: bool,
    /// ms epoch.
    #[serde(default)]
    pub timestamp: Timestamp,
}

/// A message of the LLM conversation, tagged by `role`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role")]
pub enum Message {
    /// `role: "user"`.
    #[serde(rename = "user")]
    User(UserMessage),
    /// `role: "assistant"`.
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    /// `role: "toolResult"`.
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
}

impl Message {
    /// pi's role string.
    pub fn role(&self) -> &'static str {
        match self {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "toolResult",
        }
    }
    /// The timestamp.
    pub fn timestamp(&self) -> Timestamp {
        match self {
            Message::User(m) => m.timestamp,
            Message::Assistant(m) => m.timestamp,
            Message::ToolResult(m) => m.timestamp,
        }
    }
}

impl From<UserMessage> for Message {
    fn from(m: UserMessage) -> Self {
        Message::User(m)
    }
}
impl From<AssistantMessage> for Message {
    fn from(m: AssistantMessage) -> Self {
        Message::Assistant(m)
    }
}
impl From<ToolResultMessage> for Message {
    fn from(m: ToolResultMessage) -> Self {
        Message::ToolResult(m)
    }
}
