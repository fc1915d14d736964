//! The `openai-responses` wire API: OpenAI's Responses endpoint (typed SSE events, reasoning
//! items, `call_id|item_id` tool-call ids).
//!
//! Mirrors pi 0.85.1 `api/openai-responses.ts` and `api/openai-responses-shared.ts`.
//! Layout: `request` (body building and [`ResponsesCompat`]), `mapper` (stream
//! mapping); the SDK behaviour is shared with `openai-completions`.
//!
//! Not supported: grammar (`custom`) tools and `custom_tool_call` items, deferred tools
//! (`supportsAdditionalTools` / `supportsToolSearch`), a `serviceTier` option (a
//! `service_tier` in `samplingParams` is sent and prices the response like pi's option).

#[cfg(test)]
mod http_tests;
mod mapper;
pub(crate) mod request;

use crate::providers::StreamError;
use std::sync::Arc;

use crate::event::PartialMessage;
use crate::providers::openai_completions::{request as creq, sdk};
use crate::providers::{StreamMapper, WireApi, WireRequest};
use crate::transform::transform_messages;
use crate::types::{AssistantMessage, CacheRetention, Context, Message, Model, StreamOptions, api};

pub use mapper::ResponsesMapper;
pub use request::{ResponsesCompat, normalize_tool_call_id};

/// The `openai-responses` [`WireApi`].
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenAiResponses;

/// The `openai-responses` wire API as a shared trait object.
pub fn openai_responses() -> Arc<dyn WireApi> {
    Arc::new(OpenAiResponses)
}

/// The messages as sent: pi's request-side transforms with this API's tool-call id
/// normalization.
pub(crate) fn prepare_messages(model: &Model, context: &Context) -> Vec<Message> {
    prepare_messages_for(request::TOOL_CALL_PROVIDERS, model, context)
}

/// [`prepare_messages`] keeping the `call|item` ids of the `allowed` providers.
pub(crate) fn prepare_messages_for(
    allowed: &[&str],
    model: &Model,
    context: &Context,
) -> Vec<Message> {
    let normalize = |id: &str, target: &Model, source: &AssistantMessage| {
        request::normalize_tool_call_id_for(allowed, target, id, source)
    };
    transform_messages(&context.messages, model, Some(&normalize))
}

impl WireApi for OpenAiResponses {
    fn api(&self) -> &'static str {
        api::OPENAI_RESPONSES
    }

    /// `POST <baseUrl>/responses` with `Authorization: Bearer <key>`, pi's `User-Agent`,
    /// `model.headers`, session headers (`session_id` + `x-client-request-id`, or OpenRouter's
    /// `x-session-id`) and the caller's headers. Fails with `No API key for provider: <p>`
    /// when there is neither a key nor an authorization header.
    fn build_request(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
        api_key: &str,
    ) -> Result<WireRequest, StreamError> {
        let key = sdk::client_api_key(model, options, api_key)?;
        let compat = ResponsesCompat::resolve(model);
        let mut headers = sdk::base_headers(model, &key);
        let session = options
            .session_id
            .as_deref()
            .filter(|s| !s.is_empty() && creq::cache_retention(options) != CacheRetention::None);
        if let Some(sid) = session {
            if compat.session_affinity_openrouter {
                headers.set("x-session-id", sid);
            } else {
                if !compat.session_affinity_no_session {
                    headers.set("session_id", sid);
                }
                headers.set("x-client-request-id", sid);
            }
        }
        headers.apply_options(&options.headers);
        let messages = prepare_messages(model, context);
        let body = request::build_body(model, context, &messages, options, &compat)?;
        Ok(WireRequest {
            url: sdk::join_url(&model.base_url, "/responses"),
            headers: headers.into_vec(),
            body: serde_json::Value::Object(body),
        })
    }

    fn new_mapper(
        &self,
        model: &Model,
        partial: PartialMessage,
        options: &StreamOptions,
    ) -> Box<dyn StreamMapper> {
        // pi-rs has no `serviceTier` option: a tier requested through `samplingParams` is the
        // one the request carried.
        let requested_tier = creq::sampling_params(model, options).and_then(|p| {
            p.get("service_tier")
                .and_then(|t| t.as_str())
                .map(str::to_owned)
        });
        Box::new(ResponsesMapper::new(model, partial, requested_tier))
    }

    /// `OpenAI API error (<status>): <error object JSON or SDK message>`.
    fn format_http_error(&self, status: u16, body: &str) -> String {
        sdk::format_http_error(status, body, Some("OpenAI API error"), false)
    }

    /// pi's Responses adapter reports a mid-stream cancel as the missing terminal event.
    fn abort_text(&self) -> &'static str {
        "OpenAI Responses stream ended before a terminal response event"
    }
}
