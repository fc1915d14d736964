//! Stream mapping for `google-generative-ai`: `streamGenerateContent` SSE chunks →
//! [`AssistantMessageEvent`]s.
//!
//! Mirrors pi-ai 0.85.1 `api/google-generative-ai.ts` (the chunk loop of `stream`) and
//! `api/google-shared.ts` (`isThinkingPart`, `retainThoughtSignature`, `mapStopReason`): only
//! `candidates[0]` is read; consecutive text parts of one kind (thought or not) form one
//! block; a function call closes the current block and is emitted whole; a missing or
//! repeated call id is synthesized as `<name>_<epochMs>_<counter>` with a process-wide
//! counter; the last `usageMetadata` wins.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use crate::event::{AssistantMessageEvent as Ev, PartialMessage};
use crate::providers::{StreamError, StreamMapper};
use crate::sse::SseEvent;
use crate::types::{
    AssistantContent, Model, StopReason, TextContent, ThinkingContent, ToolCall, Usage,
    calculate_cost, now_ms,
};

/// pi's module-level `toolCallCounter`: shared by every Google stream of the process.
static TOOL_CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The kind of the open text-like block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
}

/// Maps one Gemini response onto the partial message.
pub(super) struct GoogleMapper {
    partial: PartialMessage,
    model: Model,
    /// The open text/thinking block: its kind and content index.
    current: Option<(Kind, usize)>,
}

impl GoogleMapper {
    /// A mapper writing into `partial` for `model`.
    pub fn new(model: &Model, partial: PartialMessage) -> Self {
        GoogleMapper {
            partial,
            model: model.clone(),
            current: None,
        }
    }

    /// Emits the end event of the open block, if any.
    fn close_current(&mut self, out: &mut Vec<Ev>) {
        let Some((_, content_index)) = self.current.take() else {
            return;
        };
        let partial = self.partial.clone();
        let event = self.partial.update(|m| match m.content.get(content_index) {
            Some(AssistantContent::Text(t)) => Some(Ev::TextEnd {
                content_index,
                content: t.text.clone(),
                partial,
            }),
            Some(AssistantContent::Thinking(t)) => Some(Ev::ThinkingEnd {
                content_index,
                content: t.thinking.clone(),
                partial,
            }),
            _ => None,
        });
        out.extend(event);
    }

    fn text_part(&mut self, part: &Value, text: &str, out: &mut Vec<Ev>) {
        let kind = if part.get("thought") == Some(&Value::Bool(true)) {
            Kind::Thinking
        } else {
            Kind::Text
        };
        if self.current.map(|(k, _)| k) != Some(kind) {
            self.close_current(out);
            let content_index = self.partial.update(|m| {
                m.content.push(match kind {
                    Kind::Text => AssistantContent::Text(TextContent::default()),
                    Kind::Thinking => AssistantContent::Thinking(ThinkingContent::default()),
                });
                m.content.len() - 1
            });
            self.current = Some((kind, content_index));
            let partial = self.partial.clone();
            out.push(match kind {
                Kind::Text => Ev::TextStart {
                    content_index,
                    partial,
                },
                Kind::Thinking => Ev::ThinkingStart {
                    content_index,
                    partial,
                },
            });
        }
        let Some((_, content_index)) = self.current else {
            return;
        };
        let signature = part
            .get("thoughtSignature")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        self.partial
            .update(|m| match m.content.get_mut(content_index) {
                Some(AssistantContent::Text(t)) => {
                    t.text.push_str(text);
                    if let Some(sig) = signature {
                        t.text_signature = Some(sig.to_owned());
                    }
                }
                Some(AssistantContent::Thinking(t)) => {
                    t.thinking.push_str(text);
                    if let Some(sig) = signature {
                        t.thinking_signature = Some(sig.to_owned());
                    }
                }
                _ => {}
            });
        let partial = self.partial.clone();
        let delta = text.to_owned();
        out.push(match kind {
            Kind::Text => Ev::TextDelta {
                content_index,
                delta,
                partial,
            },
            Kind::Thinking => Ev::ThinkingDelta {
                content_index,
                delta,
                partial,
            },
        });
    }

    fn function_call(&mut self, part: &Value, call: &Map<String, Value>, out: &mut Vec<Ev>) {
        self.close_current(out);
        let name = call.get("name").and_then(Value::as_str);
        let provided = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let arguments = match call.get("args") {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        let thought_signature = part
            .get("thoughtSignature")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        let content_index = self.partial.update(|m| {
            let duplicate = provided.is_some_and(|id| m.tool_calls().any(|tc| tc.id == id));
            let id = match provided {
                Some(id) if !duplicate => id.to_owned(),
                _ => {
                    let n = TOOL_CALL_COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
                    format!("{}_{}_{n}", name.unwrap_or("undefined"), now_ms())
                }
            };
            m.content.push(AssistantContent::ToolCall(ToolCall {
                id,
                name: name.unwrap_or("").to_owned(),
                arguments,
                thought_signature,
                namespace: None,
            }));
            m.content.len() - 1
        });
        let tool_call = match self.partial.read().content.get(content_index) {
            Some(AssistantContent::ToolCall(tc)) => tc.clone(),
            _ => return,
        };
        let delta = crate::json::to_string(&tool_call.arguments).unwrap_or_else(|_| "{}".into());
        out.push(Ev::ToolcallStart {
            content_index,
            partial: self.partial.clone(),
        });
        out.push(Ev::ToolcallDelta {
            content_index,
            delta,
            partial: self.partial.clone(),
        });
        out.push(Ev::ToolcallEnd {
            content_index,
            tool_call: Box::new(tool_call),
            partial: self.partial.clone(),
        });
    }

    fn usage(&mut self, meta: &Value) {
        let n = |k: &str| count(meta.get(k));
        let cached = n("cachedContentTokenCount");
        let thoughts = n("thoughtsTokenCount");
        let mut usage = Usage {
            input: n("promptTokenCount").saturating_sub(cached),
            output: n("candidatesTokenCount") + thoughts,
            cache_read: cached,
            cache_write: 0,
            cache_write_1h: None,
            reasoning: Some(thoughts),
            // pi builds this usage whole, `reasoning` before `totalTokens`.
            optional_before_total: true,
            total_tokens: n("totalTokenCount"),
            cost: Default::default(),
        };
        calculate_cost(&self.model, &mut usage);
        self.partial.update(|m| m.usage = usage);
    }
}

/// A token count (`null`/absent/invalid → 0, as pi's `|| 0`).
fn count(v: Option<&Value>) -> u64 {
    v.and_then(|v| {
        v.as_u64().or_else(|| {
            v.as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0)
                .map(|f| f as u64)
        })
    })
    .unwrap_or(0)
}

/// `mapStopReason` over Gemini's `FinishReason` values; unknown ones fail the stream.
fn map_finish_reason(reason: &str) -> Result<StopReason, StreamError> {
    match reason {
        "STOP" => Ok(StopReason::Stop),
        "MAX_TOKENS" => Ok(StopReason::Length),
        "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "SAFETY"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION"
        | "IMAGE_OTHER"
        | "RECITATION"
        | "FINISH_REASON_UNSPECIFIED"
        | "OTHER"
        | "LANGUAGE"
        | "MALFORMED_FUNCTION_CALL"
        | "UNEXPECTED_TOOL_CALL"
        | "NO_IMAGE" => Ok(StopReason::Error),
        other => Err(StreamError::UnhandledStopReason(other.to_owned())),
    }
}

impl StreamMapper for GoogleMapper {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        // The SDK hands each `data:` payload on unparsed; pi's `JSON.parse` of it throws V8's
        // `SyntaxError` message.
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| StreamError::Json(crate::js_json_error::json_parse_message(data, &e)))?;
        if let Some(id) = chunk
            .get("responseId")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            self.partial.update(|m| {
                if m.response_id.as_deref().is_none_or(str::is_empty) {
                    m.response_id = Some(id.to_owned());
                }
            });
        }
        let candidate = chunk
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first());
        if let Some(Value::Array(parts)) = candidate
            .and_then(|c| c.get("content"))
            .and_then(|c| c.get("parts"))
        {
            for part in parts {
                if let Some(Value::String(text)) = part.get("text") {
                    self.text_part(part, text, out);
                }
                if let Some(Value::Object(call)) = part.get("functionCall") {
                    self.function_call(part, call, out);
                }
            }
        }
        if let Some(reason) = candidate
            .and_then(|c| c.get("finishReason"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            let mapped = map_finish_reason(reason);
            self.partial.update(|m| {
                m.raw_stop_reason = Some(reason.to_owned());
                if let Ok(mut stop) = mapped {
                    if stop == StopReason::Stop && m.tool_calls().next().is_some() {
                        stop = StopReason::ToolUse;
                    }
                    m.stop_reason = stop;
                }
            });
            mapped?;
        }
        if let Some(meta) = chunk.get("usageMetadata").filter(|m| m.is_object()) {
            self.usage(meta);
        }
        Ok(())
    }

    fn on_end(&mut self, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        self.close_current(out);
        let (reason, raw) = {
            let m = self.partial.read();
            (m.stop_reason, m.raw_stop_reason.clone())
        };
        match reason {
            StopReason::Pending => Err(StreamError::Incomplete(
                "Google stream ended without a finish reason",
            )),
            StopReason::Error | StopReason::Aborted => Err(match raw {
                Some(raw) => StreamError::Provider(format!("Provider stopped with: {raw}")),
                None => StreamError::Unknown,
            }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
