//! The Codex wire API through the driver and the replay server, on the streams of
//! `tests/data/codex/`.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use super::*;
use crate::event::AssistantMessageEvent;
use crate::providers::driver::stream_wire;
use crate::testkit::{ReplayHandle, ReplayServer, Reply};
use crate::types::{AssistantContent, AssistantMessage, StopReason, Tool, UserMessage};

const GUARD: Duration = Duration::from_secs(10);

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/codex/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

fn token(account: &str) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let payload = json!({"https://api.openai.com/auth": {"chatgpt_account_id": account}, "exp": 1});
    format!(
        "{}.{}.sig",
        b64.encode("{\"alg\":\"RS256\"}"),
        b64.encode(payload.to_string())
    )
}

fn model(handle: &ReplayHandle) -> Model {
    let mut m = crate::models::builtin_models_for("openai-codex")
        .into_iter()
        .find(|m| m.id == "gpt-5.5")
        .unwrap()
        .clone();
    m.base_url = format!("{}/backend-api", handle.base_url());
    m
}

fn context() -> Context {
    Context {
        system_prompt: Some("You are pi.".into()),
        messages: vec![UserMessage::text("hi").into()],
        tools: None,
    }
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some(token("acct-9")),
        session_id: Some("sess-1".into()),
        ..Default::default()
    }
}

async fn run(
    script: Vec<Reply>,
    ctx: Context,
    opts: StreamOptions,
) -> (Vec<AssistantMessageEvent>, ReplayHandle) {
    let (_, handle) = ReplayServer::start(script).await.unwrap();
    let m = model(&handle);
    let mut stream = stream_wire(openai_codex_responses(), &m, &ctx, opts);
    let mut events = Vec::new();
    loop {
        match tokio::time::timeout(GUARD, stream.next_event()).await {
            Ok(Some(e)) => events.push(e),
            Ok(None) => break,
            Err(_) => panic!("stream hung"),
        }
    }
    (events, handle)
}

fn last(events: &[AssistantMessageEvent]) -> AssistantMessage {
    match events.last() {
        Some(AssistantMessageEvent::Done { message, .. }) => (**message).clone(),
        Some(AssistantMessageEvent::Error { error, .. }) => (**error).clone(),
        other => panic!("{other:?}"),
    }
}

fn text_of(m: &AssistantMessage) -> String {
    m.content
        .iter()
        .filter_map(|c| match c {
            AssistantContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_request_has_pi_shape_and_response_done_ends_it() {
    let mut opts = options();
    opts.reasoning = Some(crate::types::ThinkingLevel::High);
    let (events, handle) = run(
        vec![Reply::sse(data("text-response-done-crlf.sse"))],
        context(),
        opts,
    )
    .await;
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Stop, "{:?}", m.error_message);
    assert_eq!(text_of(&m), "Hello from Codex.");
    assert_eq!(m.api, "openai-codex-responses");
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.cache_read),
        (20.0, 8.0, 100.0)
    );
    let req = &handle.requests()[0];
    assert_eq!(req.path, "/backend-api/codex/responses");
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {}", token("acct-9")).as_str())
    );
    assert_eq!(req.header("chatgpt-account-id"), Some("acct-9"));
    assert_eq!(req.header("originator"), Some("pi"));
    assert_eq!(req.header("openai-beta"), Some("responses=experimental"));
    assert_eq!(req.header("accept"), Some("text/event-stream"));
    assert_eq!(req.header("session-id"), Some("sess-1"));
    assert_eq!(req.header("x-client-request-id"), Some("sess-1"));
    assert!(
        req.header("user-agent").unwrap().starts_with("pi"),
        "{:?}",
        req.header("user-agent")
    );
    let body = req.body_json().unwrap();
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "model",
            "store",
            "stream",
            "instructions",
            "input",
            "text",
            "include",
            "prompt_cache_key",
            "tool_choice",
            "parallel_tool_calls",
            "reasoning"
        ]
    );
    assert_eq!(body["model"], "gpt-5.5");
    assert_eq!(body["store"], false);
    assert_eq!(body["instructions"], "You are pi.");
    assert_eq!(body["text"], json!({"verbosity": "low"}));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["prompt_cache_key"], "sess-1");
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(
        body["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    // The system prompt goes in `instructions`, not in `input`.
    assert_eq!(body["input"].as_array().unwrap().len(), 1);
    assert_eq!(body["input"][0]["role"], "user");
}

#[tokio::test]
async fn tool_calls_and_the_default_instructions() {
    let ctx = Context {
        system_prompt: None,
        messages: vec![UserMessage::text("read a.txt").into()],
        tools: Some(vec![Tool {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            ..Default::default()
        }]),
    };
    let mut opts = options();
    opts.session_id = None;
    let (events, handle) = run(vec![Reply::sse(data("function-call.sse"))], ctx, opts).await;
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::ToolUse, "{:?}", m.error_message);
    let call = m
        .content
        .iter()
        .find_map(|c| match c {
            AssistantContent::ToolCall(t) => Some(t.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (call.id.as_str(), call.name.as_str()),
        ("call_1|fc_1", "read")
    );
    assert_eq!(
        Value::Object(call.arguments.clone()),
        json!({"path": "a.txt"})
    );
    let req = &handle.requests()[0];
    let body = req.body_json().unwrap();
    assert_eq!(body["instructions"], "You are a helpful assistant.");
    assert_eq!(body.get("prompt_cache_key"), None);
    assert_eq!(req.header("session-id"), None);
    assert_eq!(body["tools"][0]["name"], "read");
    assert_eq!(body["parallel_tool_calls"], true);
}

#[tokio::test]
async fn incomplete_error_and_failed_streams() {
    let (events, _) = run(
        vec![Reply::sse(data("incomplete.sse"))],
        context(),
        options(),
    )
    .await;
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Length, "{:?}", m.error_message);
    let (events, _) = run(
        vec![Reply::sse(data("error-event.sse"))],
        context(),
        options(),
    )
    .await;
    let m = last(&events);
    assert_eq!(m.stop_reason, StopReason::Error);
    assert_eq!(
        m.error_message.as_deref(),
        Some("Codex error: The server had an error while processing your request.")
    );
    let (events, _) = run(
        vec![Reply::sse(data("response-failed.sse"))],
        context(),
        options(),
    )
    .await;
    assert_eq!(
        last(&events).error_message.as_deref(),
        Some("Rate limit reached for gpt-5.5.")
    );
    let (events, _) = run(
        vec![Reply::sse(data("no-terminal.sse"))],
        context(),
        options(),
    )
    .await;
    assert_eq!(
        last(&events).error_message.as_deref(),
        Some("Codex stream ended without a stop reason")
    );
}

#[tokio::test]
async fn http_errors_and_bad_tokens() {
    let limit = json!({"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached", "plan_type": "PLUS"}});
    let (events, _) = run(vec![Reply::json(429, &limit)], context(), options()).await;
    assert_eq!(
        last(&events).error_message.as_deref(),
        Some("You have hit your ChatGPT usage limit (plus plan).")
    );
    let (events, _) = run(
        vec![Reply::json(
            400,
            &json!({"error": {"message": "Unsupported model"}}),
        )],
        context(),
        options(),
    )
    .await;
    assert_eq!(
        last(&events).error_message.as_deref(),
        Some("Unsupported model")
    );
    let mut opts = options();
    opts.api_key = Some("sk-not-a-jwt".into());
    let (events, handle) = run(vec![], context(), opts).await;
    assert_eq!(
        last(&events).error_message.as_deref(),
        Some("Failed to extract accountId from token")
    );
    assert_eq!(handle.request_count(), 0);
}

#[test]
fn usage_limit_reset_time_and_urls() {
    let body =
        json!({"error": {"code": "usage_limit_reached", "resets_at": 1_000_600}}).to_string();
    assert_eq!(
        format_http_error(429, &body, 1_000_000_000.0),
        "You have hit your ChatGPT usage limit. Try again in ~10 min."
    );
    assert_eq!(format_http_error(500, "", 0.0), "Request failed");
    assert_eq!(
        codex_url("https://chatgpt.com/backend-api/"),
        "https://chatgpt.com/backend-api/codex/responses"
    );
    assert_eq!(codex_url("http://h/codex"), "http://h/codex/responses");
    assert_eq!(
        codex_url("http://h/codex/responses"),
        "http://h/codex/responses"
    );
}

#[test]
fn the_seven_codex_models_are_served() {
    let models = crate::models::builtin_models_for("openai-codex");
    assert_eq!(models.len(), 7);
    for m in models {
        assert_eq!(m.api, OPENAI_CODEX_RESPONSES);
    }
    assert!(crate::providers::registry::get_api_provider(OPENAI_CODEX_RESPONSES).is_some());
}
