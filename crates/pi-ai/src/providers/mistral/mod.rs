//! The `mistral-conversations` wire API: Mistral's chat-completions endpoint with its typed
//! content chunks (`text`, `thinking`) and whole tool calls.
//!
//! Mirrors pi-ai 0.85.1 `api/mistral-conversations.js`, which calls the endpoint with `fetch`
//! (no SDK): `POST <baseUrl>/v1/chat/completions`, `Authorization: Bearer <key>`,
//! `accept: text/event-stream`, `x-affinity: <sessionId>` when prompt caching is on.
//! Layout: `request` (body, tool-call ids), `mapper` (stream mapping).
//!
//! Difference from pi: pi bounds the whole exchange, body included, by one 60 s timer
//! (`timeoutMs ?? 60000`), so a long answer fails mid-stream; pi-rs bounds the wait for
//! response headers (`timeout_ms`, else the idle limit) and the gaps between body chunks, as
//! for every other API.

mod mapper;
mod request;

use std::sync::Arc;

use serde_json::Value;

use super::openai_completions::sdk::truncate_utf16;
use super::request_headers::{HeaderList, pi_user_agent};
use super::{StreamError, StreamMapper, WireApi, WireRequest};
use crate::event::PartialMessage;
use crate::types::{Context, Model, StreamOptions, api};

pub use mapper::MistralMapper;
pub use request::{derive_tool_call_id, tool_call_id_normalizer};

/// pi cuts a Mistral error body at this many UTF-16 units.
const MAX_ERROR_BODY_CHARS: usize = 4000;

/// The `mistral-conversations` [`WireApi`].
#[derive(Clone, Copy, Debug, Default)]
pub struct MistralConversations;

/// The `mistral-conversations` wire API as a shared trait object.
pub fn mistral_conversations() -> Arc<dyn WireApi> {
    Arc::new(MistralConversations)
}

/// `<baseUrl>/v1/chat/completions`, the base path kept (`new URL("v1/chat/completions", base/)`).
fn endpoint(base_url: &str) -> Result<String, StreamError> {
    let mut base = reqwest::Url::parse(base_url).map_err(|_| StreamError::InvalidUrl)?;
    let path = format!("{}/", base.path().trim_end_matches('/'));
    base.set_path(&path);
    base.join("v1/chat/completions")
        .map(|u| u.to_string())
        .map_err(|_| StreamError::InvalidUrl)
}

impl WireApi for MistralConversations {
    fn api(&self) -> &'static str {
        api::MISTRAL_CONVERSATIONS
    }

    /// Fails with `No API key for provider: <p>` without a key.
    fn build_request(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
        api_key: &str,
    ) -> Result<WireRequest, StreamError> {
        if api_key.is_empty() {
            return Err(StreamError::NoApiKey(model.provider.clone()));
        }
        let body = request::build_body(model, context, options)?;
        let url = endpoint(&model.base_url)?;
        let mut headers = HeaderList::new();
        headers.set("User-Agent", pi_user_agent());
        headers.set("accept", "text/event-stream");
        headers.set("authorization", format!("Bearer {api_key}"));
        headers.set("content-type", "application/json");
        headers.apply_json(model.headers.as_ref());
        headers.apply_options(&options.headers);
        let explicit_affinity = model
            .headers
            .iter()
            .flatten()
            .any(|(k, _)| k.eq_ignore_ascii_case("x-affinity"))
            || options
                .headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("x-affinity"));
        if let Some(session) = request::cache_session(options)
            && !explicit_affinity
        {
            headers.set("x-affinity", session);
        }
        Ok(WireRequest {
            url,
            headers: headers.into_vec(),
            body: Value::Object(body),
        })
    }

    fn new_mapper(
        &self,
        model: &Model,
        partial: PartialMessage,
        _options: &StreamOptions,
    ) -> Box<dyn StreamMapper> {
        Box::new(MistralMapper::new(model, partial))
    }

    /// `Mistral API error (<status>): <body, trimmed, at most 4000 characters>`, or the
    /// status text when the body is empty.
    fn format_http_error(&self, status: u16, body: &str) -> String {
        let body = body.trim();
        if body.is_empty() {
            let text = reqwest::StatusCode::from_u16(status)
                .ok()
                .and_then(|s| s.canonical_reason())
                .map(str::to_owned)
                .unwrap_or_else(|| format!("Request failed with status {status}"));
            return format!("Mistral API error ({status}): {text}");
        }
        format!(
            "Mistral API error ({status}): {}",
            truncate_utf16(body, MAX_ERROR_BODY_CHARS)
        )
    }

    /// `fetch`'s abort reason.
    fn abort_text(&self) -> &'static str {
        "This operation was aborted"
    }

    /// pi calls `fetch` directly.
    fn connection_error_text(&self) -> &'static str {
        "fetch failed"
    }

    /// `AbortSignal.timeout`'s reason.
    fn request_timeout_text(&self) -> Option<&'static str> {
        Some("The operation was aborted due to timeout")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_keeps_the_base_path() {
        assert_eq!(
            endpoint("https://api.mistral.ai").unwrap(),
            "https://api.mistral.ai/v1/chat/completions"
        );
        assert_eq!(
            endpoint("http://127.0.0.1:9/proxy//").unwrap(),
            "http://127.0.0.1:9/proxy/v1/chat/completions"
        );
        assert_eq!(
            endpoint("api.mistral.ai").unwrap_err().to_string(),
            "Invalid URL"
        );
    }

    #[test]
    fn http_errors() {
        let api = MistralConversations;
        assert_eq!(
            api.format_http_error(401, " {\"message\":\"Unauthorized\"}\n"),
            "Mistral API error (401): {\"message\":\"Unauthorized\"}"
        );
        assert_eq!(
            api.format_http_error(429, ""),
            "Mistral API error (429): Too Many Requests"
        );
        let long = "x".repeat(4005);
        assert_eq!(
            api.format_http_error(500, &long),
            format!(
                "Mistral API error (500): {}... [truncated 5 chars]",
                "x".repeat(4000)
            )
        );
    }
}
