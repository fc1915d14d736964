//! `anthropic-messages` over real HTTP through the driver and the test kit's replay server:
//! the request on the wire, a whole recorded stream, the in-stream error event, HTTP errors,
//! cancellation and stalls with the reference's texts.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::event::AssistantMessageEvent as Ev;
use crate::providers::driver::stream_wire;
use crate::providers::request_headers::pi_user_agent;
use crate::stream::AssistantMessageEventStream;
use crate::testkit::{ReplayServer, Reply};
use crate::types::{Context, Model, StopReason, StreamOptions, UserMessage};

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
        api: "anthropic-messages".into(),
        provider: "replay-anthropic".into(),
        base_url,
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

fn last_error(events: &[Ev]) -> (StopReason, crate::types::AssistantMessage) {
    match events.last() {
        Some(Ev::Error { reason, error }) => (*reason, (**error).clone()),
        other => panic!("expected an error event, got {other:?}"),
    }
}

#[tokio::test]
async fn a_recorded_stream_over_http_and_the_request_on_the_wire() {
    let body = data("conformance/text_anthropic/01-text.sse");
    let (_, handle) = ReplayServer::start(vec![Reply::sse(body).chunk_size(7)])
        .await
        .unwrap();
    let events = collect(stream_wire(
        crate::providers::anthropic(),
        &model(handle.base_url()),
        &context(),
        options(),
    ))
    .await;
    let Some(Ev::Done { reason, message }) = events.last() else {
        panic!("expected done, got {:?}", events.last());
    };
    assert_eq!(*reason, StopReason::Stop);
    assert_eq!(message.text(), "Hello world!");
    assert_eq!(message.response_id.as_deref(), Some("msg_01"));
    let requests = handle.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(r.query, "beta=true");
    assert_eq!(r.header("x-api-key"), Some("replay-test-key"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("user-agent"), Some(pi_user_agent()));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let sent = r.body_json().unwrap();
    assert_eq!(sent["model"], json!("replay-model"));
    assert_eq!(sent["stream"], json!(true));
    assert_eq!(sent["max_tokens"], json!(16384));
    assert_eq!(
        sent["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "Say hello", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
}

/// `start` carries the message as it was when the response began, however far the producer
/// got before the consumer looked: no content, zero usage, `stopReason: "pending"` (pi's
/// `message_start`). Later events carry the live accumulator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_is_a_snapshot_taken_before_the_body_is_read() {
    let body = data("conformance/text_anthropic/01-text.sse");
    let (_, handle) = ReplayServer::start(vec![Reply::sse(body)]).await.unwrap();
    let mut stream = stream_wire(
        crate::providers::anthropic(),
        &model(handle.base_url()),
        &context(),
        options(),
    );
    let start = tokio::time::timeout(GUARD, stream.next_event())
        .await
        .unwrap()
        .unwrap();
    // Give the producer time to read the whole body into the live accumulator (the old
    // behaviour, a live handle in `start`, showed the finished text here).
    tokio::time::sleep(Duration::from_millis(200)).await;
    let Ev::Start { partial } = &start else {
        panic!("expected start, got {start:?}");
    };
    let snapshot = partial.snapshot();
    assert!(snapshot.content.is_empty(), "{snapshot:?}");
    assert_eq!(snapshot.stop_reason, StopReason::Pending);
    assert_eq!(snapshot.usage, crate::types::Usage::default());
    let rest = collect(stream).await;
    let Some(Ev::Done { message, .. }) = rest.last() else {
        panic!("expected done, got {:?}", rest.last());
    };
    assert_eq!(message.text(), "Hello world!");
}

#[tokio::test]
async fn an_in_stream_error_event_fails_with_its_raw_data() {
    let body = data("bugs/anthropic-mid-stream-overloaded.sse");
    let (_, handle) = ReplayServer::start(vec![Reply::sse(body).chunk_size(1)])
        .await
        .unwrap();
    let events = collect(stream_wire(
        crate::providers::anthropic(),
        &model(handle.base_url()),
        &context(),
        options(),
    ))
    .await;
    let (reason, error) = last_error(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(error.text(), "- Captain\n- Sc");
    assert!(
        error
            .error_message
            .unwrap()
            .starts_with(r#"{"type":"error","error":{"details":null,"type":"overloaded_error""#)
    );
    assert!(!events.iter().any(|e| e.kind() == "done"));
}

#[tokio::test]
async fn http_errors_read_as_the_sdk_writes_them() {
    let body =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let (_, handle) = ReplayServer::start(vec![Reply::json(529, &body)])
        .await
        .unwrap();
    let events = collect(stream_wire(
        crate::providers::anthropic(),
        &model(handle.base_url()),
        &context(),
        options(),
    ))
    .await;
    assert_eq!(events.len(), 1, "setup failures yield a lone error");
    let (_, error) = last_error(&events);
    assert_eq!(
        error.error_message.as_deref(),
        Some(r#"529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#)
    );
}

#[tokio::test]
async fn a_pre_cancelled_token_sends_no_request() {
    let (_, handle) = ReplayServer::start(vec![Reply::sse(data(
        "conformance/text_anthropic/01-text.sse",
    ))])
    .await
    .unwrap();
    let token = CancellationToken::new();
    token.cancel();
    let opts = StreamOptions {
        signal: Some(token),
        ..options()
    };
    let events = collect(stream_wire(
        crate::providers::anthropic(),
        &model(handle.base_url()),
        &context(),
        opts,
    ))
    .await;
    let (reason, error) = last_error(&events);
    assert_eq!(events.len(), 1);
    assert_eq!(reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request aborted"));
    assert_eq!(handle.request_count(), 0);
}

#[tokio::test]
async fn cancelling_during_a_stall_gives_the_reference_text() {
    let body = data("conformance/text_anthropic/01-text.sse");
    let first_delta = std::str::from_utf8(&body)
        .unwrap()
        .find("text_delta")
        .unwrap()
        + 200;
    let (_, handle) = ReplayServer::start(vec![Reply::sse(body).stall_after_bytes(first_delta)])
        .await
        .unwrap();
    let token = CancellationToken::new();
    let opts = StreamOptions {
        signal: Some(token.clone()),
        ..options()
    };
    let mut stream = stream_wire(
        crate::providers::anthropic(),
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

#[tokio::test]
async fn a_stall_past_the_idle_limit_is_terminated() {
    let body = data("conformance/text_anthropic/01-text.sse");
    let (_, handle) = ReplayServer::start(vec![Reply::sse(body).stall_after_bytes(120)])
        .await
        .unwrap();
    let opts = StreamOptions {
        idle_timeout_ms: Some(200),
        ..options()
    };
    let events = collect(stream_wire(
        crate::providers::anthropic(),
        &model(handle.base_url()),
        &context(),
        opts,
    ))
    .await;
    let (reason, error) = last_error(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(error.error_message.as_deref(), Some("terminated"));
}
