//! The coding agent's custom message kinds and their conversion to LLM messages.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/messages`: `bashExecution`, `custom`,
//! `branchSummary` and `compactionSummary` messages live in the transcript as
//! [`AgentMessage::Custom`] objects and become user messages for the provider.

use pi_agent_core::AgentMessage;
use pi_ai::{Message, Timestamp, UserContent, UserMessage, UserMessageContent};
use serde_json::{Map, Value, json};

/// Prefix of a compaction summary as the model sees it.
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// Suffix of a compaction summary.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// Prefix of a branch summary as the model sees it.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// Suffix of a branch summary (no newline before the closing tag).
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

fn custom(v: Value) -> AgentMessage {
    match v {
        Value::Object(m) => AgentMessage::custom(m),
        _ => AgentMessage::custom(Map::new()),
    }
}

/// `{role:"compactionSummary", summary, tokensBefore, timestamp}`.
pub fn compaction_summary_message(
    summary: &str,
    tokens_before: u64,
    timestamp: Timestamp,
) -> AgentMessage {
    custom(
        json!({"role": "compactionSummary", "summary": summary, "tokensBefore": tokens_before, "timestamp": timestamp}),
    )
}

/// `{role:"branchSummary", summary, fromId, timestamp}`.
pub fn branch_summary_message(summary: &str, from_id: &str, timestamp: Timestamp) -> AgentMessage {
    custom(
        json!({"role": "branchSummary", "summary": summary, "fromId": from_id, "timestamp": timestamp}),
    )
}

/// `{role:"custom", customType, content, display, details?, timestamp}`.
pub fn custom_message(
    custom_type: &str,
    content: Value,
    display: bool,
    details: Option<Value>,
    timestamp: Timestamp,
) -> AgentMessage {
    let mut m = Map::new();
    m.insert("role".into(), "custom".into());
    m.insert("customType".into(), custom_type.into());
    m.insert("content".into(), content);
    m.insert("display".into(), display.into());
    if let Some(d) = details {
        m.insert("details".into(), d);
    }
    m.insert("timestamp".into(), timestamp.into());
    AgentMessage::custom(m)
}

/// The user text of a `bashExecution` message: ``Ran `<cmd>`\n`` then the fenced output (or
/// `(no output)`), then `\n\n(command cancelled)` or `\n\nCommand exited with code N`, then
/// `\n\n[Output truncated. Full output: <path>]` when truncated with a saved file.
pub fn bash_execution_to_text(m: &Map<String, Value>) -> String {
    let s = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("");
    let b = |k: &str| m.get(k).and_then(Value::as_bool).unwrap_or(false);
    let mut text = format!("Ran `{}`\n", s("command"));
    let output = s("output");
    if output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str("```\n");
        text.push_str(output);
        text.push_str("\n```");
    }
    if b("cancelled") {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = m.get("exitCode").and_then(Value::as_i64)
        && code != 0
    {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if b("truncated")
        && let Some(path) = m.get("fullOutputPath").and_then(Value::as_str)
        && !path.is_empty()
    {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

fn user_text(text: String, timestamp: Timestamp) -> Message {
    Message::User(UserMessage {
        content: UserMessageContent::Blocks(vec![UserContent::text(text)]),
        timestamp,
    })
}

/// Converts one transcript message to what the provider sees; `None` drops it.
pub fn to_llm(message: &AgentMessage) -> Option<Message> {
    let Some(m) = message.as_custom() else {
        return message.to_llm();
    };
    let ts = m.get("timestamp").and_then(Value::as_i64).unwrap_or(0);
    let s = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("");
    match s("role") {
        "bashExecution" => {
            if m.get("excludeFromContext").and_then(Value::as_bool) == Some(true) {
                return None;
            }
            Some(user_text(bash_execution_to_text(m), ts))
        }
        "custom" => {
            let content = match m.get("content") {
                Some(Value::String(s)) => vec![UserContent::text(s.clone())],
                Some(v @ Value::Array(_)) => serde_json::from_value(v.clone()).unwrap_or_default(),
                _ => Vec::new(),
            };
            Some(Message::User(UserMessage {
                content: UserMessageContent::Blocks(content),
                timestamp: ts,
            }))
        }
        "branchSummary" => Some(user_text(
            format!(
                "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                s("summary")
            ),
            ts,
        )),
        "compactionSummary" => Some(user_text(
            format!(
                "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                s("summary")
            ),
            ts,
        )),
        _ => None,
    }
}

/// Mirrors `convertToLlm`: maps every transcript message, dropping those without an LLM form.
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages.iter().filter_map(to_llm).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(m: &Message) -> String {
        match m {
            Message::User(u) => u.content.to_blocks()[0].as_text().unwrap_or("").to_owned(),
            _ => panic!("user expected"),
        }
    }

    #[test]
    fn bash_execution_texts() {
        let m = json!({"role":"bashExecution","command":"ls","output":"a\nb","exitCode":2,"cancelled":false,"truncated":true,"fullOutputPath":"/tmp/x","timestamp":5});
        let AgentMessage::Custom(map) = custom(m) else {
            unreachable!()
        };
        assert_eq!(
            bash_execution_to_text(&map),
            "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/x]"
        );
        let m = json!({"role":"bashExecution","command":"x","output":"","exitCode":0,"cancelled":true,"truncated":false,"timestamp":5});
        let AgentMessage::Custom(map) = custom(m) else {
            unreachable!()
        };
        assert_eq!(
            bash_execution_to_text(&map),
            "Ran `x`\n(no output)\n\n(command cancelled)"
        );
    }

    #[test]
    fn excluded_bash_is_dropped_and_summaries_are_wrapped() {
        let excluded = custom(
            json!({"role":"bashExecution","command":"x","output":"","cancelled":false,"truncated":false,"excludeFromContext":true,"timestamp":1}),
        );
        assert!(to_llm(&excluded).is_none());
        let c = to_llm(&compaction_summary_message("S", 10, 7)).unwrap();
        assert_eq!(
            text_of(&c),
            "The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n</summary>"
        );
        assert_eq!(c.timestamp(), 7);
        let b = to_llm(&branch_summary_message("B", "root", 3)).unwrap();
        assert_eq!(
            text_of(&b),
            "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nB</summary>"
        );
        let cm = to_llm(&custom_message("note", json!("hi"), true, None, 4)).unwrap();
        assert_eq!(text_of(&cm), "hi");
    }
}
