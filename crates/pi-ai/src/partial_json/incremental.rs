//! [`PartialJsonState`]: `parseStreamingJson` over a growing buffer, kept up to date inside
//! the caller's map without re-parsing the text or rebuilding the value;
//! [`PartialJsonParser`]: the same with the map owned.

use serde_json::{Map, Value};

use super::repair::{is_js_whitespace, js_trim, repair_json, strict_parse};
use super::{FinishError, parse_streaming_json};
use crate::json_depth::{MAX_ARGUMENT_DEPTH, exceeds_depth};

/// Arguments up to this many bytes get an exact value after every push, also where the parser
/// has to compute from the whole text: the reference cascade on irregular text, and the value
/// of a number token longer than 64 bytes. Past it such a computation runs again only once
/// what it reads has grown by a quarter since its last run (the published value lags until
/// then; [`PartialJsonState::is_current`] says so), which keeps the total work linear in the
/// text. The final arguments are always computed from the whole text.
pub const EXACT_BYTES: usize = 4096;

/// Number tokens up to this length get their value recomputed on every push.
const SHORT_NUMBER: usize = 64;

/// Whether a whole-text computation that last ran on `last` bytes is due at `len` bytes, in
/// arguments of `total` bytes: always up to [`EXACT_BYTES`], else after growth by a quarter.
fn due(len: usize, last: usize, total: usize) -> bool {
    total <= EXACT_BYTES || len.saturating_sub(last) >= last / 4
}

/// Incremental [`parse_streaming_json`] for streamed tool-call arguments, writing into a map
/// the caller keeps (a tool call's `arguments` in the partial message).
///
/// [`push_into`](Self::push_into) costs O(fragment + nesting depth of the open value): the
/// parser keeps the open containers and the token in progress, moves the caller's value into
/// them for the push (O(1) per open level), advances, and moves it back; it never re-reads
/// earlier text nor copies the value. Afterwards the map equals `parse_streaming_json` of the
/// whole text. Text that is not a prefix of an RFC 8259 object (raw control characters in
/// strings, invalid escapes, a non-object top level, a repeated key, anything malformed)
/// switches the parser to the reference cascade on the whole text, bounded by
/// [`EXACT_BYTES`].
///
/// The map must be the one the previous `push_into` of this state left (empty before the
/// first): the state holds no copy of the value.
#[derive(Clone, Debug, Default)]
pub struct PartialJsonState {
    /// Everything pushed so far (the raw arguments text).
    buf: String,
    /// Open containers, outermost first. Between pushes their contents live in the caller's
    /// map; during a push the last member of each container but the innermost is a
    /// placeholder for the next one.
    stack: Vec<Frame>,
    /// What the next significant character must be.
    expect: Expect,
    /// The scalar token in progress.
    token: Token,
    /// The completed top-level object, until it is published.
    completed: Option<Map<String, Value>>,
    /// Non-whitespace arrived after the top-level value (e.g. two concatenated objects).
    trailing: bool,
    /// The input left the RFC 8259 prefix language: use the reference cascade.
    irregular: bool,
    /// Buffer length at the last run of the cascade (irregular input).
    cascade_at: usize,
    /// The published value lags the text (a whole-text computation was not due yet).
    stale: bool,
    /// More containers were opened than [`MAX_ARGUMENT_DEPTH`]: nothing more is parsed, the
    /// value is `{}` and the final parse refuses the arguments.
    too_deep: bool,
}

#[derive(Clone, Debug)]
enum Frame {
    /// An open object; `key` is the completed key waiting for its value (or for a number
    /// token's first valid prefix).
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
    /// A string; `key` when it is an object key. A value string is the last member of the
    /// innermost container between pushes.
    Str {
        /// The decoded text the lenient parser shows.
        text: String,
        /// Raw whitespace of the input after `text`: the lenient parser trims the whole text
        /// first, so an unterminated string loses it until something else follows.
        ws: String,
        key: bool,
        escape: Escape,
        /// A complete `\uD800`–`\uDBFF` escape waiting for its low half.
        high: Option<u16>,
    },
    /// Number characters so far; `present` when the innermost container's last member is
    /// the number's value, `view_at` the length whose value that is.
    Num {
        text: String,
        present: bool,
        view_at: usize,
    },
    /// A literal (`true`, `false`, `null`) and how many of its bytes arrived; its value is
    /// the innermost container's last member.
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

impl PartialJsonState {
    /// A state for arguments not started (the caller's map starts empty).
    pub fn new() -> Self {
        Self::default()
    }

    /// The raw text pushed so far.
    pub fn buffer(&self) -> &str {
        &self.buf
    }

    /// Whether the map the last push left equals `parse_streaming_json(self.buffer())`:
    /// always while the text is at most [`EXACT_BYTES`] long.
    pub fn is_current(&self) -> bool {
        !self.stale
    }

    /// Appends one streamed fragment and brings `value` (what the previous call left) up to
    /// date: `parse_streaming_json(self.buffer())`, up to the lag described at
    /// [`EXACT_BYTES`].
    pub fn push_into(&mut self, delta: &str, value: &mut Map<String, Value>) {
        self.buf.push_str(delta);
        if self.too_deep {
            return;
        }
        if self.irregular {
            self.run_cascade(value, false);
            return;
        }
        if !self.reclaim(value) {
            // Not the map this state left: recompute it from the text.
            self.fall_back(value);
            return;
        }
        let bytes = delta.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match self.step(delta, i) {
                Some(next) => i = next,
                None if self.too_deep => {
                    self.stack.clear();
                    self.token = Token::None;
                    value.clear();
                    return;
                }
                None => {
                    self.fall_back(value);
                    return;
                }
            }
        }
        self.publish(value);
    }

    /// The strict final parse of the text whose published value is `value`: exactly one
    /// JSON object (after pi's string-literal repair); empty or whitespace-only text is `{}`
    /// (a zero-argument tool call). Concatenated objects (`{"a":1}{"b":2}`), truncated text
    /// and non-object values are errors (pi 0.85.1 keeps its lenient value instead).
    ///
    /// Arguments nested deeper than [`MAX_ARGUMENT_DEPTH`] are [`FinishError::TooDeep`].
    pub fn finish(&self, value: &Map<String, Value>) -> Result<Map<String, Value>, FinishError> {
        self.strict()
            .map(|parsed| parsed.unwrap_or_else(|| value.clone()))
    }

    /// A tool call's final arguments from the published `value`: pi's lenient value of the
    /// whole text (what the message keeps; `{}` past the depth limit) and, when
    /// [`finish`](Self::finish) rejects the text, why the call must not be executed. No copy
    /// of `value` is made.
    pub fn final_arguments(
        &self,
        value: Map<String, Value>,
    ) -> (Map<String, Value>, Option<FinishError>) {
        match self.strict() {
            Ok(Some(parsed)) => (parsed, None),
            Ok(None) => (value, None),
            Err(e @ FinishError::TooDeep { .. }) => (Map::new(), Some(e)),
            Err(e) => (self.lenient(value), Some(e)),
        }
    }

    /// `parse_streaming_json` of the whole text, given the published `value`: that value
    /// when it is current, else computed.
    pub fn lenient(&self, value: Map<String, Value>) -> Map<String, Value> {
        if self.stale {
            parse_streaming_json(&self.buf)
        } else {
            value
        }
    }

    /// The strict parse: `Ok(None)` when the published value is the result (one complete
    /// object arrived in the regular path), `Ok(Some)` when it had to be parsed.
    fn strict(&self) -> Result<Option<Map<String, Value>>, FinishError> {
        if js_trim(&self.buf).is_empty() {
            return Ok(Some(Map::new()));
        }
        if self.too_deep || (self.irregular && exceeds_depth(&self.buf, MAX_ARGUMENT_DEPTH)) {
            return Err(FinishError::TooDeep {
                limit: MAX_ARGUMENT_DEPTH,
            });
        }
        if self.expect == Expect::End && !self.irregular && !self.trailing {
            return Ok(None);
        }
        let parsed = strict_parse(&self.buf)
            .or_else(|| {
                let repaired = repair_json(&self.buf);
                (repaired != self.buf)
                    .then(|| strict_parse(&repaired))
                    .flatten()
            })
            .ok_or(FinishError::Invalid)?;
        match parsed {
            Value::Object(map) => Ok(Some(map)),
            _ => Err(FinishError::NotAnObject),
        }
    }

    /// Leaves the incremental path for good: the cascade computes the value from now on.
    fn fall_back(&mut self, value: &mut Map<String, Value>) {
        self.irregular = true;
        self.stack.clear();
        self.token = Token::None;
        self.completed = None;
        self.run_cascade(value, true);
    }

    /// The reference cascade on the whole text, when due (or `force`d).
    fn run_cascade(&mut self, value: &mut Map<String, Value>, force: bool) {
        let len = self.buf.len();
        if force || due(len, self.cascade_at, len) {
            *value = parse_streaming_json(&self.buf);
            self.cascade_at = len;
            self.stale = false;
        } else {
            self.stale = true;
        }
    }

    /// Moves the published value into the open containers and the string token; `false`
    /// when `value` does not have the shape this state left.
    fn reclaim(&mut self, value: &mut Map<String, Value>) -> bool {
        match self.stack.first_mut() {
            None => return true,
            Some(Frame::Object { map, .. }) => *map = std::mem::take(value),
            Some(Frame::Array(_)) => return false,
        }
        for k in 1..self.stack.len() {
            let (outer, inner) = self.stack.split_at_mut(k);
            let Some(child) = outer.last_mut().and_then(last_member) else {
                return false;
            };
            match (&mut inner[0], std::mem::take(child)) {
                (Frame::Object { map, .. }, Value::Object(m)) => *map = m,
                (Frame::Array(items), Value::Array(a)) => *items = a,
                _ => return false,
            }
        }
        if let Token::Str {
            text, key: false, ..
        } = &mut self.token
        {
            match self.stack.last_mut().and_then(last_member) {
                Some(Value::String(s)) => *text = std::mem::take(s),
                _ => return false,
            }
        }
        true
    }

    /// Moves the open containers (with the token's value) back into `value`.
    fn publish(&mut self, value: &mut Map<String, Value>) {
        self.stale = false;
        if let Some(map) = self.completed.take() {
            *value = map;
            return;
        }
        let Some(innermost) = self.stack.last_mut() else {
            if self.expect == Expect::Top {
                // Nothing but whitespace so far: `{}`, whatever the map held before.
                value.clear();
            }
            return;
        };
        let total = self.buf.len();
        match &mut self.token {
            Token::Str {
                text, key: false, ..
            } => {
                if let Some(slot) = last_member(innermost) {
                    *slot = Value::String(std::mem::take(text));
                }
            }
            Token::Num {
                text,
                present,
                view_at,
            } => {
                if text.len() <= SHORT_NUMBER || due(text.len(), *view_at, total) {
                    set_number(innermost, present, number_view(text));
                    *view_at = text.len();
                } else {
                    self.stale = true;
                }
            }
            _ => {}
        }
        for k in (1..self.stack.len()).rev() {
            let (outer, inner) = self.stack.split_at_mut(k);
            let child = match &mut inner[0] {
                Frame::Object { map, .. } => Value::Object(std::mem::take(map)),
                Frame::Array(items) => Value::Array(std::mem::take(items)),
            };
            if let Some(slot) = outer.last_mut().and_then(last_member) {
                *slot = child;
            }
        }
        if let Some(Frame::Object { map, .. }) = self.stack.first_mut() {
            *value = std::mem::take(map);
        }
    }

    /// Consumes input starting at byte `i` of `delta`; returns the next position, or `None`
    /// when the input is not an RFC 8259 prefix (or nests too deep).
    fn step(&mut self, delta: &str, i: usize) -> Option<usize> {
        let bytes = delta.as_bytes();
        let b = bytes[i];
        match &mut self.token {
            Token::Str { .. } => return self.string_step(delta, i),
            Token::Num { text, present, .. } => {
                if matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
                    text.push(b as char);
                    return Some(i + 1);
                }
                let (text, present) = (std::mem::take(text), *present);
                self.token = Token::None;
                let number = serde_json::from_str::<Value>(&text).ok()?;
                if !number.is_number() {
                    return None;
                }
                self.complete(number, present);
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
                        self.complete(value, true);
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
                b'"' => {
                    self.begin_member(Value::Null);
                    self.start_string(false);
                }
                b'-' | b'0'..=b'9' => {
                    self.token = Token::Num {
                        text: (b as char).to_string(),
                        present: false,
                        view_at: 0,
                    }
                }
                b't' => self.start_literal(b"true"),
                b'f' => self.start_literal(b"false"),
                b'n' => self.start_literal(b"null"),
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
            ws,
            key,
            escape,
            high,
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
            if kept > 0 {
                text.push_str(ws);
                ws.clear();
                text.push_str(&chunk[..kept]);
            }
            ws.push_str(&chunk[kept..]);
            return Some(i + run);
        }
        match rest[0] {
            b'\\' => {
                // Inside an escape the lenient parser keeps the whitespace before it.
                text.push_str(ws);
                ws.clear();
                *escape = Escape::Backslash;
                Some(i + 1)
            }
            b'"' => {
                let mut text = std::mem::take(text);
                text.push_str(ws);
                let key = *key;
                self.token = Token::None;
                if key {
                    match self.stack.last_mut() {
                        Some(Frame::Object { map, key }) => {
                            // A repeated key replaces a member in place: the cascade handles
                            // that order.
                            if map.contains_key(&text) {
                                return None;
                            }
                            *key = Some(text);
                        }
                        _ => return None,
                    }
                    self.expect = Expect::Colon;
                } else {
                    self.complete(Value::String(text), true);
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
            ws: String::new(),
            key,
            escape: Escape::None,
            high: None,
        };
    }

    fn start_literal(&mut self, word: &'static [u8]) {
        self.begin_member(literal_value(word));
        self.token = Token::Lit(word, 1);
    }

    /// Adds the member a value starts with (a placeholder for a container or a string) to
    /// the innermost container.
    fn begin_member(&mut self, value: Value) {
        match self.stack.last_mut() {
            Some(Frame::Object { map, key }) => {
                if let Some(key) = key.take() {
                    map.insert(key, value);
                }
            }
            Some(Frame::Array(items)) => items.push(value),
            None => {}
        }
    }

    /// Opens a container; `None` beyond [`MAX_ARGUMENT_DEPTH`] (and the state is too deep).
    fn open(&mut self, frame: Frame) -> Option<()> {
        if self.stack.len() >= MAX_ARGUMENT_DEPTH {
            self.too_deep = true;
            return None;
        }
        self.begin_member(Value::Null);
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
        self.complete(value, true);
        Some(())
    }

    /// A value is complete: it replaces its member in the innermost container (`present`),
    /// is added to it, or becomes the top-level value.
    fn complete(&mut self, value: Value, present: bool) {
        match self.stack.last_mut() {
            Some(frame) => {
                match (present, frame) {
                    (true, frame) => {
                        if let Some(slot) = last_member(frame) {
                            *slot = value;
                        }
                    }
                    (false, Frame::Object { map, key }) => {
                        if let Some(key) = key.take() {
                            map.insert(key, value);
                        }
                    }
                    (false, Frame::Array(items)) => items.push(value),
                }
                self.expect = Expect::CommaOrClose;
            }
            None => {
                if let Value::Object(map) = value {
                    self.completed = Some(map);
                }
                self.expect = Expect::End;
            }
        }
    }
}

/// The last member of a container (the open child or the token's value during a push).
fn last_member(frame: &mut Frame) -> Option<&mut Value> {
    match frame {
        Frame::Object { map, .. } => map.values_mut().next_back(),
        Frame::Array(items) => items.last_mut(),
    }
}

/// Shows a number token's value (`Some`) or nothing (`None`) as the innermost container's
/// last member; `present` says whether it is there.
fn set_number(frame: &mut Frame, present: &mut bool, view: Option<Value>) {
    match (view, *present, frame) {
        (Some(v), true, frame) => {
            if let Some(slot) = last_member(frame) {
                *slot = v;
            }
        }
        (Some(v), false, Frame::Object { map, key }) => {
            if let Some(key) = key.take() {
                map.insert(key, v);
                *present = true;
            }
        }
        (Some(v), false, Frame::Array(items)) => {
            items.push(v);
            *present = true;
        }
        (None, true, Frame::Object { map, key }) => {
            if let Some(last) = map.keys().next_back().cloned() {
                map.shift_remove(&last);
                *key = Some(last);
            }
            *present = false;
        }
        (None, true, Frame::Array(items)) => {
            items.pop();
            *present = false;
        }
        (None, false, _) => {}
    }
}

/// Incremental [`parse_streaming_json`] owning its value: [`PartialJsonState`] with the map.
///
/// ```
/// use pi_ai::partial_json::PartialJsonParser;
/// let mut p = PartialJsonParser::new();
/// p.push(r#"{"path":"a.txt","content":"hel"#);
/// assert_eq!(p.arguments()["content"], "hel");
/// p.push(r#"lo"}"#);
/// assert_eq!(p.finish().unwrap()["content"], "hello");
/// ```
#[derive(Clone, Debug, Default)]
pub struct PartialJsonParser {
    state: PartialJsonState,
    value: Map<String, Value>,
}

impl PartialJsonParser {
    /// An empty parser (its value is `{}`).
    pub fn new() -> Self {
        Self::default()
    }

    /// The raw text pushed so far.
    pub fn buffer(&self) -> &str {
        self.state.buffer()
    }

    /// Appends one streamed fragment ([`PartialJsonState::push_into`]).
    pub fn push(&mut self, delta: &str) {
        self.state.push_into(delta, &mut self.value);
    }

    /// The value after the last push, without a copy: `parse_streaming_json(self.buffer())`
    /// up to the lag described at [`EXACT_BYTES`] ([`PartialJsonState::is_current`]).
    pub fn arguments(&self) -> &Map<String, Value> {
        &self.value
    }

    /// Whether [`arguments`](Self::arguments) is exact ([`PartialJsonState::is_current`]).
    pub fn is_current(&self) -> bool {
        self.state.is_current()
    }

    /// The best-effort arguments so far, exactly `parse_streaming_json(self.buffer())` (a copy).
    pub fn value(&self) -> Map<String, Value> {
        if self.state.is_current() {
            self.value.clone()
        } else {
            parse_streaming_json(self.buffer())
        }
    }

    /// The strict final parse ([`PartialJsonState::finish`]).
    pub fn finish(&self) -> Result<Map<String, Value>, FinishError> {
        self.state.finish(&self.value)
    }

    /// A tool call's final arguments ([`PartialJsonState::final_arguments`]).
    pub fn final_arguments(&self) -> (Map<String, Value>, Option<FinishError>) {
        self.state.final_arguments(self.value.clone())
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
