//! `google-generative-ai` over real HTTP through the driver and the test kit's replay server:
//! the request on the wire, a whole recorded stream, HTTP errors, a reset before headers and
//! cancellation with the reference's texts.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::event::AssistantMessageEvent as Ev;
use crate::providers::driver::stream_wire;
use crate::providers::request_headers::pi_user_agent;
use crate::stream::AssistantMessageEventStream;
use crate::testkit::{ReplayServer, Reply};
use crate::types::{AssistantMessage, Context, Model, StopReason, StreamOptions, UserMessage};

/// Hang guard only; nothing asserts on time.
const GUARD: Duration = Duration::from_secs(10);

fn data(path: &str) -> Vec<u8> {
    let full = format!("{}/tests/data/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

fn model(base_url: String) -> Model {
    Model {
        id: "replay-model".into(),
        name: "replay-model".into(),
        api: "google-generative-ai".into(),
        provider: "replay-google".into(),
        base_url: format!("{base_url}/v1beta"),
        context_window: 128_000,
        max_tokens: 16_384,
        ..Default::default()
    }
}

fn context() -> Context {
    Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![UserMessage::text("Say hello").into()],
        tools: None,
    }
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("replay-test-key".into()),
        ..Default::default()
    }
}

async fn collect(mut stream: AssistantMessageEventStream) -> Vec<Ev> {
    let mut events = Vec::new();
    loop {
        match tokio::time::timeout(GUARD, stream.next_event()).await {
            Ok(Some(e)) => events.push(e),
            Ok(None) => return events,
            Err(_) => panic!("stream hung after {} events", events.len()),
        }
    }
}

fn last_error(events: &[Ev]) -> (StopReason, AssistantMessage) {
    match events.last() {
        Some(Ev::Error { reason, error }) => (*reason, (**error).clone()),
        other => panic!("expected an error event, got {other:?}"),
    }
}

async fn run(reply: Reply, opts: StreamOptions) -> (Vec<Ev>, crate::testkit::ReplayHandle) {
    let (_, handle) = ReplayServer::start(vec![reply]).await.unwrap();
    let events = collect(stream_wire(
        crate::providers::google(),
        &model(handle.base_url()),
        &context(),
        opts,
    ))
    .await;
    (events, handle)
}

#[tokio::test]
async fn a_recorded_stream_over_http_and_the_request_on_the_wire() {
    let body = data("conformance/text_google/01-text.sse");
    let (events, handle) = run(Reply::sse(body).chunk_size(7), options()).await;
    let Some(Ev::Done { reason, message }) = events.last() else {
        panic!("expected done, got {:?}", events.last());
    };
    assert_eq!(*reason, StopReason::Stop);
    assert!(!message.text().is_empty());
    let r = &handle.requests()[0];
    assert_eq!(r.path, "/v1beta/models/replay-model:streamGenerateContent");
    assert_eq!(r.query, "alt=sse");
    assert_eq!(r.header("x-goog-api-key"), Some("replay-test-key"));
    assert_eq!(r.header("user-agent"), Some(pi_user_agent()));
    let sent = r.body_json().unwrap();
    assert_eq!(
        sent["contents"],
        json!([{"role": "user", "parts": [{"text": "Say hello"}]}])
    );
    assert_eq!(sent["generationConfig"], json!({"maxOutputTokens": 16384}));
}

#[tokio::test]
async fn http_errors_are_the_json_body() {
    let body = json!({"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}});
    let (events, _) = run(Reply::json(400, &body), options()).await;
    assert_eq!(events.len(), 1);
    let (_, error) = last_error(&events);
    assert_eq!(
        error.error_message.as_deref(),
        Some(r#"{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}"#)
    );
}

#[tokio::test]
async fn a_body_ending_inside_an_event_is_an_incomplete_json_segment() {
    // A page instead of an event stream, and a last event without its blank line: the SDK
    // keeps both as an unfinished segment and fails at the end of the body.
    let page = Reply::text(200, "<html>hello</html>").header("content-type", "text/html");
    let chunk = r#"data: {"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP","index":0}]}"#;
    for reply in [page, Reply::sse(chunk)] {
        let (events, _) = run(reply, options()).await;
        let (reason, error) = last_error(&events);
        assert_eq!(reason, StopReason::Error);
        assert_eq!(
            error.error_message.as_deref(),
            Some("Incomplete JSON segment at the end")
        );
    }
    // Trailing whitespace after the last blank line is no segment.
    let (events, _) = run(Reply::sse(format!("{chunk}\n\n \r\n")), options()).await;
    assert!(matches!(events.last(), Some(Ev::Done { .. })), "{events:?}");
}

#[tokio::test]
async fn a_reset_before_headers_is_fetch_failed() {
    let (events, _) = run(Reply::reset_before_headers(), options()).await;
    let (reason, error) = last_error(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(error.error_message.as_deref(), Some("fetch failed"));
}

#[tokio::test]
async fn a_missing_key_fails_before_any_request() {
    let opts = StreamOptions {
        api_key: Some(String::new()),
        ..Default::default()
    };
    let (events, handle) = run(Reply::sse(Vec::new()), opts).await;
    // The env may hold a GEMINI key for the `google` provider, never for `replay-google`.
    let (_, error) = last_error(&events);
    assert_eq!(
        error.error_message.as_deref(),
        Some("No API key for provider: replay-google")
    );
    assert_eq!(handle.request_count(), 0);
}

#[tokio::test]
async fn cancelling_during_a_stall_gives_the_reference_text() {
    let body = data("conformance/text_google/01-text.sse");
    let first_event_end = std::str::from_utf8(&body)
        .unwrap()
        .find("\r\n\r\n")
        .unwrap()
        + 4;
    let token = CancellationToken::new();
    let opts = StreamOptions {
        signal: Some(token.clone()),
        ..options()
    };
    let (_, handle) =
        ReplayServer::start(vec![Reply::sse(body).stall_after_bytes(first_event_end)])
            .await
            .unwrap();
    let mut stream = stream_wire(
        crate::providers::google(),
        &model(handle.base_url()),
        &context(),
        opts,
    );
    loop {
        let e = tokio::time::timeout(GUARD, stream.next_event())
            .await
            .unwrap()
            .unwrap();
        if e.kind() == "text_delta" {
            break;
        }
    }
    token.cancel();
    let events = collect(stream).await;
    let (reason, error) = last_error(&events);
    assert_eq!(reason, StopReason::Aborted);
    assert_eq!(
        error.error_message.as_deref(),
        Some("This operation was aborted")
    );
}
