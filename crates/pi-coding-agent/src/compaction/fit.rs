//! Making a summarization request fit the summarizing model's context window.
//!
//! pi-rs's own behaviour, not pi 0.85.0's: pi sends the whole serialized conversation, so a
//! session whose history outgrew the window (a resumed session, a model switch to a smaller
//! window, one huge tool result) fails to compact with the very overflow compaction was
//! meant to cure. Here the request is estimated as pi estimates messages (UTF-16
//! characters / 4, rounded up) over everything the request carries — system prompt, the
//! serialized conversation, its `<conversation>` wrapper, a previous summary and the
//! instructions — and must stay within `contextWindow − maxTokens` of the summary call.
//!
//! When it does not fit, deterministically:
//! 1. tool results longer than [`FIT_TOOL_RESULT_MAX_CHARS`] are cut to that length (with
//!    the usual `[... N more characters truncated]` marker), oldest first, one at a time,
//!    until the request fits;
//! 2. if every large tool result is cut and it still does not fit, the oldest messages are
//!    dropped one at a time (a tool result left at the front without its call goes with
//!    it), and [`omitted_marker`] opens the conversation; the newest messages stay.
//!
//! A request whose fixed part alone (system prompt, previous summary, instructions) exceeds
//! the budget is sent with every message dropped; the provider's answer decides.

use pi_ai::Message;
use serde_json::{Value, json};

use super::serialize::{serialize_message, tool_result_part, tool_result_text};

/// Length (UTF-16 code units) a large tool result is cut to when the request must shrink.
pub const FIT_TOOL_RESULT_MAX_CHARS: usize = 200;

/// What a fitted request left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Omitted {
    /// LLM messages (after `convert_to_llm`) dropped from the front of the conversation.
    pub messages: u64,
    /// Tool results cut to [`FIT_TOOL_RESULT_MAX_CHARS`] among the messages sent.
    pub truncated_tool_results: u64,
}

impl Omitted {
    /// Nothing was left out.
    pub fn is_empty(&self) -> bool {
        self.messages == 0 && self.truncated_tool_results == 0
    }

    /// The sum of two requests' omissions (a split turn makes two requests).
    pub fn plus(self, other: Omitted) -> Omitted {
        Omitted {
            messages: self.messages + other.messages,
            truncated_tool_results: self.truncated_tool_results + other.truncated_tool_results,
        }
    }

    /// `{messages, truncatedToolResults}`, the compaction entry's `details.omitted`.
    pub fn to_json(&self) -> Value {
        json!({"messages": self.messages, "truncatedToolResults": self.truncated_tool_results})
    }
}

/// UTF-16 code units, as JavaScript's `length` counts them.
pub fn js_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// `ceil(chars / 4)`: the estimate pi uses for messages, applied to request text.
pub fn estimate_text_tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// Input tokens a summary call may use: `context_window − max_tokens` (0 when the output
/// cap takes the whole window); `None` when the window is unknown (0), i.e. no limit.
pub fn input_budget(context_window: u64, max_tokens: u64) -> Option<u64> {
    (context_window > 0).then(|| context_window.saturating_sub(max_tokens))
}

/// The part that opens a conversation whose `dropped` oldest messages were left out.
pub fn omitted_marker(dropped: u64) -> String {
    format!("[... {dropped} earlier messages omitted to fit the summarization request]")
}

/// A serialized conversation that fits, and what was left out of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FittedConversation {
    /// The conversation text (what `serialize_conversation` gives when nothing was omitted).
    pub text: String,
    /// What was left out.
    pub omitted: Omitted,
}

struct Item<'a> {
    message: &'a Message,
    parts: Vec<String>,
    truncated: bool,
}

fn chars_of(parts: &[String]) -> usize {
    parts.iter().map(|p| js_len(p)).sum()
}

/// Running size of the kept items: parts and their characters.
struct Tally {
    parts: usize,
    chars: usize,
}

impl Tally {
    /// Characters of the conversation text: kept parts, the marker, `\n\n` between parts.
    fn conversation_chars(&self, dropped: u64) -> usize {
        let (parts, chars) = if dropped > 0 {
            (
                self.parts + 1,
                self.chars + js_len(&omitted_marker(dropped)),
            )
        } else {
            (self.parts, self.chars)
        };
        chars + 2 * parts.saturating_sub(1)
    }
}

/// Serializes `messages` so that `fixed_chars` (everything else in the request) plus the
/// conversation estimate to at most `budget` tokens (`None`: no limit), leaving out what it
/// must as the module describes.
pub fn fit_conversation(
    messages: &[Message],
    fixed_chars: usize,
    budget: Option<u64>,
) -> FittedConversation {
    let mut items: Vec<Item<'_>> = messages
        .iter()
        .map(|message| Item {
            message,
            parts: serialize_message(message),
            truncated: false,
        })
        .collect();
    let mut tally = Tally {
        parts: items.iter().map(|i| i.parts.len()).sum(),
        chars: items.iter().map(|i| chars_of(&i.parts)).sum(),
    };
    let fits = |tally: &Tally, dropped: u64| {
        budget.is_none_or(|b| {
            estimate_text_tokens(fixed_chars + tally.conversation_chars(dropped)) <= b
        })
    };
    let mut omitted = Omitted::default();
    if !fits(&tally, 0) {
        for item in &mut items {
            let Some(text) = tool_result_text(item.message) else {
                continue;
            };
            if js_len(&text) <= FIT_TOOL_RESULT_MAX_CHARS {
                continue;
            }
            let part = tool_result_part(&text, FIT_TOOL_RESULT_MAX_CHARS);
            tally.chars = tally.chars - chars_of(&item.parts) + js_len(&part);
            item.parts = vec![part];
            item.truncated = true;
            omitted.truncated_tool_results += 1;
            if fits(&tally, 0) {
                break;
            }
        }
    }
    let mut start = 0;
    while start < items.len() && !fits(&tally, omitted.messages) {
        loop {
            let item = &items[start];
            tally.parts -= item.parts.len();
            tally.chars -= chars_of(&item.parts);
            if item.truncated {
                omitted.truncated_tool_results -= 1;
            }
            omitted.messages += 1;
            start += 1;
            if !items
                .get(start)
                .is_some_and(|i| matches!(i.message, Message::ToolResult(_)))
            {
                break;
            }
        }
    }
    let mut parts: Vec<String> = Vec::with_capacity(tally.parts + 1);
    if omitted.messages > 0 {
        parts.push(omitted_marker(omitted.messages));
    }
    for item in items.drain(start..) {
        parts.extend(item.parts);
    }
    FittedConversation {
        text: parts.join("\n\n"),
        omitted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::serialize::serialize_conversation;
    use pi_ai::{AssistantContent, AssistantMessage, ToolResultMessage, UserContent, UserMessage};

    fn user(t: &str) -> Message {
        Message::User(UserMessage::text(t))
    }

    fn assistant(t: &str) -> Message {
        let mut a = AssistantMessage::empty("x", "p", "m");
        a.content.push(AssistantContent::text(t));
        Message::Assistant(a)
    }

    fn tool_result(t: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            content: vec![UserContent::text(t)],
            ..Default::default()
        })
    }

    /// The budget (tokens) at which `chars` characters exactly fit.
    fn exact_budget(chars: usize) -> u64 {
        assert_eq!(chars % 4, 0, "pick sizes that are a multiple of 4");
        (chars / 4) as u64
    }

    #[test]
    fn the_budget_is_the_window_minus_the_output_cap() {
        assert_eq!(input_budget(128_000, 13_107), Some(114_893));
        assert_eq!(input_budget(1000, 2000), Some(0));
        assert_eq!(input_budget(0, 2000), None);
        assert_eq!(estimate_text_tokens(8), 2);
        assert_eq!(estimate_text_tokens(9), 3);
        assert_eq!(js_len("😀"), 2);
    }

    #[test]
    fn exactly_fitting_sends_everything() {
        let msgs = [
            user("abcd"),
            assistant("efgh"),
            tool_result(&"t".repeat(600)),
        ];
        let full = serialize_conversation(&msgs);
        let fixed = 100 - full.len() % 4; // total = full + fixed, a multiple of 4
        let budget = exact_budget(full.len() + fixed);
        let fitted = fit_conversation(&msgs, fixed, Some(budget));
        assert_eq!(fitted.text, full);
        assert!(fitted.omitted.is_empty());
        assert_eq!(fit_conversation(&msgs, fixed, None).text, full);
    }

    #[test]
    fn one_char_over_truncates_the_tool_result() {
        let msgs = [
            user("abcd"),
            assistant("efgh"),
            tool_result(&"t".repeat(600)),
        ];
        let full = serialize_conversation(&msgs);
        let fixed = 100 - full.len() % 4;
        let budget = exact_budget(full.len() + fixed);
        let fitted = fit_conversation(&msgs, fixed + 1, Some(budget));
        assert_eq!(
            fitted.omitted,
            Omitted {
                messages: 0,
                truncated_tool_results: 1
            }
        );
        let expected_tail = format!(
            "[Tool result]: {}\n\n[... 400 more characters truncated]",
            "t".repeat(200)
        );
        assert_eq!(
            fitted.text,
            format!("[User]: abcd\n\n[Assistant]: efgh\n\n{expected_tail}")
        );
    }

    #[test]
    fn one_char_over_without_a_large_tool_result_drops_the_oldest_message() {
        let msgs = [user(&"u".repeat(400)), assistant("efgh")];
        let full = serialize_conversation(&msgs);
        let fixed = 100 - full.len() % 4;
        let budget = exact_budget(full.len() + fixed);
        assert!(
            fit_conversation(&msgs, fixed, Some(budget))
                .omitted
                .is_empty()
        );
        let fitted = fit_conversation(&msgs, fixed + 1, Some(budget));
        assert_eq!(
            fitted.omitted,
            Omitted {
                messages: 1,
                truncated_tool_results: 0
            }
        );
        assert_eq!(
            fitted.text,
            "[... 1 earlier messages omitted to fit the summarization request]\n\n[Assistant]: efgh"
        );
    }

    #[test]
    fn only_tool_results_are_truncated_oldest_first_while_that_suffices() {
        let big = "r".repeat(1000);
        let msgs = [
            user("go"),
            tool_result(&big),
            assistant("mid"),
            tool_result(&big),
        ];
        let full = serialize_conversation(&msgs);
        // Cutting one result (1000 → 200 + marker) is enough; the second stays whole.
        let fitted = fit_conversation(&msgs, 0, Some(estimate_text_tokens(full.len() - 500)));
        assert_eq!(
            fitted.omitted,
            Omitted {
                messages: 0,
                truncated_tool_results: 1
            }
        );
        assert!(fitted.text.starts_with("[User]: go\n\n[Tool result]: rrr"));
        assert!(fitted.text.ends_with(&format!("[Tool result]: {big}")));
        assert!(fitted.text.contains("[... 800 more characters truncated]"));
        // A result of exactly the cut length is not "large": it is never cut, and a request
        // that only cutting it would shrink drops messages instead.
        let small = [
            tool_result(&"s".repeat(FIT_TOOL_RESULT_MAX_CHARS)),
            user("next"),
        ];
        let s = serialize_conversation(&small);
        let fitted = fit_conversation(&small, 0, Some(estimate_text_tokens(s.len() - 4)));
        assert_eq!(fitted.omitted.truncated_tool_results, 0);
        assert_eq!(fitted.omitted.messages, 1);
    }

    #[test]
    fn messages_are_dropped_oldest_first_with_their_tool_results() {
        let msgs = [
            user(&"a".repeat(1000)),
            assistant("calls"),
            tool_result("small result"),
            user("latest question"),
            assistant("latest answer"),
        ];
        let fitted = fit_conversation(&msgs, 0, Some(40));
        // The user goes, then the assistant; its tool result does not open the text alone.
        assert_eq!(
            fitted.omitted,
            Omitted {
                messages: 3,
                truncated_tool_results: 0
            }
        );
        assert_eq!(
            fitted.text,
            "[... 3 earlier messages omitted to fit the summarization request]\n\n[User]: latest question\n\n[Assistant]: latest answer"
        );
        assert!(estimate_text_tokens(js_len(&fitted.text)) <= 40);
    }

    #[test]
    fn both_truncation_and_dropping() {
        let big = "b".repeat(3000);
        let msgs = [
            user(&"q".repeat(2000)),
            tool_result(&big),
            assistant("a"),
            tool_result(&big),
        ];
        let fitted = fit_conversation(&msgs, 0, Some(150));
        // Both results are cut; still too long, so the user and the (cut) result after it
        // go; the newest result stays cut.
        assert_eq!(
            fitted.omitted,
            Omitted {
                messages: 2,
                truncated_tool_results: 1
            }
        );
        assert!(fitted.text.starts_with(
            "[... 2 earlier messages omitted to fit the summarization request]\n\n[Assistant]: a\n\n[Tool result]: bbb"
        ));
        assert!(
            fitted
                .text
                .ends_with("[... 2800 more characters truncated]")
        );
        assert!(estimate_text_tokens(js_len(&fitted.text)) <= 150);
    }

    #[test]
    fn a_fixed_part_over_budget_drops_every_message() {
        let msgs = [user("one"), assistant("two")];
        let fitted = fit_conversation(&msgs, 10_000, Some(100));
        assert_eq!(fitted.omitted.messages, 2);
        assert_eq!(
            fitted.text,
            "[... 2 earlier messages omitted to fit the summarization request]"
        );
        let none = fit_conversation(&[], 10, Some(100));
        assert_eq!(none.text, "");
        assert!(none.omitted.is_empty());
    }

    #[test]
    fn omitted_json_uses_pi_names() {
        let o = Omitted {
            messages: 2,
            truncated_tool_results: 3,
        };
        assert_eq!(
            o.to_json(),
            json!({"messages": 2, "truncatedToolResults": 3})
        );
        assert_eq!(
            o.plus(Omitted {
                messages: 1,
                truncated_tool_results: 0
            }),
            Omitted {
                messages: 3,
                truncated_tool_results: 3
            }
        );
    }
}
