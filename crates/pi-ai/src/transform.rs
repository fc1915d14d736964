//! Request-side message normalization shared by every wire API.
//!
//! Mirrors pi-ai 0.85.1 `api/transform-messages.js` (`transformMessages`) and
//! `utils/sanitize-unicode.js` (`sanitizeSurrogates`).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::types::{
    AssistantContent, AssistantMessage, Message, Model, StopReason, TextContent, ToolCall,
    ToolResultMessage, UserContent, UserMessageContent, now_ms,
};

/// Placeholder for a run of images in a user message sent to a model without image input.
pub const NON_VISION_USER_IMAGE_PLACEHOLDER: &str =
    "(image omitted: model does not support images)";

/// Placeholder for a run of images in a tool result sent to a model without image input.
pub const NON_VISION_TOOL_IMAGE_PLACEHOLDER: &str =
    "(tool image omitted: model does not support images)";

/// Text of the synthetic error result answering a tool call that never got one.
pub const NO_RESULT_PROVIDED: &str = "No result provided";

/// A wire API's tool-call id normalizer: `(id, target model, the assistant message holding the
/// call) → id`. Called only for calls made by a different model.
pub type NormalizeToolCallId<'a> = &'a dyn Fn(&str, &Model, &AssistantMessage) -> String;

/// pi's `transformMessages(messages, model, normalizeToolCallId)`: prepares a stored
/// conversation for a request to `model`.
///
/// 1. Null content is empty content (done when deserializing: the content fields read `null`
///    as empty).
/// 2. If `model` takes no images, each run of images becomes one text block,
///    [`NON_VISION_USER_IMAGE_PLACEHOLDER`] in user messages (block lists only) and
///    [`NON_VISION_TOOL_IMAGE_PLACEHOLDER`] in tool results; an image right after a text block
///    that already is the placeholder is absorbed by it.
/// 3. Assistant messages from another model (provider, api or id differ): redacted thinking is
///    dropped, other thinking with non-whitespace text becomes a plain text block, empty
///    thinking is dropped, text blocks lose `textSignature`, tool calls lose
///    `thoughtSignature` and get `normalize_id`'s id. The id mapping applies to tool results
///    that follow. From the same model: redacted and signed thinking are kept (even if
///    empty), unsigned thinking that is empty or whitespace is dropped.
/// 4. Assistant messages that ended in `error` or `aborted` are removed.
/// 5. Tool calls left without a result when the next user or assistant message (or the end)
///    comes get a synthetic error result ([`NO_RESULT_PROVIDED`]) right there.
pub fn transform_messages(
    messages: &[Message],
    model: &Model,
    normalize_id: Option<NormalizeToolCallId<'_>>,
) -> Vec<Message> {
    let vision = model.supports_images();
    let mut id_map: HashMap<String, String> = HashMap::new();
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut orphans = OrphanTracker::default();

    for message in messages {
        match message {
            Message::User(user) => {
                orphans.flush(&mut out);
                let mut user = user.clone();
                if !vision && let UserMessageContent::Blocks(blocks) = &user.content {
                    user.content = UserMessageContent::Blocks(replace_images(
                        blocks,
                        NON_VISION_USER_IMAGE_PLACEHOLDER,
                    ));
                }
                out.push(Message::User(user));
            }
            Message::ToolResult(result) => {
                let mut result = result.clone();
                if !vision {
                    result.content =
                        replace_images(&result.content, NON_VISION_TOOL_IMAGE_PLACEHOLDER);
                }
                if let Some(id) = id_map.get(&result.tool_call_id) {
                    result.tool_call_id = id.clone();
                }
                orphans.answered.insert(result.tool_call_id.clone());
                out.push(Message::ToolResult(result));
            }
            Message::Assistant(assistant) => {
                // Transform first: the id mapping of a removed message still applies later.
                let transformed = transform_assistant(assistant, model, normalize_id, &mut id_map);
                orphans.flush(&mut out);
                if matches!(
                    assistant.stop_reason,
                    StopReason::Error | StopReason::Aborted
                ) {
                    continue;
                }
                let calls: Vec<&ToolCall> = transformed.tool_calls().collect();
                if !calls.is_empty() {
                    orphans.pending = calls
                        .iter()
                        .map(|c| (c.id.clone(), c.name.clone()))
                        .collect();
                    orphans.answered.clear();
                }
                out.push(Message::Assistant(transformed));
            }
        }
    }
    orphans.flush(&mut out);
    out
}

/// Tool calls of the last assistant message with tool calls, and the results seen since.
#[derive(Default)]
struct OrphanTracker {
    /// `(id, name)` in call order.
    pending: Vec<(String, String)>,
    answered: HashSet<String>,
}

impl OrphanTracker {
    /// Appends a synthetic error result for every pending call without a result.
    fn flush(&mut self, out: &mut Vec<Message>) {
        if self.pending.is_empty() {
            return;
        }
        for (id, name) in self.pending.drain(..) {
            if !self.answered.contains(&id) {
                out.push(Message::ToolResult(ToolResultMessage {
                    tool_call_id: id,
                    tool_name: name,
                    content: vec![UserContent::text(NO_RESULT_PROVIDED)],
                    is_error: true,
                    timestamp: now_ms(),
                    ..Default::default()
                }));
            }
        }
        self.answered.clear();
    }
}

/// Rule 3 on one assistant message; records id changes in `id_map`.
fn transform_assistant(
    message: &AssistantMessage,
    model: &Model,
    normalize_id: Option<NormalizeToolCallId<'_>>,
    id_map: &mut HashMap<String, String>,
) -> AssistantMessage {
    let same_model =
        message.provider == model.provider && message.api == model.api && message.model == model.id;
    let mut content = Vec::with_capacity(message.content.len());
    for block in &message.content {
        match block {
            AssistantContent::Thinking(thinking) => {
                if thinking.redacted == Some(true) {
                    if same_model {
                        content.push(block.clone());
                    }
                } else if same_model
                    && thinking
                        .thinking_signature
                        .as_deref()
                        .is_some_and(|s| !s.is_empty())
                {
                    content.push(block.clone());
                } else if crate::partial_json::js_trim(&thinking.thinking).is_empty() {
                    // Empty thinking carries nothing.
                } else if same_model {
                    content.push(block.clone());
                } else {
                    content.push(AssistantContent::Text(TextContent::new(&thinking.thinking)));
                }
            }
            AssistantContent::Text(text) if !same_model => {
                content.push(AssistantContent::Text(TextContent::new(&text.text)));
            }
            AssistantContent::Text(_) => content.push(block.clone()),
            AssistantContent::ToolCall(call) => {
                let mut call = call.clone();
                if !same_model {
                    call.thought_signature = None;
                    if let Some(normalize) = normalize_id {
                        let id = normalize(&call.id, model, message);
                        if id != call.id {
                            id_map.insert(call.id.clone(), id.clone());
                            call.id = id;
                        }
                    }
                }
                content.push(AssistantContent::ToolCall(call));
            }
        }
    }
    AssistantMessage {
        content,
        ..message.clone()
    }
}

/// Rule 2: each run of images becomes one `placeholder` text block.
fn replace_images(blocks: &[UserContent], placeholder: &str) -> Vec<UserContent> {
    let mut out = Vec::with_capacity(blocks.len());
    let mut previous_is_placeholder = false;
    for block in blocks {
        match block {
            UserContent::Image(_) => {
                if !previous_is_placeholder {
                    out.push(UserContent::text(placeholder));
                }
                previous_is_placeholder = true;
            }
            UserContent::Text(text) => {
                previous_is_placeholder = text.text == placeholder;
                out.push(block.clone());
            }
        }
    }
    out
}

/// pi's `sanitizeSurrogates` on a JavaScript (UTF-16) string: unpaired surrogates are
/// removed, pairs are kept. Rust `str` cannot hold unpaired surrogates, so text that reaches
/// pi-rs as UTF-16 goes through this and text that reaches it as JSON goes through
/// [`sanitize_json_surrogates`]; every other `String` is already clean.
pub fn sanitize_surrogates(units: &[u16]) -> String {
    char::decode_utf16(units.iter().copied())
        .filter_map(Result::ok)
        .collect()
}

/// Removes unpaired UTF-16 surrogate escapes (`\ud83d` without its low half, or a lone low
/// half) from the string literals of a JSON text, keeping escaped pairs. JavaScript's
/// `JSON.stringify` writes lone surrogates that way and `serde_json` refuses them; use this
/// before parsing JSON written by pi (session files, tool arguments) when a parse fails.
/// Borrowed when there is nothing to remove.
pub fn sanitize_json_surrogates(json: &str) -> Cow<'_, str> {
    crate::partial_json::drop_lone_surrogate_escapes(json)
}

#[cfg(test)]
mod tests;
