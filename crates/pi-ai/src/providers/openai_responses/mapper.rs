//! OpenAI Responses stream mapper: typed events → `AssistantMessageEvent`s, one slot per
//! `output_index`.
//!
//! Mirrors pi 0.85.1 `api/openai-responses-shared.ts` `processResponsesStream` and the
//! post-checks of `api/openai-responses.ts`.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::event::{AssistantMessageEvent as Ev, PartialMessage};
use crate::partial_json::PartialJsonParser;
use crate::providers::json_args::ArgumentBuffer;
use crate::providers::openai_completions::sdk::{
    self, SseData, js_json, js_string, str_field, tokens, truthy,
};
use crate::providers::{StreamError, StreamMapper};
use crate::sse::SseEvent;
use crate::types::{
    AssistantContent, AssistantMessage, Model, StopReason, TextContent, ThinkingContent, ToolCall,
    Usage, calculate_cost,
};

/// What an `output_index` holds.
#[derive(Clone, Debug)]
enum Slot {
    Thinking(usize),
    Text(usize),
    /// A function call with its argument scratch (`partialJson`), parsed incrementally.
    Tool(usize, Box<ArgumentBuffer>),
}

/// Mapper state for one Responses stream.
pub struct ResponsesMapper {
    partial: PartialMessage,
    model: Model,
    slots: HashMap<i64, Slot>,
    reasoning_by_id: HashMap<String, usize>,
    saw_terminal: bool,
    done: bool,
    /// The `service_tier` the request asked for (used when the response names none).
    requested_tier: Option<String>,
    /// The failure text when the terminal event left no stop reason.
    pending_text: &'static str,
}

impl ResponsesMapper {
    /// A mapper writing into `partial`. `requested_tier` is the request's `service_tier`
    /// (pi's `options.serviceTier`), the pricing fallback when the response names no tier.
    pub fn new(model: &Model, partial: PartialMessage, requested_tier: Option<String>) -> Self {
        ResponsesMapper {
            partial,
            model: model.clone(),
            slots: HashMap::new(),
            reasoning_by_id: HashMap::new(),
            saw_terminal: false,
            done: false,
            requested_tier,
            pending_text: "OpenAI Responses stream ended without a stop reason",
        }
    }

    /// The same mapper failing with `text` when the terminal event leaves no stop reason
    /// (each adapter names itself there, e.g. `Azure OpenAI Responses stream ended without a
    /// stop reason`).
    pub fn with_pending_text(mut self, text: &'static str) -> Self {
        self.pending_text = text;
        self
    }

    fn push_block(&mut self, block: AssistantContent) -> usize {
        self.partial.update(|m| {
            m.content.push(block);
            m.content.len() - 1
        })
    }

    /// `createSlot`: appends the block for a new output item and announces it.
    fn create_slot(&mut self, oi: i64, item: &Value, out: &mut Vec<Ev>) -> Option<Slot> {
        let partial = self.partial.clone();
        let slot = match str_field(item, "type")? {
            "reasoning" => {
                let i = self.push_block(AssistantContent::Thinking(ThinkingContent::default()));
                out.push(Ev::ThinkingStart {
                    content_index: i,
                    partial,
                });
                Slot::Thinking(i)
            }
            "message" => {
                self.apply_phase(item);
                let i = self.push_block(AssistantContent::Text(TextContent::default()));
                out.push(Ev::TextStart {
                    content_index: i,
                    partial,
                });
                Slot::Text(i)
            }
            "function_call" => {
                let id = format!(
                    "{}|{}",
                    js_string(item.get("call_id")),
                    js_string(item.get("id"))
                );
                let i = self.push_block(AssistantContent::ToolCall(ToolCall {
                    id,
                    name: str_field(item, "name").unwrap_or_default().to_owned(),
                    arguments: Map::new(),
                    thought_signature: None,
                    namespace: str_field(item, "namespace").map(str::to_owned),
                    arguments_error: None,
                }));
                out.push(Ev::ToolcallStart {
                    content_index: i,
                    partial,
                });
                let scratch = item
                    .get("arguments")
                    .filter(|a| truthy(a))
                    .map(|a| js_string(Some(a)))
                    .unwrap_or_default();
                Slot::Tool(i, Box::new(ArgumentBuffer::holding(&scratch)))
            }
            _ => return None,
        };
        // A second item at the same output index replaces the first: end that one (pi 0.85.1
        // would leave it open).
        if let Some(replaced) = self.slots.insert(oi, slot.clone()) {
            self.close_slot(replaced, out);
        }
        Some(slot)
    }

    /// A `message` item in the `final_answer` phase sets the stop reason early.
    fn apply_phase(&mut self, item: &Value) {
        if str_field(item, "type") == Some("message")
            && str_field(item, "phase") == Some("final_answer")
        {
            self.partial.update(|m| m.stop_reason = StopReason::Stop);
        }
    }

    fn append_text(&mut self, oi: i64, thinking: bool, delta: &str, out: &mut Vec<Ev>) {
        let partial = self.partial.clone();
        match self.slots.get(&oi) {
            Some(Slot::Thinking(i)) if thinking => {
                let i = *i;
                self.partial.update(|m| {
                    if let Some(AssistantContent::Thinking(t)) = m.content.get_mut(i) {
                        t.thinking.push_str(delta);
                    }
                });
                out.push(Ev::ThinkingDelta {
                    content_index: i,
                    delta: delta.to_owned(),
                    partial,
                });
            }
            Some(Slot::Text(i)) if !thinking => {
                let i = *i;
                self.partial.update(|m| {
                    if let Some(AssistantContent::Text(t)) = m.content.get_mut(i) {
                        t.text.push_str(delta);
                    }
                });
                out.push(Ev::TextDelta {
                    content_index: i,
                    delta: delta.to_owned(),
                    partial,
                });
            }
            _ => {}
        }
    }

    fn args_delta(&mut self, oi: i64, delta: &str, out: &mut Vec<Ev>) {
        let Some(Slot::Tool(i, scratch)) = self.slots.get_mut(&oi) else {
            return;
        };
        let i = *i;
        self.partial.update(|m| match m.content.get_mut(i) {
            Some(AssistantContent::ToolCall(tc)) => scratch.push(delta, &mut tc.arguments),
            _ => scratch.push(delta, &mut Map::new()),
        });
        out.push(Ev::ToolcallDelta {
            content_index: i,
            delta: delta.to_owned(),
            partial: self.partial.clone(),
        });
    }

    /// `function_call_arguments.done`: the full text replaces the scratch; when it extends the
    /// old scratch, the missing suffix is emitted as one delta.
    fn args_done(&mut self, oi: i64, full: &str, out: &mut Vec<Ev>) {
        let Some(Slot::Tool(i, scratch)) = self.slots.get_mut(&oi) else {
            return;
        };
        let mut replacement = ArgumentBuffer::default();
        let i = *i;
        self.partial.update(|m| match m.content.get_mut(i) {
            Some(AssistantContent::ToolCall(tc)) => {
                tc.arguments = Map::new();
                replacement.push(full, &mut tc.arguments);
            }
            _ => replacement.push(full, &mut Map::new()),
        });
        let previous = std::mem::replace(scratch, Box::new(replacement));
        let previous = previous.buffer();
        if let Some(rest) = full.strip_prefix(previous).filter(|r| !r.is_empty()) {
            out.push(Ev::ToolcallDelta {
                content_index: i,
                delta: rest.to_owned(),
                partial: self.partial.clone(),
            });
        }
    }

    fn item_done(&mut self, oi: i64, item: &Value, out: &mut Vec<Ev>) {
        self.apply_phase(item);
        let slot = match self.slots.get(&oi) {
            Some(s) => Some(s.clone()),
            None => self.create_slot(oi, item, out),
        };
        let partial = self.partial.clone();
        match (str_field(item, "type"), slot) {
            (Some("reasoning"), Some(Slot::Thinking(i))) => {
                let join = |key: &str| -> String {
                    item.get(key)
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .map(|p| text_of(p.get("text")))
                                .collect::<Vec<_>>()
                                .join("\n\n")
                        })
                        .unwrap_or_default()
                };
                let (summary, content) = (join("summary"), join("content"));
                let signature = js_json(item);
                let text = self.partial.update(|m| match m.content.get_mut(i) {
                    Some(AssistantContent::Thinking(t)) => {
                        if !summary.is_empty() {
                            t.thinking = summary;
                        } else if !content.is_empty() {
                            t.thinking = content;
                        }
                        t.thinking_signature = Some(signature);
                        t.thinking.clone()
                    }
                    _ => String::new(),
                });
                if let Some(id) = item.get("id") {
                    self.reasoning_by_id.insert(js_string(Some(id)), i);
                }
                out.push(Ev::ThinkingEnd {
                    content_index: i,
                    content: text,
                    partial,
                });
                self.slots.remove(&oi);
            }
            (Some("message"), Some(Slot::Text(i))) => {
                let text: String = item
                    .get("content")
                    .and_then(Value::as_array)
                    .map(|parts| {
                        parts
                            .iter()
                            .map(|c| {
                                if str_field(c, "type") == Some("output_text") {
                                    text_of(c.get("text"))
                                } else {
                                    text_of(c.get("refusal"))
                                }
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let mut sig = Map::new();
                sig.insert("v".into(), Value::from(1));
                sig.insert("id".into(), item.get("id").cloned().unwrap_or(Value::Null));
                if let Some(phase) = item.get("phase").filter(|p| truthy(p)) {
                    sig.insert("phase".into(), phase.clone());
                }
                let sig = js_json(&Value::Object(sig));
                self.partial.update(|m| {
                    if let Some(AssistantContent::Text(t)) = m.content.get_mut(i) {
                        t.text = text.clone();
                        t.text_signature = Some(sig);
                    }
                });
                out.push(Ev::TextEnd {
                    content_index: i,
                    content: text,
                    partial,
                });
                self.slots.remove(&oi);
            }
            (Some("function_call"), Some(Slot::Tool(i, scratch))) => {
                let source = match item.get("arguments").filter(|a| truthy(a)) {
                    Some(a) => js_string(Some(a)),
                    None if !scratch.buffer().is_empty() => scratch.buffer().to_owned(),
                    None => "{}".to_owned(),
                };
                let mut parser = PartialJsonParser::new();
                parser.push(&source);
                let (args, error) = parser.final_arguments();
                let namespace = str_field(item, "namespace").map(str::to_owned);
                let tool_call = self.partial.update(|m| match m.content.get_mut(i) {
                    Some(AssistantContent::ToolCall(tc)) => {
                        tc.arguments = args;
                        tc.arguments_error = error;
                        if namespace.is_some() {
                            tc.namespace = namespace;
                        }
                        tc.clone()
                    }
                    _ => ToolCall::default(),
                });
                out.push(Ev::ToolcallEnd {
                    content_index: i,
                    tool_call: Box::new(tool_call),
                    partial,
                });
                self.slots.remove(&oi);
            }
            _ => {}
        }
    }

    /// `response.completed` / `response.incomplete`.
    fn finalize(&mut self, response: &Value) -> Result<(), StreamError> {
        self.saw_terminal = true;
        self.backfill_reasoning(response.get("output"));
        let usage = response.get("usage").filter(|u| truthy(u)).map(parse_usage);
        let status = response.get("status").filter(|s| !s.is_null());
        let reason = response
            .get("incomplete_details")
            .and_then(|d| d.get("reason"))
            .and_then(Value::as_str);
        let tier = match response.get("service_tier").filter(|t| !t.is_null()) {
            Some(t) => t.as_str(),
            None => self.requested_tier.as_deref(),
        };
        let multiplier = match tier {
            Some("flex") => 0.5,
            Some("priority") if self.model.id == "gpt-5.5" => 2.5,
            Some("priority") => 2.0,
            _ => 1.0,
        };
        let model = &self.model;
        self.partial.update(|m| -> Result<(), StreamError> {
            if let Some(id) = response.get("id").filter(|v| truthy(v)) {
                m.response_id = Some(js_string(Some(id)));
            }
            if let Some(u) = usage {
                m.usage = u;
            }
            calculate_cost(model, &mut m.usage);
            if multiplier != 1.0 {
                let c = &mut m.usage.cost;
                c.input *= multiplier;
                c.output *= multiplier;
                c.cache_read *= multiplier;
                c.cache_write *= multiplier;
                c.total = c.input + c.output + c.cache_read + c.cache_write;
            }
            let status_text = status.map(|s| js_string(Some(s)));
            m.raw_stop_reason = match (reason, &status_text) {
                (Some(r), s) => Some(format!("{}.{r}", s.as_deref().unwrap_or("undefined"))),
                (None, s) => s.clone(),
            };
            let (stop, error) =
                map_status(status_text.as_deref().filter(|s| !s.is_empty()), reason)?;
            m.stop_reason = stop;
            m.error_message = error;
            if stop == StopReason::Stop && m.tool_calls().next().is_some() {
                m.stop_reason = StopReason::ToolUse;
            }
            Ok(())
        })
    }

    /// Reasoning items whose `encrypted_content` only arrives in the terminal response get it
    /// written into the stored signature.
    fn backfill_reasoning(&mut self, output: Option<&Value>) {
        for item in output.and_then(Value::as_array).into_iter().flatten() {
            if str_field(item, "type") != Some("reasoning") {
                continue;
            }
            let Some(enc) = item.get("encrypted_content").filter(|e| truthy(e)) else {
                continue;
            };
            let Some(&i) = item
                .get("id")
                .and_then(|id| self.reasoning_by_id.get(&js_string(Some(id))))
            else {
                continue;
            };
            self.partial.update(|m| {
                if let Some(AssistantContent::Thinking(t)) = m.content.get_mut(i) {
                    let Some(stored) = t
                        .thinking_signature
                        .as_deref()
                        .filter(|s| !s.is_empty())
                        .and_then(|s| serde_json::from_str::<Value>(s).ok())
                    else {
                        return;
                    };
                    if stored.get("encrypted_content").is_some_and(truthy) {
                        return;
                    }
                    if let Value::Object(mut o) = stored {
                        o.insert("encrypted_content".into(), enc.clone());
                        t.thinking_signature = Some(js_json(&Value::Object(o)));
                    }
                }
            });
        }
    }

    fn on_typed(&mut self, ev: &Value, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        let oi = || {
            ev.get("output_index")
                .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
        };
        let delta = || str_field(ev, "delta").unwrap_or("");
        match str_field(ev, "type").unwrap_or("") {
            "response.created" => {
                let id = ev
                    .get("response")
                    .and_then(|r| r.get("id"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.partial.update(|m| m.response_id = id);
            }
            "response.output_item.added" => {
                if let (Some(oi), Some(item)) = (oi(), ev.get("item")) {
                    self.create_slot(oi, item, out);
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(oi) = oi() {
                    self.append_text(oi, true, delta(), out);
                }
            }
            "response.reasoning_summary_part.done" => {
                if let Some(oi) = oi() {
                    self.append_text(oi, true, "\n\n", out);
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(oi) = oi() {
                    self.append_text(oi, false, delta(), out);
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(oi) = oi() {
                    self.args_delta(oi, delta(), out);
                }
            }
            "response.function_call_arguments.done" => {
                if let Some(oi) = oi() {
                    let full = js_string(ev.get("arguments"));
                    self.args_done(oi, &full, out);
                }
            }
            "response.output_item.done" => {
                if let (Some(oi), Some(item)) = (oi(), ev.get("item")) {
                    self.item_done(oi, item, out);
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = ev.get("response").cloned().unwrap_or(Value::Null);
                self.finalize(&response)?;
            }
            "error" => {
                return Err(StreamError::Provider(format!(
                    "Error Code {}: {}",
                    js_string(ev.get("code")),
                    js_string(ev.get("message"))
                )));
            }
            "response.failed" => {
                self.saw_terminal = true;
                let response = ev.get("response");
                let status = response
                    .and_then(|r| r.get("status"))
                    .map(|s| js_string(Some(s)));
                self.partial.update(|m| m.raw_stop_reason = status);
                let error = response.and_then(|r| r.get("error")).filter(|e| truthy(e));
                let reason = response
                    .and_then(|r| r.get("incomplete_details"))
                    .and_then(|d| d.get("reason"))
                    .filter(|r| truthy(r));
                let or = |v: Option<&Value>, d: &str| match v.filter(|v| truthy(v)) {
                    Some(v) => js_string(Some(v)),
                    None => d.to_owned(),
                };
                return Err(StreamError::Provider(match (error, reason) {
                    (Some(e), _) => format!(
                        "{}: {}",
                        or(e.get("code"), "unknown"),
                        or(e.get("message"), "no message")
                    ),
                    (None, Some(r)) => format!("incomplete: {}", js_string(Some(r))),
                    (None, None) => "Unknown error (no error details in response)".to_owned(),
                }));
            }
            _ => {}
        }
        Ok(())
    }
}

impl StreamMapper for ResponsesMapper {
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        if self.done {
            return Ok(());
        }
        match sdk::decode_data(&event.data) {
            Ok(SseData::Done) => self.done = true,
            Ok(SseData::Skip) => {}
            Ok(SseData::Json(ev)) => {
                if ev.is_object() {
                    self.on_typed(&ev, out)?;
                }
            }
            Err((text, None)) => return Err(StreamError::Json(text)),
            Err((text, Some(_))) => return Err(StreamError::Provider(text)),
        }
        Ok(())
    }

    /// No terminal event → `OpenAI Responses stream ended before a terminal response event`;
    /// still pending → `… without a stop reason`; an error stop → its message.
    fn on_end(&mut self, out: &mut Vec<Ev>) -> Result<(), StreamError> {
        if !self.saw_terminal {
            return Err(StreamError::Incomplete(
                "OpenAI Responses stream ended before a terminal response event",
            ));
        }
        let (stop, error) = self
            .partial
            .update(|m: &mut AssistantMessage| (m.stop_reason, m.error_message.clone()));
        match stop {
            StopReason::Pending => Err(StreamError::Incomplete(self.pending_text)),
            StopReason::Aborted | StopReason::Error => {
                Err(error.map_or(StreamError::Unknown, StreamError::Provider))
            }
            _ => {
                self.close_open_slots(out);
                Ok(())
            }
        }
    }
}

impl ResponsesMapper {
    /// Ends the items whose `response.output_item.done` never came (a malformed stream), in
    /// content order, so every `*_start` has its `*_end` on success (pi 0.85.1 would finish
    /// without them): text and thinking keep what streamed, a tool call gets its arguments
    /// parsed from what streamed.
    fn close_open_slots(&mut self, out: &mut Vec<Ev>) {
        let mut open: Vec<Slot> = self.slots.drain().map(|(_, s)| s).collect();
        open.sort_by_key(|s| match s {
            Slot::Thinking(i) | Slot::Text(i) | Slot::Tool(i, _) => *i,
        });
        for slot in open {
            self.close_slot(slot, out);
        }
    }

    /// Ends one item's block (its `*_end` with what streamed).
    fn close_slot(&mut self, slot: Slot, out: &mut Vec<Ev>) {
        let slot_index = match &slot {
            Slot::Thinking(i) | Slot::Text(i) | Slot::Tool(i, _) => *i,
        };
        let partial = self.partial.clone();
        let event = self
            .partial
            .update(|m| match (slot, m.content.get_mut(slot_index)) {
                (Slot::Thinking(i), Some(AssistantContent::Thinking(t))) => Some(Ev::ThinkingEnd {
                    content_index: i,
                    content: t.thinking.clone(),
                    partial,
                }),
                (Slot::Text(i), Some(AssistantContent::Text(t))) => Some(Ev::TextEnd {
                    content_index: i,
                    content: t.text.clone(),
                    partial,
                }),
                (Slot::Tool(i, mut scratch), Some(AssistantContent::ToolCall(tc))) => {
                    tc.arguments = scratch.lenient(std::mem::take(&mut tc.arguments));
                    Some(Ev::ToolcallEnd {
                        content_index: i,
                        tool_call: Box::new(tc.clone()),
                        partial,
                    })
                }
                _ => None,
            });
        out.extend(event);
    }
}

/// `x.text` as JavaScript's `Array.join` writes it (`undefined`/`null` → empty).
fn text_of(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(v) => js_string(Some(v)),
    }
}

/// Terminal usage: `input = input_tokens − cached − cache_write`, `totalTokens` copied.
fn parse_usage(u: &Value) -> Usage {
    let details = u.get("input_tokens_details");
    let cached = tokens(details.and_then(|d| d.get("cached_tokens")));
    let cache_write = tokens(details.and_then(|d| d.get("cache_write_tokens")));
    Usage {
        // `Math.max(0, input_tokens - cached - cacheWrite)`, in doubles.
        input: (tokens(u.get("input_tokens")) - cached - cache_write).max(0.0),
        output: tokens(u.get("output_tokens")),
        cache_read: cached,
        cache_write,
        cache_write_1h: None,
        reasoning: Some(tokens(
            u.get("output_tokens_details")
                .and_then(|d| d.get("reasoning_tokens")),
        )),
        total_tokens: tokens(u.get("total_tokens")),
        // pi builds this usage whole, `reasoning` before `totalTokens`.
        optional_before_total: true,
        cost: Default::default(),
    }
}

/// Response status → stop reason (with the error text of the error cases).
fn map_status(
    status: Option<&str>,
    reason: Option<&str>,
) -> Result<(StopReason, Option<String>), StreamError> {
    let Some(status) = status else {
        return Ok((StopReason::Stop, None));
    };
    Ok(match status {
        "completed" | "in_progress" | "queued" => (StopReason::Stop, None),
        "incomplete" if reason == Some("max_output_tokens") => (StopReason::Length, None),
        "incomplete" => (
            StopReason::Error,
            Some(match reason {
                Some(r) => format!("Response incomplete: {r}"),
                None => "Response incomplete without a provider reason".to_owned(),
            }),
        ),
        "failed" | "cancelled" => (StopReason::Error, None),
        other => return Err(StreamError::UnhandledStopReason(other.to_owned())),
    })
}
