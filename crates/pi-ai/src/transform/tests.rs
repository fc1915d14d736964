//! One test per `transformMessages` rule, plus the orphaned-tool-call session
//! (earendil-works/pi#4189) and `sanitizeSurrogates`.

use serde_json::json;

use super::*;
use crate::types::{ImageContent, InputKind, ThinkingContent, UserMessage};

fn model(provider: &str, api: &str, id: &str, vision: bool) -> Model {
    Model {
        id: id.into(),
        api: api.into(),
        provider: provider.into(),
        input: if vision {
            vec![InputKind::Text, InputKind::Image]
        } else {
            vec![InputKind::Text]
        },
        ..Default::default()
    }
}

fn claude() -> Model {
    model("anthropic", "anthropic-messages", "claude-sonnet-4-5", true)
}

fn assistant(content: Vec<AssistantContent>, stop_reason: StopReason) -> AssistantMessage {
    AssistantMessage {
        content,
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        stop_reason,
        ..Default::default()
    }
}

fn call(id: &str, name: &str) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        thought_signature: Some("sig".into()),
        ..Default::default()
    })
}

fn result(id: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content: vec![UserContent::text("ok")],
        ..Default::default()
    })
}

fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserMessageContent::Blocks(vec![UserContent::text(text)]),
        timestamp: 1,
    })
}

fn thinking(text: &str, signature: Option<&str>, redacted: bool) -> AssistantContent {
    AssistantContent::Thinking(ThinkingContent {
        thinking: text.into(),
        thinking_signature: signature.map(Into::into),
        redacted: redacted.then_some(true),
    })
}

fn image() -> UserContent {
    UserContent::Image(ImageContent {
        data: "AAAA".into(),
        mime_type: "image/png".into(),
    })
}

/// Roles of the output, with tool results as `toolResult:<id>`.
fn shape(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            Message::ToolResult(r) => format!("toolResult:{}", r.tool_call_id),
            other => other.role().to_owned(),
        })
        .collect()
}

fn assistant_content(message: &Message) -> &[AssistantContent] {
    match message {
        Message::Assistant(a) => &a.content,
        other => panic!("not an assistant message: {}", other.role()),
    }
}

#[test]
fn null_content_reads_as_empty() {
    let messages: Vec<Message> = serde_json::from_value(json!([
        {"role": "user", "content": null, "timestamp": 1},
        {"role": "assistant", "content": null, "api": "a", "provider": "p", "model": "m",
         "stopReason": "stop", "timestamp": 2},
        {"role": "toolResult", "toolCallId": "x", "toolName": "t", "content": null,
         "isError": false, "timestamp": 3}
    ]))
    .unwrap();
    let out = transform_messages(&messages, &claude(), None);
    assert_eq!(out.len(), 3);
    assert_eq!(
        out[0],
        Message::User(UserMessage {
            content: UserMessageContent::Blocks(vec![]),
            timestamp: 1
        })
    );
    assert!(assistant_content(&out[1]).is_empty());
    assert!(matches!(&out[2], Message::ToolResult(r) if r.content.is_empty()));
}

#[test]
fn images_become_one_placeholder_per_run_for_non_vision_models() {
    let text_only = model(
        "anthropic",
        "anthropic-messages",
        "claude-sonnet-4-5",
        false,
    );
    let messages = vec![
        Message::User(UserMessage {
            content: UserMessageContent::Blocks(vec![
                image(),
                image(),
                UserContent::text("between"),
                image(),
                UserContent::text(NON_VISION_USER_IMAGE_PLACEHOLDER),
                image(),
            ]),
            timestamp: 1,
        }),
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "t".into(),
            content: vec![UserContent::text("shot:"), image(), image()],
            ..Default::default()
        }),
    ];
    let out = transform_messages(&messages, &text_only, None);
    let Message::User(u) = &out[0] else { panic!() };
    assert_eq!(
        u.content,
        UserMessageContent::Blocks(vec![
            UserContent::text(NON_VISION_USER_IMAGE_PLACEHOLDER),
            UserContent::text("between"),
            UserContent::text(NON_VISION_USER_IMAGE_PLACEHOLDER),
            UserContent::text(NON_VISION_USER_IMAGE_PLACEHOLDER),
        ])
    );
    let Message::ToolResult(r) = &out[1] else {
        panic!()
    };
    assert_eq!(
        r.content,
        vec![
            UserContent::text("shot:"),
            UserContent::text("(tool image omitted: model does not support images)"),
        ]
    );
    // Vision models keep images.
    let out = transform_messages(&messages, &claude(), None);
    assert_eq!(out, messages);
}

#[test]
fn cross_model_thinking_text_and_signatures() {
    let messages = vec![Message::Assistant(assistant(
        vec![
            thinking("[Reasoning redacted]", Some("enc"), true),
            thinking("deep thought", Some("sig"), false),
            thinking("  \n", Some("sig"), false),
            AssistantContent::Text(TextContent {
                text: "answer".into(),
                text_signature: Some("ts".into()),
            }),
            call("toolu_1", "read"),
        ],
        StopReason::ToolUse,
    ))];
    let gpt = model("openai", "openai-responses", "gpt-5", true);
    let out = transform_messages(&messages, &gpt, None);
    assert_eq!(
        assistant_content(&out[0]),
        [
            AssistantContent::text("deep thought"),
            AssistantContent::text("answer"),
            AssistantContent::ToolCall(ToolCall {
                id: "toolu_1".into(),
                name: "read".into(),
                ..Default::default()
            }),
        ]
    );
}

#[test]
fn same_model_keeps_signed_and_redacted_thinking() {
    let content = vec![
        thinking("[Reasoning redacted]", Some("enc"), true),
        thinking("", Some("encrypted-reasoning"), false),
        thinking("", None, false),
        thinking(" \t", None, false),
        thinking("plain", None, false),
        AssistantContent::Text(TextContent {
            text: "answer".into(),
            text_signature: Some("ts".into()),
        }),
        call("toolu_1", "read"),
    ];
    let messages = vec![
        Message::Assistant(assistant(content.clone(), StopReason::ToolUse)),
        result("toolu_1"),
    ];
    let normalize = |_: &str, _: &Model, _: &AssistantMessage| "never".to_owned();
    let out = transform_messages(&messages, &claude(), Some(&normalize));
    let mut expected = content;
    expected.remove(3);
    expected.remove(2);
    assert_eq!(assistant_content(&out[0]), expected.as_slice());
}

#[test]
fn model_identity_needs_provider_api_and_id() {
    let messages = vec![Message::Assistant(assistant(
        vec![thinking("t", Some("s"), false)],
        StopReason::Stop,
    ))];
    for other in [
        model("bedrock", "anthropic-messages", "claude-sonnet-4-5", true),
        model("anthropic", "openai-completions", "claude-sonnet-4-5", true),
        model("anthropic", "anthropic-messages", "claude-opus-4", true),
    ] {
        let out = transform_messages(&messages, &other, None);
        assert_eq!(assistant_content(&out[0]), [AssistantContent::text("t")]);
    }
}

#[test]
fn normalized_ids_apply_to_later_tool_results() {
    let gpt = model("openai", "openai-completions", "gpt-4o", true);
    let messages = vec![
        result("call_1|fc_1"), // before its call: not remapped
        Message::Assistant(AssistantMessage {
            provider: "openai".into(),
            api: "openai-responses".into(),
            model: "gpt-5".into(),
            content: vec![call("call_1|fc_1", "read"), call("plain", "ls")],
            stop_reason: StopReason::ToolUse,
            ..Default::default()
        }),
        result("call_1|fc_1"),
        result("plain"),
    ];
    let seen = std::cell::RefCell::new(Vec::new());
    let normalize = |id: &str, target: &Model, source: &AssistantMessage| {
        seen.borrow_mut()
            .push((id.to_owned(), target.id.clone(), source.model.clone()));
        id.split('|').next().unwrap_or(id).to_owned()
    };
    let out = transform_messages(&messages, &gpt, Some(&normalize));
    assert_eq!(
        shape(&out),
        [
            "toolResult:call_1|fc_1",
            "assistant",
            "toolResult:call_1",
            "toolResult:plain"
        ]
    );
    assert_eq!(
        seen.into_inner(),
        [
            (
                "call_1|fc_1".to_owned(),
                "gpt-4o".to_owned(),
                "gpt-5".to_owned()
            ),
            ("plain".to_owned(), "gpt-4o".to_owned(), "gpt-5".to_owned()),
        ]
    );
}

#[test]
fn failed_assistant_messages_are_removed() {
    let messages = vec![
        user("hi"),
        Message::Assistant(assistant(
            vec![AssistantContent::text("partial")],
            StopReason::Error,
        )),
        Message::Assistant(assistant(vec![call("t1", "read")], StopReason::Aborted)),
        Message::Assistant(assistant(
            vec![AssistantContent::text("ok")],
            StopReason::Stop,
        )),
    ];
    let out = transform_messages(&messages, &claude(), None);
    assert_eq!(shape(&out), ["user", "assistant"]);
    assert_eq!(assistant_content(&out[1]), [AssistantContent::text("ok")]);
}

#[test]
fn orphaned_tool_calls_get_synthetic_results_where_the_flow_breaks() {
    let messages = vec![
        user("go"),
        Message::Assistant(assistant(
            vec![call("a", "read"), call("b", "ls")],
            StopReason::ToolUse,
        )),
        result("b"),
        // Another assistant message: `a` is answered right before it.
        Message::Assistant(assistant(vec![call("c", "bash")], StopReason::ToolUse)),
        // A user message: `c` is answered right before it.
        user("stop"),
        Message::Assistant(assistant(vec![call("d", "edit")], StopReason::ToolUse)),
        // End of list: `d` is answered at the end.
    ];
    let out = transform_messages(&messages, &claude(), None);
    assert_eq!(
        shape(&out),
        [
            "user",
            "assistant",
            "toolResult:b",
            "toolResult:a",
            "assistant",
            "toolResult:c",
            "user",
            "assistant",
            "toolResult:d",
        ]
    );
    let Message::ToolResult(synthetic) = &out[3] else {
        panic!()
    };
    assert_eq!(synthetic.tool_name, "read");
    assert!(synthetic.is_error);
    assert_eq!(
        synthetic.content,
        vec![UserContent::text("No result provided")]
    );
    assert!(synthetic.timestamp > 0);
}

#[test]
fn a_failed_assistant_still_closes_the_previous_tool_flow() {
    let messages = vec![
        Message::Assistant(assistant(vec![call("a", "read")], StopReason::ToolUse)),
        Message::Assistant(assistant(vec![], StopReason::Error)),
        result("a"),
    ];
    let out = transform_messages(&messages, &claude(), None);
    // pi answers `a` when the failed message arrives; the late real result stays too.
    assert_eq!(shape(&out), ["assistant", "toolResult:a", "toolResult:a"]);
}

#[test]
fn an_orphaned_tool_call_in_a_session_file_gets_a_result() {
    let text = include_str!("../../tests/data/bugs/session-orphaned-toolcall-no-result.jsonl");
    let messages: Vec<Message> = text
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|entry| entry["type"] == "message")
        .map(|entry| serde_json::from_value(entry["message"].clone()).unwrap())
        .collect();
    let out = transform_messages(&messages, &claude(), None);
    assert_eq!(
        shape(&out),
        [
            "user",
            "assistant",
            "toolResult:toolu_01Orphan000000000000001",
            "user"
        ]
    );
    let Message::ToolResult(synthetic) = &out[2] else {
        panic!()
    };
    assert_eq!(
        synthetic.content,
        vec![UserContent::text("No result provided")]
    );
    assert!(synthetic.is_error);
    assert_eq!(synthetic.tool_name, "write");
}

#[test]
fn string_user_content_is_untouched() {
    let text_only = model("x", "y", "z", false);
    let messages = vec![Message::User(UserMessage {
        content: UserMessageContent::Text("plain".into()),
        timestamp: 1,
    })];
    assert_eq!(transform_messages(&messages, &text_only, None), messages);
}

#[test]
fn sanitize_surrogates_drops_unpaired_and_keeps_pairs() {
    let units: Vec<u16> = "a😀b".encode_utf16().collect();
    assert_eq!(sanitize_surrogates(&units), "a😀b");
    assert_eq!(sanitize_surrogates(&[0x61, 0xD83D, 0x62]), "ab");
    assert_eq!(sanitize_surrogates(&[0xDE00, 0x61]), "a");
    assert_eq!(sanitize_surrogates(&[0xD83D, 0xD83D, 0xDE00]), "😀");
    assert_eq!(sanitize_surrogates(&[0xD83D]), "");
}

#[test]
fn sanitize_json_surrogates_makes_javascript_json_parseable() {
    let written_by_pi =
        r#"{"text":"cut \ud83d","ok":"\ud83d\ude00","low":"\udc00x","esc":"\\ud83d"}"#;
    assert!(serde_json::from_str::<serde_json::Value>(written_by_pi).is_err());
    let clean = sanitize_json_surrogates(written_by_pi);
    let value: serde_json::Value = serde_json::from_str(&clean).unwrap();
    assert_eq!(
        value,
        json!({"text": "cut ", "ok": "😀", "low": "x", "esc": "\\ud83d"})
    );
    assert!(matches!(
        sanitize_json_surrogates(r#"{"a":"b"}"#),
        Cow::Borrowed(_)
    ));
}
