//! The `anthropic-messages` wire API (Anthropic Messages, streamed).
//!
//! Mirrors pi-ai 0.85.1 `api/anthropic-messages.ts`: `request` builds the SDK-equivalent
//! request, `mapper` maps the raw SSE stream. Error texts: HTTP errors as the SDK formats
//! them (`<status> <body>`), a caller cancel mid-stream `This operation was aborted`.

mod compat;
mod convert;
mod mapper;
mod oauth;
mod request;
#[cfg(test)]
mod transport_tests;

use crate::providers::StreamError;
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
    ) -> Result<WireRequest, StreamError> {
        request::build_request(model, context, options, api_key)
    }

    fn new_mapper(
        &self,
        model: &Model,
        partial: PartialMessage,
        options: &StreamOptions,
    ) -> Box<dyn StreamMapper> {
        if let Some(level) = request::managed_effort(model, options) {
            partial.update(|m| m.provider_thinking_level = Some(level));
        }
        let oauth = model.provider != "github-copilot"
            && options
                .api_key
                .as_deref()
                .is_some_and(oauth::is_oauth_token);
        Box::new(mapper::AnthropicMapper::new(model, partial, oauth))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AssistantMessage, ThinkingLevel};

    #[test]
    fn http_errors_are_the_sdk_messages() {
        let a = AnthropicMessages;
        assert_eq!(
            a.format_http_error(
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#
            ),
            r#"400 {"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#
        );
        assert_eq!(
            a.format_http_error(500, r#"{"message":"boom"}"#),
            "500 boom"
        );
        assert_eq!(
            a.format_http_error(502, "<html>bad gateway</html>"),
            "502 <html>bad gateway</html>"
        );
        assert_eq!(a.format_http_error(503, ""), "503 status code (no body)");
        assert_eq!(a.abort_text(), "This operation was aborted");
        assert_eq!(a.connection_error_text(), "Connection error.");
        assert_eq!(a.request_timeout_text(), Some("Request timed out."));
    }

    #[test]
    fn managed_effort_models_record_the_provider_thinking_level() {
        let mut model = Model {
            id: "claude-opus-5".into(),
            provider: "anthropic".into(),
            api: "anthropic-messages".into(),
            reasoning: true,
            ..Default::default()
        };
        let options = StreamOptions {
            reasoning: Some(ThinkingLevel::Low),
            ..Default::default()
        };
        let partial = PartialMessage::new(AssistantMessage::empty(
            "anthropic-messages",
            "anthropic",
            "m",
        ));
        AnthropicMessages.new_mapper(&model, partial.clone(), &options);
        assert_eq!(partial.read().provider_thinking_level, None);
        model.compat = Some(
            serde_json::from_str(
                r#"{"supportsMidConvoEffort": true, "forceAdaptiveThinking": true}"#,
            )
            .unwrap(),
        );
        AnthropicMessages.new_mapper(&model, partial.clone(), &options);
        assert_eq!(
            partial.read().provider_thinking_level.as_deref(),
            Some("low")
        );
        AnthropicMessages.new_mapper(&model, partial.clone(), &StreamOptions::default());
        assert_eq!(
            partial.read().provider_thinking_level.as_deref(),
            Some("high")
        );
    }

    #[test]
    fn both_apis_are_built_into_the_registry() {
        let apis = crate::providers::registry::registered_apis();
        for api in ["anthropic-messages", "google-generative-ai"] {
            assert!(apis.iter().any(|a| a == api), "{api} in {apis:?}");
            let provider = crate::providers::registry::get_api_provider(api).unwrap();
            assert_eq!(provider.api(), api);
            assert!(provider.requires_api_key());
        }
    }
}
