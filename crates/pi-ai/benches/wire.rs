//! Bytes → `AssistantMessageEvent`s per wire API, workload 4 of `cargo xtask bench`.
//!
//! For each of `anthropic-messages`, `google-generative-ai`, `openai-completions` and
//! `openai-responses` a ~10 MB stream is generated in that API's shape (one long text block in
//! ~24-byte deltas, then 50 tool calls of ~4 KB arguments, streamed in 32-byte fragments where
//! the API streams them) and replayed in 16 KiB reads through `SseParser` and the API's
//! `StreamMapper::on_event` / `on_end`, as the driver does minus the network. Reported: MB/s of
//! wire bytes and, with the event count on the `pi-bench-meta` line, ns per produced event.
//!
//! Run: `cargo bench -p pi-ai --bench wire` (or through `cargo xtask bench`).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use pi_ai::providers::WireApi;
use pi_ai::sse::SseParser;
use pi_ai::{AssistantContent, AssistantMessage, Model, PartialMessage, StreamOptions};
use serde_json::json;

/// Wire bytes of text deltas per stream, before the tool calls.
const TEXT_BYTES: usize = 9 * 1024 * 1024;
/// Tool calls per stream.
const TOOL_CALLS: usize = 50;
/// Size of one tool call's argument text fragment.
const FRAGMENT: usize = 32;

/// Prints the facts `cargo xtask bench` needs to turn a median into ns/event.
fn meta(id: &str, events: usize, bytes: usize) {
    println!("pi-bench-meta {id} events={events} bytes={bytes}");
}

/// The `i`-th text delta (~24 bytes, with an escape now and then).
fn delta(i: usize) -> String {
    const WORDS: [&str; 9] = [
        "reading ",
        "the ",
        "file ",
        "and ",
        "editing ",
        "code ",
        "\"carefully\" ",
        "now\n",
        "ok ",
    ];
    (0..3).map(|k| WORDS[(i * 3 + k) % WORDS.len()]).collect()
}

/// The arguments of tool call `k` as JSON text (~4 KB).
fn tool_args(k: usize) -> String {
    let mut content = String::with_capacity(4100);
    let mut i = 0;
    while content.len() < 4000 {
        content.push_str(&delta(i));
        i += 1;
    }
    content.truncate(4000);
    json!({"path": format!("src/file{k}.rs"), "content": content}).to_string()
}

fn fragments(args: &str) -> impl Iterator<Item = &str> {
    // ASCII-only arguments: every byte index is a char boundary.
    args.as_bytes()
        .chunks(FRAGMENT)
        .map(|c| std::str::from_utf8(c).unwrap_or(""))
}

fn sse(out: &mut String, event: Option<&str>, data: &serde_json::Value) {
    if let Some(e) = event {
        out.push_str("event: ");
        out.push_str(e);
        out.push('\n');
    }
    out.push_str("data: ");
    out.push_str(&data.to_string());
    out.push_str("\n\n");
}

fn anthropic_stream() -> String {
    let mut s = String::new();
    sse(
        &mut s,
        Some("message_start"),
        &json!({"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-bench","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}),
    );
    sse(
        &mut s,
        Some("content_block_start"),
        &json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    );
    let mut i = 0;
    while s.len() < TEXT_BYTES {
        sse(
            &mut s,
            Some("content_block_delta"),
            &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":delta(i)}}),
        );
        i += 1;
    }
    sse(
        &mut s,
        Some("content_block_stop"),
        &json!({"type":"content_block_stop","index":0}),
    );
    for k in 1..=TOOL_CALLS {
        sse(
            &mut s,
            Some("content_block_start"),
            &json!({"type":"content_block_start","index":k,"content_block":{"type":"tool_use","id":format!("toolu_{k:04}"),"name":"write","input":{}}}),
        );
        for f in fragments(&tool_args(k)) {
            sse(
                &mut s,
                Some("content_block_delta"),
                &json!({"type":"content_block_delta","index":k,"delta":{"type":"input_json_delta","partial_json":f}}),
            );
        }
        sse(
            &mut s,
            Some("content_block_stop"),
            &json!({"type":"content_block_stop","index":k}),
        );
    }
    sse(
        &mut s,
        Some("message_delta"),
        &json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":100000}}),
    );
    sse(
        &mut s,
        Some("message_stop"),
        &json!({"type":"message_stop"}),
    );
    s
}

fn google_stream() -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < TEXT_BYTES {
        sse(
            &mut s,
            None,
            &json!({"candidates":[{"content":{"parts":[{"text":delta(i)}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":10,"totalTokenCount":10},"modelVersion":"gemini-bench","responseId":"bench"}),
        );
        i += 1;
    }
    for k in 1..=TOOL_CALLS {
        let args: serde_json::Value = serde_json::from_str(&tool_args(k)).unwrap_or_default();
        sse(
            &mut s,
            None,
            &json!({"candidates":[{"content":{"parts":[{"functionCall":{"name":"write","args":args}}],"role":"model"},"index":0}],"modelVersion":"gemini-bench","responseId":"bench"}),
        );
    }
    sse(
        &mut s,
        None,
        &json!({"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":100000,"totalTokenCount":100010},"modelVersion":"gemini-bench","responseId":"bench"}),
    );
    s
}

fn completions_chunk(delta: serde_json::Value, finish: Option<&str>) -> serde_json::Value {
    json!({"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1754693442,"model":"gpt-bench","choices":[{"index":0,"delta":delta,"logprobs":null,"finish_reason":finish}],"usage":null})
}

fn completions_stream() -> String {
    let mut s = String::new();
    sse(
        &mut s,
        None,
        &completions_chunk(json!({"role":"assistant","content":""}), None),
    );
    let mut i = 0;
    while s.len() < TEXT_BYTES {
        sse(
            &mut s,
            None,
            &completions_chunk(json!({"content":delta(i)}), None),
        );
        i += 1;
    }
    for k in 0..TOOL_CALLS {
        sse(
            &mut s,
            None,
            &completions_chunk(
                json!({"tool_calls":[{"index":k,"id":format!("call_{k:04}"),"type":"function","function":{"name":"write","arguments":""}}]}),
                None,
            ),
        );
        for f in fragments(&tool_args(k)) {
            sse(
                &mut s,
                None,
                &completions_chunk(
                    json!({"tool_calls":[{"index":k,"function":{"arguments":f}}]}),
                    None,
                ),
            );
        }
    }
    sse(
        &mut s,
        None,
        &completions_chunk(json!({}), Some("tool_calls")),
    );
    sse(
        &mut s,
        None,
        &json!({"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1754693442,"model":"gpt-bench","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":100000,"total_tokens":100010}}),
    );
    s.push_str("data: [DONE]\n\n");
    s
}

fn responses_stream() -> String {
    let mut s = String::new();
    let response = |status: &str| json!({"id":"resp_bench","object":"response","created_at":1743082657,"status":status,"model":"gpt-bench","output":[],"usage":null});
    sse(
        &mut s,
        Some("response.created"),
        &json!({"type":"response.created","response":response("in_progress")}),
    );
    sse(
        &mut s,
        Some("response.output_item.added"),
        &json!({"type":"response.output_item.added","output_index":0,"item":{"id":"msg_bench","type":"message","status":"in_progress","content":[],"role":"assistant"}}),
    );
    sse(
        &mut s,
        Some("response.content_part.added"),
        &json!({"type":"response.content_part.added","item_id":"msg_bench","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}),
    );
    let mut text = String::new();
    let mut i = 0;
    // The closing `output_item.done` repeats the text: stream deltas for ~2/3 of the budget.
    while s.len() < TEXT_BYTES * 2 / 3 {
        let d = delta(i);
        sse(
            &mut s,
            Some("response.output_text.delta"),
            &json!({"type":"response.output_text.delta","item_id":"msg_bench","output_index":0,"content_index":0,"delta":&d}),
        );
        text.push_str(&d);
        i += 1;
    }
    sse(
        &mut s,
        Some("response.output_item.done"),
        &json!({"type":"response.output_item.done","output_index":0,"item":{"id":"msg_bench","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":text}],"role":"assistant"}}),
    );
    for k in 1..=TOOL_CALLS {
        let args = tool_args(k);
        let item = |status: &str, arguments: &str| json!({"type":"function_call","id":format!("fc_{k:04}"),"call_id":format!("call_{k:04}"),"name":"write","arguments":arguments,"status":status});
        sse(
            &mut s,
            Some("response.output_item.added"),
            &json!({"type":"response.output_item.added","output_index":k,"item":item("in_progress", "")}),
        );
        for f in fragments(&args) {
            sse(
                &mut s,
                Some("response.function_call_arguments.delta"),
                &json!({"type":"response.function_call_arguments.delta","item_id":format!("fc_{k:04}"),"output_index":k,"delta":f}),
            );
        }
        sse(
            &mut s,
            Some("response.function_call_arguments.done"),
            &json!({"type":"response.function_call_arguments.done","item_id":format!("fc_{k:04}"),"output_index":k,"arguments":&args}),
        );
        sse(
            &mut s,
            Some("response.output_item.done"),
            &json!({"type":"response.output_item.done","output_index":k,"item":item("completed", &args)}),
        );
    }
    let mut done = response("completed");
    done["usage"] = json!({"input_tokens":10,"output_tokens":100000,"total_tokens":100010,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":0}});
    sse(
        &mut s,
        Some("response.completed"),
        &json!({"type":"response.completed","response":done}),
    );
    s
}

/// Replays `body` through a fresh mapper in 16 KiB reads; returns the events produced and
/// the final message.
fn replay(api: &dyn WireApi, model: &Model, body: &[u8]) -> (usize, AssistantMessage) {
    let partial = PartialMessage::new(AssistantMessage::empty(
        api.api(),
        &model.provider,
        &model.id,
    ));
    let mut mapper = api.new_mapper(model, partial.clone(), &StreamOptions::default());
    let mut parser = SseParser::new();
    let mut sse = Vec::with_capacity(256);
    let mut out = Vec::with_capacity(256);
    let mut events = 0;
    for read in body.chunks(16 * 1024) {
        parser
            .feed(read, &mut sse)
            .expect("within the default limit");
        for e in sse.drain(..) {
            if let Err(text) = mapper.on_event(&e, &mut out) {
                panic!("{}: mapper failed: {text}", api.api());
            }
            events += out.len();
            out.clear();
        }
    }
    if let Err(text) = mapper.on_end(&mut out) {
        panic!("{}: on_end failed: {text}", api.api());
    }
    events += out.len();
    (events, partial.snapshot())
}

/// A wire API, the provider id its model uses, and its stream generator.
type Case = (Arc<dyn WireApi>, &'static str, fn() -> String);

fn bench_wire(c: &mut Criterion) {
    let apis: [Case; 4] = [
        (pi_ai::providers::anthropic(), "anthropic", anthropic_stream),
        (pi_ai::providers::google(), "google", google_stream),
        (
            pi_ai::providers::openai_completions::openai_completions(),
            "openai",
            completions_stream,
        ),
        (
            pi_ai::providers::openai_responses::openai_responses(),
            "openai",
            responses_stream,
        ),
    ];
    let mut group = c.benchmark_group("wire");
    group.sampling_mode(SamplingMode::Flat);
    for (api, provider, generate) in apis {
        let body = generate();
        let model = Model {
            id: "bench-model".into(),
            name: "bench-model".into(),
            api: api.api().into(),
            provider: provider.into(),
            ..Default::default()
        };
        let (events, message) = replay(api.as_ref(), &model, body.as_bytes());
        let tools = message
            .content
            .iter()
            .filter(|c| matches!(c, AssistantContent::ToolCall(t) if t.arguments.contains_key("content")))
            .count();
        assert_eq!(
            tools,
            TOOL_CALLS,
            "{}: every tool call must arrive whole",
            api.api()
        );
        assert!(
            message.error_message.is_none(),
            "{}: {:?}",
            api.api(),
            message.error_message
        );
        let id = api.api();
        meta(&format!("wire/{id}"), events, body.len());
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(id, |b| {
            b.iter(|| replay(api.as_ref(), &model, black_box(body.as_bytes())).0)
        });
    }
    group.finish();
}

criterion_group!(benches, bench_wire);
criterion_main!(benches);
