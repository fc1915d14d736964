//! Provider replies built to break the mappers, per wire API (Mistral's and Bedrock's
//! included, the latter over its binary event stream): token counts past 2^53 and 2^64
//! (summed in doubles as pi does, written as JavaScript writes them, never wrapping or
//! panicking), and tool-call arguments that are not exactly one JSON value or nest deeper than
//! the documented limit (refused with a tool error the model can read, never executed in
//! another shape). The same cases through the `pi` binary live in pi-coding-agent's
//! `hostile_input` tests.

use crate::anthropic_google_support as common;

use common::{CHUNKINGS, Chunking, Outcome, model, replay};
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::providers::{
    AnthropicMessages, BedrockConverseStream, GoogleGenerativeAi, MistralConversations, WireApi,
};
use pi_ai::{AssistantContent, ToolCall};
use serde_json::{Value, json};

/// `2^64`, one past `u64::MAX`, as a JSON number.
const TWO_POW_64: &str = "18446744073709551616";

fn sse(events: &[(&str, Value)]) -> Vec<u8> {
    let mut out = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            out.push_str(&format!("event: {name}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    out.into_bytes()
}

/// A body whose usage carries `n` (raw JSON number text) as the input and output counts.
fn usage_body(api: &str, n: &str) -> Vec<u8> {
    let num: Value = serde_json::from_str(n).unwrap();
    match api {
        "anthropic-messages" => sse(&[
            (
                "message_start",
                json!({"type": "message_start", "message": {"id": "m", "model": "m",
                    "usage": {"input_tokens": num, "output_tokens": 1}}}),
            ),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": num}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ]),
        "openai-completions" => {
            let mut body = sse(&[
                (
                    "",
                    json!({"id": "c", "choices": [{"index": 0, "delta": {"content": "x"},
                        "finish_reason": "stop"}]}),
                ),
                (
                    "",
                    json!({"id": "c", "choices": [], "usage": {"prompt_tokens": num,
                        "completion_tokens": num, "total_tokens": num}}),
                ),
            ]);
            body.extend_from_slice(b"data: [DONE]\n\n");
            body
        }
        "openai-responses" => sse(&[(
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "r", "status": "completed",
                "output": [], "usage": {"input_tokens": num, "output_tokens": num,
                "total_tokens": num}}}),
        )]),
        "google-generative-ai" => sse(&[(
            "",
            json!({"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": num, "candidatesTokenCount": num,
                "totalTokenCount": num}}),
        )]),
        "mistral-conversations" => mistral_body(&[mistral_chunk(
            json!({"role": "assistant", "content": "x"}),
            Some("stop"),
            Some(json!({"prompt_tokens": num, "completion_tokens": num, "total_tokens": num})),
        )]),
        "bedrock-converse-stream" => bedrock_body(&[
            (
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": {"text": "x"}}),
            ),
            ("messageStop", json!({"stopReason": "end_turn"})),
            (
                "metadata",
                json!({"usage": {"inputTokens": num, "outputTokens": num, "totalTokens": num}}),
            ),
        ]),
        _ => unreachable!(),
    }
}

const APIS: [(&str, &dyn WireApi); 6] = [
    ("anthropic-messages", &AnthropicMessages),
    ("openai-completions", &OpenAiCompletions),
    ("openai-responses", &OpenAiResponses),
    ("google-generative-ai", &GoogleGenerativeAi),
    ("mistral-conversations", &MistralConversations),
    ("bedrock-converse-stream", &BedrockConverseStream::new()),
];

/// A Mistral chunk with `delta`, `finish` and `usage`.
fn mistral_chunk(delta: Value, finish: Option<&str>, usage: Option<Value>) -> Value {
    let mut chunk = json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    if let Some(u) = usage {
        chunk["usage"] = u;
    }
    chunk
}

fn mistral_body(chunks: &[Value]) -> Vec<u8> {
    let events: Vec<(&str, Value)> = chunks.iter().map(|c| ("", c.clone())).collect();
    let mut body = sse(&events);
    body.extend_from_slice(b"data: [DONE]\n\n");
    body
}

/// A Bedrock event stream of `(event type, payload)` messages.
fn bedrock_body(events: &[(&str, Value)]) -> Vec<u8> {
    let mut b = pi_ai::testkit::EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}));
    for (name, payload) in events {
        b = b.event(name, payload);
    }
    b.build()
}

fn run(api: &str, wire: &dyn WireApi, body: &[u8], chunking: Chunking) -> Outcome {
    let mut m = model(api, "p", "m");
    m.cost.input = 3.0;
    m.cost.output = 15.0;
    replay(wire, &m, body, chunking)
}

fn usage_json(o: &Outcome) -> Value {
    let text = pi_ai::json::to_string(&o.message.usage).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Two counts of 2^64 add up in doubles (`36893488147419103000`, as `JSON.stringify` writes
/// 2^65); nothing wraps (debug builds check overflow) and the cost stays finite.
#[test]
fn counts_past_u64_sum_in_doubles_on_every_api() {
    for (api, wire) in APIS {
        let o = run(api, wire, &usage_body(api, TWO_POW_64), Chunking::Whole);
        assert_eq!(o.message.usage.input, 2f64.powi(64), "{api}");
        let text = pi_ai::json::to_string(&o.message.usage).unwrap();
        let total = match api {
            // totalTokens is the component sum (Anthropic) or input + output (Completions).
            "anthropic-messages" | "openai-completions" => "36893488147419103000",
            // Responses and Gemini copy the provider's total.
            _ => "18446744073709552000",
        };
        assert!(
            text.contains(&format!("\"totalTokens\":{total},")),
            "{api}: {text}"
        );
        assert!(o.message.usage.cost.total.is_finite(), "{api}");
        assert!(o.message.usage.cost.total > 0.0, "{api}");
    }
}

/// Below 2^53 the JSON is byte-identical to pi's integers; 2^53 + 1 rounds as a double does.
#[test]
fn counts_near_two_pow_53_are_written_as_javascript_writes_them() {
    for (api, wire) in APIS {
        let o = run(api, wire, &usage_body(api, "180"), Chunking::Bytes(7));
        let u = usage_json(&o);
        assert_eq!(u["input"], json!(180), "{api}");
        let text = pi_ai::json::to_string(&o.message.usage).unwrap();
        assert!(text.starts_with("{\"input\":180,"), "{api}: {text}");
        let o = run(
            api,
            wire,
            &usage_body(api, "9007199254740993"),
            Chunking::Whole,
        );
        let text = pi_ai::json::to_string(&o.message.usage).unwrap();
        assert!(
            text.starts_with("{\"input\":9007199254740992,"),
            "{api}: {text}"
        );
    }
}

/// A stored usage with counts past u64 reads back and writes the same text.
#[test]
fn huge_stored_counts_round_trip() {
    let text = r#"{"input":36893488147419103000,"output":1.5,"cacheRead":0,"cacheWrite":0,"totalTokens":36893488147419103000,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;
    let u: pi_ai::Usage = serde_json::from_str(text).unwrap();
    assert_eq!(pi_ai::json::to_string(&u).unwrap(), text);
}

fn tool_calls(o: &Outcome) -> Vec<&ToolCall> {
    o.message
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantContent::ToolCall(t) => Some(t),
            _ => None,
        })
        .collect()
}

#[test]
fn every_chunking_agrees_on_huge_usage() {
    for (api, wire) in APIS {
        let body = usage_body(api, TWO_POW_64);
        let first = usage_json(&run(api, wire, &body, Chunking::Whole));
        for c in CHUNKINGS {
            assert_eq!(usage_json(&run(api, wire, &body, c)), first, "{api} {c:?}");
        }
        assert!(tool_calls(&run(api, wire, &body, Chunking::Whole)).is_empty());
    }
}

/// A body with one tool call `t` whose arguments are the raw text `args` (Gemini: the text is
/// parsed into the event, so it must be one JSON value there).
fn tool_body(api: &str, args: &str) -> Vec<u8> {
    match api {
        "anthropic-messages" => sse(&[
            (
                "message_start",
                json!({"type": "message_start", "message": {"id": "m", "model": "m",
                    "usage": {"input_tokens": 1, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block":
                    {"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta":
                    {"type": "input_json_delta", "partial_json": args}}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                    "usage": {"output_tokens": 2}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ]),
        "openai-completions" => {
            let mut body = sse(&[
                (
                    "",
                    json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [
                        {"index": 0, "id": "call_1", "type": "function",
                         "function": {"name": "t", "arguments": args}}]}}]}),
                ),
                (
                    "",
                    json!({"id": "c", "choices": [{"index": 0, "delta": {},
                        "finish_reason": "tool_calls"}]}),
                ),
            ]);
            body.extend_from_slice(b"data: [DONE]\n\n");
            body
        }
        "openai-responses" => sse(&[
            (
                "response.output_item.added",
                json!({"type": "response.output_item.added", "output_index": 0, "item":
                    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "t",
                     "arguments": ""}}),
            ),
            (
                "response.function_call_arguments.delta",
                json!({"type": "response.function_call_arguments.delta", "output_index": 0,
                    "delta": args}),
            ),
            (
                "response.output_item.done",
                json!({"type": "response.output_item.done", "output_index": 0, "item":
                    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "t",
                     "arguments": args}}),
            ),
            (
                "response.completed",
                json!({"type": "response.completed", "response": {"id": "r",
                    "status": "completed", "output": [],
                    "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}}),
            ),
        ]),
        "google-generative-ai" => {
            // Built as text: the arguments may nest deeper than `json!` or serde_json's
            // default parser go.
            let head = r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"t","args":"#;
            let tail = r#"}}]},"finishReason":"STOP"}]}"#;
            format!("data: {head}{args}{tail}\n\n").into_bytes()
        }
        "mistral-conversations" => mistral_body(&[mistral_chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "abcDEF123", "index": 0, "function": {"name": "t", "arguments": args}}]}),
            Some("tool_calls"),
            None,
        )]),
        "bedrock-converse-stream" => bedrock_body(&[
            (
                "contentBlockStart",
                json!({"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "t"}}}),
            ),
            (
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": {"toolUse": {"input": args}}}),
            ),
            ("contentBlockStop", json!({"contentBlockIndex": 0})),
            ("messageStop", json!({"stopReason": "tool_use"})),
        ]),
        _ => unreachable!(),
    }
}

fn nested(levels: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(levels), "}".repeat(levels))
}

/// Arguments 129 and 1,000 levels deep reach the message exactly on every API; 1,001 are `{}`
/// with the depth error (the loop answers with a tool error naming the limit).
#[test]
fn deep_arguments_arrive_exactly_or_are_refused_on_every_api() {
    use pi_ai::json_depth::MAX_ARGUMENT_DEPTH;
    use pi_ai::partial_json::FinishError;
    for (api, wire) in APIS {
        for levels in [129, MAX_ARGUMENT_DEPTH] {
            let text = nested(levels);
            let o = run(api, wire, &tool_body(api, &text), Chunking::Bytes(4096));
            let calls = tool_calls(&o);
            assert_eq!(calls.len(), 1, "{api} {levels}");
            assert_eq!(calls[0].arguments_error, None, "{api} {levels}");
            assert_eq!(
                pi_ai::json::to_string(&calls[0].arguments).unwrap(),
                text,
                "{api} {levels}"
            );
        }
        let o = run(
            api,
            wire,
            &tool_body(api, &nested(MAX_ARGUMENT_DEPTH + 1)),
            Chunking::Whole,
        );
        let calls = tool_calls(&o);
        assert_eq!(calls.len(), 1, "{api}");
        assert!(calls[0].arguments.is_empty(), "{api}");
        assert_eq!(
            calls[0].arguments_error,
            Some(FinishError::TooDeep { limit: 1_000 }),
            "{api}"
        );
    }
}

/// A million levels of argument text: refused in linear time on the streamed APIs; for
/// Gemini, whose arguments are inside the event, the event fails with the document limit.
#[test]
fn a_million_levels_cost_one_linear_pass() {
    let text = "[".repeat(1_000_000);
    for (api, wire) in APIS {
        let o = run(api, wire, &tool_body(api, &text), Chunking::Whole);
        if api == "google-generative-ai" {
            assert_eq!(
                o.message.error_message.as_deref(),
                Some("JSON nested deeper than 1064 levels")
            );
            continue;
        }
        let calls = tool_calls(&o);
        assert_eq!(calls.len(), 1, "{api}");
        assert!(calls[0].arguments.is_empty(), "{api}");
        assert!(calls[0].arguments_error.is_some(), "{api}");
    }
}

/// `{"a":"x"}{"b":2}` and truncated arguments are refused on every streamed API (pi executes
/// the first object); Gemini's non-object arguments likewise.
#[test]
fn arguments_that_are_not_one_object_are_refused_on_every_api() {
    use pi_ai::partial_json::FinishError;
    for (api, wire) in APIS {
        if api == "google-generative-ai" {
            let o = run(api, wire, &tool_body(api, "[1,2]"), Chunking::Whole);
            assert_eq!(
                tool_calls(&o)[0].arguments_error,
                Some(FinishError::NotAnObject)
            );
            continue;
        }
        for text in [r#"{"a":"x"}{"b":2}"#, r#"{"a":"x""#] {
            for c in CHUNKINGS {
                let o = run(api, wire, &tool_body(api, text), c);
                let calls = tool_calls(&o);
                assert_eq!(calls.len(), 1, "{api} {text}");
                assert_eq!(
                    calls[0].arguments_error,
                    Some(FinishError::Invalid),
                    "{api} {text} {c:?}"
                );
                // The message keeps pi's lenient reading.
                assert_eq!(Value::Object(calls[0].arguments.clone()), json!({"a": "x"}));
            }
        }
        let o = run(api, wire, &tool_body(api, r#"{"a":"x"}"#), Chunking::Whole);
        assert_eq!(tool_calls(&o)[0].arguments_error, None, "{api}");
    }
}

/// A validation error echoes the arguments as pi does up to `MAX_RECEIVED_BYTES` of pretty
/// JSON, exactly at the cap too; one byte more is cut there with a line saying so, and 2 MB
/// of arguments still give a message of about the cap.
#[test]
fn validation_errors_echo_arguments_up_to_the_cap() {
    use pi_ai::validation::{MAX_RECEIVED_BYTES, validate_arguments};
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]});
    let pretty = |v: &Value| pi_ai::json::to_string_pretty(v).unwrap();
    let base = pretty(&json!({"s": ""})).len();
    let with = |k: usize| json!({"s": "x".repeat(k)});
    let received = |v: &Value| {
        let e = validate_arguments("t", &schema, v).unwrap_err().to_string();
        let (head, tail) = e.split_once("\n\nReceived arguments:\n").unwrap();
        assert!(
            head.starts_with("Validation failed for tool \"t\":\n  - "),
            "{head}"
        );
        tail.to_owned()
    };
    let at = with(MAX_RECEIVED_BYTES - base);
    assert_eq!(pretty(&at).len(), MAX_RECEIVED_BYTES);
    assert_eq!(received(&at), pretty(&at));
    let past = with(MAX_RECEIVED_BYTES - base + 1);
    let text = received(&past);
    let kept = text
        .strip_suffix("\n… (cut: the arguments are longer than 16384 bytes of JSON)")
        .unwrap();
    assert_eq!(kept.len(), MAX_RECEIVED_BYTES);
    assert!(pretty(&past).starts_with(kept));
    let huge = with(2_000_000);
    assert!(received(&huge).len() < MAX_RECEIVED_BYTES + 100);
}
