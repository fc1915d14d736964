//! The transcript's finished part: source components kept for replay, and their lines at the
//! current width.

use crate::ansi;
use crate::component::Component;

/// A finished block of the transcript. It is rendered once per width; its lines never change
/// at one width (that is what lets the inline renderer write them to the scrollback once).
pub type Block = Box<dyn Component + Send>;

/// The committed blocks, in order, with the lines of each at [`History::width`].
pub struct History {
    blocks: Vec<Block>,
    /// Lines of all blocks at `width`, concatenated (the fullscreen view slices them).
    lines: Vec<String>,
    /// `starts[i]` = index in `lines` of block `i`'s first line.
    starts: Vec<usize>,
    width: u16,
}

impl History {
    /// An empty history laid out for `width` cells.
    pub fn new(width: u16) -> Self {
        Self {
            blocks: Vec::new(),
            lines: Vec::new(),
            starts: Vec::new(),
            width: width.max(1),
        }
    }

    /// Forgets every block (a new conversation starts).
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.lines.clear();
        self.starts.clear();
    }

    /// Appends a block; returns its lines at the current width (each clipped to the width:
    /// a component that draws too wide is cut, not wrapped by the terminal).
    pub fn push(&mut self, mut block: Block) -> &[String] {
        let lines = render_clipped(&mut *block, self.width);
        self.starts.push(self.lines.len());
        let from = self.lines.len();
        self.lines.extend(lines);
        self.blocks.push(block);
        &self.lines[from..]
    }

    /// Lays the history out for a new width: every block is rendered again from its source.
    pub fn set_width(&mut self, width: u16) {
        let width = width.max(1);
        if width == self.width {
            return;
        }
        self.width = width;
        self.lines.clear();
        self.starts.clear();
        for b in &mut self.blocks {
            b.invalidate();
            self.starts.push(self.lines.len());
            let l = render_clipped(&mut **b, width);
            self.lines.extend(l);
        }
    }

    /// Re-renders every block at the current width (a theme change, a display toggle).
    pub fn rerender(&mut self) {
        let w = self.width;
        self.width = 0;
        self.set_width(w);
    }

    /// The width the lines are laid out for.
    pub fn width(&self) -> u16 {
        self.width
    }

    /// All lines at the current width.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// Number of committed blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether nothing was committed.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The last lines to replay after a width change: at most `max_lines`, starting at a block
    /// boundary, and how many blocks come before them (not replayed).
    pub fn replay_tail(&self, max_lines: usize) -> (usize, &[String]) {
        let total = self.lines.len();
        if total <= max_lines {
            return (0, &self.lines);
        }
        let min_start = total - max_lines;
        // The first block that starts at or after min_start.
        let i = self.starts.partition_point(|&s| s < min_start);
        let start = self.starts.get(i).copied().unwrap_or(total);
        (i, &self.lines[start..])
    }
}

/// Renders a component, clipping every line to `width` cells.
pub fn render_clipped(c: &mut dyn Component, width: u16) -> Vec<String> {
    let mut lines = c.render(width.max(1));
    for l in &mut lines {
        if l.contains('\n') {
            *l = l.replace('\n', " ");
        }
        if ansi::visible_width(l) > usize::from(width) {
            *l = ansi::truncate(l, usize::from(width), "");
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::Text;

    #[test]
    fn replay_tail_starts_at_a_block_boundary() {
        let mut h = History::new(20);
        for i in 0..10 {
            h.push(Box::new(Text::new(format!("a{i}\nb{i}\nc{i}"))));
        }
        assert_eq!(h.lines().len(), 30);
        let (skipped, tail) = h.replay_tail(7);
        assert_eq!(skipped, 8);
        assert_eq!(tail, ["a8", "b8", "c8", "a9", "b9", "c9"]);
        assert_eq!(h.replay_tail(100).0, 0);
    }

    #[test]
    fn width_change_rebuilds_from_source() {
        let mut h = History::new(20);
        h.push(Box::new(Text::new("one two three four five")));
        assert_eq!(h.lines(), ["one two three four", "five"]);
        h.set_width(10);
        assert_eq!(h.lines(), ["one two", "three four", "five"]);
        h.set_width(40);
        assert_eq!(h.lines(), ["one two three four five"]);
    }
}
