//! Where raw input bytes become [`InputEvent`]s: the [`InputDecoder`] seam. The full key
//! decoder (Kitty keyboard protocol, `modifyOtherKeys`, the Esc timeout) implements it; the
//! [`PassThrough`] decoder here only maps the plain bytes every terminal sends, so the
//! toolkit and its example run before that decoder is plugged in.

use crate::input::{InputEvent, KeyCode, KeyEvent, Modifiers};

/// Turns raw terminal input into events. Bytes may arrive split anywhere; a decoder keeps
/// an incomplete sequence until the rest arrives.
pub trait InputDecoder {
    /// Feeds bytes read from the terminal; returns the events they complete.
    fn feed(&mut self, bytes: &[u8]) -> Vec<InputEvent>;
}

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

/// The minimal decoder: printable characters, Enter, Tab, Backspace, Ctrl+letter, a lone
/// Escape, the arrow/Home/End/PageUp/PageDown sequences of xterm, and bracketed paste.
/// Anything else of an escape sequence arrives as Escape followed by its characters.
#[derive(Debug, Default)]
pub struct PassThrough {
    buf: Vec<u8>,
    paste: Option<Vec<u8>>,
}

fn key(code: KeyCode, m: Modifiers) -> InputEvent {
    InputEvent::Key(KeyEvent::new(code, m))
}

impl InputDecoder for PassThrough {
    fn feed(&mut self, bytes: &[u8]) -> Vec<InputEvent> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut i = 0;
        let b = std::mem::take(&mut self.buf);
        while i < b.len() {
            if let Some(p) = &mut self.paste {
                if b[i..].starts_with(PASTE_END) {
                    let text = String::from_utf8_lossy(p).into_owned();
                    out.push(InputEvent::Paste(text));
                    self.paste = None;
                    i += PASTE_END.len();
                } else if PASTE_END.starts_with(&b[i..]) {
                    break;
                } else {
                    p.push(b[i]);
                    i += 1;
                }
                continue;
            }
            let rest = &b[i..];
            if rest[0] == 0x1b {
                if rest.starts_with(PASTE_START) {
                    self.paste = Some(Vec::new());
                    i += PASTE_START.len();
                    continue;
                }
                let seqs: [(&[u8], KeyCode); 12] = [
                    (b"\x1b[A", KeyCode::Up),
                    (b"\x1b[B", KeyCode::Down),
                    (b"\x1b[C", KeyCode::Right),
                    (b"\x1b[D", KeyCode::Left),
                    (b"\x1b[H", KeyCode::Home),
                    (b"\x1b[F", KeyCode::End),
                    (b"\x1b[1~", KeyCode::Home),
                    (b"\x1b[4~", KeyCode::End),
                    (b"\x1b[5~", KeyCode::PageUp),
                    (b"\x1b[6~", KeyCode::PageDown),
                    (b"\x1b[3~", KeyCode::Delete),
                    (b"\x1b[2~", KeyCode::Insert),
                ];
                if let Some((s, k)) = seqs.iter().find(|(s, _)| rest.starts_with(s)) {
                    out.push(key(*k, Modifiers::NONE));
                    i += s.len();
                    continue;
                }
                if rest.len() < 6
                    && (PASTE_START.starts_with(rest)
                        || seqs.iter().any(|(s, _)| s.starts_with(rest)))
                    && rest.len() > 1
                {
                    break; // incomplete: wait for more
                }
                out.push(key(KeyCode::Escape, Modifiers::NONE));
                i += 1;
                continue;
            }
            let c = rest[0];
            match c {
                b'\r' | b'\n' => out.push(key(KeyCode::Enter, Modifiers::NONE)),
                b'\t' => out.push(key(KeyCode::Tab, Modifiers::NONE)),
                0x7f | 0x08 => out.push(key(KeyCode::Backspace, Modifiers::NONE)),
                0x01..=0x1a => out.push(key(
                    KeyCode::Char(char::from(b'a' + c - 1)),
                    Modifiers::CTRL,
                )),
                0x00 | 0x1c..=0x1f => {}
                _ => {
                    // One UTF-8 character (or an invalid byte, skipped).
                    let len = match c {
                        0xc0..=0xdf => 2,
                        0xe0..=0xef => 3,
                        0xf0..=0xf7 => 4,
                        _ => 1,
                    };
                    if rest.len() < len {
                        break;
                    }
                    if let Ok(s) = std::str::from_utf8(&rest[..len])
                        && let Some(ch) = s.chars().next()
                    {
                        out.push(key(KeyCode::Char(ch), Modifiers::NONE));
                    }
                    i += len;
                    continue;
                }
            }
            i += 1;
        }
        self.buf = b[i..].to_vec();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_bytes_and_split_sequences() {
        let mut d = PassThrough::default();
        let e = d.feed(b"h\xc3");
        assert_eq!(e, vec![key(KeyCode::Char('h'), Modifiers::NONE)]);
        let e = d.feed(b"\xa9\r\x03\x1b[");
        assert_eq!(
            e,
            vec![
                key(KeyCode::Char('é'), Modifiers::NONE),
                key(KeyCode::Enter, Modifiers::NONE),
                key(KeyCode::Char('c'), Modifiers::CTRL),
            ]
        );
        assert_eq!(d.feed(b"5~"), vec![key(KeyCode::PageUp, Modifiers::NONE)]);
        assert_eq!(d.feed(b"\x1b"), vec![key(KeyCode::Escape, Modifiers::NONE)]);
        assert_eq!(d.feed(b"\x1b[200~a\nb\x1b[20"), Vec::<InputEvent>::new());
        assert_eq!(
            d.feed(b"1~x"),
            vec![
                InputEvent::Paste("a\nb".into()),
                key(KeyCode::Char('x'), Modifiers::NONE)
            ]
        );
    }
}
