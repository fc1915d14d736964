//! ANSI-aware text measurement and layout: display width, wrapping, truncation and column
//! slicing of lines that hold SGR styles and OSC 8 hyperlinks, and the escaping of untrusted
//! text (tool output) so that no control character reaches the terminal raw.
//!
//! Widths are terminal cells: a grapheme cluster (unicode-segmentation) is as wide as
//! unicode-width says, at most two cells (CJK, emoji and ZWJ sequences are two); a tab counts
//! three cells, as pi-tui's `visibleWidth` (`dist/utils.js`) counts it, and is sent as three
//! spaces.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// SGR reset.
pub const RESET: &str = "\x1b[0m";
/// Closes an OSC 8 hyperlink.
pub const LINK_CLOSE: &str = "\x1b]8;;\x1b\\";

/// Cells a tab takes (pi-tui counts a tab as three cells).
pub const TAB_WIDTH: usize = 3;

/// One piece of a styled line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token<'a> {
    /// An escape sequence (CSI, OSC, APC, DCS or a two-byte `ESC x`), whole.
    Escape(&'a str),
    /// Printable text without escape sequences.
    Text(&'a str),
}

/// Splits a line into escape sequences and text. An unterminated escape sequence at the end
/// is one [`Token::Escape`] (it is dropped by the layout functions, never printed as text).
pub fn tokens(s: &str) -> Tokens<'_> {
    Tokens { s, pos: 0 }
}

/// Iterator of [`tokens`].
#[derive(Clone, Debug)]
pub struct Tokens<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let rest = &self.s[self.pos..];
        if rest.is_empty() {
            return None;
        }
        if rest.as_bytes()[0] == 0x1b {
            let len = escape_len(rest.as_bytes());
            self.pos += len;
            return Some(Token::Escape(&rest[..len]));
        }
        let len = memchr_esc(rest.as_bytes());
        self.pos += len;
        Some(Token::Text(&rest[..len]))
    }
}

fn memchr_esc(b: &[u8]) -> usize {
    b.iter().position(|&c| c == 0x1b).unwrap_or(b.len())
}

/// Length in bytes of the escape sequence at the start of `b` (which starts with ESC). The
/// length always ends on a UTF-8 boundary: every terminator is ASCII, and an unterminated
/// sequence runs to the end.
fn escape_len(b: &[u8]) -> usize {
    debug_assert_eq!(b.first(), Some(&0x1b));
    match b.get(1) {
        None => 1,
        Some(b'[') => {
            // CSI: parameter and intermediate bytes, then one final byte 0x40..=0x7e.
            let mut i = 2;
            while i < b.len() {
                if (0x40..=0x7e).contains(&b[i]) {
                    return i + 1;
                }
                if !(0x20..=0x3f).contains(&b[i]) {
                    // Not a CSI byte: end the sequence before it.
                    return i;
                }
                i += 1;
            }
            b.len()
        }
        Some(b']') | Some(b'_') | Some(b'P') | Some(b'^') => {
            // OSC, APC, DCS, PM: up to BEL or ST (`ESC \`).
            let mut i = 2;
            while i < b.len() {
                if b[i] == 0x07 {
                    return i + 1;
                }
                if b[i] == 0x1b {
                    return if b.get(i + 1) == Some(&b'\\') {
                        i + 2
                    } else {
                        i
                    };
                }
                i += 1;
            }
            b.len()
        }
        Some(&c) if c < 0x80 => 2,
        Some(_) => 1,
    }
}

/// Display width of one grapheme cluster, in cells (0, 1 or 2).
pub fn grapheme_width(g: &str) -> usize {
    if g == "\t" {
        return TAB_WIDTH;
    }
    let mut chars = g.chars();
    let Some(first) = chars.next() else {
        return 0;
    };
    if chars.as_str().is_empty() {
        return if (first as u32) < 0x7f {
            usize::from(first >= ' ')
        } else {
            first.width().unwrap_or(0).min(2)
        };
    }
    // An emoji presentation selector or a ZWJ sequence renders as one wide glyph.
    if g.contains('\u{fe0f}') || (g.contains('\u{200d}') && is_pictographic(first)) {
        return 2;
    }
    UnicodeWidthStr::width(g).min(2)
}

fn is_pictographic(c: char) -> bool {
    matches!(c as u32, 0x1f000..=0x1fbff | 0x2300..=0x23ff | 0x2600..=0x27bf | 0x2b50..=0x2b55)
}

/// Display width of a styled line: escape sequences count zero, text counts by grapheme.
pub fn visible_width(s: &str) -> usize {
    let mut w = 0usize;
    for t in tokens(s) {
        if let Token::Text(t) = t {
            w = w.saturating_add(text_width(t));
        }
    }
    w
}

/// Width of text without escape sequences.
pub fn text_width(t: &str) -> usize {
    if t.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return t.len();
    }
    // Most text is one grapheme per char (box drawing, accented letters, CJK): sum the chars
    // unless one of them can join a cluster.
    let mut w = 0usize;
    for c in t.chars() {
        if joins_cluster(c) {
            return t.graphemes(true).map(grapheme_width).sum();
        }
        w += if c == '\t' {
            TAB_WIDTH
        } else {
            c.width().unwrap_or(0).min(2)
        };
    }
    w
}

/// Whether `c` can be part of a grapheme cluster of several chars: zero-width characters
/// (combining marks, ZWJ, variation selectors), regional indicators, emoji modifiers, CR.
pub fn joins_cluster(c: char) -> bool {
    c == '\r'
        || matches!(c as u32, 0x1f1e6..=0x1f1ff | 0x1f3fb..=0x1f3ff)
        || (c != '\t' && c.width().is_none_or(|w| w == 0))
}

/// Escapes untrusted text for display: control characters (C0 but newline, DEL, C1) become
/// visible `\xNN` / `\u{NN}` text, a tab becomes three spaces, and a carriage return before a
/// newline is dropped. Newlines are kept (split the result into lines). Nothing of the input
/// is lost: every control character stays visible as its escape.
pub fn escape_control(s: &str) -> String {
    if !s.chars().any(|c| c.is_control() && c != '\n') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("   "),
            '\r' if chars.peek() == Some(&'\n') => {}
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if (0x80..0xa0).contains(&(c as u32)) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// Decodes bytes of unknown encoding for display: valid UTF-8 as itself, each invalid byte as
/// visible `\xNN`, then [`escape_control`].
pub fn escape_bytes(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    for chunk in b.utf8_chunks() {
        s.push_str(chunk.valid());
        for byte in chunk.invalid() {
            s.push_str(&format!("\\x{byte:02x}"));
        }
    }
    escape_control(&s)
}

/// The style state at a point of a styled line: the SGR sequences in force since the last
/// reset and the open hyperlink, to carry a style across a line break or into a slice.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StyleState {
    sgr: Vec<String>,
    link: Option<String>,
}

/// At most this many SGR sequences are remembered without a reset in between: enough for any
/// real style; an input that never resets cannot grow the state without bound.
const MAX_SGR: usize = 16;

impl StyleState {
    /// Applies one escape sequence.
    pub fn apply(&mut self, esc: &str) {
        if let Some(params) = esc.strip_prefix("\x1b[").and_then(|r| r.strip_suffix('m')) {
            if params.is_empty() || params == "0" || params.starts_with("0;") {
                self.sgr.clear();
                if let Some(rest) = params.strip_prefix("0;") {
                    self.sgr.push(format!("\x1b[{rest}m"));
                }
            } else {
                if self.sgr.len() >= MAX_SGR {
                    self.sgr.remove(0);
                }
                self.sgr.push(esc.to_owned());
            }
        } else if let Some(rest) = esc.strip_prefix("\x1b]8;") {
            let body = rest
                .strip_suffix("\x1b\\")
                .or_else(|| rest.strip_suffix('\x07'))
                .unwrap_or(rest);
            let url = body.split_once(';').map_or("", |(_, u)| u);
            self.link = (!url.is_empty()).then(|| esc.to_owned());
        }
    }

    /// Whether nothing is in force.
    pub fn is_plain(&self) -> bool {
        self.sgr.is_empty() && self.link.is_none()
    }

    /// The sequences that re-establish this state after a reset.
    pub fn prefix(&self) -> String {
        let mut s = String::new();
        for x in &self.sgr {
            s.push_str(x);
        }
        if let Some(l) = &self.link {
            s.push_str(l);
        }
        s
    }

    /// The SGR part of [`StyleState::prefix`] alone.
    pub fn sgr(&self) -> String {
        self.sgr.concat()
    }

    /// The open hyperlink's opening sequence, if any.
    pub fn link(&self) -> Option<&str> {
        self.link.as_deref()
    }

    /// The sequences that end this state (close the link, reset SGR), empty when plain.
    pub fn suffix(&self) -> &'static str {
        match (self.link.is_some(), self.sgr.is_empty()) {
            (true, _) => "\x1b]8;;\x1b\\\x1b[0m",
            (false, false) => RESET,
            (false, true) => "",
        }
    }
}

/// Whether an escape sequence is one the layout keeps (SGR, OSC 8, pi's cursor marker).
/// Everything else (cursor movement, screen clears, titles) is dropped from component output:
/// a component draws text, it does not drive the terminal.
pub fn is_kept_escape(esc: &str) -> bool {
    (esc.starts_with("\x1b[") && esc.ends_with('m'))
        || esc.starts_with("\x1b]8;")
        || esc == crate::component::CURSOR_MARKER
}

/// Cuts a styled line to at most `width` cells, appending `ellipsis` (plain text) when
/// something was cut and the ellipsis fits. Styles stay balanced: a cut line ends with the
/// link closed and SGR reset.
pub fn truncate(s: &str, width: usize, ellipsis: &str) -> String {
    if visible_width(s) <= width {
        return s.to_owned();
    }
    let ew = text_width(ellipsis);
    let (keep, ell) = if ew <= width {
        (width - ew, ellipsis)
    } else {
        (width, "")
    };
    let mut out = slice(s, 0, keep);
    out.push_str(ell);
    out
}

/// The cells `start..start + len` of a styled line, with the style in force at `start`
/// re-established at the front and closed at the end. A wide character cut by either edge
/// becomes spaces, so the result is exactly as wide as the cells it covers (or shorter when
/// the line ends first).
pub fn slice(s: &str, start: usize, len: usize) -> String {
    let end = start.saturating_add(len);
    let mut out = String::new();
    let mut state = StyleState::default();
    let mut col = 0usize;
    let mut started = false;
    for t in tokens(s) {
        match t {
            Token::Escape(e) => {
                if !is_kept_escape(e) {
                    continue;
                }
                state.apply(e);
                if started && col < end {
                    out.push_str(e);
                }
            }
            Token::Text(t) => {
                for g in t.graphemes(true) {
                    if col >= end {
                        break;
                    }
                    let w = grapheme_width(g);
                    if col + w <= start {
                        col += w;
                        continue;
                    }
                    if !started {
                        started = true;
                        out.push_str(&state.prefix());
                    }
                    if col < start || col + w > end {
                        // A wide character cut by an edge: its visible part as spaces.
                        let from = col.max(start);
                        let to = (col + w).min(end);
                        out.extend(std::iter::repeat_n(' ', to - from));
                    } else if g == "\t" {
                        out.push_str("   ");
                    } else {
                        out.push_str(g);
                    }
                    col += w;
                }
            }
        }
        if col >= end {
            break;
        }
    }
    if started {
        out.push_str(state.suffix());
    }
    out
}

/// Pads a styled line with spaces to `width` cells (no change when it is as wide or wider).
pub fn pad(s: &str, width: usize) -> String {
    let w = visible_width(s);
    let mut out = s.to_owned();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(w)));
    out
}

/// Word-wraps one styled line (no `\n`) to `width` cells. Breaks at spaces; a word wider than
/// the width is broken between graphemes. The style in force at a break is closed at the end
/// of the line and re-opened at the start of the next, so every line stands alone. Spaces at
/// a break are dropped. An empty line gives one empty line. `width` 0 is taken as 1.
pub fn wrap(s: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    if visible_width(s) <= width {
        return vec![s.to_owned()];
    }
    let mut w = Wrapper::new(width);
    for t in tokens(s) {
        match t {
            Token::Escape(e) => {
                if is_kept_escape(e) {
                    w.escape(e);
                }
            }
            Token::Text(t) => {
                for g in t.graphemes(true) {
                    w.grapheme(g);
                }
            }
        }
    }
    w.finish()
}

/// Wraps text that may hold newlines: each line by [`wrap`].
pub fn wrap_text(s: &str, width: usize) -> Vec<String> {
    s.split('\n').flat_map(|l| wrap(l, width)).collect()
}

struct Wrapper {
    width: usize,
    lines: Vec<String>,
    /// The current line (ends at a word boundary) and its width.
    line: String,
    line_w: usize,
    /// Whether the current line follows a break (its leading spaces are dropped).
    after_break: bool,
    /// The pending word (graphemes and escapes since the last space) and its width.
    word: String,
    word_w: usize,
    /// Style in force where the pending word starts.
    word_state: StyleState,
    /// Spaces seen before the pending word.
    spaces: usize,
    /// Style in force after everything seen.
    state: StyleState,
}

impl Wrapper {
    fn new(width: usize) -> Self {
        Self {
            width,
            lines: Vec::new(),
            line: String::new(),
            line_w: 0,
            after_break: false,
            word: String::new(),
            word_w: 0,
            word_state: StyleState::default(),
            spaces: 0,
            state: StyleState::default(),
        }
    }

    fn begin_word_if_empty(&mut self) {
        if self.word.is_empty() {
            self.word_state = self.state.clone();
        }
    }

    fn escape(&mut self, e: &str) {
        self.begin_word_if_empty();
        self.word.push_str(e);
        self.state.apply(e);
    }

    fn grapheme(&mut self, g: &str) {
        if g == " " {
            self.flush_word();
            self.spaces = self.spaces.saturating_add(1);
            return;
        }
        let gw = grapheme_width(g);
        if self.word_w + gw > self.width {
            // A word wider than a line: break it here.
            self.flush_word();
            let st = self.state.clone();
            self.break_line(st);
        }
        self.begin_word_if_empty();
        if g == "\t" {
            self.word.push_str("   ");
        } else {
            self.word.push_str(g);
        }
        self.word_w += gw;
    }

    fn flush_word(&mut self) {
        if self.word.is_empty() {
            return;
        }
        if self.line_w > 0 && self.line_w + self.spaces + self.word_w > self.width {
            let st = self.word_state.clone();
            self.break_line(st);
        } else if !self.after_break || self.line_w > 0 {
            let room = self.width.saturating_sub(self.line_w + self.word_w);
            let sp = self.spaces.min(room);
            self.line.extend(std::iter::repeat_n(' ', sp));
            self.line_w += sp;
        }
        self.line.push_str(&self.word);
        self.line_w += self.word_w;
        self.word.clear();
        self.word_w = 0;
        self.spaces = 0;
    }

    /// Ends the current line; `at` is the style in force at the break.
    fn break_line(&mut self, at: StyleState) {
        let mut done = std::mem::take(&mut self.line);
        done.push_str(at.suffix());
        self.lines.push(done);
        self.line = at.prefix();
        self.line_w = 0;
        self.spaces = 0;
        self.after_break = true;
    }

    fn finish(mut self) -> Vec<String> {
        self.flush_word();
        let mut last = std::mem::take(&mut self.line);
        last.push_str(self.state.suffix());
        self.lines.push(last);
        self.lines
    }
}

/// Removes every escape sequence: the plain text of a styled line.
pub fn strip(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for t in tokens(s) {
        if let Token::Text(t) = t {
            out.push_str(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_of_wide_and_combining_text() {
        assert_eq!(visible_width("hello"), 5);
        assert_eq!(visible_width("日本語"), 6);
        assert_eq!(visible_width("a\u{301}"), 1, "combining acute");
        assert_eq!(visible_width("👍"), 2);
        assert_eq!(visible_width("👨\u{200d}👩\u{200d}👧"), 2, "ZWJ family");
        assert_eq!(visible_width("❤\u{fe0f}"), 2, "VS16");
        assert_eq!(visible_width("🇩🇪"), 2, "flag");
        assert_eq!(visible_width("\x1b[31mred\x1b[0m"), 3);
        assert_eq!(visible_width("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), 4);
        assert_eq!(visible_width("a\tb"), 5);
        assert_eq!(visible_width(crate::CURSOR_MARKER), 0);
    }

    #[test]
    fn unterminated_escape_counts_zero_and_is_one_token() {
        let t: Vec<_> = tokens("ab\x1b[31").collect();
        assert_eq!(t, vec![Token::Text("ab"), Token::Escape("\x1b[31")]);
        assert_eq!(visible_width("ab\x1b]8;;http"), 2);
    }

    #[test]
    fn control_characters_and_invalid_utf8_are_escaped() {
        assert_eq!(escape_control("a\x1b[2Jb\x07"), "a\\x1b[2Jb\\x07");
        assert_eq!(escape_control("x\r\ny\rz"), "x\ny\\x0dz");
        assert_eq!(escape_control("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(escape_bytes(b"ok \xff\xfe end"), "ok \\xff\\xfe end");
        assert_eq!(escape_bytes("é".as_bytes()), "é");
        let e = escape_bytes(b"\x1b]0;title\x07");
        assert!(!e.contains('\x1b') && !e.contains('\x07'));
    }

    #[test]
    fn truncate_keeps_styles_balanced() {
        assert_eq!(truncate("hello world", 8, "…"), "hello w…");
        assert_eq!(truncate("short", 8, "…"), "short");
        let t = truncate("\x1b[1mbold text here\x1b[0m", 6, "…");
        assert_eq!(t, "\x1b[1mbold \x1b[0m…");
        assert_eq!(visible_width(&t), 6);
        // A wide character cut in half becomes a space.
        assert_eq!(truncate("日本語", 5, ""), "日本 ");
        assert_eq!(truncate("abc", 0, "…"), "");
    }

    #[test]
    fn slice_takes_columns_and_reopens_style() {
        assert_eq!(slice("abcdef", 2, 3), "cde");
        assert_eq!(slice("\x1b[31mabc\x1b[0mdef", 1, 3), "\x1b[31mbc\x1b[0md");
        assert_eq!(slice("日本語", 1, 3), " 本");
        assert_eq!(slice("abc", 5, 3), "");
        let l = slice("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ after", 2, 4);
        assert_eq!(l, "\x1b]8;;http://x\x1b\\nk\x1b]8;;\x1b\\ a");
    }

    #[test]
    fn wrap_breaks_at_spaces_and_carries_style() {
        assert_eq!(
            wrap("the quick brown fox", 10),
            vec!["the quick", "brown fox"]
        );
        assert_eq!(wrap("", 10), vec![""]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        let w = wrap("\x1b[1mone two three\x1b[0m four", 9);
        assert_eq!(
            w,
            vec!["\x1b[1mone two\x1b[0m", "\x1b[1mthree\x1b[0m", "four"]
        );
        for l in &w {
            assert!(visible_width(l) <= 9);
        }
        assert_eq!(
            wrap("日本語のテキスト", 5),
            vec!["日本", "語の", "テキ", "スト"]
        );
        assert_eq!(wrap("x", 0), vec!["x"]);
    }

    #[test]
    fn wrap_of_a_megabyte_line_is_bounded() {
        let line = "word ".repeat(200_000);
        let lines = wrap(&line, 80);
        assert!(lines.iter().all(|l| visible_width(l) <= 80));
        let total: usize = lines
            .iter()
            .map(|l| strip(l).split(' ').filter(|w| !w.is_empty()).count())
            .sum();
        assert_eq!(total, 200_000, "no word lost");
    }

    #[test]
    fn foreign_escapes_are_not_kept() {
        assert!(!is_kept_escape("\x1b[2J"));
        assert!(!is_kept_escape("\x1b]0;title\x07"));
        assert!(is_kept_escape("\x1b[38;5;12m"));
        assert_eq!(slice("a\x1b[2Jb", 0, 5), "ab");
    }
}
