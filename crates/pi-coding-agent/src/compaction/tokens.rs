//! Token accounting for compaction decisions.
//!
//! Mirrors pi-coding-agent 0.85.0 `compaction` token helpers: `contextTokens`,
//! `estimateTokens` (characters / 4, rounded up; images count 4 800 characters),
//! `estimateContextTokens` and `shouldCompact`. Characters are UTF-16 code units, as
//! JavaScript's `length` counts them.

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantContent, StopReason, Usage, UserContent};
use serde_json::Value;

/// Characters an image counts for.
pub const IMAGE_CHARS: usize = 4800;

pub use crate::config::settings::CompactionSettings;

fn js_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// `contextTokens(usage)`: `totalTokens`, or the component sum when it is 0 (summed in
/// doubles as pi does; as a `u64` by [`pi_ai::count_to_u64`], saturating).
pub fn context_tokens(usage: &Usage) -> u64 {
    pi_ai::providers::registry::context_tokens(usage)
}

/// `shouldCompact(tokens, window)`: enabled and `tokens > window − reserveTokens` (strict).
pub fn should_compact(tokens: u64, context_window: u64, settings: &CompactionSettings) -> bool {
    settings.enabled && (tokens as i128) > context_window as i128 - settings.reserve_tokens as i128
}

fn user_blocks_chars(blocks: &[UserContent]) -> usize {
    blocks
        .iter()
        .map(|b| match b {
            UserContent::Text(t) => js_len(&t.text),
            UserContent::Image(_) => IMAGE_CHARS,
        })
        .sum()
}

fn value_content_chars(v: Option<&Value>) -> usize {
    match v {
        Some(Value::String(s)) => js_len(s),
        Some(Value::Array(items)) => items
            .iter()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => b.get("text").and_then(Value::as_str).map_or(0, js_len),
                Some("image") => IMAGE_CHARS,
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

/// `estimateTokens(message)`: `ceil(chars / 4)` of what the model sees of it.
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    let chars = match message {
        AgentMessage::User(u) => user_blocks_chars(&u.content.to_blocks()),
        AgentMessage::ToolResult(r) => user_blocks_chars(&r.content),
        AgentMessage::Assistant(a) => a
            .content
            .iter()
            .map(|c| match c {
                AssistantContent::Text(t) => js_len(&t.text),
                AssistantContent::Thinking(t) => js_len(&t.thinking),
                AssistantContent::ToolCall(tc) => {
                    js_len(&tc.name)
                        + js_len(&serde_json::to_string(&tc.arguments).unwrap_or_default())
                }
            })
            .sum(),
        AgentMessage::Custom(m) => match m.get("role").and_then(Value::as_str) {
            Some("custom") => value_content_chars(m.get("content")),
            Some("bashExecution") => {
                m.get("command").and_then(Value::as_str).map_or(0, js_len)
                    + m.get("output").and_then(Value::as_str).map_or(0, js_len)
            }
            Some("branchSummary" | "compactionSummary") => {
                m.get("summary").and_then(Value::as_str).map_or(0, js_len)
            }
            _ => 0,
        },
    };
    chars.div_ceil(4) as u64
}

/// The result of [`estimate_context_tokens`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextEstimate {
    /// Estimated context tokens.
    pub tokens: u64,
    /// Index of the assistant message whose usage anchors the estimate (`None`: pure estimate).
    pub last_usage_index: Option<usize>,
}

/// `estimateContextTokens(messages)`: the last assistant that is neither aborted nor failed and
/// has positive usage contributes its reported usage, plus the estimates of the messages after
/// it; without one, the sum of all estimates.
pub fn estimate_context_tokens(messages: &[AgentMessage]) -> ContextEstimate {
    let anchor = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| match m {
            AgentMessage::Assistant(a)
                if !matches!(a.stop_reason, StopReason::Aborted | StopReason::Error)
                    && context_tokens(&a.usage) > 0 =>
            {
                Some((i, context_tokens(&a.usage)))
            }
            _ => None,
        });
    match anchor {
        Some((i, used)) => ContextEstimate {
            // `used` comes from the provider and may be anything up to u64::MAX.
            tokens: used.saturating_add(messages[i + 1..].iter().map(estimate_tokens).sum::<u64>()),
            last_usage_index: Some(i),
        },
        None => ContextEstimate {
            tokens: messages.iter().map(estimate_tokens).sum(),
            last_usage_index: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::{AssistantMessage, ToolCall, UserMessage};

    #[test]
    fn estimates_round_up_per_message() {
        let u = AgentMessage::from(UserMessage::text("abcde"));
        assert_eq!(estimate_tokens(&u), 2);
        let mut a = AssistantMessage::empty("x", "p", "m");
        let mut args = serde_json::Map::new();
        args.insert("path".into(), "a".into());
        a.content.push(AssistantContent::ToolCall(ToolCall {
            id: "1".into(),
            name: "read".into(),
            arguments: args,
            ..Default::default()
        }));
        // "read" (4) + {"path":"a"} (12) = 16 chars → 4 tokens.
        assert_eq!(estimate_tokens(&AgentMessage::from(a)), 4);
        // UTF-16 units: one astral character counts 2.
        let e = AgentMessage::from(UserMessage::text("😀😀"));
        assert_eq!(estimate_tokens(&e), 1);
    }

    #[test]
    fn context_estimate_anchors_on_the_last_usable_usage() {
        let mut ok = AssistantMessage::empty("x", "p", "m");
        ok.stop_reason = StopReason::Stop;
        ok.usage.total_tokens = 1000.0;
        let mut failed = AssistantMessage::empty("x", "p", "m");
        failed.stop_reason = StopReason::Error;
        failed.usage.total_tokens = 5000.0;
        let msgs = vec![
            AgentMessage::from(ok),
            AgentMessage::from(UserMessage::text("12345678")),
            AgentMessage::from(failed),
        ];
        let e = estimate_context_tokens(&msgs);
        assert_eq!(e.last_usage_index, Some(0));
        assert_eq!(e.tokens, 1000 + 2);
    }

    #[test]
    fn should_compact_is_strict() {
        let s = CompactionSettings::default();
        assert!(!should_compact(128000 - 16384, 128000, &s));
        assert!(should_compact(128000 - 16383, 128000, &s));
        let off = CompactionSettings {
            enabled: false,
            ..s
        };
        assert!(!should_compact(1_000_000, 128000, &off));
    }
}
