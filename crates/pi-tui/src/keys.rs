//! Decoding the terminal's input byte stream into [`InputEvent`]s.
//!
//! [`Decoder`] is incremental: feed it whatever a `read` returned and it yields the events it
//! can complete, keeping a split escape sequence (or a split UTF-8 character) for the next
//! read, as pi-tui's `StdinBuffer` (`dist/stdin-buffer.js`) does. It understands
//!
//! - the Kitty keyboard protocol (`CSI code[:shifted[:base]] ; mods[:event] u`, functional
//!   keys as `CSI 1;mods[:event] A…` / `CSI n;mods[:event] ~`, press/repeat/release),
//! - xterm `modifyOtherKeys` (`CSI 27 ; mods ; code ~`, what tmux sends with
//!   `extended-keys`),
//! - legacy sequences: CSI and SS3 arrows, the Home/End variants, F1–F12 (xterm, VT220,
//!   Linux console), rxvt's shifted (`$`) and controlled (`^`) keys, Ctrl+letters as control
//!   bytes, Alt as an `ESC` prefix, a single 8-bit byte as Meta,
//! - bracketed paste (`CSI 200~ … CSI 201~`), focus reports (`CSI I` / `CSI O`),
//! - the terminal's replies to queries (Kitty flags, device attributes, cursor position,
//!   OSC 11 background, colour-scheme reports), surfaced as [`TerminalReply`] instead of keys.
//!
//! A lone `ESC` is ambiguous (the Escape key, or the start of an Alt sequence). The decoder
//! keeps it pending; the caller waits [`Decoder::pending_timeout`] for more bytes and then
//! calls [`Decoder::flush_pending`]. [`escape_timeout_from_env`] picks that wait as pi does.
//!
//! How characters arrive: a key that types text without Ctrl/Alt/Super arrives as the text
//! character (`A`, `!`, `é`), except that letters reported by Kitty or `modifyOtherKeys` with
//! Shift arrive lower-case with [`Modifiers::SHIFT`] (use [`printable_char`] for the text).
//! With Ctrl, Alt or Super a character key arrives as its unshifted base key (`Ctrl+c`), on
//! non-Latin layouts the Latin base-layout key when Kitty reports it (`Ctrl+С` is `Ctrl+c`).

use std::time::Duration;

use crate::input::{InputEvent, KeyCode, KeyEvent, KeyEventKind, Modifiers};
use crate::terminal_colors::{self, ColorScheme, Rgb};

const ESC: u8 = 0x1b;
const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

/// pi's wait for the rest of an escape sequence before a lone `ESC` counts as the Escape key,
/// on a local terminal (`DEFAULT_ESCAPE_TIMEOUT_MS` in pi-tui's `dist/terminal.js`).
pub const DEFAULT_ESCAPE_TIMEOUT: Duration = Duration::from_millis(10);
/// The same wait over SSH (`SSH_CONNECTION` or `SSH_TTY` set), where Alt+key's two bytes can
/// arrive in separate packets.
pub const SSH_ESCAPE_TIMEOUT: Duration = Duration::from_millis(100);
/// The wait for the rest of any other incomplete sequence (pi's `DEFAULT_SEQUENCE_TIMEOUT_MS`).
pub const SEQUENCE_TIMEOUT: Duration = Duration::from_millis(50);
/// Bytes of one bracketed paste held before the decoder hands out what it has as a
/// [`InputEvent::Paste`] and goes on collecting (so a paste whose end marker never comes
/// cannot grow memory without bound, and nothing pasted is dropped).
pub const DEFAULT_PASTE_CAP: usize = 16 * 1024 * 1024;
/// The longest control sequence (CSI, SS3) collected before it is given up as unrecognised.
const MAX_CONTROL_SEQUENCE: usize = 256;
/// The longest string sequence (OSC, DCS, APC) collected before it is given up.
const MAX_STRING_SEQUENCE: usize = 4096;

/// The escape timeout pi uses: `PI_TUI_ESC_TIMEOUT` (milliseconds, a positive number) when
/// set, else [`SSH_ESCAPE_TIMEOUT`] when `SSH_CONNECTION` or `SSH_TTY` is set, else
/// [`DEFAULT_ESCAPE_TIMEOUT`]. `env` looks a variable up (tests pass a map).
pub fn resolve_escape_timeout(env: impl Fn(&str) -> Option<String>) -> Duration {
    if let Some(configured) = env("PI_TUI_ESC_TIMEOUT")
        && let Ok(ms) = configured.trim().parse::<f64>()
        && ms.is_finite()
        && ms > 0.0
    {
        // Capped at a minute: a huge value would make Escape unusable, not wrap.
        return Duration::from_secs_f64((ms / 1000.0).min(60.0));
    }
    let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
    if set("SSH_CONNECTION") || set("SSH_TTY") {
        SSH_ESCAPE_TIMEOUT
    } else {
        DEFAULT_ESCAPE_TIMEOUT
    }
}

/// [`resolve_escape_timeout`] over the process environment.
pub fn escape_timeout_from_env() -> Duration {
    resolve_escape_timeout(|name| std::env::var(name).ok())
}

/// Sequences the application writes to the terminal to switch input modes and ask it things.
pub mod sequences {
    /// The Kitty keyboard flags pi asks for: 1 disambiguate, 2 report event types,
    /// 4 report alternate keys.
    pub const KITTY_FLAGS: u8 = 7;
    /// pi's startup negotiation: push flags 7, query the active flags (`CSI ? u`), then DA1
    /// (`CSI c`) as a sentinel: a terminal that answers DA1 without a Kitty reply does not
    /// speak the protocol, and pi falls back to `modifyOtherKeys`.
    pub const KITTY_NEGOTIATE: &str = "\x1b[>7u\x1b[?u\x1b[c";
    /// Pops one entry off the Kitty keyboard flag stack (on exit and suspend).
    pub const KITTY_POP: &str = "\x1b[<u";
    /// Enables xterm `modifyOtherKeys` mode 2.
    pub const MODIFY_OTHER_KEYS_ON: &str = "\x1b[>4;2m";
    /// Resets `modifyOtherKeys`.
    pub const MODIFY_OTHER_KEYS_OFF: &str = "\x1b[>4;0m";
    /// Enables bracketed paste.
    pub const BRACKETED_PASTE_ON: &str = "\x1b[?2004h";
    /// Disables bracketed paste.
    pub const BRACKETED_PASTE_OFF: &str = "\x1b[?2004l";
    /// Enables focus reports (`CSI I` / `CSI O`).
    pub const FOCUS_REPORTING_ON: &str = "\x1b[?1004h";
    /// Disables focus reports.
    pub const FOCUS_REPORTING_OFF: &str = "\x1b[?1004l";
    /// Asks for the default background colour (OSC 11); the reply arrives as
    /// [`TerminalReply::BackgroundColor`](super::TerminalReply::BackgroundColor).
    pub const QUERY_BACKGROUND: &str = "\x1b]11;?\x07";
    /// Asks for the colour-scheme preference (`CSI ? 996 n`); terminals that know it reply
    /// `CSI ? 997 ; 1 n` (dark) or `; 2 n` (light).
    pub const QUERY_COLOR_SCHEME: &str = "\x1b[?996n";
    /// Asks for the cursor position (`CSI 6 n`).
    pub const QUERY_CURSOR_POSITION: &str = "\x1b[6n";

    /// Pushes `flags` onto the Kitty keyboard flag stack (`CSI > flags u`).
    pub fn kitty_push(flags: u8) -> String {
        format!("\x1b[>{flags}u")
    }
}

/// Something the terminal said that is not a key: a reply to a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TerminalReply {
    /// The active Kitty keyboard flags (`CSI ? flags u`); 0 means the protocol is off.
    KittyFlags(u32),
    /// Primary device attributes (`CSI ? … c`), with the parameters.
    DeviceAttributes(String),
    /// A cursor position report (`CSI row ; col R`), 1-based.
    CursorPosition {
        /// Row, from 1.
        row: u16,
        /// Column, from 1.
        col: u16,
    },
    /// The OSC 11 reply: the default background colour.
    BackgroundColor(Rgb),
    /// A colour-scheme report (`CSI ? 997 ; 1|2 n`), solicited or not.
    ColorScheme(ColorScheme),
    /// Any other OSC, DCS or APC string (the whole sequence).
    Other(String),
}

/// One decoded item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// Input for the focused component.
    Input(InputEvent),
    /// A reply from the terminal.
    Reply(TerminalReply),
    /// A sequence this decoder does not know (mouse reports, keypad application keys,
    /// Kitty's lock and media keys, garbage); the raw text, kept so nothing is lost.
    Unrecognized(String),
}

/// The incremental input decoder. See the [module docs](self).
#[derive(Debug)]
pub struct Decoder {
    buf: Vec<u8>,
    paste: Option<Vec<u8>>,
    kitty_active: bool,
    windows_terminal: bool,
    escape_timeout: Duration,
    paste_cap: usize,
    /// A terminal that sends a Kitty CSI-u press for a plain printable key may also send the
    /// raw character; pi drops that duplicate (`pendingKittyPrintableCodepoint`).
    pending_kitty_printable: Option<char>,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A decoder with the local escape timeout and the default paste cap.
    pub fn new() -> Self {
        Self {
            buf: Vec::new(),
            paste: None,
            kitty_active: false,
            windows_terminal: false,
            escape_timeout: DEFAULT_ESCAPE_TIMEOUT,
            paste_cap: DEFAULT_PASTE_CAP,
            pending_kitty_printable: None,
        }
    }

    /// Sets the wait before a lone `ESC` is the Escape key (see [`escape_timeout_from_env`]).
    pub fn with_escape_timeout(mut self, timeout: Duration) -> Self {
        self.escape_timeout = timeout;
        self
    }

    /// Sets the paste cap in bytes (at least 64).
    pub fn with_paste_cap(mut self, bytes: usize) -> Self {
        self.paste_cap = bytes.max(64);
        self
    }

    /// Tells the decoder whether the Kitty keyboard protocol is on. It changes two ambiguous
    /// legacy forms: with Kitty on, `ESC CR` and a bare LF are Shift+Enter (Kitty's and
    /// Ghostty's mappings) rather than Alt+Enter and Ctrl+J.
    pub fn set_kitty_active(&mut self, active: bool) {
        self.kitty_active = active;
    }

    /// Whether the Kitty keyboard protocol is considered on.
    pub fn kitty_active(&self) -> bool {
        self.kitty_active
    }

    /// Tells the decoder it runs in Windows Terminal (`WT_SESSION` set, not over SSH), where
    /// a raw BS byte is Ctrl+Backspace rather than Backspace.
    pub fn set_windows_terminal(&mut self, windows_terminal: bool) {
        self.windows_terminal = windows_terminal;
    }

    /// Whether a bracketed paste is being collected.
    pub fn in_paste(&self) -> bool {
        self.paste.is_some()
    }

    /// How long to wait for more bytes before calling [`flush_pending`](Self::flush_pending):
    /// the escape timeout for a lone `ESC`, [`SEQUENCE_TIMEOUT`] for another incomplete
    /// sequence, `None` when nothing is pending (or inside a paste, which waits for its end
    /// marker).
    pub fn pending_timeout(&self) -> Option<Duration> {
        if self.paste.is_some() || self.buf.is_empty() {
            None
        } else if self.buf == [ESC] {
            Some(self.escape_timeout)
        } else {
            Some(SEQUENCE_TIMEOUT)
        }
    }

    /// Decodes `bytes`, appending completed items to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Decoded>) {
        if bytes.is_empty() {
            return;
        }
        // A read of exactly one high byte that cannot start a UTF-8 character is a Meta key
        // from a terminal that sets the eighth bit. pi's StdinBuffer converts every lone high
        // byte; we leave UTF-8 lead bytes alone so a character split across reads stays a
        // character.
        if bytes.len() == 1
            && bytes[0] >= 0x80
            && utf8_len(bytes[0]).is_none()
            && self.paste.is_none()
            && self.buf.is_empty()
        {
            self.buf.push(ESC);
            self.buf.push(bytes[0] - 0x80);
        } else {
            self.buf.extend_from_slice(bytes);
        }
        self.process(out);
    }

    /// Decodes `bytes` and returns the completed items.
    pub fn feed_vec(&mut self, bytes: &[u8]) -> Vec<Decoded> {
        let mut out = Vec::new();
        self.feed(bytes, &mut out);
        out
    }

    /// Gives up waiting: decodes whatever is pending as it stands. A lone `ESC` becomes the
    /// Escape key, `ESC` + a character Alt+that character, an incomplete UTF-8 character
    /// U+FFFD, anything else [`Decoded::Unrecognized`]. An open paste is left alone.
    pub fn flush_pending(&mut self, out: &mut Vec<Decoded>) {
        if self.paste.is_some() || self.buf.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.buf);
        self.pending_kitty_printable = None;
        if pending[0] == ESC {
            out.push(self.decode_escape(&pending));
        } else {
            // Only an incomplete UTF-8 character can be left over here.
            for ch in String::from_utf8_lossy(&pending).chars() {
                out.push(self.decode_char(ch));
            }
        }
    }

    /// Ends the input (the terminal closed, the application exits): an open paste is
    /// delivered as it stands, then [`flush_pending`](Self::flush_pending), so no byte
    /// received is lost.
    pub fn finish(&mut self, out: &mut Vec<Decoded>) {
        if let Some(mut paste) = self.paste.take() {
            // The buffer may hold the start of an end marker that never completed.
            paste.append(&mut self.buf);
            let content = take_utf8(&mut paste, true);
            if !content.is_empty() {
                out.push(Decoded::Input(InputEvent::Paste(content)));
            }
        }
        self.flush_pending(out);
    }

    /// Drops everything pending, including an open paste (after a suspend, say).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.paste = None;
        self.pending_kitty_printable = None;
    }

    fn process(&mut self, out: &mut Vec<Decoded>) {
        loop {
            if let Some(paste) = self.paste.as_mut() {
                if let Some(end) = find(&self.buf, PASTE_END) {
                    paste.extend_from_slice(&self.buf[..end]);
                    let content = take_utf8(paste, true);
                    self.paste = None;
                    self.buf.drain(..end + PASTE_END.len());
                    out.push(Decoded::Input(InputEvent::Paste(content)));
                    continue;
                }
                // Keep a tail that could be the start of the end marker.
                let keep = partial_suffix_len(&self.buf, PASTE_END);
                let move_len = self.buf.len() - keep;
                paste.extend(self.buf.drain(..move_len));
                if paste.len() >= self.paste_cap {
                    let chunk = take_utf8(paste, false);
                    if !chunk.is_empty() {
                        out.push(Decoded::Input(InputEvent::Paste(chunk)));
                    }
                }
                return;
            }
            // Work on the buffer taken out of `self`, so tokens are borrowed, not copied.
            let mut buf = std::mem::take(&mut self.buf);
            let mut pos = 0;
            let mut entered_paste = false;
            while pos < buf.len() {
                let first = buf[pos];
                if first < 0x80 && first != ESC {
                    // ASCII fast path: one byte, one character.
                    pos += 1;
                    let ch = char::from(first);
                    if self.pending_kitty_printable.take() != Some(ch) {
                        let decoded = self.decode_char(ch);
                        out.push(decoded);
                    }
                    continue;
                }
                let Some(len) = token_len(&buf[pos..]) else {
                    break;
                };
                let token = &buf[pos..pos + len];
                pos += len;
                if token == PASTE_START {
                    self.pending_kitty_printable = None;
                    self.paste = Some(Vec::new());
                    entered_paste = true;
                    break;
                }
                let decoded = if token[0] == ESC {
                    self.decode_escape(token)
                } else {
                    let ch = match std::str::from_utf8(token) {
                        Ok(text) => text.chars().next().unwrap_or(char::REPLACEMENT_CHARACTER),
                        Err(_) => char::REPLACEMENT_CHARACTER,
                    };
                    if self.pending_kitty_printable.take() == Some(ch) {
                        continue;
                    }
                    self.decode_char(ch)
                };
                out.push(decoded);
            }
            buf.drain(..pos);
            // Bytes that arrived meanwhile cannot exist (we hold `&mut self`), so the rest of
            // the buffer is exactly the unprocessed tail.
            self.buf = buf;
            if !entered_paste {
                return;
            }
        }
    }

    fn decode_char(&mut self, ch: char) -> Decoded {
        self.pending_kitty_printable = None;
        let key = |code, modifiers| Decoded::Input(InputEvent::Key(KeyEvent::new(code, modifiers)));
        match ch {
            '\r' => key(KeyCode::Enter, Modifiers::NONE),
            '\n' if self.kitty_active => key(KeyCode::Enter, Modifiers::SHIFT),
            '\n' => key(KeyCode::Char('j'), Modifiers::CTRL),
            '\t' => key(KeyCode::Tab, Modifiers::NONE),
            '\x7f' => key(KeyCode::Backspace, Modifiers::NONE),
            '\x08' if self.windows_terminal => key(KeyCode::Backspace, Modifiers::CTRL),
            '\x08' => key(KeyCode::Backspace, Modifiers::NONE),
            '\x1b' => key(KeyCode::Escape, Modifiers::NONE),
            '\0' => key(KeyCode::Char(' '), Modifiers::CTRL),
            '\x01'..='\x1a' => key(KeyCode::Char(char::from(ch as u8 + 0x60)), Modifiers::CTRL),
            '\x1c' => key(KeyCode::Char('\\'), Modifiers::CTRL),
            '\x1d' => key(KeyCode::Char(']'), Modifiers::CTRL),
            '\x1e' => key(KeyCode::Char('^'), Modifiers::CTRL),
            '\x1f' => key(KeyCode::Char('-'), Modifiers::CTRL),
            c if c.is_control() => Decoded::Unrecognized(c.to_string()),
            c => key(KeyCode::Char(c), Modifiers::NONE),
        }
    }

    fn decode_escape(&mut self, token: &[u8]) -> Decoded {
        let text = String::from_utf8_lossy(token);
        let decoded = decode_escape_text(&text, self.kitty_active)
            .unwrap_or_else(|| Decoded::Unrecognized(text.into_owned()));
        self.pending_kitty_printable = match &decoded {
            Decoded::Input(InputEvent::Key(KeyEvent {
                code: KeyCode::Char(c),
                modifiers,
                kind: KeyEventKind::Press,
            })) if modifiers.is_empty() && token.ends_with(b"u") => Some(*c),
            _ => None,
        };
        decoded
    }
}

/// The text a key event types, if it types any: a character key pressed or repeated
/// without Ctrl, Alt or Super (Shift upper-cases a letter reported lower-case). Control
/// characters never count.
pub fn printable_char(event: &KeyEvent) -> Option<char> {
    if event.kind == KeyEventKind::Release {
        return None;
    }
    let KeyCode::Char(c) = event.code else {
        return None;
    };
    let m = event.modifiers;
    if m.contains(Modifiers::CTRL) || m.contains(Modifiers::ALT) || m.contains(Modifiers::SUPER) {
        return None;
    }
    if c.is_control() {
        return None;
    }
    if m.contains(Modifiers::SHIFT) && c.is_lowercase() {
        let mut upper = c.to_uppercase();
        if let (Some(u), None) = (upper.next(), upper.next()) {
            return Some(u);
        }
    }
    Some(c)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

/// How many trailing bytes of `buf` are a proper prefix of `marker`.
fn partial_suffix_len(buf: &[u8], marker: &[u8]) -> usize {
    (1..marker.len())
        .rev()
        .find(|&n| buf.len() >= n && buf[buf.len() - n..] == marker[..n])
        .unwrap_or(0)
}

/// Takes the decodable UTF-8 out of `bytes`. With `all`, everything (invalid bytes become
/// U+FFFD); otherwise an incomplete character at the end stays in `bytes`.
fn take_utf8(bytes: &mut Vec<u8>, all: bool) -> String {
    let cut = if all {
        bytes.len()
    } else {
        match std::str::from_utf8(bytes) {
            Ok(_) => bytes.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => {
                // Invalid bytes inside: keep at most the last three bytes back in case they
                // start a character that continues in the next read.
                let tail_start = bytes.len().saturating_sub(3);
                (tail_start..bytes.len())
                    .find(|&i| bytes[i] >= 0xc0)
                    .filter(|&i| std::str::from_utf8(&bytes[i..]).is_err())
                    .unwrap_or(bytes.len())
            }
        }
    };
    let rest = bytes.split_off(cut);
    let text = String::from_utf8_lossy(bytes).into_owned();
    *bytes = rest;
    text
}

/// The length of the UTF-8 character a lead byte starts, or `None` for a byte that cannot
/// start one.
fn utf8_len(lead: u8) -> Option<usize> {
    match lead {
        0x00..=0x7f => Some(1),
        0xc2..=0xdf => Some(2),
        0xe0..=0xef => Some(3),
        0xf0..=0xf4 => Some(4),
        _ => None,
    }
}

/// The length of one plain character at the start of `b`: `Some(n)` when complete (or
/// invalid: then one byte, decoded as U+FFFD), `None` when more bytes are needed.
fn char_token_len(b: &[u8]) -> Option<usize> {
    let Some(len) = utf8_len(b[0]) else {
        return Some(1);
    };
    let available = b.len().min(len);
    if b[1..available].iter().any(|&c| c & 0xc0 != 0x80) {
        return Some(1);
    }
    if b.len() < len {
        return None;
    }
    if std::str::from_utf8(&b[..len]).is_err() {
        return Some(1);
    }
    Some(len)
}

/// The length of the token at the start of `b` (a character or one escape sequence), or
/// `None` when it is incomplete.
fn token_len(b: &[u8]) -> Option<usize> {
    if b[0] != ESC {
        return char_token_len(b);
    }
    let &intro = b.get(1)?;
    match intro {
        b'[' => csi_len(b),
        b']' => string_len(b, true),
        b'P' | b'_' | b'^' | b'X' => string_len(b, false),
        b'O' => {
            if b.len() >= 3 {
                Some(3)
            } else {
                None
            }
        }
        ESC => match b.get(2) {
            // WezTerm sends the Escape press raw and its release as CSI u, back to back:
            // `ESC ESC [27;1:3u` is Escape followed by a sequence, not Alt+Escape.
            Some(b'[' | b']' | b'O' | b'P' | b'_') => Some(1),
            Some(_) => Some(2),
            None => None,
        },
        _ => char_token_len(&b[1..]).map(|n| n + 1),
    }
}

fn csi_len(b: &[u8]) -> Option<usize> {
    if b.len() < 3 {
        return None;
    }
    if b[2] == b'M' {
        // X10 mouse: CSI M and three raw bytes.
        return if b.len() >= 6 { Some(6) } else { None };
    }
    for i in 2..b.len() {
        let c = b[i];
        match c {
            0x40..=0x7e => {
                // `CSI [` opens the Linux console's function keys (`CSI [ A`).
                if c == b'[' && i == 2 {
                    continue;
                }
                return Some(i + 1);
            }
            // rxvt ends shifted keys with `$` (`CSI 2 $`).
            b'$' if i > 2 && b[2..i].iter().all(u8::is_ascii_digit) => return Some(i + 1),
            0x20..=0x3f => {}
            // A control byte or ESC inside: the sequence is broken; end it before that byte.
            _ => return Some(i),
        }
        if i >= MAX_CONTROL_SEQUENCE {
            return Some(i + 1);
        }
    }
    None
}

fn string_len(b: &[u8], bel_ends: bool) -> Option<usize> {
    let mut i = 2;
    while i < b.len() {
        match b[i] {
            0x07 if bel_ends => return Some(i + 1),
            ESC => match b.get(i + 1) {
                Some(b'\\') => return Some(i + 2),
                Some(_) => return Some(i),
                None => return None,
            },
            _ => {}
        }
        if i >= MAX_STRING_SEQUENCE {
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

fn key(code: KeyCode, modifiers: Modifiers) -> Decoded {
    Decoded::Input(InputEvent::Key(KeyEvent::new(code, modifiers)))
}

fn key_kind(code: KeyCode, modifiers: Modifiers, kind: KeyEventKind) -> Decoded {
    Decoded::Input(InputEvent::Key(KeyEvent {
        code,
        modifiers,
        kind,
    }))
}

/// Decodes one complete escape token; `None` means unrecognised.
fn decode_escape_text(text: &str, kitty_active: bool) -> Option<Decoded> {
    let rest = &text[1..];
    if rest.is_empty() {
        return Some(key(KeyCode::Escape, Modifiers::NONE));
    }
    if let Some(body) = rest.strip_prefix('[')
        && !body.is_empty()
    {
        return decode_csi(body);
    }
    if rest.starts_with(']') && rest.len() > 1 {
        if let Some(rgb) = terminal_colors::parse_osc11_reply(text) {
            return Some(Decoded::Reply(TerminalReply::BackgroundColor(rgb)));
        }
        return Some(Decoded::Reply(TerminalReply::Other(text.to_owned())));
    }
    if rest.len() > 1
        && (rest.starts_with('P')
            || rest.starts_with('_')
            || rest.starts_with('^')
            || rest.starts_with('X'))
    {
        return Some(Decoded::Reply(TerminalReply::Other(text.to_owned())));
    }
    if let Some(body) = rest.strip_prefix('O')
        && !body.is_empty()
    {
        return decode_ss3(body);
    }
    // ESC followed by one character: Alt + that key.
    let mut chars = rest.chars();
    let ch = chars.next()?;
    if chars.next().is_some() {
        return None;
    }
    let alt = Modifiers::ALT;
    Some(match ch {
        '\r' if kitty_active => key(KeyCode::Enter, Modifiers::SHIFT),
        '\r' => key(KeyCode::Enter, alt),
        '\n' => key(KeyCode::Enter, alt),
        '\t' => key(KeyCode::Tab, alt),
        ' ' => key(KeyCode::Char(' '), alt),
        '\x7f' | '\x08' => key(KeyCode::Backspace, alt),
        '\x1b' => key(KeyCode::Escape, alt),
        '\0' => key(KeyCode::Char(' '), Modifiers::CTRL | alt),
        '\x01'..='\x1a' => key(
            KeyCode::Char(char::from(ch as u8 + 0x60)),
            Modifiers::CTRL | alt,
        ),
        '\x1c' => key(KeyCode::Char('\\'), Modifiers::CTRL | alt),
        '\x1d' => key(KeyCode::Char(']'), Modifiers::CTRL | alt),
        '\x1e' => key(KeyCode::Char('^'), Modifiers::CTRL | alt),
        '\x1f' => key(KeyCode::Char('-'), Modifiers::CTRL | alt),
        c if c.is_control() => return None,
        // Alt with a shifted letter: the base key with Shift, like every other Alt combo.
        c if c.is_ascii_uppercase() => key(
            KeyCode::Char(c.to_ascii_lowercase()),
            Modifiers::SHIFT | alt,
        ),
        c => key(KeyCode::Char(c), alt),
    })
}

fn decode_ss3(body: &str) -> Option<Decoded> {
    let none = Modifiers::NONE;
    let ctrl = Modifiers::CTRL;
    Some(match body {
        "A" => key(KeyCode::Up, none),
        "B" => key(KeyCode::Down, none),
        "C" => key(KeyCode::Right, none),
        "D" => key(KeyCode::Left, none),
        "H" => key(KeyCode::Home, none),
        "F" => key(KeyCode::End, none),
        "P" => key(KeyCode::F(1), none),
        "Q" => key(KeyCode::F(2), none),
        "R" => key(KeyCode::F(3), none),
        "S" => key(KeyCode::F(4), none),
        "M" => key(KeyCode::Enter, none),
        // rxvt's Ctrl+arrows.
        "a" => key(KeyCode::Up, ctrl),
        "b" => key(KeyCode::Down, ctrl),
        "c" => key(KeyCode::Right, ctrl),
        "d" => key(KeyCode::Left, ctrl),
        _ => return None,
    })
}

/// Modifiers from a protocol's modifier parameter (1 + bits: shift 1, alt 2, ctrl 4, super 8,
/// hyper 16, meta 32, caps lock 64, num lock 128). Locks are ignored; `None` for hyper/meta,
/// which pi does not bind either. The second value says whether Caps Lock was on.
fn modifiers_from_param(param: u32) -> Option<(Modifiers, bool)> {
    let bits = param.checked_sub(1)?;
    if bits > 255 || bits & (16 | 32) != 0 {
        return None;
    }
    let mut m = Modifiers::NONE;
    if bits & 1 != 0 {
        m = m | Modifiers::SHIFT;
    }
    if bits & 2 != 0 {
        m = m | Modifiers::ALT;
    }
    if bits & 4 != 0 {
        m = m | Modifiers::CTRL;
    }
    if bits & 8 != 0 {
        m = m | Modifiers::SUPER;
    }
    Some((m, bits & 64 != 0))
}

fn event_kind(param: Option<&str>) -> KeyEventKind {
    match param {
        Some("2") => KeyEventKind::Repeat,
        Some("3") => KeyEventKind::Release,
        _ => KeyEventKind::Press,
    }
}

fn parse_num(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 9 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Splits `mods[:event]` into the modifier number (1 when empty) and the event type.
fn split_mods(field: Option<&str>) -> Option<(u32, Option<&str>)> {
    match field {
        None | Some("") => Some((1, None)),
        Some(f) => {
            let mut it = f.splitn(2, ':');
            let m = it.next().unwrap_or("");
            let m = if m.is_empty() { 1 } else { parse_num(m)? };
            Some((m, it.next()))
        }
    }
}

/// Keys for Kitty's functional codepoints and the plain control codepoints.
fn special_codepoint(cp: u32) -> Option<KeyCode> {
    Some(match cp {
        27 => KeyCode::Escape,
        9 => KeyCode::Tab,
        13 | 57414 => KeyCode::Enter,
        127 | 8 => KeyCode::Backspace,
        57417 => KeyCode::Left,
        57418 => KeyCode::Right,
        57419 => KeyCode::Up,
        57420 => KeyCode::Down,
        57421 => KeyCode::PageUp,
        57422 => KeyCode::PageDown,
        57423 => KeyCode::Home,
        57424 => KeyCode::End,
        57425 => KeyCode::Insert,
        57426 => KeyCode::Delete,
        // F13–F35.
        57376..=57398 => KeyCode::F(u8::try_from(cp - 57376 + 13).ok()?),
        _ => return None,
    })
}

/// Keypad keys that type a character, as that character.
fn keypad_char(cp: u32) -> Option<char> {
    Some(match cp {
        57399..=57408 => char::from_digit(cp - 57399, 10)?,
        57409 => '.',
        57410 => '/',
        57411 => '*',
        57412 => '-',
        57413 => '+',
        57415 => '=',
        57416 => ',',
        _ => return None,
    })
}

/// Whether pi treats a character as a "known" key (a Latin letter, digit or one of its
/// symbol keys): for those the reported codepoint wins over the base-layout key.
fn is_known_key_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?".contains(c)
}

/// Builds the event for a character key under Kitty or `modifyOtherKeys`.
fn char_key_event(
    base: char,
    shifted: Option<char>,
    base_layout: Option<char>,
    mut modifiers: Modifiers,
    caps_lock: bool,
    kind: KeyEventKind,
) -> Decoded {
    let shortcut = modifiers.contains(Modifiers::CTRL)
        || modifiers.contains(Modifiers::ALT)
        || modifiers.contains(Modifiers::SUPER);
    let mut code = base;
    if shortcut {
        // Shortcuts name the key: lower-case letters, the base-layout key for non-Latin
        // layouts.
        if code.is_ascii_uppercase() {
            code = code.to_ascii_lowercase();
            modifiers = modifiers | Modifiers::SHIFT;
        }
        if !is_known_key_char(code)
            && let Some(b) = base_layout
        {
            code = b;
        }
    } else if modifiers.contains(Modifiers::SHIFT) {
        if code.is_ascii_uppercase() {
            code = code.to_ascii_lowercase();
        } else if !code.is_alphabetic()
            && let Some(s) = shifted
        {
            // Shift+1 with the shifted key reported is simply `!`.
            code = s;
            modifiers = Modifiers::NONE;
        }
    } else if caps_lock && code.is_lowercase() {
        // Caps Lock types the upper-case letter.
        code = code.to_uppercase().next().unwrap_or(code);
    }
    key_kind(KeyCode::Char(code), modifiers, kind)
}

fn decode_csi(body: &str) -> Option<Decoded> {
    let final_byte = body.chars().last()?;
    let params = &body[..body.len() - final_byte.len_utf8()];
    let none = Modifiers::NONE;
    match (params, final_byte) {
        ("", 'I') => return Some(Decoded::Input(InputEvent::FocusGained)),
        ("", 'O') => return Some(Decoded::Input(InputEvent::FocusLost)),
        ("", 'Z') => return Some(key(KeyCode::Tab, Modifiers::SHIFT)),
        ("", 'a') => return Some(key(KeyCode::Up, Modifiers::SHIFT)),
        ("", 'b') => return Some(key(KeyCode::Down, Modifiers::SHIFT)),
        ("", 'c') => return Some(key(KeyCode::Right, Modifiers::SHIFT)),
        ("", 'd') => return Some(key(KeyCode::Left, Modifiers::SHIFT)),
        // The Linux console's F1–F5.
        ("[", 'A') => return Some(key(KeyCode::F(1), none)),
        ("[", 'B') => return Some(key(KeyCode::F(2), none)),
        ("[", 'C') => return Some(key(KeyCode::F(3), none)),
        ("[", 'D') => return Some(key(KeyCode::F(4), none)),
        ("[", 'E') => return Some(key(KeyCode::F(5), none)),
        ("[5", '~') => return Some(key(KeyCode::PageUp, none)),
        ("[6", '~') => return Some(key(KeyCode::PageDown, none)),
        _ => {}
    }
    if let Some(query) = params.strip_prefix('?') {
        return match final_byte {
            'u' => parse_num(query).map(|f| Decoded::Reply(TerminalReply::KittyFlags(f))),
            'c' => Some(Decoded::Reply(TerminalReply::DeviceAttributes(
                query.to_owned(),
            ))),
            'n' => terminal_colors::parse_color_scheme_report(&format!("\x1b[{body}"))
                .map(|s| Decoded::Reply(TerminalReply::ColorScheme(s))),
            _ => None,
        };
    }
    if !params
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b';' || b == b':')
    {
        return None;
    }
    match final_byte {
        'u' => decode_kitty_u(params),
        '~' => decode_tilde(params),
        'A' | 'B' | 'C' | 'D' | 'H' | 'F' | 'P' | 'Q' | 'S' => {
            let code = match final_byte {
                'A' => KeyCode::Up,
                'B' => KeyCode::Down,
                'C' => KeyCode::Right,
                'D' => KeyCode::Left,
                'H' => KeyCode::Home,
                'F' => KeyCode::End,
                'P' => KeyCode::F(1),
                'Q' => KeyCode::F(2),
                _ => KeyCode::F(4),
            };
            if params.is_empty() {
                return Some(key(code, none));
            }
            let mut fields = params.splitn(2, ';');
            if parse_num(fields.next()?)? != 1 {
                return None;
            }
            let (m, ev) = split_mods(fields.next())?;
            let (mods, _) = modifiers_from_param(m)?;
            Some(key_kind(code, mods, event_kind(ev)))
        }
        'R' => {
            let mut fields = params.split(';');
            let row = u16::try_from(parse_num(fields.next()?)?).ok()?;
            let col = u16::try_from(parse_num(fields.next()?)?).ok()?;
            if fields.next().is_some() {
                return None;
            }
            Some(Decoded::Reply(TerminalReply::CursorPosition { row, col }))
        }
        '$' | '^' => {
            // rxvt: `$` adds Shift, `^` adds Ctrl to the VT220 keys.
            let code = vt220_key(parse_num(params)?)?;
            let mods = if final_byte == '$' {
                Modifiers::SHIFT
            } else {
                Modifiers::CTRL
            };
            Some(key(code, mods))
        }
        _ => None,
    }
}

/// VT220-style `CSI n ~` key numbers.
fn vt220_key(n: u32) -> Option<KeyCode> {
    Some(match n {
        1 | 7 => KeyCode::Home,
        2 => KeyCode::Insert,
        3 => KeyCode::Delete,
        4 | 8 => KeyCode::End,
        5 => KeyCode::PageUp,
        6 => KeyCode::PageDown,
        11..=15 => KeyCode::F(u8::try_from(n - 10).ok()?),
        17..=21 => KeyCode::F(u8::try_from(n - 11).ok()?),
        23 | 24 => KeyCode::F(u8::try_from(n - 12).ok()?),
        _ => return None,
    })
}

fn decode_tilde(params: &str) -> Option<Decoded> {
    let fields: Vec<&str> = params.split(';').collect();
    if fields.len() == 3 && fields[0] == "27" {
        // modifyOtherKeys: CSI 27 ; mods ; code ~
        let (mods, caps) = modifiers_from_param(parse_num(fields[1])?)?;
        let cp = parse_num(fields[2])?;
        if let Some(code) = special_codepoint(cp) {
            return Some(key(code, mods));
        }
        let ch = char::from_u32(cp).filter(|c| !c.is_control())?;
        return Some(char_key_event(
            ch,
            None,
            None,
            mods,
            caps,
            KeyEventKind::Press,
        ));
    }
    if fields.len() > 2 {
        return None;
    }
    let code = vt220_key(parse_num(fields[0])?)?;
    let (m, ev) = split_mods(fields.get(1).copied())?;
    let (mods, _) = modifiers_from_param(m)?;
    Some(key_kind(code, mods, event_kind(ev)))
}

fn decode_kitty_u(params: &str) -> Option<Decoded> {
    // code[:shifted[:base]] [; mods[:event] [; text]] u
    let mut fields = params.split(';');
    let key_field = fields.next()?;
    let mods_field = fields.next();
    let mut codes = key_field.split(':');
    let cp = parse_num(codes.next()?)?;
    let shifted = codes
        .next()
        .filter(|s| !s.is_empty())
        .and_then(parse_num)
        .and_then(char::from_u32);
    let base_layout = codes.next().and_then(parse_num).and_then(char::from_u32);
    let (m, ev) = split_mods(mods_field)?;
    let (mods, caps) = modifiers_from_param(m)?;
    let kind = event_kind(ev);
    if let Some(code) = special_codepoint(cp) {
        return Some(key_kind(code, mods, kind));
    }
    let ch = match keypad_char(cp) {
        Some(c) => c,
        None => {
            if (57344..=63743).contains(&cp) {
                // Kitty's other functional keys (locks, media, modifiers alone).
                return None;
            }
            char::from_u32(cp).filter(|c| !c.is_control())?
        }
    };
    Some(char_key_event(ch, shifted, base_layout, mods, caps, kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode, modifiers: Modifiers) -> Decoded {
        key(code, modifiers)
    }

    fn decode_all(bytes: &[u8]) -> Vec<Decoded> {
        let mut d = Decoder::new();
        let mut out = d.feed_vec(bytes);
        d.flush_pending(&mut out);
        out
    }

    fn one(bytes: &str) -> Decoded {
        let out = decode_all(bytes.as_bytes());
        assert_eq!(out.len(), 1, "{bytes:?} gave {out:?}");
        out.into_iter()
            .next()
            .unwrap_or(Decoded::Unrecognized(String::new()))
    }

    const S: Modifiers = Modifiers::SHIFT;
    const A: Modifiers = Modifiers::ALT;
    const C: Modifiers = Modifiers::CTRL;
    const N: Modifiers = Modifiers::NONE;

    #[test]
    fn legacy_table() {
        use KeyCode::*;
        let table: &[(&str, Decoded)] = &[
            ("a", k(Char('a'), N)),
            ("A", k(Char('A'), N)),
            ("é", k(Char('é'), N)),
            ("\r", k(Enter, N)),
            ("\n", k(Char('j'), C)),
            ("\t", k(Tab, N)),
            ("\x7f", k(Backspace, N)),
            ("\x08", k(Backspace, N)),
            ("\x01", k(Char('a'), C)),
            ("\x03", k(Char('c'), C)),
            ("\x1a", k(Char('z'), C)),
            ("\x00", k(Char(' '), C)),
            ("\x1d", k(Char(']'), C)),
            ("\x1f", k(Char('-'), C)),
            ("\x1b", k(Escape, N)),
            ("\x1bb", k(Char('b'), A)),
            ("\x1bB", k(Char('b'), S | A)),
            ("\x1bd", k(Char('d'), A)),
            ("\x1b\r", k(Enter, A)),
            ("\x1b\x7f", k(Backspace, A)),
            ("\x1b\x1d", k(Char(']'), C | A)),
            ("\x1b\x01", k(Char('a'), C | A)),
            ("\x1b ", k(Char(' '), A)),
            ("\x1b[A", k(Up, N)),
            ("\x1b[B", k(Down, N)),
            ("\x1b[C", k(Right, N)),
            ("\x1b[D", k(Left, N)),
            ("\x1bOA", k(Up, N)),
            ("\x1bOD", k(Left, N)),
            ("\x1b[H", k(Home, N)),
            ("\x1b[F", k(End, N)),
            ("\x1bOH", k(Home, N)),
            ("\x1bOF", k(End, N)),
            ("\x1b[1~", k(Home, N)),
            ("\x1b[7~", k(Home, N)),
            ("\x1b[4~", k(End, N)),
            ("\x1b[8~", k(End, N)),
            ("\x1b[2~", k(Insert, N)),
            ("\x1b[3~", k(Delete, N)),
            ("\x1b[5~", k(PageUp, N)),
            ("\x1b[6~", k(PageDown, N)),
            ("\x1b[[5~", k(PageUp, N)),
            ("\x1bOP", k(F(1), N)),
            ("\x1bOQ", k(F(2), N)),
            ("\x1bOR", k(F(3), N)),
            ("\x1bOS", k(F(4), N)),
            ("\x1b[11~", k(F(1), N)),
            ("\x1b[15~", k(F(5), N)),
            ("\x1b[17~", k(F(6), N)),
            ("\x1b[21~", k(F(10), N)),
            ("\x1b[23~", k(F(11), N)),
            ("\x1b[24~", k(F(12), N)),
            ("\x1b[[A", k(F(1), N)),
            ("\x1b[[E", k(F(5), N)),
            ("\x1b[Z", k(Tab, S)),
            ("\x1b[1;5C", k(Right, C)),
            ("\x1b[1;3D", k(Left, A)),
            ("\x1b[1;2A", k(Up, S)),
            ("\x1b[1;5H", k(Home, C)),
            ("\x1b[3;5~", k(Delete, C)),
            ("\x1b[5;5~", k(PageUp, C)),
            ("\x1b[a", k(Up, S)),
            ("\x1bOc", k(Right, C)),
            ("\x1b[2$", k(Insert, S)),
            ("\x1b[7^", k(Home, C)),
            ("\x1bOM", k(Enter, N)),
        ];
        for (input, expected) in table {
            assert_eq!(&one(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn kitty_table() {
        use KeyCode::*;
        let table: &[(&str, Decoded)] = &[
            ("\x1b[97u", k(Char('a'), N)),
            ("\x1b[97;2u", k(Char('a'), S)),
            ("\x1b[97:65;2u", k(Char('a'), S)),
            ("\x1b[49:33;2u", k(Char('!'), N)),
            ("\x1b[99;5u", k(Char('c'), C)),
            ("\x1b[112;6u", k(Char('p'), S | C)),
            ("\x1b[107;9u", k(Char('k'), Modifiers::SUPER)),
            ("\x1b[13u", k(Enter, N)),
            ("\x1b[13;2u", k(Enter, S)),
            ("\x1b[13;3u", k(Enter, A)),
            ("\x1b[57414u", k(Enter, N)),
            ("\x1b[9;2u", k(Tab, S)),
            ("\x1b[27u", k(Escape, N)),
            ("\x1b[127u", k(Backspace, N)),
            ("\x1b[127;5u", k(Backspace, C)),
            ("\x1b[32;2u", k(Char(' '), S)),
            ("\x1b[45;5u", k(Char('-'), C)),
            ("\x1b[57399u", k(Char('0'), N)),
            ("\x1b[57417u", k(Left, N)),
            ("\x1b[57376u", k(F(13), N)),
            // Caps Lock (bit 64) types upper case; with Ctrl it is still Ctrl+c.
            ("\x1b[97;65u", k(Char('A'), N)),
            ("\x1b[99;69u", k(Char('c'), C)),
            // A Cyrillic layout's Ctrl+С with the base-layout key `c`.
            ("\x1b[1089::99;5u", k(Char('c'), C)),
            ("\x1b[1089u", k(Char('с'), N)),
            ("\x1b[1;5A", k(Up, C)),
            ("\x1b[1;2F", k(End, S)),
            ("\x1b[3;3~", k(Delete, A)),
            ("\x1b[1;1P", k(F(1), N)),
        ];
        for (input, expected) in table {
            assert_eq!(&one(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn kitty_event_types() {
        let ev = |code, modifiers, kind| {
            Decoded::Input(InputEvent::Key(KeyEvent {
                code,
                modifiers,
                kind,
            }))
        };
        assert_eq!(
            one("\x1b[97;1:2u"),
            ev(KeyCode::Char('a'), N, KeyEventKind::Repeat)
        );
        assert_eq!(
            one("\x1b[97;1:3u"),
            ev(KeyCode::Char('a'), N, KeyEventKind::Release)
        );
        assert_eq!(
            one("\x1b[1;1:3A"),
            ev(KeyCode::Up, N, KeyEventKind::Release)
        );
        assert_eq!(
            one("\x1b[3;1:2~"),
            ev(KeyCode::Delete, N, KeyEventKind::Repeat)
        );
        assert_eq!(
            one("\x1b[13;2:1u"),
            ev(KeyCode::Enter, S, KeyEventKind::Press)
        );
    }

    #[test]
    fn modify_other_keys_table() {
        use KeyCode::*;
        let table: &[(&str, Decoded)] = &[
            ("\x1b[27;5;99~", k(Char('c'), C)),
            ("\x1b[27;2;13~", k(Enter, S)),
            ("\x1b[27;5;13~", k(Enter, C)),
            ("\x1b[27;3;13~", k(Enter, A)),
            ("\x1b[27;2;65~", k(Char('a'), S)),
            ("\x1b[27;6;80~", k(Char('p'), S | C)),
            ("\x1b[27;6;112~", k(Char('p'), S | C)),
            ("\x1b[27;2;33~", k(Char('!'), S)),
            ("\x1b[27;5;9~", k(Tab, C)),
            ("\x1b[27;5;45~", k(Char('-'), C)),
            ("\x1b[27;3;127~", k(Backspace, A)),
            ("\x1b[27;2;32~", k(Char(' '), S)),
        ];
        for (input, expected) in table {
            assert_eq!(&one(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn kitty_mode_changes_ambiguous_legacy_forms() {
        let mut d = Decoder::new();
        d.set_kitty_active(true);
        assert_eq!(d.feed_vec(b"\n"), vec![k(KeyCode::Enter, S)]);
        assert_eq!(d.feed_vec(b"\x1b\r"), vec![k(KeyCode::Enter, S)]);
        let mut w = Decoder::new();
        w.set_windows_terminal(true);
        assert_eq!(w.feed_vec(b"\x08"), vec![k(KeyCode::Backspace, C)]);
    }

    #[test]
    fn printable_text_of_events() {
        let ev = |code, m| KeyEvent::new(code, m);
        assert_eq!(printable_char(&ev(KeyCode::Char('a'), S)), Some('A'));
        assert_eq!(printable_char(&ev(KeyCode::Char('a'), N)), Some('a'));
        assert_eq!(printable_char(&ev(KeyCode::Char('1'), S)), Some('1'));
        assert_eq!(printable_char(&ev(KeyCode::Char('a'), C)), None);
        assert_eq!(printable_char(&ev(KeyCode::Enter, N)), None);
        let release = KeyEvent {
            kind: KeyEventKind::Release,
            ..ev(KeyCode::Char('a'), N)
        };
        assert_eq!(printable_char(&release), None);
    }

    #[test]
    fn sequences_split_across_reads() {
        let input = "a\x1b[1;5Cé\x1b[97;5u\x1bOP\x1b[200~pa\nste\x1b[201~z".as_bytes();
        let whole = decode_all(input);
        assert_eq!(whole.len(), 7, "{whole:?}");
        for split in 1..input.len() {
            let mut d = Decoder::new();
            let mut out = d.feed_vec(&input[..split]);
            out.extend(d.feed_vec(&input[split..]));
            d.flush_pending(&mut out);
            assert_eq!(out, whole, "split at {split}");
        }
        // Byte by byte.
        let mut d = Decoder::new();
        let mut out = Vec::new();
        for b in input {
            d.feed(std::slice::from_ref(b), &mut out);
        }
        assert_eq!(out, whole);
    }

    #[test]
    fn lone_escape_waits_for_the_timeout() {
        let mut d = Decoder::new().with_escape_timeout(Duration::from_millis(100));
        assert!(d.feed_vec(b"\x1b").is_empty());
        assert_eq!(d.pending_timeout(), Some(Duration::from_millis(100)));
        // More bytes in time: Alt+x.
        assert_eq!(d.feed_vec(b"x"), vec![k(KeyCode::Char('x'), A)]);
        assert_eq!(d.pending_timeout(), None);
        // No more bytes: Escape.
        assert!(d.feed_vec(b"\x1b").is_empty());
        let mut out = Vec::new();
        d.flush_pending(&mut out);
        assert_eq!(out, vec![k(KeyCode::Escape, N)]);
        // An incomplete CSI waits the sequence timeout, then is given up as Alt+[.
        assert!(d.feed_vec(b"\x1b[").is_empty());
        assert_eq!(d.pending_timeout(), Some(SEQUENCE_TIMEOUT));
        let mut out = Vec::new();
        d.flush_pending(&mut out);
        assert_eq!(out, vec![k(KeyCode::Char('['), A)]);
        // A half sequence stays unrecognised, not typed.
        assert!(d.feed_vec(b"\x1b[1;5").is_empty());
        let mut out = Vec::new();
        d.flush_pending(&mut out);
        assert_eq!(out, vec![Decoded::Unrecognized("\x1b[1;5".into())]);
    }

    #[test]
    fn escape_timeout_resolution() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(resolve_escape_timeout(env(&[])), DEFAULT_ESCAPE_TIMEOUT);
        assert_eq!(
            resolve_escape_timeout(env(&[("SSH_CONNECTION", "1.2.3.4 5 6.7.8.9 22")])),
            SSH_ESCAPE_TIMEOUT
        );
        assert_eq!(
            resolve_escape_timeout(env(&[("SSH_TTY", "/dev/pts/3")])),
            SSH_ESCAPE_TIMEOUT
        );
        assert_eq!(
            resolve_escape_timeout(env(&[("PI_TUI_ESC_TIMEOUT", "25"), ("SSH_TTY", "x")])),
            Duration::from_millis(25)
        );
        // Not a positive number: ignored.
        for bad in ["0", "-5", "abc", "NaN", ""] {
            let pairs: &'static [(&'static str, &'static str)] = match bad {
                "0" => &[("PI_TUI_ESC_TIMEOUT", "0")],
                "-5" => &[("PI_TUI_ESC_TIMEOUT", "-5")],
                "abc" => &[("PI_TUI_ESC_TIMEOUT", "abc")],
                "NaN" => &[("PI_TUI_ESC_TIMEOUT", "NaN")],
                _ => &[("PI_TUI_ESC_TIMEOUT", "")],
            };
            assert_eq!(
                resolve_escape_timeout(env(pairs)),
                DEFAULT_ESCAPE_TIMEOUT,
                "{bad}"
            );
        }
        assert_eq!(
            resolve_escape_timeout(env(&[("PI_TUI_ESC_TIMEOUT", "1e300")])),
            Duration::from_secs(60)
        );
    }

    #[test]
    fn bracketed_paste() {
        let out = decode_all(b"x\x1b[200~line 1\r\nline \x1b[A 2\x1b[201~y");
        assert_eq!(
            out,
            vec![
                k(KeyCode::Char('x'), N),
                Decoded::Input(InputEvent::Paste("line 1\r\nline \x1b[A 2".into())),
                k(KeyCode::Char('y'), N),
            ]
        );
        // The end marker split across reads.
        let mut d = Decoder::new();
        let mut out = d.feed_vec(b"\x1b[200~abc\x1b[20");
        assert!(out.is_empty());
        assert!(d.in_paste());
        out.extend(d.feed_vec(b"1~"));
        assert_eq!(out, vec![Decoded::Input(InputEvent::Paste("abc".into()))]);
    }

    #[test]
    fn finish_delivers_an_unterminated_paste() {
        let mut d = Decoder::new();
        let mut out = d.feed_vec(b"\x1b[200~half a paste\x1b[20");
        assert!(out.is_empty());
        d.flush_pending(&mut out);
        assert!(out.is_empty(), "a timeout does not end a paste");
        d.finish(&mut out);
        assert_eq!(
            out,
            vec![Decoded::Input(InputEvent::Paste(
                "half a paste\x1b[20".into()
            ))]
        );
        assert!(!d.in_paste());
    }

    #[test]
    fn paste_over_the_cap_is_delivered_in_pieces_without_loss() {
        let mut d = Decoder::new().with_paste_cap(64);
        let body: String = (0..500)
            .map(|i| if i % 7 == 0 { 'é' } else { 'x' })
            .collect();
        let mut out = d.feed_vec(b"\x1b[200~");
        for chunk in body.as_bytes().chunks(13) {
            d.feed(chunk, &mut out);
        }
        d.feed(b"\x1b[201~", &mut out);
        assert!(out.len() > 2, "delivered in pieces: {}", out.len());
        let mut joined = String::new();
        for item in out {
            match item {
                Decoded::Input(InputEvent::Paste(p)) => joined.push_str(&p),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(joined, body);
    }

    #[test]
    fn focus_and_replies() {
        assert_eq!(one("\x1b[I"), Decoded::Input(InputEvent::FocusGained));
        assert_eq!(one("\x1b[O"), Decoded::Input(InputEvent::FocusLost));
        assert_eq!(
            one("\x1b[?7u"),
            Decoded::Reply(TerminalReply::KittyFlags(7))
        );
        assert_eq!(
            one("\x1b[?62;22c"),
            Decoded::Reply(TerminalReply::DeviceAttributes("62;22".into()))
        );
        assert_eq!(
            one("\x1b[12;40R"),
            Decoded::Reply(TerminalReply::CursorPosition { row: 12, col: 40 })
        );
        assert_eq!(
            one("\x1b]11;rgb:0000/0000/0000\x1b\\"),
            Decoded::Reply(TerminalReply::BackgroundColor(Rgb { r: 0, g: 0, b: 0 }))
        );
        assert_eq!(
            one("\x1b[?997;2n"),
            Decoded::Reply(TerminalReply::ColorScheme(ColorScheme::Light))
        );
        assert_eq!(
            one("\x1bP>|kitty(0.35)\x1b\\"),
            Decoded::Reply(TerminalReply::Other("\x1bP>|kitty(0.35)\x1b\\".into()))
        );
    }

    #[test]
    fn unknown_and_broken_input_is_kept_not_dropped() {
        assert_eq!(
            one("\x1b[<0;10;5M"),
            Decoded::Unrecognized("\x1b[<0;10;5M".into())
        );
        assert_eq!(
            one("\x1b[57358u"),
            Decoded::Unrecognized("\x1b[57358u".into())
        );
        // Invalid UTF-8 becomes U+FFFD, one per bad byte, and decoding goes on.
        assert_eq!(
            decode_all(b"\xff\xfea"),
            vec![
                k(KeyCode::Char('\u{fffd}'), N),
                k(KeyCode::Char('\u{fffd}'), N),
                k(KeyCode::Char('a'), N)
            ]
        );
        // An ESC inside a CSI ends the broken sequence; the next one still decodes.
        assert_eq!(
            decode_all(b"\x1b[12\x1b[A"),
            vec![Decoded::Unrecognized("\x1b[12".into()), k(KeyCode::Up, N)]
        );
        // Overlong numbers do not overflow.
        assert_eq!(
            one("\x1b[99999999999999999999u"),
            Decoded::Unrecognized("\x1b[99999999999999999999u".into())
        );
        // A single high byte that cannot start UTF-8 is Meta (0x81 = Meta+Ctrl+A).
        let mut d = Decoder::new();
        assert_eq!(d.feed_vec(&[0x81]), vec![k(KeyCode::Char('a'), C | A)]);
        // A UTF-8 lead byte alone waits for the rest of its character.
        assert!(d.feed_vec(&[0xc3]).is_empty());
        assert_eq!(d.feed_vec(&[0xa9]), vec![k(KeyCode::Char('é'), N)]);
    }

    #[test]
    fn unterminated_strings_are_bounded() {
        let mut d = Decoder::new();
        let mut input = b"\x1b]11;".to_vec();
        input.extend(std::iter::repeat_n(b'x', 5000));
        let mut out = Vec::new();
        for chunk in input.chunks(7) {
            d.feed(chunk, &mut out);
        }
        d.flush_pending(&mut out);
        assert!(
            matches!(&out[0], Decoded::Reply(TerminalReply::Other(s)) if s.len() == MAX_STRING_SEQUENCE + 1)
        );
        // Everything after the cap is still delivered, not dropped.
        let rest = out.len() - 1;
        assert_eq!(rest, input.len() - MAX_STRING_SEQUENCE - 1);
        assert!(d.pending_timeout().is_none());
    }

    #[test]
    fn wezterm_escape_then_release() {
        let out = decode_all(b"\x1b\x1b[27;1:3u");
        assert_eq!(
            out,
            vec![
                k(KeyCode::Escape, N),
                Decoded::Input(InputEvent::Key(KeyEvent {
                    code: KeyCode::Escape,
                    modifiers: N,
                    kind: KeyEventKind::Release
                }))
            ]
        );
    }

    #[test]
    fn kitty_printable_duplicate_is_dropped() {
        assert_eq!(decode_all(b"\x1b[97ua"), vec![k(KeyCode::Char('a'), N)]);
        assert_eq!(
            decode_all(b"\x1b[97uab"),
            vec![k(KeyCode::Char('a'), N), k(KeyCode::Char('b'), N)]
        );
    }

    #[test]
    fn push_and_pop_sequences() {
        assert_eq!(sequences::kitty_push(sequences::KITTY_FLAGS), "\x1b[>7u");
        assert_eq!(sequences::KITTY_POP, "\x1b[<u");
        assert!(sequences::KITTY_NEGOTIATE.starts_with(&sequences::kitty_push(7)));
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Bytes that look like terminal input: escape-sequence pieces, text and noise.
    fn input() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"\x1b".to_vec()),
            Just(b"\x1b[".to_vec()),
            Just(b"\x1b[200~".to_vec()),
            Just(b"\x1b[201~".to_vec()),
            Just(b"\x1b]11;rgb:1/2/3\x07".to_vec()),
            Just(b"\x1bO".to_vec()),
            Just(b";5u".to_vec()),
            Just(b"27;".to_vec()),
            Just("é日".as_bytes().to_vec()),
            prop::collection::vec(any::<u8>(), 0..6),
            "[a-zA-Z0-9;:~\\[]{0,6}".prop_map(String::into_bytes),
        ];
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    fn run(reads: &[&[u8]]) -> Vec<Decoded> {
        let mut d = Decoder::new().with_paste_cap(64);
        let mut out = Vec::new();
        for r in reads {
            d.feed(r, &mut out);
        }
        d.finish(&mut out);
        out
    }

    proptest! {
        #[test]
        fn never_panics_and_reads_do_not_matter(bytes in input(), cut in any::<prop::sample::Index>()) {
            let whole = run(&[&bytes]);
            // A read of exactly one high byte is Meta by design, so only split where neither
            // side is a lone high byte.
            let at = cut.index(bytes.len() + 1);
            let (a, b) = bytes.split_at(at);
            let lone_high = |s: &[u8]| s.len() == 1 && s[0] >= 0x80;
            prop_assume!(!lone_high(a) && !lone_high(b) && !lone_high(&bytes));
            let split = run(&[a, b]);
            // Pastes may be cut into pieces at different places; compare their joined text.
            let norm = |v: Vec<Decoded>| {
                let mut out: Vec<Decoded> = Vec::new();
                for d in v {
                    match (out.last_mut(), d) {
                        (Some(Decoded::Input(InputEvent::Paste(p))), Decoded::Input(InputEvent::Paste(q))) => p.push_str(&q),
                        (_, d) => out.push(d),
                    }
                }
                out
            };
            prop_assert_eq!(norm(whole), norm(split));
        }
    }
}
