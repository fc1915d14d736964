//! Styled lines as rows of cells, and the byte-level diff of two rows.
//!
//! A row is what one terminal line shows: one [`Cell`] per column, a wide character taking
//! its cell plus an empty continuation cell. Two frames are compared cell by cell and only the
//! changed span of a row is rewritten.

use std::fmt::Write as _;
use std::sync::Arc;

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthChar;

use crate::ansi::{self, StyleState, Token};
use crate::component::CURSOR_MARKER;

/// What a cell shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Symbol {
    /// A grapheme of one `char` (most cells: no allocation).
    Char(char),
    /// A grapheme of several `char`s (combining marks, ZWJ sequences, flags).
    Cluster(Box<str>),
    /// The right half of a wide character.
    Continuation,
}

impl Symbol {
    fn of(g: &str) -> Symbol {
        let mut cs = g.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) => Symbol::Char(c),
            _ => Symbol::Cluster(g.into()),
        }
    }

    /// Whether this is the right half of a wide character.
    pub fn is_continuation(&self) -> bool {
        matches!(self, Symbol::Continuation)
    }

    fn push_to(&self, out: &mut String) {
        match self {
            Symbol::Char(c) => out.push(*c),
            Symbol::Cluster(s) => out.push_str(s),
            Symbol::Continuation => {}
        }
    }

    fn append(&mut self, mark: &str) {
        let mut s = String::new();
        self.push_to(&mut s);
        s.push_str(mark);
        *self = Symbol::Cluster(s.into());
    }
}

/// One terminal cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The grapheme shown.
    pub symbol: Symbol,
    /// The SGR and OSC 8 sequences that style it (empty for the default style).
    pub style: Arc<str>,
}

/// One row of cells, and where [`CURSOR_MARKER`] was found in it (a column).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    /// The cells, at most the width asked for (trailing default-styled blanks are kept only
    /// as far as the line drew them).
    pub cells: Vec<Cell>,
    /// Column of the cursor marker, if the line held one.
    pub cursor: Option<usize>,
    /// Inline images (Kitty graphics commands, iTerm2 `OSC 1337 ; File=`, the latter with
    /// the cursor-up before it) by the column they are drawn at: written as they are.
    pub graphics: Vec<(usize, Arc<str>)>,
}

/// Whether an escape sequence is an inline image command of the shape
/// [`terminal_image`](crate::terminal_image) writes: a Kitty transmission of inline base64 data
/// with only the keys it uses (never `t=`, which would have the terminal read a file), or an
/// iTerm2 `inline=1` image (never a download). Anything else is dropped like any foreign
/// sequence, so a component that forgot to escape its text cannot drive the terminal.
fn is_graphics(esc: &str) -> bool {
    let base64 = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
    };
    if let Some(body) = esc
        .strip_prefix(crate::terminal_image::KITTY_PREFIX)
        .and_then(|b| b.strip_suffix("\x1b\\"))
    {
        let Some((controls, payload)) = body.split_once(';') else {
            return false;
        };
        let key_ok = |kv: &str| match kv.split_once('=') {
            Some(("a", "T")) => true,
            Some((k, v)) => {
                matches!(k, "f" | "q" | "C" | "c" | "r" | "i" | "m")
                    && !v.is_empty()
                    && v.bytes().all(|b| b.is_ascii_digit())
            }
            None => false,
        };
        return controls.split(',').all(key_ok) && base64(payload);
    }
    if let Some(body) = esc
        .strip_prefix(crate::terminal_image::ITERM2_PREFIX)
        .and_then(|b| b.strip_suffix('\x07'))
    {
        let Some((params, payload)) = body.split_once(':') else {
            return false;
        };
        return params.starts_with("inline=1;")
            && params.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'=' | b';' | b'%' | b'+' | b'/')
            })
            && base64(payload);
    }
    false
}

/// `CSI n A` (cursor up): kept only right before an image (iTerm2 images are drawn from the
/// last of their rows).
fn is_cursor_up(esc: &str) -> bool {
    esc.strip_prefix("\x1b[")
        .and_then(|r| r.strip_suffix('A'))
        .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
}

impl Row {
    /// Lays out a styled line into at most `width` cells. Escape sequences other than SGR,
    /// OSC 8, the cursor marker and inline images are dropped; control characters are shown
    /// escaped (as [`ansi::escape_control`] does), never sent raw.
    pub fn from_line(line: &str, width: usize) -> Row {
        let mut row = Row {
            cells: Vec::with_capacity(width.min(line.len())),
            cursor: None,
            graphics: Vec::new(),
        };
        let mut cursor_up: Option<&str> = None;
        let mut state = StyleState::default();
        let mut style: Arc<str> = Arc::from("");
        let mut dirty = false;
        'outer: for t in ansi::tokens(line) {
            match t {
                Token::Escape(e) if is_graphics(e) => {
                    let col = row.cells.len();
                    let up = cursor_up.take().unwrap_or("");
                    match row.graphics.last_mut() {
                        // The chunks of one Kitty transmission stay one entry.
                        Some((c, seq)) if *c == col => *seq = format!("{seq}{up}{e}").into(),
                        _ => row.graphics.push((col, format!("{up}{e}").into())),
                    }
                }
                Token::Escape(e) if is_cursor_up(e) => cursor_up = Some(e),
                Token::Escape(e) => {
                    cursor_up = None;
                    if e == CURSOR_MARKER {
                        row.cursor = Some(row.cells.len());
                    } else if ansi::is_kept_escape(e) {
                        state.apply(e);
                        dirty = true;
                    }
                }
                Token::Text(t) => {
                    cursor_up = None;
                    if dirty {
                        style = Arc::from(state.prefix());
                        dirty = false;
                    }
                    let escaped;
                    let t = if t.chars().any(|c| c.is_control()) {
                        escaped = ansi::escape_control(&t.replace('\n', " "));
                        escaped.as_str()
                    } else {
                        t
                    };
                    if t.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                        // Printable ASCII: one cell per byte.
                        for b in t.bytes() {
                            if row.cells.len() >= width {
                                break 'outer;
                            }
                            row.cells.push(Cell {
                                symbol: Symbol::Char(char::from(b)),
                                style: style.clone(),
                            });
                        }
                        continue;
                    }
                    if !t.chars().any(ansi::joins_cluster) {
                        // One grapheme per char.
                        for c in t.chars() {
                            let w = c.width().unwrap_or(0).min(2);
                            if row.cells.len() + w > width {
                                break 'outer;
                            }
                            row.cells.push(Cell {
                                symbol: Symbol::Char(c),
                                style: style.clone(),
                            });
                            if w == 2 {
                                row.cells.push(Cell {
                                    symbol: Symbol::Continuation,
                                    style: style.clone(),
                                });
                            }
                        }
                        continue;
                    }
                    for g in t.graphemes(true) {
                        let w = ansi::grapheme_width(g);
                        if row.cells.len() + w > width {
                            break 'outer;
                        }
                        match w {
                            0 => {
                                // A lone combining mark: attach to the previous cell.
                                if let Some(c) = row.cells.last_mut() {
                                    c.symbol.append(g);
                                }
                            }
                            1 => row.cells.push(Cell {
                                symbol: Symbol::of(g),
                                style: style.clone(),
                            }),
                            _ => {
                                row.cells.push(Cell {
                                    symbol: Symbol::of(g),
                                    style: style.clone(),
                                });
                                row.cells.push(Cell {
                                    symbol: Symbol::Continuation,
                                    style: style.clone(),
                                });
                            }
                        }
                    }
                }
            }
        }
        // Trailing default blanks draw nothing on a cleared line.
        while row
            .cells
            .last()
            .is_some_and(|c| c.symbol == Symbol::Char(' ') && c.style.is_empty())
        {
            row.cells.pop();
        }
        row
    }

    /// Appends the bytes that turn a terminal row showing `old` into one showing `self`, the
    /// cursor being on that row (any column). Writes nothing when they are equal.
    pub fn diff_into(&self, old: &Row, out: &mut String) {
        if self.graphics != old.graphics {
            // An image changed: the row is drawn whole.
            out.push_str("\x1b[1G");
            self.draw_into(out);
            out.push_str("\x1b[K");
            return;
        }
        let new = &self.cells;
        let old = &old.cells;
        let common = new.len().min(old.len());
        let Some(mut first) = (0..common)
            .find(|&i| new[i] != old[i])
            .or((new.len() != old.len()).then_some(common))
        else {
            return;
        };
        // Never start in the right half of a wide character.
        while first > 0
            && (new.get(first).is_some_and(|c| c.symbol.is_continuation())
                || old.get(first).is_some_and(|c| c.symbol.is_continuation()))
        {
            first -= 1;
        }
        let mut last = new.len();
        if new.len() == old.len() {
            while last > first && new[last - 1] == old[last - 1] {
                last -= 1;
            }
            // ... and never end in the left half of one.
            while last < new.len() && new[last].symbol.is_continuation() {
                last += 1;
            }
        }
        let _ = write!(out, "\x1b[{}G", first + 1);
        write_cells(&new[first..last], out);
        if new.len() < old.len() {
            out.push_str("\x1b[K");
        }
    }

    /// Appends the bytes that draw this row on a blank terminal row from column 0.
    pub fn draw_into(&self, out: &mut String) {
        let mut from = 0;
        for (col, seq) in &self.graphics {
            let col = (*col).clamp(from, self.cells.len());
            write_cells(&self.cells[from..col], out);
            from = col;
            out.push_str(seq);
        }
        write_cells(&self.cells[from..], out);
    }
}

/// Writes cells with their styles, ending in the default style.
fn write_cells(cells: &[Cell], out: &mut String) {
    let mut cur: &str = "";
    let mut link_open = false;
    for c in cells {
        if c.symbol.is_continuation() {
            continue;
        }
        if *c.style != *cur {
            if link_open {
                out.push_str(ansi::LINK_CLOSE);
            }
            if !cur.is_empty() {
                out.push_str(ansi::RESET);
            }
            out.push_str(&c.style);
            link_open = c.style.contains("\x1b]8;");
            cur = &c.style;
        }
        c.symbol.push_to(out);
    }
    if link_open {
        out.push_str(ansi::LINK_CLOSE);
    }
    if !cur.is_empty() {
        out.push_str(ansi::RESET);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(bytes: &str, cols: u16) -> String {
        let mut m = crate::testkit::ScreenModel::new(2, cols, crate::testkit::Answers::default());
        m.feed(bytes.as_bytes());
        m.screen_lines().remove(0)
    }

    #[test]
    fn diff_rewrites_only_the_changed_span() {
        let a = Row::from_line("hello world", 20);
        let b = Row::from_line("hello there", 20);
        let mut out = String::new();
        b.diff_into(&a, &mut out);
        assert_eq!(out, "\x1b[7Gthere");
        let mut full = String::new();
        a.draw_into(&mut full);
        full.push('\r');
        full.push_str(&out);
        assert_eq!(screen(&full, 20), "hello there");
    }

    #[test]
    fn diff_of_a_shorter_row_erases_the_rest() {
        let a = Row::from_line("hello world", 20);
        let b = Row::from_line("hello", 20);
        let mut out = String::new();
        b.diff_into(&a, &mut out);
        assert_eq!(out, "\x1b[6G\x1b[K");
        let mut none = String::new();
        b.diff_into(&b.clone(), &mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn wide_characters_are_never_split() {
        let a = Row::from_line("a日本", 10);
        let b = Row::from_line("a日x", 10);
        assert_eq!(a.cells.len(), 5);
        let mut out = String::new();
        b.diff_into(&a, &mut out);
        let mut full = String::new();
        a.draw_into(&mut full);
        full.push('\r');
        full.push_str(&out);
        assert_eq!(screen(&full, 10), "a日x");
        // A wide character that does not fit is left out, not half drawn.
        assert_eq!(Row::from_line("ab日", 3).cells.len(), 2);
    }

    #[test]
    fn styles_and_links_are_balanced_and_foreign_escapes_dropped() {
        let r = Row::from_line(
            "\x1b[31mred\x1b[0m \x1b]8;;http://x\x1b\\ln\x1b]8;;\x1b\\\x1b[2J",
            20,
        );
        let mut out = String::new();
        r.draw_into(&mut out);
        assert_eq!(
            out,
            "\x1b[31mred\x1b[0m \x1b]8;;http://x\x1b\\ln\x1b]8;;\x1b\\\x1b[0m"
        );
        let c = Row::from_line(&format!("ab{CURSOR_MARKER}cd"), 10);
        assert_eq!(c.cursor, Some(2));
        let ctl = Row::from_line("a\x07b", 10);
        let mut o = String::new();
        ctl.draw_into(&mut o);
        assert_eq!(o, "a\\x07b");
    }

    #[test]
    fn image_commands_pass_through_whole() {
        let kitty = "\x1b_Ga=T,f=100,q=2,C=1,i=1,m=1;AAAA\x1b\\\x1b_Gm=0;BB\x1b\\";
        let r = Row::from_line(kitty, 10);
        assert!(r.cells.is_empty());
        assert_eq!(r.graphics, [(0, Arc::from(kitty))]);
        let mut out = String::new();
        r.draw_into(&mut out);
        assert_eq!(out, kitty);
        // iTerm2 keeps the cursor-up right before it; a lone cursor-up is dropped.
        let iterm = "\x1b[2A\x1b]1337;File=inline=1;size=3:QUJD\x07";
        let mut out = String::new();
        Row::from_line(&format!("ab{iterm}"), 10).draw_into(&mut out);
        assert_eq!(out, format!("ab{iterm}"));
        let mut out = String::new();
        Row::from_line("\x1b[2Aab", 10).draw_into(&mut out);
        assert_eq!(out, "ab");
        // A changed image redraws the row; the same one writes nothing.
        let other = Row::from_line("\x1b_Ga=T,f=100,q=2,i=2;AAAA\x1b\\", 10);
        let mut d = String::new();
        other.diff_into(&r, &mut d);
        assert!(
            d.starts_with("\x1b[1G\x1b_G") && d.ends_with("\x1b[K"),
            "{d:?}"
        );
        let mut none = String::new();
        r.diff_into(&r.clone(), &mut none);
        assert!(none.is_empty());
        // Commands that would read a file or download one are not images.
        for foreign in [
            "\x1b_Ga=T,t=f,f=100;L2V0Yy9wYXNzd2Q=\x1b\\",
            "\x1b_Ga=q;AAAA\x1b\\",
            "\x1b_Ga=T;not base64!\x1b\\",
            "\x1b]1337;File=inline=0;size=3:QUJD\x07",
            "\x1b]1337;File=name=eA==;size=3:QUJD\x07",
        ] {
            let row = Row::from_line(&format!("a{foreign}b"), 10);
            assert!(row.graphics.is_empty(), "{foreign:?}");
            let mut o = String::new();
            row.draw_into(&mut o);
            assert_eq!(o, "ab");
        }
    }
}
