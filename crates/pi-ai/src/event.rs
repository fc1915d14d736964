//! `AssistantMessageEvent`: the streaming protocol of one assistant response.
//!
//! Mirrors pi-ai 0.85.1 `AssistantMessageEvent` (12 variants). Every event but the terminal
//! ones carries `partial`, the adapter's single live accumulator ([`PartialMessage`]): the same
//! shared message in every event, not a snapshot. Cloning a `PartialMessage`
//! is O(1), so per-delta cost does not grow with the message.

use std::sync::{Arc, RwLock, RwLockReadGuard};

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::types::{AssistantMessage, StopReason, ToolCall};

/// The live, shared accumulator of an in-flight assistant message.
///
/// Producers mutate it with [`PartialMessage::update`]; consumers read it with
/// [`PartialMessage::read`] or copy it with [`PartialMessage::snapshot`]. A consumer may see
/// text that later events have not announced yet, exactly as in pi.
#[derive(Clone, Debug, Default)]
pub struct PartialMessage(Arc<RwLock<AssistantMessage>>);

impl PartialMessage {
    /// Wraps a message.
    pub fn new(message: AssistantMessage) -> Self {
        PartialMessage(Arc::new(RwLock::new(message)))
    }

    /// Read access (never poisoned: a panicking writer leaves the last state visible).
    pub fn read(&self) -> RwLockReadGuard<'_, AssistantMessage> {
        crate::sync::read(&self.0)
    }

    /// Mutates the message in place.
    pub fn update<R>(&self, f: impl FnOnce(&mut AssistantMessage) -> R) -> R {
        let mut guard = crate::sync::write(&self.0);
        f(&mut guard)
    }

    /// A deep copy of the current state.
    pub fn snapshot(&self) -> AssistantMessage {
        self.read().clone()
    }

    /// Whether two handles share one accumulator.
    pub fn ptr_eq(&self, other: &PartialMessage) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl PartialEq for PartialMessage {
    fn eq(&self, other: &Self) -> bool {
        self.ptr_eq(other) || *self.read() == *other.read()
    }
}

/// Serializes the current state with `"role":"assistant"` first, as pi writes `partial`.
impl Serialize for PartialMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.read().with_role().serialize(s)
    }
}

/// One event of an assistant response stream.
///
/// Order: `start`, block events (`*_start` < deltas < `*_end` per block,
/// routed by `content_index`), then exactly one terminal `done` or `error`; a setup failure
/// yields a lone `error`.
#[derive(Clone, Debug, PartialEq)]
pub enum AssistantMessageEvent {
    /// The response began (headers received).
    Start {
        /// Live accumulator.
        partial: PartialMessage,
    },
    /// A text block was appended at `content_index`.
    TextStart {
        /// Index into `partial.content`.
        content_index: usize,
        /// Live accumulator.
        partial: PartialMessage,
    },
    /// Text appended to the block.
    TextDelta {
        /// Index into `partial.content`.
        content_index: usize,
        /// The appended fragment.
        delta: String,
        /// Live accumulator.
        partial: PartialMessage,
    },
    /// The text block is complete.
    TextEnd {
        /// Index into `partial.content`.
        content_index: usize,
        /// The block's full, authoritative text.
        content: String,
        /// Live accumulator.
        partial: PartialMessage,
    },
    /// A thinking block was appended.
    ThinkingStart {
        /// Index into `partial.content`.
        content_index: usize,
        /// Live accumulator.
        partial: PartialMessage,
    },
    /// Thinking text appended.
    ThinkingDelta {
        /// Index into `partial.content`.
        content_index: usize,
        /// The appended fragment.
        delta: String,
        /// Live accumulator.
        partial: PartialMessage,
    },
    /// The thinking block is complete.
    ThinkingEnd {
        /// Index into `partial.content`.
        content_index: usize,
        /// The block's full thinking text.
        content: String,
        /// Live accumulator.
        partial: PartialMessage,
    },
    /// A tool-call block was appended (id and name may still be empty).
    ToolcallStart {
        /// Index into `partial.content`.
        content_index: usize,
        /// Live accumulator.
        partial: PartialMessage,
    },
    /// Raw argument JSON appended; `arguments` re-parsed best-effort.
    ToolcallDelta {
        /// Index into `partial.content`.
        content_index: usize,
        /// The raw fragment (may be empty).
        delta: String,
        /// Live accumulator.
        partial: PartialMessage,
    },
    /// The tool call is complete.
    ToolcallEnd {
        /// Index into `partial.content`.
        content_index: usize,
        /// The finalized block (boxed, like the terminal messages, to keep every event small).
        tool_call: Box<ToolCall>,
        /// Live accumulator.
        partial: PartialMessage,
    },
    /// Terminal success: `reason ∈ {stop, length, toolUse, deferred}`.
    Done {
        /// Why it ended.
        reason: StopReason,
        /// The final message (boxed: events move through channels and into `AgentEvent`s
        /// one by one, and an inline 450-byte message made every event that large).
        message: Box<AssistantMessage>,
    },
    /// Terminal failure: `reason ∈ {error, aborted}`; the message carries partial content,
    /// usage so far and `errorMessage`.
    Error {
        /// `error` or `aborted`.
        reason: StopReason,
        /// The failed message (boxed, as in `Done`).
        error: Box<AssistantMessage>,
    },
}

impl AssistantMessageEvent {
    /// pi's `type` string.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Start { .. } => "start",
            Self::TextStart { .. } => "text_start",
            Self::TextDelta { .. } => "text_delta",
            Self::TextEnd { .. } => "text_end",
            Self::ThinkingStart { .. } => "thinking_start",
            Self::ThinkingDelta { .. } => "thinking_delta",
            Self::ThinkingEnd { .. } => "thinking_end",
            Self::ToolcallStart { .. } => "toolcall_start",
            Self::ToolcallDelta { .. } => "toolcall_delta",
            Self::ToolcallEnd { .. } => "toolcall_end",
            Self::Done { .. } => "done",
            Self::Error { .. } => "error",
        }
    }

    /// `done` or `error`.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Done { .. } | Self::Error { .. })
    }

    /// The live accumulator, for non-terminal events.
    pub fn partial(&self) -> Option<&PartialMessage> {
        match self {
            Self::Start { partial }
            | Self::TextStart { partial, .. }
            | Self::TextDelta { partial, .. }
            | Self::TextEnd { partial, .. }
            | Self::ThinkingStart { partial, .. }
            | Self::ThinkingDelta { partial, .. }
            | Self::ThinkingEnd { partial, .. }
            | Self::ToolcallStart { partial, .. }
            | Self::ToolcallDelta { partial, .. }
            | Self::ToolcallEnd { partial, .. } => Some(partial),
            Self::Done { .. } | Self::Error { .. } => None,
        }
    }

    /// The content index, for block events.
    pub fn content_index(&self) -> Option<usize> {
        match self {
            Self::TextStart { content_index, .. }
            | Self::TextDelta { content_index, .. }
            | Self::TextEnd { content_index, .. }
            | Self::ThinkingStart { content_index, .. }
            | Self::ThinkingDelta { content_index, .. }
            | Self::ThinkingEnd { content_index, .. }
            | Self::ToolcallStart { content_index, .. }
            | Self::ToolcallDelta { content_index, .. }
            | Self::ToolcallEnd { content_index, .. } => Some(*content_index),
            _ => None,
        }
    }

    /// The event without `partial` (`with_partial = false`), as pi's json mode projects
    /// `message_update.assistantMessageEvent`; `toolcall_start` then carries the call's `id`
    /// and `toolName`.
    pub fn to_json_projection(&self) -> serde_json::Value {
        serde_json::to_value(self.json_projection()).unwrap_or_default()
    }

    /// [`AssistantMessageEvent::to_json_projection`] as a borrowed [`Serialize`] value, to
    /// write the projection without building a `Value` first.
    pub fn json_projection(&self) -> JsonProjection<'_> {
        JsonProjection(self)
    }
}

/// The json-mode projection of an [`AssistantMessageEvent`] (see
/// [`AssistantMessageEvent::json_projection`]).
#[derive(Clone, Copy, Debug)]
pub struct JsonProjection<'a>(&'a AssistantMessageEvent);

impl Serialize for JsonProjection<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let event = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", event.kind())?;
        if let Some(i) = event.content_index() {
            m.serialize_entry("contentIndex", &i)?;
        }
        match event {
            AssistantMessageEvent::TextDelta { delta, .. }
            | AssistantMessageEvent::ThinkingDelta { delta, .. }
            | AssistantMessageEvent::ToolcallDelta { delta, .. } => {
                m.serialize_entry("delta", delta)?
            }
            AssistantMessageEvent::TextEnd { content, .. }
            | AssistantMessageEvent::ThinkingEnd { content, .. } => {
                m.serialize_entry("content", content)?
            }
            AssistantMessageEvent::ToolcallStart {
                content_index,
                partial,
            } => {
                let p = partial.read();
                if let Some(crate::types::AssistantContent::ToolCall(tc)) =
                    p.content.get(*content_index)
                {
                    m.serialize_entry("id", &tc.id)?;
                    m.serialize_entry("toolName", &tc.name)?;
                }
            }
            AssistantMessageEvent::ToolcallEnd { tool_call, .. } => m.serialize_entry(
                "toolCall",
                // The block with its `type: "toolCall"` tag, as pi writes it.
                &crate::types::AssistantContent::ToolCall((**tool_call).clone()),
            )?,
            AssistantMessageEvent::Done { reason, message } => {
                m.serialize_entry("reason", reason.as_str())?;
                m.serialize_entry("message", &message.with_role())?;
            }
            AssistantMessageEvent::Error { reason, error } => {
                m.serialize_entry("reason", reason.as_str())?;
                m.serialize_entry("error", &error.with_role())?;
            }
            _ => {}
        }
        m.end()
    }
}

/// Full JSON (with `partial`), as pi serializes the event object.
impl Serialize for AssistantMessageEvent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", self.kind())?;
        if let Some(i) = self.content_index() {
            m.serialize_entry("contentIndex", &i)?;
        }
        match self {
            Self::TextDelta { delta, .. }
            | Self::ThinkingDelta { delta, .. }
            | Self::ToolcallDelta { delta, .. } => m.serialize_entry("delta", delta)?,
            Self::TextEnd { content, .. } | Self::ThinkingEnd { content, .. } => {
                m.serialize_entry("content", content)?
            }
            Self::ToolcallEnd { tool_call, .. } => m.serialize_entry(
                "toolCall",
                &crate::types::AssistantContent::ToolCall((**tool_call).clone()),
            )?,
            Self::Done { reason, message } => {
                m.serialize_entry("reason", reason)?;
                m.serialize_entry("message", &message.with_role())?;
            }
            Self::Error { reason, error } => {
                m.serialize_entry("reason", reason)?;
                m.serialize_entry("error", &error.with_role())?;
            }
            _ => {}
        }
        if let Some(p) = self.partial() {
            m.serialize_entry("partial", p)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standalone_messages_carry_their_role() {
        let msg = AssistantMessage::empty("anthropic-messages", "p", "m");
        let done = AssistantMessageEvent::Done {
            reason: StopReason::Stop,
            message: Box::new(msg.clone()),
        };
        let v = serde_json::to_value(&done).unwrap();
        assert_eq!(v["message"]["role"], "assistant");
        let s = crate::json::to_string(&done).unwrap();
        assert!(
            s.contains(r#""message":{"role":"assistant","content":[]"#),
            "{s}"
        );
        assert_eq!(done.to_json_projection()["message"]["role"], "assistant");
        let start = AssistantMessageEvent::Start {
            partial: PartialMessage::new(msg),
        };
        let v = serde_json::to_value(&start).unwrap();
        assert_eq!(v["partial"]["role"], "assistant");
        assert_eq!(v["type"], "start");
    }
}
