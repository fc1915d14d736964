//! pi-ai used as a library, the way a dependent crate would: `stream_simple` against the test
//! kit's replay server with recorded bodies of each wire API, the events consumed one by one,
//! an abort mid-stream with a `CancellationToken`, and the early and in-stream errors (no key,
//! unknown api, unreachable or malformed base URL).

use std::time::Duration;

use pi_ai::providers::registry::{stream, stream_simple};
use pi_ai::testkit::{ReplayServer, Reply};
use pi_ai::{
    AssistantMessage, AssistantMessageEvent, Context, Error, Message, Model, StopReason,
    StreamOptions, UserMessage,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

fn data(path: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn model(api: &str, provider: &str, id: &str, base_url: String) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: api.into(),
        provider: provider.into(),
        base_url,
        context_window: 200_000,
        max_tokens: 4_096,
        ..Default::default()
    }
}

fn context() -> Context {
    Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![Message::User(UserMessage::text("Hello"))],
        tools: None,
    }
}

fn options(key: &str) -> StreamOptions {
    StreamOptions {
        api_key: Some(key.into()),
        max_retries: Some(0),
        ..Default::default()
    }
}

/// The `kind()` of every event, with runs of equal kinds collapsed (`text_delta` x3 → one).
fn kinds(events: &[AssistantMessageEvent]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for e in events {
        if out.last() != Some(&e.kind()) {
            out.push(e.kind());
        }
    }
    out
}

/// `events` of an `expected.json` (`text_delta[1]x3`) reduced the same way.
fn expected_kinds(expected: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in expected["events"].as_array().unwrap() {
        let kind = e
            .as_str()
            .unwrap()
            .split(['[', '('])
            .next()
            .unwrap()
            .to_owned();
        if out.last() != Some(&kind) {
            out.push(kind);
        }
    }
    out
}

fn text_of(message: &Value, kind: &str) -> String {
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == kind)
        .map(|c| c[kind].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn thinking_of(message: &AssistantMessage) -> String {
    message
        .content
        .iter()
        .filter_map(|c| match c {
            pi_ai::AssistantContent::Thinking(t) => Some(t.thinking.clone()),
            _ => None,
        })
        .collect()
}

/// Streams one recorded body through `stream_simple` and checks events and final message
/// against the reference's expectation.
async fn replay_recorded(api: &str, provider: &str, id: &str, sse: &str, expected: &str) {
    let (_, server) = ReplayServer::start(vec![Reply::sse(data(sse))])
        .await
        .unwrap();
    let m = model(api, provider, id, server.base_url());
    let mut s = stream_simple(&m, &context(), options("test-key")).unwrap();
    let mut events = Vec::new();
    while let Some(event) = s.next_event().await {
        events.push(event);
    }
    let expected: Value = serde_json::from_str(&data(expected)).unwrap();
    assert_eq!(kinds(&events), expected_kinds(&expected), "{sse}");
    let Some(AssistantMessageEvent::Done { message, .. }) = events.last() else {
        panic!(
            "{sse}: the last event is not done: {:?}",
            events.last().map(|e| e.kind())
        );
    };
    assert_eq!(
        message.text(),
        text_of(&expected["message"], "text"),
        "{sse}"
    );
    assert_eq!(
        thinking_of(message),
        text_of(&expected["message"], "thinking"),
        "{sse}"
    );
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn streams_each_wire_api_from_a_recorded_body() {
    replay_recorded(
        "anthropic-messages",
        "anthropic",
        "claude-sonnet-4-5",
        "streams/anthropic-messages/thinking-signature-text.sse",
        "streams/anthropic-messages/thinking-signature-text.expected.json",
    )
    .await;
    replay_recorded(
        "google-generative-ai",
        "google",
        "gemini-2.0-flash",
        "streams/google-generative-ai/text-crlf.sse",
        "streams/google-generative-ai/text-crlf.expected.json",
    )
    .await;
    replay_recorded(
        "openai-completions",
        "deepseek",
        "deepseek-reasoner",
        "sse/streams/openai-completions/deepseek-reasoning-content-emoji.sse",
        "openai/expected/openai-completions/deepseek-reasoning-content-emoji.expected.json",
    )
    .await;
    replay_recorded(
        "openai-responses",
        "openai",
        "o3-mini",
        "sse/streams/openai-responses/reasoning-summary-then-text-utf8.sse",
        "openai/expected/openai-responses/reasoning-summary-then-text-utf8.expected.json",
    )
    .await;
}

/// Cancels after the first text or thinking delta of a slowly served body: the stream ends
/// with `error {reason: aborted}` and the HTTP connection is closed.
async fn abort_mid_stream(api: &str, provider: &str, id: &str, sse: &str) -> AssistantMessage {
    let reply = Reply::sse(data(sse)).event_delay(Duration::from_millis(20));
    let (_, server) = ReplayServer::start(vec![reply]).await.unwrap();
    let m = model(api, provider, id, server.base_url());
    let signal = CancellationToken::new();
    let opts = StreamOptions {
        signal: Some(signal.clone()),
        ..options("test-key")
    };
    let mut s = stream_simple(&m, &context(), opts).unwrap();
    let mut last = None;
    while let Some(event) = s.next_event().await {
        if matches!(
            event,
            AssistantMessageEvent::TextDelta { .. } | AssistantMessageEvent::ThinkingDelta { .. }
        ) {
            signal.cancel();
        }
        last = Some(event);
    }
    match last {
        Some(AssistantMessageEvent::Error { reason, error }) => {
            assert_eq!(reason, StopReason::Aborted, "{api}");
            assert_eq!(error.stop_reason, StopReason::Aborted, "{api}");
            tokio::time::timeout(Duration::from_secs(10), server.wait_client_closed(0))
                .await
                .unwrap_or_else(|_| panic!("{api}: the request's connection stays open"));
            *error
        }
        other => panic!("{api}: ended with {:?}", other.map(|e| e.kind())),
    }
}

#[tokio::test]
async fn a_cancelled_signal_aborts_every_wire_api_mid_stream() {
    // The reference's texts (pi 0.85.1 on a mid-stream cancel, observed).
    let cases = [
        (
            "anthropic-messages",
            "anthropic",
            "claude-sonnet-4-5",
            "streams/anthropic-messages/thinking-signature-text.sse",
            "This operation was aborted",
        ),
        (
            "google-generative-ai",
            "google",
            "gemini-2.0-flash",
            "streams/google-generative-ai/text-crlf.sse",
            "This operation was aborted",
        ),
        (
            "openai-completions",
            "deepseek",
            "deepseek-reasoner",
            "sse/streams/openai-completions/deepseek-reasoning-content-emoji.sse",
            "Request was aborted",
        ),
        (
            "openai-responses",
            "openai",
            "o3-mini",
            "sse/streams/openai-responses/reasoning-summary-then-text-utf8.sse",
            "OpenAI Responses stream ended before a terminal response event",
        ),
    ];
    for (api, provider, id, sse, text) in cases {
        let error = abort_mid_stream(api, provider, id, sse).await;
        assert_eq!(error.error_message.as_deref(), Some(text), "{api}");
    }
}

#[tokio::test]
async fn missing_key_and_unknown_api_fail_before_any_request() {
    let m = model(
        "openai-completions",
        "my-local-provider",
        "m",
        "http://127.0.0.1:9/v1".into(),
    );
    let err = stream_simple(&m, &context(), StreamOptions::default()).unwrap_err();
    assert!(matches!(err, Error::NoApiKey(_)));
    assert_eq!(
        err.to_string(),
        "No API key for provider: my-local-provider"
    );

    let unknown = model("no-such-api", "x", "m", "http://127.0.0.1:9".into());
    let err = stream_simple(&unknown, &context(), options("k")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "No API provider registered for api: no-such-api"
    );
    // `stream` reports the same failure inside the stream.
    let message = stream(&unknown, &context(), options("k")).result().await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(
        message.error_message.as_deref(),
        Some("No API provider registered for api: no-such-api")
    );
    // An unknown model is the caller's lookup: the catalog answers `None`.
    assert!(pi_ai::models::get_builtin_model("anthropic", "no-such-model").is_none());
}

#[tokio::test]
async fn unreachable_or_malformed_base_urls_end_the_stream_with_an_error() {
    for api in [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
    ] {
        // (An empty base URL means the provider's real endpoint: see the last test.)
        for base_url in ["http://127.0.0.1:1", "not a url"] {
            let m = model(api, "p", "m", base_url.into());
            let mut s = stream_simple(&m, &context(), options("secret-key-123")).unwrap();
            let mut events = Vec::new();
            while let Some(event) = s.next_event().await {
                events.push(event);
            }
            let Some(AssistantMessageEvent::Error { reason, error }) = events.last() else {
                panic!("{api} {base_url:?}: {:?}", kinds(&events));
            };
            assert_eq!(*reason, StopReason::Error, "{api} {base_url:?}");
            let text = error.error_message.clone().unwrap_or_default();
            assert!(!text.is_empty(), "{api} {base_url:?}: no error text");
            assert!(!text.contains("secret-key-123"), "{api}: key in {text}");
            let want = if base_url.starts_with("http") {
                if api == "google-generative-ai" {
                    "fetch failed"
                } else {
                    "Connection error."
                }
            } else {
                "Invalid URL"
            };
            assert_eq!(text, want, "{api} {base_url:?}");
        }
    }
}

#[test]
fn an_empty_base_url_means_the_sdk_default_endpoint() {
    // pi builds its SDK clients with `baseURL: model.baseUrl`; the Anthropic, OpenAI and
    // Google SDKs treat an empty one as their default endpoint (`baseURL || <default>`).
    use pi_ai::providers::WireApi;
    use pi_ai::providers::anthropic::AnthropicMessages;
    use pi_ai::providers::openai_completions::openai_completions;
    use pi_ai::providers::openai_responses::openai_responses;
    let cases: [(&dyn WireApi, &str, &str); 3] = [
        (
            &AnthropicMessages,
            "anthropic",
            "https://api.anthropic.com/v1/messages?beta=true",
        ),
        (
            &*openai_completions(),
            "openai",
            "https://api.openai.com/v1/chat/completions",
        ),
        (
            &*openai_responses(),
            "openai",
            "https://api.openai.com/v1/responses",
        ),
    ];
    for (wire, provider, url) in cases {
        let m = model(wire.api(), provider, "m", String::new());
        let request = wire
            .build_request(&m, &context(), &options("k"), "k")
            .unwrap();
        assert_eq!(request.url, url, "{}", wire.api());
    }
}

#[tokio::test]
async fn dropping_the_stream_mid_way_closes_the_request() {
    let reply = Reply::sse(data(
        "streams/anthropic-messages/thinking-signature-text.sse",
    ))
    .event_delay(Duration::from_millis(20));
    let (_, server) = ReplayServer::start(vec![reply]).await.unwrap();
    let m = model(
        "anthropic-messages",
        "anthropic",
        "claude-sonnet-4-5",
        server.base_url(),
    );
    let mut s = stream_simple(&m, &context(), options("test-key")).unwrap();
    assert!(matches!(
        s.next_event().await,
        Some(AssistantMessageEvent::Start { .. })
    ));
    drop(s);
    tokio::time::timeout(Duration::from_secs(10), server.wait_client_closed(0))
        .await
        .expect("dropping the stream closes the connection");
}

#[test]
fn a_stream_started_outside_a_tokio_runtime_is_an_error_not_a_panic() {
    let m = model(
        "openai-completions",
        "openai",
        "gpt-4o-mini",
        "http://127.0.0.1:9/v1".into(),
    );
    // Started here, with no runtime entered; consumed on a runtime afterwards.
    let s = stream_simple(&m, &context(), options("k")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let message = runtime.block_on(s.result());
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(
        message.error_message.as_deref(),
        Some("pi-ai streams must be started inside a Tokio runtime")
    );
}

/// Every catalog model reaches a registered wire API (the 7 Codex models included);
/// `is_implemented_api` says the same.
#[test]
fn catalog_models_reach_a_registered_wire_api() {
    use std::collections::BTreeMap;
    let models = pi_ai::models::builtin_models();
    let mut missing: BTreeMap<&str, usize> = BTreeMap::new();
    let mut reached = 0;
    for m in models {
        let registered = pi_ai::providers::registry::get_api_provider(&m.api).is_some();
        assert_eq!(
            registered,
            pi_ai::models::is_implemented_api(&m.api),
            "{}",
            m.api
        );
        if registered {
            reached += 1;
        } else {
            *missing.entry(m.api.as_str()).or_default() += 1;
        }
    }
    assert_eq!(missing, BTreeMap::new());
    assert_eq!((reached, models.len()), (1336, 1336));
    let bedrock = models
        .iter()
        .filter(|m| m.api == "bedrock-converse-stream")
        .count();
    assert_eq!(bedrock, 121);
    let per_api = |api: &str| models.iter().filter(|m| m.api == api).count();
    // The four APIs and the seven Codex (ChatGPT-login) models all reach theirs.
    assert_eq!(
        [
            "azure-openai-responses",
            "mistral-conversations",
            "google-vertex",
            "openai-codex-responses"
        ]
        .map(per_api),
        [38, 32, 14, 7]
    );
}
