//! Anthropic Messages replies built in code (SSE bodies for the test kit's replay server).

#![allow(dead_code)]

use pi_ai::testkit::{Reply, SseBuilder};
use serde_json::{Value, json};

fn anthropic_body(blocks: &[Value], stop_reason: &str) -> SseBuilder {
    let mut sse = SseBuilder::new().event(
        "message_start",
        &json!({"type":"message_start","message":{"id":"msg_rig","type":"message","role":"assistant",
            "model":"replay-model","content":[],"stop_reason":null,"stop_sequence":null,
            "usage":{"input_tokens":10,"output_tokens":1}}}),
    );
    for (index, block) in blocks.iter().enumerate() {
        let (start, delta) = match block["type"].as_str() {
            Some("tool_use") => (
                json!({"type":"tool_use","id":block["id"],"name":block["name"],"input":{}}),
                json!({"type":"input_json_delta","partial_json":block["input"].to_string()}),
            ),
            _ => (
                json!({"type":"text","text":""}),
                json!({"type":"text_delta","text":block["text"]}),
            ),
        };
        sse = sse
            .event(
                "content_block_start",
                &json!({"type":"content_block_start","index":index,"content_block":start}),
            )
            .event(
                "content_block_delta",
                &json!({"type":"content_block_delta","index":index,"delta":delta}),
            )
            .event(
                "content_block_stop",
                &json!({"type":"content_block_stop","index":index}),
            );
    }
    sse.event(
        "message_delta",
        &json!({"type":"message_delta","delta":{"stop_reason":stop_reason,"stop_sequence":null},
            "usage":{"output_tokens":5}}),
    )
}

/// The SSE body of an Anthropic text answer, without its final `message_stop`.
pub(crate) fn anthropic_text_unfinished(text: &str) -> String {
    anthropic_body(&[json!({"type": "text", "text": text})], "end_turn").build()
}

/// An Anthropic reply with one text block.
pub(crate) fn anthropic_text(text: &str) -> Reply {
    Reply::sse(
        anthropic_body(&[json!({"type": "text", "text": text})], "end_turn")
            .event("message_stop", &json!({"type": "message_stop"}))
            .build(),
    )
}

/// An Anthropic reply calling tools: `(id, name, input)` each.
pub(crate) fn anthropic_tools(calls: &[(&str, &str, Value)]) -> Reply {
    let blocks: Vec<Value> = calls
        .iter()
        .map(|(id, name, input)| json!({"type":"tool_use","id":id,"name":name,"input":input}))
        .collect();
    Reply::sse(
        anthropic_body(&blocks, "tool_use")
            .event("message_stop", &json!({"type": "message_stop"}))
            .build(),
    )
}

/// An Anthropic error reply (`{"type":"error","error":{"type":…,"message":…}}`).
pub(crate) fn anthropic_error(status: u16, kind: &str, message: &str) -> Reply {
    Reply::json(
        status,
        &json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}
