//! The `openai-codex-responses` wire API: the ChatGPT-subscription Codex endpoint
//! (`<baseUrl>/codex/responses`), authenticated with the OAuth access token of an
//! `openai-codex` login.
//!
//! Mirrors pi-ai 0.85.1 `api/openai-codex-responses.js` over SSE (pi's `transport: "sse"`; its
//! WebSocket transport and zstd request compression are not ported, the endpoint takes plain
//! JSON over SSE). The request: `instructions` (the system prompt, else `You are a helpful
//! assistant.`), `store: false`, `text.verbosity: "low"`, `include` of the encrypted
//! reasoning, the session id as `prompt_cache_key`, `tool_choice: "auto"`,
//! `parallel_tool_calls`, tools, and `reasoning` with `summary: "auto"` when thinking is on.
//! Headers: `Authorization: Bearer <token>`, `chatgpt-account-id` (from the token's JWT),
//! `originator: pi`, pi's `User-Agent`, `OpenAI-Beta: responses=experimental`, and
//! `session-id` + `x-client-request-id` when the request has a session. The events are the
//! Responses API's and go through [`ResponsesMapper`], with Codex's own terminal events
//! (`response.done`, `response.incomplete`) read as `response.completed` and its `error` /
//! `response.failed` events as failures. Like pi's adapter it does not retry by default.

#[cfg(test)]
mod tests;

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::auth::oauth::account_id_from_jwt;
use crate::event::{AssistantMessageEvent, PartialMessage};
use crate::providers::openai_completions::request as creq;
use crate::providers::openai_completions::sdk::{clamp_prompt_cache_key, put};
use crate::providers::openai_responses::{ResponsesCompat, ResponsesMapper};
use crate::providers::request_headers::{HeaderList, pi_user_agent};
use crate::providers::{StreamError, StreamMapper, WireApi, WireRequest};
use crate::sse::SseEvent;
use crate::types::{CacheRetention, Context, Model, StreamOptions};

/// The api id.
pub const OPENAI_CODEX_RESPONSES: &str = "openai-codex-responses";
const DEFAULT_BASE_URL: &str = "https://chatgpt.com/backend-api";
const DEFAULT_INSTRUCTIONS: &str = "You are a helpful assistant.";

/// The `openai-codex-responses` [`WireApi`].
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenAiCodexResponses;

/// The Codex wire API as a shared trait object.
pub fn openai_codex_responses() -> Arc<dyn WireApi> {
    Arc::new(OpenAiCodexResponses)
}

/// pi's `resolveCodexUrl`: `<base>/codex/responses` unless the base already ends so.
pub fn codex_url(base_url: &str) -> String {
    let raw = if base_url.trim().is_empty() {
        DEFAULT_BASE_URL
    } else {
        base_url
    };
    let normalized = raw.trim_end_matches('/');
    if normalized.ends_with("/codex/responses") {
        normalized.to_owned()
    } else if normalized.ends_with("/codex") {
        format!("{normalized}/responses")
    } else {
        format!("{normalized}/codex/responses")
    }
}

fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    session: Option<String>,
) -> Result<Map<String, Value>, StreamError> {
    let compat = ResponsesCompat::resolve(model);
    let messages = crate::providers::openai_responses::prepare_messages(model, context);
    let input =
        crate::providers::openai_responses::request::convert_messages(model, None, &messages);
    let mut body = Map::new();
    put(&mut body, "model", model.id.clone());
    put(&mut body, "store", false);
    put(&mut body, "stream", true);
    let instructions = context
        .system_prompt
        .as_deref()
        .filter(|s| !s.is_empty())
        .unwrap_or(DEFAULT_INSTRUCTIONS);
    put(&mut body, "instructions", instructions);
    put(&mut body, "input", Value::Array(input));
    put(&mut body, "text", json!({"verbosity": "low"}));
    put(&mut body, "include", json!(["reasoning.encrypted_content"]));
    if let Some(key) = session {
        put(&mut body, "prompt_cache_key", key);
    }
    put(
        &mut body,
        "tool_choice",
        options.tool_choice.clone().unwrap_or_else(|| json!("auto")),
    );
    put(&mut body, "parallel_tool_calls", true);
    if let Some(t) = options.temperature {
        put(&mut body, "temperature", t);
    }
    if let Some(tools) = context.tools.as_ref().filter(|t| !t.is_empty()) {
        put(
            &mut body,
            "tools",
            Value::Array(crate::providers::openai_responses::request::convert_tools(
                tools,
                compat.supports_strict_mode,
            )?),
        );
    }
    if let Some(level) = creq::reasoning_effort(model, options) {
        let key = crate::types::ModelThinkingLevel::from(level).as_str();
        let effort = match model.thinking_level_map.as_ref().and_then(|m| m.get(key)) {
            Some(Value::Null) => None,
            Some(v) => Some(v.clone()),
            None => Some(json!(key)),
        };
        if let Some(effort) = effort {
            put(
                &mut body,
                "reasoning",
                json!({"effort": effort, "summary": "auto"}),
            );
        }
    }
    for (k, v) in creq::sampling_params(model, options).into_iter().flatten() {
        body.insert(k, v);
    }
    Ok(body)
}

impl WireApi for OpenAiCodexResponses {
    fn api(&self) -> &'static str {
        OPENAI_CODEX_RESPONSES
    }

    /// Fails with `No API key for provider: <p>` without a token and
    /// `Failed to extract accountId from token` when the token is not a ChatGPT JWT.
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
        let account_id = account_id_from_jwt(api_key).ok_or_else(|| {
            StreamError::Credentials("Failed to extract accountId from token".to_owned())
        })?;
        let session = if creq::cache_retention(options) == CacheRetention::None {
            None
        } else {
            clamp_prompt_cache_key(options.session_id.as_deref())
        };
        let mut h = HeaderList::new();
        h.apply_json(model.headers.as_ref());
        h.apply_options(&options.headers);
        h.set("Authorization", format!("Bearer {api_key}"));
        h.set("chatgpt-account-id", account_id);
        h.set("originator", "pi");
        h.set("User-Agent", pi_user_agent());
        h.set("OpenAI-Beta", "responses=experimental");
        h.set("accept", "text/event-stream");
        h.set("content-type", "application/json");
        if let Some(sid) = &session {
            h.set("session-id", sid.clone());
            h.set("x-client-request-id", sid.clone());
        }
        let body = build_body(model, context, options, session)?;
        Ok(WireRequest {
            url: codex_url(&model.base_url),
            headers: h.into_vec(),
            body: Value::Object(body),
        })
    }

    fn new_mapper(
        &self,
        model: &Model,
        partial: PartialMessage,
        _options: &StreamOptions,
    ) -> Box<dyn StreamMapper> {
        Box::new(CodexMapper {
            inner: ResponsesMapper::new(model, partial, None),
            terminal: false,
        })
    }

    /// pi's `parseErrorResponse`: a usage-limit error as `You have hit your ChatGPT usage
    /// limit (<plan> plan). Try again in ~<n> min.`, else the error's `message`, else the body.
    fn format_http_error(&self, status: u16, body: &str) -> String {
        format_http_error(status, body, crate::auth::oauth::http::now_ms())
    }

    fn abort_text(&self) -> &'static str {
        "Request was aborted"
    }
}

pub(crate) fn format_http_error(status: u16, body: &str, now_ms: f64) -> String {
    let mut message = if body.is_empty() {
        "Request failed".to_owned()
    } else {
        body.to_owned()
    };
    let mut friendly: Option<String> = None;
    if let Ok(parsed) = serde_json::from_str::<Value>(body)
        && let Some(err) = parsed
            .get("error")
            .filter(|e| !e.is_null() && *e != &json!(false))
    {
        let code = err
            .get("code")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .or_else(|| err.get("type").and_then(Value::as_str))
            .unwrap_or("");
        let lower = code.to_ascii_lowercase();
        if [
            "usage_limit_reached",
            "usage_not_included",
            "rate_limit_exceeded",
        ]
        .iter()
        .any(|c| lower.contains(c))
            || status == 429
        {
            let plan = err
                .get("plan_type")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(|p| format!(" ({} plan)", p.to_lowercase()))
                .unwrap_or_default();
            let when = err
                .get("resets_at")
                .and_then(Value::as_f64)
                .filter(|r| *r != 0.0)
                .map(|r| {
                    let mins = ((r * 1000.0 - now_ms) / 60_000.0).round().max(0.0);
                    format!(" Try again in ~{mins} min.")
                })
                .unwrap_or_default();
            friendly = Some(
                format!("You have hit your ChatGPT usage limit{plan}.{when}")
                    .trim()
                    .to_owned(),
            );
        }
        if let Some(m) = err
            .get("message")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            message = m.to_owned();
        } else if let Some(f) = &friendly {
            message = f.clone();
        }
    }
    friendly.unwrap_or(message)
}

/// Codex's event stream over the Responses mapper (pi's `mapCodexEvents`).
struct CodexMapper {
    inner: ResponsesMapper,
    terminal: bool,
}

const CODEX_STATUSES: [&str; 6] = [
    "completed",
    "incomplete",
    "failed",
    "cancelled",
    "queued",
    "in_progress",
];

impl StreamMapper for CodexMapper {
    fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), StreamError> {
        if self.terminal {
            return Ok(());
        }
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let mut value: Value = serde_json::from_str(data).map_err(|e| {
            StreamError::Json(format!(
                "Invalid Codex SSE JSON: {}",
                crate::js_json_error::json_parse_message(data, &e)
            ))
        })?;
        let Some(kind) = value.get("type").and_then(Value::as_str).map(str::to_owned) else {
            return Ok(());
        };
        match kind.as_str() {
            "error" => {
                let nested = value.get("error").filter(|e| e.is_object());
                let pick = |k: &str| {
                    value
                        .get(k)
                        .and_then(Value::as_str)
                        .or_else(|| nested.and_then(|n| n.get(k)).and_then(Value::as_str))
                        .filter(|s| !s.is_empty())
                };
                let text = pick("message")
                    .or_else(|| pick("code"))
                    .map(str::to_owned)
                    .unwrap_or_else(|| crate::json::to_string(&value).unwrap_or_default());
                Err(StreamError::Provider(format!("Codex error: {text}")))
            }
            "response.failed" => {
                let message = value
                    .pointer("/response/error/message")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty());
                Err(StreamError::Provider(
                    message.unwrap_or("Codex response failed").to_owned(),
                ))
            }
            "response.done" | "response.completed" | "response.incomplete" => {
                self.terminal = true;
                if let Some(obj) = value.as_object_mut() {
                    obj.insert("type".into(), json!("response.completed"));
                    if let Some(response) = obj.get_mut("response").and_then(Value::as_object_mut) {
                        let status = response
                            .get("status")
                            .and_then(Value::as_str)
                            .filter(|s| CODEX_STATUSES.contains(s))
                            .map(str::to_owned);
                        match status {
                            Some(s) => response.insert("status".into(), json!(s)),
                            None => response.remove("status"),
                        };
                    }
                }
                let rewritten = SseEvent {
                    event: event.event.clone(),
                    data: value.to_string(),
                    id: event.id.clone(),
                    retry: event.retry,
                };
                self.inner.on_event(&rewritten, out)
            }
            _ => self.inner.on_event(event, out),
        }
    }

    fn on_end(&mut self, out: &mut Vec<AssistantMessageEvent>) -> Result<(), StreamError> {
        if !self.terminal {
            return Err(StreamError::Incomplete(
                "Codex stream ended without a stop reason",
            ));
        }
        self.inner.on_end(out)
    }
}
