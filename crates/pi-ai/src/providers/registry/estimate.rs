//! Context-size estimate used to cap `max_tokens`.
//!
//! Mirrors pi-ai 0.85.1 `utils/estimate.ts` (`estimateContextTokens`): the latest usable
//! assistant usage (not `error`/`aborted`, non-zero, and not older than a message before
//! it) plus `ceil(chars/4)` per later message (and the JSON of tools a later tool result
//! added); without such usage, `ceil(chars/4)` of every message plus the system prompt and
//! the tools' JSON. Images count 4 800 chars; chars are UTF-16 code units.

use crate::types::{
    AssistantContent, Context, Message, StopReason, Tool, Usage, UserContent, UserMessageContent,
    count_to_u64,
};

const CHARS_PER_TOKEN: u64 = 4;
const IMAGE_CHARS: u64 = 4_800;

fn js_len(s: &str) -> u64 {
    s.encode_utf16().count() as u64
}

fn tokens(chars: u64) -> u64 {
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// `totalTokens`, or the component sum when it is 0 (summed in doubles as pi does; as a `u64`
/// by [`count_to_u64`], saturating).
pub fn context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens > 0.0 {
        count_to_u64(usage.total_tokens)
    } else {
        count_to_u64(usage.component_sum())
    }
}

fn blocks_chars(blocks: &[UserContent]) -> u64 {
    blocks
        .iter()
        .map(|b| match b {
            UserContent::Text(t) => js_len(&t.text),
            UserContent::Image(_) => IMAGE_CHARS,
        })
        .sum()
}

/// Estimated tokens of one message.
pub fn message_tokens(message: &Message) -> u64 {
    match message {
        Message::User(u) => tokens(match &u.content {
            UserMessageContent::Text(s) => js_len(s),
            UserMessageContent::Blocks(b) => blocks_chars(b),
        }),
        Message::ToolResult(r) => tokens(blocks_chars(&r.content)),
        Message::Assistant(a) => tokens(
            a.content
                .iter()
                .map(|b| match b {
                    AssistantContent::Text(t) => js_len(&t.text),
                    AssistantContent::Thinking(t) => js_len(&t.thinking),
                    AssistantContent::ToolCall(c) => {
                        js_len(&c.name)
                            + js_len(&crate::json::to_string(&c.arguments).unwrap_or_default())
                    }
                })
                .sum(),
        ),
    }
}

fn tools_tokens(tools: &[&Tool]) -> u64 {
    if tools.is_empty() {
        return 0;
    }
    tokens(js_len(&crate::json::to_string(tools).unwrap_or_default()))
}

/// Index of the latest assistant message whose usage describes the prefix.
fn last_usage_index(messages: &[Message]) -> Option<usize> {
    let mut latest_prefix = i64::MIN;
    let mut found = None;
    for (i, message) in messages.iter().enumerate() {
        if let Message::Assistant(a) = message
            && a.timestamp >= latest_prefix
            && !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error)
            && context_tokens(&a.usage) > 0
        {
            found = Some(i);
        }
        latest_prefix = latest_prefix.max(message.timestamp());
    }
    found
}

/// Estimated tokens of the whole context.
pub fn estimate_context_tokens(context: &Context) -> u64 {
    let messages = &context.messages;
    let tools: Vec<&Tool> = context.tools.iter().flatten().collect();
    match last_usage_index(messages) {
        Some(index) => {
            let Message::Assistant(anchor) = &messages[index] else {
                return 0;
            };
            let later = &messages[index + 1..];
            let trailing: u64 = later.iter().map(message_tokens).sum();
            let added: Vec<&str> = later
                .iter()
                .filter_map(|m| match m {
                    Message::ToolResult(r) => r.added_tool_names.as_ref(),
                    _ => None,
                })
                .flatten()
                .map(String::as_str)
                .collect();
            let added_tools: Vec<&Tool> = tools
                .iter()
                .copied()
                .filter(|t| added.contains(&t.name.as_str()))
                .collect();
            // The provider's count may be anything up to u64::MAX.
            context_tokens(&anchor.usage)
                .saturating_add(trailing)
                .saturating_add(tools_tokens(&added_tools))
        }
        None => {
            let body: u64 = messages.iter().map(message_tokens).sum();
            let system = context
                .system_prompt
                .as_deref()
                .map_or(0, |s| tokens(js_len(s)));
            body + system + tools_tokens(&tools)
        }
    }
}
