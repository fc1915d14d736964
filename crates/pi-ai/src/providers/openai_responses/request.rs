//! OpenAI Responses request body: `input` items, tools, caps, cache keys and reasoning.
//!
//! Mirrors pi 0.85.1 `api/openai-responses.ts` `buildParams` and
//! `api/openai-responses-shared.ts` `convertResponsesMessages` / `convertResponsesTools`.
//! Deferred tools (`supportsAdditionalTools` / `supportsToolSearch`)
//! and grammar tools are not sent.

use crate::providers::StreamError;
use serde_json::{Map, Value, json};

use crate::providers::openai_completions::sdk::{clamp_prompt_cache_key, js_json, put, short_hash};
use crate::types::{
    AssistantContent, AssistantMessage, CacheRetention, Context, Message, Model, StreamOptions,
    ThinkingLevel, Tool, UserContent, UserMessageContent,
};

/// Providers whose `call|item` tool-call ids are replayed as such.
pub(crate) const TOOL_CALL_PROVIDERS: &[&str] = &["openai", "openai-codex", "opencode"];

/// OpenAI rejects `max_output_tokens` below 16.
pub(crate) const MIN_OUTPUT_TOKENS: u64 = 16;

/// The Responses compat flags pi reads (all other flags keep their defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct ResponsesCompat {
    /// System prompt as `developer` for reasoning models (default true).
    pub supports_developer_role: bool,
    /// `prompt_cache_retention: "24h"` for long retention (default true).
    pub supports_long_cache_retention: bool,
    /// `strict` on function tools (default false).
    pub supports_strict_mode: bool,
    /// `prompt_cache_options` instead of `prompt_cache_retention` (default false).
    pub supports_explicit_prompt_cache_mode: bool,
    /// Send `max_output_tokens` (default true).
    pub supports_max_output_tokens: bool,
    /// `x-session-id` (OpenRouter) vs `session_id` + `x-client-request-id`.
    pub session_affinity_openrouter: bool,
    /// `openai-nosession`: no `session_id` header.
    pub session_affinity_no_session: bool,
}

impl ResponsesCompat {
    /// Defaults with explicit `model.compat` fields applied.
    pub fn resolve(model: &Model) -> Self {
        let b = |k: &str, d: bool| model.compat_bool(k).unwrap_or(d);
        let fmt = model
            .compat_value("sessionAffinityFormat")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| {
                if model.provider == "openrouter" || model.base_url.contains("openrouter.ai") {
                    "openrouter".into()
                } else {
                    "openai".into()
                }
            });
        ResponsesCompat {
            supports_developer_role: b("supportsDeveloperRole", true),
            supports_long_cache_retention: b("supportsLongCacheRetention", true),
            supports_strict_mode: b("supportsStrictMode", false),
            supports_explicit_prompt_cache_mode: b("supportsExplicitPromptCacheMode", false),
            supports_max_output_tokens: b("supportsMaxOutputTokens", true),
            session_affinity_openrouter: fmt == "openrouter",
            session_affinity_no_session: fmt == "openai-nosession",
        }
    }
}

/// The request body.
pub(crate) fn build_body(
    model: &Model,
    context: &Context,
    messages: &[Message],
    options: &StreamOptions,
    compat: &ResponsesCompat,
) -> Result<Map<String, Value>, StreamError> {
    use crate::providers::openai_completions::request as rh;
    let retention = rh::cache_retention(options);
    let mut body = Map::new();
    put(&mut body, "model", model.id.clone());
    put(
        &mut body,
        "input",
        Value::Array(convert_messages(
            model,
            context.system_prompt.as_deref(),
            messages,
        )),
    );
    put(&mut body, "stream", true);
    if retention != CacheRetention::None
        && let Some(k) = clamp_prompt_cache_key(options.session_id.as_deref())
    {
        put(&mut body, "prompt_cache_key", k);
    }
    let long = retention == CacheRetention::Long && compat.supports_long_cache_retention;
    if long && !compat.supports_explicit_prompt_cache_mode {
        put(&mut body, "prompt_cache_retention", "24h");
    }
    if compat.supports_explicit_prompt_cache_mode {
        if retention == CacheRetention::None {
            put(
                &mut body,
                "prompt_cache_options",
                json!({"mode": "explicit"}),
            );
        } else if long {
            put(&mut body, "prompt_cache_options", json!({"ttl": "30m"}));
        }
    }
    put(&mut body, "store", false);
    let max_tokens = options.max_tokens.unwrap_or(model.max_tokens);
    if max_tokens > 0 && compat.supports_max_output_tokens {
        put(
            &mut body,
            "max_output_tokens",
            max_tokens.max(MIN_OUTPUT_TOKENS),
        );
    }
    if let Some(t) = options.temperature {
        put(&mut body, "temperature", t);
    }
    if let Some(tools) = context.tools.as_ref().filter(|t| !t.is_empty()) {
        put(
            &mut body,
            "tools",
            Value::Array(convert_tools(tools, compat.supports_strict_mode)?),
        );
    }
    if let Some(tc) = &options.tool_choice {
        put(&mut body, "tool_choice", tc.clone());
    }
    if model.reasoning {
        let effort: Option<ThinkingLevel> = rh::reasoning_effort(model, options);
        if let Some(l) = effort {
            let key = crate::types::ModelThinkingLevel::from(l).as_str();
            let e = match rh::level_map(model, key) {
                Some(v) if !v.is_null() => v.clone(),
                _ => json!(key),
            };
            put(
                &mut body,
                "reasoning",
                json!({"effort": e, "summary": "auto"}),
            );
            put(&mut body, "include", json!(["reasoning.encrypted_content"]));
        } else if model.provider != "github-copilot"
            && rh::level_map(model, "off").is_none_or(|v| !v.is_null())
        {
            let e = rh::level_map(model, "off")
                .cloned()
                .unwrap_or_else(|| json!("none"));
            put(&mut body, "reasoning", json!({ "effort": e }));
        }
        if model.provider == "xai" {
            put(&mut body, "include", json!(["reasoning.encrypted_content"]));
        }
    }
    for (k, v) in rh::sampling_params(model, options).into_iter().flatten() {
        body.insert(k, v);
    }
    Ok(body)
}

/// `convertResponsesTools` for function tools: `strict` (only when the host supports the key)
/// is `true` for tools asking for JSON-schema sampling, with a strictified schema.
pub(crate) fn convert_tools(
    tools: &[Tool],
    supports_strict: bool,
) -> Result<Vec<Value>, StreamError> {
    use crate::providers::constrained;
    tools
        .iter()
        .map(|t| {
            let strict = constrained::resolve_strict(t, supports_strict)?;
            let is_strict = strict.unwrap_or(false);
            let mut f = Map::new();
            put(&mut f, "type", "function");
            put(&mut f, "name", t.name.clone());
            put(&mut f, "description", t.description.clone());
            put(
                &mut f,
                "parameters",
                constrained::tool_parameters(t, strict),
            );
            if supports_strict {
                put(&mut f, "strict", is_strict);
            }
            Ok(Value::Object(f))
        })
        .collect()
}

/// `[A-Za-z0-9_-]`, at most 64 chars, trailing underscores removed.
fn normalize_id_part(part: &str) -> String {
    let s: String = part
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    s.trim_end_matches('_').to_owned()
}

/// Tool-call id normalization for replay into Responses: `call|item` ids of the allowed
/// providers keep both parts (foreign item ids hashed to `fc_<hash>`, item ids forced to start
/// with `fc_`); everything else is sanitized.
pub fn normalize_tool_call_id(model: &Model, id: &str, source: &AssistantMessage) -> String {
    normalize_tool_call_id_for(TOOL_CALL_PROVIDERS, model, id, source)
}

/// [`normalize_tool_call_id`] with the providers whose `call|item` ids are kept given
/// (`azure-openai-responses` adds itself to the list).
pub(crate) fn normalize_tool_call_id_for(
    allowed: &[&str],
    model: &Model,
    id: &str,
    source: &AssistantMessage,
) -> String {
    if !allowed.contains(&model.provider.as_str()) || !id.contains('|') {
        return normalize_id_part(id);
    }
    let mut parts = id.split('|');
    let call = normalize_id_part(parts.next().unwrap_or(""));
    let item = parts.next().unwrap_or("");
    let foreign = source.provider != model.provider || source.api != model.api;
    let mut item_id = if foreign {
        let s = format!("fc_{}", short_hash(item));
        s.chars().take(64).collect()
    } else {
        normalize_id_part(item)
    };
    if !item_id.starts_with("fc_") {
        item_id = normalize_id_part(&format!("fc_{item_id}"));
    }
    format!("{call}|{item_id}")
}

/// Text and image parts of a user message.
fn user_parts(blocks: &[UserContent]) -> Vec<Value> {
    blocks
        .iter()
        .map(|b| match b {
            UserContent::Text(t) => json!({"type": "input_text", "text": t.text}),
            UserContent::Image(i) => json!({
                "type": "input_image",
                "detail": "auto",
                "image_url": format!("data:{};base64,{}", i.mime_type, i.data),
            }),
        })
        .collect()
}

/// `convertResponsesMessages` over already-transformed messages.
pub(crate) fn convert_messages(
    model: &Model,
    system_prompt: Option<&str>,
    messages: &[Message],
) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(sp) = system_prompt.filter(|s| !s.is_empty()) {
        let dev = model.reasoning && model.compat_bool("supportsDeveloperRole") != Some(false);
        out.push(json!({"role": if dev { "developer" } else { "system" }, "content": sp}));
    }
    for (msg_index, msg) in messages.iter().enumerate() {
        match msg {
            Message::User(u) => {
                let parts = match &u.content {
                    UserMessageContent::Text(s) => vec![json!({"type": "input_text", "text": s})],
                    UserMessageContent::Blocks(b) => user_parts(b),
                };
                if !parts.is_empty() {
                    out.push(json!({"role": "user", "content": parts}));
                }
            }
            Message::Assistant(a) => out.extend(convert_assistant(model, a, msg_index)),
            Message::ToolResult(tr) => {
                let call_id = tr.tool_call_id.split('|').next().unwrap_or("");
                out.push(json!({
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": tool_output(model, &tr.content),
                }));
            }
        }
    }
    out
}

fn convert_assistant(model: &Model, a: &AssistantMessage, msg_index: usize) -> Vec<Value> {
    let same_provider_api = a.provider == model.provider && a.api == model.api;
    let different_model = same_provider_api && a.model != model.id;
    let same_model = same_provider_api && a.model == model.id;
    let mut items = Vec::new();
    let mut text_index = 0usize;
    for block in &a.content {
        match block {
            AssistantContent::Thinking(t) => {
                if let Some(item) = t
                    .thinking_signature
                    .as_deref()
                    .filter(|s| !s.is_empty())
                    .and_then(|s| serde_json::from_str::<Value>(s).ok())
                {
                    items.push(item);
                }
            }
            AssistantContent::Text(t) => {
                let (sig_id, phase) = parse_text_signature(t.text_signature.as_deref());
                let fallback = if text_index == 0 {
                    format!("msg_pi_{msg_index}")
                } else {
                    format!("msg_pi_{msg_index}_{text_index}")
                };
                text_index += 1;
                let id = match sig_id {
                    None => fallback,
                    Some(id) if id.is_empty() => fallback,
                    Some(id) if id.encode_utf16().count() > 64 => {
                        format!("msg_{}", short_hash(&id))
                    }
                    Some(id) => id,
                };
                let mut m = Map::new();
                put(&mut m, "type", "message");
                put(&mut m, "role", "assistant");
                put(
                    &mut m,
                    "content",
                    json!([{"type": "output_text", "text": t.text, "annotations": []}]),
                );
                put(&mut m, "status", "completed");
                put(&mut m, "id", id);
                if let Some(p) = phase {
                    put(&mut m, "phase", p);
                }
                items.push(Value::Object(m));
            }
            AssistantContent::ToolCall(tc) => {
                let mut parts = tc.id.splitn(3, '|');
                let call_id = parts.next().unwrap_or("");
                let mut item_id = parts.next();
                if (different_model && item_id.is_some_and(|i| i.starts_with("fc_")))
                    || !item_id.is_some_and(|i| i.starts_with("fc_"))
                {
                    item_id = None;
                }
                let mut m = Map::new();
                put(&mut m, "type", "function_call");
                if let Some(i) = item_id {
                    put(&mut m, "id", i);
                }
                put(&mut m, "call_id", call_id);
                put(&mut m, "name", tc.name.clone());
                put(
                    &mut m,
                    "arguments",
                    js_json(&Value::Object(tc.arguments.clone())),
                );
                if let (true, Some(ns)) = (same_model, &tc.namespace) {
                    put(&mut m, "namespace", ns.clone());
                }
                items.push(Value::Object(m));
            }
        }
    }
    items
}

/// `{"v":1,"id",phase?}` (or a legacy bare id) → `(id, phase)`.
fn parse_text_signature(sig: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(sig) = sig.filter(|s| !s.is_empty()) else {
        return (None, None);
    };
    if sig.starts_with('{')
        && let Ok(v) = serde_json::from_str::<Value>(sig)
        && v.get("v") == Some(&json!(1))
        && let Some(id) = v.get("id").and_then(Value::as_str)
    {
        let phase = v
            .get("phase")
            .and_then(Value::as_str)
            .filter(|p| *p == "commentary" || *p == "final_answer")
            .map(str::to_owned);
        return (Some(id.to_owned()), phase);
    }
    (Some(sig.to_owned()), None)
}

/// A tool result's `output`: joined text (or a placeholder), or text + images for vision
/// models.
fn tool_output(model: &Model, content: &[UserContent]) -> Value {
    let text = content
        .iter()
        .filter_map(UserContent::as_text)
        .collect::<Vec<_>>()
        .join("\n");
    let images: Vec<_> = content
        .iter()
        .filter_map(|c| match c {
            UserContent::Image(i) => Some(i),
            UserContent::Text(_) => None,
        })
        .collect();
    if images.is_empty() || !model.supports_images() {
        let s = if !text.is_empty() {
            text
        } else if !images.is_empty() {
            "(see attached image)".to_owned()
        } else {
            "(no tool output)".to_owned()
        };
        return Value::String(s);
    }
    let mut parts = Vec::new();
    if !text.is_empty() {
        parts.push(json!({"type": "input_text", "text": text}));
    }
    for i in images {
        parts.push(json!({
            "type": "input_image",
            "detail": "auto",
            "image_url": format!("data:{};base64,{}", i.mime_type, i.data),
        }));
    }
    Value::Array(parts)
}
