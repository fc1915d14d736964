//! The `openai-completions` wire API: OpenAI Chat Completions and the many compatible servers
//! (Ollama, vLLM, llama.cpp, LM Studio, Groq, OpenRouter, DeepSeek, …), with per-host
//! [`compat::Compat`] flags.
//!
//! Mirrors pi 0.85.1 `api/openai-completions.ts`. Layout: [`compat`] (flag
//! detection), `request` (body building), `mapper` (stream mapping), `details` (OpenRouter
//! `reasoning_details`), `sdk` (what the `openai` Node SDK does around pi, shared with
//! `openai-responses`).
//!
//! Differences from pi 0.85.1, deliberate:
//! - parallel tool calls that share a stream `index` but carry different ids stay separate
//!   calls (Ollama, ollama/ollama#15457); pi appends the second call to the first and loses it;
//! - unpaired UTF-16 surrogate escapes in SSE JSON are dropped (Rust strings cannot hold them);
//! - an SSE event without data is skipped (the SDK fails with `Unexpected end of JSON input`).
//!
//! Not supported (request side): OpenAI grammar (`custom`) tools — the mapper would need the
//! request's tools to name the input property —, Kimi deferred tools (`deferredToolsMode`),
//! GitHub Copilot's dynamic headers.

pub mod compat;
mod details;
mod mapper;
mod messages;
mod reasoning;
pub(crate) mod request;
pub(crate) mod sdk;

use crate::providers::StreamError;
use std::sync::Arc;

use crate::event::PartialMessage;
use crate::providers::{StreamMapper, WireApi, WireRequest};
use crate::transform::transform_messages;
use crate::types::{AssistantMessage, CacheRetention, Context, Message, Model, StreamOptions, api};

pub use compat::Compat;
pub use mapper::CompletionsMapper;
pub use messages::normalize_tool_call_id;
pub use sdk::short_hash;

use compat::SessionAffinityFormat;

/// The `openai-completions` [`WireApi`].
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenAiCompletions;

/// The `openai-completions` wire API as a shared trait object.
pub fn openai_completions() -> Arc<dyn WireApi> {
    Arc::new(OpenAiCompletions)
}

/// The messages as sent: pi's request-side transforms with this API's tool-call id
/// normalization.
fn prepare_messages(model: &Model, context: &Context) -> Vec<Message> {
    let normalize =
        |id: &str, target: &Model, _source: &AssistantMessage| normalize_tool_call_id(target, id);
    transform_messages(&context.messages, model, Some(&normalize))
}

impl WireApi for OpenAiCompletions {
    fn api(&self) -> &'static str {
        api::OPENAI_COMPLETIONS
    }

    /// `POST <baseUrl>/chat/completions` with `Authorization: Bearer <key>`, pi's `User-Agent`,
    /// `model.headers`, session-affinity headers (when `compat.sendSessionAffinityHeaders`)
    /// and the caller's headers, in that order of precedence. Fails with
    /// `No API key for provider: <p>` when there is neither a key nor an authorization header.
    fn build_request(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
        api_key: &str,
    ) -> Result<WireRequest, StreamError> {
        let key = sdk::client_api_key(model, options, api_key)?;
        let compat = Compat::resolve(model);
        let mut headers = sdk::base_headers(model, &key);
        let retention = request::cache_retention(options);
        let session = options
            .session_id
            .as_deref()
            .filter(|s| !s.is_empty() && retention != CacheRetention::None);
        if let (Some(sid), true) = (session, compat.send_session_affinity_headers) {
            if compat.session_affinity_format == SessionAffinityFormat::OpenRouter {
                headers.set("x-session-id", sid);
            } else {
                if compat.session_affinity_format == SessionAffinityFormat::OpenAi {
                    headers.set("session_id", sid);
                }
                headers.set("x-client-request-id", sid);
                headers.set("x-session-affinity", sid);
            }
        }
        headers.apply_options(&options.headers);
        let messages = prepare_messages(model, context);
        let body = request::build_body(model, context, &messages, options, &compat)?;
        Ok(WireRequest {
            url: sdk::join_url(&model.base_url, "/chat/completions"),
            headers: headers.into_vec(),
            body: serde_json::Value::Object(body),
        })
    }

    fn new_mapper(
        &self,
        model: &Model,
        partial: PartialMessage,
        _options: &StreamOptions,
    ) -> Box<dyn StreamMapper> {
        let compat = Compat::resolve(model);
        Box::new(CompletionsMapper::new(
            model,
            partial,
            compat.supports_finish_reason,
        ))
    }

    /// `<status>: <error object JSON>` (or the SDK's `<status> <message>`), plus
    /// `\n<error.metadata.raw>` from OpenRouter.
    fn format_http_error(&self, status: u16, body: &str) -> String {
        sdk::format_http_error(status, body, None, true)
    }

    fn abort_text(&self) -> &'static str {
        "Request was aborted"
    }
}
