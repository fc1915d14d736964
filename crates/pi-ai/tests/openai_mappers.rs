//! Mapper behaviours of both OpenAI wire APIs on synthetic events: error chunks and texts,
//! stop-reason mapping, usage, tool-call keying, reasoning fields, Responses slots, terminal
//! events, service tiers and encrypted-reasoning back-fill. Values are pi 0.85.1's.

use pi_ai::event::{AssistantMessageEvent, PartialMessage};
use pi_ai::providers::StreamMapper;
use pi_ai::providers::openai_completions::CompletionsMapper;
use pi_ai::providers::openai_responses::ResponsesMapper;
use pi_ai::sse::SseEvent;
use pi_ai::types::{AssistantContent, AssistantMessage, Model, ModelCost, StopReason};
use serde_json::{Value, json};

fn model(api: &str, id: &str) -> Model {
    Model {
        id: id.into(),
        api: api.into(),
        provider: "p".into(),
        base_url: "http://localhost/v1".into(),
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: None,
        },
        ..Default::default()
    }
}

struct Outcome {
    message: AssistantMessage,
    events: Vec<AssistantMessageEvent>,
    result: Result<(), String>,
}

fn sse(data: &str) -> SseEvent {
    SseEvent {
        data: data.into(),
        ..Default::default()
    }
}

/// Feeds data payloads, then ends the body; stops at the first error like the driver.
fn drive(mut mapper: Box<dyn StreamMapper>, partial: PartialMessage, datas: &[String]) -> Outcome {
    let mut events = Vec::new();
    let mut result = Ok(());
    for d in datas {
        result = mapper.on_event(&sse(d), &mut events);
        if result.is_err() {
            break;
        }
    }
    if result.is_ok() {
        result = mapper.on_end(&mut events);
    }
    Outcome {
        message: partial.snapshot(),
        events,
        result: result.map_err(|e| e.to_string()),
    }
}

fn completions(datas: &[Value], supports_finish_reason: bool) -> Outcome {
    let m = model("openai-completions", "m");
    let partial = PartialMessage::new(AssistantMessage::empty(&m.api, &m.provider, &m.id));
    let mapper = CompletionsMapper::new(&m, partial.clone(), supports_finish_reason);
    let datas: Vec<String> = datas
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    drive(Box::new(mapper), partial, &datas)
}

fn responses_with(id: &str, datas: &[Value]) -> Outcome {
    responses_tier(id, None, datas)
}

fn responses_tier(id: &str, tier: Option<&str>, datas: &[Value]) -> Outcome {
    let m = model("openai-responses", id);
    let partial = PartialMessage::new(AssistantMessage::empty(&m.api, &m.provider, &m.id));
    let mapper = ResponsesMapper::new(&m, partial.clone(), tier.map(str::to_owned));
    let datas: Vec<String> = datas.iter().map(Value::to_string).collect();
    drive(Box::new(mapper), partial, &datas)
}

fn responses(datas: &[Value]) -> Outcome {
    responses_with("m", datas)
}

fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn kinds(events: &[AssistantMessageEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e.content_index() {
            Some(i) => format!("{}[{i}]", e.kind()),
            None => e.kind().to_owned(),
        })
        .collect()
}

// ---------------------------------------------------------------- Chat Completions

#[test]
fn completions_error_chunk_uses_the_error_message_and_openrouter_raw_metadata() {
    let o = completions(
        &[
            chunk(json!({"content": "Hi"}), None),
            json!({"error": {"message": "Provider returned error", "code": 502,
                "metadata": {"raw": "upstream overloaded"}}}),
        ],
        true,
    );
    assert_eq!(
        o.result,
        Err("Provider returned error\nupstream overloaded".to_owned())
    );
    // The open text block is not closed on error.
    assert_eq!(kinds(&o.events), ["text_start[0]", "text_delta[0]"]);
    assert_eq!(o.message.text(), "Hi");
}

#[test]
fn completions_unparseable_data_fails_with_the_json_error() {
    let o = completions(&[json!("{\"id\":\"c1\",")], true);
    // Node 22's `JSON.parse` message for this text.
    assert_eq!(
        o.result,
        Err(
            "Expected double-quoted property name in JSON at position 11 (line 1 column 12)"
                .to_owned()
        )
    );
}

#[test]
fn completions_finish_reasons_map_to_stop_reasons() {
    let o = completions(
        &[chunk(json!({"content": "x"}), Some("content_filter"))],
        true,
    );
    assert_eq!(
        o.result,
        Err("Provider finish_reason: content_filter".to_owned())
    );
    assert_eq!(o.message.raw_stop_reason.as_deref(), Some("content_filter"));
    let o = completions(&[chunk(json!({"content": "x"}), Some("end"))], true);
    assert_eq!(
        (o.result, o.message.stop_reason),
        (Ok(()), StopReason::Stop)
    );
    let o = completions(&[chunk(json!({}), Some("function_call"))], true);
    assert_eq!(o.message.stop_reason, StopReason::ToolUse);
    let o = completions(&[chunk(json!({"content": "x"}), Some("length"))], true);
    assert_eq!(o.message.stop_reason, StopReason::Length);
}

#[test]
fn completions_without_finish_reason_fail_or_are_inferred_per_compat() {
    let o = completions(&[chunk(json!({"content": "x"}), None)], true);
    assert_eq!(
        o.result,
        Err("Stream ended without finish_reason".to_owned())
    );
    // Blocks are closed before the post-checks.
    assert_eq!(
        kinds(&o.events),
        ["text_start[0]", "text_delta[0]", "text_end[0]"]
    );

    let call = json!({"tool_calls": [{"index": 0, "id": "t1", "function": {"name": "f", "arguments": "{}"}}]});
    let o = completions(&[chunk(call, None)], false);
    assert_eq!(
        (o.result, o.message.stop_reason),
        (Ok(()), StopReason::ToolUse)
    );
    let o = completions(&[chunk(json!({"content": "x"}), None)], false);
    assert_eq!(
        (o.result, o.message.stop_reason),
        (Ok(()), StopReason::Stop)
    );
}

#[test]
fn completions_events_after_done_are_ignored() {
    let o = completions(
        &[
            chunk(json!({"content": "a"}), Some("stop")),
            json!("[DONE]"),
            chunk(json!({"content": "b"}), None),
            json!({"error": {"message": "late"}}),
        ],
        true,
    );
    assert_eq!(o.result, Ok(()));
    assert_eq!(o.message.text(), "a");
}

#[test]
fn completions_usage_replaces_and_reads_cache_fields() {
    let o = completions(
        &[
            chunk(json!({"content": "x"}), Some("stop")),
            json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20,
                "prompt_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 10},
                "completion_tokens_details": {"reasoning_tokens": 5}}}),
        ],
        true,
    );
    let u = o.message.usage;
    assert_eq!(
        (
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.reasoning,
            u.total_tokens
        ),
        (60.0, 20.0, 30.0, 10.0, Some(5.0), 120.0)
    );
    assert_eq!(u.cost.output, 0.00030000000000000003);
    // DeepSeek and Kimi spellings; usage inside the choice (Moonshot).
    let o = completions(
        &[
            json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop",
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "prompt_cache_hit_tokens": 4}}]}),
        ],
        true,
    );
    assert_eq!(
        (o.message.usage.input, o.message.usage.cache_read),
        (6.0, 4.0)
    );
    let o = completions(
        &[
            json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "cached_tokens": 7}}),
        ],
        true,
    );
    assert_eq!(
        (o.message.usage.input, o.message.usage.cache_read),
        (3.0, 7.0)
    );
}

#[test]
fn completions_response_id_and_model_keep_the_first_value() {
    let o = completions(
        &[
            json!({"id": "first", "model": "m-2024", "choices": [{"index": 0, "delta": {"content": "x"}}]}),
            json!({"id": "second", "model": "other", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ],
        true,
    );
    assert_eq!(o.message.response_id.as_deref(), Some("first"));
    assert_eq!(o.message.response_model.as_deref(), Some("m-2024"));
    // Same model as requested: no responseModel.
    let o = completions(&[chunk(json!({}), Some("stop"))], true);
    assert_eq!(o.message.response_model, None);
}

#[test]
fn completions_first_non_empty_reasoning_field_wins() {
    let o = completions(
        &[
            chunk(
                json!({"reasoning_content": "", "reasoning": "a", "reasoning_text": "zzz"}),
                None,
            ),
            chunk(
                json!({"reasoning_content": "b", "reasoning": "b"}),
                Some("stop"),
            ),
        ],
        true,
    );
    match &o.message.content[0] {
        AssistantContent::Thinking(t) => {
            assert_eq!(t.thinking, "ab");
            // The block keeps the field it was opened with.
            assert_eq!(t.thinking_signature.as_deref(), Some("reasoning"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn completions_tool_calls_without_index_are_keyed_by_id() {
    let o = completions(
        &[
            chunk(
                json!({"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{\"x\":"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": "{}"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"id": "a", "function": {"arguments": "1}"}}]}),
                Some("tool_calls"),
            ),
        ],
        true,
    );
    let calls: Vec<_> = o
        .message
        .tool_calls()
        .map(|t| {
            (
                t.id.as_str(),
                t.name.as_str(),
                Value::Object(t.arguments.clone()),
            )
        })
        .collect();
    assert_eq!(calls, [("a", "f", json!({"x": 1})), ("b", "g", json!({}))]);
    // One toolcall_delta per entry, even without argument text.
    let o = completions(
        &[chunk(
            json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f"}}]}),
            Some("tool_calls"),
        )],
        true,
    );
    assert_eq!(
        kinds(&o.events),
        ["toolcall_start[0]", "toolcall_delta[0]", "toolcall_end[0]"]
    );
    match &o.events[1] {
        AssistantMessageEvent::ToolcallDelta { delta, .. } => assert_eq!(delta, ""),
        other => panic!("{other:?}"),
    }
}

#[test]
fn completions_arguments_are_reparsed_on_every_delta() {
    let o = completions(
        &[
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{\"path\": \"/tm"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "p\"}"}}]}),
                Some("tool_calls"),
            ),
        ],
        true,
    );
    match &o.events[1] {
        AssistantMessageEvent::ToolcallDelta { partial, .. } => {
            // The live partial already shows the final arguments (shared accumulator).
            assert!(partial.ptr_eq(&o.events[2].partial().unwrap().clone()));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        Value::Object(o.message.tool_calls().next().unwrap().arguments.clone()),
        json!({"path": "/tmp"})
    );
}

// ---------------------------------------------------------------- Responses

fn created() -> Value {
    json!({"type": "response.created", "response": {"id": "resp_1"}})
}

fn completed(extra: Value) -> Value {
    let mut r = json!({"id": "resp_1", "status": "completed", "output": [],
        "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 40},
                  "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 120}});
    for (k, v) in extra.as_object().unwrap() {
        r[k] = v.clone();
    }
    json!({"type": "response.completed", "response": r})
}

#[test]
fn responses_without_terminal_event_fail_with_the_reference_text() {
    let o = responses(&[created()]);
    assert_eq!(
        o.result,
        Err("OpenAI Responses stream ended before a terminal response event".to_owned())
    );
}

#[test]
fn responses_error_event_and_failed_response_texts() {
    let o = responses(&[
        created(),
        json!({"type": "error", "code": "server_error", "message": "boom"}),
    ]);
    assert_eq!(o.result, Err("Error Code server_error: boom".to_owned()));
    let o = responses(&[json!({"type": "error", "message": "boom"})]);
    assert_eq!(o.result, Err("Error Code undefined: boom".to_owned()));

    let failed =
        |response: Value| responses(&[json!({"type": "response.failed", "response": response})]);
    let o = failed(
        json!({"status": "failed", "error": {"code": "rate_limit_exceeded", "message": "slow down"}}),
    );
    assert_eq!(o.result, Err("rate_limit_exceeded: slow down".to_owned()));
    assert_eq!(o.message.raw_stop_reason.as_deref(), Some("failed"));
    let o = failed(json!({"status": "failed", "error": {"message": ""}}));
    assert_eq!(o.result, Err("unknown: no message".to_owned()));
    let o = failed(json!({"status": "failed", "incomplete_details": {"reason": "content_filter"}}));
    assert_eq!(o.result, Err("incomplete: content_filter".to_owned()));
    let o = failed(json!({"status": "failed"}));
    assert_eq!(
        o.result,
        Err("Unknown error (no error details in response)".to_owned())
    );
}

#[test]
fn responses_statuses_map_to_stop_reasons() {
    let inc = |reason: Value| {
        responses(&[json!({"type": "response.incomplete",
            "response": {"status": "incomplete", "incomplete_details": reason}})])
    };
    let o = inc(json!({"reason": "max_output_tokens"}));
    assert_eq!(
        (o.result, o.message.stop_reason),
        (Ok(()), StopReason::Length)
    );
    assert_eq!(
        o.message.raw_stop_reason.as_deref(),
        Some("incomplete.max_output_tokens")
    );
    let o = inc(json!({"reason": "content_filter"}));
    assert_eq!(
        o.result,
        Err("Response incomplete: content_filter".to_owned())
    );
    let o = inc(Value::Null);
    assert_eq!(
        o.result,
        Err("Response incomplete without a provider reason".to_owned())
    );
    let o = responses(&[completed(json!({"status": "cancelled"}))]);
    assert_eq!(o.result, Err("An unknown error occurred".to_owned()));
    let o = responses(&[completed(json!({"status": "queued"}))]);
    assert_eq!(
        (o.result, o.message.stop_reason),
        (Ok(()), StopReason::Stop)
    );
    let o = responses(&[completed(json!({"status": "weird"}))]);
    assert_eq!(o.result, Err("Unhandled stop reason: weird".to_owned()));
}

#[test]
fn responses_usage_and_service_tier_pricing() {
    let o = responses(&[completed(json!({}))]);
    let u = o.message.usage;
    assert_eq!(
        (u.input, u.output, u.cache_read, u.total_tokens),
        (60.0, 20.0, 40.0, 120.0)
    );
    let base = u.cost;
    let o = responses(&[completed(json!({"service_tier": "flex"}))]);
    assert_eq!(o.message.usage.cost.input, base.input * 0.5);
    assert_eq!(o.message.usage.cost.output, base.output * 0.5);
    let o = responses(&[completed(json!({"service_tier": "priority"}))]);
    assert_eq!(o.message.usage.cost.output, base.output * 2.0);
    let o = responses_with("gpt-5.5", &[completed(json!({"service_tier": "priority"}))]);
    assert_eq!(o.message.usage.cost.output, base.output * 2.5);
    let c = o.message.usage.cost;
    assert_eq!(c.total, c.input + c.output + c.cache_read + c.cache_write);
    // The requested tier prices a response that names none; the response's tier wins.
    let o = responses_tier("m", Some("flex"), &[completed(json!({}))]);
    assert_eq!(o.message.usage.cost.output, base.output * 0.5);
    let o = responses_tier(
        "m",
        Some("flex"),
        &[completed(json!({"service_tier": "default"}))],
    );
    assert_eq!(o.message.usage.cost.output, base.output);
}

#[test]
fn responses_arguments_done_emits_the_missing_suffix() {
    let item = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": ""});
    let o = responses(&[
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"a\""}),
        json!({"type": "response.function_call_arguments.done", "output_index": 0, "arguments": "{\"a\": 1}"}),
        json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{\"a\": 1}"}}),
        completed(json!({})),
    ]);
    let deltas: Vec<&str> = o
        .events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::ToolcallDelta { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["{\"a\"", ": 1}"]);
    let tc = o.message.tool_calls().next().unwrap();
    assert_eq!(tc.id, "call_1|fc_1");
    assert_eq!(Value::Object(tc.arguments.clone()), json!({"a": 1}));
    assert_eq!(o.message.stop_reason, StopReason::ToolUse);
}

#[test]
fn responses_reasoning_summary_parts_and_final_text() {
    let o = responses(&[
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "One"}),
        json!({"type": "response.reasoning_summary_part.done", "output_index": 0}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "Two"}),
        json!({"type": "response.reasoning_summary_part.done", "output_index": 0}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "One"}, {"type": "summary_text", "text": "Two"}]}}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "id": "msg_1", "phase": "final_answer", "content": []}}),
        json!({"type": "response.refusal.delta", "output_index": 1, "delta": "No."}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "message", "id": "msg_1", "phase": "final_answer",
            "content": [{"type": "refusal", "refusal": "No."}]}}),
        completed(json!({})),
    ]);
    match &o.events[4] {
        AssistantMessageEvent::ThinkingDelta { delta, .. } => assert_eq!(delta, "\n\n"),
        other => panic!("{other:?}"),
    }
    match &o.message.content[..] {
        [AssistantContent::Thinking(t), AssistantContent::Text(x)] => {
            assert_eq!(t.thinking, "One\n\nTwo");
            assert_eq!(
                t.thinking_signature.as_deref(),
                Some(
                    r#"{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"One"},{"type":"summary_text","text":"Two"}]}"#
                )
            );
            assert_eq!(x.text, "No.");
            assert_eq!(
                x.text_signature.as_deref(),
                Some(r#"{"v":1,"id":"msg_1","phase":"final_answer"}"#)
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn responses_encrypted_reasoning_is_backfilled_from_the_terminal_response() {
    let o = responses(&[
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1"}}),
        json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": null}}),
        completed(
            json!({"output": [{"type": "reasoning", "id": "rs_1", "encrypted_content": "ENC"}]}),
        ),
    ]);
    match &o.message.content[0] {
        AssistantContent::Thinking(t) => assert_eq!(
            t.thinking_signature.as_deref(),
            Some(r#"{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"ENC"}"#)
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn responses_item_done_without_added_creates_the_slot() {
    let o = responses(&[
        json!({"type": "response.output_item.done", "output_index": 3,
            "item": {"type": "message", "id": "msg_9", "content": [{"type": "output_text", "text": "late"}]}}),
        completed(json!({})),
    ]);
    assert_eq!(kinds(&o.events), ["text_start[0]", "text_end[0]"]);
    assert_eq!(o.message.text(), "late");
}

/// Regression (fuzz target `mapper_openai_responses`): items whose
/// `response.output_item.done` never came stayed open through a successful end. They are
/// closed in content order; a tool call gets the arguments that streamed.
#[test]
fn responses_items_left_open_are_closed_at_a_successful_end() {
    let o = responses(&[
        created(),
        json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "message", "id": "msg_1", "content": []}}),
        json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Hi"}),
        json!({"type": "response.output_item.added", "output_index": 1,
            "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 1,
            "delta": "{\"command\":\"ls\"}"}),
        completed(json!({})),
    ]);
    assert_eq!(o.result, Ok(()));
    let ends: Vec<String> = kinds(&o.events)
        .into_iter()
        .filter(|k| k.contains("_end"))
        .collect();
    assert_eq!(ends, ["text_end[0]", "toolcall_end[1]"]);
    assert_eq!(o.message.text(), "Hi");
    match &o.message.content[1] {
        AssistantContent::ToolCall(tc) => assert_eq!(tc.arguments["command"], "ls"),
        other => panic!("{other:?}"),
    }
}

/// Regression (fuzz target `mapper_openai_responses`, second run): a second
/// `response.output_item.added` at the same output index replaced the first item's slot, so
/// the first block was never ended. The replaced item is ended when the new one starts.
#[test]
fn responses_a_replaced_item_is_ended() {
    let added = json!({"type": "response.output_item.added", "output_index": 0,
        "item": {"type": "message", "id": "msg_1", "content": []}});
    let o = responses(&[
        created(),
        added.clone(),
        json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Hel"}),
        added,
        json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "message", "id": "msg_1", "content": [{"type": "output_text", "text": "Hello"}]}}),
        completed(json!({})),
    ]);
    assert_eq!(o.result, Ok(()));
    assert_eq!(
        kinds(&o.events),
        [
            "text_start[0]",
            "text_delta[0]",
            "text_start[1]",
            "text_end[0]",
            "text_end[1]"
        ]
    );
}

/// A compatible server sending `delta.content` as typed chunks (Mistral's shape): text and
/// thinking parts become text and thinking, other kinds are skipped; a plain string still
/// works beside them. pi 0.85.1 appends the array itself to the text (`[object Object]`).
#[test]
fn completions_typed_content_chunks_are_text_and_thinking() {
    let o = completions(
        &[
            chunk(
                json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me"}, {"text": " see."}]}]}),
                None,
            ),
            chunk(
                json!({"content": ["He", {"type": "text", "text": "llo"}, {"type": "image_url", "image_url": "x"}, {"type": "thinking", "thinking": ""}]}),
                None,
            ),
            chunk(
                json!({"content": [{"type": "thinking", "thinking": " More."}]}),
                None,
            ),
            chunk(json!({"content": "!"}), Some("stop")),
        ],
        true,
    );
    o.result.unwrap();
    assert_eq!(o.message.text(), "Hello!");
    let thinking: Vec<&str> = o
        .message
        .content
        .iter()
        .filter_map(|c| match c {
            AssistantContent::Thinking(t) => Some(t.thinking.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, ["Let me see. More."]);
    assert!(!o.message.text().contains("[object"));
    assert_eq!(o.message.stop_reason, StopReason::Stop);
}

/// Compatible servers send a tool call's id as `""`, or repeat it on every chunk: pi's result
/// is kept — the empty id stays the empty string, and a repeated id (same index) continues
/// the same call.
#[test]
fn completions_empty_and_repeated_tool_call_ids() {
    let o = completions(
        &[
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "", "function": {"name": "f", "arguments": "{\"x\":"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "", "function": {"arguments": "1}"}}]}),
                Some("tool_calls"),
            ),
        ],
        true,
    );
    let calls: Vec<_> = o
        .message
        .tool_calls()
        .map(|t| (t.id.clone(), Value::Object(t.arguments.clone())))
        .collect();
    assert_eq!(calls, [(String::new(), json!({"x": 1}))]);
    let o = completions(
        &[
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "{\"x\":"}}]}),
                None,
            ),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "f", "arguments": "2}"}}]}),
                Some("tool_calls"),
            ),
        ],
        true,
    );
    let calls: Vec<_> = o
        .message
        .tool_calls()
        .map(|t| {
            (
                t.id.clone(),
                t.name.clone(),
                Value::Object(t.arguments.clone()),
            )
        })
        .collect();
    assert_eq!(calls, [("call_1".into(), "f".into(), json!({"x": 2}))]);
}
