//! Chat Completions stream mapper: SDK chunks → `AssistantMessageEvent`s.
//!
//! Mirrors pi 0.85.1 `api/openai-completions.ts` `stream()`: one text and one thinking block
//! per message, tool calls keyed by stream `index` and `id`, all blocks closed together at the
//! end, then the post-checks. Deliberate differences from pi: a new non-empty `id` at an index
//! whose call already has a different id starts a new call instead of being appended to the old
//! one (ollama/ollama#15457: Ollama sends every parallel call at `index: 0`), and a new index
//! starts a new call even when it repeats an earlier call's id, which then gets a synthesized
//! distinct id (`ToolCallIds`); pi merges such calls and loses one.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::details::ReasoningDetails;
use super::sdk::{self, SseData, nullish, str_field, tokens, truthy};
use crate::event::{AssistantMessageEvent as Ev, PartialMessage};
use crate::providers::json_args::ArgumentBuffer;
use crate::providers::tool_ids::ToolCallIds;
use crate::providers::{StreamError, StreamMapper};
use crate::sse::SseEvent;
use crate::types::{
    AssistantContent, Model, StopReason, TextContent, ThinkingContent, ToolCall, Usage,
    calculate_cost,
};

/// Mapper state for one Chat Completions response.
pub struct CompletionsMapper {
    partial: PartialMessage,
    model: Model,
    supports_finish_reason: bool,
    text: Option<usize>,
    thinking: Option<usize>,
    tools: Vec<ToolSlot>,
    by_index: HashMap<i64, usize>,
    by_id: HashMap<String, usize>,
    ids: ToolCallIds,
    has_finish_reason: bool,
    done: bool,
    details: Option<ReasoningDetails>,
}

/// Scratch of one streamed tool call (never stored in the message).
struct ToolSlot {
    content_index: usize,
    id: String,
    /// The raw argument fragments, parsed incrementally.
    args: ArgumentBuffer,
    stream_index: Option<i64>,
}

impl CompletionsMapper {
    /// A mapper writing into `partial` (which the driver created for `model`).
    pub fn new(model: &Model, partial: PartialMessage, supports_finish_reason: bool) -> Self {
        CompletionsMapper {
            partial,
            model: model.clone(),
            supports_finish_reason,
            text: None,
            thinking: None,
            tools: Vec::new(),
            by_index: HashMap::new(),
            by_id: HashMap::new(),
            ids: ToolCallIds::default(),
            has_finish_reason: false,
            done: false,
            details: None,
        }
    }

    /// The adapter throws: thinking blocks get their `reasoning_details` signature (as pi's
    /// catch block does), then `error` is the failure.
    fn fail(&mut self, error: StreamError) -> Result<(), StreamError> {
        self.apply_details();
        Err(error)
    }

    fn apply_details(&mut self) {
        if let (Some(details), Some(i)) = (&self.details, self.thinking) {
            let sig = details.to_json();
            self.partial.update(|m| {
                if let Some(AssistantContent::Thinking(t)) = m.content.get_mut(i) {
                    t.thinking_signature = Some(sig);
                }
            });
        }
    }

    fn on_chunk(&mut self, chunk: &Value, out: &mut Vec<Ev>) {
        let model_id = &self.model.id;
        let chunk_usage = chunk.get("usage").filter(|u| truthy(u));
        let usage = chunk_usage.map(|u| parse_usage(u, &self.model));
        self.partial.update(|m| {
            if m.response_id.as_deref().is_none_or(str::is_empty)
                && let Some(id) = chunk.get("id").filter(|v| truthy(v))
            {
                m.response_id = Some(sdk::js_string(Some(id)));
            }
            if let Some(cm) = str_field(chunk, "model").filter(|s| !s.is_empty() && s != model_id)
                && m.response_model.as_deref().is_none_or(str::is_empty)
            {
                m.response_model = Some(cm.to_owned());
            }
            if let Some(u) = usage {
                m.usage = u;
            }
        });
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
            .filter(|c| truthy(c))
        else {
            return;
        };
        if chunk_usage.is_none()
            && let Some(u) = choice.get("usage").filter(|u| truthy(u))
        {
            let u = parse_usage(u, &self.model);
            self.partial.update(|m| m.usage = u);
        }
        if let Some(reason) = choice.get("finish_reason").filter(|r| truthy(r)) {
            let reason = sdk::js_string(Some(reason));
            let (stop, error) = map_stop_reason(&reason);
            self.partial.update(|m| {
                m.raw_stop_reason = Some(reason);
                m.stop_reason = stop;
                if let Some(e) = error {
                    m.error_message = Some(e);
                }
            });
            self.has_finish_reason = true;
        }
        let Some(delta) = choice.get("delta").filter(|d| truthy(d)) else {
            return;
        };
        match delta.get("content") {
            Some(Value::String(text)) if !text.is_empty() => self.text_delta(text, out),
            // Some compatible servers (Mistral's, for one) send typed chunks instead of a
            // string; pi appends the array itself to the text (`[object Object]`).
            Some(Value::Array(items)) => self.content_chunks(items, out),
            _ => {}
        }
        if let Some((field, text)) = ["reasoning_content", "reasoning", "reasoning_text"]
            .iter()
            .find_map(|f| {
                str_field(delta, f)
                    .filter(|s| !s.is_empty())
                    .map(|s| (*f, s))
            })
        {
            let signature = if self.model.provider == "opencode-go" && field == "reasoning" {
                "reasoning_content"
            } else {
                field
            };
            self.thinking_delta(signature, text, out);
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                self.tool_call_delta(call, out);
            }
        }
        if let Some(details) = delta.get("reasoning_details").and_then(Value::as_array) {
            for d in details {
                let Some(obj) = d.as_object().filter(|o| ReasoningDetails::is_valid(o)) else {
                    continue;
                };
                self.ensure_thinking("", out);
                self.details
                    .get_or_insert_with(ReasoningDetails::default)
                    .append(obj);
            }
        }
    }

    /// `delta.content` as typed chunks: strings and `{type: "text", text}` are text,
    /// `{type: "thinking", thinking}` (a string, or parts with `text`) is thinking; other
    /// kinds (images, references) carry nothing a message keeps.
    fn content_chunks(&mut self, items: &[Value], out: &mut Vec<Ev>) {
        for item in items {
            match item {
                Value::String(text) if !text.is_empty() => self.text_delta(text, out),
                Value::Object(chunk) => match chunk.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(text) = chunk.get("text").and_then(Value::as_str)
                            && !text.is_empty()
                        {
                            self.text_delta(text, out);
                        }
                    }
                    Some("thinking") => {
                        let text: String = match chunk.get("thinking") {
                            Some(Value::String(s)) => s.clone(),
                            Some(Value::Array(parts)) => parts
                                .iter()
                                .filter_map(|p| p.get("text").and_then(Value::as_str))
                                .collect(),
                            _ => String::new(),
                        };
                        if !text.is_empty() {
                            // No reasoning field to replay it under: the signature stays empty.
                            self.thinking_delta("", &text, out);
                        }
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }

    fn text_delta(&mut self, text: &str, out: &mut Vec<Ev>) {
        let idx = match self.text {
            Some(i) => i,
            None => {
                let i = self.push_block(AssistantContent::Text(TextContent::default()));
                self.text = Some(i);
                out.push(Ev::TextStart {
                    content_index: i,
                    partial: self.partial.clone(),
                });
                i
            }
        };
        self.partial.update(|m| {
            if let Some(AssistantContent::Text(t)) = m.content.get_mut(idx) {
                t.text.push_str(text);
            }
        });
        out.push(Ev::TextDelta {
            content_index: idx,
            delta: text.to_owned(),
            partial: self.partial.clone(),
        });
    }

    fn ensure_thinking(&mut self, signature: &str, out: &mut Vec<Ev>) -> usize {
        if let Some(i) = self.thinking {
            return i;
        }
        let i = self.push_block(AssistantContent::Thinking(ThinkingContent {
            thinking: String::new(),
            thinking_signature: Some(signature.to_owned()),
            redacted: None,
        }));
        self.thinking = Some(i);
        out.push(Ev::ThinkingStart {
            content_index: i,
            partial: self.partial.clone(),
        });
        i
    }

    fn thinking_delta(&mut self, signature: &str, text: &str, out: &mut Vec<Ev>) {
        let idx = self.ensure_thinking(signature, out);
        self.partial.update(|m| {
            if let Some(AssistantContent::Thinking(t)) = m.content.get_mut(idx) {
                t.thinking.push_str(text);
            }
        });
        out.push(Ev::ThinkingDelta {
            content_index: idx,
            delta: text.to_owned(),
            partial: self.partial.clone(),
        });
    }

    fn push_block(&mut self, block: AssistantContent) -> usize {
        self.partial.update(|m| {
            m.content.push(block);
            m.content.len() - 1
        })
    }

    /// Finds the call a `tool_calls[]` entry continues, or starts a new one.
    ///
    /// A call is keyed by (stream `index`, `id`): an entry continues the call at its index
    /// unless it names a different non-empty id (Ollama sends every parallel call at
    /// `index: 0`), and a new index always starts a new call, even when its id was already
    /// used (some OpenAI-compatible servers repeat one id at several indexes). Only an entry
    /// without an index is matched by id alone. See `ToolCallIds` for the id a
    /// repeated one gets in the message.
    fn tool_slot(
        &mut self,
        stream_index: Option<i64>,
        id: Option<&str>,
        name: &str,
        out: &mut Vec<Ev>,
    ) -> usize {
        let by_id = id.and_then(|id| self.by_id.get(id).copied());
        let slot = match stream_index {
            Some(i) => match self.by_index.get(&i).copied() {
                Some(s) => Some(s).filter(|&s| {
                    let known = &self.tools[s].id;
                    id.is_none_or(|id| known.is_empty() || known == id)
                }),
                // A call that started without an index takes the first one it is sent with.
                None => by_id.filter(|&s| self.tools[s].stream_index.is_none()),
            },
            None => by_id,
        };
        let s = match slot {
            Some(s) => s,
            None => {
                let message_id = id.map_or_else(String::new, |id| self.message_id_for(id));
                let content_index = self.push_block(AssistantContent::ToolCall(ToolCall {
                    id: message_id,
                    name: name.to_owned(),
                    ..Default::default()
                }));
                let s = self.tools.len();
                self.tools.push(ToolSlot {
                    content_index,
                    id: id.unwrap_or_default().to_owned(),
                    args: ArgumentBuffer::default(),
                    stream_index,
                });
                if let Some(i) = stream_index {
                    self.by_index.insert(i, s);
                }
                out.push(Ev::ToolcallStart {
                    content_index,
                    partial: self.partial.clone(),
                });
                s
            }
        };
        if let (Some(i), None) = (stream_index, self.tools[s].stream_index) {
            self.tools[s].stream_index = Some(i);
            self.by_index.insert(i, s);
        }
        if let Some(id) = id {
            self.by_id.insert(id.to_owned(), s);
        }
        s
    }

    /// The id a call with wire id `id` gets in the message (`ToolCallIds::claim`).
    fn message_id_for(&mut self, id: &str) -> String {
        self.ids.claim(id)
    }

    fn tool_call_delta(&mut self, call: &Value, out: &mut Vec<Ev>) {
        let stream_index = call
            .get("index")
            .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)));
        let id = str_field(call, "id").filter(|s| !s.is_empty());
        let function = call.get("function");
        let name = nullish(&[
            function.and_then(|f| f.get("name")),
            call.get("custom").and_then(|c| c.get("name")),
        ])
        .and_then(Value::as_str)
        .unwrap_or("");
        let s = self.tool_slot(stream_index, id, name, out);
        let mut late_id = None;
        if let Some(id) = id.filter(|_| self.tools[s].id.is_empty()) {
            self.tools[s].id = id.to_owned();
            late_id = Some(self.message_id_for(id));
        }
        let args = function
            .and_then(|f| f.get("arguments"))
            .and_then(Value::as_str)
            .filter(|a| !a.is_empty());
        let slot = &mut self.tools[s];
        let content_index = slot.content_index;
        self.partial
            .update(|m| match m.content.get_mut(content_index) {
                Some(AssistantContent::ToolCall(tc)) => {
                    if let Some(id) = late_id.filter(|_| tc.id.is_empty()) {
                        tc.id = id;
                    }
                    if tc.name.is_empty() && !name.is_empty() {
                        tc.name = name.to_owned();
                    }
                    if let Some(a) = args {
                        slot.args.push(a, &mut tc.arguments);
                    }
                }
                _ => {
                    if let Some(a) = args {
                        slot.args.push(a, &mut Map::new());
                    }
                }
            });
        out.push(Ev::ToolcallDelta {
            content_index,
            delta: args.unwrap_or("").to_owned(),
            partial: self.partial.clone(),
        });
    }

    /// Closes every block in content order (`text_end`, `thinking_end`, `toolcall_end` with the
    /// final argument parse).
    fn finish_blocks(&mut self, out: &mut Vec<Ev>) {
        self.apply_details();
        let mut buffers: HashMap<usize, &mut ArgumentBuffer> = self
            .tools
            .iter_mut()
            .map(|t| (t.content_index, &mut t.args))
            .collect();
        let content = self.partial.update(|m| {
            for (i, block) in m.content.iter_mut().enumerate() {
                if let (AssistantContent::ToolCall(tc), Some(buffer)) = (block, buffers.remove(&i))
                {
                    let (args, error) = buffer.finish(std::mem::take(&mut tc.arguments));
                    tc.arguments = args;
                    tc.arguments_error = error;
                }
            }
            m.content.clone()
        });
        for (i, block) in content.into_iter().enumerate() {
            let partial = self.partial.clone();
            out.push(match block {
                AssistantContent::Text(t) => Ev::TextEnd {
                    content_index: i,
                    content: t.text,
                    partial,
                },
                AssistantContent::Thinking(t) => Ev::ThinkingEnd {
                    content_index: i,
                    content: t.thinking,
                    partial,
                },
                AssistantContent::ToolCall(tool_call) => Ev::ToolcallEnd {
                    content_index: i,
                    tool_call: Box::new(tool_call),
                    partial,
                },
            });
        }
    }
}

impl StreamMapper for CompletionsMapper {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        if self.done {
            return Ok(());
        }
        match sdk::decode_data(&event.data) {
            Ok(SseData::Done) => self.done = true,
            Ok(SseData::Skip) => {}
            Ok(SseData::Json(chunk)) => {
                if chunk.is_object() {
                    self.on_chunk(&chunk, out);
                }
            }
            Err((mut text, error)) => {
                sdk::append_raw_metadata(&mut text, error.as_ref());
                return self.fail(match error {
                    Some(_) => StreamError::Provider(text),
                    None => StreamError::Json(text),
                });
            }
        }
        Ok(())
    }

    fn on_end(&mut self, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        self.finish_blocks(out);
        let has_tool_call = !self.tools.is_empty();
        let (stop, error) = self.partial.update(|m| {
            if !self.has_finish_reason && !self.supports_finish_reason {
                m.stop_reason = if has_tool_call {
                    StopReason::ToolUse
                } else {
                    StopReason::Stop
                };
            }
            (m.stop_reason, m.error_message.clone())
        });
        if stop == StopReason::Aborted {
            return Err(StreamError::Aborted("Request was aborted"));
        }
        if stop == StopReason::Error {
            return Err(StreamError::Provider(error.unwrap_or_else(|| {
                "Provider returned an error stop reason".to_owned()
            })));
        }
        if (self.supports_finish_reason && !self.has_finish_reason) || stop == StopReason::Pending {
            return Err(StreamError::Incomplete(
                "Stream ended without finish_reason",
            ));
        }
        Ok(())
    }
}

/// `parseChunkUsage`: the chunk's usage **replaces** the message's; cost recomputed.
pub(crate) fn parse_usage(u: &Value, model: &Model) -> Usage {
    let details = u.get("prompt_tokens_details");
    let prompt = tokens(u.get("prompt_tokens"));
    let cache_read = tokens(nullish(&[
        details.and_then(|d| d.get("cached_tokens")),
        u.get("prompt_cache_hit_tokens"),
        u.get("cached_tokens"),
    ]));
    let cache_write = tokens(details.and_then(|d| d.get("cache_write_tokens")));
    // `Math.max(0, prompt - cacheRead - cacheWrite)`, in doubles.
    let input = (prompt - cache_read - cache_write).max(0.0);
    let output = tokens(u.get("completion_tokens"));
    let mut usage = Usage {
        input,
        output,
        cache_read,
        cache_write,
        cache_write_1h: None,
        reasoning: Some(tokens(
            u.get("completion_tokens_details")
                .and_then(|d| d.get("reasoning_tokens")),
        )),
        total_tokens: input + output + cache_read + cache_write,
        // pi builds this usage whole, `reasoning` before `totalTokens`.
        optional_before_total: true,
        cost: Default::default(),
    };
    calculate_cost(model, &mut usage);
    usage
}

/// `finish_reason` → stop reason (and the error text of the error cases).
fn map_stop_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" | "end" => (StopReason::Stop, None),
        "length" => (StopReason::Length, None),
        "function_call" | "tool_calls" => (StopReason::ToolUse, None),
        other => (
            StopReason::Error,
            Some(format!("Provider finish_reason: {other}")),
        ),
    }
}

#[cfg(test)]
mod usage_order_tests {
    use super::*;

    /// Observed on pi 0.85.0 over an OpenAI-compatible server: the usage is built whole, with
    /// `reasoning` right after `cacheWrite`.
    #[test]
    fn reasoning_is_written_before_total_tokens() {
        let u = parse_usage(
            &serde_json::json!({"prompt_tokens": 10, "completion_tokens": 5}),
            &Model::default(),
        );
        assert_eq!(
            crate::json::to_string(&u).unwrap(),
            r#"{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"reasoning":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#
        );
    }
}
