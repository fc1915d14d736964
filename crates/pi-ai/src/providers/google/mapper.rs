//! Stream mapping for `google-generative-ai`: `streamGenerateContent` SSE chunks →
//! [`AssistantMessageEvent`]s.
//!
//! Mirrors pi-ai 0.85.1 `api/google-generative-ai.ts` (the chunk loop of `stream`) and
//! `api/google-shared.ts` (`isThinkingPart`, `retainThoughtSignature`, `mapStopReason`): only
//! `candidates[0]` is read; consecutive text parts of one kind (thought or not) form one
//! block; a function call closes the current block and is emitted whole; a missing or
//! repeated call id is synthesized as `<name>_<epochMs>_<counter>` with a process-wide
//! counter; the last `usageMetadata` wins.
//!
//! Difference from pi: a call whose arguments are streamed in parts (`willContinue`,
//! `partialArgs`, see `partial_args`) is assembled into one tool call; pi makes one empty
//! call per part.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use crate::event::{AssistantMessageEvent as Ev, PartialMessage};
use crate::json_depth::{MAX_ARGUMENT_DEPTH, value_depth};
use crate::partial_json::FinishError;
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
pub(crate) struct GoogleMapper {
    partial: PartialMessage,
    model: Model,
    /// The open text/thinking block: its kind and content index.
    current: Option<(Kind, usize)>,
    flavor: super::Flavor,
    /// A call whose arguments are still streaming: its content index and the path of a
    /// string still being continued.
    streaming: Option<(usize, Option<String>)>,
}

impl GoogleMapper {
    /// A mapper writing into `partial` for `model`.
    pub(crate) fn new(model: &Model, partial: PartialMessage, flavor: super::Flavor) -> Self {
        GoogleMapper {
            partial,
            model: model.clone(),
            current: None,
            flavor,
            streaming: None,
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

    /// Applies a streamed call's `partialArgs` (and `args`); `continues: false` closes it.
    fn continue_streamed(
        &mut self,
        call: &Map<String, Value>,
        continues: bool,
        out: &mut Vec<Ev>,
    ) -> Result<(), StreamError> {
        let Some((content_index, mut continuing)) = self.streaming.take() else {
            return Ok(());
        };
        let fragments = call.get("partialArgs").and_then(Value::as_array);
        let whole = call.get("args").and_then(Value::as_object);
        let applied = self.partial.update(|m| {
            let Some(AssistantContent::ToolCall(tc)) = m.content.get_mut(content_index) else {
                return Ok(());
            };
            if let Some(args) = whole {
                tc.arguments.extend(args.clone());
            }
            for f in fragments.into_iter().flatten() {
                // `StreamError::Protocol` carries text, so the typed error becomes its message.
                super::partial_args::apply(&mut tc.arguments, f, &mut continuing)
                    .map_err(|e| StreamError::Protocol(e.to_string()))?;
            }
            Ok::<(), StreamError>(())
        });
        if fragments.is_some() || whole.is_some() {
            out.push(Ev::ToolcallDelta {
                content_index,
                delta: String::new(),
                partial: self.partial.clone(),
            });
        }
        self.streaming = Some((content_index, continuing));
        applied?;
        if !continues {
            self.finish_streamed(out);
        }
        Ok(())
    }

    /// Closes a streamed call (its `toolcall_end`), if one is open.
    fn finish_streamed(&mut self, out: &mut Vec<Ev>) {
        let Some((content_index, _)) = self.streaming.take() else {
            return;
        };
        if let Some(AssistantContent::ToolCall(tc)) = self.partial.read().content.get(content_index)
        {
            out.push(Ev::ToolcallEnd {
                content_index,
                tool_call: Box::new(tc.clone()),
                partial: self.partial.clone(),
            });
        }
    }

    /// A `functionCall` part: emitted whole, or (`streamed`) opened for
    /// [`GoogleMapper::continue_streamed`].
    fn function_call(
        &mut self,
        part: &Value,
        call: &Map<String, Value>,
        out: &mut Vec<Ev>,
        streamed: bool,
    ) {
        self.close_current(out);
        let name = call.get("name").and_then(Value::as_str);
        let provided = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        // Whole objects inside the event (already parsed within the document limit): refused
        // past the argument limit, and when not an object (pi would pass that value on).
        let (arguments, arguments_error) = match call.get("args") {
            Some(Value::Object(m)) if value_depth_exceeds(m) => (
                Map::new(),
                Some(FinishError::TooDeep {
                    limit: MAX_ARGUMENT_DEPTH,
                }),
            ),
            Some(Value::Object(m)) => (m.clone(), None),
            None | Some(Value::Null) => (Map::new(), None),
            Some(_) => (Map::new(), Some(FinishError::NotAnObject)),
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
                arguments_error,
            }));
            m.content.len() - 1
        });
        let tool_call = match self.partial.read().content.get(content_index) {
            Some(AssistantContent::ToolCall(tc)) => tc.clone(),
            _ => return,
        };
        out.push(Ev::ToolcallStart {
            content_index,
            partial: self.partial.clone(),
        });
        if streamed {
            self.streaming = Some((content_index, None));
            return;
        }
        let delta = crate::json::to_string(&tool_call.arguments).unwrap_or_else(|_| "{}".into());
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
            input: n("promptTokenCount") - cached,
            output: n("candidatesTokenCount") + thoughts,
            cache_read: cached,
            cache_write: 0.0,
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

/// A token count as a JavaScript number (`null`/absent/invalid → 0, as pi's `|| 0`).
fn count(v: Option<&Value>) -> f64 {
    v.and_then(Value::as_f64)
        .filter(|f| f.is_finite() && *f >= 0.0)
        .unwrap_or(0.0)
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
        let chunk: Value = crate::json_depth::parse_event_data(data)?;
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
                    self.finish_streamed(out);
                    self.text_part(part, text, out);
                }
                if let Some(Value::Object(call)) = part.get("functionCall") {
                    let continues = call.get("willContinue") == Some(&Value::Bool(true));
                    if self.streaming.is_some() {
                        self.continue_streamed(call, continues, out)?;
                    } else if continues {
                        self.function_call(part, call, out, true);
                        self.continue_streamed(call, true, out)?;
                    } else {
                        self.function_call(part, call, out, false);
                    }
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
        self.finish_streamed(out);
        self.close_current(out);
        let (reason, raw) = {
            let m = self.partial.read();
            (m.stop_reason, m.raw_stop_reason.clone())
        };
        match reason {
            StopReason::Pending => Err(StreamError::Incomplete(match self.flavor {
                super::Flavor::Gemini => "Google stream ended without a finish reason",
                super::Flavor::Vertex => "Google Vertex stream ended without a finish reason",
            })),
            StopReason::Error | StopReason::Aborted => Err(match raw {
                Some(raw) => StreamError::Provider(format!("Provider stopped with: {raw}")),
                None => StreamError::Unknown,
            }),
            _ => Ok(()),
        }
    }
}

/// Whether arguments nest deeper than [`MAX_ARGUMENT_DEPTH`] (the object itself is level 1).
fn value_depth_exceeds(args: &Map<String, Value>) -> bool {
    args.values()
        .any(|v| value_depth(v) + 1 > MAX_ARGUMENT_DEPTH)
}

#[cfg(test)]
mod tests;
