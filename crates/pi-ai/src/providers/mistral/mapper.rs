//! Mistral stream mapper: chat-completion chunks → `AssistantMessageEvent`s.
//!
//! Mirrors pi-ai 0.85.1 `api/mistral-conversations.js` `readMistralEvents` and
//! `consumeChatStream`:
//! - only `data:` lines count; `[DONE]` ends the stream (anything after it is not read); a
//!   payload that is not JSON fails with `JSON.parse`'s text, one that is not an object with a
//!   `choices` array with `Invalid Mistral streaming event`;
//! - `delta.content` is a string or a list of chunks: strings and `{type: "text"}` chunks are
//!   text, `{type: "thinking", thinking: [{text}]}` is thinking; consecutive deltas of one
//!   kind extend one block, a change of kind closes it and opens the next;
//! - tool calls are keyed by `index` (else id); an id that is missing or the string `"null"`
//!   is derived from the index; object-valued `arguments` are serialized; every call closes
//!   at the end of the stream, after the open text or thinking block;
//! - usage: `prompt_tokens` minus the cached tokens (`prompt_tokens_details.cached_tokens` or
//!   one of Mistral's other spellings) is `input`, the cached part `cacheRead`.

use serde_json::Value;

use super::request::derive_tool_call_id;
use crate::event::{AssistantMessageEvent as Ev, PartialMessage};
use crate::js_json_error::json_parse_message;
use crate::providers::block_events::{
    append_text, append_thinking, end_event, start_block, tool_call_delta,
};
use crate::providers::json_args::ArgumentBuffer;
use crate::providers::openai_completions::sdk::{js_json, js_string, tokens, truthy};
use crate::providers::{StreamError, StreamMapper};
use crate::sse::SseEvent;
use crate::types::{
    AssistantContent, Model, StopReason, TextContent, ThinkingContent, ToolCall, Usage,
    calculate_cost,
};

/// The open text or thinking block.
#[derive(Clone, Copy, PartialEq)]
enum Open {
    Text(usize),
    Thinking(usize),
}

/// How a tool call is recognised across chunks (pi's `index ?? id` as a `Map` key: a number
/// and a string never match).
#[derive(Clone, PartialEq)]
enum Key {
    Index(String),
    Id(String),
}

struct ToolSlot {
    key: Key,
    content_index: usize,
    args: ArgumentBuffer,
}

/// Mapper state for one Mistral response.
pub struct MistralMapper {
    partial: PartialMessage,
    model: Model,
    open: Option<Open>,
    tools: Vec<ToolSlot>,
    /// `[DONE]` seen: the rest of the body is not read.
    done: bool,
}

impl MistralMapper {
    /// A mapper writing into `partial`.
    pub fn new(model: &Model, partial: PartialMessage) -> Self {
        MistralMapper {
            partial,
            model: model.clone(),
            open: None,
            tools: Vec::new(),
            done: false,
        }
    }

    fn close_open(&mut self, out: &mut Vec<Ev>) {
        let index = match self.open.take() {
            Some(Open::Text(i) | Open::Thinking(i)) => i,
            None => return,
        };
        out.extend(end_event(&self.partial, index));
    }

    fn text(&mut self, text: &str, out: &mut Vec<Ev>) {
        let index = match self.open {
            Some(Open::Text(i)) => i,
            _ => {
                self.close_open(out);
                let block = AssistantContent::Text(TextContent::default());
                let i = start_block(&self.partial, block, out);
                self.open = Some(Open::Text(i));
                i
            }
        };
        append_text(&self.partial, index, text, out);
    }

    fn thinking(&mut self, text: &str, out: &mut Vec<Ev>) {
        let index = match self.open {
            Some(Open::Thinking(i)) => i,
            _ => {
                self.close_open(out);
                let block = AssistantContent::Thinking(ThinkingContent::default());
                let i = start_block(&self.partial, block, out);
                self.open = Some(Open::Thinking(i));
                i
            }
        };
        append_thinking(&self.partial, index, text, out);
    }

    fn content_item(&mut self, item: &Value, out: &mut Vec<Ev>) {
        if let Value::String(s) = item {
            self.text(s, out);
            return;
        }
        match item.get("type").and_then(Value::as_str) {
            Some("thinking") => {
                let text: String = item
                    .get("thinking")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect();
                if !text.is_empty() {
                    self.thinking(&text, out);
                }
            }
            Some("text") => {
                let text = item.get("text").and_then(Value::as_str).unwrap_or("");
                self.text(text, out);
            }
            // Image, reference and other chunk kinds carry nothing pi keeps.
            _ => {}
        }
    }

    fn tool_call(&mut self, call: &Value, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        self.close_open(out);
        let index = call.get("index").filter(|v| !v.is_null());
        let id = call
            .get("id")
            .filter(|v| truthy(v))
            .map(|v| js_string(Some(v)))
            .filter(|id| id != "null")
            .unwrap_or_else(|| {
                let i = index.map_or_else(|| "0".to_owned(), |v| js_string(Some(v)));
                derive_tool_call_id(&format!("toolcall:{i}"), 0)
            });
        let key = match index {
            Some(Value::String(s)) => Key::Id(s.clone()),
            Some(v) => Key::Index(js_json(v)),
            None => Key::Id(id.clone()),
        };
        let function = match call.get("function") {
            Some(f) if !f.is_null() => f,
            Some(_) => {
                return Err(StreamError::Protocol(
                    "Cannot read properties of null (reading 'name')".into(),
                ));
            }
            None => {
                return Err(StreamError::Protocol(
                    "Cannot read properties of undefined (reading 'name')".into(),
                ));
            }
        };
        let slot = match self.tools.iter().position(|t| t.key == key) {
            Some(s) => s,
            None => {
                let name = function
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let call = AssistantContent::ToolCall(ToolCall {
                    id,
                    name,
                    ..Default::default()
                });
                let content_index = start_block(&self.partial, call, out);
                self.tools.push(ToolSlot {
                    key,
                    content_index,
                    args: ArgumentBuffer::default(),
                });
                self.tools.len() - 1
            }
        };
        let delta = match function.get("arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(v) if truthy(v) => js_json(v),
            _ => "{}".to_owned(),
        };
        let tool = &mut self.tools[slot];
        tool_call_delta(&self.partial, tool.content_index, delta, out, |d, a| {
            tool.args.push(d, a)
        });
        Ok(())
    }

    fn usage(&self, usage: &Value) -> Usage {
        let prompt = tokens(usage.get("prompt_tokens"));
        let cached_paths: [(&str, &str); 4] = [
            ("promptTokensDetails", "cachedTokens"),
            ("prompt_tokens_details", "cached_tokens"),
            ("promptTokenDetails", "cachedTokens"),
            ("prompt_token_details", "cached_tokens"),
        ];
        let raw = cached_paths
            .iter()
            .map(|(outer, inner)| usage.get(*outer).and_then(|d| d.get(*inner)))
            .chain([usage.get("numCachedTokens"), usage.get("num_cached_tokens")])
            .flatten()
            .find(|v| !v.is_null());
        let cached = tokens(raw).min(prompt);
        // Doubles, as pi computes them: nothing wraps, `Math.max(0, prompt - cached)`.
        let mut u = Usage {
            input: (prompt - cached).max(0.0),
            output: tokens(usage.get("completion_tokens")),
            cache_read: cached,
            cache_write: 0.0,
            ..Default::default()
        };
        let total = tokens(usage.get("total_tokens"));
        u.total_tokens = if total > 0.0 {
            total
        } else {
            u.input + u.output + u.cache_read + u.cache_write
        };
        calculate_cost(&self.model, &mut u);
        u
    }

    fn on_chunk(&mut self, chunk: &Value, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        let usage = chunk
            .get("usage")
            .filter(|u| truthy(u))
            .map(|u| self.usage(u));
        self.partial.update(|m| {
            if m.response_id.as_deref().is_none_or(str::is_empty)
                && let Some(id) = chunk.get("id").filter(|v| truthy(v))
            {
                m.response_id = Some(js_string(Some(id)));
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
            return Ok(());
        };
        if let Some(reason) = choice.get("finish_reason").filter(|r| truthy(r)) {
            let reason = js_string(Some(reason));
            let (stop, error) = map_stop_reason(&reason);
            self.partial.update(|m| {
                m.raw_stop_reason = Some(reason);
                m.stop_reason = stop;
                if let Some(e) = error {
                    m.error_message = Some(e);
                }
            });
        }
        let delta = match choice.get("delta") {
            Some(d) if !d.is_null() => d,
            Some(_) => {
                return Err(StreamError::Protocol(
                    "Cannot read properties of null (reading 'content')".into(),
                ));
            }
            None => {
                return Err(StreamError::Protocol(
                    "Cannot read properties of undefined (reading 'content')".into(),
                ));
            }
        };
        match delta.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => self.text(s, out),
            Some(Value::Array(items)) => {
                for item in items {
                    self.content_item(item, out);
                }
            }
            Some(_) => {
                return Err(StreamError::Protocol(
                    "Invalid Mistral streaming event".into(),
                ));
            }
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                self.tool_call(call, out)?;
            }
        }
        Ok(())
    }
}

/// `mapChatStopReason`: stop reason and, for failures, `Provider stopped with: <reason>`.
fn map_stop_reason(reason: &str) -> (StopReason, Option<String>) {
    match reason {
        "stop" => (StopReason::Stop, None),
        "length" | "model_length" => (StopReason::Length, None),
        "tool_calls" => (StopReason::ToolUse, None),
        other => (
            StopReason::Error,
            Some(format!("Provider stopped with: {other}")),
        ),
    }
}

impl StreamMapper for MistralMapper {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        if self.done {
            return Ok(());
        }
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| StreamError::Json(json_parse_message(data, &e)))?;
        if !chunk.get("choices").is_some_and(Value::is_array) {
            return Err(StreamError::Protocol(
                "Invalid Mistral streaming event".into(),
            ));
        }
        self.on_chunk(&chunk, out)
    }

    /// Closes the open block, then every tool call (its final arguments, with the reason it
    /// must not run when they are not one JSON object); a stream without a finish reason
    /// fails with `Mistral stream ended without a finish reason`.
    fn on_end(&mut self, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        self.close_open(out);
        for mut tool in std::mem::take(&mut self.tools) {
            let index = tool.content_index;
            let call = self.partial.update(|m| match m.content.get_mut(index) {
                Some(AssistantContent::ToolCall(tc)) => {
                    // pi's lenient value stays in the message; text that is not exactly one
                    // JSON object (or nests too deep) is refused, never run in another shape.
                    let (arguments, error) = tool.args.finish(std::mem::take(&mut tc.arguments));
                    tc.arguments = arguments;
                    tc.arguments_error = error;
                    Some(tc.clone())
                }
                _ => None,
            });
            if let Some(call) = call {
                out.push(Ev::ToolcallEnd {
                    content_index: index,
                    tool_call: Box::new(call),
                    partial: self.partial.clone(),
                });
            }
        }
        let (stop, error) = self
            .partial
            .update(|m| (m.stop_reason, m.error_message.clone()));
        match stop {
            StopReason::Pending => Err(StreamError::Incomplete(
                "Mistral stream ended without a finish reason",
            )),
            StopReason::Error | StopReason::Aborted => {
                Err(error.map_or(StreamError::Unknown, StreamError::Provider))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AssistantMessage, ModelCost};
    use serde_json::json;

    fn run(lines: &[&str]) -> (AssistantMessage, Vec<Ev>, Result<(), StreamError>) {
        let model = Model {
            id: "m".into(),
            provider: "mistral".into(),
            cost: ModelCost {
                input: 1.0,
                cache_read: 0.1,
                ..Default::default()
            },
            ..Default::default()
        };
        let partial = PartialMessage::new(AssistantMessage::empty(
            "mistral-conversations",
            "mistral",
            "m",
        ));
        let mut mapper = MistralMapper::new(&model, partial.clone());
        let mut out = Vec::new();
        let mut result = Ok(());
        for line in lines {
            let event = SseEvent {
                event: None,
                data: (*line).to_owned(),
                id: None,
                retry: None,
            };
            result = mapper.on_event(&event, &mut out);
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            result = mapper.on_end(&mut out);
        }
        (partial.snapshot(), out, result)
    }

    #[test]
    fn bad_payloads_fail_with_pi_texts() {
        assert_eq!(
            run(&["{nope"]).2.unwrap_err().to_string(),
            "Expected property name or '}' in JSON at position 1 (line 1 column 2)"
        );
        assert_eq!(
            run(&["{\"id\":\"x\"}"]).2.unwrap_err().to_string(),
            "Invalid Mistral streaming event"
        );
        assert_eq!(
            run(&["[1]"]).2.unwrap_err().to_string(),
            "Invalid Mistral streaming event"
        );
        assert_eq!(
            run(&[r#"{"choices":[{"index":0}]}"#])
                .2
                .unwrap_err()
                .to_string(),
            "Cannot read properties of undefined (reading 'content')"
        );
        assert_eq!(
            run(&[r#"{"choices":[{"delta":{"content":""}}]}"#])
                .2
                .unwrap_err()
                .to_string(),
            "Mistral stream ended without a finish reason"
        );
        assert_eq!(
            run(&[r#"{"choices":[{"delta":{},"finish_reason":"error"}]}"#])
                .2
                .unwrap_err()
                .to_string(),
            "Provider stopped with: error"
        );
    }

    #[test]
    fn done_ends_the_stream_and_later_bytes_are_not_read() {
        let (m, _, r) = run(&[
            r#"{"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}"#,
            " [DONE] ",
            "garbage",
        ]);
        r.unwrap();
        assert_eq!(m.content.len(), 1);
        assert_eq!(m.stop_reason, StopReason::Stop);
    }

    #[test]
    fn typed_chunks_switch_blocks_in_order() {
        let (m, out, r) = run(&[
            r#"{"choices":[{"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"a"},{"text":"b"}]}]}}]}"#,
            r#"{"choices":[{"delta":{"content":[{"type":"thinking","thinking":[]},"x",{"type":"text","text":"y"},{"type":"image_url","image_url":"u"}]}}]}"#,
            r#"{"choices":[{"delta":{"content":[{"type":"thinking","thinking":[{"text":"c"}]}]},"finish_reason":"length"}]}"#,
        ]);
        r.unwrap();
        let kinds: Vec<&str> = out.iter().map(Ev::kind).collect();
        assert_eq!(
            kinds,
            [
                "thinking_start",
                "thinking_delta",
                "thinking_end",
                "text_start",
                "text_delta",
                "text_delta",
                "text_end",
                "thinking_start",
                "thinking_delta",
                "thinking_end"
            ]
        );
        assert_eq!(m.content.len(), 3);
        assert_eq!(m.stop_reason, StopReason::Length);
    }

    #[test]
    fn tool_calls_null_ids_object_arguments_and_cached_usage() {
        let (m, out, r) = run(&[
            r#"{"id":"r1","choices":[{"delta":{"tool_calls":[{"id":"null","index":0,"function":{"name":"read","arguments":{"path":"a"}}}]}}]}"#,
            r#"{"id":"r2","choices":[{"delta":{"tool_calls":[{"id":"abcdefghi","function":{"name":"ls","arguments":""}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":140}}}"#,
        ]);
        r.unwrap();
        let calls: Vec<&ToolCall> = m.tool_calls().collect();
        assert_eq!(calls[0].id, derive_tool_call_id("toolcall:0", 0));
        assert_eq!(
            Value::Object(calls[0].arguments.clone()),
            json!({"path": "a"})
        );
        assert_eq!(calls[1].id, "abcdefghi");
        assert!(calls[1].arguments.is_empty());
        assert_eq!(m.response_id.as_deref(), Some("r1"));
        // Cached tokens are capped at the prompt.
        assert_eq!(
            (m.usage.input, m.usage.cache_read, m.usage.total_tokens),
            (0.0, 100.0, 105.0)
        );
        assert_eq!(out.iter().filter(|e| e.kind() == "toolcall_end").count(), 2);
        assert_eq!(
            run(&[r#"{"choices":[{"delta":{"tool_calls":[{"id":"x"}]}}]}"#])
                .2
                .unwrap_err()
                .to_string(),
            "Cannot read properties of undefined (reading 'name')"
        );
    }
}
