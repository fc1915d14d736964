//! Print (text) mode: after the prompts, the final assistant message's text.
//!
//! Mirrors pi-coding-agent 0.85.0 `modes/print-mode.js` with `mode: "text"`: when the last
//! agent message is an assistant message, a `stopReason` of `error` / `aborted` writes its
//! `errorMessage` (or `Request error` / `Request aborted`) to stderr with exit status 1;
//! otherwise each text block is written to stdout followed by `\n`. Any other last message
//! writes nothing (exit 0).

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantContent, StopReason};

/// What text mode writes once the prompts are done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TextOutcome {
    /// Lines for stdout (each followed by `\n`), exit 0.
    Text(Vec<String>),
    /// A line for stderr, exit 1.
    Failed(String),
}

/// The outcome for the session's final messages.
pub(crate) fn text_outcome(messages: &[AgentMessage]) -> TextOutcome {
    let Some(AgentMessage::Assistant(a)) = messages.last() else {
        return TextOutcome::Text(Vec::new());
    };
    let failed = match a.stop_reason {
        StopReason::Error => Some("error"),
        StopReason::Aborted => Some("aborted"),
        _ => None,
    };
    if let Some(reason) = failed {
        return TextOutcome::Failed(
            a.error_message
                .clone()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| format!("Request {reason}")),
        );
    }
    TextOutcome::Text(
        a.content
            .iter()
            .filter_map(|c| match c {
                AssistantContent::Text(t) => Some(t.text.clone()),
                _ => None,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::{AssistantMessage, TextContent};

    fn assistant(reason: StopReason, error: Option<&str>, texts: &[&str]) -> Vec<AgentMessage> {
        let mut m = AssistantMessage::empty("anthropic-messages", "p", "m");
        m.stop_reason = reason;
        m.error_message = error.map(str::to_owned);
        m.content = texts
            .iter()
            .map(|t| AssistantContent::Text(TextContent::new(*t)))
            .collect();
        vec![AgentMessage::from(m)]
    }

    #[test]
    fn text_blocks_become_lines() {
        assert_eq!(
            text_outcome(&assistant(StopReason::Stop, None, &["a", "b\nc"])),
            TextOutcome::Text(vec!["a".into(), "b\nc".into()])
        );
    }

    #[test]
    fn failures_use_the_error_message_or_pis_fallback() {
        assert_eq!(
            text_outcome(&assistant(StopReason::Error, Some("boom"), &[])),
            TextOutcome::Failed("boom".into())
        );
        assert_eq!(
            text_outcome(&assistant(StopReason::Error, None, &[])),
            TextOutcome::Failed("Request error".into())
        );
        assert_eq!(
            text_outcome(&assistant(StopReason::Aborted, None, &["partial"])),
            TextOutcome::Failed("Request aborted".into())
        );
    }

    #[test]
    fn no_assistant_last_writes_nothing() {
        assert_eq!(text_outcome(&[]), TextOutcome::Text(vec![]));
    }
}
