//! Stream mapping for `anthropic-messages`: raw SSE events → [`AssistantMessageEvent`]s.
//!
//! Mirrors pi-ai 0.85.1 `api/anthropic-messages.ts` (`iterateAnthropicEvents` and the event
//! loop of `stream`): `event: error` fails with its raw data; only the six message events are
//! parsed; blocks are matched by Anthropic's `index` (server-side blocks are skipped, so pi's
//! content indices may differ from Anthropic's); usage from `message_start` is overwritten by
//! the non-null fields of `message_delta`; a stream that started but never sent
//! `message_stop` fails with `Anthropic stream ended before message_stop`.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::compat::Compat;
use super::oauth::from_claude_code_name;
use crate::event::{AssistantMessageEvent as Ev, PartialMessage};
use crate::providers::json_args::{ArgumentBuffer, parse_json_with_repair};
use crate::providers::{StreamError, StreamMapper};
use crate::sse::SseEvent;
use crate::types::{
    AssistantContent, Diagnostic, Model, StopReason, TextContent, ThinkingContent, ToolCall, Usage,
    calculate_cost, now_ms,
};

/// The SSE event names whose data is parsed; everything else (e.g. `ping`) is skipped.
const MESSAGE_EVENTS: [&str; 6] = [
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
];

/// Scratch state of one open pi block.
struct OpenBlock {
    /// Anthropic's block `index` (`None` when the event had none).
    wire_index: Option<f64>,
    /// Index into `partial.content`.
    content_index: usize,
    /// Raw argument JSON of a tool call.
    args: Option<ArgumentBuffer>,
}

/// Maps one Anthropic Messages response onto the partial message.
pub(super) struct AnthropicMapper {
    partial: PartialMessage,
    model: Model,
    compat: Compat,
    /// The model whose prices apply (the server may report an allowed fallback model).
    usage_model: Option<Model>,
    open: Vec<OpenBlock>,
    saw_message_start: bool,
    saw_message_stop: bool,
    input_transformations: Option<Vec<Value>>,
    /// OAuth (Claude Code) mode: tool names come back in Claude Code casing.
    oauth: bool,
}

impl AnthropicMapper {
    /// A mapper writing into `partial` for `model`; `oauth` when the request was sent with an
    /// OAuth token.
    pub(crate) fn new(model: &Model, partial: PartialMessage, oauth: bool) -> Self {
        AnthropicMapper {
            partial,
            model: model.clone(),
            compat: Compat::of(model),
            usage_model: None,
            open: Vec::new(),
            saw_message_start: false,
            saw_message_stop: false,
            input_transformations: None,
            oauth,
        }
    }

    fn cost_model(&self) -> &Model {
        self.usage_model.as_ref().unwrap_or(&self.model)
    }

    /// The open block with this wire index; a missing index matches a block started without
    /// one, as pi's `undefined === undefined` lookup does.
    fn find_open(&self, wire_index: Option<f64>) -> Option<usize> {
        self.open.iter().position(|b| b.wire_index == wire_index)
    }

    fn message_start(&mut self, event: &Value) {
        let message = event.get("message").unwrap_or(&Value::Null);
        if let Some(Value::Array(t)) = message.get("input_transformations") {
            self.input_transformations = Some(t.clone());
        }
        let server_model = message.get("model").and_then(Value::as_str);
        if let Some(server_model) = server_model
            && server_model != self.model.id
            && let Some(cost) = self
                .compat
                .fallback_cost(&self.model.provider, server_model)
        {
            let mut m = self.model.clone();
            m.id = server_model.to_owned();
            m.cost = cost.clone();
            self.usage_model = Some(m);
        } else {
            self.usage_model = None;
        }
        let usage = message.get("usage").unwrap_or(&Value::Null);
        let field = |k: &str| count(usage.get(k)).unwrap_or(0.0);
        let cache_1h = count(
            usage
                .get("cache_creation")
                .and_then(|c| c.get("ephemeral_1h_input_tokens")),
        )
        .unwrap_or(0.0);
        let cost_model = self.cost_model().clone();
        self.partial.update(|m| {
            if let Some(id) = message.get("id").and_then(Value::as_str) {
                m.response_id = Some(id.to_owned());
            }
            if let Some(server_model) = server_model {
                m.model = server_model.to_owned();
            }
            m.usage.input = field("input_tokens");
            m.usage.output = field("output_tokens");
            m.usage.cache_read = field("cache_read_input_tokens");
            m.usage.cache_write = field("cache_creation_input_tokens");
            m.usage.cache_write_1h = Some(cache_1h);
            finish_usage(&cost_model, &mut m.usage);
        });
    }

    fn block_start(&mut self, event: &Value, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        let block = event.get("content_block").unwrap_or(&Value::Null);
        let wire_index = count(event.get("index"));
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let str_field = |k: &str| block.get(k).and_then(Value::as_str).map(str::to_owned);
        let (content, args) = match kind {
            "fallback" => {
                if !self.partial.read().content.is_empty() {
                    return Err(StreamError::Provider(
                        "Anthropic performed an unsupported mid-output model fallback".into(),
                    ));
                }
                return Ok(());
            }
            "text" => (
                AssistantContent::Text(TextContent::new(str_field("text").unwrap_or_default())),
                None,
            ),
            "thinking" => (
                AssistantContent::Thinking(ThinkingContent {
                    thinking: str_field("thinking").unwrap_or_default(),
                    thinking_signature: Some(str_field("signature").unwrap_or_default()),
                    redacted: None,
                }),
                None,
            ),
            "redacted_thinking" => (
                AssistantContent::Thinking(ThinkingContent {
                    thinking: "[Reasoning redacted]".into(),
                    thinking_signature: str_field("data"),
                    redacted: Some(true),
                }),
                None,
            ),
            "tool_use" => (
                AssistantContent::ToolCall(ToolCall {
                    id: str_field("id").unwrap_or_default(),
                    name: match str_field("name") {
                        Some(n) if self.oauth => from_claude_code_name(&n),
                        n => n.unwrap_or_default(),
                    },
                    arguments: match block.get("input") {
                        Some(Value::Object(m)) => m.clone(),
                        _ => Map::new(),
                    },
                    ..Default::default()
                }),
                Some(ArgumentBuffer::default()),
            ),
            // Server-side blocks (server_tool_use, *_tool_result, …) produce no pi content.
            _ => return Ok(()),
        };
        let content_index = self.partial.update(|m| {
            m.content.push(content);
            m.content.len() - 1
        });
        self.open.push(OpenBlock {
            wire_index,
            content_index,
            args,
        });
        let partial = self.partial.clone();
        out.push(match kind {
            "text" => Ev::TextStart {
                content_index,
                partial,
            },
            "tool_use" => Ev::ToolcallStart {
                content_index,
                partial,
            },
            _ => Ev::ThinkingStart {
                content_index,
                partial,
            },
        });
        Ok(())
    }

    fn block_delta(&mut self, event: &Value, out: &mut Vec<Ev>) {
        let delta = event.get("delta").unwrap_or(&Value::Null);
        let text = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or("");
        let kind = delta.get("type").and_then(Value::as_str);
        let fragment = match kind {
            Some("text_delta") => text("text"),
            Some("thinking_delta") => text("thinking"),
            Some("input_json_delta") => text("partial_json"),
            Some("signature_delta") => text("signature"),
            _ => "",
        };
        self.apply_delta(count(event.get("index")), kind, fragment, out);
    }

    /// A `content_block_delta` of block `wire_index`: `kind` is the delta's `type`, `fragment`
    /// its text field for that type (`""` when absent).
    fn apply_delta(
        &mut self,
        wire_index: Option<f64>,
        kind: Option<&str>,
        fragment: &str,
        out: &mut Vec<Ev>,
    ) {
        let Some(slot) = self.find_open(wire_index) else {
            return;
        };
        let content_index = self.open[slot].content_index;
        let partial = self.partial.clone();
        match kind {
            Some("text_delta") => {
                let applied = self
                    .partial
                    .update(|m| match m.content.get_mut(content_index) {
                        Some(AssistantContent::Text(t)) => {
                            t.text.push_str(fragment);
                            true
                        }
                        _ => false,
                    });
                if applied {
                    out.push(Ev::TextDelta {
                        content_index,
                        delta: fragment.to_owned(),
                        partial,
                    });
                }
            }
            Some("thinking_delta") => {
                let applied = self
                    .partial
                    .update(|m| match m.content.get_mut(content_index) {
                        Some(AssistantContent::Thinking(t)) => {
                            t.thinking.push_str(fragment);
                            true
                        }
                        _ => false,
                    });
                if applied {
                    out.push(Ev::ThinkingDelta {
                        content_index,
                        delta: fragment.to_owned(),
                        partial,
                    });
                }
            }
            Some("input_json_delta") => {
                let Some(buffer) = self.open[slot].args.as_mut() else {
                    return;
                };
                self.partial
                    .update(|m| match m.content.get_mut(content_index) {
                        Some(AssistantContent::ToolCall(tc)) => {
                            buffer.push(fragment, &mut tc.arguments)
                        }
                        _ => buffer.push(fragment, &mut Map::new()),
                    });
                out.push(Ev::ToolcallDelta {
                    content_index,
                    delta: fragment.to_owned(),
                    partial,
                });
            }
            Some("signature_delta") => {
                self.partial.update(|m| {
                    if let Some(AssistantContent::Thinking(t)) = m.content.get_mut(content_index) {
                        t.thinking_signature
                            .get_or_insert_with(String::new)
                            .push_str(fragment);
                    }
                });
            }
            _ => {}
        }
    }

    fn block_stop(&mut self, event: &Value, out: &mut Vec<Ev>) {
        let Some(slot) = self.find_open(count(event.get("index"))) else {
            return;
        };
        self.close_block(slot, out);
    }

    /// Ends the open block at `slot` (its `*_end` event; a tool call gets its final parse).
    fn close_block(&mut self, slot: usize, out: &mut Vec<Ev>) {
        let block = self.open.remove(slot);
        let content_index = block.content_index;
        let mut args = block.args;
        let partial = self.partial.clone();
        let event = self
            .partial
            .update(|m| match m.content.get_mut(content_index) {
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
                Some(AssistantContent::ToolCall(tc)) => {
                    if let Some(buffer) = args.as_mut() {
                        let (arguments, error) = buffer.finish(std::mem::take(&mut tc.arguments));
                        tc.arguments = arguments;
                        tc.arguments_error = error;
                    }
                    Some(Ev::ToolcallEnd {
                        content_index,
                        tool_call: Box::new(tc.clone()),
                        partial,
                    })
                }
                None => None,
            });
        out.extend(event);
    }

    fn message_delta(&mut self, event: &Value) -> Result<(), StreamError> {
        if let Some(Value::Array(t)) = event.get("input_transformations") {
            self.input_transformations = Some(t.clone());
        }
        let delta = event.get("delta").unwrap_or(&Value::Null);
        let mapped = match delta.get("stop_reason").and_then(Value::as_str) {
            Some(raw) if !raw.is_empty() => {
                Some((raw, map_stop_reason(raw, delta.get("stop_details"))?))
            }
            _ => None,
        };
        let usage = event.get("usage").filter(|u| u.is_object());
        let cost_model = self.cost_model().clone();
        self.partial.update(|m| {
            if let Some((raw, (reason, error))) = mapped {
                m.raw_stop_reason = Some(raw.to_owned());
                m.stop_reason = reason;
                if let Some(error) = error {
                    m.error_message = Some(error);
                }
            }
            if let Some(u) = usage {
                let set = |target: &mut f64, key: &str| {
                    if let Some(v) = count(u.get(key)) {
                        *target = v;
                    }
                };
                set(&mut m.usage.input, "input_tokens");
                set(&mut m.usage.output, "output_tokens");
                set(&mut m.usage.cache_read, "cache_read_input_tokens");
                set(&mut m.usage.cache_write, "cache_creation_input_tokens");
                let thinking = u
                    .get("output_tokens_details")
                    .and_then(|d| count(d.get("thinking_tokens")));
                if let Some(t) = thinking {
                    m.usage.reasoning = Some(t);
                }
            }
            finish_usage(&cost_model, &mut m.usage);
        });
        Ok(())
    }
}

/// The data of a `content_block_delta` event, borrowed from the SSE text where it can be.
/// Unknown fields are ignored, as the general path ignores them.
#[derive(serde::Deserialize)]
struct WireBlockDelta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    index: Option<f64>,
    #[serde(borrow)]
    delta: Option<WireDeltaBody<'a>>,
}

/// The `delta` object of a `content_block_delta`.
#[derive(serde::Deserialize, Default)]
struct WireDeltaBody<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow)]
    signature: Option<Cow<'a, str>>,
}

/// `totalTokens` = component sum (Anthropic sends none), then the cost.
fn finish_usage(model: &Model, usage: &mut Usage) {
    usage.total_tokens = usage.component_sum();
    calculate_cost(model, usage);
}

/// A non-negative token count from a JSON number, as a JavaScript number (`null`/absent →
/// `None`).
fn count(v: Option<&Value>) -> Option<f64> {
    v?.as_f64().filter(|f| f.is_finite() && *f >= 0.0)
}

/// `mapStopReason`: `(stopReason, errorMessage?)`; unknown reasons fail the stream.
fn map_stop_reason(
    reason: &str,
    details: Option<&Value>,
) -> Result<(StopReason, Option<String>), StreamError> {
    Ok(match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => (StopReason::Stop, None),
        "max_tokens" => (StopReason::Length, None),
        "tool_use" => (StopReason::ToolUse, None),
        "refusal" => {
            let explanation = details
                .and_then(|d| d.get("explanation"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .unwrap_or("The model refused to complete the request");
            (StopReason::Error, Some(explanation.to_owned()))
        }
        "sensitive" => (
            StopReason::Error,
            Some("Provider stopped with: sensitive".to_owned()),
        ),
        other => return Err(StreamError::UnhandledStopReason(other.to_owned())),
    })
}

/// The SSE lines of `event` as pi's error text quotes them (joined by a literal `\n`).
fn raw_lines(event: &SseEvent) -> String {
    let mut lines = Vec::new();
    if let Some(name) = &event.event {
        lines.push(format!("event: {name}"));
    }
    for line in event.data.split('\n') {
        lines.push(format!("data: {line}"));
    }
    lines.join("\\n")
}

impl StreamMapper for AnthropicMapper {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        let name = event.event.as_deref().unwrap_or("");
        if name == "error" {
            return Err(StreamError::Provider(event.data.clone()));
        }
        if !MESSAGE_EVENTS.contains(&name) {
            return Ok(());
        }
        if name == "content_block_delta"
            && let Ok(delta) = serde_json::from_str::<WireBlockDelta<'_>>(&event.data)
            && delta.kind.as_deref() == Some("content_block_delta")
        {
            // The common event, read without building a `Value`: a text fragment without
            // escapes stays borrowed from the SSE data. Anything this typed shape rejects
            // (another type of a field, a duplicate key, text that needs repair) takes the
            // general path below, so the outcome is the same either way.
            let body = delta.delta.unwrap_or_default();
            let kind = body.kind.as_deref();
            let fragment = match kind {
                Some("text_delta") => body.text.as_deref(),
                Some("thinking_delta") => body.thinking.as_deref(),
                Some("input_json_delta") => body.partial_json.as_deref(),
                Some("signature_delta") => body.signature.as_deref(),
                _ => None,
            };
            let wire_index = delta.index.filter(|f| f.is_finite() && *f >= 0.0);
            self.apply_delta(wire_index, kind, fragment.unwrap_or(""), out);
            return Ok(());
        }
        let parsed = parse_json_with_repair(&event.data).map_err(|err| {
            StreamError::Json(format!(
                "Could not parse Anthropic SSE event {name}: {err}; data={}; raw={}",
                event.data,
                raw_lines(event)
            ))
        })?;
        match parsed.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                self.saw_message_start = true;
                self.message_start(&parsed);
            }
            Some("message_stop") => self.saw_message_stop = true,
            Some("content_block_start") => self.block_start(&parsed, out)?,
            Some("content_block_delta") => self.block_delta(&parsed, out),
            Some("content_block_stop") => self.block_stop(&parsed, out),
            Some("message_delta") => self.message_delta(&parsed)?,
            _ => {}
        }
        Ok(())
    }

    fn on_end(&mut self, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        // A block still open means the stream was cut inside the message even when no
        // `message_start` was recognized (pi would end "successfully" with an unclosed block).
        if (self.saw_message_start || !self.open.is_empty()) && !self.saw_message_stop {
            return Err(StreamError::Incomplete(
                "Anthropic stream ended before message_stop",
            ));
        }
        let (reason, error) = {
            let m = self.partial.read();
            (m.stop_reason, m.error_message.clone())
        };
        match reason {
            StopReason::Pending => {
                return Err(StreamError::Incomplete(
                    "Anthropic stream ended without a stop reason",
                ));
            }
            StopReason::Error | StopReason::Aborted => {
                return Err(error.map_or(StreamError::Unknown, StreamError::Provider));
            }
            _ => {}
        }
        // A block whose `content_block_stop` never came (a malformed stream; the API always
        // sends it) is closed here, as the `StreamMapper` contract requires on success: pi
        // 0.85.1 would finish without its `*_end` (and without a final argument parse).
        while !self.open.is_empty() {
            self.close_block(0, out);
        }
        if let Some(transformations) = self.input_transformations.take().filter(|t| !t.is_empty()) {
            let details = transformations
                .iter()
                .map(|t| {
                    let mut d = Map::new();
                    for key in ["type", "path", "reason"] {
                        if let Some(v) = t.get(key).filter(|v| !v.is_null()) {
                            d.insert(key.into(), v.clone());
                        }
                    }
                    Value::Object(d)
                })
                .collect();
            let diagnostic = Diagnostic {
                kind: "anthropic_input_transformations".into(),
                timestamp: now_ms(),
                error: None,
                details: Some(serde_json::json!({ "transformations": Value::Array(details) })),
            };
            self.partial
                .update(|m| m.diagnostics.get_or_insert_with(Vec::new).push(diagnostic));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
