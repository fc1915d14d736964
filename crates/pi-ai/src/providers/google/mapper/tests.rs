//! Unit tests of the Google mapper on hand-written chunks.

use serde_json::json;

use super::*;
use crate::types::{AssistantMessage, ModelCost};

fn model() -> Model {
    Model {
        id: "gemini-x".into(),
        api: "google-generative-ai".into(),
        provider: "google".into(),
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

struct Run {
    events: Vec<Ev>,
    result: Result<(), String>,
    message: AssistantMessage,
}

fn chunk(v: serde_json::Value) -> SseEvent {
    SseEvent {
        data: v.to_string(),
        ..Default::default()
    }
}

fn parts(parts: serde_json::Value, finish: Option<&str>) -> SseEvent {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}});
    if let Some(f) = finish {
        candidate["finishReason"] = json!(f);
    }
    chunk(json!({"candidates": [candidate], "responseId": "r1"}))
}

fn run(events: &[SseEvent]) -> Run {
    let m = model();
    let partial = PartialMessage::new(AssistantMessage::empty(&m.api, &m.provider, &m.id));
    let mut mapper = GoogleMapper::new(&m, partial.clone(), super::super::Flavor::Gemini);
    let mut out = Vec::new();
    let mut result = Ok(());
    for e in events {
        result = mapper.on_event(e, &mut out);
        if result.is_err() {
            break;
        }
    }
    if result.is_ok() {
        result = mapper.on_end(&mut out);
    }
    Run {
        events: out,
        result: result.map_err(|e| e.to_string()),
        message: partial.snapshot(),
    }
}

fn kinds(events: &[Ev]) -> Vec<String> {
    events
        .iter()
        .map(|e| format!("{}[{}]", e.kind(), e.content_index().unwrap_or(99)))
        .collect()
}

#[test]
fn thought_and_text_parts_switch_blocks_and_keep_the_last_signature() {
    let r = run(&[
        parts(
            json!([{"text": "think ", "thought": true, "thoughtSignature": "c2ln"}]),
            None,
        ),
        parts(json!([{"text": "more", "thought": true}]), None),
        parts(
            json!([{"text": "Answer", "thoughtSignature": "dHh0"}, {"text": "!"}]),
            None,
        ),
        parts(json!([{"text": "", "thought": true}]), Some("STOP")),
    ]);
    assert_eq!(r.result, Ok(()));
    assert_eq!(
        kinds(&r.events),
        [
            "thinking_start[0]",
            "thinking_delta[0]",
            "thinking_delta[0]",
            "thinking_end[0]",
            "text_start[1]",
            "text_delta[1]",
            "text_delta[1]",
            "text_end[1]",
            "thinking_start[2]",
            "thinking_delta[2]",
            "thinking_end[2]",
        ]
    );
    assert_eq!(
        r.message.content[0],
        AssistantContent::Thinking(ThinkingContent {
            thinking: "think more".into(),
            thinking_signature: Some("c2ln".into()),
            redacted: None,
        })
    );
    assert_eq!(
        r.message.content[1],
        AssistantContent::Text(TextContent {
            text: "Answer!".into(),
            text_signature: Some("dHh0".into()),
        })
    );
    assert_eq!(r.message.response_id.as_deref(), Some("r1"));
}

#[test]
fn function_calls_close_the_block_keep_ids_and_synthesize_missing_or_repeated_ones() {
    let r = run(&[
        parts(json!([{"text": "Let me"}]), None),
        parts(
            json!([
                {"functionCall": {"id": "c1", "name": "read", "args": {"path": "a", "n": 1.5}},
                 "thoughtSignature": "c2ln"},
                {"functionCall": {"id": "c1", "name": "read", "args": {"path": "b"}}},
                {"functionCall": {"name": "ls"}}
            ]),
            Some("STOP"),
        ),
    ]);
    assert_eq!(r.result, Ok(()));
    assert_eq!(r.message.stop_reason, StopReason::ToolUse);
    assert_eq!(r.message.raw_stop_reason.as_deref(), Some("STOP"));
    let calls: Vec<_> = r.message.tool_calls().collect();
    assert_eq!(calls[0].id, "c1");
    assert_eq!(calls[0].thought_signature.as_deref(), Some("c2ln"));
    assert!(
        calls[1].id.starts_with("read_") && calls[1].id != "c1",
        "{}",
        calls[1].id
    );
    assert!(calls[2].id.starts_with("ls_"), "{}", calls[2].id);
    assert!(calls[2].arguments.is_empty());
    let counters: Vec<u64> = calls[1..]
        .iter()
        .map(|c| c.id.rsplit('_').next().unwrap().parse().unwrap())
        .collect();
    assert!(counters[1] > counters[0]);
    assert_eq!(
        &kinds(&r.events)[..5],
        [
            "text_start[0]",
            "text_delta[0]",
            "text_end[0]",
            "toolcall_start[1]",
            "toolcall_delta[1]"
        ]
    );
    let first_delta = r
        .events
        .iter()
        .find_map(|e| match e {
            Ev::ToolcallDelta { delta, .. } => Some(delta.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(first_delta, r#"{"path":"a","n":1.5}"#);
}

#[test]
fn finish_reasons_map_and_failures_use_pis_texts() {
    let r = run(&[parts(json!([{"text": "x"}]), Some("MAX_TOKENS"))]);
    assert_eq!(
        (r.result, r.message.stop_reason),
        (Ok(()), StopReason::Length)
    );
    let r = run(&[parts(json!([{"text": "x"}]), Some("SAFETY"))]);
    assert_eq!(r.result, Err("Provider stopped with: SAFETY".into()));
    assert_eq!(kinds(&r.events).last().unwrap(), "text_end[0]");
    let r = run(&[parts(json!([{"text": "x"}]), Some("NEW_REASON"))]);
    assert_eq!(r.result, Err("Unhandled stop reason: NEW_REASON".into()));
    let r = run(&[parts(json!([{"text": "x"}]), None)]);
    assert_eq!(
        r.result,
        Err("Google stream ended without a finish reason".into())
    );
    // An in-stream error object carries no candidates: the stream ends without a reason.
    let r = run(&[chunk(json!({"error": {"code": 500, "message": "boom"}}))]);
    assert_eq!(
        r.result,
        Err("Google stream ended without a finish reason".into())
    );
}

#[test]
fn the_last_usage_metadata_replaces_usage() {
    let r = run(&[
        chunk(json!({"usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5}})),
        chunk(json!({
            "candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 1000, "cachedContentTokenCount": 600,
                              "candidatesTokenCount": 20, "thoughtsTokenCount": 30,
                              "totalTokenCount": 1050}
        })),
    ]);
    let u = r.message.usage;
    assert_eq!(
        (
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.reasoning,
            u.total_tokens
        ),
        (400.0, 50.0, 600.0, 0.0, Some(30.0), 1050.0)
    );
    assert_eq!(u.cache_write_1h, None);
    assert_eq!(u.cost.cache_read, (0.3 / 1_000_000.0) * 600.0);
}

#[test]
fn bad_json_fails_and_empty_events_are_skipped() {
    let r = run(&[SseEvent::default(), chunk(json!({}))]);
    assert_eq!(
        r.result,
        Err("Google stream ended without a finish reason".into())
    );
    let bad = SseEvent {
        data: "{nope".into(),
        ..Default::default()
    };
    let r = run(&[bad]);
    // The reference (Node 22) reports `JSON.parse`'s own message.
    assert_eq!(
        r.result,
        Err("Expected property name or '}' in JSON at position 1 (line 1 column 2)".into())
    );
}
