//! Request building of both OpenAI wire APIs: URLs, headers, compat-dependent fields,
//! reasoning dialects, message conversion and tool-call id normalization (pi 0.85.1 values).

use pi_ai::providers::WireApi;
use pi_ai::providers::openai_completions::{OpenAiCompletions, normalize_tool_call_id};
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::types::{
    AssistantContent, AssistantMessage, CacheRetention, ImageContent, InputKind, Message, Model,
    StopReason, StreamOptions, ThinkingContent, ThinkingLevel, Tool, UserContent, UserMessage,
    UserMessageContent,
};
use serde_json::{Value, json};

use crate::openai_request_support;
use openai_request_support::*;

fn chat(provider: &str, base_url: &str) -> Model {
    model("openai-completions", provider, base_url, "m")
}

fn with_compat(mut m: Model, compat: Value) -> Model {
    m.compat = compat.as_object().cloned();
    m
}

// ---------------------------------------------------------------- common

#[test]
fn urls_auth_and_user_agent() {
    let m = chat("x", "http://h:1/v1/");
    let r = OpenAiCompletions
        .build_request(&m, &ctx(vec![user("hi")]), &opts(), "sk-test")
        .unwrap();
    assert_eq!(r.url, "http://h:1/v1/chat/completions");
    let m = model("openai-responses", "x", "http://h:1/v1", "m");
    let r = OpenAiResponses
        .build_request(&m, &ctx(vec![user("hi")]), &opts(), "sk-test")
        .unwrap();
    assert_eq!(r.url, "http://h:1/v1/responses");
    for api in [&OpenAiCompletions as &dyn WireApi, &OpenAiResponses] {
        let m = chat("x", "http://h:1/v1");
        assert_eq!(
            header(api, &m, &opts(), "authorization").as_deref(),
            Some("Bearer sk-test")
        );
        let ua = header(api, &m, &opts(), "user-agent").unwrap();
        assert!(
            ua.starts_with("pi (") && ua.ends_with(')') && ua.contains("; "),
            "{ua}"
        );
    }
}

#[test]
fn header_precedence_model_then_caller_and_deletion() {
    let mut m = chat("x", "http://h/v1");
    m.headers = json!({"X-Model": "1", "User-Agent": "custom"})
        .as_object()
        .cloned();
    let o = StreamOptions {
        headers: vec![
            ("x-model".into(), Some("2".into())),
            ("user-agent".into(), None),
        ],
        ..Default::default()
    };
    assert_eq!(
        header(&OpenAiCompletions, &m, &o, "x-model").as_deref(),
        Some("2")
    );
    assert_eq!(header(&OpenAiCompletions, &m, &o, "user-agent"), None);
}

#[test]
fn missing_key_fails_unless_an_authorization_header_is_given() {
    let m = chat("myprov", "http://h/v1");
    let err = OpenAiCompletions
        .build_request(&m, &ctx(vec![user("hi")]), &opts(), "")
        .unwrap_err();
    assert_eq!(err.to_string(), "No API key for provider: myprov");
    let o = StreamOptions {
        headers: vec![("Authorization".into(), Some("Bearer custom".into()))],
        ..Default::default()
    };
    let r = OpenAiResponses
        .build_request(&m, &ctx(vec![user("hi")]), &o, "")
        .unwrap();
    let auth: Vec<_> = r
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("authorization"))
        .collect();
    assert_eq!(auth.len(), 1);
    assert_eq!(auth[0].1, "Bearer custom");
}

// ---------------------------------------------------------------- Chat Completions body

#[test]
fn completions_standard_body() {
    let c = ctx(vec![user("hi")]);
    let b = body(&OpenAiCompletions, &chat("x", "http://h/v1"), &c, &opts());
    assert_eq!(
        b,
        json!({
            "model": "m",
            "messages": [{"role": "system", "content": "SYS"}, {"role": "user", "content": "hi"}],
            "stream": true,
            "stream_options": {"include_usage": true},
            "store": false,
            "max_completion_tokens": 4096
        })
    );
}

#[test]
fn completions_non_standard_host_fields() {
    let mut m = chat("deepseek", "https://api.deepseek.com/v1");
    m.reasoning = true;
    let o = StreamOptions {
        max_tokens: Some(1000),
        temperature: Some(0.5),
        tool_choice: Some(json!("auto")),
        ..Default::default()
    };
    let b = body(&OpenAiCompletions, &m, &ctx(vec![user("hi")]), &o);
    assert_eq!(b.get("store"), None);
    assert_eq!(b["max_tokens"], json!(1000));
    assert_eq!(b["temperature"], json!(0.5));
    assert_eq!(b["tool_choice"], json!("auto"));
    // DeepSeek dialect without reasoning: thinking disabled.
    assert_eq!(b["thinking"], json!({"type": "disabled"}));
    assert_eq!(b["messages"][0]["role"], json!("system"));
}

#[test]
fn completions_developer_role_for_reasoning_models_on_standard_hosts() {
    let mut m = chat("openai", "https://api.openai.com/v1");
    m.reasoning = true;
    let b = body(&OpenAiCompletions, &m, &ctx(vec![user("hi")]), &opts());
    assert_eq!(
        b["messages"][0],
        json!({"role": "developer", "content": "SYS"})
    );
    let m = with_compat(m, json!({"supportsDeveloperRole": false}));
    let b = body(&OpenAiCompletions, &m, &ctx(vec![user("hi")]), &opts());
    assert_eq!(b["messages"][0]["role"], json!("system"));
}

#[test]
fn completions_prompt_cache_key_only_for_openai_or_long_retention() {
    let sid = "s".repeat(70);
    let o = StreamOptions {
        session_id: Some(sid.clone()),
        ..Default::default()
    };
    let b = body(
        &OpenAiCompletions,
        &chat("x", "http://h/v1"),
        &ctx(vec![user("hi")]),
        &o,
    );
    assert_eq!(b.get("prompt_cache_key"), None);
    let b = body(
        &OpenAiCompletions,
        &chat("openai", "https://api.openai.com/v1"),
        &ctx(vec![user("hi")]),
        &o,
    );
    assert_eq!(b["prompt_cache_key"], json!("s".repeat(64)));
    assert_eq!(b.get("prompt_cache_retention"), None);
    let long = StreamOptions {
        cache_retention: Some(CacheRetention::Long),
        ..o.clone()
    };
    let b = body(
        &OpenAiCompletions,
        &chat("x", "http://h/v1"),
        &ctx(vec![user("hi")]),
        &long,
    );
    assert_eq!(b["prompt_cache_retention"], json!("24h"));
    assert_eq!(b["prompt_cache_key"], json!("s".repeat(64)));
    let none = StreamOptions {
        cache_retention: Some(CacheRetention::None),
        ..o
    };
    let b = body(
        &OpenAiCompletions,
        &chat("openai", "https://api.openai.com/v1"),
        &ctx(vec![user("hi")]),
        &none,
    );
    assert_eq!(b.get("prompt_cache_key"), None);
}

#[test]
fn completions_session_affinity_headers_when_enabled() {
    let o = StreamOptions {
        session_id: Some("sess".into()),
        ..Default::default()
    };
    let m = with_compat(
        chat("x", "http://h/v1"),
        json!({"sendSessionAffinityHeaders": true}),
    );
    assert_eq!(
        header(&OpenAiCompletions, &m, &o, "session_id").as_deref(),
        Some("sess")
    );
    assert_eq!(
        header(&OpenAiCompletions, &m, &o, "x-session-affinity").as_deref(),
        Some("sess")
    );
    assert_eq!(
        header(&OpenAiCompletions, &m, &o, "x-client-request-id").as_deref(),
        Some("sess")
    );
    let or = with_compat(
        chat("openrouter", "https://openrouter.ai/api/v1"),
        json!({"sendSessionAffinityHeaders": true}),
    );
    assert_eq!(
        header(&OpenAiCompletions, &or, &o, "x-session-id").as_deref(),
        Some("sess")
    );
    assert_eq!(header(&OpenAiCompletions, &or, &o, "session_id"), None);
    let off = chat("x", "http://h/v1");
    assert_eq!(header(&OpenAiCompletions, &off, &o, "session_id"), None);
}

#[test]
fn completions_reasoning_dialects() {
    let reasoning = |provider: &str, url: &str, compat: Value| {
        let mut m = with_compat(chat(provider, url), compat);
        m.reasoning = true;
        m
    };
    let high = StreamOptions {
        reasoning: Some(ThinkingLevel::High),
        ..Default::default()
    };
    let c = ctx(vec![user("hi")]);
    let b = body(
        &OpenAiCompletions,
        &reasoning("x", "http://h/v1", json!({})),
        &c,
        &high,
    );
    assert_eq!(b["reasoning_effort"], json!("high"));
    // Unsupported level is clamped: xhigh → high when not mapped.
    let xhigh = StreamOptions {
        reasoning: Some(ThinkingLevel::Xhigh),
        ..Default::default()
    };
    let b = body(
        &OpenAiCompletions,
        &reasoning("x", "http://h/v1", json!({})),
        &c,
        &xhigh,
    );
    assert_eq!(b["reasoning_effort"], json!("high"));
    let mut mapped = reasoning("x", "http://h/v1", json!({}));
    mapped.thinking_level_map = json!({"high": "max-effort", "off": "none"})
        .as_object()
        .cloned();
    assert_eq!(
        body(&OpenAiCompletions, &mapped, &c, &high)["reasoning_effort"],
        json!("max-effort")
    );
    assert_eq!(
        body(&OpenAiCompletions, &mapped, &c, &opts())["reasoning_effort"],
        json!("none")
    );

    let or = reasoning("openrouter", "https://openrouter.ai/api/v1", json!({}));
    assert_eq!(
        body(&OpenAiCompletions, &or, &c, &high)["reasoning"],
        json!({"effort": "high"})
    );
    assert_eq!(
        body(&OpenAiCompletions, &or, &c, &opts())["reasoning"],
        json!({"effort": "none"})
    );

    let zai = reasoning("zai", "https://api.z.ai/v1", json!({}));
    let b = body(&OpenAiCompletions, &zai, &c, &high);
    assert_eq!(
        b["thinking"],
        json!({"type": "enabled", "clear_thinking": false})
    );
    assert_eq!(b.get("reasoning_effort"), None);

    let ds = reasoning("deepseek", "https://api.deepseek.com", json!({}));
    let b = body(&OpenAiCompletions, &ds, &c, &high);
    assert_eq!(
        (b["thinking"].clone(), b["reasoning_effort"].clone()),
        (json!({"type": "enabled"}), json!("high"))
    );

    let qwen = reasoning("x", "http://h/v1", json!({"thinkingFormat": "qwen"}));
    assert_eq!(
        body(&OpenAiCompletions, &qwen, &c, &opts())["enable_thinking"],
        json!(false)
    );
    let qct = reasoning(
        "x",
        "http://h/v1",
        json!({"thinkingFormat": "qwen-chat-template"}),
    );
    assert_eq!(
        body(&OpenAiCompletions, &qct, &c, &high)["chat_template_kwargs"],
        json!({"enable_thinking": true, "preserve_thinking": true})
    );
    let ct = reasoning(
        "x",
        "http://h/v1",
        json!({"thinkingFormat": "chat-template", "chatTemplateKwargs": {
            "enable_thinking": {"$var": "thinking.enabled"},
            "effort": {"$var": "thinking.effort", "omitWhenOff": true},
            "budget": {"$var": "thinking.budget"},
            "fixed": 7
        }}),
    );
    assert_eq!(
        body(&OpenAiCompletions, &ct, &c, &high)["chat_template_kwargs"],
        json!({"enable_thinking": true, "effort": "high", "budget": 3072, "fixed": 7})
    );
    assert_eq!(
        body(&OpenAiCompletions, &ct, &c, &opts())["chat_template_kwargs"],
        json!({"enable_thinking": false, "fixed": 7})
    );
    let together = reasoning("together", "https://api.together.xyz/v1", json!({}));
    assert_eq!(
        body(&OpenAiCompletions, &together, &c, &high)["reasoning"],
        json!({"enabled": true})
    );
    let st = reasoning(
        "x",
        "http://h/v1",
        json!({"thinkingFormat": "string-thinking"}),
    );
    assert_eq!(
        body(&OpenAiCompletions, &st, &c, &opts())["thinking"],
        json!("none")
    );
    // The budget field caps reasoning at maxTokens − 1024.
    let budget = reasoning(
        "x",
        "http://h/v1",
        json!({"thinkingTokenBudgetField": "thinking_budget_tokens"}),
    );
    assert_eq!(
        body(&OpenAiCompletions, &budget, &c, &high)["thinking_budget_tokens"],
        json!(3072)
    );
    assert_eq!(
        body(&OpenAiCompletions, &budget, &c, &opts()).get("thinking_budget_tokens"),
        None
    );
}

#[test]
fn completions_sampling_params_are_written_last_and_win() {
    let mut m = chat("x", "http://h/v1");
    m.sampling_params = json!({"temperature": 1.0, "top_k": 20})
        .as_object()
        .cloned();
    let o = StreamOptions {
        temperature: Some(0.2),
        sampling_params: json!({"min_p": 0.1}).as_object().cloned(),
        ..Default::default()
    };
    let b = body(&OpenAiCompletions, &m, &ctx(vec![user("hi")]), &o);
    assert_eq!(
        (
            b["temperature"].clone(),
            b["top_k"].clone(),
            b["min_p"].clone()
        ),
        (json!(1.0), json!(20), json!(0.1))
    );
    let keys: Vec<&String> = b.as_object().unwrap().keys().collect();
    assert_eq!(keys.last().map(|k| k.as_str()), Some("min_p"));
}

#[test]
fn completions_tools_and_empty_tools_with_history() {
    let tool = Tool {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string", "description": "p"}}}),
        constrained_sampling: None,
    };
    let mut c = ctx(vec![user("hi")]);
    c.tools = Some(vec![tool]);
    let b = body(&OpenAiCompletions, &chat("x", "http://h/v1"), &c, &opts());
    assert_eq!(
        b["tools"],
        json!([{"type": "function", "function": {"name": "read", "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "p"}}},
            "strict": false}}])
    );
    let b = body(
        &OpenAiCompletions,
        &chat("nvidia", "http://h/v1"),
        &c,
        &opts(),
    );
    assert_eq!(b["tools"][0]["function"].get("strict"), None);
    let m = chat("x", "http://h/v1");
    let history = ctx(vec![
        user("hi"),
        assistant(&m, vec![call("c1", "read", json!({"path": "a"}))]),
        tool_result("c1", "read", vec![UserContent::text("A")]),
    ]);
    assert_eq!(
        body(&OpenAiCompletions, &m, &history, &opts())["tools"],
        json!([])
    );
}

#[test]
fn completions_message_conversion() {
    let mut m = chat("x", "http://h/v1");
    m.input = vec![InputKind::Text, InputKind::Image];
    let img = UserContent::Image(ImageContent {
        data: "QUJD".into(),
        mime_type: "image/png".into(),
    });
    let c = ctx(vec![
        Message::User(UserMessage {
            content: UserMessageContent::Blocks(vec![UserContent::text("look"), img.clone()]),
            timestamp: 0,
        }),
        assistant(
            &m,
            vec![
                AssistantContent::Thinking(ThinkingContent {
                    thinking: "hmm".into(),
                    thinking_signature: Some("reasoning_content".into()),
                    redacted: None,
                }),
                AssistantContent::text("Part one. "),
                AssistantContent::text("   "),
                AssistantContent::text("Part two."),
                call("c1", "read", json!({"path": "a"})),
            ],
        ),
        tool_result("c1", "read", vec![img.clone()]),
        tool_result("c2", "ls", vec![]),
        user("next"),
    ]);
    let b = body(&OpenAiCompletions, &m, &c, &opts());
    assert_eq!(
        b["messages"],
        json!([
            {"role": "system", "content": "SYS"},
            {"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}}]},
            {"role": "assistant", "content": "Part one. Part two.", "reasoning_content": "hmm",
             "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}}]},
            {"role": "tool", "content": "(see attached image)", "tool_call_id": "c1"},
            {"role": "tool", "content": "(no tool output)", "tool_call_id": "c2"},
            {"role": "user", "content": [
                {"type": "text", "text": "Attached image(s) from tool result:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,QUJD"}}]},
            {"role": "user", "content": "next"}
        ])
    );
}

#[test]
fn completions_compat_message_rules() {
    let m = with_compat(
        chat("x", "http://h/v1"),
        json!({"requiresAssistantAfterToolResult": true, "requiresToolResultName": true,
               "requiresThinkingAsText": true}),
    );
    let c = ctx(vec![
        user("hi"),
        assistant(
            &m,
            vec![
                AssistantContent::Thinking(ThinkingContent {
                    thinking: "plan".into(),
                    ..Default::default()
                }),
                AssistantContent::text("ok"),
                call("c1", "ls", json!({})),
            ],
        ),
        tool_result(
            "c1",
            "ls",
            vec![UserContent::text("a"), UserContent::text("b")],
        ),
        user("again"),
    ]);
    let b = body(&OpenAiCompletions, &m, &c, &opts());
    assert_eq!(
        b["messages"][2],
        json!({"role": "assistant", "content": [{"type": "text", "text": "plan"}, {"type": "text", "text": "ok"}],
               "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]})
    );
    assert_eq!(
        b["messages"][3],
        json!({"role": "tool", "content": "a\nb", "tool_call_id": "c1", "name": "ls"})
    );
    assert_eq!(
        b["messages"][4],
        json!({"role": "assistant", "content": "I have processed the tool results."})
    );
    assert_eq!(
        b["messages"][5],
        json!({"role": "user", "content": "again"})
    );
    // An assistant message with nothing to send is skipped.
    let empty = ctx(vec![
        user("hi"),
        assistant(&chat("x", "http://h/v1"), vec![AssistantContent::text(" ")]),
    ]);
    let b = body(
        &OpenAiCompletions,
        &chat("x", "http://h/v1"),
        &empty,
        &opts(),
    );
    assert_eq!(b["messages"].as_array().unwrap().len(), 2);
}

#[test]
fn completions_replays_reasoning_details_and_deepseek_reasoning_content() {
    let m = chat("openrouter", "https://openrouter.ai/api/v1");
    let details = r#"[{"type":"reasoning.text","text":"t","format":"f","index":0}]"#;
    let c = ctx(vec![
        user("hi"),
        assistant(
            &m,
            vec![
                AssistantContent::Thinking(ThinkingContent {
                    thinking: "t".into(),
                    thinking_signature: Some(details.into()),
                    redacted: None,
                }),
                AssistantContent::text("answer"),
            ],
        ),
    ]);
    let b = body(&OpenAiCompletions, &m, &c, &opts());
    assert_eq!(
        b["messages"][2],
        json!({"role": "assistant", "content": "answer",
               "reasoning_details": [{"type": "reasoning.text", "text": "t", "format": "f", "index": 0}]})
    );
    let mut ds = chat("deepseek", "https://api.deepseek.com");
    ds.reasoning = true;
    let c = ctx(vec![
        user("hi"),
        assistant(&ds, vec![AssistantContent::text("a")]),
    ]);
    let b = body(&OpenAiCompletions, &ds, &c, &opts());
    assert_eq!(
        b["messages"][2],
        json!({"role": "assistant", "content": "a", "reasoning_content": ""})
    );
}

#[test]
fn completions_openrouter_anthropic_cache_control() {
    let m = chat("openrouter", "https://openrouter.ai/api/v1");
    let m = Model {
        id: "anthropic/claude-sonnet-4".into(),
        ..m
    };
    let mut c = ctx(vec![user("hi")]);
    c.tools = Some(vec![Tool {
        name: "t".into(),
        description: "d".into(),
        parameters: json!({"type": "object"}),
        constrained_sampling: None,
    }]);
    let b = body(&OpenAiCompletions, &m, &c, &opts());
    let cc = json!({"type": "ephemeral"});
    assert_eq!(
        b["messages"][0]["content"],
        json!([{"type": "text", "text": "SYS", "cache_control": cc}])
    );
    assert_eq!(
        b["messages"][1]["content"],
        json!([{"type": "text", "text": "hi", "cache_control": cc}])
    );
    assert_eq!(b["tools"][0]["cache_control"], cc);
}

#[test]
fn completions_tool_call_id_normalization() {
    let m = chat("x", "http://h/v1");
    assert_eq!(normalize_tool_call_id(&m, "call_1|fc_2"), "call_1_fc_2");
    assert_eq!(normalize_tool_call_id(&m, "call+1|"), "call_1");
    let long = format!("call_abc|fc_{}", "x".repeat(60));
    let n = normalize_tool_call_id(&m, &long);
    assert!(n.len() <= 40 && n.starts_with("call_abc_"), "{n}");
    let openai = chat("openai", "https://api.openai.com/v1");
    assert_eq!(
        normalize_tool_call_id(&openai, &"y".repeat(50)),
        "y".repeat(40)
    );
    assert_eq!(normalize_tool_call_id(&m, &"y".repeat(50)), "y".repeat(50));
}

#[test]
fn strict_json_schema_tools() {
    let tool = |strict: &str| Tool {
        name: "write".into(),
        description: "d".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}, "mode": {"type": "string"}},
            "required": ["path"]}),
        constrained_sampling: Some(json!({"type": "json_schema", "strict": strict})),
    };
    let strict_params = json!({"type": "object",
        "properties": {"path": {"type": "string"}, "mode": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "required": ["path", "mode"], "additionalProperties": false});
    let mut c = ctx(vec![user("hi")]);
    c.tools = Some(vec![tool("prefer")]);
    let b = body(&OpenAiCompletions, &chat("x", "http://h/v1"), &c, &opts());
    assert_eq!(b["tools"][0]["function"]["strict"], json!(true));
    assert_eq!(b["tools"][0]["function"]["parameters"], strict_params);
    // A host without strict support: `prefer` falls back, `require` fails the request.
    let b = body(
        &OpenAiCompletions,
        &chat("nvidia", "http://h/v1"),
        &c,
        &opts(),
    );
    assert_eq!(b["tools"][0]["function"].get("strict"), None);
    assert_eq!(
        b["tools"][0]["function"]["parameters"]["required"],
        json!(["path"])
    );
    c.tools = Some(vec![tool("require")]);
    let err = OpenAiCompletions
        .build_request(&chat("nvidia", "http://h/v1"), &c, &opts(), "k")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Tool \"write\" requires JSON-schema constrained sampling, but strict tools are unsupported."
    );
    // Responses: `strict` only with `compat.supportsStrictMode`.
    let m = model(
        "openai-responses",
        "openai",
        "https://api.openai.com/v1",
        "gpt-4o",
    );
    let err = OpenAiResponses
        .build_request(&m, &c, &opts(), "k")
        .unwrap_err();
    assert!(
        err.to_string()
            .ends_with("but strict tools are unsupported."),
        "{err}"
    );
    let m = with_compat(m, json!({"supportsStrictMode": true}));
    let b = body(&OpenAiResponses, &m, &c, &opts());
    assert_eq!(b["tools"][0]["strict"], json!(true));
    assert_eq!(b["tools"][0]["parameters"], strict_params);
}

#[test]
fn completions_transform_rules_apply_to_history() {
    let m = chat("x", "http://h/v1");
    let other = model(
        "openai-responses",
        "openai",
        "https://api.openai.com/v1",
        "gpt-5",
    );
    let mut failed = AssistantMessage::empty(&m.api, &m.provider, &m.id);
    failed.stop_reason = StopReason::Error;
    failed.content = vec![AssistantContent::text("half")];
    let c = ctx(vec![
        user("hi"),
        assistant(
            &other,
            vec![
                AssistantContent::Thinking(ThinkingContent {
                    thinking: "foreign thought".into(),
                    thinking_signature: Some("{\"type\":\"reasoning\"}".into()),
                    redacted: None,
                }),
                call("call_1|fc_abc", "ls", json!({})),
            ],
        ),
        tool_result("call_1|fc_abc", "ls", vec![UserContent::text("x")]),
        Message::Assistant(failed),
        user("next"),
    ]);
    let b = body(&OpenAiCompletions, &m, &c, &opts());
    assert_eq!(
        b["messages"],
        json!([
            {"role": "system", "content": "SYS"},
            {"role": "user", "content": "hi"},
            // Foreign thinking becomes text; the Responses id is normalized, also in the result.
            {"role": "assistant", "content": "foreign thought", "tool_calls": [
                {"id": "call_1_fc_abc", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
            {"role": "tool", "content": "x", "tool_call_id": "call_1_fc_abc"},
            // The errored assistant message is not replayed.
            {"role": "user", "content": "next"}
        ])
    );
}
