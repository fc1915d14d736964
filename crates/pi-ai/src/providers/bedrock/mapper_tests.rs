use serde_json::json;

use super::*;
use crate::providers::BodyDecoder;
use crate::providers::bedrock::EventStreamDecoder;
use crate::testkit::EventStreamBuilder;
use crate::types::AssistantMessage;

fn model() -> Model {
    crate::models::get_builtin_model(
        "amazon-bedrock",
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
    )
    .cloned()
    .expect("catalog model")
}

/// Decodes `body` in `chunk`-byte reads into a fresh mapper, as the driver does: the event
/// kinds, the final message and the first failure.
fn run(body: &[u8], chunk: usize) -> (Vec<&'static str>, AssistantMessage, Option<String>) {
    let model = model();
    let partial = PartialMessage::new(AssistantMessage::empty(
        &model.api,
        &model.provider,
        &model.id,
    ));
    let mut mapper = BedrockMapper::new(&model, partial.clone());
    let mut decoder = EventStreamDecoder::new();
    let mut events = Vec::new();
    let mut out = Vec::new();
    let mut failure = None;
    'read: {
        for piece in body.chunks(chunk.max(1)) {
            let fed = decoder.feed(piece, &mut events);
            for event in events.drain(..) {
                if let Err(e) = mapper.on_event(&event, &mut out) {
                    failure = Some(e.to_string());
                    break 'read;
                }
            }
            if let Err(e) = fed {
                failure = Some(e.to_string());
                break 'read;
            }
        }
        let finished = decoder.finish(&mut events);
        for event in events.drain(..) {
            if let Err(e) = mapper.on_event(&event, &mut out) {
                failure = Some(e.to_string());
                break 'read;
            }
        }
        if let Err(e) = finished.and_then(|()| mapper.on_end(&mut out)) {
            failure = Some(e.to_string());
        }
    }
    if failure.is_some() {
        mapper.on_failure();
    }
    let kinds = out.iter().map(Ev::kind).collect();
    (kinds, partial.snapshot(), failure)
}

fn tool_turn() -> Vec<u8> {
    EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Let me look."}}}),
        )
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig-1"}}}),
        )
        .event("contentBlockStop", &json!({"contentBlockIndex": 0}))
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 1, "delta": {"text": "Reading "}}),
        )
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 1, "delta": {"text": "it."}}),
        )
        .event("contentBlockStop", &json!({"contentBlockIndex": 1}))
        .event(
            "contentBlockStart",
            &json!({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "read"}}}),
        )
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"path\":"}}}),
        )
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "\"a.txt\"}"}}}),
        )
        .event("contentBlockStop", &json!({"contentBlockIndex": 2}))
        .event("messageStop", &json!({"stopReason": "tool_use"}))
        .event(
            "metadata",
            &json!({
                "usage": {"inputTokens": 100, "outputTokens": 20, "totalTokens": 170,
                          "cacheReadInputTokens": 40, "cacheWriteInputTokens": 10},
                "metrics": {"latencyMs": 12}
            }),
        )
        .build()
}

#[test]
fn a_tool_turn_maps_as_pi_does_in_any_read_size() {
    let body = tool_turn();
    let (kinds, message, err) = run(&body, body.len());
    assert_eq!(err, None);
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
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_end",
        ]
    );
    let AssistantContent::Thinking(t) = &message.content[0] else {
        panic!("thinking first: {:?}", message.content);
    };
    assert_eq!(t.thinking, "Let me look.");
    assert_eq!(t.thinking_signature.as_deref(), Some("sig-1"));
    let AssistantContent::Text(text) = &message.content[1] else {
        panic!("text second");
    };
    assert_eq!(text.text, "Reading it.");
    let AssistantContent::ToolCall(call) = &message.content[2] else {
        panic!("tool call third");
    };
    assert_eq!(call.id, "tooluse_1");
    assert_eq!(call.name, "read");
    assert_eq!(
        serde_json::Value::Object(call.arguments.clone()),
        json!({"path": "a.txt"})
    );
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(message.raw_stop_reason.as_deref(), Some("tool_use"));
    assert_eq!(message.usage.input, 100.0);
    assert_eq!(message.usage.output, 20.0);
    assert_eq!(message.usage.cache_read, 40.0);
    assert_eq!(message.usage.cache_write, 10.0);
    assert_eq!(message.usage.total_tokens, 170.0);
    // $3 / $15 / $0.30 / $3.75 per million tokens.
    let expected = (100.0 * 3.0 + 20.0 * 15.0 + 40.0 * 0.3 + 10.0 * 3.75) / 1e6;
    assert!((message.usage.cost.total - expected).abs() < 1e-12);
    for size in [1, 7] {
        let (k, m, e) = run(&body, size);
        assert_eq!((k, e), (kinds.clone(), None), "{size}-byte reads");
        assert_eq!(m.content, message.content, "{size}-byte reads");
        assert_eq!(m.usage, message.usage);
    }
}

#[test]
fn stop_reasons() {
    for (raw, stop, error) in [
        ("end_turn", StopReason::Stop, None),
        ("stop_sequence", StopReason::Stop, None),
        ("max_tokens", StopReason::Length, None),
        ("model_context_window_exceeded", StopReason::Length, None),
        ("tool_use", StopReason::ToolUse, None),
        (
            "guardrail_intervened",
            StopReason::Error,
            Some("Provider stopped with: guardrail_intervened"),
        ),
    ] {
        let body = EventStreamBuilder::new()
            .event("messageStart", &json!({"role": "assistant"}))
            .event("messageStop", &json!({"stopReason": raw}))
            .build();
        let (_, message, err) = run(&body, 7);
        assert_eq!(err, None);
        assert_eq!(message.stop_reason, stop, "{raw}");
        assert_eq!(message.error_message.as_deref(), error, "{raw}");
    }
    assert_eq!(map_stop_reason(None), (StopReason::Error, None));
}

#[test]
fn a_stream_without_message_stop_fails() {
    let body = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"text": "hi"}}),
        )
        .build();
    let (kinds, message, err) = run(&body, 7);
    assert_eq!(kinds, ["text_start", "text_delta"]);
    assert_eq!(
        err.as_deref(),
        Some("Bedrock stream ended without a stop reason")
    );
    assert_eq!(message.content.len(), 1);
}

#[test]
fn unknown_event_types_are_skipped_and_user_starts_fail() {
    let body = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .event("futureEvent", &json!({"anything": true}))
        .event("messageStop", &json!({"stopReason": "end_turn"}))
        .build();
    let (kinds, message, err) = run(&body, 1);
    assert_eq!((kinds.len(), err), (0, None));
    assert_eq!(message.stop_reason, StopReason::Stop);

    let body = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "user"}))
        .build();
    assert_eq!(
        run(&body, 7).2.as_deref(),
        Some("Unexpected assistant message start but got user message start instead")
    );
    let body = EventStreamBuilder::new()
        .raw_message(
            &[(":message-type", "event"), (":event-type", "metadata")],
            b"{not json",
        )
        .build();
    let err = run(&body, 7).2.unwrap();
    assert!(err.contains("JSON"), "{err}");
}

#[test]
fn an_exception_mid_stream_keeps_the_content_so_far() {
    let body = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"text": "partial"}}),
        )
        .exception(
            "modelStreamErrorException",
            &json!({"message": "Model stream failed", "originalStatusCode": 500}),
        )
        .event("messageStop", &json!({"stopReason": "end_turn"}))
        .build();
    for size in [1, 7, body.len()] {
        let (kinds, message, err) = run(&body, size);
        assert_eq!(kinds, ["text_start", "text_delta"]);
        assert_eq!(
            err.as_deref(),
            Some("Model stream error: Model stream failed")
        );
        assert_eq!(message.stop_reason, StopReason::Pending);
    }
}

#[test]
fn redacted_reasoning_is_kept_as_base64() {
    let body = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": BASE64.encode(b"abc")}}}),
        )
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": BASE64.encode(b"def"), "signature": "ignored"}}}),
        )
        .event("contentBlockStop", &json!({"contentBlockIndex": 0}))
        .event("messageStop", &json!({"stopReason": "end_turn"}))
        .build();
    let (kinds, message, err) = run(&body, 7);
    assert_eq!(err, None);
    assert_eq!(kinds, ["thinking_start", "thinking_delta", "thinking_end"]);
    let AssistantContent::Thinking(t) = &message.content[0] else {
        panic!("thinking");
    };
    assert_eq!(t.thinking, REDACTED_THINKING_PLACEHOLDER);
    assert_eq!(t.redacted, Some(true));
    assert_eq!(t.thinking_signature, Some(BASE64.encode(b"abcdef")));
}

/// A failure before `contentBlockStop` keeps the encrypted reasoning received so far as the
/// same base64 a stopped block gets.
#[test]
fn redacted_reasoning_is_base64_on_failure_too() {
    let body = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": BASE64.encode(b"abc")}}}),
        )
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": BASE64.encode(b"def")}}}),
        )
        .exception("throttlingException", &json!({"message": "slow"}))
        .build();
    for chunk in [1, 7, body.len()] {
        let (kinds, message, err) = run(&body, chunk);
        assert_eq!(err.as_deref(), Some("Throttling error: slow"));
        assert_eq!(kinds, ["thinking_start", "thinking_delta"]);
        let AssistantContent::Thinking(t) = &message.content[0] else {
            panic!("thinking");
        };
        assert_eq!(t.thinking_signature, Some(BASE64.encode(b"abcdef")));
    }
}

#[test]
fn a_stopped_index_opens_a_new_block() {
    let body = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"text": "a"}}),
        )
        .event("contentBlockStop", &json!({"contentBlockIndex": 0}))
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"text": "b"}}),
        )
        .event("contentBlockStop", &json!({"contentBlockIndex": 7}))
        .event("messageStop", &json!({"stopReason": "end_turn"}))
        .build();
    let (kinds, message, err) = run(&body, 7);
    assert_eq!(err, None);
    assert_eq!(
        kinds,
        [
            "text_start",
            "text_delta",
            "text_end",
            "text_start",
            "text_delta"
        ]
    );
    assert_eq!(message.content.len(), 2);
}
