//! [`PartialJsonParser`]: `parseStreamingJson` over a growing buffer without re-parsing it.

use serde_json::{Map, Value};

use super::repair::{is_js_whitespace, js_trim, repair_json, strict_parse};
use super::{FinishError, parse_streaming_json};
use crate::json_depth::{MAX_ARGUMENT_DEPTH, exceeds_depth};

/// Incremental form of [`parse_streaming_json`] for streamed tool-call arguments.
///
/// `push` costs O(delta) amortized: the parser keeps a stack of open containers with their
/// completed members plus the token in progress, never re-reading earlier input. `value`
/// folds that state into a map, O(size of the value). For every prefix of an RFC 8259
/// object text, `value` equals `parse_streaming_json(buffer)`. Input that is not such a
/// prefix (raw control characters in strings, invalid escapes, a non-object top level,
/// anything malformed) switches the parser to the reference cascade: `value` then calls
/// [`parse_streaming_json`] on the buffer (O(buffer) per call, still exact).
///
/// ```
/// use pi_ai::partial_json::PartialJsonParser;
/// let mut p = PartialJsonParser::new();
/// p.push(r#"{"path":"a.txt","content":"hel"#);
/// assert_eq!(p.value()["content"], "hel");
/// p.push(r#"lo"}"#);
/// assert_eq!(p.finish().unwrap()["content"], "hello");
/// ```
#[derive(Clone, Debug, Default)]
pub struct PartialJsonParser {
    /// Everything pushed so far (the raw arguments text).
    buf: String,
    /// Open containers, outermost first.
    stack: Vec<Frame>,
    /// What the next significant character must be.
    expect: Expect,
    /// The scalar token in progress.
    token: Token,
    /// The completed top-level value.
    done: Option<Value>,
    /// Non-whitespace arrived after the top-level value (e.g. two concatenated objects).
    trailing: bool,
    /// The input left the RFC 8259 prefix language: use the reference cascade.
    irregular: bool,
    /// More containers were opened than [`MAX_ARGUMENT_DEPTH`]: nothing more is parsed, the
    /// value is `{}` and [`PartialJsonParser::finish`] refuses the arguments.
    too_deep: bool,
}

#[derive(Clone, Debug)]
enum Frame {
    /// An open object; `key` is the completed key waiting for its value.
    Object {
        map: Map<String, Value>,
        key: Option<String>,
    },
    /// An open array.
    Array(Vec<Value>),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Expect {
    /// The top-level value (must be an object).
    #[default]
    Top,
    /// A value (after a colon or an array comma).
    Value,
    /// A key or `}` (right after `{`).
    KeyOrClose,
    /// A key (after an object comma).
    Key,
    /// The colon after a key.
    Colon,
    /// A value or `]` (right after `[`).
    ValueOrClose,
    /// `,` or the closing bracket of the innermost container.
    CommaOrClose,
    /// Only whitespace (the top-level value is complete).
    End,
}

#[derive(Clone, Debug, Default)]
enum Token {
    #[default]
    None,
    /// A string; `key` when it is an object key.
    Str {
        text: String,
        key: bool,
        escape: Escape,
        /// A complete `\uD800`–`\uDBFF` escape waiting for its low half.
        high: Option<u16>,
        /// Bytes at the end of `text` that are raw whitespace of the input: the lenient
        /// parser trims the whole text first, so an unterminated string loses them.
        ws_tail: usize,
    },
    /// Number characters so far.
    Num(String),
    /// A literal (`true`, `false`, `null`) and how many of its bytes arrived.
    Lit(&'static [u8], usize),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Escape {
    #[default]
    None,
    /// After a backslash.
    Backslash,
    /// Inside `\u`: digits read so far and their value.
    Unicode(u8, u16),
}

impl PartialJsonParser {
    /// An empty parser (its value is `{}`).
    pub fn new() -> Self {
        Self::default()
    }

    /// The raw text pushed so far.
    pub fn buffer(&self) -> &str {
        &self.buf
    }

    /// Appends one streamed fragment.
    pub fn push(&mut self, delta: &str) {
        self.buf.push_str(delta);
        if self.irregular || self.too_deep {
            return;
        }
        let bytes = delta.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match self.step(delta, i) {
                Some(next) => i = next,
                None => {
                    self.irregular = true;
                    return;
                }
            }
        }
    }

    /// The best-effort arguments so far: `parse_streaming_json(self.buffer())`.
    pub fn value(&self) -> Map<String, Value> {
        if self.too_deep {
            return Map::new();
        }
        if self.irregular {
            return parse_streaming_json(&self.buf);
        }
        if let Some(done) = &self.done {
            return match done {
                Value::Object(map) => map.clone(),
                _ => Map::new(),
            };
        }
        let mut carry = self.token_view();
        for frame in self.stack.iter().rev() {
            carry = Some(match frame {
                Frame::Object { map, key } => {
                    let mut map = map.clone();
                    if let (Some(key), Some(value)) = (key, carry) {
                        map.insert(key.clone(), value);
                    }
                    Value::Object(map)
                }
                Frame::Array(items) => {
                    let mut items = items.clone();
                    items.extend(carry);
                    Value::Array(items)
                }
            });
        }
        match carry {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }

    /// The strict final parse: the buffer must be exactly one JSON object (after pi's
    /// string-literal repair); empty or whitespace-only input is `{}` (a zero-argument tool
    /// call). Concatenated objects (`{"a":1}{"b":2}`), truncated text and non-object
    /// values are errors (pi 0.85.1 keeps its lenient value instead).
    ///
    /// Arguments nested deeper than [`MAX_ARGUMENT_DEPTH`] are [`FinishError::TooDeep`].
    pub fn finish(&self) -> Result<Map<String, Value>, FinishError> {
        if js_trim(&self.buf).is_empty() {
            return Ok(Map::new());
        }
        if self.too_deep || (self.irregular && exceeds_depth(&self.buf, MAX_ARGUMENT_DEPTH)) {
            return Err(FinishError::TooDeep {
                limit: MAX_ARGUMENT_DEPTH,
            });
        }
        let value = match (&self.done, self.irregular || self.trailing) {
            (Some(done), false) => done.clone(),
            _ => strict_parse(&self.buf)
                .or_else(|| {
                    let repaired = repair_json(&self.buf);
                    (repaired != self.buf)
                        .then(|| strict_parse(&repaired))
                        .flatten()
                })
                .ok_or(FinishError::Invalid)?,
        };
        match value {
            Value::Object(map) => Ok(map),
            _ => Err(FinishError::NotAnObject),
        }
    }

    /// A tool call's final arguments: pi's lenient value of the whole text (what the message
    /// keeps; `{}` past the depth limit) and, when [`PartialJsonParser::finish`] rejects the
    /// text, why the call must not be executed.
    pub fn final_arguments(&self) -> (Map<String, Value>, Option<FinishError>) {
        match self.finish() {
            Ok(map) => (map, None),
            Err(e @ FinishError::TooDeep { .. }) => (Map::new(), Some(e)),
            Err(e) => (self.value(), Some(e)),
        }
    }

    /// The partial value of the token in progress, by the lenient parser's rules; `None`
    /// when it contributes nothing (a key, an empty or undecidable number).
    fn token_view(&self) -> Option<Value> {
        match &self.token {
            Token::None | Token::Str { key: true, .. } => None,
            Token::Str {
                text,
                escape,
                ws_tail,
                ..
            } => {
                let cut = if *escape == Escape::None { *ws_tail } else { 0 };
                Some(Value::String(text[..text.len() - cut].to_owned()))
            }
            Token::Num(text) => number_view(text),
            Token::Lit(word, _) => Some(literal_value(word)),
        }
    }

    /// Consumes input starting at byte `i` of `delta`; returns the next position, or `None`
    /// when the input is not an RFC 8259 prefix.
    fn step(&mut self, delta: &str, i: usize) -> Option<usize> {
        let bytes = delta.as_bytes();
        let b = bytes[i];
        match &mut self.token {
            Token::Str { .. } => return self.string_step(delta, i),
            Token::Num(text) => {
                if matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                    text.push(b as char);
                    return Some(i + 1);
                }
                let text = std::mem::take(text);
                self.token = Token::None;
                let number = serde_json::from_str::<Value>(&text).ok()?;
                if !number.is_number() {
                    return None;
                }
                self.complete(number);
                // Fall through: `b` is handled below.
            }
            Token::Lit(word, matched) => {
                if *matched < word.len() {
                    if word[*matched] != b {
                        return None;
                    }
                    *matched += 1;
                    if *matched == word.len() {
                        let value = literal_value(word);
                        self.token = Token::None;
                        self.complete(value);
                    }
                    return Some(i + 1);
                }
                self.token = Token::None;
            }
            Token::None => {}
        }
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            if self.expect == Expect::ValueOrClose {
                // `partial-json` misreads `[ ]` (whitespace inside an empty array): it closes
                // the enclosing array at that `]`. Leave such input to the cascade.
                self.expect = Expect::Value;
            }
            return Some(i + 1);
        }
        match (self.expect, b) {
            (Expect::Top, b'{') => self.open(Frame::Object {
                map: Map::new(),
                key: None,
            })?,
            (Expect::Top, _) => return None,
            (Expect::End, _) => {
                self.trailing = true;
                // The lenient value is the completed one; nothing more to track.
                return Some(bytes.len());
            }
            (Expect::KeyOrClose | Expect::Key, b'"') => self.start_string(true),
            (Expect::KeyOrClose | Expect::CommaOrClose, b'}') => self.close(b'}')?,
            (Expect::ValueOrClose | Expect::CommaOrClose, b']') => self.close(b']')?,
            (Expect::Colon, b':') => self.expect = Expect::Value,
            (Expect::CommaOrClose, b',') => {
                self.expect = match self.stack.last()? {
                    Frame::Object { .. } => Expect::Key,
                    Frame::Array(_) => Expect::Value,
                }
            }
            (Expect::Value | Expect::ValueOrClose, _) => match b {
                b'{' => self.open(Frame::Object {
                    map: Map::new(),
                    key: None,
                })?,
                b'[' => self.open(Frame::Array(Vec::new()))?,
                b'"' => self.start_string(false),
                b'-' | b'0'..=b'9' => self.token = Token::Num((b as char).to_string()),
                b't' => self.token = Token::Lit(b"true", 1),
                b'f' => self.token = Token::Lit(b"false", 1),
                b'n' => self.token = Token::Lit(b"null", 1),
                _ => return None,
            },
            _ => return None,
        }
        Some(i + 1)
    }

    /// Inside a string: copies plain runs at once, decodes escapes, ends at the quote.
    fn string_step(&mut self, delta: &str, i: usize) -> Option<usize> {
        let bytes = delta.as_bytes();
        let Token::Str {
            text,
            key,
            escape,
            high,
            ws_tail,
        } = &mut self.token
        else {
            return None;
        };
        match *escape {
            Escape::None => {}
            Escape::Backslash => {
                let decoded = match bytes[i] {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        *escape = Escape::Unicode(0, 0);
                        return Some(i + 1);
                    }
                    _ => return None,
                };
                *escape = Escape::None;
                // A pending high surrogate not followed by its low half is dropped.
                *high = None;
                *ws_tail = 0;
                text.push(decoded);
                return Some(i + 1);
            }
            Escape::Unicode(count, value) => {
                let digit = (bytes[i] as char).to_digit(16)? as u16;
                let value = value << 4 | digit;
                if count < 3 {
                    *escape = Escape::Unicode(count + 1, value);
                    return Some(i + 1);
                }
                *escape = Escape::None;
                *ws_tail = 0;
                match value {
                    0xD800..=0xDBFF => *high = Some(value),
                    0xDC00..=0xDFFF => {
                        if let Some(h) = high.take() {
                            let code = 0x10000
                                + ((u32::from(h) - 0xD800) << 10)
                                + (u32::from(value) - 0xDC00);
                            text.extend(char::from_u32(code));
                        }
                    }
                    _ => {
                        *high = None;
                        text.extend(char::from_u32(u32::from(value)));
                    }
                }
                return Some(i + 1);
            }
        }
        let rest = &bytes[i..];
        let run = rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(rest.len());
        if run > 0 {
            *high = None;
            let chunk = &delta[i..i + run];
            let kept = chunk.trim_end_matches(is_js_whitespace).len();
            *ws_tail = if kept == 0 {
                *ws_tail + run
            } else {
                run - kept
            };
            text.push_str(chunk);
            return Some(i + run);
        }
        match rest[0] {
            b'\\' => {
                *escape = Escape::Backslash;
                Some(i + 1)
            }
            b'"' => {
                let (text, key) = (std::mem::take(text), *key);
                self.token = Token::None;
                if key {
                    if let Some(Frame::Object { key, .. }) = self.stack.last_mut() {
                        *key = Some(text);
                    }
                    self.expect = Expect::Colon;
                } else {
                    self.complete(Value::String(text));
                }
                Some(i + 1)
            }
            // A raw control character: only the repair path can judge it.
            _ => None,
        }
    }

    fn start_string(&mut self, key: bool) {
        self.token = Token::Str {
            text: String::new(),
            key,
            escape: Escape::None,
            high: None,
            ws_tail: 0,
        };
    }

    /// Opens a container; `None` beyond [`MAX_ARGUMENT_DEPTH`] (and the parser is too deep).
    fn open(&mut self, frame: Frame) -> Option<()> {
        if self.stack.len() >= MAX_ARGUMENT_DEPTH {
            self.too_deep = true;
            return None;
        }
        self.expect = match frame {
            Frame::Object { .. } => Expect::KeyOrClose,
            Frame::Array(_) => Expect::ValueOrClose,
        };
        self.stack.push(frame);
        Some(())
    }

    /// Closes the innermost container with `bracket`; `None` if it is the wrong kind or an
    /// object still waits for a value.
    fn close(&mut self, bracket: u8) -> Option<()> {
        let value = match (self.stack.pop()?, bracket) {
            (Frame::Object { map, key: None }, b'}') => Value::Object(map),
            (Frame::Array(items), b']') => Value::Array(items),
            _ => return None,
        };
        self.complete(value);
        Some(())
    }

    /// A value is complete: store it in the innermost container (or as the top-level value).
    fn complete(&mut self, value: Value) {
        match self.stack.last_mut() {
            Some(Frame::Object { map, key }) => {
                if let Some(key) = key.take() {
                    map.insert(key, value);
                }
                self.expect = Expect::CommaOrClose;
            }
            Some(Frame::Array(items)) => {
                items.push(value);
                self.expect = Expect::CommaOrClose;
            }
            None => {
                self.done = Some(value);
                self.expect = Expect::End;
            }
        }
    }
}

/// `true`/`false`/`null` for a literal word.
fn literal_value(word: &[u8]) -> Value {
    match word {
        b"true" => Value::Bool(true),
        b"false" => Value::Bool(false),
        _ => Value::Null,
    }
}

/// The lenient parser's value of an incomplete number at the end of the text: the number if
/// it parses, else the part before its last `e` if that parses (`1e`, `1.5e-`), else nothing
/// (`-`, `12.`, `1E`).
fn number_view(text: &str) -> Option<Value> {
    let parse = |t: &str| {
        serde_json::from_str::<Value>(t)
            .ok()
            .filter(Value::is_number)
    };
    parse(text).or_else(|| text.rfind('e').and_then(|cut| parse(&text[..cut])))
}
