//! The display side of the steering and follow-up queues.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession._steeringMessages` / `_followUpMessages`:
//! the texts of queued user messages, kept for UIs and
//! `queue_update`. The messages themselves sit in the agent's queues; when one is delivered
//! (its user `message_start`), the first equal text is removed from the steering list, else
//! from the follow-up list.

use pi_ai::{UserContent, UserMessageContent};

/// The texts of queued steering and follow-up messages, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DisplayQueues {
    steering: Vec<String>,
    follow_up: Vec<String>,
}

impl DisplayQueues {
    /// Records a queued steering text.
    pub fn push_steering(&mut self, text: String) {
        self.steering.push(text);
    }

    /// Records a queued follow-up text.
    pub fn push_follow_up(&mut self, text: String) {
        self.follow_up.push(text);
    }

    /// A delivered user message with `text`: removes the first equal steering entry, else the
    /// first equal follow-up entry. Returns whether something was removed (an empty text
    /// never matches).
    pub fn remove_delivered(&mut self, text: &str) -> bool {
        if text.is_empty() {
            return false;
        }
        for list in [&mut self.steering, &mut self.follow_up] {
            if let Some(i) = list.iter().position(|t| t == text) {
                list.remove(i);
                return true;
            }
        }
        false
    }

    /// Empties both lists, returning `(steering, follow_up)`.
    pub fn clear(&mut self) -> (Vec<String>, Vec<String>) {
        (
            std::mem::take(&mut self.steering),
            std::mem::take(&mut self.follow_up),
        )
    }

    /// Copies of `(steering, follow_up)`.
    pub fn snapshot(&self) -> (Vec<String>, Vec<String>) {
        (self.steering.clone(), self.follow_up.clone())
    }

    /// `pendingMessageCount`: both lists.
    pub fn len(&self) -> usize {
        self.steering.len() + self.follow_up.len()
    }

    /// Whether both lists are empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// pi-ai `contentText(content, "")`: a bare string as is, else the text blocks joined with
/// nothing between them.
pub fn content_text(content: &UserMessageContent) -> String {
    match content {
        UserMessageContent::Text(s) => s.clone(),
        UserMessageContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                UserContent::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivered_text_leaves_steering_before_follow_up() {
        let mut q = DisplayQueues::default();
        q.push_follow_up("a".into());
        q.push_steering("a".into());
        q.push_steering("b".into());
        assert_eq!(q.len(), 3);
        assert!(q.remove_delivered("a"));
        assert_eq!(q.snapshot(), (vec!["b".into()], vec!["a".into()]));
        assert!(q.remove_delivered("a"));
        assert_eq!(q.snapshot(), (vec!["b".into()], vec![]));
        assert!(!q.remove_delivered("a"));
        assert!(!q.remove_delivered(""));
        assert_eq!(q.clear(), (vec!["b".into()], vec![]));
        assert!(q.is_empty());
    }

    #[test]
    fn content_text_joins_text_blocks_without_separator() {
        let c = UserMessageContent::Blocks(vec![UserContent::text("a"), UserContent::text("b")]);
        assert_eq!(content_text(&c), "ab");
        assert_eq!(content_text(&UserMessageContent::Text("x".into())), "x");
    }
}
