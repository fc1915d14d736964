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
    /// Cursor row on the screen, when known (from a cursor position report at start, or
    /// after a replay, which starts at the home position). Lets a commit insert its lines
    /// above the live region (`CSI n L`) instead of redrawing the region below them.
    cursor_abs: Option<usize>,
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
            cursor_abs: None,
            show_cursor: false,
        }
    }

    /// Tells the renderer on which screen row (0-based) the cursor, and so the live region's
    /// top, is now: the answer to a cursor position report (`CSI 6n`) before the first frame.
    pub fn set_cursor_row(&mut self, row: u16) {
        self.cursor_abs =
            Some(usize::from(row).min(usize::from(self.height) - 1) + self.cursor_row);
        if self
            .cursor_abs
            .is_some_and(|a| a >= usize::from(self.height))
        {
            self.cursor_abs = None;
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
        // Once the live region reaches the screen's bottom it stays there: when it shrinks
        // (a running tool box turning into its shorter finished form, the editor losing
        // lines), the rows it gives up become blank rows at its top rather than blank rows
        // below the footer. History cannot be pulled back from the scrollback to fill them;
        // the next committed lines do (they are written over the region's top rows).
        let padded;
        let live = match self.bottom_anchored_rows() {
            Some(rows) if live.len() + commit.len() < rows => {
                let pad = rows - commit.len() - live.len();
                padded = std::iter::repeat_n(String::new(), pad)
                    .chain(live.iter().cloned())
                    .collect::<Vec<_>>();
                padded.as_slice()
            }
            _ => live,
        };
        if commit.is_empty() && live == self.lines.as_slice() {
            return String::new();
        }
        let mut out = String::with_capacity(256);
        out.push_str(SYNC_BEGIN);
        if self.show_cursor {
            // Hidden while drawing; shown again at its place below.
            out.push_str("\x1b[?25l");
        }
        let n = commit.len();
        let fits = n + self.shown.len().max(1) <= height;
        // A live region that shrinks while lines are committed is (mostly) turning into
        // history, a finished tool box or message: the lines are written over its old rows
        // instead of being inserted above it, so the region below does not leave blank rows
        // at the bottom of the screen.
        let becomes_history = live.len() < self.shown.len();
        if n > 0
            && fits
            && !becomes_history
            && let Some(abs) = self.cursor_abs
            && abs >= self.cursor_row
        {
            // Make room above the live region and write the lines there: the region keeps
            // its content and moves down, nothing of it is redrawn.
            let top = abs - self.cursor_row;
            // The live region takes at least the cursor's row.
            let free = height.saturating_sub(top + self.shown.len().max(1));
            let scroll = n.saturating_sub(free);
            if scroll > 0 {
                let bottom = height - 1 - top;
                self.move_to(bottom, &mut out);
                for _ in 0..scroll {
                    out.push_str("\r\n");
                }
                // The screen scrolled: the live top is `scroll` rows higher.
                self.cursor_row += scroll;
                self.rows_on_screen = self.rows_on_screen.max(self.cursor_row + 1);
            }
            self.move_to(0, &mut out);
            let _ = write!(out, "\x1b[{n}L");
            for line in commit {
                out.push('\r');
                Row::from_line(line, width).draw_into(&mut out);
                out.push_str("\r\n");
            }
            self.cursor_abs = self.cursor_abs.map(|a| a + n);
            self.cursor_row = 0;
            // Every row from the live top to the screen's bottom exists.
            if let Some(a) = self.cursor_abs {
                self.rows_on_screen = height.saturating_sub(a).max(self.shown.len()).max(1);
            }
        } else if n > 0 {
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
            self.move_to(n, &mut out);
            self.shown.drain(..n.min(self.shown.len()));
            self.lines.drain(..n.min(self.lines.len()));
            self.rows_on_screen = self.rows_on_screen.saturating_sub(n).max(1);
            self.cursor_row = 0;
        }
        self.shift_suffix(live, &mut out);
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

    /// The rows the live region covers when its last row is the screen's last row (so it
    /// cannot move down any more), else `None` (the screen row is unknown, or there is room
    /// below it).
    fn bottom_anchored_rows(&self) -> Option<usize> {
        let abs = self.cursor_abs?;
        let top = abs.checked_sub(self.cursor_row)?;
        let rows = self.shown.len();
        (rows > 0 && top + rows >= usize::from(self.height)).then_some(rows)
    }

    /// When the live region grows or shrinks in its middle and its bottom lines (the editor,
    /// the footer) stay the same, moves those rows with `CSI n L` / `CSI n M` instead of
    /// redrawing them. Growing needs the screen row (to scroll first at the bottom); deleting
    /// only blanks rows below the region.
    fn shift_suffix(&mut self, live: &[String], out: &mut String) {
        let (old_n, new_n) = (self.lines.len(), live.len());
        if old_n == new_n || old_n == 0 || new_n == 0 {
            return;
        }
        let suffix = self
            .lines
            .iter()
            .rev()
            .zip(live.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        if suffix == 0 {
            return;
        }
        let height = usize::from(self.height);
        if new_n > old_n {
            let d = new_n - old_n;
            let p = old_n - suffix;
            let Some(abs) = self.cursor_abs else { return };
            if abs < self.cursor_row || new_n > height {
                return;
            }
            let top = abs - self.cursor_row;
            let scroll = (top + new_n).saturating_sub(height);
            if scroll > 0 {
                let bottom = height - 1 - top;
                self.move_to(bottom, out);
                for _ in 0..scroll {
                    out.push_str("\r\n");
                }
                self.cursor_row += scroll;
            }
            // Rows between the old region's bottom and the screen's bottom exist.
            self.rows_on_screen = self.rows_on_screen.max(height - (top - scroll));
            self.move_to(p, out);
            let _ = write!(out, "\x1b[{d}L");
            let blanks = std::iter::repeat_n(Row::default(), d);
            self.shown.splice(p..p, blanks);
            self.lines
                .splice(p..p, std::iter::repeat_n(String::new(), d));
        } else {
            let d = old_n - new_n;
            let p = new_n - suffix;
            self.move_to(p, out);
            let _ = write!(out, "\x1b[{d}M");
            self.shown.drain(p..p + d);
            self.lines.drain(p..p + d);
        }
    }

    /// Moves the cursor to live row `r`, growing the region (scrolling the terminal) when `r`
    /// is below every row known to exist.
    fn move_to(&mut self, r: usize, out: &mut String) {
        let last = usize::from(self.height) - 1;
        if r < self.cursor_row {
            let up = self.cursor_row - r;
            let _ = write!(out, "\x1b[{up}A");
            self.cursor_abs = self.cursor_abs.and_then(|a| a.checked_sub(up));
        } else if r > self.cursor_row {
            let known = self.rows_on_screen.saturating_sub(1);
            let down = r.min(known).saturating_sub(self.cursor_row);
            if down > 0 {
                let _ = write!(out, "\x1b[{down}B");
                self.cursor_abs = self.cursor_abs.map(|a| a + down).filter(|&a| a <= last);
            }
            for _ in self.cursor_row.max(known)..r {
                out.push_str("\r\n");
                // At the bottom the screen scrolls and the cursor stays on the last row.
                self.cursor_abs = self.cursor_abs.map(|a| (a + 1).min(last));
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
        // The terminal may have moved the content: the screen row is unknown now.
        self.cursor_abs = None;
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
        self.cursor_abs = Some(history.len().min(usize::from(self.height) - 1));
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
    fn with_a_known_cursor_row_commits_insert_above_the_live_region() {
        for start in [0usize, 3, 4] {
            let mut t = Term::new(5, 20);
            for i in 0..start {
                t.feed(&format!("shell {i}\r\n"));
            }
            let mut r = InlineRenderer::new(20, 5);
            r.set_cursor_row(t.p.cursor().0);
            let live = s(&["streaming", "> input"]);
            t.feed(&r.frame(&[], &live));
            let mut sizes = Vec::new();
            for i in 0..12 {
                let b = r.frame(&[format!("line {i}")], &live);
                sizes.push(b.len());
                t.feed(&b);
            }
            let mut expected: Vec<String> = (0..start).map(|i| format!("shell {i}")).collect();
            expected.extend((0..12).map(|i| format!("line {i}")));
            expected.extend(live.clone());
            assert_eq!(t.all(), expected, "start row {start}");
            // The live region is not redrawn: each commit is about its own line.
            assert!(sizes.iter().all(|&n| n < 50), "{sizes:?}");
        }
    }

    #[test]
    fn insert_path_survives_growth_shrink_and_big_commits() {
        // Deterministic pseudo-random patterns of commit sizes and live heights, from every
        // start row, with and without a known cursor row.
        for known in [true, false] {
            for start in 0..6usize {
                for seed in 1..6u64 {
                    let mut t = Term::new(6, 20);
                    for i in 0..start {
                        t.feed(&format!("sh {i}\r\n"));
                    }
                    let mut r = InlineRenderer::new(20, 6);
                    if known {
                        r.set_cursor_row(t.p.cursor().0);
                    }
                    let mut expected: Vec<String> = (0..start).map(|i| format!("sh {i}")).collect();
                    let mut x = seed;
                    for i in 0..30 {
                        x = x
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let nl = ((x >> 33) % 9) as usize; // live rows, up to taller than the screen
                        let nc = ((x >> 40) % 8) as usize;
                        let live: Vec<String> = (0..nl).map(|j| format!("live {i}.{j}")).collect();
                        let commit: Vec<String> = (0..nc).map(|j| format!("c {i}.{j}")).collect();
                        expected.extend(commit.clone());
                        t.feed(&r.frame(&commit, &live));
                    }
                    let last: Vec<String> = vec!["end".into()];
                    t.feed(&r.frame(&[], &last));
                    expected.extend(last);
                    // A live region at the screen's bottom keeps its rows when it shrinks:
                    // blank rows at its top, directly above "end", and nowhere else.
                    let mut all = t.all();
                    let blanks = all
                        .iter()
                        .rev()
                        .skip(1)
                        .take_while(|l| l.is_empty())
                        .count();
                    all.drain(all.len() - 1 - blanks..all.len() - 1);
                    assert_eq!(all, expected, "known {known} start {start} seed {seed}");
                }
            }
        }
    }

    #[test]
    fn a_growing_middle_moves_the_bottom_rows_instead_of_redrawing_them() {
        for known in [true, false] {
            for seed in 1..8u64 {
                let mut t = Term::new(8, 30);
                let mut r = InlineRenderer::new(30, 8);
                if known {
                    r.set_cursor_row(0);
                }
                let dock = s(&["──────", "> typed", "footer"]);
                let mut expected = Vec::new();
                let mut x = seed;
                let mut body = 0usize;
                for i in 0..40 {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let change = ((x >> 33) % 5) as usize;
                    body = match change {
                        0 => body.saturating_sub(1),
                        1 | 2 => (body + 1).min(7),
                        _ => body,
                    };
                    let nc = if (x >> 45) % 4 == 0 {
                        ((x >> 50) % 4) as usize
                    } else {
                        0
                    };
                    let commit: Vec<String> = (0..nc).map(|j| format!("c {i}.{j}")).collect();
                    expected.extend(commit.clone());
                    let mut live: Vec<String> =
                        (0..body).map(|j| format!("b {j} {}", i % 3)).collect();
                    live.extend(dock.clone());
                    let bytes = r.frame(&commit, &live);
                    t.feed(&bytes);
                    if known && i > 0 && nc == 0 && change == 1 && body < 5 {
                        assert!(!bytes.contains("footer"), "dock not redrawn: {bytes:?}");
                    }
                    let shown = t.screen();
                    let tail: Vec<String> = live.iter().rev().take(8).rev().cloned().collect();
                    let start = shown
                        .iter()
                        .rposition(|l| l == "footer")
                        .map_or(0, |i| i + 1);
                    assert_eq!(
                        shown[start - tail.len()..start],
                        tail[..],
                        "{known} {seed} {i}"
                    );
                }
                let mut all = t.all();
                all.truncate(expected.len());
                assert_eq!(all, expected, "known {known} seed {seed}");
            }
        }
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
    fn a_live_region_at_the_bottom_stays_there_when_it_shrinks() {
        let mut t = Term::new(8, 20);
        let mut r = InlineRenderer::new(20, 8);
        r.set_cursor_row(t.p.cursor().0);
        let history: Vec<String> = (0..6).map(|i| format!("old {i}")).collect();
        t.feed(&r.frame(&history, &s(&["> ", "footer"])));
        // A running tool box of four rows: the screen is full.
        let running = s(&["$ cmd", "out 1", "out 2", "Running...", "> ", "footer"]);
        t.feed(&r.frame(&[], &running));
        assert_eq!(t.screen().last().map(String::as_str), Some("footer"));
        // It finishes as a two-row block committed to history; the footer stays on the last
        // row, the rows given up are blank above the editor.
        t.feed(&r.frame(&s(&["$ cmd", "out 1"]), &s(&["> ", "footer"])));
        let screen = t.screen();
        assert_eq!(screen.last().map(String::as_str), Some("footer"));
        assert_eq!(screen[screen.len() - 2], ">");
        // The editor shrinking on its own keeps the footer down too.
        t.feed(&r.frame(&[], &s(&["> a", "> b", "footer"])));
        t.feed(&r.frame(&[], &s(&["> ", "footer"])));
        assert_eq!(t.screen().last().map(String::as_str), Some("footer"));
        // The next commit fills the blank rows: nothing is lost or repeated, no gap is left
        // inside the history.
        t.feed(&r.frame(&s(&["next 1", "next 2", "next 3"]), &s(&["> ", "footer"])));
        let all: Vec<String> = t.all().into_iter().filter(|l| !l.is_empty()).collect();
        let mut want = history.clone();
        want.extend(s(&[
            "$ cmd", "out 1", "next 1", "next 2", "next 3", ">", "footer",
        ]));
        assert_eq!(all, want);
        let screen = t.screen();
        assert_eq!(screen.last().map(String::as_str), Some("footer"));
        let at = screen.iter().position(|l| l == "next 3");
        assert_eq!(at, Some(screen.len() - 3), "{screen:?}");
        assert!(!t.bytes.contains("\x1b[2J") && !t.bytes.contains("\x1b[3J"));
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
