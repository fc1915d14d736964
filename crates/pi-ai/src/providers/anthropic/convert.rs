//! Conversion of pi messages and tools to Anthropic Messages API JSON.
//!
//! Mirrors pi-ai 0.85.1 `api/anthropic-messages.ts` (`convertMessages`, `convertContentBlocks`,
//! `convertToolResult`, `convertTools`, `normalizeToolCallId`) after the shared
//! `transformMessages` pass.

use crate::providers::StreamError;
use serde_json::{Map, Value, json};

use super::compat::Compat;
use super::oauth::to_claude_code_name;
use crate::providers::constrained::{resolve_strict, tool_parameters};
use crate::providers::tool_ids::sanitize_tool_call_id;
use crate::transform::transform_messages;
use crate::types::{
    AssistantContent, AssistantMessage, Message, Model, Tool, ToolResultMessage, UserContent,
    UserMessageContent,
};

/// The `cache_control` marker: `{type:"ephemeral"}`, plus `ttl:"1h"` when `long`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct CacheControl {
    /// One-hour TTL.
    pub long: bool,
}

impl CacheControl {
    /// The JSON marker.
    pub(crate) fn to_value(self) -> Value {
        if self.long {
            json!({ "type": "ephemeral", "ttl": "1h" })
        } else {
            json!({ "type": "ephemeral" })
        }
    }
}

fn image_block(data: &str, mime_type: &str) -> Value {
    json!({
        "type": "image",
        "source": { "type": "base64", "media_type": mime_type, "data": data },
    })
}

/// Tool-result content: a `\n`-joined string when text-only, else blocks with a leading
/// `(see attached image)` text when there is no text at all.
fn convert_content_blocks(content: &[UserContent]) -> Value {
    if !content.iter().any(|c| matches!(c, UserContent::Image(_))) {
        let texts: Vec<&str> = content.iter().filter_map(UserContent::as_text).collect();
        return Value::String(texts.join("\n"));
    }
    let mut blocks: Vec<Value> = content
        .iter()
        .map(|c| match c {
            UserContent::Text(t) => json!({ "type": "text", "text": t.text }),
            UserContent::Image(i) => image_block(&i.data, &i.mime_type),
        })
        .collect();
    if !content.iter().any(|c| matches!(c, UserContent::Text(_))) {
        blocks.insert(0, json!({ "type": "text", "text": "(see attached image)" }));
    }
    Value::Array(blocks)
}

fn convert_user(content: &UserMessageContent) -> Option<Value> {
    match content {
        UserMessageContent::Text(s) => {
            (!s.trim().is_empty()).then(|| json!({ "role": "user", "content": s }))
        }
        UserMessageContent::Blocks(blocks) => {
            let converted: Vec<Value> = blocks
                .iter()
                .filter_map(|b| match b {
                    UserContent::Text(t) if t.text.trim().is_empty() => None,
                    UserContent::Text(t) => Some(json!({ "type": "text", "text": t.text })),
                    UserContent::Image(i) => Some(image_block(&i.data, &i.mime_type)),
                })
                .collect();
            (!converted.is_empty()).then(|| json!({ "role": "user", "content": converted }))
        }
    }
}

fn convert_assistant(
    content: &[AssistantContent],
    allow_empty_signature: bool,
    oauth: bool,
) -> Option<Value> {
    let mut blocks = Vec::new();
    for block in content {
        match block {
            AssistantContent::Text(t) => {
                if !t.text.trim().is_empty() {
                    blocks.push(json!({ "type": "text", "text": t.text }));
                }
            }
            AssistantContent::Thinking(t) => {
                if t.redacted == Some(true) {
                    let data = t.thinking_signature.clone().unwrap_or_default();
                    blocks.push(json!({ "type": "redacted_thinking", "data": data }));
                    continue;
                }
                let signature = t
                    .thinking_signature
                    .as_deref()
                    .filter(|s| !s.trim().is_empty());
                match signature {
                    None if t.thinking.trim().is_empty() => {}
                    None if allow_empty_signature => blocks.push(
                        json!({ "type": "thinking", "thinking": t.thinking, "signature": "" }),
                    ),
                    None => blocks.push(json!({ "type": "text", "text": t.thinking })),
                    Some(sig) => blocks.push(
                        json!({ "type": "thinking", "thinking": t.thinking, "signature": sig }),
                    ),
                }
            }
            AssistantContent::ToolCall(tc) => {
                let name = if oauth {
                    to_claude_code_name(&tc.name)
                } else {
                    tc.name.clone()
                };
                blocks.push(json!({
                    "type": "tool_use",
                    "id": tc.id,
                    "name": name,
                    "input": tc.arguments,
                }));
            }
        }
    }
    (!blocks.is_empty()).then(|| json!({ "role": "assistant", "content": blocks }))
}

fn convert_tool_result(msg: &ToolResultMessage) -> Value {
    json!({
        "type": "tool_result",
        "tool_use_id": msg.tool_call_id,
        "content": convert_content_blocks(&msg.content),
        "is_error": msg.is_error,
    })
}

/// Managed-effort models (`compat.supportsMidConvoEffort`): the model's provider and the
/// effort of this request.
#[derive(Clone, Copy, Debug)]
pub(super) struct ManagedEffort<'a> {
    /// Assistant messages of this provider (and API) replay their recorded effort.
    pub provider: &'a str,
    /// The effort of the new turn.
    pub active: &'a str,
}

/// The `messages` array: the transformed history converted, consecutive tool results merged
/// into one user message, and the cache marker on the last block of a final user message.
/// For managed-effort models every replayed assistant message with a recorded effort is
/// preceded by `{role:"system", content:[], output_config:{effort}}`, and one such message
/// with the active effort closes the list.
pub(super) fn convert_messages(
    model: &Model,
    messages: &[Message],
    cache: Option<&CacheControl>,
    compat: &Compat,
    oauth: bool,
    managed: Option<ManagedEffort<'_>>,
) -> Vec<Value> {
    let normalize = |id: &str, _: &Model, _: &AssistantMessage| sanitize_tool_call_id(id);
    let transformed = transform_messages(messages, model, Some(&normalize));
    let mut out: Vec<Value> = Vec::with_capacity(transformed.len());
    let mut levels: Vec<(usize, String)> = Vec::new();
    let mut i = 0;
    while i < transformed.len() {
        match &transformed[i] {
            Message::User(u) => out.extend(convert_user(&u.content)),
            Message::Assistant(a) => {
                if let Some(converted) =
                    convert_assistant(&a.content, compat.allow_empty_signature, oauth)
                {
                    let level = a
                        .provider_thinking_level
                        .as_deref()
                        .filter(|l| matches!(*l, "low" | "medium" | "high" | "xhigh" | "max"));
                    if let (Some(m), Some(level)) = (managed, level)
                        && a.api == "anthropic-messages"
                        && a.provider == m.provider
                    {
                        levels.push((out.len(), level.to_owned()));
                    }
                    out.push(converted);
                }
            }
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                while let Some(Message::ToolResult(t)) = transformed.get(i) {
                    results.push(convert_tool_result(t));
                    i += 1;
                }
                out.push(json!({ "role": "user", "content": results }));
                continue;
            }
        }
        i += 1;
    }
    if let Some(cache) = cache {
        mark_last_user_block(&mut out, *cache);
    }
    match managed {
        Some(m) => insert_effort_messages(out, &levels, m.active),
        None => out,
    }
}

fn effort_message(effort: &str) -> Value {
    json!({ "role": "system", "content": [], "output_config": { "effort": effort } })
}

/// `insertThinkingLevelMessages`.
fn insert_effort_messages(
    messages: Vec<Value>,
    levels: &[(usize, String)],
    active: &str,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len() + levels.len() + 1);
    for (index, message) in messages.into_iter().enumerate() {
        if let Some((_, level)) = levels.iter().find(|(i, _)| *i == index) {
            out.push(effort_message(level));
        }
        out.push(message);
    }
    out.push(effort_message(active));
    out
}

/// Puts the cache marker on the last text/image/tool_result block of a trailing user message
/// (a string content becomes one text block carrying it).
fn mark_last_user_block(messages: &mut [Value], cache: CacheControl) {
    let Some(Value::Object(last)) = messages.last_mut() else {
        return;
    };
    if last.get("role").and_then(Value::as_str) != Some("user") {
        return;
    }
    match last.get_mut("content") {
        Some(Value::Array(blocks)) => {
            if let Some(Value::Object(block)) = blocks.last_mut() {
                let kind = block.get("type").and_then(Value::as_str);
                if matches!(kind, Some("text" | "image" | "tool_result")) {
                    block.insert("cache_control".into(), cache.to_value());
                }
            }
        }
        Some(Value::String(text)) => {
            let text = std::mem::take(text);
            last.insert(
                "content".into(),
                json!([{ "type": "text", "text": text, "cache_control": cache.to_value() }]),
            );
        }
        _ => {}
    }
}

/// The `tools` array: `{name, description, eager_input_streaming?, strict?, input_schema:
/// {…, type:"object", properties, required}, cache_control?}` with the marker on the last
/// tool; strict tools (`supportsStrictTools`) carry their strictified schema.
///
/// `Err` when a tool requires JSON-schema constrained sampling that cannot be honoured.
pub(super) fn convert_tools(
    tools: &[Tool],
    oauth: bool,
    compat: &Compat,
    cache: Option<&CacheControl>,
) -> Result<Vec<Value>, StreamError> {
    let mut out = Vec::with_capacity(tools.len());
    for (index, tool) in tools.iter().enumerate() {
        let strict = resolve_strict(tool, compat.supports_strict_tools)?;
        let parameters = tool_parameters(tool, strict);
        let mut t = Map::new();
        let name = if oauth {
            to_claude_code_name(&tool.name)
        } else {
            tool.name.clone()
        };
        t.insert("name".into(), name.into());
        t.insert("description".into(), tool.description.clone().into());
        if compat.supports_eager_tool_input_streaming {
            t.insert("eager_input_streaming".into(), true.into());
        }
        if strict == Some(true) {
            t.insert("strict".into(), true.into());
        }
        let properties = parameters
            .get("properties")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let required = parameters
            .get("required")
            .cloned()
            .unwrap_or_else(|| json!([]));
        let mut schema = match (strict, parameters) {
            (Some(true), Value::Object(p)) => p,
            _ => Map::new(),
        };
        schema.insert("type".into(), "object".into());
        schema.insert("properties".into(), properties);
        schema.insert("required".into(), required);
        t.insert("input_schema".into(), Value::Object(schema));
        if let Some(c) = cache
            && index + 1 == tools.len()
        {
            t.insert("cache_control".into(), c.to_value());
        }
        out.push(Value::Object(t));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{
        AssistantMessage, ImageContent, StopReason, TextContent, ThinkingContent, ToolCall,
        UserMessage,
    };

    fn model() -> Model {
        Model {
            id: "m".into(),
            api: "anthropic-messages".into(),
            provider: "anthropic".into(),
            input: vec![
                crate::types::InputKind::Text,
                crate::types::InputKind::Image,
            ],
            ..Default::default()
        }
    }

    fn assistant(content: Vec<AssistantContent>) -> AssistantMessage {
        let mut a = AssistantMessage::empty("anthropic-messages", "anthropic", "m");
        a.content = content;
        a.stop_reason = StopReason::ToolUse;
        a
    }

    fn result(id: &str, content: Vec<UserContent>, is_error: bool) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "t".into(),
            content,
            is_error,
            ..Default::default()
        })
    }

    #[test]
    fn assistant_blocks_follow_the_replay_rules() {
        let call = ToolCall {
            id: "toolu_1".into(),
            name: "read".into(),
            ..Default::default()
        };
        let a = assistant(vec![
            AssistantContent::Text(TextContent::new("  ")),
            AssistantContent::Thinking(ThinkingContent {
                thinking: "[Reasoning redacted]".into(),
                thinking_signature: Some("blob".into()),
                redacted: Some(true),
            }),
            AssistantContent::Thinking(ThinkingContent {
                thinking: "plain".into(),
                ..Default::default()
            }),
            AssistantContent::Thinking(ThinkingContent {
                thinking: "signed".into(),
                thinking_signature: Some("sig".into()),
                redacted: None,
            }),
            AssistantContent::ToolCall(call),
        ]);
        let msgs = vec![
            UserMessage::text("q").into(),
            a.into(),
            result(
                "toolu_1",
                vec![UserContent::text("a"), UserContent::text("b")],
                false,
            ),
        ];
        let out = convert_messages(&model(), &msgs, None, &Compat::of(&model()), false, None);
        assert_eq!(
            out[1]["content"],
            json!([
                {"type": "redacted_thinking", "data": "blob"},
                {"type": "text", "text": "plain"},
                {"type": "thinking", "thinking": "signed", "signature": "sig"},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}},
            ])
        );
        assert_eq!(
            out[2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a\nb", "is_error": false}
            ]})
        );
    }

    #[test]
    fn consecutive_results_merge_and_the_last_block_gets_the_marker() {
        let a = assistant(vec![
            AssistantContent::ToolCall(ToolCall {
                id: "a".into(),
                ..Default::default()
            }),
            AssistantContent::ToolCall(ToolCall {
                id: "b".into(),
                ..Default::default()
            }),
        ]);
        let image = UserContent::Image(ImageContent {
            data: "AAA".into(),
            mime_type: "image/png".into(),
        });
        let msgs = vec![
            UserMessage::text("q").into(),
            a.into(),
            result("a", vec![UserContent::text("x")], true),
            result("b", vec![image], false),
        ];
        let cache = CacheControl { long: false };
        let out = convert_messages(
            &model(),
            &msgs,
            Some(&cache),
            &Compat::of(&model()),
            false,
            None,
        );
        assert_eq!(out.len(), 3);
        let results = out[2]["content"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0]["is_error"], json!(true));
        assert!(results[0].get("cache_control").is_none());
        assert_eq!(
            results[1]["content"][0],
            json!({"type": "text", "text": "(see attached image)"})
        );
        assert_eq!(results[1]["cache_control"], json!({"type": "ephemeral"}));
        // The first user message carries no marker.
        assert!(out[0]["content"][0].get("cache_control").is_none());
    }

    #[test]
    fn blank_user_text_is_dropped_and_string_content_gets_the_marker() {
        let msgs = vec![
            Message::User(UserMessage {
                content: UserMessageContent::Text("   ".into()),
                timestamp: 0,
            }),
            Message::User(UserMessage {
                content: UserMessageContent::Text("hello".into()),
                timestamp: 0,
            }),
        ];
        let cache = CacheControl { long: true };
        let out = convert_messages(
            &model(),
            &msgs,
            Some(&cache),
            &Compat::of(&model()),
            false,
            None,
        );
        assert_eq!(
            out,
            vec![json!({"role": "user", "content": [
                {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
            ]})]
        );
    }

    #[test]
    fn tools_get_schema_defaults_and_the_last_marker() {
        let tools = vec![
            Tool {
                name: "a".into(),
                description: "da".into(),
                parameters: json!({"type": "object"}),
                constrained_sampling: None,
            },
            Tool {
                name: "read".into(),
                description: "db".into(),
                parameters: json!({"type": "object", "properties": {"p": {"type": "string", "description": "x"}}, "required": ["p"]}),
                constrained_sampling: None,
            },
        ];
        let cache = CacheControl { long: false };
        let out = convert_tools(&tools, true, &Compat::of(&model()), Some(&cache)).unwrap();
        assert_eq!(
            out[0],
            json!({"name": "a", "description": "da", "eager_input_streaming": true,
                   "input_schema": {"type": "object", "properties": {}, "required": []}})
        );
        assert_eq!(out[1]["name"], json!("Read"));
        assert_eq!(out[1]["cache_control"], json!({"type": "ephemeral"}));
        let mut strict_compat = Compat::of(&model());
        strict_compat.supports_strict_tools = true;
        let mut strict = tools[0].clone();
        strict.constrained_sampling = Some(json!({"type": "json_schema", "strict": "prefer"}));
        let out = convert_tools(&[strict.clone()], false, &strict_compat, None).unwrap();
        assert_eq!(out[0]["strict"], json!(true));
        assert_eq!(
            out[0]["input_schema"],
            json!({"type": "object", "required": [], "additionalProperties": false, "properties": {}})
        );
        let mut strict = tools[0].clone();
        strict.constrained_sampling = Some(json!({"type": "json_schema", "strict": "require"}));
        assert_eq!(
            convert_tools(&[strict], false, &Compat::of(&model()), None)
                .unwrap_err()
                .to_string(),
            "Tool \"a\" requires JSON-schema constrained sampling, but strict tools are unsupported."
        );
    }

    #[test]
    fn managed_effort_models_replay_recorded_efforts_as_system_messages() {
        let mut a1 = assistant(vec![AssistantContent::Text(TextContent::new("one"))]);
        a1.provider_thinking_level = Some("max".into());
        a1.stop_reason = StopReason::Stop;
        let mut a2 = assistant(vec![AssistantContent::Text(TextContent::new("two"))]);
        a2.provider_thinking_level = Some("bogus".into());
        a2.stop_reason = StopReason::Stop;
        let msgs = vec![
            UserMessage::text("q1").into(),
            a1.into(),
            UserMessage::text("q2").into(),
            a2.into(),
            UserMessage::text("q3").into(),
        ];
        let managed = ManagedEffort {
            provider: "anthropic",
            active: "high",
        };
        let out = convert_messages(
            &model(),
            &msgs,
            None,
            &Compat::of(&model()),
            false,
            Some(managed),
        );
        let roles: Vec<&str> = out.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(
            roles,
            [
                "user",
                "system",
                "assistant",
                "user",
                "assistant",
                "user",
                "system"
            ]
        );
        assert_eq!(out[1]["output_config"], json!({"effort": "max"}));
        assert_eq!(
            out[6],
            json!({"role": "system", "content": [], "output_config": {"effort": "high"}})
        );
    }
}
