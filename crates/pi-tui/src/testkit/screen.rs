//! A vt100 screen model with scrollback, query answers and byte-stream statistics.

use std::num::NonZeroU16;

/// How the model answers terminal queries. `None` for a query = no answer at all (the program
/// must time out and fall back to a default).
#[derive(Clone, Debug)]
pub struct Answers {
    /// Reply to `CSI 6n` with the cursor position.
    pub cursor_position: bool,
    /// Reply to `CSI c` (primary device attributes), e.g. `"\x1b[?62;22c"`.
    pub device_attributes: Option<String>,
    /// Reply to `CSI ? u` with these Kitty keyboard flags.
    pub kitty_flags: Option<u8>,
    /// Reply to `OSC 11 ; ?` with this colour, e.g. `"rgb:0000/0000/0000"`.
    pub background: Option<String>,
}

impl Default for Answers {
    /// A modern terminal: answers everything, Kitty flags 0, a black background.
    fn default() -> Self {
        Self {
            cursor_position: true,
            device_attributes: Some("\x1b[?62;22c".into()),
            kitty_flags: Some(0),
            background: Some("rgb:0000/0000/0000".into()),
        }
    }
}

impl Answers {
    /// A terminal that answers no query.
    pub fn silent() -> Self {
        Self {
            cursor_position: false,
            device_attributes: None,
            kitty_flags: None,
            background: None,
        }
    }
}

#[derive(Debug, Default)]
struct Callbacks {
    answers: Answers,
    replies: Vec<u8>,
    pending_position: usize,
    titles: Vec<String>,
}

impl vt100::Callbacks for Callbacks {
    fn unhandled_csi(
        &mut self,
        _: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let p0 = params.first().and_then(|p| p.first()).copied();
        match (i1, c, p0) {
            (None, 'c', None | Some(0)) => {
                if let Some(r) = &self.answers.device_attributes {
                    self.replies.extend_from_slice(r.as_bytes());
                }
            }
            (Some(b'?'), 'u', _) => {
                if let Some(f) = self.answers.kitty_flags {
                    self.replies
                        .extend_from_slice(format!("\x1b[?{f}u").as_bytes());
                }
            }
            _ => {}
        }
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        if params.first() == Some(&&b"11"[..])
            && params.get(1) == Some(&&b"?"[..])
            && let Some(bg) = &self.answers.background
        {
            self.replies
                .extend_from_slice(format!("\x1b]11;{bg}\x1b\\").as_bytes());
        }
    }

    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.titles
            .push(String::from_utf8_lossy(title).into_owned());
    }
}

/// A terminal screen model: feed it what a program writes, read the screen and scrollback,
/// take the replies to the program's queries.
pub struct ScreenModel {
    parser: vt100::Parser<Callbacks>,
    bytes: Vec<u8>,
    /// `CSI 3J` seen so far, with the byte offset of each.
    clears_scrollback: Vec<usize>,
    /// Tail of the previous chunk, to find sequences split across chunks.
    carry: Vec<u8>,
}

fn nz(v: u16) -> NonZeroU16 {
    NonZeroU16::new(v.max(1)).unwrap_or(NonZeroU16::MIN)
}

impl ScreenModel {
    /// A `cols`×`rows` screen with 100,000 lines of scrollback, answering queries as
    /// `answers` says.
    pub fn new(rows: u16, cols: u16, answers: Answers) -> Self {
        let cb = Callbacks {
            answers,
            ..Callbacks::default()
        };
        Self {
            parser: vt100::Parser::new_with_callbacks(nz(rows), nz(cols), 100_000, cb),
            bytes: Vec::new(),
            clears_scrollback: Vec::new(),
            carry: Vec::new(),
        }
    }

    /// Processes output of the program.
    pub fn feed(&mut self, data: &[u8]) {
        // Cursor position reports must see the cursor as it is at the query, so split there.
        let mut rest = data;
        while let Some(i) = find(rest, b"\x1b[6n") {
            self.process(&rest[..i + 4]);
            if self.parser.callbacks().answers.cursor_position {
                let (r, c) = self.parser.screen().cursor_position();
                let reply = format!("\x1b[{};{}R", r + 1, c + 1);
                self.parser
                    .callbacks_mut()
                    .replies
                    .extend_from_slice(reply.as_bytes());
            }
            rest = &rest[i + 4..];
        }
        self.process(rest);
        let _ = self.parser.callbacks().pending_position;
    }

    fn process(&mut self, data: &[u8]) {
        let base = self.bytes.len();
        let mut window = std::mem::take(&mut self.carry);
        let wlen = window.len();
        window.extend_from_slice(data);
        let mut from = 0;
        while let Some(i) = find(&window[from..], b"\x1b[3J") {
            self.clears_scrollback.push(base + from + i - wlen);
            from += i + 4;
        }
        let keep = window.len().min(3);
        self.carry = window[window.len() - keep..].to_vec();
        self.bytes.extend_from_slice(data);
        self.parser.process(data);
    }

    /// Replies owed to the program since the last call (write them to its input).
    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.parser.callbacks_mut().replies)
    }

    /// Every byte fed so far.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Byte offsets of every `CSI 3J` (clear scrollback) seen.
    pub fn scrollback_clears(&self) -> &[usize] {
        &self.clears_scrollback
    }

    /// Window titles set (OSC 0/2), in order.
    pub fn titles(&self) -> &[String] {
        &self.parser.callbacks().titles
    }

    /// Resizes the screen (as the terminal window would).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.screen_mut().set_size(nz(rows), nz(cols));
    }

    /// The size, (rows, cols).
    pub fn size(&self) -> (u16, u16) {
        let (r, c) = self.parser.screen().size();
        (r.get(), c.get())
    }

    /// The visible rows as text, trailing blanks trimmed.
    pub fn screen_lines(&self) -> Vec<String> {
        let (_, cols) = self.size();
        self.parser.screen().rows(0, cols).collect()
    }

    /// The visible screen as one string, one line per row.
    pub fn screen_text(&self) -> String {
        self.screen_lines().join("\n")
    }

    /// Rows of the screen that the terminal wrapped onto the next row (a line drawn wider
    /// than the screen).
    pub fn wrapped_rows(&self) -> Vec<u16> {
        let (rows, _) = self.size();
        (0..rows)
            .filter(|&r| self.parser.screen().row_wrapped(r))
            .collect()
    }

    /// Cursor (row, col), 0-based.
    pub fn cursor(&self) -> (u16, u16) {
        self.parser.screen().cursor_position()
    }

    /// Whether the cursor is hidden.
    pub fn cursor_hidden(&self) -> bool {
        self.parser.screen().hide_cursor()
    }

    /// Whether the alternate screen is active.
    pub fn alternate_screen(&self) -> bool {
        self.parser.screen().alternate_screen()
    }

    /// Whether bracketed paste is on.
    pub fn bracketed_paste(&self) -> bool {
        self.parser.screen().bracketed_paste()
    }

    /// Scrollback (oldest first) followed by the screen, trailing empty rows dropped: the
    /// whole transcript as a user scrolling up would read it.
    pub fn all_lines(&mut self) -> Vec<String> {
        let (_, cols) = self.size();
        let screen = self.parser.screen_mut();
        screen.set_scrollback(usize::MAX);
        let depth = screen.scrollback();
        let mut lines = Vec::with_capacity(depth);
        for off in (1..=depth).rev() {
            self.parser.screen_mut().set_scrollback(off);
            lines.push(
                self.parser
                    .screen()
                    .rows(0, cols)
                    .next()
                    .unwrap_or_default(),
            );
        }
        self.parser.screen_mut().set_scrollback(0);
        lines.extend(self.screen_lines());
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        lines
    }

    /// Asserts that each of `lines` appears exactly once in scrollback + screen, in order.
    /// Returns the first violation.
    pub fn check_each_once(&mut self, lines: &[String]) -> Result<(), OnceCheckError> {
        let all = self.all_lines();
        let mut at = 0usize;
        for l in lines {
            let n = all.iter().filter(|x| *x == l).count();
            if n != 1 {
                return Err(OnceCheckError::Count {
                    line: l.clone(),
                    count: n,
                    screen: all.join("\n"),
                });
            }
            match all[at..].iter().position(|x| x == l) {
                Some(i) => at += i + 1,
                None => {
                    return Err(OnceCheckError::OutOfOrder {
                        line: l.clone(),
                        screen: all.join("\n"),
                    });
                }
            }
        }
        Ok(())
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The first way [`ScreenModel::check_each_once`]'s lines are not each on screen once, in order;
/// the text carries the whole scrollback + screen so a failing test shows what it saw.
#[derive(Debug, thiserror::Error)]
pub enum OnceCheckError {
    /// A line appears zero or several times.
    #[error("{line:?} appears {count} times\n{screen}")]
    Count {
        /// The expected line.
        line: String,
        /// How often it appears.
        count: usize,
        /// Scrollback + screen, one line each.
        screen: String,
    },
    /// A line appears once but before an earlier expected one.
    #[error("{line:?} out of order\n{screen}")]
    OutOfOrder {
        /// The expected line.
        line: String,
        /// Scrollback + screen, one line each.
        screen: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_queries_or_stays_silent() {
        let mut m = ScreenModel::new(5, 20, Answers::default());
        m.feed(b"ab\x1b[6n\x1b[c\x1b[?u\x1b]11;?\x1b\\");
        let r = String::from_utf8(m.take_replies()).unwrap_or_default();
        assert_eq!(
            r,
            "\x1b[1;3R\x1b[?62;22c\x1b[?0u\x1b]11;rgb:0000/0000/0000\x1b\\"
        );
        let mut s = ScreenModel::new(5, 20, Answers::silent());
        s.feed(b"\x1b[6n\x1b[c\x1b[?u\x1b]11;?\x07");
        assert!(s.take_replies().is_empty());
    }

    #[test]
    fn counts_scrollback_clears_across_chunks() {
        let mut m = ScreenModel::new(5, 20, Answers::default());
        m.feed(b"x\x1b[");
        m.feed(b"3Jy\x1b[3J");
        assert_eq!(m.scrollback_clears(), &[1, 6]);
    }

    #[test]
    fn scrollback_and_screen_read_in_order() {
        let mut m = ScreenModel::new(3, 10, Answers::default());
        for i in 0..6 {
            m.feed(format!("l{i}\r\n").as_bytes());
        }
        assert_eq!(m.all_lines(), ["l0", "l1", "l2", "l3", "l4", "l5"]);
        let want: Vec<String> = ["l1", "l4"].iter().map(|s| s.to_string()).collect();
        assert!(m.check_each_once(&want).is_ok());
        let dup: Vec<String> = vec!["l9".into()];
        assert!(m.check_each_once(&dup).is_err());
    }
}
