//! The Emacs kill ring behind Ctrl+K/U/W, Alt+D (kill) and Ctrl+Y / Alt+Y (yank, yank-pop),
//! as pi-tui's `KillRing` (`dist/kill-ring.js`), bounded.

use std::collections::VecDeque;

/// How many kills are kept; the oldest goes first (pi keeps them all).
pub const KILL_RING_CAPACITY: usize = 64;

/// The ring; the newest entry is at the back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KillRing {
    ring: VecDeque<String>,
}

impl KillRing {
    /// Adds killed text. With `accumulate` (consecutive kills) it joins the newest entry,
    /// before it when `prepend` (a backward kill), after it otherwise. Empty text is ignored.
    pub fn push(&mut self, text: &str, prepend: bool, accumulate: bool) {
        if text.is_empty() {
            return;
        }
        if accumulate && let Some(last) = self.ring.back_mut() {
            if prepend {
                last.insert_str(0, text);
            } else {
                last.push_str(text);
            }
            return;
        }
        if self.ring.len() == KILL_RING_CAPACITY {
            self.ring.pop_front();
        }
        self.ring.push_back(text.to_owned());
    }

    /// The newest entry.
    pub fn peek(&self) -> Option<&str> {
        self.ring.back().map(String::as_str)
    }

    /// Moves the newest entry to the front, so the one before it is newest (yank-pop).
    pub fn rotate(&mut self) {
        if self.ring.len() > 1
            && let Some(last) = self.ring.pop_back()
        {
            self.ring.push_front(last);
        }
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulate_rotate_and_bound() {
        let mut r = KillRing::default();
        r.push("world", false, false);
        r.push(" again", false, true);
        r.push("hello ", true, true);
        assert_eq!(r.peek(), Some("hello world again"));
        r.push("other", false, false);
        r.rotate();
        assert_eq!(r.peek(), Some("hello world again"));
        r.push("", false, false);
        assert_eq!(r.len(), 2);
        for i in 0..200 {
            r.push(&i.to_string(), false, false);
        }
        assert_eq!(r.len(), KILL_RING_CAPACITY);
        assert_eq!(r.peek(), Some("199"));
    }
}
