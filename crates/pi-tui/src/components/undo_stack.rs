//! Snapshots for undo (Ctrl+-), as pi-tui's `UndoStack` (`dist/undo-stack.js`), bounded.

use std::collections::VecDeque;

/// How many undo steps are kept; the oldest goes first (pi keeps them all, which makes a long
/// session with large pastes hold every version of the text).
pub const UNDO_CAPACITY: usize = 200;

/// A stack of snapshots.
#[derive(Clone, Debug)]
pub struct UndoStack<T> {
    stack: VecDeque<T>,
}

impl<T> Default for UndoStack<T> {
    fn default() -> Self {
        Self {
            stack: VecDeque::new(),
        }
    }
}

impl<T> UndoStack<T> {
    /// Saves a snapshot.
    pub fn push(&mut self, state: T) {
        if self.stack.len() == UNDO_CAPACITY {
            self.stack.pop_front();
        }
        self.stack.push_back(state);
    }

    /// Takes the newest snapshot.
    pub fn pop(&mut self) -> Option<T> {
        self.stack.pop_back()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.stack.clear();
    }

    /// How many snapshots there are.
    pub fn len(&self) -> usize {
        self.stack.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_lifo() {
        let mut s = UndoStack::default();
        for i in 0..UNDO_CAPACITY + 5 {
            s.push(i);
        }
        assert_eq!(s.len(), UNDO_CAPACITY);
        assert_eq!(s.pop(), Some(UNDO_CAPACITY + 4));
        s.clear();
        assert!(s.is_empty());
        assert_eq!(s.pop(), None);
    }
}
