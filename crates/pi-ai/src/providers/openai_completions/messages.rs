//! Chat Completions `messages`: system/developer prompt, user parts, replayed assistant
//! messages (text joined, thinking to its reasoning field or `reasoning_details`, tool calls),
//! tool results (one `tool` message each, images in a following user message) and tool-call id
//! normalization.
//!
//! Mirrors pi 0.85.1 `api/openai-completions.ts` `convertMessages`.

use serde_json::{Map, Value, json};

use super::compat::Compat;
use super::details::ReasoningDetails;
use super::sdk::{put, short_hash};
use crate::types::{AssistantContent, Message, Model, UserContent, UserMessageContent};

/// Text pi inserts between tool results and a following user message when required.
const ASSISTANT_BRIDGE: &str = "I have processed the tool results.";

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
