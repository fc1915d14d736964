//! The `google-generative-ai` wire API (Gemini `streamGenerateContent`, SSE).
//!
//! Mirrors pi-ai 0.85.1 `api/google-generative-ai.ts` and `api/google-shared.ts` as they reach
//! the wire through `@google/genai`: `request` builds the REST request, `mapper` maps the
//! chunks. Error texts: HTTP errors as the SDK's `ApiError` message (the JSON body
//! re-serialized), a caller cancel mid-stream `This operation was aborted`.

pub(crate) mod mapper;
mod partial_args;
pub(crate) mod request;
mod thinking;
#[cfg(test)]
mod transport_tests;

use crate::providers::StreamError;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::event::PartialMessage;
use crate::providers::{StreamMapper, WireApi, WireRequest};
use crate::types::{Context, Model, StreamOptions, api};

/// Which of pi's two Gemini adapters a shared piece of code serves (they differ in a few
/// model-family rules and texts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// `google-generative-ai`.
    Gemini,
    /// `google-vertex`.
    Vertex,
}

/// The `google-generative-ai` wire API.
#[derive(Clone, Copy, Debug, Default)]
pub struct GoogleGenerativeAi;

/// The `google-generative-ai` wire API as a shared trait object.
pub fn google() -> Arc<dyn WireApi> {
    Arc::new(GoogleGenerativeAi)
}

impl WireApi for GoogleGenerativeAi {
    fn api(&self) -> &'static str {
        api::GOOGLE_GENERATIVE_AI
    }

    fn build_request(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
        api_key: &str,
    ) -> Result<WireRequest, StreamError> {
        request::build_request(model, context, options, api_key)
    }

    fn new_mapper(
        &self,
        model: &Model,
        partial: PartialMessage,
        _options: &StreamOptions,
    ) -> Box<dyn StreamMapper> {
        Box::new(mapper::GoogleMapper::new(model, partial, Flavor::Gemini))
    }

    /// `@google/genai`'s `ApiError` message: a JSON body re-serialized compactly; any other
    /// body wrapped as `{"error":{"message":<text>,"code":<status>,"status":<reason>}}`.
    fn format_http_error(&self, status: u16, body: &str) -> String {
        sdk_error_message(status, body)
    }

    fn abort_text(&self) -> &'static str {
        "This operation was aborted"
    }

    /// The adapter calls `fetch` directly: undici's `fetch failed`.
    fn connection_error_text(&self) -> &'static str {
        "fetch failed"
    }

    /// `@google/genai` sets no request timeout of its own.
    fn request_timeout_text(&self) -> Option<&'static str> {
        None
    }

    /// `@google/genai` `processStreamResponse`: text left after the last event delimiter
    /// when the body ends.
    fn unterminated_event_text(&self) -> Option<&'static str> {
        Some("Incomplete JSON segment at the end")
    }
}

/// `@google/genai`'s `ApiError` message for a non-2xx response (both Gemini adapters).
pub(crate) fn sdk_error_message(status: u16, body: &str) -> String {
    let value = serde_json::from_str::<Value>(body).unwrap_or_else(|_| {
        let reason = reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        json!({ "error": { "message": body, "code": status, "status": reason } })
    });
    crate::json::to_string(&value).unwrap_or_else(|_| body.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_errors_are_the_sdk_messages() {
        let g = GoogleGenerativeAi;
        assert_eq!(
            g.format_http_error(
                400,
                "{\n  \"error\": {\"code\": 400, \"message\": \"bad\"}\n}\n"
            ),
            r#"{"error":{"code":400,"message":"bad"}}"#
        );
        assert_eq!(
            g.format_http_error(502, "upstream down"),
            r#"{"error":{"message":"upstream down","code":502,"status":"Bad Gateway"}}"#
        );
        assert_eq!(g.abort_text(), "This operation was aborted");
    }
}
