//! The Mistral request body and tool-call ids.
//!
//! Mirrors pi-ai 0.85.1 `api/mistral-conversations.js` `buildChatPayload`, `toChatMessages`,
//! `toFunctionTools` and `toMistralWirePayload`. pi builds the payload with camelCase keys and
//! renames them for the wire, which moves each renamed key to the end in a fixed order; the
//! body here is written directly in that wire order: `model`, `stream`, `messages`, `tools`,
//! `temperature`, `max_tokens`, `tool_choice`, `reasoning_effort`, `prompt_mode`,
//! `prompt_cache_key`.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::providers::openai_completions::sdk::{js_json, put, short_hash};
use crate::providers::{StreamError, constrained};
use crate::transform::transform_messages;
use crate::types::{
    AssistantContent, AssistantMessage, CacheRetention, Context, Message, Model,
    ModelThinkingLevel, StreamOptions, Tool, UserContent, UserMessageContent,
};

/// Mistral wants tool-call ids of exactly nine ASCII letters and digits.
pub(crate) const TOOL_CALL_ID_LENGTH: usize = 9;

/// The model ids that take `reasoning_effort`; other reasoning models take
/// `prompt_mode: "reasoning"`.
const REASONING_EFFORT_MODELS: [&str; 3] = [
    "mistral-small-2603",
    "mistral-small-latest",
    "mistral-medium-3.5",
];

/// pi's `deriveMistralToolCallId`: the id's ASCII letters and digits when that is nine of
/// them (first attempt only), else the first nine letters/digits of
/// `shortHash(<letters and digits, or the id when none> [":" attempt])`.
pub fn derive_tool_call_id(id: &str, attempt: u32) -> String {
    let normalized: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if attempt == 0 && normalized.len() == TOOL_CALL_ID_LENGTH {
        return normalized;
    }
    let seed_base = if normalized.is_empty() {
        id
    } else {
        &normalized
    };
    let seed = if attempt == 0 {
        seed_base.to_owned()
    } else {
        format!("{seed_base}:{attempt}")
    };
    short_hash(&seed)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(TOOL_CALL_ID_LENGTH)
        .collect()
}

/// pi's `createMistralToolCallIdNormalizer`: each original id maps to one derived id, and no
/// two originals share one (a clash retries with the next attempt).
pub fn tool_call_id_normalizer() -> impl FnMut(&str) -> String {
    let mut by_id: HashMap<String, String> = HashMap::new();
    let mut owner: HashMap<String, String> = HashMap::new();
    move |id: &str| {
        if let Some(existing) = by_id.get(id) {
            return existing.clone();
        }
        // Each attempt hashes a different seed; the loop ends once a candidate is free,
        // which the number of ids seen so far bounds.
        let mut attempt = 0u32;
        loop {
            let candidate = derive_tool_call_id(id, attempt);
            if owner.get(&candidate).is_none_or(|o| o == id) {
                by_id.insert(id.to_owned(), candidate.clone());
                owner.insert(candidate.clone(), id.to_owned());
                return candidate;
            }
            attempt = attempt.saturating_add(1);
        }
    }
}

/// The session id sent as `prompt_cache_key` and `x-affinity`: set, non-empty, and caching
/// not turned off.
pub(crate) fn cache_session(options: &StreamOptions) -> Option<&str> {
    options
        .session_id
        .as_deref()
        .filter(|s| !s.is_empty() && options.cache_retention != Some(CacheRetention::None))
}

/// The body for `context`.
pub(crate) fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
) -> Result<Map<String, Value>, StreamError> {
    let normalizer = RefCell::new(tool_call_id_normalizer());
    let normalize = |id: &str, _: &Model, _: &AssistantMessage| (normalizer.borrow_mut())(id);
    let messages = transform_messages(&context.messages, model, Some(&normalize));
    let mut wire = Vec::new();
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        wire.push(json!({"role": "system", "content": system}));
    }
    wire.extend(convert_messages(&messages, model.supports_images()));
    let mut body = Map::new();
    put(&mut body, "model", model.id.clone());
    put(&mut body, "stream", true);
    put(&mut body, "messages", Value::Array(wire));
    if let Some(tools) = context.tools.as_ref().filter(|t| !t.is_empty()) {
        put(&mut body, "tools", Value::Array(convert_tools(tools)?));
    }
    if let Some(t) = options.temperature {
        put(&mut body, "temperature", t);
    }
    if let Some(max) = options.max_tokens {
        put(&mut body, "max_tokens", max);
    }
    if let Some(choice) = options.tool_choice.as_ref().and_then(tool_choice) {
        put(&mut body, "tool_choice", choice);
    }
    let level = options
        .reasoning
        .and_then(|l| model.clamp_thinking_level(l.into()).reasoning())
        .filter(|_| model.reasoning);
    if let Some(level) = level {
        if REASONING_EFFORT_MODELS.contains(&model.id.as_str()) {
            let key = ModelThinkingLevel::from(level).as_str();
            let effort = model
                .thinking_level_map
                .as_ref()
                .and_then(|m| m.get(key))
                .filter(|v| !v.is_null())
                .cloned()
                .unwrap_or_else(|| json!("high"));
            put(&mut body, "reasoning_effort", effort);
        } else {
            put(&mut body, "prompt_mode", "reasoning");
        }
    }
    if let Some(session) = cache_session(options) {
        put(&mut body, "prompt_cache_key", session);
    }
    Ok(body)
}

/// `mapToolChoice`: `auto|none|any|required` as is, `{function: {name}}` as
/// `{type: "function", function: {name}}`; anything else is left out.
fn tool_choice(choice: &Value) -> Option<Value> {
    match choice {
        Value::String(s) if ["auto", "none", "any", "required"].contains(&s.as_str()) => {
            Some(choice.clone())
        }
        Value::Object(o) => {
            let name = o.get("function")?.get("name")?.clone();
            Some(json!({"type": "function", "function": {"name": name}}))
        }
        _ => None,
    }
}

fn convert_tools(tools: &[Tool]) -> Result<Vec<Value>, StreamError> {
    tools
        .iter()
        .map(|t| {
            let strict = constrained::resolve_strict(t, true)?;
            Ok(json!({
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": constrained::tool_parameters(t, strict),
                    "strict": strict.unwrap_or(false),
                },
            }))
        })
        .collect()
}

fn image_chunk(mime_type: &str, data: &str) -> Value {
    json!({"type": "image_url", "image_url": format!("data:{mime_type};base64,{data}")})
}

/// `toChatMessages` over already-transformed messages.
fn convert_messages(messages: &[Message], images: bool) -> Vec<Value> {
    let mut out = Vec::new();
    for message in messages {
        match message {
            Message::User(u) => match &u.content {
                UserMessageContent::Text(s) => out.push(json!({"role": "user", "content": s})),
                UserMessageContent::Blocks(blocks) => {
                    let had_images = blocks.iter().any(|b| matches!(b, UserContent::Image(_)));
                    let content: Vec<Value> = blocks
                        .iter()
                        .filter_map(|b| match b {
                            UserContent::Text(t) => Some(json!({"type": "text", "text": t.text})),
                            UserContent::Image(i) if images => {
                                Some(image_chunk(&i.mime_type, &i.data))
                            }
                            UserContent::Image(_) => None,
                        })
                        .collect();
                    if !content.is_empty() {
                        out.push(json!({"role": "user", "content": content}));
                    } else if had_images && !images {
                        out.push(json!({
                            "role": "user",
                            "content": "(image omitted: model does not support images)",
                        }));
                    }
                }
            },
            Message::Assistant(a) => {
                let mut parts = Vec::new();
                let mut calls = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantContent::Text(t) if !t.text.trim().is_empty() => {
                            parts.push(json!({"type": "text", "text": t.text}));
                        }
                        AssistantContent::Thinking(t) if !t.thinking.trim().is_empty() => {
                            parts.push(json!({
                                "type": "thinking",
                                "thinking": [{"type": "text", "text": t.thinking}],
                            }));
                        }
                        AssistantContent::ToolCall(tc) => calls.push(json!({
                            "id": tc.id,
                            "type": "function",
                            "function": {
                                "name": tc.name,
                                "arguments": js_json(&Value::Object(tc.arguments.clone())),
                            },
                            "index": 0,
                        })),
                        AssistantContent::Text(_) | AssistantContent::Thinking(_) => {}
                    }
                }
                if parts.is_empty() && calls.is_empty() {
                    continue;
                }
                let mut m = Map::new();
                put(&mut m, "role", "assistant");
                put(&mut m, "prefix", false);
                if !parts.is_empty() {
                    put(&mut m, "content", Value::Array(parts));
                }
                if !calls.is_empty() {
                    put(&mut m, "tool_calls", Value::Array(calls));
                }
                out.push(Value::Object(m));
            }
            Message::ToolResult(tr) => {
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
                let mut content = vec![json!({
                    "type": "text",
                    "text": tool_result_text(&text, has_images, images, tr.is_error),
                })];
                if images {
                    for c in &tr.content {
                        if let UserContent::Image(i) = c {
                            content.push(image_chunk(&i.mime_type, &i.data));
                        }
                    }
                }
                out.push(json!({
                    "role": "tool",
                    "name": tr.tool_name,
                    "content": content,
                    "tool_call_id": tr.tool_call_id,
                }));
            }
        }
    }
    out
}

/// `buildToolResultText`: the trimmed text (with `[tool error] ` for errors), or a
/// placeholder for image-only and empty results.
fn tool_result_text(text: &str, has_images: bool, images: bool, is_error: bool) -> String {
    let trimmed = text.trim();
    let prefix = if is_error { "[tool error] " } else { "" };
    if !trimmed.is_empty() {
        let suffix = if has_images && !images {
            "\n[tool image omitted: model does not support images]"
        } else {
            ""
        };
        return format!("{prefix}{trimmed}{suffix}");
    }
    let body = match (has_images, images) {
        (true, true) => "(see attached image)",
        (true, false) => "(image omitted: model does not support images)",
        (false, _) => "(no tool output)",
    };
    format!("{prefix}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_alphanumerics_are_kept_others_hashed() {
        assert_eq!(derive_tool_call_id("abc-123-XYZ", 0), "abc123XYZ");
        let hashed = derive_tool_call_id("call_0123456789", 0);
        assert_eq!(hashed.len(), 9);
        assert!(hashed.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(derive_tool_call_id("abc123XYZ", 1), "abc123XYZ");
        assert_eq!(derive_tool_call_id("!!", 0), derive_tool_call_id("!!", 0));
    }

    #[test]
    fn normalizer_is_stable_and_never_merges_two_ids() {
        let mut n = tool_call_id_normalizer();
        let a = n("abc123XYZ");
        let b = n("abc-123-XYZ");
        assert_eq!(a, "abc123XYZ");
        assert_ne!(a, b);
        assert_eq!(n("abc-123-XYZ"), b);
        assert_eq!(b.len(), 9);
    }

    #[test]
    fn tool_result_texts() {
        assert_eq!(
            tool_result_text(" ok ", false, true, true),
            "[tool error] ok"
        );
        assert_eq!(
            tool_result_text("ok", true, false, false),
            "ok\n[tool image omitted: model does not support images]"
        );
        assert_eq!(
            tool_result_text("", true, true, false),
            "(see attached image)"
        );
        assert_eq!(
            tool_result_text("", true, false, true),
            "[tool error] (image omitted: model does not support images)"
        );
        assert_eq!(
            tool_result_text("", false, false, true),
            "[tool error] (no tool output)"
        );
    }

    #[test]
    fn tool_choices() {
        assert_eq!(tool_choice(&json!("any")), Some(json!("any")));
        assert_eq!(
            tool_choice(&json!({"type": "function", "function": {"name": "read"}})),
            Some(json!({"type": "function", "function": {"name": "read"}}))
        );
        assert_eq!(tool_choice(&json!("bogus")), None);
    }
}
