//! The steps a stream mapper repeats for every content block: add it to the shared partial
//! message with its `*_start` event, append a text or thinking delta, replace a tool call's
//! arguments, and build the `*_end` event — each writing the message and the event together,
//! so the event always shows what the message holds.

use serde_json::{Map, Value};

use crate::event::{AssistantMessageEvent as Ev, PartialMessage};
use crate::types::AssistantContent;

/// Adds `block` at the end of the content and pushes its `text_start`, `thinking_start` or
/// `toolcall_start`; returns its content index.
pub(crate) fn start_block(
    partial: &PartialMessage,
    block: AssistantContent,
    out: &mut Vec<Ev>,
) -> usize {
    let start: fn(usize, PartialMessage) -> Ev = match &block {
        AssistantContent::Text(_) => |content_index, partial| Ev::TextStart {
            content_index,
            partial,
        },
        AssistantContent::Thinking(_) => |content_index, partial| Ev::ThinkingStart {
            content_index,
            partial,
        },
        AssistantContent::ToolCall(_) => |content_index, partial| Ev::ToolcallStart {
            content_index,
            partial,
        },
    };
    let index = partial.update(|m| {
        m.content.push(block);
        m.content.len() - 1
    });
    out.push(start(index, partial.clone()));
    index
}

/// Appends `delta` to the text block at `index` and pushes its `text_delta`; `false` (and no
/// event) when that block is not text.
pub(crate) fn append_text(
    partial: &PartialMessage,
    index: usize,
    delta: &str,
    out: &mut Vec<Ev>,
) -> bool {
    append(partial, index, delta, out, false)
}

/// Appends `delta` to the thinking block at `index` and pushes its `thinking_delta`; `false`
/// (and no event) when that block is not thinking.
pub(crate) fn append_thinking(
    partial: &PartialMessage,
    index: usize,
    delta: &str,
    out: &mut Vec<Ev>,
) -> bool {
    append(partial, index, delta, out, true)
}

fn append(
    partial: &PartialMessage,
    index: usize,
    delta: &str,
    out: &mut Vec<Ev>,
    thinking: bool,
) -> bool {
    let appended = partial.update(|m| match (m.content.get_mut(index), thinking) {
        (Some(AssistantContent::Text(t)), false) => {
            t.text.push_str(delta);
            true
        }
        (Some(AssistantContent::Thinking(t)), true) => {
            t.thinking.push_str(delta);
            true
        }
        _ => false,
    });
    if appended {
        let (content_index, delta, partial) = (index, delta.to_owned(), partial.clone());
        out.push(if thinking {
            Ev::ThinkingDelta {
                content_index,
                delta,
                partial,
            }
        } else {
            Ev::TextDelta {
                content_index,
                delta,
                partial,
            }
        });
    }
    appended
}

/// Lets `update(delta, arguments)` rewrite the arguments of the tool call at `index` (a
/// scratch map when that block is not a tool call, so the caller's argument buffer still
/// sees `delta`) and pushes the `toolcall_delta` carrying `delta`.
pub(crate) fn tool_call_delta(
    partial: &PartialMessage,
    index: usize,
    delta: String,
    out: &mut Vec<Ev>,
    update: impl FnOnce(&str, &mut Map<String, Value>),
) {
    partial.update(|m| match m.content.get_mut(index) {
        Some(AssistantContent::ToolCall(tc)) => update(&delta, &mut tc.arguments),
        _ => update(&delta, &mut Map::new()),
    });
    out.push(Ev::ToolcallDelta {
        content_index: index,
        delta,
        partial: partial.clone(),
    });
}

/// The `text_end` or `thinking_end` of the block at `index` with its whole text; `None` for
/// a tool call or a missing block.
pub(crate) fn end_event(partial: &PartialMessage, index: usize) -> Option<Ev> {
    let handle = partial.clone();
    let message = partial.read();
    match message.content.get(index) {
        Some(AssistantContent::Text(t)) => Some(Ev::TextEnd {
            content_index: index,
            content: t.text.clone(),
            partial: handle,
        }),
        Some(AssistantContent::Thinking(t)) => Some(Ev::ThinkingEnd {
            content_index: index,
            content: t.thinking.clone(),
            partial: handle,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AssistantMessage, TextContent, ThinkingContent, ToolCall};

    #[test]
    fn deltas_go_only_to_a_block_of_their_kind() {
        let partial = PartialMessage::new(AssistantMessage::empty("a", "p", "m"));
        let mut out = Vec::new();
        let text = start_block(
            &partial,
            AssistantContent::Text(TextContent::default()),
            &mut out,
        );
        let thinking = start_block(
            &partial,
            AssistantContent::Thinking(ThinkingContent::default()),
            &mut out,
        );
        let call = start_block(
            &partial,
            AssistantContent::ToolCall(ToolCall::default()),
            &mut out,
        );
        assert!(append_text(&partial, text, "hi", &mut out));
        assert!(!append_text(&partial, thinking, "no", &mut out));
        assert!(append_thinking(&partial, thinking, "hm", &mut out));
        assert!(!append_thinking(&partial, 9, "no", &mut out));
        let mut seen = String::new();
        tool_call_delta(&partial, call, "{}".into(), &mut out, |d, a| {
            seen.push_str(d);
            a.insert("k".into(), Value::from(1));
        });
        // A delta for a block that is not a tool call still reaches the caller's buffer.
        tool_call_delta(&partial, text, "x".into(), &mut out, |d, _| {
            seen.push_str(d)
        });
        let kinds: Vec<_> = out.iter().map(Ev::kind).collect();
        assert_eq!(
            kinds,
            [
                "text_start",
                "thinking_start",
                "toolcall_start",
                "text_delta",
                "thinking_delta",
                "toolcall_delta",
                "toolcall_delta"
            ]
        );
        assert_eq!(seen, "{}x");
        let message = partial.snapshot();
        assert_eq!(message.text(), "hi");
        assert_eq!(
            message
                .tool_calls()
                .next()
                .map(|c| c.arguments.get("k").cloned()),
            Some(Some(Value::from(1)))
        );
        assert!(matches!(
            end_event(&partial, thinking),
            Some(Ev::ThinkingEnd { content, .. }) if content == "hm"
        ));
        assert!(end_event(&partial, call).is_none());
        assert!(end_event(&partial, 9).is_none());
    }
}
