//! The alternate-screen renderer (pi's `--tui-mode fullscreen`): the same history and live
//! lines shown through a scroll view above a docked bottom (editor, footer), every row
//! cell-diffed against the last frame. The scrollback of the main screen is never touched.

use std::fmt::Write as _;

use crate::cells::Row;
use crate::inline::{SYNC_BEGIN, SYNC_END};

/// Enters the alternate screen and clears it.
pub const ENTER: &str = "\x1b[?1049h\x1b[H\x1b[2J";
/// Leaves the alternate screen.
pub const LEAVE: &str = "\x1b[?1049l";
/// The mode switch that [`ENTER`] starts with.
pub const ENTER_MODE: &str = "\x1b[?1049h";

/// How the scroll view moves (pi's `tui.altScreen.*` page keys).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scroll {
    /// One page up (PageUp).
    PageUp,
    /// One page down (PageDown).
    PageDown,
    /// To the first line (Home).
    Top,
    /// To the end, following new output again (End).
    Bottom,
    /// By some lines (negative = up).
    Lines(i32),
}

/// The state of the alternate screen.
#[derive(Debug, Default)]
pub struct FullscreenRenderer {
    width: u16,
    height: u16,
    shown: Vec<Row>,
    /// Lines scrolled up from the end (0 = following the end).
    offset: usize,
}

impl FullscreenRenderer {
    /// A renderer for a `width`×`height` alternate screen.
    pub fn new(width: u16, height: u16) -> Self {
        Self {
            width: width.max(1),
            height: height.max(1),
            shown: Vec::new(),
            offset: 0,
        }
    }

    /// Forgets what is on screen (after entering the alternate screen or a resize).
    pub fn reset(&mut self, width: u16, height: u16) {
        self.width = width.max(1);
        self.height = height.max(1);
        self.shown.clear();
    }

    /// Lines scrolled up from the end.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Moves the view. `total` = transcript lines, `view` = rows of the scroll view.
    pub fn scroll(&mut self, s: Scroll, total: usize, view: usize) {
        let max = total.saturating_sub(view);
        let page = view.saturating_sub(1).max(1);
        self.offset = match s {
            Scroll::PageUp => self.offset.saturating_add(page),
            Scroll::PageDown => self.offset.saturating_sub(page),
            Scroll::Top => max,
            Scroll::Bottom => 0,
            Scroll::Lines(n) if n < 0 => self.offset.saturating_add(n.unsigned_abs() as usize),
            Scroll::Lines(n) => self.offset.saturating_sub(n as usize),
        }
        .min(max);
    }

    /// The rows of the scroll view for a transcript of `total` lines: the range shown.
    pub fn window(&self, total: usize, view: usize) -> std::ops::Range<usize> {
        let end = total.saturating_sub(self.offset.min(total.saturating_sub(view)));
        end.saturating_sub(view)..end
    }

    /// Builds one frame from the transcript (`history` then `live`, addressed as one list) and
    /// the docked `dock` lines at the bottom. When the view is scrolled up, the last row of
    /// the view says how to get back. Returns the bytes (empty when nothing changed).
    pub fn frame(&mut self, history: &[String], live: &[String], dock: &[String]) -> String {
        let width = usize::from(self.width);
        let height = usize::from(self.height);
        let dock = &dock[dock.len().saturating_sub(height)..];
        let view = height - dock.len();
        let total = history.len() + live.len();
        let line = |i: usize| -> &str {
            if i < history.len() {
                &history[i]
            } else {
                &live[i - history.len()]
            }
        };
        let range = self.window(total, view);
        let mut rows: Vec<Row> = Vec::with_capacity(height);
        for i in range.clone() {
            rows.push(Row::from_line(line(i), width));
        }
        if self.offset > 0 && view > 0 {
            let hint = format!("\x1b[7m ↓ {} more lines · End \x1b[0m", self.offset);
            if let Some(last) = rows.last_mut() {
                *last = Row::from_line(&hint, width);
            }
        }
        while rows.len() < view {
            rows.push(Row::default());
        }
        rows.extend(dock.iter().map(|l| Row::from_line(l, width)));
        if rows == self.shown {
            return String::new();
        }
        let mut out = String::new();
        out.push_str(SYNC_BEGIN);
        for (i, row) in rows.iter().enumerate() {
            match self.shown.get(i) {
                Some(old) if old == row => {}
                Some(old) => {
                    let mut d = String::new();
                    row.diff_into(old, &mut d);
                    let _ = write!(out, "\x1b[{};1H{d}", i + 1);
                }
                None => {
                    let _ = write!(out, "\x1b[{};1H\x1b[2K", i + 1);
                    row.draw_into(&mut out);
                }
            }
        }
        let cursor = rows
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, r)| r.cursor.map(|c| (i, c)));
        if let Some((r, c)) = cursor {
            let _ = write!(out, "\x1b[{};{}H", r + 1, c + 1);
        }
        out.push_str(SYNC_END);
        self.shown = rows;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{Answers, ScreenModel};

    fn lines(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("line {i}")).collect()
    }

    #[test]
    fn follows_the_end_and_pages_back() {
        let mut m = ScreenModel::new(6, 30, Answers::default());
        let mut f = FullscreenRenderer::new(30, 6);
        m.feed(ENTER.as_bytes());
        let h = lines(20);
        let dock = vec!["> input".to_string()];
        m.feed(f.frame(&h, &["live".into()], &dock).as_bytes());
        assert_eq!(
            m.screen_lines(),
            [
                "line 16", "line 17", "line 18", "line 19", "live", "> input"
            ]
        );
        f.scroll(Scroll::PageUp, 21, 5);
        m.feed(f.frame(&h, &["live".into()], &dock).as_bytes());
        assert_eq!(m.screen_lines()[0], "line 12");
        assert!(m.screen_lines()[4].contains("↓ 4 more lines"));
        f.scroll(Scroll::Top, 21, 5);
        m.feed(f.frame(&h, &["live".into()], &dock).as_bytes());
        assert_eq!(m.screen_lines()[0], "line 0");
        f.scroll(Scroll::Bottom, 21, 5);
        m.feed(f.frame(&h, &["live".into()], &dock).as_bytes());
        assert_eq!(m.screen_lines()[4], "live");
        assert!(m.alternate_screen());
        m.feed(LEAVE.as_bytes());
        assert!(!m.alternate_screen());
        assert!(m.scrollback_clears().is_empty());
    }

    #[test]
    fn a_short_transcript_leaves_blank_rows_above_the_dock() {
        let mut m = ScreenModel::new(5, 20, Answers::default());
        let mut f = FullscreenRenderer::new(20, 5);
        m.feed(f.frame(&["a".into()], &[], &["dock".into()]).as_bytes());
        assert_eq!(m.screen_lines(), ["a", "", "", "", "dock"]);
        // A frame with nothing changed writes nothing.
        assert!(f.frame(&["a".into()], &[], &["dock".into()]).is_empty());
    }
}
