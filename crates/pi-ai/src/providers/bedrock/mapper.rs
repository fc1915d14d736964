//! Bedrock ConverseStream mapper: decoded stream events → `AssistantMessageEvent`s.
//!
//! Mirrors pi-ai 0.85.1 `api/bedrock-converse-stream.js` (`handleContentBlock*`,
//! `handleMetadata`, `mapStopReason`). Events arrive named by `:event-type` with their JSON
//! payload (see `event_stream`):
//! - `messageStart` must be the assistant's; `contentBlockStart` opens tool calls only —
//!   text and reasoning blocks open at their first delta;
//! - a delta goes to the block opened for its `contentBlockIndex` and not yet stopped;
//!   `reasoningContent` carries thinking text, a signature, or encrypted `redactedContent`
//!   (kept as base64 in `thinkingSignature`, shown as `[Reasoning redacted]`);
//! - `contentBlockStop` ends the block (`*_end`); blocks the stream never stops are finalized
//!   at the end without an event, as pi does;
//! - `messageStop` sets the stop reason, `metadata` the usage and cost; other event types are
//!   skipped (the SDK ignores members it does not know).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;

use crate::event::{AssistantMessageEvent as Ev, PartialMessage};
use crate::js_json_error::json_parse_message;
use crate::partial_json::PartialJsonParser;
use crate::providers::block_events::{
    append_text, append_thinking, end_event, start_block, tool_call_delta,
};
use crate::providers::openai_completions::sdk::{tokens, truthy};
use crate::providers::{StreamError, StreamMapper};
use crate::sse::SseEvent;
use crate::types::{
    AssistantContent, Model, StopReason, TextContent, ThinkingContent, ToolCall, Usage,
    calculate_cost,
};

/// pi's `REDACTED_THINKING_PLACEHOLDER`.
pub const REDACTED_THINKING_PLACEHOLDER: &str = "[Reasoning redacted]";

/// Streaming scratch of one content block (pi's `index`, `partialJson`, `redactedChunks`).
#[derive(Default)]
struct Slot {
    /// The block's `contentBlockIndex` until it stops (`None` = JavaScript `undefined`).
    key: Option<Value>,
    /// Tool-call arguments so far.
    args: Option<PartialJsonParser>,
    /// Encrypted reasoning so far.
    redacted: Option<Vec<u8>>,
}

/// Mapper state for one ConverseStream response.
pub struct BedrockMapper {
    partial: PartialMessage,
    model: Model,
    /// One per content block, in content order.
    slots: Vec<Slot>,
}

/// `contentBlockIndex` as pi compares it (`===`): absent and `null` differ.
fn block_key(payload: &Value) -> Option<Value> {
    payload.get("contentBlockIndex").cloned()
}

/// `mapStopReason`: pi's stop reason and, for failures, `Provider stopped with: <reason>`.
pub fn map_stop_reason(reason: Option<&str>) -> (StopReason, Option<String>) {
    match reason {
        Some("end_turn" | "stop_sequence") => (StopReason::Stop, None),
        Some("max_tokens" | "model_context_window_exceeded") => (StopReason::Length, None),
        Some("tool_use") => (StopReason::ToolUse, None),
        Some(r) if !r.is_empty() => (
            StopReason::Error,
            Some(format!("Provider stopped with: {r}")),
        ),
        _ => (StopReason::Error, None),
    }
}

impl BedrockMapper {
    /// A mapper writing into `partial`.
    pub fn new(model: &Model, partial: PartialMessage) -> Self {
        BedrockMapper {
            partial,
            model: model.clone(),
            slots: Vec::new(),
        }
    }

    /// The open block for `key` (`blocks.findIndex(b => b.index === key)`): its content index.
    fn find(&self, key: &Option<Value>) -> Option<usize> {
        self.slots.iter().position(|s| &s.key == key)
    }

    /// Adds `block` with its scratch `slot` and pushes its `*_start`.
    fn start_block(&mut self, block: AssistantContent, slot: Slot, out: &mut Vec<Ev>) -> usize {
        self.slots.push(slot);
        start_block(&self.partial, block, out)
    }

    fn block_start(&mut self, payload: &Value, out: &mut Vec<Ev>) {
        let Some(tool) = payload.get("start").and_then(|s| s.get("toolUse")) else {
            return;
        };
        let text = |k: &str| {
            tool.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let call = ToolCall {
            id: text("toolUseId"),
            name: text("name"),
            ..Default::default()
        };
        let slot = Slot {
            key: block_key(payload),
            args: Some(PartialJsonParser::new()),
            redacted: None,
        };
        self.start_block(AssistantContent::ToolCall(call), slot, out);
    }

    fn kind(&self, index: usize) -> Option<&'static str> {
        self.partial.read().content.get(index).map(|c| match c {
            AssistantContent::Text(_) => "text",
            AssistantContent::Thinking(_) => "thinking",
            AssistantContent::ToolCall(_) => "toolCall",
        })
    }

    fn text_delta(&mut self, key: Option<Value>, text: &str, out: &mut Vec<Ev>) {
        let index = match self.find(&key) {
            Some(i) => i,
            None => {
                let slot = Slot {
                    key,
                    ..Default::default()
                };
                self.start_block(AssistantContent::Text(TextContent::default()), slot, out)
            }
        };
        append_text(&self.partial, index, text, out);
    }

    fn tool_delta(&mut self, index: usize, tool: &Value, out: &mut Vec<Ev>) {
        let delta = tool
            .get("input")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(args) = self.slots.get_mut(index).and_then(|s| s.args.as_mut()) else {
            return;
        };
        args.push(&delta);
        let arguments = args.value();
        tool_call_delta(&self.partial, index, delta, out, |_, a| *a = arguments);
    }

    fn reasoning_delta(
        &mut self,
        key: Option<Value>,
        reasoning: &Value,
        out: &mut Vec<Ev>,
    ) -> Result<(), StreamError> {
        let index = match self.find(&key) {
            Some(i) => i,
            None => {
                let block = ThinkingContent {
                    thinking_signature: Some(String::new()),
                    ..Default::default()
                };
                let slot = Slot {
                    key,
                    ..Default::default()
                };
                self.start_block(AssistantContent::Thinking(block), slot, out)
            }
        };
        if self.kind(index) != Some("thinking") {
            return Ok(());
        }
        if let Some(text) = reasoning
            .get("text")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            append_thinking(&self.partial, index, text, out);
        }
        if let Some(signature) = reasoning
            .get("signature")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            self.partial.update(|m| {
                if let Some(AssistantContent::Thinking(t)) = m.content.get_mut(index)
                    && t.redacted != Some(true)
                {
                    t.thinking_signature
                        .get_or_insert_with(String::new)
                        .push_str(signature);
                }
            });
        }
        if let Some(encoded) = reasoning
            .get("redactedContent")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            // A blob member travels as base64 in the JSON payload.
            let bytes = BASE64.decode(encoded).map_err(|_| {
                StreamError::Protocol("Invalid base64 in reasoningContent.redactedContent".into())
            })?;
            let first = self.partial.update(|m| match m.content.get_mut(index) {
                Some(AssistantContent::Thinking(t)) if t.redacted != Some(true) => {
                    t.redacted = Some(true);
                    t.thinking_signature = Some(String::new());
                    t.thinking.push_str(REDACTED_THINKING_PLACEHOLDER);
                    true
                }
                _ => false,
            });
            if first {
                out.push(Ev::ThinkingDelta {
                    content_index: index,
                    delta: REDACTED_THINKING_PLACEHOLDER.to_owned(),
                    partial: self.partial.clone(),
                });
            }
            if let Some(slot) = self.slots.get_mut(index) {
                slot.redacted.get_or_insert_with(Vec::new).extend(bytes);
            }
        }
        Ok(())
    }

    fn block_delta(&mut self, payload: &Value, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        let key = block_key(payload);
        let Some(delta) = payload.get("delta").filter(|d| !d.is_null()) else {
            return Ok(());
        };
        if let Some(text) = delta.get("text").and_then(Value::as_str) {
            self.text_delta(key, text, out);
        } else if let Some(tool) = delta.get("toolUse").filter(|t| truthy(t))
            && let Some(index) = self.find(&key)
            && self.kind(index) == Some("toolCall")
        {
            self.tool_delta(index, tool, out);
        } else if let Some(reasoning) = delta.get("reasoningContent").filter(|r| truthy(r)) {
            self.reasoning_delta(key, reasoning, out)?;
        }
        Ok(())
    }

    /// Stores buffered encrypted reasoning as base64 in `thinkingSignature`.
    fn flush_redacted(&mut self, index: usize) {
        let Some(bytes) = self.slots.get_mut(index).and_then(|s| s.redacted.take()) else {
            return;
        };
        let encoded = BASE64.encode(bytes);
        self.partial.update(|m| {
            if let Some(AssistantContent::Thinking(t)) = m.content.get_mut(index) {
                t.thinking_signature = Some(encoded);
            }
        });
    }

    fn block_stop(&mut self, payload: &Value, out: &mut Vec<Ev>) {
        let Some(index) = self.find(&block_key(payload)) else {
            return;
        };
        if let Some(slot) = self.slots.get_mut(index) {
            slot.key = None;
        }
        self.flush_redacted(index);
        let args = self.slots.get_mut(index).and_then(|s| s.args.take());
        if self.kind(index) != Some("toolCall") {
            out.extend(end_event(&self.partial, index));
            return;
        }
        let partial = self.partial.clone();
        let event = self.partial.update(|m| match m.content.get_mut(index) {
            Some(AssistantContent::ToolCall(tc)) => {
                let (arguments, error) = args
                    .map(|a| a.final_arguments())
                    .unwrap_or_else(|| (serde_json::Map::new(), None));
                tc.arguments = arguments;
                tc.arguments_error = error;
                Some(Ev::ToolcallEnd {
                    content_index: index,
                    tool_call: Box::new(tc.clone()),
                    partial,
                })
            }
            _ => None,
        });
        out.extend(event);
    }

    fn metadata(&mut self, payload: &Value) {
        let Some(usage) = payload.get("usage").filter(|u| truthy(u)) else {
            return;
        };
        let mut u = Usage {
            input: tokens(usage.get("inputTokens")),
            output: tokens(usage.get("outputTokens")),
            cache_read: tokens(usage.get("cacheReadInputTokens")),
            cache_write: tokens(usage.get("cacheWriteInputTokens")),
            ..Default::default()
        };
        let total = tokens(usage.get("totalTokens"));
        u.total_tokens = if total > 0.0 {
            total
        } else {
            u.input + u.output
        };
        calculate_cost(&self.model, &mut u);
        self.partial.update(|m| m.usage = u);
    }

    fn message_stop(&mut self, payload: &Value) {
        let reason = payload.get("stopReason").and_then(Value::as_str);
        let (stop, error) = map_stop_reason(reason);
        self.partial.update(|m| {
            m.raw_stop_reason = reason.map(str::to_owned);
            m.stop_reason = stop;
            if let Some(e) = error {
                m.error_message = Some(e);
            }
        });
    }
}

impl StreamMapper for BedrockMapper {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        let name = event.event.as_deref().unwrap_or("");
        let known = matches!(
            name,
            "messageStart"
                | "contentBlockStart"
                | "contentBlockDelta"
                | "contentBlockStop"
                | "messageStop"
                | "metadata"
        );
        if !known {
            return Ok(());
        }
        let data = event.data.as_str();
        let payload: Value = if data.trim().is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            serde_json::from_str(data)
                .map_err(|e| StreamError::Json(json_parse_message(data, &e)))?
        };
        match name {
            "messageStart" => {
                if payload.get("role").and_then(Value::as_str) != Some("assistant") {
                    return Err(StreamError::Protocol(
                        "Unexpected assistant message start but got user message start instead"
                            .into(),
                    ));
                }
            }
            "contentBlockStart" => self.block_start(&payload, out),
            "contentBlockDelta" => self.block_delta(&payload, out)?,
            "contentBlockStop" => self.block_stop(&payload, out),
            "messageStop" => self.message_stop(&payload),
            _ => self.metadata(&payload),
        }
        Ok(())
    }

    /// Finalizes the blocks the stream never stopped (no event, as pi); a stream without
    /// `messageStop` fails with `Bedrock stream ended without a stop reason`.
    fn on_end(&mut self, _out: &mut Vec<Ev>) -> Result<(), StreamError> {
        for index in 0..self.slots.len() {
            self.flush_redacted(index);
        }
        if self.partial.read().stop_reason == StopReason::Pending {
            return Err(StreamError::Protocol(
                "Bedrock stream ended without a stop reason".into(),
            ));
        }
        Ok(())
    }

    /// pi's `catch` finalizes every block before its `error` event: encrypted reasoning
    /// received so far is stored as base64, as a finished block would have it.
    fn on_failure(&mut self) {
        for index in 0..self.slots.len() {
            self.flush_redacted(index);
        }
    }
}

#[cfg(test)]
#[path = "mapper_tests.rs"]
mod tests;
