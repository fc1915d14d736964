//! The "simple" option rules shared by the wire APIs: output caps clamped to the context
//! window, and thinking budgets fitted under the output cap.
//!
//! Mirrors pi-ai 0.85.1 `api/simple-options.ts` (`clampMaxTokensToContext`,
//! `adjustMaxTokensForThinking`) and `utils/estimate.ts` (`estimateContextTokens`). Lengths
//! are counted in UTF-16 code units, as JavaScript's `String.length` does.

use crate::types::{
    AssistantContent, Context, Message, Model, StopReason, ThinkingBudgets, ThinkingLevel, Tool,
    Usage, UserContent, UserMessageContent,
};

/// Tokens kept free below the context window (`CONTEXT_SAFETY_TOKENS`).
const CONTEXT_SAFETY_TOKENS: i64 = 4096;
/// Tokens always left for the answer when a thinking budget shares the output cap.
pub const MIN_ANSWER_TOKENS: u64 = 1024;
/// Characters counted for one image.
const ESTIMATED_IMAGE_CHARS: usize = 4800;

/// `min(max_tokens, max(1, contextWindow − estimate − 4096))`; `max(1, max_tokens)` when the
/// model has no context window.
pub fn clamp_max_tokens_to_context(model: &Model, context: &Context, max_tokens: u64) -> u64 {
    if model.context_window == 0 {
        return max_tokens.max(1);
    }
    let available = model.context_window as i64
        - estimate_context_tokens(context) as i64
        - CONTEXT_SAFETY_TOKENS;
    max_tokens.min(available.max(1) as u64)
}

/// `(max_tokens, thinking_budget)` for a budget-based model: the budget of `level` (custom
/// budgets first; `xhigh`/`max` use `high`); the cap is `min(base + budget, model cap)` (the
/// model cap when `base` is `None`); a budget that does not fit keeps ≥ 1024 answer tokens.
pub fn adjust_max_tokens_for_thinking(
    base: Option<u64>,
    model_max_tokens: u64,
    level: ThinkingLevel,
    budgets: Option<&ThinkingBudgets>,
) -> (u64, u64) {
    let mut budget = budgets.copied().unwrap_or_default().for_level(level);
    let max_tokens = match base {
        None => model_max_tokens,
        Some(b) => (b + budget).min(model_max_tokens),
    };
    if max_tokens <= budget {
        budget = budget.min(max_tokens.saturating_sub(MIN_ANSWER_TOKENS));
    }
    (max_tokens, budget)
}

/// Estimated prompt tokens of `context`: the latest usable assistant usage plus chars/4 of the
/// later messages (and of tools those messages added), else chars/4 of everything including
/// system prompt and tools JSON.
pub fn estimate_context_tokens(context: &Context) -> u64 {
    let messages = &context.messages;
    match last_usage(messages) {
        Some((index, usage_tokens)) => {
            let trailing: u64 = messages[index + 1..].iter().map(estimate_message).sum();
            let added: Vec<&str> = messages[index + 1..]
                .iter()
                .filter_map(|m| match m {
                    Message::ToolResult(t) => t.added_tool_names.as_ref(),
                    _ => None,
                })
                .flatten()
                .map(String::as_str)
                .collect();
            let added_tools: Vec<&Tool> = context
                .tools
                .iter()
                .flatten()
                .filter(|t| added.contains(&t.name.as_str()))
                .collect();
            usage_tokens + trailing + estimate_tools(&added_tools)
        }
        None => {
            let tokens: u64 = messages.iter().map(estimate_message).sum();
            let system = context
                .system_prompt
                .as_deref()
                .map_or(0, |s| div_ceil4(utf16_len(s)));
            let tools: Vec<&Tool> = context.tools.iter().flatten().collect();
            tokens + system + estimate_tools(&tools)
        }
    }
}

fn context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens > 0 {
        usage.total_tokens
    } else {
        usage.component_sum()
    }
}

/// Index and token count of the last assistant whose usage still describes the prefix.
fn last_usage(messages: &[Message]) -> Option<(usize, u64)> {
    let mut latest_prefix = i64::MIN;
    let mut found = None;
    for (i, m) in messages.iter().enumerate() {
        if let Message::Assistant(a) = m {
            let applies = a.timestamp >= latest_prefix;
            let ok = !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error);
            if applies && ok && context_tokens(&a.usage) > 0 {
                found = Some((i, context_tokens(&a.usage)));
            }
        }
        latest_prefix = latest_prefix.max(m.timestamp());
    }
    found
}

fn estimate_tools(tools: &[&Tool]) -> u64 {
    if tools.is_empty() {
        return 0;
    }
    let json = crate::json::to_string(tools).unwrap_or_default();
    div_ceil4(utf16_len(&json))
}

fn estimate_message(message: &Message) -> u64 {
    let chars = match message {
        Message::User(u) => match &u.content {
            UserMessageContent::Text(s) => utf16_len(s),
            UserMessageContent::Blocks(b) => blocks_chars(b),
        },
        Message::ToolResult(t) => blocks_chars(&t.content),
        Message::Assistant(a) => a
            .content
            .iter()
            .map(|c| match c {
                AssistantContent::Text(t) => utf16_len(&t.text),
                AssistantContent::Thinking(t) => utf16_len(&t.thinking),
                AssistantContent::ToolCall(tc) => {
                    utf16_len(&tc.name)
                        + utf16_len(&crate::json::to_string(&tc.arguments).unwrap_or_default())
                }
            })
            .sum(),
    };
    div_ceil4(chars)
}

fn blocks_chars(blocks: &[UserContent]) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            UserContent::Text(t) => utf16_len(&t.text),
            UserContent::Image(_) => ESTIMATED_IMAGE_CHARS,
        })
        .sum()
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

fn div_ceil4(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AssistantMessage, UserMessage};

    fn model(context_window: u64, max_tokens: u64) -> Model {
        Model {
            context_window,
            max_tokens,
            ..Default::default()
        }
    }

    #[test]
    fn high_budget_on_a_16k_model_leaves_1024_answer_tokens() {
        // thinking_anthropic golden: max_tokens 16384, budget_tokens 15360.
        let (max, budget) =
            adjust_max_tokens_for_thinking(Some(16384), 16384, ThinkingLevel::High, None);
        assert_eq!((max, budget), (16384, 15360));
        let (max, budget) = adjust_max_tokens_for_thinking(None, 64000, ThinkingLevel::Low, None);
        assert_eq!((max, budget), (64000, 2048));
        let (max, budget) =
            adjust_max_tokens_for_thinking(Some(4000), 64000, ThinkingLevel::Max, None);
        assert_eq!((max, budget), (20384, 16384));
    }

    #[test]
    fn clamp_uses_chars_over_four_without_usage() {
        let ctx = Context {
            system_prompt: Some("x".repeat(400)),
            messages: vec![UserMessage::text("y".repeat(41)).into()],
            tools: None,
        };
        // 100 + ceil(41/4)=11 → 111 tokens.
        assert_eq!(estimate_context_tokens(&ctx), 111);
        assert_eq!(
            clamp_max_tokens_to_context(&model(5000, 16384), &ctx, 16384),
            5000 - 111 - 4096
        );
        assert_eq!(clamp_max_tokens_to_context(&model(100, 10), &ctx, 10), 1);
        assert_eq!(clamp_max_tokens_to_context(&model(0, 10), &ctx, 0), 1);
    }

    #[test]
    fn estimate_prefers_the_last_assistant_usage() {
        let mut a = AssistantMessage::empty("x", "p", "m");
        a.usage.total_tokens = 1000;
        a.stop_reason = StopReason::Stop;
        a.timestamp = 10;
        let mut u = UserMessage::text("abcd");
        u.timestamp = 11;
        let ctx = Context {
            system_prompt: Some("ignored".repeat(100)),
            messages: vec![a.into(), u.into()],
            tools: None,
        };
        assert_eq!(estimate_context_tokens(&ctx), 1001);
    }
}
