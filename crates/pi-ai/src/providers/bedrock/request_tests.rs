use serde_json::json;

use super::*;
use crate::types::{ImageContent, TextContent, ThinkingContent, ToolCall, UserMessage};

fn model(id: &str, name: &str) -> Model {
    let mut m = crate::models::get_builtin_model(
        "amazon-bedrock",
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
    )
    .cloned()
    .expect("catalog model");
    m.id = id.into();
    m.name = name.into();
    m
}

fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserMessageContent::Text(text.into()),
        ..Default::default()
    })
}

fn body(model: &Model, context: &Context, options: &StreamOptions, env: &[(&str, &str)]) -> Value {
    let env = ProviderEnv::fixed(env.iter().copied());
    Value::Object(build_body(model, context, options, &env).unwrap())
}

#[test]
fn cache_points_follow_the_model_and_the_force_flag() {
    let ctx = Context {
        system_prompt: Some("sys".into()),
        messages: vec![user("hi")],
        ..Default::default()
    };
    let claude = model(
        "anthropic.claude-haiku-4-5-20251001-v1:0",
        "Claude Haiku 4.5",
    );
    let b = body(&claude, &ctx, &StreamOptions::default(), &[]);
    assert_eq!(
        b["system"],
        json!([{"text": "sys"}, {"cachePoint": {"type": "default"}}])
    );
    assert_eq!(
        b["messages"][0]["content"][1],
        json!({"cachePoint": {"type": "default"}})
    );
    let none = StreamOptions {
        cache_retention: Some(CacheRetention::None),
        ..Default::default()
    };
    assert_eq!(
        body(&claude, &ctx, &none, &[])["system"],
        json!([{"text": "sys"}])
    );
    let b = body(
        &claude,
        &ctx,
        &StreamOptions::default(),
        &[("PI_CACHE_RETENTION", "long")],
    );
    assert_eq!(
        b["system"][1],
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    );
    // An application inference profile hides the model: only the flag turns caching on.
    let profile = model(
        "arn:aws:bedrock:us-east-1:1:application-inference-profile/p",
        "p",
    );
    let b = body(&profile, &ctx, &StreamOptions::default(), &[]);
    assert_eq!(b["system"], json!([{"text": "sys"}]));
    let b = body(
        &profile,
        &ctx,
        &StreamOptions::default(),
        &[("AWS_BEDROCK_FORCE_CACHE", "1")],
    );
    assert_eq!(b["system"][1], json!({"cachePoint": {"type": "default"}}));
    // Claude 3 Haiku predates prompt caching.
    let old = model("anthropic.claude-3-haiku-20240307-v1:0", "Claude Haiku 3");
    assert!(!supports_prompt_caching(
        &old,
        &ProviderEnv::fixed::<&str, &str>([])
    ));
    // Without a cap the Claude models send their own; others send none.
    assert_eq!(b["inferenceConfig"], json!({}));
    let b = body(&claude, &ctx, &StreamOptions::default(), &[]);
    assert_eq!(
        b["inferenceConfig"],
        json!({"maxTokens": claude.max_tokens})
    );
}

#[test]
fn thinking_fields_by_model() {
    let ctx = Context {
        messages: vec![user("hi")],
        ..Default::default()
    };
    let reasoning = |level| StreamOptions {
        reasoning: Some(level),
        max_tokens: Some(4000),
        ..Default::default()
    };
    let opus = model("anthropic.claude-opus-4-7", "Claude Opus 4.7");
    let b = body(&opus, &ctx, &reasoning(ThinkingLevel::Xhigh), &[]);
    assert_eq!(
        b["additionalModelRequestFields"],
        json!({"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "xhigh"}})
    );
    let sonnet46 = model("anthropic.claude-sonnet-4-6", "Claude Sonnet 4.6");
    let b = body(&sonnet46, &ctx, &reasoning(ThinkingLevel::Xhigh), &[]);
    assert_eq!(
        b["additionalModelRequestFields"]["output_config"],
        json!({"effort": "high"})
    );
    // GovCloud rejects `display`.
    let b = body(
        &opus,
        &ctx,
        &reasoning(ThinkingLevel::Low),
        &[("AWS_REGION", "us-gov-west-1")],
    );
    assert_eq!(
        b["additionalModelRequestFields"]["thinking"],
        json!({"type": "adaptive"})
    );
    // Budget-based: the budget is added to the cap and leaves 1024 answer tokens.
    let sonnet45 = model(
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "Claude Sonnet 4.5",
    );
    let b = body(&sonnet45, &ctx, &reasoning(ThinkingLevel::Low), &[]);
    assert_eq!(b["inferenceConfig"]["maxTokens"], json!(6048));
    assert_eq!(
        b["additionalModelRequestFields"]["thinking"]["budget_tokens"],
        json!(2048)
    );
    // Not a reasoning request, or not Claude: nothing extra.
    assert!(
        body(&sonnet45, &ctx, &StreamOptions::default(), &[])
            .get("additionalModelRequestFields")
            .is_none()
    );
    let mut nova = model("amazon.nova-pro-v1:0", "Nova Pro");
    nova.reasoning = true;
    assert!(
        body(&nova, &ctx, &reasoning(ThinkingLevel::High), &[])
            .get("additionalModelRequestFields")
            .is_none()
    );
}

#[test]
fn assistant_replay_and_content_rules() {
    let claude = model(
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "Claude Sonnet 4.5",
    );
    let mut assistant = AssistantMessage::empty(&claude.api, &claude.provider, &claude.id);
    assistant.content = vec![
        AssistantContent::Thinking(ThinkingContent {
            thinking: "[Reasoning redacted]".into(),
            thinking_signature: Some(BASE64.encode(b"opaque")),
            redacted: Some(true),
        }),
        AssistantContent::Thinking(ThinkingContent {
            thinking: "unsigned".into(),
            thinking_signature: None,
            redacted: None,
        }),
        AssistantContent::Thinking(ThinkingContent {
            thinking: "bad".into(),
            thinking_signature: Some("!!!".into()),
            redacted: Some(true),
        }),
        AssistantContent::Text(TextContent::new("   ")),
        AssistantContent::ToolCall(ToolCall {
            id: "t1".into(),
            name: "f".into(),
            arguments: json!({"": 1, "a": {"": 2, "b": [ {"": 3} ]}})
                .as_object()
                .cloned()
                .unwrap(),
            ..Default::default()
        }),
    ];
    assistant.stop_reason = crate::types::StopReason::ToolUse;
    let ctx = Context {
        messages: vec![
            Message::User(UserMessage {
                content: UserMessageContent::Blocks(vec![UserContent::Text(TextContent::new(" "))]),
                ..Default::default()
            }),
            Message::Assistant(assistant),
        ],
        ..Default::default()
    };
    let b = body(
        &claude,
        &ctx,
        &StreamOptions {
            cache_retention: Some(CacheRetention::None),
            ..Default::default()
        },
        &[],
    );
    assert_eq!(b["messages"][0]["content"], json!([{"text": "<empty>"}]));
    let content = &b["messages"][1]["content"];
    assert_eq!(
        content[0],
        json!({"reasoningContent": {"redactedContent": BASE64.encode(b"opaque")}})
    );
    assert_eq!(content[1], json!({"text": "unsigned"}));
    assert_eq!(
        content[2],
        json!({"toolUse": {"toolUseId": "t1", "name": "f", "input": {"a": {"b": [{}]}}}})
    );
    assert_eq!(content.as_array().unwrap().len(), 3);
}

#[test]
fn images_tool_choice_and_ids() {
    let claude = model(
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "Claude Sonnet 4.5",
    );
    let image = |mime: &str, data: &str| Context {
        messages: vec![Message::User(UserMessage {
            content: UserMessageContent::Blocks(vec![UserContent::Image(ImageContent {
                data: data.into(),
                mime_type: mime.into(),
            })]),
            ..Default::default()
        })],
        ..Default::default()
    };
    let env = ProviderEnv::fixed::<&str, &str>([]);
    let opts = StreamOptions::default();
    let err = build_body(&claude, &image("image/bmp", "AAAA"), &opts, &env).unwrap_err();
    assert_eq!(err.to_string(), "Unknown image type: image/bmp");
    let err = build_body(&claude, &image("image/png", "@@@"), &opts, &env).unwrap_err();
    assert_eq!(
        err.to_string(),
        "The string to be decoded is not correctly encoded."
    );
    let ok = body(&claude, &image("image/jpg", "AAE C"), &opts, &[]);
    assert_eq!(
        ok["messages"][0]["content"][0],
        json!({"image": {"format": "jpeg", "source": {"bytes": "AAEC"}}})
    );
    let tools = vec![Tool {
        name: "f".into(),
        description: "d".into(),
        parameters: json!({"type": "object"}),
        ..Default::default()
    }];
    let ctx = Context {
        messages: vec![user("hi")],
        tools: Some(tools),
        ..Default::default()
    };
    let none = StreamOptions {
        tool_choice: Some(json!("none")),
        ..Default::default()
    };
    assert!(body(&claude, &ctx, &none, &[]).get("toolConfig").is_none());
    let auto = StreamOptions {
        tool_choice: Some(json!("auto")),
        ..Default::default()
    };
    assert_eq!(
        body(&claude, &ctx, &auto, &[])["toolConfig"]["toolChoice"],
        json!({"auto": {}})
    );
    assert_eq!(normalize_tool_call_id("call|a.b"), "call_a_b");
    assert_eq!(normalize_tool_call_id(&"x".repeat(70)).len(), 64);
}

/// `requestMetadata` is the body's last member, its pairs in order; a repeated key keeps its
/// first place with the last value (as assigning into a JavaScript object does).
#[test]
fn request_metadata_is_the_last_member() {
    let ctx = Context {
        messages: vec![user("hi")],
        ..Default::default()
    };
    let claude = model("anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude");
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    let options = StreamOptions {
        request_metadata: Some(vec![pair("b", "1"), pair("a", "2"), pair("b", "3")]),
        ..Default::default()
    };
    let b = body(&claude, &ctx, &options, &[]);
    let keys: Vec<&String> = b.as_object().unwrap().keys().collect();
    assert_eq!(keys.last().map(|k| k.as_str()), Some("requestMetadata"));
    assert_eq!(
        crate::json::to_string(&b["requestMetadata"]).unwrap(),
        r#"{"b":"3","a":"2"}"#
    );
    let b = body(&claude, &ctx, &StreamOptions::default(), &[]);
    assert!(b.get("requestMetadata").is_none());
}
