//! A vertical stack of components (pi-tui's `Container`).

use crate::component::Component;
use crate::input::InputEvent;

/// Children drawn one below the other; input goes to the focused child.
#[derive(Default)]
pub struct Column {
    children: Vec<Box<dyn Component + Send>>,
    focus: Option<usize>,
}

impl Column {
    /// An empty column.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a child; returns its index.
    pub fn push(&mut self, c: Box<dyn Component + Send>) -> usize {
        self.children.push(c);
        self.children.len() - 1
    }

    /// Removes every child.
    pub fn clear(&mut self) {
        self.children.clear();
        self.focus = None;
    }

    /// The child at `i`.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut (dyn Component + Send + 'static)> {
        self.children.get_mut(i).map(|c| &mut **c)
    }

    /// Gives the focus to child `i` (or nobody).
    pub fn set_focus(&mut self, i: Option<usize>) {
        self.focus = i.filter(|&i| i < self.children.len());
    }

    /// Number of children.
    pub fn len(&self) -> usize {
        self.children.len()
    }

    /// Whether there are no children.
    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }
}

impl Component for Column {
    fn render(&mut self, width: u16) -> Vec<String> {
        let mut out = Vec::new();
        for c in &mut self.children {
            out.extend(c.render(width));
        }
        out
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        match self.focus.and_then(|i| self.children.get_mut(i)) {
            Some(c) => c.handle_input(event),
            None => false,
        }
    }

    fn invalidate(&mut self) {
        for c in &mut self.children {
            c.invalidate();
        }
    }
}
