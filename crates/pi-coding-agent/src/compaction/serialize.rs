//! The conversation as plain text for a summarization request.
//!
//! Mirrors pi-coding-agent 0.85.0 `serializeConversation`: parts joined by a blank
//! line — `[User]: …`, `[Assistant thinking]: …`, `[Assistant]: …`,
//! `[Assistant tool calls]: name(k=<JSON v>, …); …`, `[Tool result]: …` (cut to 2 000
//! characters plus `\n\n[... N more characters truncated]`). Serializing the text keeps the
//! model from treating it as a conversation to continue.

use pi_ai::{AssistantContent, Message, UserContent};

/// Longest tool result kept, in UTF-16 code units.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

fn text_of(blocks: &[UserContent]) -> String {
    blocks
        .iter()
        .filter_map(UserContent::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Truncates to `max` UTF-16 code units, appending `\n\n[... N more characters truncated]`.
pub fn truncate_for_summary(text: &str, max: usize) -> String {
    let units: Vec<u16> = text.encode_utf16().collect();
    if units.len() <= max {
        return text.to_owned();
    }
    let kept = String::from_utf16_lossy(&units[..max]);
    format!(
        "{kept}\n\n[... {} more characters truncated]",
        units.len() - max
    )
}

/// The text a tool result contributes (its text blocks joined by `\n`), before truncation.
pub fn tool_result_text(message: &Message) -> Option<String> {
    match message {
        Message::ToolResult(r) => Some(text_of(&r.content)),
        _ => None,
    }
}

/// `[Tool result]: <text cut to max UTF-16 code units>`.
pub fn tool_result_part(text: &str, max: usize) -> String {
    format!("[Tool result]: {}", truncate_for_summary(text, max))
}

/// The parts one message contributes to the serialized conversation, in order (none for an
/// empty user message or tool result).
pub fn serialize_message(message: &Message) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    match message {
        Message::User(u) => {
            let text = text_of(&u.content.to_blocks());
            if !text.is_empty() {
                parts.push(format!("[User]: {text}"));
            }
        }
        Message::Assistant(a) => {
            let mut thinking = Vec::new();
            let mut texts = Vec::new();
            let mut calls = Vec::new();
            let mut has_text = false;
            for c in &a.content {
                match c {
                    AssistantContent::Thinking(t) => thinking.push(t.thinking.as_str()),
                    AssistantContent::Text(t) => {
                        has_text = true;
                        texts.push(t.text.as_str());
                    }
                    AssistantContent::ToolCall(tc) => {
                        let args: Vec<String> = tc
                            .arguments
                            .iter()
                            .map(|(k, v)| {
                                format!("{k}={}", pi_ai::json::to_string(v).unwrap_or_default())
                            })
                            .collect();
                        calls.push(format!("{}({})", tc.name, args.join(", ")));
                    }
                }
            }
            if !thinking.is_empty() {
                parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
            }
            if has_text {
                parts.push(format!("[Assistant]: {}", texts.join("\n")));
            }
            if !calls.is_empty() {
                parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
            }
        }
        Message::ToolResult(r) => {
            let text = text_of(&r.content);
            if !text.is_empty() {
                parts.push(tool_result_part(&text, TOOL_RESULT_MAX_CHARS));
            }
        }
    }
    parts
}

/// Serializes LLM messages (after `convert_to_llm`) for summarization: every message's
/// [`serialize_message`] parts joined by a blank line.
pub fn serialize_conversation(messages: &[Message]) -> String {
    messages
        .iter()
        .flat_map(serialize_message)
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::{AssistantMessage, ToolCall, ToolResultMessage, UserMessage};

    #[test]
    fn matches_the_compaction_auto_golden() {
        let mut a = AssistantMessage::empty("x", "p", "m");
        a.content
            .push(AssistantContent::text("I'll read the file."));
        let mut args = serde_json::Map::new();
        args.insert("path".into(), "hello.txt".into());
        a.content.push(AssistantContent::ToolCall(ToolCall {
            id: "t".into(),
            name: "read".into(),
            arguments: args,
            ..Default::default()
        }));
        let msgs = vec![
            Message::User(UserMessage::text("What does hello.txt say?")),
            Message::Assistant(a),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "t".into(),
                tool_name: "read".into(),
                content: vec![UserContent::text(
                    "Hello from the scratch dir!\nSecond line.\n",
                )],
                ..Default::default()
            }),
        ];
        assert_eq!(
            serialize_conversation(&msgs),
            "[User]: What does hello.txt say?\n\n[Assistant]: I'll read the file.\n\n[Assistant tool calls]: read(path=\"hello.txt\")\n\n[Tool result]: Hello from the scratch dir!\nSecond line.\n"
        );
    }

    #[test]
    fn long_tool_results_are_cut() {
        let long = "x".repeat(2005);
        let msgs = vec![Message::ToolResult(ToolResultMessage {
            content: vec![UserContent::text(long)],
            ..Default::default()
        })];
        let s = serialize_conversation(&msgs);
        assert!(s.ends_with("x\n\n[... 5 more characters truncated]"));
        assert_eq!(
            s.len(),
            "[Tool result]: ".len() + 2000 + "\n\n[... 5 more characters truncated]".len()
        );
    }
}
