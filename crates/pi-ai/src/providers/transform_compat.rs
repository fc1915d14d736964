//! Interim §3.0 request-side message transform used by the Anthropic and Google request
//! builders until the shared `transform.rs` lands (then this file is deleted and the callers
//! switch to it).
//!
//! Mirrors pi-ai 0.85.1 `api/transform-messages.ts`: non-vision image placeholders,
//! cross-model thinking/signature handling with tool-call id normalization, removal of
//! errored/aborted assistant messages, and synthetic `No result provided` results for
//! orphaned tool calls.

use std::collections::{HashMap, HashSet};

use crate::types::{
    AssistantContent, Message, Model, StopReason, TextContent, ToolCall, ToolResultMessage,
    UserContent, UserMessageContent, now_ms,
};

const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";

fn replace_images(content: &[UserContent], placeholder: &str) -> Vec<UserContent> {
    let mut out = Vec::with_capacity(content.len());
    let mut previous_was_placeholder = false;
    for block in content {
        match block {
            UserContent::Image(_) => {
                if !previous_was_placeholder {
                    out.push(UserContent::text(placeholder));
                }
                previous_was_placeholder = true;
            }
            UserContent::Text(t) => {
                previous_was_placeholder = t.text == placeholder;
                out.push(block.clone());
            }
        }
    }
    out
}

/// Returns the messages to send for `model`; `normalize_id` maps tool-call ids of other
/// models' assistant messages to ids the provider accepts.
pub(crate) fn transform_messages(
    messages: &[Message],
    model: &Model,
    normalize_id: &dyn Fn(&str) -> String,
) -> Vec<Message> {
    let vision = model.supports_images();
    let mut id_map: HashMap<String, String> = HashMap::new();
    let mut transformed = Vec::with_capacity(messages.len());
    for msg in messages {
        let msg = match msg {
            Message::User(u) => {
                let mut u = u.clone();
                if !vision && let UserMessageContent::Blocks(b) = &u.content {
                    u.content =
                        UserMessageContent::Blocks(replace_images(b, USER_IMAGE_PLACEHOLDER));
                }
                Message::User(u)
            }
            Message::ToolResult(t) => {
                let mut t = t.clone();
                if !vision {
                    t.content = replace_images(&t.content, TOOL_IMAGE_PLACEHOLDER);
                }
                if let Some(id) = id_map.get(&t.tool_call_id) {
                    t.tool_call_id = id.clone();
                }
                Message::ToolResult(t)
            }
            Message::Assistant(a) => {
                let same =
                    a.provider == model.provider && a.api == model.api && a.model == model.id;
                let mut a = a.clone();
                let content = std::mem::take(&mut a.content);
                a.content = content
                    .into_iter()
                    .filter_map(|block| match block {
                        AssistantContent::Thinking(t) => {
                            if t.redacted == Some(true) {
                                return same.then_some(AssistantContent::Thinking(t));
                            }
                            if same
                                && t.thinking_signature
                                    .as_deref()
                                    .is_some_and(|s| !s.is_empty())
                            {
                                return Some(AssistantContent::Thinking(t));
                            }
                            if t.thinking.trim().is_empty() {
                                return None;
                            }
                            if same {
                                Some(AssistantContent::Thinking(t))
                            } else {
                                Some(AssistantContent::Text(TextContent::new(t.thinking)))
                            }
                        }
                        AssistantContent::Text(t) if !same => {
                            Some(AssistantContent::Text(TextContent::new(t.text)))
                        }
                        AssistantContent::ToolCall(mut tc) if !same => {
                            tc.thought_signature = None;
                            let id = normalize_id(&tc.id);
                            if id != tc.id {
                                id_map.insert(tc.id.clone(), id.clone());
                                tc.id = id;
                            }
                            Some(AssistantContent::ToolCall(tc))
                        }
                        other => Some(other),
                    })
                    .collect();
                Message::Assistant(a)
            }
        };
        transformed.push(msg);
    }

    let mut out = Vec::with_capacity(transformed.len());
    let mut pending: Vec<ToolCall> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    let flush =
        |out: &mut Vec<Message>, pending: &mut Vec<ToolCall>, answered: &mut HashSet<String>| {
            for tc in pending.drain(..) {
                if !answered.contains(&tc.id) {
                    out.push(Message::ToolResult(ToolResultMessage {
                        tool_call_id: tc.id.clone(),
                        tool_name: tc.name.clone(),
                        content: vec![UserContent::text("No result provided")],
                        is_error: true,
                        timestamp: now_ms(),
                        ..Default::default()
                    }));
                }
            }
            answered.clear();
        };
    for msg in transformed {
        match msg {
            Message::Assistant(a) => {
                flush(&mut out, &mut pending, &mut answered);
                if matches!(a.stop_reason, StopReason::Error | StopReason::Aborted) {
                    continue;
                }
                let calls: Vec<ToolCall> = a.tool_calls().cloned().collect();
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
                out.push(Message::Assistant(a));
            }
            Message::ToolResult(t) => {
                answered.insert(t.tool_call_id.clone());
                out.push(Message::ToolResult(t));
            }
            Message::User(u) => {
                flush(&mut out, &mut pending, &mut answered);
                out.push(Message::User(u));
            }
        }
    }
    flush(&mut out, &mut pending, &mut answered);
    out
}
