//! Cheap indexing of session lines: just enough of each entry to build the tree.
//!
//! Resuming a large session must not materialize every message. Each line gets a structural
//! JSON check (an object whose strings are closed and whose brackets balance, with nothing
//! after it — what a torn or cut write breaks) and only the top-level `type`, `id` and
//! `parentId` are extracted, borrowed from the line when they hold no escapes. Full entries
//! are parsed (and fully validated) when the context or a caller reads them back.
//!
//! Speed: the top level (a handful of keys) is scanned token by token; a nested value —
//! the message, most of every line — is skimmed 64 bytes at a time with bitmasks of its
//! quotes, backslashes and brackets (`skim`), the way simdjson finds structure, so a line
//! costs about one pass of vector compares instead of a call per string.

use std::borrow::Cow;

use memchr::memchr2;

mod skim;

/// What one line is.
#[derive(Debug, PartialEq, Eq)]
pub enum ProbedLine<'a> {
    /// Blank (only whitespace).
    Blank,
    /// Not a complete JSON object (torn, corrupt): why.
    Corrupt(&'static str),
    /// The session header (`type: "session"` with a string `id`).
    Header,
    /// An entry.
    Entry {
        /// `type`.
        kind: Cow<'a, str>,
        /// `id`.
        id: Cow<'a, str>,
        /// `parentId` (`None` for `null` or absent).
        parent_id: Option<Cow<'a, str>>,
    },
    /// A JSON object without the fields an entry needs.
    NotAnEntry,
}

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

type R<T> = Result<T, &'static str>;

impl<'a> Scan<'a> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\r' | b'\n') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn expect(&mut self, c: u8, what: &'static str) -> R<()> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(what)
        }
    }

    /// At a `"`: skips the string; returns its raw contents and whether it has escapes.
    fn string(&mut self) -> R<(&'a [u8], bool)> {
        self.expect(b'"', "expected a string")?;
        let start = self.i;
        let mut escaped = false;
        loop {
            let rest = &self.b[self.i..];
            match find_quote_or_backslash(rest) {
                None => return Err("unterminated string"),
                Some(k) if rest[k] == b'\\' => {
                    escaped = true;
                    self.i += k + 2;
                    if self.i > self.b.len() {
                        return Err("unterminated string");
                    }
                }
                Some(k) => {
                    let s = &self.b[start..self.i + k];
                    self.i += k + 1;
                    return Ok((s, escaped));
                }
            }
        }
    }

    /// Skips one value: a string, a container (strings closed, brackets matched) or a bare
    /// token (any run of bytes up to a delimiter; numbers and literals are checked by the
    /// full parse, not here).
    fn value(&mut self) -> R<()> {
        self.ws();
        match self.peek() {
            None => Err("unexpected end of line"),
            Some(b'"') => self.string().map(drop),
            Some(b'{' | b'[') => {
                self.i = skim::skip_container(self.b, self.i)?;
                Ok(())
            }
            Some(b'}' | b']') => Err("mismatched bracket"),
            Some(b',' | b':') => Err("unexpected character"),
            Some(_) => {
                while let Some(c) = self.peek() {
                    if matches!(
                        c,
                        b',' | b'}'
                            | b']'
                            | b':'
                            | b'"'
                            | b'{'
                            | b'['
                            | b' '
                            | b'\t'
                            | b'\r'
                            | b'\n'
                    ) {
                        break;
                    }
                    self.i += 1;
                }
                Ok(())
            }
        }
    }
}

/// The first `"` or `\` in `hay`. Most top-level strings of a session line (keys, ids,
/// timestamps) are short: the first 32 bytes are compared inline, 16 at a time, before
/// handing a long string to `memchr2` (a call per short string cost more than the search).
#[cfg(target_arch = "x86_64")]
#[inline]
fn find_quote_or_backslash(hay: &[u8]) -> Option<usize> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let mut at = 0;
    while at < 32 {
        let Some(chunk) = hay.get(at..).and_then(<[u8]>::first_chunk::<16>) else {
            break;
        };
        // SAFETY: SSE2 is part of the x86_64 baseline; `chunk` holds 16 bytes and
        // `_mm_loadu_si128` has no alignment requirement.
        let mask = unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            _mm_movemask_epi8(_mm_or_si128(quote, backslash))
        };
        if mask != 0 {
            return Some(at + mask.trailing_zeros() as usize);
        }
        at += 16;
    }
    memchr2(b'"', b'\\', &hay[at..]).map(|k| at + k)
}

/// The first `"` or `\` in `hay` (other architectures: `memchr2`).
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn find_quote_or_backslash(hay: &[u8]) -> Option<usize> {
    memchr2(b'"', b'\\', hay)
}

fn decode(raw: &[u8], escaped: bool) -> Option<Cow<'_, str>> {
    if escaped {
        let mut quoted = Vec::with_capacity(raw.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(raw);
        quoted.push(b'"');
        serde_json::from_slice::<String>(&quoted)
            .ok()
            .map(Cow::Owned)
    } else {
        std::str::from_utf8(raw).ok().map(Cow::Borrowed)
    }
}

fn probe(line: &[u8]) -> R<ProbedLine<'_>> {
    let mut s = Scan { b: line, i: 0 };
    s.ws();
    if s.peek().is_none() {
        return Ok(ProbedLine::Blank);
    }
    s.expect(b'{', "not a JSON object")?;
    let mut kind = None;
    let mut id = None;
    let mut parent = None;
    // pi writes every entry as `{"type":"…","id":"…","parentId":…,`: read that prefix
    // directly, then go on as after any value (later keys still override).
    let mut resumed = false;
    if s.i == 1
        && let Some((k, i, p, end)) = pi_prefix(line)
    {
        (kind, id, parent) = (Some(k), Some(i), p);
        s.i = end;
        resumed = true;
    }
    s.ws();
    if !resumed && s.peek() == Some(b'}') {
        s.i += 1;
    } else {
        loop {
            if std::mem::take(&mut resumed) {
                s.ws();
                match s.peek() {
                    Some(b',') => {
                        s.i += 1;
                        continue;
                    }
                    Some(b'}') => {
                        s.i += 1;
                        break;
                    }
                    _ => return Err("expected ',' or '}'"),
                }
            }
            s.ws();
            let (raw_key, escaped_key) = s.string()?;
            // A key may be written with escapes (`"\u0069d"` is `id`): compare its text.
            let decoded;
            let key = if escaped_key {
                decoded = decode(raw_key, true).ok_or("invalid string")?;
                decoded.as_bytes()
            } else {
                raw_key
            };
            s.ws();
            s.expect(b':', "expected ':'")?;
            s.ws();
            let slot = match key {
                b"type" => Some(&mut kind),
                b"id" => Some(&mut id),
                b"parentId" => Some(&mut parent),
                _ => None,
            };
            match (slot, s.peek()) {
                (Some(slot), Some(b'"')) => {
                    let (raw, esc) = s.string()?;
                    *slot = Some(decode(raw, esc).ok_or("invalid string")?);
                }
                // A repeated key wins over earlier ones, as in `JSON.parse` and serde_json:
                // a later non-string value clears the field.
                (Some(slot), _) => {
                    *slot = None;
                    s.value()?;
                }
                (None, _) => s.value()?,
            }
            s.ws();
            match s.peek() {
                Some(b',') => s.i += 1,
                Some(b'}') => {
                    s.i += 1;
                    break;
                }
                _ => return Err("expected ',' or '}'"),
            }
        }
    }
    s.ws();
    if s.i != line.len() {
        return Err("trailing characters");
    }
    Ok(match (kind, id) {
        (Some(k), Some(_)) if k == "session" => ProbedLine::Header,
        (Some(kind), Some(id)) => ProbedLine::Entry {
            kind,
            id,
            parent_id: parent,
        },
        _ => ProbedLine::NotAnEntry,
    })
}

/// `type`, `id`, `parentId` and the position after the prefix (see [`pi_prefix`]).
type PiPrefix<'a> = (Cow<'a, str>, Cow<'a, str>, Option<Cow<'a, str>>, usize);

/// The prefix pi writes before every entry's other fields:
/// `{"type":"<kind>","id":"<id>","parentId":(null|"<parent>")`, with no escapes or spaces.
/// Returns the three values and the position after the parent's value; `None` when the line
/// does not start that way (it is then read by the general scan).
fn pi_prefix(line: &[u8]) -> Option<PiPrefix<'_>> {
    // A plain string starting at `at` (after its opening quote): its text and the position
    // after its closing quote.
    let plain = |at: usize| -> Option<(Cow<'_, str>, usize)> {
        let rest = line.get(at..)?;
        let k = find_quote_or_backslash(rest)?;
        if rest[k] != b'"' {
            return None;
        }
        let text = std::str::from_utf8(&rest[..k]).ok()?;
        Some((Cow::Borrowed(text), at + k + 1))
    };
    let expect = |at: usize, lit: &[u8]| -> Option<usize> {
        line.get(at..at + lit.len())
            .filter(|b| *b == lit)
            .map(|_| at + lit.len())
    };
    let at = expect(0, br#"{"type":""#)?;
    let (kind, at) = plain(at)?;
    let at = expect(at, br#","id":""#)?;
    let (id, at) = plain(at)?;
    let at = expect(at, br#","parentId":"#)?;
    let (parent, at) = match expect(at, b"null") {
        Some(end) => (None, end),
        None => {
            let (p, end) = plain(expect(at, b"\"")?)?;
            (Some(p), end)
        }
    };
    Some((kind, id, parent, at))
}

/// Classifies one line (without its trailing newline). The strings of an
/// [`ProbedLine::Entry`] borrow from `line` unless they held escapes.
pub fn probe_line(line: &[u8]) -> ProbedLine<'_> {
    probe(line).unwrap_or_else(ProbedLine::Corrupt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_lines() {
        assert_eq!(probe_line(b"  "), ProbedLine::Blank);
        assert!(matches!(
            probe_line(b"{\"type\":\"mess"),
            ProbedLine::Corrupt(_)
        ));
        assert_eq!(
            probe_line(br#"{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}"#),
            ProbedLine::Header
        );
        assert_eq!(
            probe_line(br#"{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"hi\"x}","timestamp":1}}"#),
            ProbedLine::Entry { kind: "message".into(), id: "a1".into(), parent_id: None }
        );
        assert_eq!(
            probe_line(br#"{"type":"label","id":"a2","parentId":"a\u0031","targetId":"a1"}"#),
            ProbedLine::Entry {
                kind: "label".into(),
                id: "a2".into(),
                parent_id: Some("a1".into())
            }
        );
        assert!(matches!(probe_line(b"[1,2]"), ProbedLine::Corrupt(_)));
        assert_eq!(probe_line(b"{\"x\":1}"), ProbedLine::NotAnEntry);
        assert_eq!(probe_line(b"{}"), ProbedLine::NotAnEntry);
    }

    #[test]
    fn torn_lines_are_corrupt() {
        let full = br#"{"type":"message","id":"a5","parentId":"a3","timestamp":"t","message":{"role":"toolResult","content":[{"type":"text","text":"x"}],"isError":false}}"#;
        assert!(matches!(probe_line(full), ProbedLine::Entry { .. }));
        for cut in 1..full.len() {
            assert!(
                matches!(probe_line(&full[..cut]), ProbedLine::Corrupt(_)),
                "prefix of {cut} bytes accepted"
            );
        }
        assert!(matches!(
            probe_line(&[full.as_slice(), b"x"].concat()),
            ProbedLine::Corrupt(_)
        ));
        assert!(matches!(
            probe_line(br#"{"type":"a","id":"b"}{"#),
            ProbedLine::Corrupt(_)
        ));
        assert!(matches!(
            probe_line(br#"{"type":"a","id":"b","x":[1}"#),
            ProbedLine::Corrupt(_)
        ));
    }

    /// Regression (fuzz target `session_line`): with a repeated key the index kept
    /// the first string value while the full parse (and pi's `JSON.parse`) keeps the last.
    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        assert_eq!(
            probe_line(br#"{"type":"label","id":"a2","parentId":"a1","parentId":false}"#),
            ProbedLine::Entry {
                kind: "label".into(),
                id: "a2".into(),
                parent_id: None
            }
        );
        assert_eq!(
            probe_line(br#"{"type":"label","id":"a2","parentId":null,"parentId":"a9"}"#),
            ProbedLine::Entry {
                kind: "label".into(),
                id: "a2".into(),
                parent_id: Some("a9".into())
            }
        );
        assert_eq!(
            probe_line(br#"{"type":"label","id":"a2","id":7}"#),
            ProbedLine::NotAnEntry
        );
    }

    /// Regression (review of the open rework): keys written with escapes were compared raw,
    /// so `"\u0069d"` was not `id` for the index while serde (and `JSON.parse`) read it as one.
    #[test]
    fn escaped_keys_are_the_keys_they_spell() {
        assert_eq!(
            probe_line(br#"{"type":"message","\u0069d":"a1"}"#),
            ProbedLine::Entry {
                kind: "message".into(),
                id: "a1".into(),
                parent_id: None
            }
        );
        assert_eq!(
            probe_line(br#"{"type":"message","id":"a","\u0069d":"b"}"#),
            ProbedLine::Entry {
                kind: "message".into(),
                id: "b".into(),
                parent_id: None
            }
        );
        assert_eq!(
            probe_line(br#"{"type":"label","id":"x","parentId":"p","parent\u0049d":null}"#),
            ProbedLine::Entry {
                kind: "label".into(),
                id: "x".into(),
                parent_id: None
            }
        );
        assert!(matches!(
            probe_line(br#"{"type":"label","i\ud800":"x"}"#),
            ProbedLine::Corrupt(_)
        ));
    }

    #[test]
    fn finds_the_first_quote_or_backslash_at_every_length_and_position() {
        for len in 0..80 {
            for at in 0..=len {
                for c in [b'"', b'\\'] {
                    let mut hay = vec![b'a'; len];
                    if at < len {
                        hay[at] = c;
                        // A later one must not win.
                        if at + 1 < len {
                            hay[at + 1] = b'"';
                        }
                    }
                    let expected = (at < len).then_some(at);
                    assert_eq!(find_quote_or_backslash(&hay), expected, "{len} {at}");
                }
            }
        }
    }

    /// The prefix shortcut gives what the general scan gives, including when later keys
    /// override, when the prefix is cut, and when it holds escapes.
    #[test]
    fn the_pi_prefix_shortcut_agrees_with_the_general_scan() {
        let lines: [&[u8]; 12] = [
            br#"{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"x":"}"}}"#,
            br#"{"type":"message","id":"a1","parentId":"a0"}"#,
            br#"{"type":"message","id":"a1","parentId":"a0","id":"b2"}"#,
            br#"{"type":"message","id":"a1","parentId":"a0","parentId":null}"#,
            br#"{"type":"message","id":"a1","parentId":"a0" , "x":1 }"#,
            br#"{"type":"message","id":"a1","parentId":"a0"x}"#,
            br#"{"type":"message","id":"a1","parentId":"a0","#,
            br#"{"type":"message","id":"a1","parentId":"a0""#,
            br#"{"type":"message","id":"a1","parentId":nul}"#,
            br#"{"type":"message","id":"a\u0031","parentId":"a0"}"#,
            br#"{"type":"message","id":"a1","parentId":"a0"}  "#,
            br#"{"type":"message","id":"a1","parentId":"a0"}}"#,
        ];
        for l in lines {
            // The general scan alone: the same line with a space after `{` (not a pi prefix).
            let mut general = vec![b'{', b' '];
            general.extend_from_slice(&l[1..]);
            assert!(pi_prefix(&general).is_none());
            let (fast, slow) = (probe_line(l), probe_line(&general));
            match (&fast, &slow) {
                (ProbedLine::Corrupt(_), ProbedLine::Corrupt(_)) => {}
                _ => assert_eq!(fast, slow, "{}", String::from_utf8_lossy(l)),
            }
        }
        assert!(pi_prefix(br#"{"type":"message","id":"a1","parentId":null,"#).is_some());
        assert!(pi_prefix(br#"{"type":"session","version":3,"id":"s"}"#).is_none());
    }

    #[test]
    fn agrees_with_serde_on_valid_lines() {
        let lines: [&[u8]; 4] = [
            br#"{"id":"z","type":"custom","data":{"a":[1,2,{"b":"]}"}]},"parentId":"y"}"#,
            br#" {"type" : "x" , "id" : "i\n\"d" } "#,
            br#"{"type":"x","id":"y","n":-1.5e10,"t":true,"f":false,"z":null}"#,
            "{\"type\":\"x\",\"id\":\"y\",\"parentId\":\"p\",\"s\":\"é\\u00e9\"}".as_bytes(),
        ];
        for l in lines {
            let v: serde_json::Value = serde_json::from_slice(l).unwrap();
            match probe_line(l) {
                ProbedLine::Entry {
                    kind,
                    id,
                    parent_id,
                } => {
                    assert_eq!(v["type"], &*kind);
                    assert_eq!(v["id"], &*id);
                    assert_eq!(
                        v.get("parentId").and_then(|p| p.as_str()),
                        parent_id.as_deref()
                    );
                }
                other => panic!("{other:?}"),
            }
        }
    }
}
