//! Lenient parse of a possibly incomplete JSON text: the behaviour of the `partial-json` npm
//! package 0.1.7 (`parse(text, Allow.ALL)`) that pi-ai 0.85.1 uses as its fallback.
//!
//! Observable rules (each has a test): incomplete strings keep their decoded prefix (an
//! incomplete escape is cut off); objects and arrays are closed, keeping the members parsed
//! before the first failure; a dangling key is dropped; an incomplete number keeps its value
//! when it parses (`12` → 12, `1e` → 1) and is dropped otherwise (`-`, `12.`); `n`/`tr`/`f`…
//! at the very end are `null`/`true`/`false`; `NaN` and `±Infinity` become `null` (what
//! `JSON.stringify` writes for them); anything after the first complete value is ignored.
//!
//! Positions are byte offsets: every decision point is an ASCII character, so they agree with
//! JavaScript's UTF-16 offsets. Nesting deeper than [`MAX_DEPTH`] fails like malformed input,
//! a bound against stack exhaustion (pi's limit is the JavaScript stack, thousands of levels;
//! the `deep_values_hold_on_a_2_mib_stack` test covers this parser too).

use serde_json::{Map, Value};

use super::repair::{js_trim, parse_string_literal, strict_parse};

/// Deepest container nesting the lenient parser follows: the argument limit (deeper arguments
/// are refused before any parse).
pub(crate) const MAX_DEPTH: usize = crate::json_depth::MAX_ARGUMENT_DEPTH;

/// Why a sub-parse failed. Containers catch every failure alike; only the top level reports it.
#[derive(Debug)]
pub(crate) struct Failed;

type Parsed<T> = Result<T, Failed>;

/// `partial-json`'s `parse`: `Err` when nothing can be made of the (trimmed) text;
/// `Ok(None)` when the result is JavaScript `null` (a top-level `null` or prefix of it, which
/// pi replaces with `{}`), as opposed to `NaN`/`±Infinity`, which come back as `Value::Null`.
pub(crate) fn partial_parse(text: &str) -> Parsed<Option<Value>> {
    let text = js_trim(text);
    if text.is_empty() {
        return Err(Failed);
    }
    let mut parser = Lenient {
        s: text.as_bytes(),
        text,
        i: 0,
        depth: 0,
        last_backslash: last_index_of(text.as_bytes(), b'\\'),
        last_e: last_index_of(text.as_bytes(), b'e'),
    };
    let value = parser.any()?;
    let is_js_null = value.is_null() && b"null".starts_with(&parser.s[..parser.s.len().min(4)]);
    Ok((!is_js_null).then_some(value))
}

struct Lenient<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    depth: usize,
    /// `lastIndexOf("\\")` of the whole text (constant, so computed once).
    last_backslash: isize,
    /// `lastIndexOf("e")` of the whole text.
    last_e: isize,
}

/// JavaScript `substring(a, b)` on byte offsets: negative → 0, clamped, swapped if reversed.
fn js_substring(s: &[u8], a: isize, b: isize) -> &[u8] {
    let clamp = |x: isize| x.clamp(0, s.len() as isize) as usize;
    let (a, b) = (clamp(a), clamp(b));
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    &s[lo..hi]
}

/// `lastIndexOf(byte)` on the whole text, -1 when absent.
fn last_index_of(s: &[u8], byte: u8) -> isize {
    s.iter()
        .rposition(|&b| b == byte)
        .map_or(-1, |p| p as isize)
}

/// `JSON.parse` of a sub-slice as any JSON value.
fn parse_slice(bytes: &[u8]) -> Parsed<Value> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(strict_parse)
        .ok_or(Failed)
}

impl Lenient<'_> {
    fn byte(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_blank(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.byte() {
            self.i += 1;
        }
    }

    /// Advances past one character (one UTF-16 unit in JS; one whole char here).
    fn skip_char(&mut self) {
        let len = self.text.get(self.i..).and_then(|rest| rest.chars().next());
        self.i += len.map_or(1, char::len_utf8);
    }

    /// The rest of the text from the cursor (empty past the end).
    fn rest(&self) -> &[u8] {
        self.s.get(self.i..).unwrap_or_default()
    }

    fn any(&mut self) -> Parsed<Value> {
        self.skip_blank();
        let Some(first) = self.byte() else {
            return Err(Failed);
        };
        match first {
            b'"' => return self.string().map(Value::String),
            b'{' | b'[' => {
                if self.depth >= MAX_DEPTH {
                    return Err(Failed);
                }
                self.depth += 1;
                let value = if first == b'{' {
                    Value::Object(self.object())
                } else {
                    Value::Array(self.array())
                };
                self.depth -= 1;
                return Ok(value);
            }
            _ => {}
        }
        /// Literal words, their value (`None` = NaN/±Infinity, written as `null`) and how
        /// many bytes a prefix must have (a lone `-` is not `-Infinity`).
        const LITERALS: [(&[u8], Option<bool>, usize); 6] = [
            (b"null", None, 0),
            (b"true", Some(true), 0),
            (b"false", Some(false), 0),
            (b"Infinity", None, 0),
            (b"-Infinity", None, 1),
            (b"NaN", None, 0),
        ];
        let rest = self.rest();
        for (word, value, min_rest) in LITERALS {
            let complete = rest.starts_with(word);
            let partial =
                rest.len() < word.len() && rest.len() > min_rest && word.starts_with(rest);
            if complete || partial {
                self.i += word.len();
                return Ok(value.map_or(Value::Null, Value::Bool));
            }
        }
        self.number()
    }

    fn string(&mut self) -> Parsed<String> {
        let start = self.i;
        let mut escape = false;
        self.skip_char();
        while let Some(b) = self.byte() {
            if b == b'"' && !(escape && self.s[self.i - 1] == b'\\') {
                break;
            }
            escape = if b == b'\\' { !escape } else { false };
            self.i += 1;
        }
        if self.byte() == Some(b'"') {
            self.i += 1;
            return parse_string_literal(&self.s[start..self.i]).ok_or(Failed);
        }
        // Unterminated: close it, dropping a trailing lone backslash.
        let end = self.s.len().min(self.i) - usize::from(escape);
        let closed = [self.s.get(start..end).unwrap_or_default(), b"\""].concat();
        if let Some(s) = parse_string_literal(&closed) {
            return Ok(s);
        }
        // An invalid (incomplete) escape: cut at the last backslash of the whole text.
        let cut = js_substring(self.s, start as isize, self.last_backslash);
        parse_string_literal(&[cut, b"\""].concat()).ok_or(Failed)
    }

    /// Members parsed before the first failure; never fails itself.
    fn object(&mut self) -> Map<String, Value> {
        self.i += 1;
        self.skip_blank();
        let mut map = Map::new();
        while self.byte() != Some(b'}') {
            self.skip_blank();
            if self.i >= self.s.len() {
                return map;
            }
            let Ok(key) = self.string() else {
                return map;
            };
            self.skip_blank();
            self.skip_char(); // the colon, whatever it is
            match self.any() {
                Ok(value) => {
                    map.insert(key, value);
                }
                Err(Failed) => return map,
            }
            self.skip_blank();
            if self.byte() == Some(b',') {
                self.i += 1;
            }
        }
        self.i += 1;
        map
    }

    /// Items parsed before the first failure; never fails itself.
    fn array(&mut self) -> Vec<Value> {
        self.i += 1;
        let mut items = Vec::new();
        while self.byte() != Some(b']') {
            match self.any() {
                Ok(value) => items.push(value),
                Err(Failed) => return items,
            }
            self.skip_blank();
            if self.byte() == Some(b',') {
                self.i += 1;
            }
        }
        self.i += 1;
        items
    }

    fn number(&mut self) -> Parsed<Value> {
        if self.i == 0 {
            if self.s == b"-" {
                return Err(Failed);
            }
            return parse_slice(self.s)
                .or_else(|_| parse_slice(js_substring(self.s, 0, self.last_e)));
        }
        let start = self.i;
        if self.byte() == Some(b'-') {
            self.i += 1;
        }
        while let Some(b) = self.byte() {
            if matches!(b, b',' | b']' | b'}') {
                break;
            }
            self.i += 1;
        }
        let token = &self.s[start..self.i];
        parse_slice(token).or_else(|_| {
            if token == b"-" {
                return Err(Failed);
            }
            let cut = js_substring(self.s, start as isize, self.last_e);
            parse_slice(cut)
        })
    }
}
