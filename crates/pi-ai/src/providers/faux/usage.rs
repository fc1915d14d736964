//! The faux provider's usage estimate.
//!
//! Mirrors pi-ai 0.85.1 `providers/faux.ts` (`serializeContext`, `withUsageEstimate`):
//! input = `ceil(chars/4)` of the serialized context, output = `ceil(chars/4)` of the
//! content's text; with a session id and a cache retention other than `none`, the common
//! prefix with the session's previous prompt is `cacheRead` and the rest `cacheWrite`
//! (the first prompt of a session is all `cacheWrite`, on top of `input`, as in pi).
//! Chars are UTF-16 code units.

use std::collections::HashMap;

use crate::types::{
    AssistantContent, AssistantMessage, CacheRetention, Context, Message, StreamOptions, Usage,
    UserContent, UserMessageContent,
};

/// Replaces `message.usage` with the estimate and records the prompt for the session.
pub(super) fn with_usage_estimate(
    mut message: AssistantMessage,
    context: &Context,
    options: &StreamOptions,
    prompt_cache: &mut HashMap<String, String>,
) -> AssistantMessage {
    let prompt = serialize_context(context);
    let prompt_len = js_len(&prompt);
    let prompt_tokens = tokens(prompt_len);
    let output = tokens(js_len(&assistant_text(&message.content)));
    let (mut input, mut cache_read, mut cache_write) = (prompt_tokens, 0, 0);
    let session = options.session_id.as_deref().filter(|s| !s.is_empty());
    if let Some(session) = session
        && options.cache_retention != Some(CacheRetention::None)
    {
        match prompt_cache.get(session) {
            Some(previous) if !previous.is_empty() => {
                let shared = common_prefix_len(previous, &prompt);
                cache_read = tokens(shared);
                cache_write = tokens(prompt_len - shared);
                input = prompt_tokens.saturating_sub(cache_read);
            }
            _ => cache_write = prompt_tokens,
        }
        prompt_cache.insert(session.to_owned(), prompt);
    }
    message.usage = Usage {
        input: input as f64,
        output: output as f64,
        cache_read: cache_read as f64,
        cache_write: cache_write as f64,
        total_tokens: (input + output + cache_read + cache_write) as f64,
        ..Default::default()
    };
    message
}

/// JavaScript string length (UTF-16 code units).
pub(super) fn js_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// `ceil(units / 4)`.
pub(super) fn tokens(units: usize) -> u64 {
    units.div_ceil(4) as u64
}

/// Length in UTF-16 units of the common prefix of `a` and `b`.
fn common_prefix_len(a: &str, b: &str) -> usize {
    a.encode_utf16()
        .zip(b.encode_utf16())
        .take_while(|(x, y)| x == y)
        .count()
}

fn user_text(content: &[UserContent]) -> String {
    content
        .iter()
        .map(|b| match b {
            UserContent::Text(t) => t.text.clone(),
            UserContent::Image(i) => format!("[image:{}:{}]", i.mime_type, js_len(&i.data)),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn assistant_text(content: &[AssistantContent]) -> String {
    content
        .iter()
        .map(|b| match b {
            AssistantContent::Text(t) => t.text.clone(),
            AssistantContent::Thinking(t) => t.thinking.clone(),
            AssistantContent::ToolCall(c) => format!(
                "{}:{}",
                c.name,
                crate::json::to_string(&c.arguments).unwrap_or_default()
            ),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// pi's faux `serializeContext`: `system:…`, `<role>:<text>` per message, `tools:<json>`,
/// joined by blank lines.
pub(super) fn serialize_context(context: &Context) -> String {
    let mut parts = Vec::new();
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        parts.push(format!("system:{system}"));
    }
    for message in &context.messages {
        let text = match message {
            Message::User(u) => match &u.content {
                UserMessageContent::Text(s) => s.clone(),
                UserMessageContent::Blocks(b) => user_text(b),
            },
            Message::Assistant(a) => assistant_text(&a.content),
            Message::ToolResult(r) => {
                let mut lines = vec![r.tool_name.clone()];
                lines.extend(r.content.iter().map(|b| user_text(std::slice::from_ref(b))));
                lines.join("\n")
            }
        };
        parts.push(format!("{}:{text}", message.role()));
    }
    if let Some(tools) = context.tools.as_ref().filter(|t| !t.is_empty()) {
        parts.push(format!(
            "tools:{}",
            crate::json::to_string(tools).unwrap_or_default()
        ));
    }
    parts.join("\n\n")
}
