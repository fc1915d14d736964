//! `openai-responses` request building: body fields, cache keys, reasoning parameters, input
//! conversion and tool-call id normalization (pi 0.85.1 values).

use pi_ai::providers::openai_responses::{self, OpenAiResponses};
use pi_ai::types::{
    AssistantContent, AssistantMessage, CacheRetention, Model, StreamOptions, TextContent,
    ThinkingContent, ThinkingLevel, UserContent,
};
use serde_json::json;

use crate::openai_request_support;
use openai_request_support::*;

// ---------------------------------------------------------------- Responses body

fn resp(provider: &str, id: &str) -> Model {
    model(
        "openai-responses",
        provider,
        "https://api.openai.com/v1",
        id,
    )
}

#[test]
fn responses_standard_body_and_cache_key() {
    let o = StreamOptions {
        session_id: Some("sess".into()),
        max_tokens: Some(5),
        ..Default::default()
    };
    let b = body(
        &OpenAiResponses,
        &resp("openai", "gpt-4o"),
        &ctx(vec![user("hi")]),
        &o,
    );
    assert_eq!(
        b,
        json!({
            "model": "gpt-4o",
            "input": [{"role": "system", "content": "SYS"},
                      {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
            "stream": true,
            "prompt_cache_key": "sess",
            "store": false,
            "max_output_tokens": 16
        })
    );
    assert_eq!(
        header(&OpenAiResponses, &resp("openai", "m"), &o, "session_id").as_deref(),
        Some("sess")
    );
    let none = StreamOptions {
        cache_retention: Some(CacheRetention::None),
        ..o.clone()
    };
    let b = body(
        &OpenAiResponses,
        &resp("openai", "gpt-4o"),
        &ctx(vec![user("hi")]),
        &none,
    );
    assert_eq!(b.get("prompt_cache_key"), None);
    let long = StreamOptions {
        cache_retention: Some(CacheRetention::Long),
        ..o
    };
    let b = body(
        &OpenAiResponses,
        &resp("openai", "gpt-4o"),
        &ctx(vec![user("hi")]),
        &long,
    );
    assert_eq!(b["prompt_cache_retention"], json!("24h"));
}

#[test]
fn responses_reasoning_parameters() {
    let mut m = resp("openai", "o3");
    m.reasoning = true;
    let high = StreamOptions {
        reasoning: Some(ThinkingLevel::High),
        ..Default::default()
    };
    let b = body(&OpenAiResponses, &m, &ctx(vec![user("hi")]), &high);
    assert_eq!(b["reasoning"], json!({"effort": "high", "summary": "auto"}));
    assert_eq!(b["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(b["input"][0]["role"], json!("developer"));
    let b = body(&OpenAiResponses, &m, &ctx(vec![user("hi")]), &opts());
    assert_eq!(b["reasoning"], json!({"effort": "none"}));
    assert_eq!(b.get("include"), None);
    m.thinking_level_map = json!({"off": null}).as_object().cloned();
    let b = body(&OpenAiResponses, &m, &ctx(vec![user("hi")]), &opts());
    assert_eq!(b.get("reasoning"), None);
}

#[test]
fn responses_message_conversion_and_ids() {
    let m = resp("openai", "gpt-4o");
    let c = ctx(vec![
        user("hi"),
        assistant(
            &m,
            vec![
                AssistantContent::Thinking(ThinkingContent {
                    thinking: "t".into(),
                    thinking_signature: Some(
                        r#"{"type":"reasoning","id":"rs_1","summary":[]}"#.into(),
                    ),
                    redacted: None,
                }),
                AssistantContent::Text(TextContent {
                    text: "a".into(),
                    text_signature: Some(r#"{"v":1,"id":"msg_1","phase":"commentary"}"#.into()),
                }),
                AssistantContent::text("b"),
                call("call_1|fc_1", "bash", json!({"command": "ls"})),
                call("call_2|ctc_2", "bash", json!({})),
            ],
        ),
        tool_result("call_1|fc_1", "bash", vec![UserContent::text("out")]),
    ]);
    let b = body(&OpenAiResponses, &m, &c, &opts());
    assert_eq!(
        b["input"],
        json!([
            {"role": "system", "content": "SYS"},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a", "annotations": []}],
             "status": "completed", "id": "msg_1", "phase": "commentary"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "b", "annotations": []}],
             "status": "completed", "id": "msg_pi_1_1"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "bash", "arguments": "{\"command\":\"ls\"}"},
            {"type": "function_call", "call_id": "call_2", "name": "bash", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "out"},
            // The orphaned call gets pi's synthetic result.
            {"type": "function_call_output", "call_id": "call_2", "output": "No result provided"}
        ])
    );
    // Another model of the same provider: fc_ item ids are dropped.
    let other = resp("openai", "gpt-5");
    let b = body(&OpenAiResponses, &other, &c, &opts());
    assert_eq!(b["input"][5].get("id"), None);
}

#[test]
fn responses_tool_call_id_normalization() {
    let m = resp("openai", "gpt-4o");
    let same = AssistantMessage::empty("openai-responses", "openai", "gpt-4o");
    let foreign = AssistantMessage::empty("anthropic-messages", "anthropic", "claude");
    assert_eq!(
        openai_responses::normalize_tool_call_id(&m, "call_1|fc_a+b", &same),
        "call_1|fc_a_b"
    );
    assert_eq!(
        openai_responses::normalize_tool_call_id(&m, "call_1|item", &same),
        "call_1|fc_item"
    );
    let f = openai_responses::normalize_tool_call_id(&m, "call_1|item", &foreign);
    assert!(
        f.starts_with("call_1|fc_") && f.len() > "call_1|fc_".len(),
        "{f}"
    );
    let other = resp("my-proxy", "gpt-4o");
    assert_eq!(
        openai_responses::normalize_tool_call_id(&other, "toolu_01|x__", &same),
        "toolu_01_x"
    );
}
