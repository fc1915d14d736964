//! The main-screen renderer: history written into the scrollback once, a live region at the
//! bottom repainted cell by cell.
//!
//! The live region starts where the cursor was when the renderer started and grows
//! downwards; the terminal scrolls it up as it grows. Committed lines are written over the top
//! of the live region and scroll away into the terminal's own scrollback, where the terminal
//! (not us) keeps them: no later frame touches them. The live region is clamped to the
//! screen height (its top rows are not drawn when it is taller), so every row it owns stays
//! addressable by relative cursor movement. Movement is relative (`CSI n A`, `CSI n B`, `\r\n`
//! to grow), as pi-tui's `TuiMainScreen` moves, so nothing depends on the absolute row.

use std::fmt::Write as _;

use crate::cells::Row;

/// Synchronized output: begin.
pub const SYNC_BEGIN: &str = "\x1b[?2026h";
/// Synchronized output: end.
pub const SYNC_END: &str = "\x1b[?2026l";
/// Clears screen and scrollback and homes the cursor: only ever sent for a width change or an
/// explicit replay.
pub const CLEAR_ALL: &str = "\x1b[H\x1b[2J\x1b[3J";

/// The state of the live region on the terminal.
#[derive(Debug, Default)]
pub struct InlineRenderer {
    width: u16,
    height: u16,
    /// Rows of the live region as the terminal shows them, from its top.
    shown: Vec<Row>,
    /// The lines those rows were laid out from (a line equal to last frame's is not laid
    /// out again).
    lines: Vec<String>,
    /// Rows known to exist on screen below the live top (at least `shown.len()`, at least 1).
    rows_on_screen: usize,
    /// Cursor row, relative to the live top.
    cursor_row: usize,
    /// Whether the hardware cursor is shown (`PI_HARDWARE_CURSOR`).
    show_cursor: bool,
}

impl InlineRenderer {
    /// A renderer for a `width`×`height` terminal whose cursor is on the row where the live
    /// region will start.
    pub fn new(width: u16, height: u16) -> Self {
        Self {
            width: width.max(1),
            height: height.max(1),
            shown: Vec::new(),
            lines: Vec::new(),
            rows_on_screen: 1,
            cursor_row: 0,
            show_cursor: false,
        }
    }

    /// Shows the hardware cursor at the cursor marker (for IME), instead of hiding it.
    pub fn set_show_cursor(&mut self, show: bool) {
        self.show_cursor = show;
    }

    /// The size laid out for.
    pub fn size(&self) -> (u16, u16) {
        (self.width, self.height)
    }

    /// Rows the live region shows now.
    pub fn live_rows(&self) -> usize {
        self.shown.len()
    }

    /// Builds one frame: writes `commit` lines into the history (above the live region) and
    /// turns the live region into `live`. Returns the bytes, one synchronized write, or an
    /// empty string when nothing changed.
    pub fn frame(&mut self, commit: &[String], live: &[String]) -> String {
        let width = usize::from(self.width);
        let height = usize::from(self.height);
        // The live region never exceeds the screen: its bottom rows are what matter (status,
        // editor, footer).
        let skip = live.len().saturating_sub(height);
        let live = &live[skip..];
        if commit.is_empty() && live == self.lines.as_slice() {
            return String::new();
        }
        let mut out = String::with_capacity(256);
        out.push_str(SYNC_BEGIN);
        if self.show_cursor {
            // Hidden while drawing; shown again at its place below.
            out.push_str("\x1b[?25l");
        }
        if !commit.is_empty() {
            self.move_to(0, &mut out);
            for (i, line) in commit.iter().enumerate() {
                let row = Row::from_line(line, width);
                if i > 0 {
                    self.move_to(i, &mut out);
                }
                out.push('\r');
                row.draw_into(&mut out);
                out.push_str("\x1b[K");
            }
            // The live region now starts below the committed lines; the rows of the old live
            // region that were not overwritten are still on screen there.
            let n = commit.len();
            self.move_to(n, &mut out);
            self.shown.drain(..n.min(self.shown.len()));
            self.lines.drain(..n.min(self.lines.len()));
            self.rows_on_screen = self.rows_on_screen.saturating_sub(n).max(1);
            self.cursor_row = 0;
        }
        let old_rows = std::mem::take(&mut self.shown);
        let old_count = old_rows.len();
        let mut old_rows = old_rows.into_iter();
        let mut rows: Vec<Row> = Vec::with_capacity(live.len());
        for (i, line) in live.iter().enumerate() {
            let old = old_rows.next();
            if let Some(old) = old {
                if self.lines.get(i) == Some(line) {
                    rows.push(old);
                    continue;
                }
                let row = Row::from_line(line, width);
                if row != old {
                    self.move_to(i, &mut out);
                    row.diff_into(&old, &mut out);
                }
                rows.push(row);
            } else {
                let row = Row::from_line(line, width);
                self.move_to(i, &mut out);
                out.push('\r');
                row.draw_into(&mut out);
                out.push_str("\x1b[K");
                rows.push(row);
            }
        }
        if rows.len() < old_count {
            // Erase what the region no longer covers.
            self.move_to(rows.len(), &mut out);
            out.push_str("\r\x1b[J");
        }
        self.shown = rows;
        self.lines = live.to_vec();
        // The cursor: at the marker when a row has one, else at the end of the last row.
        let (crow, ccol) = self
            .shown
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, r)| r.cursor.map(|c| (i, c)))
            .map(|(i, c)| (i, c, true))
            .map_or_else(
                || {
                    let last = self.shown.len().saturating_sub(1);
                    (last, self.shown.get(last).map_or(0, |r| r.cells.len()))
                },
                |(i, c, _)| (i, c),
            );
        self.move_to(crow, &mut out);
        let _ = write!(out, "\x1b[{}G", ccol.min(width.saturating_sub(1)) + 1);
        if self.show_cursor && self.shown.iter().any(|r| r.cursor.is_some()) {
            out.push_str("\x1b[?25h");
        }
        out.push_str(SYNC_END);
        out
    }

    /// Moves the cursor to live row `r`, growing the region (scrolling the terminal) when `r`
    /// is below every row known to exist.
    fn move_to(&mut self, r: usize, out: &mut String) {
        if r < self.cursor_row {
            let _ = write!(out, "\x1b[{}A", self.cursor_row - r);
        } else if r > self.cursor_row {
            let known = self.rows_on_screen.saturating_sub(1);
            let down = r.min(known).saturating_sub(self.cursor_row);
            if down > 0 {
                let _ = write!(out, "\x1b[{down}B");
            }
            for _ in self.cursor_row.max(known)..r {
                out.push_str("\r\n");
            }
            self.rows_on_screen = self.rows_on_screen.max(r + 1);
        }
        self.cursor_row = r;
    }

    /// The terminal changed height (same width): the live region is erased and drawn again
    /// by the next frame. History is not touched. Returns the bytes that erase it.
    pub fn set_height(&mut self, height: u16) -> String {
        self.height = height.max(1);
        let mut out = String::new();
        let up = self.cursor_row.min(usize::from(self.height) - 1);
        if up > 0 {
            let _ = write!(out, "\x1b[{up}A");
        }
        out.push_str("\r\x1b[J");
        self.reset();
        out
    }

    /// Forgets the live region (after the screen was cleared): the cursor is where it starts.
    pub fn reset(&mut self) {
        self.shown.clear();
        self.lines.clear();
        self.rows_on_screen = 1;
        self.cursor_row = 0;
    }

    /// A width change or an explicit replay: clears screen and scrollback, writes `history`
    /// (the replayed tail, already laid out for the new size) and leaves the live region
    /// empty, to be drawn by the next frame. One synchronized write.
    pub fn replay(&mut self, width: u16, height: u16, history: &[String]) -> String {
        self.width = width.max(1);
        self.height = height.max(1);
        let mut out = String::new();
        out.push_str(SYNC_BEGIN);
        out.push_str(CLEAR_ALL);
        self.reset();
        for line in history {
            Row::from_line(line, usize::from(self.width)).draw_into(&mut out);
            out.push_str("\r\n");
        }
        out.push_str(SYNC_END);
        out
    }

    /// The bytes that leave the terminal below the live region on exit: the cursor on a
    /// fresh line after it, shown again.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        let last = self.shown.len().saturating_sub(1);
        self.move_to(last, &mut out);
        if !self.shown.is_empty() {
            self.move_to(last + 1, &mut out);
        }
        out.push_str("\r\x1b[?25h");
        self.reset();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testkit::{Answers, ScreenModel};

    struct Term {
        p: ScreenModel,
        bytes: String,
    }

    impl Term {
        fn new(rows: u16, cols: u16) -> Self {
            Self {
                p: ScreenModel::new(rows, cols, Answers::default()),
                bytes: String::new(),
            }
        }
        fn feed(&mut self, s: &str) {
            self.bytes.push_str(s);
            self.p.feed(s.as_bytes());
        }
        fn screen(&self) -> Vec<String> {
            self.p.screen_lines()
        }
        fn all(&mut self) -> Vec<String> {
            self.p.all_lines()
        }
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn commits_appear_once_and_the_live_region_follows() {
        let mut t = Term::new(5, 20);
        let mut r = InlineRenderer::new(20, 5);
        t.feed(&r.frame(&[], &s(&["streaming", "> input"])));
        assert_eq!(t.screen()[..2], s(&["streaming", "> input"]));
        for i in 0..12 {
            let c = vec![format!("line {i}")];
            t.feed(&r.frame(&c, &s(&["streaming", "> input"])));
        }
        let all = t.all();
        let expected: Vec<String> = (0..12)
            .map(|i| format!("line {i}"))
            .chain(s(&["streaming", "> input"]))
            .collect();
        assert_eq!(all, expected);
        assert!(!t.bytes.contains("\x1b[3J"));
        assert!(!t.bytes.contains("\x1b[2J"));
    }

    #[test]
    fn unchanged_frames_write_nothing_and_small_changes_write_little() {
        let mut t = Term::new(10, 40);
        let mut r = InlineRenderer::new(40, 10);
        t.feed(&r.frame(&[], &s(&["answer: hel", "─────", "> "])));
        assert!(r.frame(&[], &s(&["answer: hel", "─────", "> "])).is_empty());
        let b = r.frame(&[], &s(&["answer: hello", "─────", "> "]));
        t.feed(&b);
        assert!(b.len() < 40, "{b:?}");
        assert_eq!(t.screen()[..3], s(&["answer: hello", "─────", ">"]));
    }

    #[test]
    fn shrinking_live_region_leaves_no_garbage() {
        let mut t = Term::new(10, 20);
        let mut r = InlineRenderer::new(20, 10);
        t.feed(&r.frame(&[], &s(&["a", "b", "c", "d"])));
        t.feed(&r.frame(&[], &s(&["a"])));
        assert_eq!(t.all(), s(&["a"]));
        t.feed(&r.frame(&s(&["x", "y"]), &s(&["z"])));
        assert_eq!(t.all(), s(&["x", "y", "z"]));
    }

    #[test]
    fn live_region_taller_than_the_screen_is_clamped_and_commits_stay_exact() {
        let mut t = Term::new(4, 20);
        let mut r = InlineRenderer::new(20, 4);
        let live: Vec<String> = (0..10).map(|i| format!("live {i}")).collect();
        t.feed(&r.frame(&[], &live));
        assert_eq!(t.screen(), live[6..].to_vec());
        let committed: Vec<String> = (0..10).map(|i| format!("done {i}")).collect();
        t.feed(&r.frame(&committed, &s(&["> "])));
        let all = t.all();
        let tail: Vec<String> = all[all.len() - 11..].to_vec();
        let mut want = committed.clone();
        want.push(">".into());
        assert_eq!(tail, want);
        for c in &committed {
            assert_eq!(all.iter().filter(|l| *l == c).count(), 1, "{c}");
        }
    }

    #[test]
    fn cursor_marker_places_the_cursor() {
        let mut t = Term::new(5, 20);
        let mut r = InlineRenderer::new(20, 5);
        let line = format!("> ab{}c", crate::CURSOR_MARKER);
        t.feed(&r.frame(&[], &[line, "footer".into()]));
        assert_eq!(t.p.cursor(), (0, 4));
    }

    #[test]
    fn height_change_repaints_the_live_region_only() {
        let mut t = Term::new(6, 20);
        let mut r = InlineRenderer::new(20, 6);
        t.feed(&r.frame(&s(&["h1", "h2"]), &s(&["l1", "l2"])));
        t.p.resize(8, 20);
        t.feed(&r.set_height(8));
        t.feed(&r.frame(&[], &s(&["l1", "l2"])));
        assert_eq!(t.all(), s(&["h1", "h2", "l1", "l2"]));
        assert!(!t.bytes.contains("\x1b[3J"));
    }

    #[test]
    fn replay_clears_and_writes_history_then_live() {
        let mut t = Term::new(6, 20);
        let mut r = InlineRenderer::new(20, 6);
        t.feed(&r.frame(&s(&["old wide line"]), &s(&["live"])));
        t.p.resize(6, 10);
        t.feed(&r.replay(10, 6, &s(&["new", "lines"])));
        t.feed(&r.frame(&[], &s(&["live"])));
        assert_eq!(t.all(), s(&["new", "lines", "live"]));
    }
}
