//! Streamed tool-call arguments cost work linear in their text, however finely they are cut:
//! the bytes allocated while a stream is parsed (what rebuilding or copying the partial value
//! per fragment would make quadratic) stay within a constant factor of the text, for the
//! parser on its own and through the wire mappers that publish the partial arguments.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use pi_ai::partial_json::{PartialJsonParser, parse_streaming_json};
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::providers::{AnthropicMessages, WireApi};
use pi_ai::sse::SseEvent;
use pi_ai::{AssistantContent, AssistantMessage, Model, PartialMessage, StreamOptions};
use serde_json::{Value, json};

/// The system allocator, counting the bytes each thread asks for (a reallocation counts its
/// new size), so parallel tests do not see each other's work.
struct Counting;

thread_local! {
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

fn count(bytes: usize) {
    let _ = ALLOCATED.try_with(|c| c.set(c.get().saturating_add(bytes as u64)));
}

// SAFETY: every call is forwarded to `System` unchanged; the counter is a thread-local `Cell`
// with a constant initializer (no allocation, no reentrancy).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes this thread allocated while `f` ran.
fn allocated_by(f: impl FnOnce()) -> u64 {
    let before = ALLOCATED.with(Cell::get);
    f();
    ALLOCATED.with(Cell::get) - before
}

/// Argument texts cut into many fragments: `(name, fragments)`.
fn streams() -> Vec<(&'static str, Vec<String>)> {
    let repeat = |head: &str, piece: &str, times: usize, tail: &str| {
        let mut out = vec![head.to_owned()];
        out.extend(std::iter::repeat_n(piece.to_owned(), times));
        out.push(tail.to_owned());
        out
    };
    let mut members = vec!["{".to_owned()];
    members.extend((0..8192).map(|i| format!("\"key{i}\":[{i},true,\"v{i}\"],")));
    members.push("\"end\":null}".to_owned());
    let deep = format!("{}\"content\":\"", "{\"a\":[".repeat(100));
    vec![
        // A file's content in 16-byte fragments (what a `write` call streams).
        (
            "string",
            repeat(
                r#"{"path":"a.rs","content":""#,
                "let x = 42;\\n   ",
                16384,
                "\"}",
            ),
        ),
        ("members", members),
        (
            "deep string",
            repeat(&deep, "0123456789abcdef", 16384, "\""),
        ),
        // Whitespace inside a string is held back until something else follows.
        (
            "spaces",
            repeat(r#"{"content":""#, "                ", 16384, "x\"}"),
        ),
        // A raw newline makes the text irregular: pi's repair cascade on the whole text.
        (
            "irregular",
            repeat(
                "{\"a\":\"x\ny\",\"content\":\"",
                "let x = 42;\\n   ",
                65536,
                "\"}",
            ),
        ),
        ("long number", repeat(r#"{"n":1"#, "7", 262144, "}")),
        (
            "after the end",
            repeat(r#"{"content":"done"}"#, "  ", 65536, ""),
        ),
    ]
}

/// The linear budget for `text_len` bytes in `fragments` fragments: a constant factor of the
/// text plus a constant per fragment (the first `EXACT_BYTES` of irregular text are re-read
/// per fragment, as pi does).
fn budget(text_len: usize, fragments: usize) -> u64 {
    (64 * text_len + 256 * fragments + 16 * 1024 * 1024) as u64
}

#[test]
fn the_parser_allocates_linearly_in_the_text() {
    for (name, fragments) in streams() {
        let text_len: usize = fragments.iter().map(String::len).sum();
        let mut parser = PartialJsonParser::new();
        let work = allocated_by(|| {
            for fragment in &fragments {
                parser.push(fragment);
                std::hint::black_box(parser.arguments().len());
            }
        });
        assert!(
            work <= budget(text_len, fragments.len()),
            "{name}: {work} bytes allocated for {text_len} bytes of text in {} fragments",
            fragments.len()
        );
        // The value is still pi's.
        assert_eq!(
            parser.value(),
            parse_streaming_json(parser.buffer()),
            "{name}"
        );
    }
}

/// The published partial arguments stay exact on regular text, however it is cut.
#[test]
fn published_arguments_are_exact_after_every_fragment() {
    let text = r#"{"path":"a b.rs","content":"l1\n  l2 \"q\" \u00e9  ","n":[-1.5e3,true,null,{"k":"v"}],"z":12}"#;
    for size in [1, 2, 3, 7] {
        let mut parser = PartialJsonParser::new();
        let bytes = text.as_bytes();
        for start in (0..bytes.len()).step_by(size) {
            let end = (start + size).min(bytes.len());
            parser.push(std::str::from_utf8(&bytes[start..end]).unwrap());
            assert!(parser.is_current());
            assert_eq!(
                parser.arguments(),
                &parse_streaming_json(parser.buffer()),
                "{:?}",
                parser.buffer()
            );
        }
    }
}

fn model(api: &str) -> Model {
    Model {
        id: "m".into(),
        name: "m".into(),
        api: api.into(),
        provider: "p".into(),
        ..Default::default()
    }
}

fn event(name: Option<&str>, data: Value) -> SseEvent {
    SseEvent {
        event: name.map(str::to_owned),
        data: data.to_string(),
        ..Default::default()
    }
}

/// One tool call whose arguments arrive as `fragments`, as `api` streams it.
fn tool_call_stream(api: &str, fragments: &[String]) -> Vec<SseEvent> {
    let mut events = Vec::new();
    match api {
        "anthropic-messages" => {
            events.push(event(
                Some("message_start"),
                json!({"type": "message_start", "message": {"id": "m", "model": "m",
                    "usage": {"input_tokens": 1, "output_tokens": 1}}}),
            ));
            events.push(event(
                Some("content_block_start"),
                json!({"type": "content_block_start", "index": 0, "content_block":
                    {"type": "tool_use", "id": "t1", "name": "write", "input": {}}}),
            ));
            for f in fragments {
                events.push(event(
                    Some("content_block_delta"),
                    json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "input_json_delta", "partial_json": f}}),
                ));
            }
            events.push(event(
                Some("content_block_stop"),
                json!({"type": "content_block_stop", "index": 0}),
            ));
            events.push(event(
                Some("message_delta"),
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                    "usage": {"output_tokens": 2}}),
            ));
            events.push(event(Some("message_stop"), json!({"type": "message_stop"})));
        }
        "openai-completions" => {
            for (i, f) in fragments.iter().enumerate() {
                let mut call = json!({"index": 0, "function": {"arguments": f}});
                if i == 0 {
                    call["id"] = json!("t1");
                    call["function"]["name"] = json!("write");
                }
                events.push(event(
                    None,
                    json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}),
                ));
            }
            events.push(event(
                None,
                json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            ));
        }
        _ => {
            events.push(event(
                None,
                json!({"type": "response.output_item.added", "output_index": 0, "item":
                    {"type": "function_call", "id": "fc", "call_id": "t1", "name": "write",
                     "arguments": ""}}),
            ));
            for f in fragments {
                events.push(event(
                    None,
                    json!({"type": "response.function_call_arguments.delta", "output_index": 0,
                        "delta": f}),
                ));
            }
            events.push(event(
                None,
                json!({"type": "response.output_item.done", "output_index": 0, "item":
                    {"type": "function_call", "id": "fc", "call_id": "t1", "name": "write",
                     "arguments": fragments.concat()}}),
            ));
            events.push(event(
                None,
                json!({"type": "response.completed", "response": {"status": "completed",
                    "usage": {"input_tokens": 1, "output_tokens": 1}}}),
            ));
        }
    }
    events
}

/// Through each wire mapper: publishing the partial arguments with every `toolcall_delta`
/// costs a constant per fragment plus a constant factor of the text, and the final arguments
/// are the whole text's.
#[test]
fn the_mappers_publish_partial_arguments_in_linear_work() {
    let apis: [&dyn WireApi; 3] = [&AnthropicMessages, &OpenAiCompletions, &OpenAiResponses];
    let mut fragments = vec![r#"{"path":"a.rs","content":""#.to_owned()];
    fragments.extend(std::iter::repeat_n("let x = 42;\\n   ".to_owned(), 16384));
    fragments.push("\"}".to_owned());
    let text = fragments.concat();
    let expected: Value = serde_json::from_str(&text).unwrap();
    for api in apis {
        let events = tool_call_stream(api.api(), &fragments);
        let m = model(api.api());
        let partial = PartialMessage::new(AssistantMessage::empty(api.api(), "p", "m"));
        let mut mapper = api.new_mapper(&m, partial.clone(), &StreamOptions::default());
        let mut out = Vec::new();
        let mut deltas = 0;
        let work = allocated_by(|| {
            for e in &events {
                mapper.on_event(e, &mut out).unwrap();
                deltas += out.iter().filter(|e| e.kind() == "toolcall_delta").count();
                out.clear();
            }
            mapper.on_end(&mut out).unwrap();
        });
        assert_eq!(deltas, fragments.len(), "{}", api.api());
        let event_bytes: usize = events.iter().map(|e| e.data.len()).sum();
        assert!(
            work <= (16 * event_bytes + 64 * text.len() + 16 * 1024 * 1024) as u64,
            "{}: {work} bytes allocated for {} events ({event_bytes} bytes)",
            api.api(),
            events.len()
        );
        let message = partial.snapshot();
        match message.content.as_slice() {
            [AssistantContent::ToolCall(tc)] => {
                assert_eq!(
                    Value::Object(tc.arguments.clone()),
                    expected,
                    "{}",
                    api.api()
                );
                assert_eq!(tc.arguments_error, None);
            }
            other => panic!("{}: {other:?}", api.api()),
        }
    }
}
