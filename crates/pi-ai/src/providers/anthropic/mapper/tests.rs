//! Unit tests of the Anthropic mapper on hand-written SSE events.

use serde_json::json;

use super::*;
use crate::types::{AssistantMessage, ModelCost};

fn model() -> Model {
    Model {
        id: "claude-x".into(),
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
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

fn sse(event: &str, data: serde_json::Value) -> SseEvent {
    SseEvent {
        event: Some(event.into()),
        data: data.to_string(),
        ..Default::default()
    }
}

fn run_with(model: &Model, events: &[SseEvent]) -> Run {
    let partial = PartialMessage::new(AssistantMessage::empty(
        &model.api,
        &model.provider,
        &model.id,
    ));
    let mut mapper = AnthropicMapper::new(model, partial.clone(), false);
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

fn run(events: &[SseEvent]) -> Run {
    run_with(&model(), events)
}

fn start(usage: serde_json::Value) -> SseEvent {
    sse(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude-x-2025", "usage": usage}}),
    )
}

fn delta(stop: &str, usage: serde_json::Value) -> SseEvent {
    sse(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": usage}),
    )
}

fn stop() -> SseEvent {
    sse("message_stop", json!({"type": "message_stop"}))
}

fn block_start(index: u64, block: serde_json::Value) -> SseEvent {
    sse(
        "content_block_start",
        json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

fn block_delta(index: u64, d: serde_json::Value) -> SseEvent {
    sse(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": d}),
    )
}

fn block_stop(index: u64) -> SseEvent {
    sse(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    )
}

#[test]
fn usage_cache_fields_1h_split_cost_and_server_model() {
    let r = run(&[
        start(
            json!({"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 100,
                     "cache_creation_input_tokens": 40,
                     "cache_creation": {"ephemeral_1h_input_tokens": 30}}),
        ),
        delta(
            "end_turn",
            json!({"output_tokens": 20, "input_tokens": null,
                                 "output_tokens_details": {"thinking_tokens": 7}}),
        ),
        stop(),
    ]);
    assert_eq!(r.result, Ok(()));
    let u = r.message.usage;
    assert_eq!(
        (u.input, u.output, u.cache_read, u.cache_write),
        (10.0, 20.0, 100.0, 40.0)
    );
    assert_eq!(u.cache_write_1h, Some(30.0));
    assert_eq!(u.reasoning, Some(7.0));
    assert_eq!(u.total_tokens, 170.0);
    // 10 short-write tokens at 3.75, 30 one-hour tokens at 2 × input (3).
    assert_eq!(
        u.cost.cache_write,
        (3.75 * 10.0 + 3.0 * 2.0 * 30.0) / 1_000_000.0
    );
    assert_eq!(u.cost.output, (15.0 / 1_000_000.0) * 20.0);
    assert_eq!(r.message.model, "claude-x-2025");
    assert_eq!(r.message.response_id.as_deref(), Some("msg_1"));
    assert_eq!(r.message.raw_stop_reason.as_deref(), Some("end_turn"));
    assert_eq!(r.message.stop_reason, StopReason::Stop);
}

#[test]
fn allowed_fallback_models_use_their_own_prices() {
    let mut m = model();
    m.compat = Some(
        serde_json::from_value(json!({"allowedFallbackModels": [
            {"provider": "anthropic", "model": "claude-fallback", "cost": {"input": 1, "output": 2}}
        ]}))
        .unwrap(),
    );
    let start = sse(
        "message_start",
        json!({"type": "message_start", "message": {"id": "m", "model": "claude-fallback",
               "usage": {"input_tokens": 1000000, "output_tokens": 0}}}),
    );
    let r = run_with(&m, &[start, delta("end_turn", json!({})), stop()]);
    assert_eq!(r.message.usage.cost.input, 1.0);
}

#[test]
fn stop_reasons_map_and_refusals_fail() {
    for (raw, reason) in [
        ("end_turn", StopReason::Stop),
        ("pause_turn", StopReason::Stop),
        ("stop_sequence", StopReason::Stop),
        ("max_tokens", StopReason::Length),
        ("tool_use", StopReason::ToolUse),
    ] {
        let r = run(&[start(json!({})), delta(raw, json!({})), stop()]);
        assert_eq!((r.result, r.message.stop_reason), (Ok(()), reason), "{raw}");
    }
    let r = run(&[start(json!({})), delta("refusal", json!({})), stop()]);
    assert_eq!(
        r.result,
        Err("The model refused to complete the request".into())
    );
    let refusal = sse(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": "refusal",
               "stop_details": {"explanation": "Nope."}}}),
    );
    let r = run(&[start(json!({})), refusal, stop()]);
    assert_eq!(r.result, Err("Nope.".into()));
    let r = run(&[start(json!({})), delta("sensitive", json!({})), stop()]);
    assert_eq!(r.result, Err("Provider stopped with: sensitive".into()));
    let r = run(&[start(json!({})), delta("brand_new", json!({})), stop()]);
    assert_eq!(r.result, Err("Unhandled stop reason: brand_new".into()));
}

#[test]
fn streams_cut_before_their_terminal_event_fail_with_pis_texts() {
    let r = run(&[start(json!({})), delta("end_turn", json!({}))]);
    assert_eq!(
        r.result,
        Err("Anthropic stream ended before message_stop".into())
    );
    let r = run(&[]);
    assert_eq!(
        r.result,
        Err("Anthropic stream ended without a stop reason".into())
    );
    let r = run(&[start(json!({})), stop()]);
    assert_eq!(
        r.result,
        Err("Anthropic stream ended without a stop reason".into())
    );
}

#[test]
fn error_events_and_unparsable_payloads() {
    let err = SseEvent {
        event: Some("error".into()),
        data: "{\"type\":\"error\"}".into(),
        ..Default::default()
    };
    assert_eq!(
        run(&[start(json!({})), err]).result,
        Err("{\"type\":\"error\"}".into())
    );
    let bad = SseEvent {
        event: Some("message_start".into()),
        data: String::new(),
        ..Default::default()
    };
    assert_eq!(
        run(&[bad]).result,
        Err(
            "Could not parse Anthropic SSE event message_start: Unexpected end of JSON input; \
             data=; raw=event: message_start\\ndata: "
                .into()
        )
    );
    // Pings and unnamed events are skipped without parsing.
    let ping = SseEvent {
        event: Some("ping".into()),
        data: "not json".into(),
        ..Default::default()
    };
    let unnamed = SseEvent {
        data: "not json".into(),
        ..Default::default()
    };
    let r = run(&[
        start(json!({})),
        ping,
        unnamed,
        delta("end_turn", json!({})),
        stop(),
    ]);
    assert_eq!(r.result, Ok(()));
}

#[test]
fn thinking_signatures_accumulate_without_events_and_redacted_blocks_are_complete() {
    let r = run(&[
        start(json!({})),
        block_start(0, json!({"type": "thinking", "thinking": ""})),
        block_delta(0, json!({"type": "thinking_delta", "thinking": "a"})),
        block_delta(0, json!({"type": "signature_delta", "signature": "s1"})),
        block_delta(0, json!({"type": "signature_delta", "signature": "s2"})),
        block_stop(0),
        block_start(1, json!({"type": "redacted_thinking", "data": "blob"})),
        block_stop(1),
        delta("end_turn", json!({})),
        stop(),
    ]);
    assert_eq!(r.result, Ok(()));
    let kinds: Vec<&str> = r.events.iter().map(|e| e.kind()).collect();
    assert_eq!(
        kinds,
        [
            "thinking_start",
            "thinking_delta",
            "thinking_end",
            "thinking_start",
            "thinking_end"
        ]
    );
    assert_eq!(
        r.message.content,
        vec![
            AssistantContent::Thinking(ThinkingContent {
                thinking: "a".into(),
                thinking_signature: Some("s1s2".into()),
                redacted: None,
            }),
            AssistantContent::Thinking(ThinkingContent {
                thinking: "[Reasoning redacted]".into(),
                thinking_signature: Some("blob".into()),
                redacted: Some(true),
            }),
        ]
    );
}

#[test]
fn blocks_are_matched_by_wire_index_and_server_blocks_skipped() {
    let r = run(&[
        start(json!({})),
        block_start(
            0,
            json!({"type": "server_tool_use", "id": "srv", "name": "search"}),
        ),
        block_delta(
            0,
            json!({"type": "input_json_delta", "partial_json": "{\"q\":1}"}),
        ),
        block_start(1, json!({"type": "text", "text": "seed "})),
        block_start(
            2,
            json!({"type": "tool_use", "id": "t1", "name": "read", "input": {}}),
        ),
        block_delta(
            2,
            json!({"type": "input_json_delta", "partial_json": "{\"path\":"}),
        ),
        block_delta(1, json!({"type": "text_delta", "text": "more"})),
        block_delta(
            2,
            json!({"type": "input_json_delta", "partial_json": "\"a.txt\"}"}),
        ),
        block_stop(0),
        block_stop(2),
        block_stop(1),
        // A delta for a closed block is ignored.
        block_delta(1, json!({"type": "text_delta", "text": "late"})),
        delta("tool_use", json!({})),
        stop(),
    ]);
    assert_eq!(r.result, Ok(()));
    assert_eq!(r.message.content.len(), 2);
    assert_eq!(r.message.text(), "seed more");
    let call = r.message.tool_calls().next().unwrap();
    assert_eq!(call.arguments.get("path"), Some(&json!("a.txt")));
    let end = r
        .events
        .iter()
        .find_map(|e| match e {
            Ev::ToolcallEnd {
                content_index,
                tool_call,
                ..
            } => Some((*content_index, tool_call.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(end.0, 1);
    assert_eq!(&*end.1, call);
    let deltas: Vec<String> = r
        .events
        .iter()
        .filter_map(|e| match e {
            Ev::ToolcallDelta { delta, .. } => Some(delta.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["{\"path\":", "\"a.txt\"}"]);
}

#[test]
fn a_fallback_block_is_skipped_first_and_fails_after_content() {
    let fallback = json!({"type": "fallback"});
    let r = run(&[
        start(json!({})),
        block_start(0, fallback.clone()),
        delta("end_turn", json!({})),
        stop(),
    ]);
    assert_eq!(r.result, Ok(()));
    assert!(r.message.content.is_empty());
    let r = run(&[
        start(json!({})),
        block_start(0, json!({"type": "text", "text": ""})),
        block_start(1, fallback),
    ]);
    assert_eq!(
        r.result,
        Err("Anthropic performed an unsupported mid-output model fallback".into())
    );
}

#[test]
fn input_transformations_become_a_diagnostic() {
    let start = sse(
        "message_start",
        json!({"type": "message_start", "message": {"id": "m", "model": "claude-x", "usage": {},
               "input_transformations": [{"type": "truncate", "path": "messages.0", "reason": null}]}}),
    );
    let r = run(&[start, delta("end_turn", json!({})), stop()]);
    let diagnostics = r.message.diagnostics.unwrap();
    assert_eq!(diagnostics[0].kind, "anthropic_input_transformations");
    assert_eq!(
        diagnostics[0].details,
        Some(json!({"transformations": [{"type": "truncate", "path": "messages.0"}]}))
    );
}

/// Regression (fuzz target `mapper_anthropic`): a `content_block_stop` for an index
/// that was never opened left the real block open through a successful end, so its `text_end`
/// never came. Blocks still open at a successful end are closed in order; a tool call gets its
/// final argument parse.
#[test]
fn blocks_left_open_by_a_malformed_stream_are_closed_at_a_successful_end() {
    let r = run(&[
        start(json!({"input_tokens": 1})),
        block_start(0, json!({"type": "text", "text": ""})),
        block_delta(0, json!({"type": "text_delta", "text": "Hi"})),
        block_stop(5),
        block_start(
            1,
            json!({"type": "tool_use", "id": "t1", "name": "read", "input": {}}),
        ),
        block_delta(
            1,
            json!({"type": "input_json_delta", "partial_json": "{\"path\":\"a\"}"}),
        ),
        delta("tool_use", json!({"output_tokens": 2})),
        stop(),
    ]);
    assert_eq!(r.result, Ok(()));
    let ends: Vec<(usize, &str)> = r
        .events
        .iter()
        .filter(|e| e.kind().ends_with("_end"))
        .map(|e| (e.content_index().unwrap(), e.kind()))
        .collect();
    assert_eq!(ends, [(0, "text_end"), (1, "toolcall_end")]);
    match r.events.last() {
        Some(Ev::ToolcallEnd { tool_call, .. }) => {
            assert_eq!(tool_call.arguments["path"], "a")
        }
        other => panic!("{other:?}"),
    }
    // On failure open blocks get no end (ordering rule 5): unchanged.
    let r = run(&[
        start(json!({"input_tokens": 1})),
        block_start(0, json!({"type": "text", "text": ""})),
        delta("end_turn", json!({"output_tokens": 2})),
    ]);
    assert!(r.result.is_err());
    assert!(r.events.iter().all(|e| !e.kind().ends_with("_end")));
}

/// Regression (fuzz target `mapper_anthropic`): a block started without an `index` was never
/// tracked, so nothing could end it. It is tracked like any other; events without an index
/// reach it (pi's lookup compares `undefined === undefined`), and a successful end closes it.
#[test]
fn a_block_started_without_an_index_is_tracked_and_closed() {
    let no_index = |event: &str, data: serde_json::Value| sse(event, data);
    let r = run(&[
        start(json!({"input_tokens": 1})),
        no_index(
            "content_block_start",
            json!({"type": "content_block_start", "content_block": {"type": "text", "text": ""}}),
        ),
        no_index(
            "content_block_delta",
            json!({"type": "content_block_delta", "delta": {"type": "text_delta", "text": "Hi"}}),
        ),
        delta("end_turn", json!({"output_tokens": 2})),
        stop(),
    ]);
    assert_eq!(r.result, Ok(()));
    let kinds: Vec<&str> = r.events.iter().map(|e| e.kind()).collect();
    assert_eq!(kinds, ["text_start", "text_delta", "text_end"]);
    assert_eq!(r.message.content.len(), 1);
}

#[test]
fn oauth_mode_maps_claude_code_tool_names_back() {
    let events = [
        start(json!({})),
        block_start(0, json!({"type": "tool_use", "id": "t1", "name": "Read"})),
        block_stop(0),
        delta("tool_use", json!({})),
        stop(),
    ];
    let m = model();
    for (oauth, name) in [(true, "read"), (false, "Read")] {
        let partial = PartialMessage::new(AssistantMessage::empty(&m.api, &m.provider, &m.id));
        let mut mapper = AnthropicMapper::new(&m, partial.clone(), oauth);
        let mut out = Vec::new();
        for e in &events {
            mapper.on_event(e, &mut out).unwrap();
        }
        mapper.on_end(&mut out).unwrap();
        assert_eq!(partial.read().tool_calls().next().unwrap().name, name);
    }
}

/// The events of one text block whose single delta's data is `data` verbatim.
fn text_block_with_delta(data: &str) -> Run {
    run(&[
        start(json!({"input_tokens": 1})),
        block_start(0, json!({"type": "text", "text": ""})),
        SseEvent {
            event: Some("content_block_delta".into()),
            data: data.into(),
            ..Default::default()
        },
        block_stop(0),
        delta("end_turn", json!({"output_tokens": 1})),
        stop(),
    ])
}

fn text_of(run: &Run) -> String {
    match &run.message.content[..] {
        [AssistantContent::Text(t)] => t.text.clone(),
        other => panic!("one text block expected, got {other:?}"),
    }
}

#[test]
fn typed_and_general_reads_of_a_delta_agree() {
    // (data, the text the block ends with): each shape read by the typed path (escapes,
    // unknown keys, null index) or rejected by it and read by the general path (a
    // non-string field, a duplicate key, a raw control character that needs repair, a
    // numeric index written as a float, a wrong `type`).
    let cases: [(&str, &str); 9] = [
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\"b\u00e9\n"}}"#,
            "a\"b\u{e9}\n",
        ),
        (
            r#"{"extra":{"x":[1,2]},"type":"content_block_delta","index":0,"delta":{"text":"hi","type":"text_delta","more":null}}"#,
            "hi",
        ),
        (
            r#"{"type":"content_block_delta","index":0.0,"delta":{"type":"text_delta","text":"f"}}"#,
            "f",
        ),
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":5}}"#,
            "",
        ),
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","text":"y"}}"#,
            "y",
        ),
        (
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"l1\nl2\"}}",
            "l1\nl2",
        ),
        (
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"other block"}}"#,
            "",
        ),
        (
            r#"{"type":"message_stop_not","index":0,"delta":{"type":"text_delta","text":"no"}}"#,
            "",
        ),
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"t"}}"#,
            "",
        ),
    ];
    for (data, expected) in cases {
        let r = text_block_with_delta(data);
        assert_eq!(r.result, Ok(()), "{data}");
        assert_eq!(text_of(&r), expected, "{data}");
        let deltas: Vec<&str> = r
            .events
            .iter()
            .filter_map(|e| match e {
                Ev::TextDelta { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        let want: Vec<&str> = if expected.is_empty() && !data.contains(r#""text":5"#) {
            vec![]
        } else {
            vec![expected]
        };
        assert_eq!(deltas, want, "{data}");
    }
    // A payload neither path can read fails the stream with pi's text, as before.
    let r = text_block_with_delta(r#"{"type":"content_block_delta","index":0,"delta":{"#);
    assert!(
        r.result.as_ref().is_err_and(
            |e| e.starts_with("Could not parse Anthropic SSE event content_block_delta")
        ),
        "{:?}",
        r.result
    );
}
