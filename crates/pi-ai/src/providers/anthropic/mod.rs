//! The `anthropic-messages` wire API (Anthropic Messages, streamed).
//!
//! Mirrors pi-ai 0.85.1 `api/anthropic-messages.ts`: [`request`] builds the SDK-equivalent
//! request, [`mapper`] maps the raw SSE stream. Error texts: HTTP errors as the SDK formats
//! them (`<status> <body>`), a caller cancel mid-stream `This operation was aborted`
//! (Corrections box).

mod compat;
mod convert;
mod mapper;
mod oauth;
mod request;
#[cfg(test)]
mod transport_tests;

use std::sync::Arc;

use crate::event::PartialMessage;
use crate::providers::{StreamMapper, WireApi, WireRequest};
use crate::types::{Context, Model, StreamOptions, api};

/// The `anthropic-messages` wire API.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnthropicMessages;

/// The `anthropic-messages` wire API as a shared trait object.
pub fn anthropic() -> Arc<dyn WireApi> {
    Arc::new(AnthropicMessages)
}

impl WireApi for AnthropicMessages {
    fn api(&self) -> &'static str {
        api::ANTHROPIC_MESSAGES
    }

    fn build_request(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
        api_key: &str,
    ) -> Result<WireRequest, String> {
        request::build_request(model, context, options, api_key)
    }

    fn new_mapper(
        &self,
        model: &Model,
        partial: PartialMessage,
        _options: &StreamOptions,
    ) -> Box<dyn StreamMapper> {
        Box::new(mapper::AnthropicMapper::new(model, partial))
    }

    /// The Anthropic SDK's `APIError` message: `<status> <msg>` where `msg` is a JSON body's
    /// `message` (a non-string one re-serialized), else the whole JSON body re-serialized
    /// compactly, else the raw text; no body at all gives `<status> status code (no body)`.
    fn format_http_error(&self, status: u16, body: &str) -> String {
        use serde_json::Value;
        let parsed = serde_json::from_str::<Value>(body)
            .ok()
            .filter(|v| match v {
                Value::Null | Value::Bool(false) => false,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                _ => true,
            });
        let msg = match parsed {
            Some(v) => match v.get("message") {
                Some(Value::String(s)) if !s.is_empty() => s.clone(),
                Some(m) if !matches!(m, Value::Null | Value::Bool(false) | Value::String(_)) => {
                    crate::json::to_string(m).unwrap_or_default()
                }
                _ => crate::json::to_string(&v).unwrap_or_default(),
            },
            None => body.to_owned(),
        };
        if msg.is_empty() {
            format!("{status} status code (no body)")
        } else {
            format!("{status} {msg}")
        }
    }

    fn abort_text(&self) -> &'static str {
        "This operation was aborted"
    }
}
