//! Chat Completions request body: field order, caps, cache keys, tools, routing and sampling
//! parameters (messages and reasoning fields come from their own modules).
//!
//! Mirrors pi 0.85.1 `api/openai-completions.ts` `buildParams`, `convertTools` and the
//! Anthropic-style cache-control helpers. Also home of the option
//! helpers `openai-responses` shares.

use crate::providers::StreamError;
use serde_json::{Map, Value, json};

use super::compat::Compat;
use super::messages::convert_messages;
use super::reasoning::apply_reasoning;
pub(crate) use super::reasoning::reasoning_effort;
use super::sdk::{clamp_prompt_cache_key, put, truthy};
use crate::providers::constrained;
use crate::types::{CacheRetention, Context, Message, Model, StreamOptions, Tool};

pub(crate) use super::reasoning::level_map;

/// The resolved cache retention: the option, else `long` when `PI_CACHE_RETENTION=long`, else
/// `short`.
pub(crate) fn cache_retention(options: &StreamOptions) -> CacheRetention {
    options.cache_retention.unwrap_or_else(|| {
        if std::env::var("PI_CACHE_RETENTION").as_deref() == Ok("long") {
            CacheRetention::Long
        } else {
            CacheRetention::Short
        }
    })
}

/// `model.samplingParams` overlaid with `options.samplingParams`.
pub(crate) fn sampling_params(
    model: &Model,
    options: &StreamOptions,
) -> Option<Map<String, Value>> {
    if model.sampling_params.is_none() && options.sampling_params.is_none() {
        return None;
    }
    let mut m = model.sampling_params.clone().unwrap_or_default();
    for (k, v) in options.sampling_params.iter().flatten() {
        m.insert(k.clone(), v.clone());
    }
    Some(m)
}

/// The request body for `context` (`options` already carries the caller's choices).
pub(crate) fn build_body(
    model: &Model,
    context: &Context,
    messages: &[Message],
    options: &StreamOptions,
    compat: &Compat,
) -> Result<Map<String, Value>, StreamError> {
    let retention = cache_retention(options);
    let effort = reasoning_effort(model, options);
    let mut msgs = convert_messages(model, context.system_prompt.as_deref(), messages, compat);
    let mut body = Map::new();
    put(&mut body, "model", model.id.clone());
    body.insert("messages".into(), Value::Null);
    put(&mut body, "stream", true);
    let long = retention == CacheRetention::Long && compat.supports_long_cache_retention;
    if ((model.base_url.contains("api.openai.com") && retention != CacheRetention::None) || long)
        && let Some(k) = clamp_prompt_cache_key(options.session_id.as_deref())
    {
        put(&mut body, "prompt_cache_key", k);
    }
    if long {
        put(&mut body, "prompt_cache_retention", "24h");
    }
    if compat.supports_usage_in_streaming {
        put(&mut body, "stream_options", json!({"include_usage": true}));
    }
    if compat.supports_store {
        put(&mut body, "store", false);
    }
    let max_tokens = options.max_tokens.unwrap_or(model.max_tokens);
    if max_tokens > 0 {
        let field = if compat.use_max_tokens_field {
            "max_tokens"
        } else {
            "max_completion_tokens"
        };
        put(&mut body, field, max_tokens);
    }
    if let Some(t) = options.temperature {
        put(&mut body, "temperature", t);
    }
    let mut tools = None;
    if let Some(ts) = context.tools.as_ref().filter(|t| !t.is_empty()) {
        tools = Some(convert_tools(ts, compat)?);
    } else if has_tool_history(messages) {
        tools = Some(Vec::new());
    }
    if compat.cache_control_anthropic && retention != CacheRetention::None {
        let mut cc = json!({"type": "ephemeral"});
        if retention == CacheRetention::Long && compat.supports_long_cache_retention {
            cc["ttl"] = json!("1h");
        }
        apply_cache_control(&mut msgs, tools.as_mut(), &cc);
    }
    body.insert("messages".into(), Value::Array(msgs));
    if let Some(t) = tools {
        let had = !t.is_empty();
        put(&mut body, "tools", Value::Array(t));
        if had && compat.zai_tool_stream {
            put(&mut body, "tool_stream", true);
        }
    }
    if let Some(tc) = options.tool_choice.as_ref().filter(|v| truthy(v)) {
        put(&mut body, "tool_choice", tc.clone());
    }
    if let Some(p) = &compat.vllm_priority {
        put(&mut body, "priority", p.clone());
    }
    apply_reasoning(&mut body, model, options, compat, effort, max_tokens);
    if let Some(r) = model
        .compat_value("openRouterRouting")
        .filter(|v| truthy(v))
    {
        put(&mut body, "provider", r.clone());
    }
    if let Some(r) = model
        .compat_value("vercelGatewayRouting")
        .filter(|v| truthy(v))
    {
        let mut gw = Map::new();
        for key in ["only", "order"] {
            if let Some(v) = r.get(key).filter(|v| truthy(v)) {
                gw.insert(key.into(), v.clone());
            }
        }
        if !gw.is_empty() {
            put(&mut body, "providerOptions", json!({ "gateway": gw }));
        }
    }
    for (k, v) in sampling_params(model, options).into_iter().flatten() {
        body.insert(k, v);
    }
    Ok(body)
}

fn has_tool_history(messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::ToolResult(_) => true,
        Message::Assistant(a) => a.tool_calls().next().is_some(),
        Message::User(_) => false,
    })
}

/// `convertTools`: function tools; `strict` is `true` for tools asking for JSON-schema sampling
/// (with a strictified schema), else `false`, and absent when the host rejects the key.
/// `Err` when a tool `require`s strict sampling it cannot get.
pub(crate) fn convert_tools(tools: &[Tool], compat: &Compat) -> Result<Vec<Value>, StreamError> {
    tools
        .iter()
        .map(|t| {
            let strict = constrained::resolve_strict(t, compat.supports_strict_mode)?;
            let mut f = Map::new();
            put(&mut f, "name", t.name.clone());
            put(&mut f, "description", t.description.clone());
            put(
                &mut f,
                "parameters",
                constrained::tool_parameters(t, strict),
            );
            if compat.supports_strict_mode {
                put(&mut f, "strict", strict.unwrap_or(false));
            }
            Ok(json!({"type": "function", "function": f}))
        })
        .collect()
}

/// Anthropic-style `cache_control` on the first system/developer message, the last tool and
/// the last text of the last user/assistant/tool message that has one.
fn apply_cache_control(msgs: &mut [Value], tools: Option<&mut Vec<Value>>, cc: &Value) {
    if let Some(m) = msgs
        .iter_mut()
        .find(|m| matches!(m["role"].as_str(), Some("system" | "developer")))
    {
        add_cache_control(m, cc);
    }
    if let Some(last) = tools.and_then(|t| t.last_mut()) {
        last["cache_control"] = cc.clone();
    }
    for m in msgs.iter_mut().rev() {
        if matches!(m["role"].as_str(), Some("user" | "assistant" | "tool"))
            && add_cache_control(m, cc)
        {
            break;
        }
    }
}

fn add_cache_control(m: &mut Value, cc: &Value) -> bool {
    match m.get_mut("content") {
        Some(Value::String(s)) if !s.is_empty() => {
            let text = std::mem::take(s);
            m["content"] = json!([{"type": "text", "text": text, "cache_control": cc}]);
            true
        }
        Some(Value::Array(parts)) => {
            if let Some(p) = parts.iter_mut().rev().find(|p| p["type"] == "text") {
                p["cache_control"] = cc.clone();
                true
            } else {
                false
            }
        }
        _ => false,
    }
}
