//! Both OpenAI wire APIs through the driver and the replay server (real sockets): a whole
//! exchange, and the reference's texts for a pre-cancelled token, a mid-stream cancel, a
//! stall, missing response headers, a reset connection and an HTTP error.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::event::AssistantMessageEvent;
use crate::providers::WireApi;
use crate::providers::driver::stream_wire;
use crate::providers::openai_completions::OpenAiCompletions;
use crate::providers::openai_responses::OpenAiResponses;
use crate::stream::AssistantMessageEventStream;
use crate::testkit::{ReplayHandle, ReplayServer, Reply, SseBuilder};
use crate::types::{AssistantMessage, Context, Model, StopReason, StreamOptions, UserMessage};

/// Hang guard only; nothing asserts on time.
const GUARD: Duration = Duration::from_secs(10);

fn model(api: &str, handle: &ReplayHandle) -> Model {
    Model {
        id: "replay-model".into(),
        name: "replay-model".into(),
        api: api.into(),
        provider: "replay".into(),
        base_url: format!("{}/v1", handle.base_url()),
        max_tokens: 100,
        ..Default::default()
    }
}

fn context() -> Context {
    Context {
        system_prompt: Some("sys".into()),
        messages: vec![UserMessage::text("Say hello").into()],
        tools: None,
    }
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("sk-test".into()),
        session_id: Some("sess-1".into()),
        ..Default::default()
    }
}

fn chat_body(parts: &[&str]) -> String {
    let mut b = SseBuilder::new();
    for p in parts {
        b = b.data(&json!({"id": "c1", "model": "replay-model",
            "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": null}]}));
    }
    b.data(&json!({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
        .data(&json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 2}}))
        .data_raw("[DONE]")
        .build()
}

fn responses_body(parts: &[&str]) -> String {
    let mut b = SseBuilder::new()
        .event(
            "response.created",
            &json!({"type": "response.created", "response": {"id": "resp_1"}}),
        )
        .event(
            "response.output_item.added",
            &json!({"type": "response.output_item.added", "output_index": 0,
                "item": {"type": "message", "id": "msg_1", "content": []}}),
        );
    for p in parts {
        b = b.event(
            "response.output_text.delta",
            &json!({"type": "response.output_text.delta", "output_index": 0, "delta": p}),
        );
    }
    b.event(
        "response.output_item.done",
        &json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "message", "id": "msg_1",
                "content": [{"type": "output_text", "text": parts.concat()}]}}),
    )
    .event(
        "response.completed",
        &json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed",
            "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}}}),
    )
    .build()
}

async fn collect(mut stream: AssistantMessageEventStream) -> Vec<AssistantMessageEvent> {
    let mut events = Vec::new();
    loop {
        match tokio::time::timeout(GUARD, stream.next_event()).await {
            Ok(Some(e)) => events.push(e),
            Ok(None) => return events,
            Err(_) => panic!("stream hung after {} events", events.len()),
        }
    }
}

fn terminal_error(events: &[AssistantMessageEvent]) -> (StopReason, AssistantMessage) {
    match events.last() {
        Some(AssistantMessageEvent::Error { reason, error }) => (*reason, (**error).clone()),
        other => panic!("expected a terminal error, got {other:?}"),
    }
}

async fn run(
    api: Arc<dyn WireApi>,
    script: Vec<Reply>,
    opts: StreamOptions,
) -> (Vec<AssistantMessageEvent>, ReplayHandle) {
    let (_, handle) = ReplayServer::start(script).await.unwrap();
    let m = model(api.api(), &handle);
    let events = collect(stream_wire(api, &m, &context(), opts)).await;
    (events, handle)
}

fn apis() -> [(Arc<dyn WireApi>, String, &'static str); 2] {
    [
        (
            Arc::new(OpenAiCompletions),
            chat_body(&["Hel", "lo"]),
            "/v1/chat/completions",
        ),
        (
            Arc::new(OpenAiResponses),
            responses_body(&["Hel", "lo"]),
            "/v1/responses",
        ),
    ]
}

#[tokio::test]
async fn a_whole_exchange_over_http() {
    for (api, body, path) in apis() {
        let (events, handle) =
            run(api.clone(), vec![Reply::sse(body).chunk_size(7)], options()).await;
        let Some(AssistantMessageEvent::Done { reason, message }) = events.last() else {
            panic!("{}: {:?}", api.api(), events.last());
        };
        assert_eq!(*reason, StopReason::Stop);
        assert_eq!(message.text(), "Hello");
        assert_eq!(message.usage.output, 2.0);
        let requests = handle.requests();
        assert_eq!(requests.len(), 1);
        let r = &requests[0];
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", path));
        assert_eq!(r.header("authorization"), Some("Bearer sk-test"));
        assert_eq!(r.header("content-type"), Some("application/json"));
        assert!(
            r.header("user-agent")
                .is_some_and(|ua| ua.starts_with("pi ("))
        );
        let body: Value = r.body_json().unwrap();
        assert_eq!(body["model"], json!("replay-model"));
        assert_eq!(body["stream"], json!(true));
    }
}

#[tokio::test]
async fn a_pre_cancelled_token_sends_no_request() {
    for (api, body, _) in apis() {
        let token = CancellationToken::new();
        token.cancel();
        let opts = StreamOptions {
            signal: Some(token),
            ..options()
        };
        let (events, handle) = run(api, vec![Reply::sse(body)], opts).await;
        assert_eq!(events.len(), 1);
        let (reason, error) = terminal_error(&events);
        assert_eq!(reason, StopReason::Aborted);
        assert_eq!(error.error_message.as_deref(), Some("Request aborted"));
        assert_eq!(handle.request_count(), 0);
    }
}

#[tokio::test]
async fn a_mid_stream_cancel_gives_the_reference_texts() {
    let cases: [(Arc<dyn WireApi>, String, &str); 2] = [
        (
            Arc::new(OpenAiCompletions),
            chat_body(&["partial", "never"]),
            "Request was aborted",
        ),
        (
            Arc::new(OpenAiResponses),
            responses_body(&["partial", "never"]),
            "OpenAI Responses stream ended before a terminal response event",
        ),
    ];
    for (api, body, text) in cases {
        let stall_at = body.find("never").unwrap() - 40;
        let (_, handle) = ReplayServer::start(vec![Reply::sse(body).stall_after_bytes(stall_at)])
            .await
            .unwrap();
        let token = CancellationToken::new();
        let opts = StreamOptions {
            signal: Some(token.clone()),
            ..options()
        };
        let m = model(api.api(), &handle);
        let mut stream = stream_wire(api, &m, &context(), opts);
        let mut seen = Vec::new();
        while let Some(e) = tokio::time::timeout(GUARD, stream.next_event())
            .await
            .unwrap()
        {
            let delta = e.kind() == "text_delta";
            seen.push(e);
            if delta {
                break;
            }
        }
        token.cancel();
        seen.extend(collect(stream).await);
        let (reason, error) = terminal_error(&seen);
        assert_eq!(reason, StopReason::Aborted);
        assert_eq!(error.error_message.as_deref(), Some(text));
        assert_eq!(error.text(), "partial");
    }
}

#[tokio::test]
async fn transport_failures_give_the_reference_texts() {
    for (api, body, _) in apis() {
        let stall = StreamOptions {
            idle_timeout_ms: Some(150),
            ..options()
        };
        let at = body.len() / 2;
        let (events, _h) = run(
            api.clone(),
            vec![Reply::sse(body.clone()).stall_after_bytes(at)],
            stall,
        )
        .await;
        assert_eq!(
            terminal_error(&events).1.error_message.as_deref(),
            Some("terminated")
        );

        let (events, _h) = run(
            api.clone(),
            vec![Reply::sse(body).disconnect_after_bytes(at)],
            options(),
        )
        .await;
        assert_eq!(
            terminal_error(&events).1.error_message.as_deref(),
            Some("terminated")
        );

        let timeout = StreamOptions {
            timeout_ms: Some(150),
            ..options()
        };
        let (events, _h) = run(api.clone(), vec![Reply::stall_before_headers()], timeout).await;
        assert_eq!(events.len(), 1);
        assert_eq!(
            terminal_error(&events).1.error_message.as_deref(),
            Some("Request timed out.")
        );

        let (events, _h) = run(api.clone(), vec![Reply::reset_before_headers()], options()).await;
        assert_eq!(events.len(), 1);
        assert_eq!(
            terminal_error(&events).1.error_message.as_deref(),
            Some("Connection error.")
        );
    }
}

#[tokio::test]
async fn http_errors_are_formatted_per_api() {
    let body = json!({"error": {"message": "boom", "type": "server_error"}});
    let cases: [(Arc<dyn WireApi>, &str); 2] = [
        (
            Arc::new(OpenAiCompletions),
            "400: {\"message\":\"boom\",\"type\":\"server_error\"}",
        ),
        (
            Arc::new(OpenAiResponses),
            "OpenAI API error (400): {\"message\":\"boom\",\"type\":\"server_error\"}",
        ),
    ];
    for (api, text) in cases {
        let (events, _h) = run(api, vec![Reply::json(400, &body)], options()).await;
        assert_eq!(events.len(), 1);
        let (reason, error) = terminal_error(&events);
        assert_eq!(reason, StopReason::Error);
        assert_eq!(error.error_message.as_deref(), Some(text));
    }
}
