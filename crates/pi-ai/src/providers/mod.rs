//! Wire APIs and the provider registry.
//!
//! Each wire API (`anthropic-messages`, `openai-completions`, `openai-responses`,
//! `google-generative-ai`, `bedrock-converse-stream`, …) implements [`WireApi`]: a pure
//! request builder, a body decoder ([`BodyDecoder`], SSE unless the API frames its body
//! otherwise) and a pure stream mapper ([`StreamMapper`]) from the decoded events to
//! [`AssistantMessageEvent`]s. The shared
//! driver (`driver.rs`) owns everything else — HTTP, timeouts, cancellation, retries, the
//! `start`/`done`/`error` framing — so each mapper can be tested and fuzzed without a network.
//!
//! Mirrors pi-ai 0.85.1 `providers/*` and the common adapter skeleton.

pub mod driver;
pub mod faux;
pub mod registry;
mod stream_error;

pub use stream_error::{StreamError, StrictSchemaError};

use serde_json::Value;

use crate::event::{AssistantMessageEvent, PartialMessage};
use crate::sse::SseEvent;
use crate::types::{Context, Diagnostic, Model, StreamOptions};

/// An HTTP request a wire API wants sent.
///
/// `Debug` prints header names only: the auth header (and configured headers) carry
/// credentials.
#[derive(Clone, PartialEq)]
pub struct WireRequest {
    /// Full URL.
    pub url: String,
    /// Headers in order; later entries override earlier ones with the same (case-insensitive)
    /// name. Auth headers included.
    pub headers: Vec<(String, String)>,
    /// JSON body (passed through `on_payload` by the driver before sending).
    pub body: Value,
}

impl std::fmt::Debug for WireRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WireRequest")
            .field("url", &self.url)
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("body", &self.body)
            .finish()
    }
}

/// The request as it will be sent, for [`WireApi::authorize`]: the final URL, headers and
/// body bytes (after `on_payload`).
#[derive(Clone)]
pub struct OutgoingRequest {
    /// Full URL.
    pub url: String,
    /// Headers in order (later entries win, case-insensitively).
    pub headers: Vec<(String, String)>,
    /// The body exactly as sent.
    pub body: bytes::Bytes,
}

impl std::fmt::Debug for OutgoingRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutgoingRequest")
            .field("url", &self.url)
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// What [`WireApi::authorize`] returns: headers to add (last, so they win), or the failure.
pub type AuthFuture =
    futures::future::BoxFuture<'static, Result<Vec<(String, String)>, StreamError>>;

/// Maps one response's SSE events onto the shared partial message.
///
/// Contract: never panics on any input; scratch state (partial JSON buffers, stream indices)
/// lives in the mapper, never in the message. `Err(error)` means "the adapter throws": the
/// driver ends the stream with an `error` event whose `errorMessage` is `error`'s text.
pub trait StreamMapper: Send {
    /// Handles one SSE event, appending the events it produces to `out`.
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), StreamError>;

    /// The body ended: close open blocks (pushing their `*_end` events) and run the
    /// post-checks. `Ok(())` = the message in `partial` is final (its `stop_reason` is set);
    /// `Err(error)` = fail with `error`'s text.
    fn on_end(&mut self, out: &mut Vec<AssistantMessageEvent>) -> Result<(), StreamError>;

    /// The stream failed after the response started (a bad frame, an exception, a cut body,
    /// cancellation): settle scratch state into the message as pi's `catch` does before its
    /// `error` event (e.g. Bedrock's encrypted reasoning as base64), pushing no events.
    /// Default: nothing to settle.
    fn on_failure(&mut self) {}
}

/// A failed request as [`WireApi::failure_diagnostic`] sees it.
#[derive(Clone, Copy, Debug)]
pub struct RequestFailure<'a> {
    /// Why it failed (its `Display` is the `errorMessage`).
    pub error: &'a StreamError,
    /// The response that ended it (a non-2xx status) or that was streaming when it failed;
    /// `None` when no response arrived.
    pub response: Option<FailedResponse<'a>>,
}

/// The response of a [`RequestFailure`].
#[derive(Clone, Copy, Debug)]
pub struct FailedResponse<'a> {
    /// The HTTP status (2xx when the failure came mid-stream).
    pub status: u16,
    /// The response headers (lower-case names).
    pub headers: &'a reqwest::header::HeaderMap,
    /// The body text of a non-2xx response; `None` for a streamed one.
    pub error_body: Option<&'a str>,
}

/// Splits a response body into the events a [`StreamMapper`] reads.
///
/// The default is the SSE parser; Bedrock's binary event stream has its own decoder, which
/// names each event by its `:event-type` header and puts the JSON payload in `data`.
/// Contract: never panics; events completed before a failure are pushed before `Err`.
pub trait BodyDecoder: Send {
    /// Decodes one body chunk, pushing every completed event to `out`.
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), StreamError>;

    /// The body ended: pushes a last pending event, or fails when the body stopped inside
    /// one and the framing forbids that.
    fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), StreamError>;

    /// Whether the body so far ends inside an event (for
    /// [`WireApi::unterminated_event_text`]).
    fn has_unterminated_event(&self) -> bool;
}

impl BodyDecoder for crate::sse::SseParser {
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), StreamError> {
        Ok(crate::sse::SseParser::feed(self, chunk, out)?)
    }

    fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), StreamError> {
        Ok(crate::sse::SseParser::finish(self, out)?)
    }

    fn has_unterminated_event(&self) -> bool {
        crate::sse::SseParser::has_unterminated_event(self)
    }
}

/// One wire protocol.
pub trait WireApi: Send + Sync + 'static {
    /// The api id, e.g. `anthropic-messages`.
    fn api(&self) -> &'static str;

    /// Builds the request (URL, headers incl. auth and `User-Agent`, body) for `context`.
    /// `api_key` is the resolved key. `Err(error)` fails the stream with `error`'s text
    /// before any request is sent.
    fn build_request(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
        api_key: &str,
    ) -> Result<WireRequest, StreamError>;

    /// A fresh mapper for one response, writing into `partial`.
    fn new_mapper(
        &self,
        model: &Model,
        partial: PartialMessage,
        options: &StreamOptions,
    ) -> Box<dyn StreamMapper>;

    /// A fresh body decoder for one response. Default: the SSE parser.
    fn new_decoder(&self) -> Box<dyn BodyDecoder> {
        Box::new(crate::sse::SseParser::new())
    }

    /// The `errorMessage` for a non-2xx response, with its headers (lower-case names); the
    /// default ignores them and asks [`WireApi::format_http_error`]. Bedrock reads the error
    /// code from `x-amzn-errortype`.
    fn format_http_error_with_headers(
        &self,
        status: u16,
        _headers: &reqwest::header::HeaderMap,
        body: &str,
    ) -> String {
        self.format_http_error(status, body)
    }

    /// Credentials that need I/O or the final bytes — an OAuth token exchange, a request
    /// signature: runs once per request after `on_payload`, before the first attempt, with
    /// the resolved `api_key`. The returned headers are added after the request's own.
    /// `Err(text)` fails the stream with `text` before anything is sent. Default: none.
    fn authorize(&self, _api_key: &str, _request: &OutgoingRequest) -> AuthFuture {
        Box::pin(async { Ok(Vec::new()) })
    }

    /// A diagnostic to append to the message of a request that failed with stopReason
    /// `error` (not `aborted`), beside its `errorMessage`: pi's structured failure details
    /// (Bedrock's `bedrock_response_failure`). Default: none.
    fn failure_diagnostic(&self, _failure: &RequestFailure<'_>) -> Option<Diagnostic> {
        None
    }

    /// The `errorMessage` for a non-2xx response with its body text.
    fn format_http_error(&self, status: u16, body: &str) -> String;

    /// The `errorMessage` when the caller cancels mid-stream.
    fn abort_text(&self) -> &'static str;

    /// The `errorMessage` when the connection fails before response headers (refused, reset,
    /// closed). Default `Connection error.` (the OpenAI and Anthropic SDKs); Google's adapter
    /// calls `fetch` directly and reports `fetch failed`.
    fn connection_error_text(&self) -> &'static str {
        "Connection error."
    }

    /// The `errorMessage` when no response headers arrive within the request timeout, or
    /// `None` when the API has no request timeout of its own (Google). With
    /// `None` the driver still bounds the wait for headers by the idle limit
    /// (`httpIdleTimeoutMs`, as undici's headers timeout does) and then reports
    /// [`WireApi::connection_error_text`]. Default `Some("Request timed out.")`.
    fn request_timeout_text(&self) -> Option<&'static str> {
        Some("Request timed out.")
    }

    /// The `errorMessage` when a successful body ends inside an event (anything but
    /// whitespace after the last blank line, e.g. a `text/html` page), or `None` (default)
    /// when the API handles that tail as a last event. Google's SDK fails with
    /// `Incomplete JSON segment at the end` (not retried).
    fn unterminated_event_text(&self) -> Option<&'static str> {
        None
    }
}

pub mod anthropic;
pub mod azure_openai_responses;
pub mod bedrock;
mod block_events;
mod constrained;
pub mod google;
pub mod google_vertex;
mod json_args;
pub mod mistral;
pub mod provider_env;
pub mod proxy;
pub mod request_headers;
pub mod simple_options;
mod tool_ids;

pub use anthropic::{AnthropicMessages, anthropic};
pub use azure_openai_responses::{AzureOpenAiResponses, azure_openai_responses};
pub use bedrock::{BedrockConverseStream, bedrock_converse_stream};
pub use google::{GoogleGenerativeAi, google};
pub use google_vertex::{GoogleVertex, google_vertex};
pub use mistral::{MistralConversations, mistral_conversations};
pub use provider_env::ProviderEnv;
pub mod openai_codex;
pub mod openai_completions;
pub mod openai_responses;
pub use openai_completions::{OpenAiCompletions, openai_completions};
pub use openai_responses::{OpenAiResponses, openai_responses};
