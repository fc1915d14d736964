//! Driver tests against the replay server (real sockets, real time), with a trivial wire
//! API that turns each SSE `data:` line into a text delta.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::testkit::{ReplayHandle, ReplayServer, Reply, SseBuilder};
use crate::types::{AssistantContent, TextContent};

/// Upper bound for anything that should happen "promptly"; only a hang guard.
// A hang guard, not a speed goal: a 64 MiB body through a debug build on a loaded machine
// takes several seconds.
const GUARD: Duration = Duration::from_secs(60);

struct LineApi {
    google_like: bool,
}

impl WireApi for LineApi {
    fn api(&self) -> &'static str {
        "line-test"
    }
    fn build_request(
        &self,
        model: &Model,
        _context: &Context,
        _options: &StreamOptions,
        api_key: &str,
    ) -> Result<WireRequest, StreamError> {
        if model.id == "unbuildable" {
            return Err(StreamError::Provider("cannot build".into()));
        }
        Ok(WireRequest {
            url: format!("{}/v1/messages", model.base_url),
            headers: vec![
                ("x-api-key".into(), api_key.into()),
                ("X-Dup".into(), "first".into()),
                ("x-dup".into(), "second".into()),
            ],
            body: json!({"model": model.id, "stream": true}),
        })
    }
    fn new_mapper(
        &self,
        _model: &Model,
        partial: PartialMessage,
        _options: &StreamOptions,
    ) -> Box<dyn StreamMapper> {
        Box::new(LineMapper {
            partial,
            open: None,
        })
    }
    fn format_http_error(&self, status: u16, body: &str) -> String {
        format!("{status}: {body}")
    }
    fn abort_text(&self) -> &'static str {
        "This operation was aborted"
    }
    fn connection_error_text(&self) -> &'static str {
        if self.google_like {
            "fetch failed"
        } else {
            "Connection error."
        }
    }
    fn request_timeout_text(&self) -> Option<&'static str> {
        if self.google_like {
            None
        } else {
            Some("Request timed out.")
        }
    }
}

struct LineMapper {
    partial: PartialMessage,
    open: Option<usize>,
}

impl StreamMapper for LineMapper {
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), StreamError> {
        match event.data.as_str() {
            "[STOP]" => {
                self.partial.update(|m| m.stop_reason = StopReason::Stop);
                return Ok(());
            }
            "[FAIL]" => return Err(StreamError::Provider("mapper failed".into())),
            "[USAGE]" => {
                self.partial.update(|m| m.usage.output = 7.0);
                return Ok(());
            }
            _ => {}
        }
        let index = match self.open {
            Some(i) => i,
            None => {
                let i = self.partial.update(|m| {
                    m.content.push(AssistantContent::Text(TextContent::new("")));
                    m.content.len() - 1
                });
                self.open = Some(i);
                out.push(AssistantMessageEvent::TextStart {
                    content_index: i,
                    partial: self.partial.clone(),
                });
                i
            }
        };
        self.partial.update(|m| {
            if let Some(AssistantContent::Text(t)) = m.content.get_mut(index) {
                t.text.push_str(&event.data);
            }
        });
        out.push(AssistantMessageEvent::TextDelta {
            content_index: index,
            delta: event.data.clone(),
            partial: self.partial.clone(),
        });
        Ok(())
    }

    fn on_end(&mut self, out: &mut Vec<AssistantMessageEvent>) -> Result<(), StreamError> {
        if let Some(i) = self.open.take() {
            out.push(AssistantMessageEvent::TextEnd {
                content_index: i,
                content: self.partial.read().text(),
                partial: self.partial.clone(),
            });
        }
        if self.partial.read().stop_reason == StopReason::Pending {
            return Err(StreamError::Incomplete(
                "Line stream ended without a stop reason",
            ));
        }
        Ok(())
    }
}

fn api() -> Arc<dyn WireApi> {
    Arc::new(LineApi { google_like: false })
}

fn model(handle: &ReplayHandle) -> Model {
    Model {
        id: "m1".into(),
        name: "M1".into(),
        api: "line-test".into(),
        provider: "test-provider".into(),
        base_url: handle.base_url(),
        ..Default::default()
    }
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("sk-test".into()),
        ..Default::default()
    }
}

fn text_body(parts: &[&str]) -> String {
    parts
        .iter()
        .fold(SseBuilder::new(), |b, p| b.data_raw(p))
        .build()
}

async fn collect(mut stream: AssistantMessageEventStream) -> Vec<AssistantMessageEvent> {
    let mut events = Vec::new();
    loop {
        match tokio::time::timeout(GUARD, stream.next_event()).await {
            Ok(Some(e)) => events.push(e),
            Ok(None) => return events,
            Err(_) => panic!("stream hung; got {:?}", kinds(&events)),
        }
    }
}

fn kinds(events: &[AssistantMessageEvent]) -> Vec<&'static str> {
    events.iter().map(AssistantMessageEvent::kind).collect()
}

fn terminal_error(events: &[AssistantMessageEvent]) -> (StopReason, AssistantMessage) {
    match events.last() {
        Some(AssistantMessageEvent::Error { reason, error }) => (*reason, (**error).clone()),
        other => panic!("expected a terminal error, got {other:?}"),
    }
}

async fn run(
    script: Vec<Reply>,
    opts: StreamOptions,
) -> (Vec<AssistantMessageEvent>, ReplayHandle) {
    let (_, handle) = ReplayServer::start(script).await.unwrap();
    let events = collect(stream_wire(
        api(),
        &model(&handle),
        &Context::default(),
        opts,
    ))
    .await;
    (events, handle)
}

#[tokio::test]
async fn streams_deltas_then_done() {
    let body = text_body(&["Hel", "lo", "[USAGE]", "[STOP]"]);
    let (events, handle) = run(vec![Reply::sse(body).chunk_size(3)], options()).await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "text_start",
            "text_delta",
            "text_delta",
            "text_end",
            "done"
        ]
    );
    let AssistantMessageEvent::Done { reason, message } = events.last().unwrap() else {
        unreachable!()
    };
    assert_eq!(*reason, StopReason::Stop);
    assert_eq!(message.text(), "Hello");
    assert_eq!(message.usage.output, 7.0);
    assert_eq!(message.api, "line-test");
    assert_eq!(message.provider, "test-provider");
    assert_eq!(message.model, "m1");
    let requests = handle.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("x-api-key"), Some("sk-test"));
    assert_eq!(requests[0].header("x-dup"), Some("second"));
    assert_eq!(requests[0].header("content-type"), Some("application/json"));
    assert_eq!(
        requests[0].body_json(),
        Some(json!({"model": "m1", "stream": true}))
    );
}

#[tokio::test]
async fn a_base_url_without_a_scheme_is_an_invalid_url() {
    let (_, handle) = ReplayServer::start(vec![Reply::sse(text_body(&["x", "[STOP]"]))])
        .await
        .unwrap();
    let mut m = model(&handle);
    m.base_url = handle.base_url().replace("http://", "");
    let events = collect(stream_wire(api(), &m, &Context::default(), options())).await;
    assert_eq!(kinds(&events), ["error"]);
    let (reason, error) = terminal_error(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(error.error_message.as_deref(), Some("Invalid URL"));
    assert_eq!(handle.request_count(), 0);
}

#[tokio::test]
async fn a_pre_cancelled_token_sends_nothing() {
    let token = CancellationToken::new();
    token.cancel();
    let opts = StreamOptions {
        signal: Some(token),
        ..options()
    };
    let (events, handle) = run(vec![Reply::sse(text_body(&["x", "[STOP]"]))], opts).await;
    assert_eq!(kinds(&events), ["error"]);
    let (reason, error) = terminal_error(&events);
    assert_eq!(reason, StopReason::Aborted);
    assert_eq!(error.stop_reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request aborted"));
    assert!(error.content.is_empty());
    assert_eq!(handle.request_count(), 0);
}

#[tokio::test]
async fn cancel_during_a_stall_ends_with_the_abort_text() {
    let body = text_body(&["partial", "never"]);
    let stall_at = "data: partial\n\n".len();
    let (_, handle) = ReplayServer::start(vec![Reply::sse(body).stall_after_bytes(stall_at)])
        .await
        .unwrap();
    let token = CancellationToken::new();
    let opts = StreamOptions {
        signal: Some(token.clone()),
        ..options()
    };
    let mut stream = stream_wire(api(), &model(&handle), &Context::default(), opts);
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
    assert_eq!(kinds(&seen), ["start", "text_start", "text_delta", "error"]);
    let (reason, error) = terminal_error(&seen);
    assert_eq!(reason, StopReason::Aborted);
    assert_eq!(
        error.error_message.as_deref(),
        Some("This operation was aborted")
    );
    assert_eq!(error.text(), "partial");
    tokio::time::timeout(GUARD, handle.wait_client_closed(0))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_stall_past_the_idle_limit_is_terminated() {
    let body = text_body(&["so far", "never"]);
    let opts = StreamOptions {
        idle_timeout_ms: Some(150),
        ..options()
    };
    let (events, _h) = run(
        vec![Reply::sse(body).stall_after_bytes("data: so far\n\n".len())],
        opts,
    )
    .await;
    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "error"]
    );
    let (reason, error) = terminal_error(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(error.error_message.as_deref(), Some("terminated"));
    assert_eq!(error.text(), "so far");
}

#[tokio::test]
async fn a_cut_body_is_terminated() {
    let body = text_body(&["abc", "def", "[STOP]"]);
    let (events, _h) = run(vec![Reply::sse(body).disconnect_after_bytes(14)], options()).await;
    let (reason, error) = terminal_error(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(error.error_message.as_deref(), Some("terminated"));
    assert_eq!(error.text(), "abc");
}

#[tokio::test]
async fn no_headers_within_the_request_timeout() {
    let opts = StreamOptions {
        timeout_ms: Some(150),
        ..options()
    };
    let (events, handle) = run(vec![Reply::stall_before_headers()], opts).await;
    assert_eq!(kinds(&events), ["error"]);
    let (reason, error) = terminal_error(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(error.error_message.as_deref(), Some("Request timed out."));
    assert_eq!(handle.request_count(), 1);
}

#[tokio::test]
async fn the_request_timeout_defaults_to_the_idle_limit() {
    let opts = StreamOptions {
        idle_timeout_ms: Some(150),
        ..options()
    };
    let (events, _h) = run(vec![Reply::stall_before_headers()], opts).await;
    let (_, error) = terminal_error(&events);
    assert_eq!(error.error_message.as_deref(), Some("Request timed out."));
}

#[tokio::test]
async fn a_reset_before_headers_is_a_connection_error() {
    let (events, _h) = run(vec![Reply::reset_before_headers()], options()).await;
    assert_eq!(kinds(&events), ["error"]);
    let (reason, error) = terminal_error(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(error.error_message.as_deref(), Some("Connection error."));
}

#[tokio::test]
async fn google_like_apis_report_fetch_failed() {
    let (_, handle) = ReplayServer::start(vec![
        Reply::reset_before_headers(),
        Reply::stall_before_headers(),
    ])
    .await
    .unwrap();
    let google: Arc<dyn WireApi> = Arc::new(LineApi { google_like: true });
    let reset = collect(stream_wire(
        google.clone(),
        &model(&handle),
        &Context::default(),
        options(),
    ))
    .await;
    assert_eq!(
        terminal_error(&reset).1.error_message.as_deref(),
        Some("fetch failed")
    );
    // No request timeout of its own: a timeout_ms is ignored, the idle limit bounds the wait.
    let opts = StreamOptions {
        timeout_ms: Some(1),
        idle_timeout_ms: Some(150),
        ..options()
    };
    let stall = collect(stream_wire(
        google,
        &model(&handle),
        &Context::default(),
        opts,
    ))
    .await;
    assert_eq!(
        terminal_error(&stall).1.error_message.as_deref(),
        Some("fetch failed")
    );
}

#[tokio::test]
async fn http_errors_are_formatted_by_the_wire_api() {
    let body = json!({"error": {"message": "boom"}});
    let (events, handle) = run(vec![Reply::json(500, &body)], options()).await;
    assert_eq!(kinds(&events), ["error"]);
    let (reason, error) = terminal_error(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(
        error.error_message.as_deref(),
        Some("500: {\"error\":{\"message\":\"boom\"}}")
    );
    assert_eq!(handle.request_count(), 1, "0 retries by default");
}

#[tokio::test]
async fn an_error_body_is_quoted_whole_up_to_the_limit_and_cut_past_it() {
    // "é" is two bytes: the cut must not split it.
    for (len, cut) in [
        (MAX_ERROR_BODY_BYTES, false),
        (MAX_ERROR_BODY_BYTES + 1, true),
        (3 * MAX_ERROR_BODY_BYTES, true),
    ] {
        let mut body = "é".repeat(len / 2);
        if len % 2 == 1 {
            body.push('x');
        }
        assert_eq!(body.len(), len);
        let (events, _) = run(vec![Reply::text(500, &body).chunk_size(4096)], options()).await;
        let (_, error) = terminal_error(&events);
        let message = error.error_message.as_deref().unwrap();
        let quoted = message.strip_prefix("500: ").unwrap();
        if cut {
            let kept = quoted
                .strip_suffix("… (cut: the error body is longer than 1048576 bytes)")
                .unwrap();
            assert_eq!(kept.len(), MAX_ERROR_BODY_BYTES);
            assert!(body.starts_with(kept));
        } else {
            assert_eq!(quoted, body);
        }
    }
}

#[tokio::test]
async fn retries_honour_retry_after() {
    let script = vec![
        Reply::text(503, "busy").header("retry-after", "0.05"),
        Reply::text(429, "slow").header("retry-after-ms", "20"),
        Reply::sse(text_body(&["ok", "[STOP]"])),
    ];
    let opts = StreamOptions {
        max_retries: Some(2),
        ..options()
    };
    let (events, handle) = run(script, opts).await;
    assert_eq!(kinds(&events).last(), Some(&"done"));
    assert_eq!(kinds(&events)[0], "start");
    assert_eq!(handle.request_count(), 3);
}

#[tokio::test]
async fn retries_stop_at_the_limit_and_on_client_errors() {
    let script = vec![
        Reply::text(500, "a"),
        Reply::text(502, "b"),
        Reply::text(503, "c"),
    ];
    let opts = StreamOptions {
        max_retries: Some(1),
        ..options()
    };
    let script: Vec<Reply> = script
        .into_iter()
        .map(|r| r.header("retry-after-ms", "1"))
        .collect();
    let (events, handle) = run(script, opts.clone()).await;
    assert_eq!(
        terminal_error(&events).1.error_message.as_deref(),
        Some("502: b")
    );
    assert_eq!(handle.request_count(), 2);

    let (events, handle) = run(vec![Reply::text(400, "bad")], opts.clone()).await;
    assert_eq!(
        terminal_error(&events).1.error_message.as_deref(),
        Some("400: bad")
    );
    assert_eq!(handle.request_count(), 1);

    let no_retry = Reply::text(500, "x").header("x-should-retry", "false");
    let (_, handle) = run(vec![no_retry], opts).await;
    assert_eq!(handle.request_count(), 1);
}

#[tokio::test]
async fn a_server_delay_above_the_cap_fails_without_waiting() {
    let script = vec![Reply::text(429, "later").header("retry-after", "120")];
    let opts = StreamOptions {
        max_retries: Some(3),
        ..options()
    };
    let (events, handle) = run(script, opts).await;
    assert_eq!(
        terminal_error(&events).1.error_message.as_deref(),
        Some("Server requested 120s retry delay (max: 60s). 429: later")
    );
    assert_eq!(handle.request_count(), 1);
}

#[tokio::test]
async fn cancel_while_sleeping_between_retries() {
    let (_, handle) =
        ReplayServer::start(vec![Reply::text(503, "busy").header("retry-after", "30")])
            .await
            .unwrap();
    let token = CancellationToken::new();
    let opts = StreamOptions {
        signal: Some(token.clone()),
        max_retries: Some(2),
        ..options()
    };
    let stream = stream_wire(api(), &model(&handle), &Context::default(), opts);
    while handle.request_count() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    token.cancel();
    let events = collect(stream).await;
    assert_eq!(kinds(&events), ["error"]);
    let (reason, error) = terminal_error(&events);
    assert_eq!(reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request aborted"));
    assert_eq!(handle.request_count(), 1);
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_request() {
    let body = text_body(&["first", "never"]);
    let (_, handle) = ReplayServer::start(vec![
        Reply::sse(body).stall_after_bytes("data: first\n\n".len()),
    ])
    .await
    .unwrap();
    let mut stream = stream_wire(api(), &model(&handle), &Context::default(), options());
    let first = tokio::time::timeout(GUARD, stream.next_event())
        .await
        .unwrap();
    assert_eq!(first.map(|e| e.kind()), Some("start"));
    drop(stream);
    tokio::time::timeout(GUARD, handle.wait_client_closed(0))
        .await
        .expect("the HTTP connection was not closed after the stream was dropped");
}

#[tokio::test]
async fn hooks_replace_the_body_and_see_the_response() {
    let seen = Arc::new(Mutex::new(None));
    let seen_in_hook = seen.clone();
    let opts = StreamOptions {
        on_payload: Some(Arc::new(|body, model| {
            Box::pin(async move {
                assert_eq!(body["model"], "m1");
                Ok(Some(json!({"replaced": model.id})))
            })
        })),
        on_response: Some(Arc::new(move |info, _model| {
            *seen_in_hook.lock().unwrap() = Some(info);
            Box::pin(async { Ok(()) })
        })),
        ..options()
    };
    let reply = Reply::sse(text_body(&["[STOP]"])).header("x-request-id", "req_1");
    let (events, handle) = run(vec![reply], opts).await;
    assert_eq!(kinds(&events), ["start", "done"]);
    assert_eq!(
        handle.requests()[0].body_json(),
        Some(json!({"replaced": "m1"}))
    );
    let info = seen.lock().unwrap().clone().unwrap();
    assert_eq!(info.status, 200);
    assert!(
        info.headers
            .contains(&("x-request-id".into(), "req_1".into()))
    );
}

#[tokio::test]
async fn setup_failures_yield_a_lone_error_and_no_request() {
    let opts = StreamOptions {
        on_payload: Some(Arc::new(|_, _| {
            Box::pin(async { Err("payload hook failed".into()) })
        })),
        ..options()
    };
    let (events, handle) = run(vec![Reply::sse("")], opts).await;
    assert_eq!(kinds(&events), ["error"]);
    assert_eq!(
        terminal_error(&events).1.error_message.as_deref(),
        Some("payload hook failed")
    );
    assert_eq!(handle.request_count(), 0);

    let (_, handle) = ReplayServer::start(vec![]).await.unwrap();
    let mut bad = model(&handle);
    bad.id = "unbuildable".into();
    let events = collect(stream_wire(api(), &bad, &Context::default(), options())).await;
    assert_eq!(kinds(&events), ["error"]);
    assert_eq!(
        terminal_error(&events).1.error_message.as_deref(),
        Some("cannot build")
    );
    assert_eq!(handle.request_count(), 0);
}

#[tokio::test]
async fn on_response_failure_comes_before_start() {
    let opts = StreamOptions {
        on_response: Some(Arc::new(|_, _| Box::pin(async { Err("rejected".into()) }))),
        ..options()
    };
    let (events, _h) = run(vec![Reply::sse(text_body(&["x", "[STOP]"]))], opts).await;
    assert_eq!(kinds(&events), ["error"]);
    assert_eq!(
        terminal_error(&events).1.error_message.as_deref(),
        Some("rejected")
    );
}

#[tokio::test]
async fn mapper_failures_keep_the_partial_content() {
    let body = text_body(&["kept", "[USAGE]", "[FAIL]", "dropped"]);
    let (events, _h) = run(vec![Reply::sse(body)], options()).await;
    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "error"]
    );
    let (reason, error) = terminal_error(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(error.error_message.as_deref(), Some("mapper failed"));
    assert_eq!(error.text(), "kept");
    assert_eq!(error.usage.output, 7.0);
}

#[tokio::test]
async fn an_event_past_the_sse_limit_ends_the_stream_with_an_error() {
    let huge = "x".repeat(crate::sse::DEFAULT_MAX_EVENT_BYTES + 1);
    let body = text_body(&["kept", &huge, "[STOP]"]);
    let (events, _h) = run(vec![Reply::sse(body)], options()).await;
    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "error"]
    );
    let (reason, error) = terminal_error(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(
        error.error_message.as_deref(),
        Some("server-sent event larger than 67108864 bytes")
    );
    assert_eq!(error.text(), "kept");
}

#[tokio::test]
async fn the_end_of_the_body_runs_the_mappers_post_checks() {
    let (events, _h) = run(vec![Reply::sse(text_body(&["x"]))], options()).await;
    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "text_end", "error"]
    );
    assert_eq!(
        terminal_error(&events).1.error_message.as_deref(),
        Some("Line stream ended without a stop reason")
    );
}

#[tokio::test]
async fn an_exhausted_script_is_an_http_error() {
    let (events, _h) = run(vec![], options()).await;
    assert_eq!(
        terminal_error(&events).1.error_message.as_deref(),
        Some(
            "400: {\"error\":{\"type\":\"invalid_request_error\",\"message\":\"replay script exhausted at request #0\"}}"
        )
    );
}

#[test]
fn outside_a_runtime_the_stream_holds_an_error() {
    let m = Model {
        id: "m".into(),
        api: "line-test".into(),
        ..Default::default()
    };
    let stream = stream_wire(api(), &m, &Context::default(), options());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let events = rt.block_on(collect(stream));
    assert_eq!(kinds(&events), ["error"]);
}

#[test]
fn timeouts_follow_the_corrections_box() {
    let opts = |timeout_ms, idle_timeout_ms| StreamOptions {
        timeout_ms,
        idle_timeout_ms,
        ..Default::default()
    };
    let ms = Duration::from_millis;
    assert_eq!(idle_limit(&opts(None, None)), Some(ms(300_000)));
    assert_eq!(idle_limit(&opts(None, Some(0))), None);
    assert_eq!(idle_limit(&opts(None, Some(5))), Some(ms(5)));
    let plain = LineApi { google_like: false };
    assert_eq!(
        headers_limit(&plain, &opts(None, None)),
        (Some(ms(300_000)), "Request timed out.")
    );
    assert_eq!(
        headers_limit(&plain, &opts(None, Some(0))),
        (Some(ms(2_147_483_647)), "Request timed out.")
    );
    assert_eq!(
        headers_limit(&plain, &opts(Some(7), Some(0))),
        (Some(ms(7)), "Request timed out.")
    );
    let google = LineApi { google_like: true };
    assert_eq!(
        headers_limit(&google, &opts(Some(7), Some(9))),
        (Some(ms(9)), "fetch failed")
    );
    assert_eq!(
        headers_limit(&google, &opts(Some(7), Some(0))),
        (None, "fetch failed")
    );
}

#[tokio::test]
async fn cancel_before_headers_is_request_aborted() {
    let (_, handle) = ReplayServer::start(vec![Reply::stall_before_headers()])
        .await
        .unwrap();
    let token = CancellationToken::new();
    let opts = StreamOptions {
        signal: Some(token.clone()),
        ..options()
    };
    let stream = stream_wire(api(), &model(&handle), &Context::default(), opts);
    while handle.request_count() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    token.cancel();
    let events = collect(stream).await;
    assert_eq!(kinds(&events), ["error"]);
    let (reason, error) = terminal_error(&events);
    assert_eq!(reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request aborted"));
    tokio::time::timeout(GUARD, handle.wait_client_closed(0))
        .await
        .unwrap();
}
