//! Anthropic streams that tripped ports of pi (fixtures under `data/bugs/`, made from public
//! bug reports): a mid-stream error, a tool call without input deltas, cumulative usage; each
//! with its correct value, in every chunking.

use crate::anthropic_google_support;

use anthropic_google_support::{CHUNKINGS, data, event_summary, model, replay};
use pi_ai::providers::AnthropicMessages;
use pi_ai::{AssistantContent, StopReason};

fn anthropic() -> pi_ai::Model {
    model("anthropic-messages", "anthropic", "claude-sonnet-4-5")
}

/// An in-stream `event: error` (overloaded) after some text fails the stream with
/// stopReason `error`, keeps the partial text and emits no `done`.
#[test]
fn mid_stream_overloaded_error_is_an_error_with_the_partial_text() {
    let body = data("bugs/anthropic-mid-stream-overloaded.sse");
    for chunking in CHUNKINGS {
        let out = replay(&AnthropicMessages, &anthropic(), &body, chunking);
        assert_eq!(out.message.stop_reason, StopReason::Error);
        assert_eq!(out.message.text(), "- Captain\n- Sc");
        let error = out.message.error_message.as_deref().unwrap();
        assert_eq!(
            error,
            r#"{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011Ce0000000000000000000"}"#
        );
        assert!(
            error.contains("overloaded_error"),
            "classifiable as retryable"
        );
        assert!(!out.events.iter().any(|e| e.kind() == "done"));
        assert_eq!(out.events.last().unwrap().kind(), "error");
    }
}

/// A `tool_use` block without any `input_json_delta` has arguments `{}`; events
/// are toolcall_start then toolcall_end with no delta.
#[test]
fn tool_use_without_input_delta_has_empty_arguments() {
    let body = data("bugs/anthropic-tool-use-without-input-delta.sse");
    for chunking in CHUNKINGS {
        let out = replay(&AnthropicMessages, &anthropic(), &body, chunking);
        assert_eq!(out.message.stop_reason, StopReason::ToolUse);
        let calls: Vec<_> = out.message.tool_calls().collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id, "toolu_01Test00000000000000001");
        assert_eq!(calls[0].name, "mcp");
        assert!(calls[0].arguments.is_empty());
        assert_eq!(
            event_summary(&out.events),
            [
                "start",
                "toolcall_start[0]",
                "toolcall_end[0]",
                "done(toolUse)"
            ]
        );
    }
}

/// Usage from `message_start` is overwritten, not summed, by `message_delta`.
#[test]
fn cumulative_usage_is_overwritten_not_added() {
    let body = data("bugs/anthropic-usage-cumulative-in-both-events.sse");
    for chunking in CHUNKINGS {
        let out = replay(&AnthropicMessages, &anthropic(), &body, chunking);
        let u = out.message.usage;
        assert_eq!(
            (
                u.input,
                u.cache_write,
                u.cache_read,
                u.output,
                u.total_tokens
            ),
            (2.0, 47119.0, 0.0, 64.0, 47185.0)
        );
        assert_eq!(out.message.stop_reason, StopReason::Stop);
        assert!(matches!(&out.message.content[0], AssistantContent::Text(t) if t.text == "Done."));
    }
}
