//! The shared driver: runs one [`WireApi`] request and frames its events.
//!
//! Mirrors the common adapter skeleton of pi-ai 0.85.1 with the transport
//! behaviour pi 0.85.1 shows on the wire (observed), once for every wire API:
//!
//! 1. The stream is returned at once; a Tokio task does the work.
//! 2. Key (`options.api_key`, else the provider's environment variable, else `""`), request
//!    ([`WireApi::build_request`]), `on_payload` (may replace the body).
//! 3. pi's retry wrapper (`http_retry` module): default 0 retries; a cancelled token before or
//!    during the request, or while sleeping between attempts, fails with `Request aborted`
//!    and nothing more is sent. Non-2xx → [`WireApi::format_http_error`].
//! 4. Request timeout `timeout_ms ?? (idle limit || 2^31−1)` without response headers →
//!    `Request timed out.` ([`WireApi::request_timeout_text`]); a connection failure before
//!    headers → [`WireApi::connection_error_text`].
//! 5. `on_response`, then `start`; body chunks go through the API's body decoder
//!    ([`WireApi::new_decoder`]: the SSE parser, or Bedrock's event-stream decoder) into the
//!    [`StreamMapper`]; a decoder failure (a bad frame, an exception message) ends the stream
//!    after the events decoded before it. A gap between chunks longer than the idle limit
//!    (`idle_timeout_ms`, default 300 000 ms, 0 = off) or a body cut → `terminated`.
//!    Cancelling mid-stream ends it at once with [`WireApi::abort_text`], whatever the server
//!    does. An event past the parser's limit ([`crate::sse::DEFAULT_MAX_EVENT_BYTES`], 64 MiB;
//!    pi has none) ends it with the [`crate::sse::SseError`] text, after the events before it.
//! 6. End of body → [`StreamMapper::on_end`] → `done{reason: stopReason, message}`; a body
//!    ending inside an event fails with [`WireApi::unterminated_event_text`] when the API
//!    has one (Google).
//! 7. Any failure → `error` with the partial content, usage so far and `errorMessage`;
//!    stopReason `aborted` when the caller's token is cancelled, else `error`. Failures
//!    before `start` yield a lone `error`. A failure mid-stream first lets the mapper settle
//!    its scratch state ([`StreamMapper::on_failure`]); an `error` (not `aborted`) gets the
//!    API's [`WireApi::failure_diagnostic`], from the failed or streaming response.
//!
//! Dropping the returned stream cancels the task and with it the HTTP request.
//!
//! Headers are sent as [`WireRequest::headers`] lists them (the wire API merges model and
//! caller headers and honours deletions); a later duplicate (case-insensitive) replaces an
//! earlier one, and `content-type: application/json` is added unless present. The body is
//! written with [`crate::json`] (JavaScript number spelling).

mod http_retry;
#[cfg(test)]
mod tests;

use std::hash::BuildHasher;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::{
    FailedResponse, OutgoingRequest, RequestFailure, StreamError, StreamMapper, WireApi,
    WireRequest,
};
use crate::event::{AssistantMessageEvent, PartialMessage};
use crate::sse::SseEvent;
use crate::stream::{AssistantMessageEventStream, EventSink, event_channel};
use crate::types::{
    AssistantMessage, Context, Model, ResponseInfo, StopReason, StreamOptions, now_ms,
};

use http_retry::AttemptFailure;
pub use http_retry::DEFAULT_MAX_RETRY_DELAY_MS;

/// Default idle limit between body chunks (`httpIdleTimeoutMs`), in ms.
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 300_000;
/// The request timeout when neither `timeout_ms` nor an idle limit is set: 2^31−1 ms, the
/// largest JavaScript timer.
pub const MAX_TIMEOUT_MS: u64 = 2_147_483_647;

static CLIENT: LazyLock<Option<reqwest::Client>> = LazyLock::new(|| {
    // The proxy is chosen per request from the environment as pi-ai does (`proxy` module);
    // a setting it rejects fails the request before this closure is asked (`send_with_retries`).
    let proxy = reqwest::Proxy::custom(|url| {
        super::proxy::proxy_for(url, &super::provider_env::ProviderEnv::Process)
            .ok()
            .flatten()
    });
    reqwest::Client::builder().proxy(proxy).build().ok()
});

/// The process-wide HTTP client shared by every request (connection pool, TLS config), or
/// `None` when it could not be built (no TLS backend).
///
/// It trusts the Mozilla roots (`webpki-roots`) and the system's (`rustls-native-certs`: the
/// platform store, or the PEM file `SSL_CERT_FILE` / directory `SSL_CERT_DIR` name instead),
/// and sends each request through the proxy [`super::proxy::proxy_for`] picks.
pub fn http_client() -> Option<&'static reqwest::Client> {
    CLIENT.as_ref()
}

/// Streams one request of `api` for `model` over HTTP.
///
/// Never fails outside the stream: every failure, including a missing Tokio runtime, arrives
/// as an `error` event. Must be called from within a Tokio runtime for the request to run.
pub fn stream_wire(
    api: Arc<dyn WireApi>,
    model: &Model,
    context: &Context,
    options: StreamOptions,
) -> AssistantMessageEventStream {
    let partial = PartialMessage::new(AssistantMessage::empty(
        &model.api,
        &model.provider,
        &model.id,
    ));
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        let mut message = partial.snapshot();
        message.stop_reason = StopReason::Error;
        message.error_message = Some("pi-ai streams must be started inside a Tokio runtime".into());
        return AssistantMessageEventStream::error_only(message);
    };
    let signal = options.signal.clone();
    let token = signal
        .as_ref()
        .map(CancellationToken::child_token)
        .unwrap_or_default();
    let (sink, stream) = event_channel(Some(token.clone()));
    let api_key = options
        .api_key
        .clone()
        .filter(|k| !k.is_empty())
        .or_else(|| crate::models::get_env_api_key(&model.provider))
        .unwrap_or_default();
    // Built here, not in the task, so the context need not be cloned; a failure is still
    // reported inside the stream.
    let built = api.build_request(model, context, &options, &api_key);
    let run = Run {
        api,
        api_key,
        model: model.clone(),
        options,
        signal,
        token,
        sink,
        partial,
        response: None,
    };
    runtime.spawn(run.run(built));
    stream
}

/// One request in flight.
struct Run {
    api: Arc<dyn WireApi>,
    /// The resolved key, for [`WireApi::authorize`].
    api_key: String,
    model: Model,
    options: StreamOptions,
    /// The caller's token: decides `aborted` vs `error`.
    signal: Option<CancellationToken>,
    /// Cancelled by the caller's token or by dropping the stream.
    token: CancellationToken,
    sink: EventSink,
    partial: PartialMessage,
    /// The last response: the non-2xx one that ended the request, or the one streaming.
    response: Option<ResponseMeta>,
}

/// Status, headers and (for a non-2xx status) body text of a response, kept for
/// [`WireApi::failure_diagnostic`].
struct ResponseMeta {
    status: u16,
    headers: HeaderMap,
    error_body: Option<String>,
}

/// The outcome of reading one body chunk.
enum Chunk {
    Data(Bytes),
    End,
    Failed,
}

impl Run {
    async fn run(mut self, built: Result<WireRequest, StreamError>) {
        if let Err(error) = self.drive(built).await {
            self.fail(error).await;
        }
    }

    /// Pushes the terminal `error` with `error`'s text as `errorMessage` (nothing when the
    /// consumer is gone). The one place a [`StreamError`] becomes text.
    async fn fail(&mut self, error: StreamError) {
        if self.sink.is_closed() || self.sink.is_finished() {
            return;
        }
        let reason = if self.signal.as_ref().is_some_and(|s| s.is_cancelled()) {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        let diagnostic = if reason == StopReason::Error {
            let response = self.response.as_ref().map(|r| FailedResponse {
                status: r.status,
                headers: &r.headers,
                error_body: r.error_body.as_deref(),
            });
            self.api.failure_diagnostic(&RequestFailure {
                error: &error,
                response,
            })
        } else {
            None
        };
        let error = self.partial.update(|m| {
            m.stop_reason = reason;
            m.error_message = Some(error.to_string());
            if let Some(diagnostic) = diagnostic {
                // pi appends it after `errorMessage`: a new `diagnostics` key comes last.
                m.diagnostics_last |= m.diagnostics.is_none();
                m.diagnostics.get_or_insert_with(Vec::new).push(diagnostic);
            }
            m.clone()
        });
        self.sink
            .push(AssistantMessageEvent::Error {
                reason,
                error: Box::new(error),
            })
            .await;
    }

    /// Everything up to the terminal event; `Err(error)` = fail with `error`.
    async fn drive(&mut self, built: Result<WireRequest, StreamError>) -> Result<(), StreamError> {
        let request = built?;
        let mut body = request.body;
        if let Some(on_payload) = self.options.on_payload.clone()
            && let Some(replacement) = on_payload(body.clone(), self.model.clone()).await?
        {
            body = replacement;
        }
        let body = Bytes::from(
            crate::json::to_vec(&body).map_err(|e| StreamError::Encode(e.to_string()))?,
        );
        let mut outgoing = OutgoingRequest {
            url: request.url,
            headers: request.headers,
            body,
        };
        let auth = self.api.authorize(&self.api_key, &outgoing);
        let extra = tokio::select! {
            biased;
            _ = self.token.cancelled() => return Err(StreamError::RequestAborted),
            extra = auth => extra?,
        };
        outgoing.headers.extend(extra);
        let OutgoingRequest { url, headers, body } = outgoing;
        let headers = header_map(&headers)?;
        let response = self.send_with_retries(&url, &headers, &body).await?;
        self.response = Some(ResponseMeta {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            error_body: None,
        });
        if let Some(on_response) = self.options.on_response.clone() {
            on_response(response_info(&response), self.model.clone()).await?;
        }
        let mut mapper = self
            .api
            .new_mapper(&self.model, self.partial.clone(), &self.options);
        // A frozen copy: the mapper keeps filling the live accumulator while the consumer may
        // not have handled `start` yet, and pi's `message_start` never shows content or a
        // final stop reason. Later events carry the live handle.
        let start = AssistantMessageEvent::Start {
            partial: PartialMessage::new(self.partial.snapshot()),
        };
        if !self.sink.push(start).await {
            return Ok(());
        }
        let read = self.read_body(response, mapper.as_mut()).await;
        if read.is_err() {
            mapper.on_failure();
        }
        read
    }

    /// pi's retry wrapper around [`Run::attempt`].
    async fn send_with_retries(
        &mut self,
        url: &str,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Result<reqwest::Response, StreamError> {
        let Some(client) = http_client() else {
            return Err(StreamError::Transport(
                self.api.connection_error_text().to_owned(),
            ));
        };
        let Ok(parsed) = reqwest::Url::parse(url) else {
            // The SDKs build the URL with `new URL(…)` before any request (not retried).
            return Err(StreamError::InvalidUrl);
        };
        // An unusable proxy setting fails here, unsent, instead of silently going direct.
        // `StreamError::Proxy` carries text: the typed error becomes its message here.
        super::proxy::proxy_for(&parsed, &super::provider_env::ProviderEnv::Process)
            .map_err(|e| StreamError::Proxy(e.to_string()))?;
        let max_retries = self.options.max_retries.unwrap_or(0);
        let mut remaining = max_retries;
        loop {
            if self.token.is_cancelled() {
                return Err(StreamError::RequestAborted);
            }
            let attempt = tokio::select! {
                biased;
                _ = self.token.cancelled() => return Err(StreamError::RequestAborted),
                r = self.attempt(client, url, headers, body) => r,
            };
            let failure = match attempt {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            if self.token.is_cancelled() {
                return Err(StreamError::RequestAborted);
            }
            if remaining == 0 || !failure.is_retryable() {
                self.remember_failure(&failure);
                return Err(failure.into_error());
            }
            let index = max_retries - remaining;
            remaining -= 1;
            let delay = http_retry::retry_delay(
                &failure,
                index,
                self.options.max_retry_delay_ms,
                now_ms(),
                random_unit(),
            );
            let delay = match delay {
                Ok(delay) => delay,
                Err(error) => {
                    self.remember_failure(&failure);
                    return Err(error);
                }
            };
            tokio::select! {
                biased;
                _ = self.token.cancelled() => return Err(StreamError::RequestAborted),
                _ = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// Keeps the status failure that ends the request for [`WireApi::failure_diagnostic`].
    fn remember_failure(&mut self, failure: &AttemptFailure) {
        if let (Some(status), Some(headers)) = (failure.status, &failure.headers) {
            self.response = Some(ResponseMeta {
                status,
                headers: headers.clone(),
                error_body: failure.body.clone(),
            });
        }
    }

    /// One HTTP attempt up to a 2xx response's headers.
    async fn attempt(
        &self,
        client: &reqwest::Client,
        url: &str,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Result<reqwest::Response, AttemptFailure> {
        let send = client
            .post(url)
            .headers(headers.clone())
            .body(body.clone())
            .send();
        let (limit, timeout_text) = headers_limit(self.api.as_ref(), &self.options);
        let sent = match limit {
            Some(limit) => match tokio::time::timeout(limit, send).await {
                Ok(sent) => sent,
                Err(_) => return Err(AttemptFailure::transport(timeout_text)),
            },
            None => send.await,
        };
        let response =
            sent.map_err(|_| AttemptFailure::transport(self.api.connection_error_text()))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let headers = response.headers().clone();
        let text = match limit {
            Some(limit) => {
                tokio::time::timeout(limit, read_error_body(response, MAX_ERROR_BODY_BYTES))
                    .await
                    .ok()
                    .flatten()
            }
            None => read_error_body(response, MAX_ERROR_BODY_BYTES).await,
        };
        let message = self.api.format_http_error_with_headers(
            status.as_u16(),
            &headers,
            text.as_deref().unwrap_or(""),
        );
        Err(AttemptFailure {
            status: Some(status.as_u16()),
            headers: Some(headers),
            message,
            body: text,
        })
    }

    /// Reads the body to its end, feeding the mapper; ends with `done` or `Err`.
    async fn read_body(
        &mut self,
        mut response: reqwest::Response,
        mapper: &mut dyn StreamMapper,
    ) -> Result<(), StreamError> {
        let idle = idle_limit(&self.options);
        let mut parser = self.api.new_decoder();
        let mut out = Vec::new();
        let mut events = Vec::new();
        loop {
            let chunk = tokio::select! {
                biased;
                _ = self.token.cancelled() => return Err(StreamError::Aborted(self.api.abort_text())),
                chunk = next_chunk(&mut response, idle) => chunk,
            };
            let fed = match chunk {
                Chunk::Data(bytes) => parser.feed(&bytes, &mut events),
                Chunk::End => break,
                Chunk::Failed => return Err(StreamError::Terminated),
            };
            // Events completed before an oversized one are delivered first.
            if !self.map_events(&mut events, mapper, &mut out).await? {
                return Ok(());
            }
            fed?;
        }
        drop(response);
        if let Some(text) = self.api.unterminated_event_text()
            && parser.has_unterminated_event()
        {
            return Err(StreamError::Incomplete(text));
        }
        let finished = parser.finish(&mut events);
        if !self.map_events(&mut events, mapper, &mut out).await? {
            return Ok(());
        }
        finished?;
        if self.token.is_cancelled() {
            return Err(StreamError::Aborted(self.api.abort_text()));
        }
        let ended = mapper.on_end(&mut out);
        if !self.flush(&mut out).await {
            return Ok(());
        }
        ended?;
        let message = self.partial.snapshot();
        match message.stop_reason {
            StopReason::Error | StopReason::Aborted => Err(message
                .error_message
                .map_or(StreamError::Unknown, StreamError::Provider)),
            StopReason::Pending => Err(StreamError::Unknown),
            reason => {
                self.sink
                    .push(AssistantMessageEvent::Done {
                        reason,
                        message: Box::new(message),
                    })
                    .await;
                Ok(())
            }
        }
    }

    /// Maps (and clears) `events` and delivers what the mapper produced. `Ok(false)` = the
    /// consumer is gone; `Err(error)` = the mapper failed (events before the failure are
    /// delivered).
    async fn map_events(
        &mut self,
        events: &mut Vec<SseEvent>,
        mapper: &mut dyn StreamMapper,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<bool, StreamError> {
        for event in events.drain(..) {
            if let Err(error) = mapper.on_event(&event, out) {
                self.flush(out).await;
                return Err(error);
            }
        }
        Ok(self.flush(out).await)
    }

    /// Delivers and clears `out`; `false` when the consumer is gone.
    async fn flush(&mut self, out: &mut Vec<AssistantMessageEvent>) -> bool {
        for event in out.drain(..) {
            if !self.sink.push(event).await {
                return false;
            }
        }
        true
    }
}

/// The idle limit between body chunks (`idle_timeout_ms`, default 300 000 ms); `None` = off.
fn idle_limit(options: &StreamOptions) -> Option<Duration> {
    match options.idle_timeout_ms.unwrap_or(DEFAULT_IDLE_TIMEOUT_MS) {
        0 => None,
        ms => Some(Duration::from_millis(ms)),
    }
}

/// How long to wait for response headers, and the `errorMessage` when that runs out:
/// `timeout_ms ?? (idle limit || 2^31−1)` with the API's timeout text, or, for APIs without a
/// request timeout, the idle limit with the connection-error text.
fn headers_limit(api: &dyn WireApi, options: &StreamOptions) -> (Option<Duration>, &'static str) {
    match api.request_timeout_text() {
        Some(text) => {
            let idle = options.idle_timeout_ms.unwrap_or(DEFAULT_IDLE_TIMEOUT_MS);
            let fallback = if idle > 0 { idle } else { MAX_TIMEOUT_MS };
            let ms = options.timeout_ms.unwrap_or(fallback);
            (Some(Duration::from_millis(ms)), text)
        }
        None => (idle_limit(options), api.connection_error_text()),
    }
}

/// Reads the next body chunk within the idle limit.
async fn next_chunk(response: &mut reqwest::Response, idle: Option<Duration>) -> Chunk {
    let read = response.chunk();
    let result = match idle {
        Some(limit) => match tokio::time::timeout(limit, read).await {
            Ok(result) => result,
            Err(_) => return Chunk::Failed,
        },
        None => read.await,
    };
    match result {
        Ok(Some(bytes)) => Chunk::Data(bytes),
        Ok(None) => Chunk::End,
        Err(_) => Chunk::Failed,
    }
}

/// The request headers: later entries replace earlier ones with the same (case-insensitive)
/// name; `content-type: application/json` unless given.
fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, StreamError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let key = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| StreamError::InvalidHeaderName(name.clone()))?;
        // The value is not echoed: it may be a credential.
        let value = HeaderValue::from_str(value)
            .map_err(|_| StreamError::InvalidHeaderValue(name.clone()))?;
        map.insert(key, value);
    }
    if !map.contains_key(CONTENT_TYPE) {
        map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    Ok(map)
}

/// Most bytes of an error reply's body pi-rs reads (1 MiB): far above any provider's error
/// JSON, and what the error message quotes. pi reads the whole body (`response.text()`).
pub const MAX_ERROR_BODY_BYTES: usize = 1024 * 1024;

/// The body of an error reply as text (bytes that are not UTF-8 become U+FFFD), reading no
/// more than `max` bytes of it; a longer body is cut at a character boundary within `max`
/// and ends with `… (cut: the error body is longer than <max> bytes)`. `None` when the body
/// fails before its end (as `response.text()` failing).
pub(crate) async fn read_error_body(mut response: reqwest::Response, max: usize) -> Option<String> {
    let mut bytes = Vec::new();
    let mut cut = false;
    while let Some(chunk) = response.chunk().await.ok()? {
        let room = max - bytes.len();
        if chunk.len() > room {
            bytes.extend_from_slice(&chunk[..room]);
            cut = true;
            break;
        }
        bytes.extend_from_slice(&chunk);
    }
    if !cut {
        return Some(String::from_utf8_lossy(&bytes).into_owned());
    }
    // Drop a character the cut split (at most three bytes), then say where the text stops.
    let valid = match std::str::from_utf8(&bytes) {
        Ok(_) => bytes.len(),
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => bytes.len(),
    };
    bytes.truncate(valid);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    text.push_str(&format!(
        "… (cut: the error body is longer than {max} bytes)"
    ));
    Some(text)
}

/// Status and lower-cased headers for `on_response`.
fn response_info(response: &reqwest::Response) -> ResponseInfo {
    ResponseInfo {
        status: response.status().as_u16(),
        headers: response
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
    }
}

/// A uniform random number in `[0, 1)` for retry jitter (no RNG dependency: the standard
/// library's randomly keyed hasher).
fn random_unit() -> f64 {
    let bits = std::collections::hash_map::RandomState::new().hash_one(now_ms());
    (bits >> 11) as f64 / (1u64 << 53) as f64
}
