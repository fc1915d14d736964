//! Chat Completions request body: messages, tools, caps, cache keys and reasoning dialects.
//!
//! Mirrors pi 0.85.1 `api/openai-completions.ts` `buildParams`, `convertMessages`,
//! `convertTools` and the Anthropic-style cache-control helpers (spec §3.2 "Request").

use serde_json::{Map, Value, json};

use super::compat::{Compat, ThinkingFormat};
use super::details::ReasoningDetails;
use super::sdk::{clamp_prompt_cache_key, put, short_hash, truthy};
use crate::types::{
    AssistantContent, CacheRetention, Context, Message, Model, StreamOptions, ThinkingLevel, Tool,
    UserContent, UserMessageContent,
};

/// Text pi inserts between tool results and a following user message when required.
const ASSISTANT_BRIDGE: &str = "I have processed the tool results.";

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

/// The reasoning level to request: `options.reasoning` clamped to the model (`None` = off).
pub(crate) fn reasoning_effort(model: &Model, options: &StreamOptions) -> Option<ThinkingLevel> {
    options
        .reasoning
        .and_then(|l| model.clamp_thinking_level(l.into()).reasoning())
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

/// The raw `thinkingLevelMap` entry for `key` (`None` = undefined).
pub(crate) fn level_map<'a>(model: &'a Model, key: &str) -> Option<&'a Value> {
    model.thinking_level_map.as_ref()?.get(key)
}

/// `map[level] ?? level`.
fn mapped_or_level(model: &Model, level: ThinkingLevel) -> Value {
    let key = crate::types::ModelThinkingLevel::from(level).as_str();
    match level_map(model, key) {
        Some(v) if !v.is_null() => v.clone(),
        _ => Value::String(key.to_owned()),
    }
}

fn level_str(level: ThinkingLevel) -> &'static str {
    crate::types::ModelThinkingLevel::from(level).as_str()
}

/// The request body for `context` (`options` already carries the caller's choices).
pub(crate) fn build_body(
    model: &Model,
    context: &Context,
    messages: &[Message],
    options: &StreamOptions,
    compat: &Compat,
) -> Result<Map<String, Value>, String> {
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

/// The reasoning dialect fields, then the top-level budget field.
fn apply_reasoning(
    body: &mut Map<String, Value>,
    model: &Model,
    options: &StreamOptions,
    compat: &Compat,
    effort: Option<ThinkingLevel>,
    max_tokens: u64,
) {
    let budget = effort.filter(|_| model.reasoning).and_then(|l| {
        let b = options.thinking_budgets.unwrap_or_default().for_level(l);
        let b = b.min(max_tokens.saturating_sub(1024));
        (b > 0).then_some(b)
    });
    if model.reasoning {
        let off = level_map(model, "off");
        match compat.thinking_format {
            ThinkingFormat::Zai => {
                let thinking = if effort.is_some() {
                    json!({"type": "enabled", "clear_thinking": false})
                } else {
                    json!({"type": "disabled"})
                };
                put(body, "thinking", thinking);
                if let Some(l) = effort.filter(|_| compat.supports_reasoning_effort) {
                    let v = level_map(model, level_str(l))
                        .cloned()
                        .unwrap_or_else(|| json!(level_str(l)));
                    if v.is_string() {
                        put(body, "reasoning_effort", v);
                    }
                }
            }
            ThinkingFormat::Qwen => {
                put(body, "enable_thinking", effort.is_some());
                if let Some(l) = effort.filter(|_| compat.supports_reasoning_effort) {
                    let v = mapped_or_level(model, l);
                    if v.is_string() {
                        put(body, "reasoning_effort", v);
                    }
                }
            }
            ThinkingFormat::QwenChatTemplate => {
                put(
                    body,
                    "chat_template_kwargs",
                    json!({"enable_thinking": effort.is_some(), "preserve_thinking": true}),
                );
            }
            ThinkingFormat::ChatTemplate => {
                if let Some(v) =
                    chat_template_values(model, effort, &compat.chat_template_kwargs, budget)
                {
                    put(body, "chat_template_kwargs", v);
                }
            }
            ThinkingFormat::Baseten => {
                if let Some(v) =
                    chat_template_values(model, effort, &compat.chat_template_args, budget)
                {
                    put(body, "chat_template_args", v);
                }
                if compat.supports_reasoning_effort {
                    let mapped = match effort {
                        Some(l) => level_map(model, level_str(l)),
                        None => off,
                    };
                    let v = match mapped {
                        None => effort.map(|l| json!(level_str(l))),
                        Some(v) => Some(v.clone()),
                    };
                    if let Some(v) = v.filter(Value::is_string) {
                        put(body, "reasoning_effort", v);
                    }
                }
            }
            ThinkingFormat::DeepSeek => {
                if effort.is_some() {
                    put(body, "thinking", json!({"type": "enabled"}));
                } else if off.is_none_or(|v| !v.is_null()) {
                    put(body, "thinking", json!({"type": "disabled"}));
                }
                if let Some(l) = effort.filter(|_| compat.supports_reasoning_effort) {
                    put(body, "reasoning_effort", mapped_or_level(model, l));
                }
            }
            ThinkingFormat::OpenRouter => {
                if let Some(l) = effort {
                    put(
                        body,
                        "reasoning",
                        json!({"effort": mapped_or_level(model, l)}),
                    );
                } else if off.is_none_or(|v| !v.is_null()) {
                    let v = off.cloned().unwrap_or_else(|| json!("none"));
                    put(body, "reasoning", json!({ "effort": v }));
                }
            }
            ThinkingFormat::AntLing => {
                if let Some(v) = effort
                    .and_then(|l| level_map(model, level_str(l)))
                    .filter(|v| v.is_string())
                {
                    put(body, "reasoning", json!({ "effort": v }));
                }
            }
            ThinkingFormat::Together => {
                put(body, "reasoning", json!({"enabled": effort.is_some()}));
                if let Some(l) = effort.filter(|_| compat.supports_reasoning_effort) {
                    put(body, "reasoning_effort", mapped_or_level(model, l));
                }
            }
            ThinkingFormat::StringThinking => {
                if let Some(l) = effort {
                    put(body, "thinking", mapped_or_level(model, l));
                } else if off.is_none_or(|v| !v.is_null()) {
                    put(
                        body,
                        "thinking",
                        off.cloned().unwrap_or_else(|| json!("none")),
                    );
                }
            }
            ThinkingFormat::OpenAi => {
                if compat.supports_reasoning_effort {
                    match effort {
                        Some(l) => put(body, "reasoning_effort", mapped_or_level(model, l)),
                        None => {
                            if let Some(v) = off.filter(|v| v.is_string()) {
                                put(body, "reasoning_effort", v.clone());
                            }
                        }
                    }
                }
            }
        }
    }
    if let (Some(field), Some(b)) = (&compat.thinking_token_budget_field, budget) {
        put(body, field, b);
    }
}

/// `chatTemplateKwargs` / `chatTemplateArgs` with `{$var, omitWhenOff}` resolved; `None` when
/// nothing remains.
fn chat_template_values(
    model: &Model,
    effort: Option<ThinkingLevel>,
    values: &Map<String, Value>,
    budget: Option<u64>,
) -> Option<Value> {
    let mut out = Map::new();
    for (k, v) in values {
        let resolved = match v {
            Value::Object(o) => {
                if effort.is_none() && o.get("omitWhenOff").is_some_and(truthy) {
                    None
                } else {
                    match o.get("$var").and_then(Value::as_str) {
                        Some("thinking.enabled") => Some(json!(effort.is_some())),
                        Some("thinking.budget") => budget.map(|b| json!(b)),
                        _ => {
                            let mapped = match effort {
                                Some(l) => level_map(model, level_str(l)),
                                None => level_map(model, "off"),
                            };
                            match mapped {
                                None => effort.map(|l| json!(level_str(l))),
                                Some(Value::String(s)) => Some(json!(s)),
                                Some(_) => None,
                            }
                        }
                    }
                }
            }
            other => Some(other.clone()),
        };
        if let Some(r) = resolved {
            out.insert(k.clone(), r);
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
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
pub(crate) fn convert_tools(tools: &[Tool], compat: &Compat) -> Result<Vec<Value>, String> {
    tools
        .iter()
        .map(|t| {
            let strict = super::strict::resolve_strict(t, compat.supports_strict_mode)?;
            let mut f = Map::new();
            put(&mut f, "name", t.name.clone());
            put(&mut f, "description", t.description.clone());
            put(
                &mut f,
                "parameters",
                super::strict::tool_parameters(t, strict == Some(true)),
            );
            if compat.supports_strict_mode {
                put(&mut f, "strict", strict.unwrap_or(false));
            }
            Ok(json!({"type": "function", "function": f}))
        })
        .collect()
}

/// `normalizeToolCallId` for Chat Completions: Responses-style `call|item` ids become
/// `<call>_<item>` sanitized to `[A-Za-z0-9_-]` and at most 40 chars (else a hashed prefix);
/// provider `openai` truncates other ids to 40.
pub fn normalize_tool_call_id(model: &Model, id: &str) -> String {
    if let Some(sep) = id.find('|') {
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect()
        };
        let call = clean(&id[..sep]);
        let item = clean(&id[sep + 1..]);
        let combined = if item.is_empty() {
            call.clone()
        } else {
            format!("{call}_{item}")
        };
        if combined.encode_utf16().count() <= 40 {
            return combined;
        }
        let hash: String = short_hash(id).chars().take(8).collect();
        let keep = 40usize.saturating_sub(hash.len() + 1).max(1);
        let prefix: String = call.chars().take(keep).collect();
        return format!("{prefix}_{hash}");
    }
    if model.provider == "openai" && id.encode_utf16().count() > 40 {
        return id.chars().take(40).collect();
    }
    id.to_owned()
}

fn image_part(mime: &str, data: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{data}")}})
}

/// `convertMessages` over already-transformed messages.
pub(crate) fn convert_messages(
    model: &Model,
    system_prompt: Option<&str>,
    messages: &[Message],
    compat: &Compat,
) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(sp) = system_prompt.filter(|s| !s.is_empty()) {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        out.push(json!({"role": role, "content": sp}));
    }
    let mut last_role: Option<&str> = None;
    let mut i = 0;
    while i < messages.len() {
        let msg = &messages[i];
        if compat.requires_assistant_after_tool_result
            && last_role == Some("toolResult")
            && matches!(msg, Message::User(_))
        {
            out.push(json!({"role": "assistant", "content": ASSISTANT_BRIDGE}));
        }
        match msg {
            Message::User(u) => match &u.content {
                UserMessageContent::Text(s) => out.push(json!({"role": "user", "content": s})),
                UserMessageContent::Blocks(blocks) => {
                    let parts: Vec<Value> = blocks
                        .iter()
                        .map(|b| match b {
                            UserContent::Text(t) => json!({"type": "text", "text": t.text}),
                            UserContent::Image(img) => image_part(&img.mime_type, &img.data),
                        })
                        .collect();
                    if !parts.is_empty() {
                        out.push(json!({"role": "user", "content": parts}));
                    }
                }
            },
            Message::Assistant(a) => {
                if let Some(v) = convert_assistant(model, a, compat) {
                    out.push(v);
                }
            }
            Message::ToolResult(_) => {
                let mut images = Vec::new();
                let mut j = i;
                while let Some(Message::ToolResult(tr)) = messages.get(j) {
                    let text = tr
                        .content
                        .iter()
                        .filter_map(UserContent::as_text)
                        .collect::<Vec<_>>()
                        .join("\n");
                    let has_images = tr
                        .content
                        .iter()
                        .any(|c| matches!(c, UserContent::Image(_)));
                    let content = if !text.is_empty() {
                        text
                    } else if has_images {
                        "(see attached image)".to_owned()
                    } else {
                        "(no tool output)".to_owned()
                    };
                    let mut m = Map::new();
                    put(&mut m, "role", "tool");
                    put(&mut m, "content", content);
                    put(&mut m, "tool_call_id", tr.tool_call_id.clone());
                    if compat.requires_tool_result_name && !tr.tool_name.is_empty() {
                        put(&mut m, "name", tr.tool_name.clone());
                    }
                    out.push(Value::Object(m));
                    if has_images && model.supports_images() {
                        for c in &tr.content {
                            if let UserContent::Image(img) = c {
                                images.push(image_part(&img.mime_type, &img.data));
                            }
                        }
                    }
                    j += 1;
                }
                i = j;
                if images.is_empty() {
                    last_role = Some("toolResult");
                } else {
                    if compat.requires_assistant_after_tool_result {
                        out.push(json!({"role": "assistant", "content": ASSISTANT_BRIDGE}));
                    }
                    let mut parts = vec![
                        json!({"type": "text", "text": "Attached image(s) from tool result:"}),
                    ];
                    parts.extend(images);
                    out.push(json!({"role": "user", "content": parts}));
                    last_role = Some("user");
                }
                continue;
            }
        }
        last_role = Some(msg.role());
        i += 1;
    }
    out
}

/// One replayed assistant message, or `None` when it has neither content nor tool calls.
fn convert_assistant(
    model: &Model,
    a: &crate::types::AssistantMessage,
    compat: &Compat,
) -> Option<Value> {
    let texts: Vec<&str> = a
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantContent::Text(t) if !t.text.trim().is_empty() => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    let joined: String = texts.concat();
    let thinking: Vec<&crate::types::ThinkingContent> = a
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantContent::Thinking(t) => Some(t),
            _ => None,
        })
        .collect();
    let calls: Vec<&crate::types::ToolCall> = a.tool_calls().collect();
    let signed_details = thinking
        .iter()
        .find_map(|t| parse_reasoning_details(t.thinking_signature.as_deref()));
    let legacy: Vec<Value> = calls
        .iter()
        .filter_map(|c| parse_legacy_encrypted(c.thought_signature.as_deref()))
        .collect();
    let preserved = signed_details.or_else(|| (!legacy.is_empty()).then_some(legacy));

    let mut content: Value = if compat.requires_assistant_after_tool_result {
        json!("")
    } else {
        Value::Null
    };
    // The raw reasoning field (`reasoning_content` / `reasoning` / `reasoning_text`) replayed
    // when no structured `reasoning_details` are.
    let mut reasoning_field: Option<(String, String)> = None;
    let non_empty: Vec<_> = thinking
        .iter()
        .filter(|t| !t.thinking.trim().is_empty())
        .collect();
    if !non_empty.is_empty() {
        if compat.requires_thinking_as_text {
            let text = non_empty
                .iter()
                .map(|t| t.thinking.as_str())
                .collect::<Vec<_>>()
                .join("\n\n");
            let mut parts = vec![json!({"type": "text", "text": text})];
            parts.extend(texts.iter().map(|t| json!({"type": "text", "text": t})));
            content = Value::Array(parts);
        } else {
            if !joined.is_empty() {
                content = json!(joined);
            }
            let mut sig = non_empty[0].thinking_signature.clone().unwrap_or_default();
            if model.provider == "opencode-go" && sig == "reasoning" {
                sig = "reasoning_content".into();
            }
            if preserved.is_none()
                && matches!(
                    sig.as_str(),
                    "reasoning" | "reasoning_content" | "reasoning_text"
                )
            {
                let text = non_empty
                    .iter()
                    .map(|t| t.thinking.as_str())
                    .collect::<Vec<_>>()
                    .join("\n");
                reasoning_field = Some((sig, text));
            }
        }
    } else if !joined.is_empty() {
        content = json!(joined);
    }
    let mut m = Map::new();
    put(&mut m, "role", "assistant");
    put(&mut m, "content", content);
    if let Some((field, text)) = reasoning_field {
        put(&mut m, &field, text);
    }
    if !calls.is_empty() {
        let tcs: Vec<Value> = calls
            .iter()
            .map(|c| {
                json!({
                    "id": c.id,
                    "type": "function",
                    "function": {
                        "name": c.name,
                        "arguments": super::sdk::js_json(&Value::Object(c.arguments.clone())),
                    }
                })
            })
            .collect();
        put(&mut m, "tool_calls", Value::Array(tcs));
    }
    if let Some(d) = preserved {
        put(&mut m, "reasoning_details", Value::Array(d));
    }
    if compat.requires_reasoning_content_on_assistant_messages
        && model.reasoning
        && !m.contains_key("reasoning_content")
    {
        put(&mut m, "reasoning_content", "");
    }
    let has_content = match m.get("content") {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        _ => false,
    };
    if !has_content && !m.contains_key("tool_calls") {
        return None;
    }
    Some(Value::Object(m))
}

/// A thinking signature holding a non-empty array of valid `reasoning_details`.
fn parse_reasoning_details(sig: Option<&str>) -> Option<Vec<Value>> {
    let v: Value = serde_json::from_str(sig.filter(|s| !s.is_empty())?).ok()?;
    let arr = v.as_array()?;
    let ok = !arr.is_empty()
        && arr
            .iter()
            .all(|d| d.as_object().is_some_and(ReasoningDetails::is_valid));
    ok.then(|| arr.clone())
}

/// A legacy tool-call `thoughtSignature` holding one encrypted reasoning detail.
fn parse_legacy_encrypted(sig: Option<&str>) -> Option<Value> {
    let v: Value = serde_json::from_str(sig.filter(|s| !s.is_empty())?).ok()?;
    let o = v.as_object()?;
    let ok = ReasoningDetails::is_valid(o)
        && o.get("type").and_then(Value::as_str) == Some("reasoning.encrypted")
        && o.get("id")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
        && o.get("data")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty());
    ok.then_some(v)
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
