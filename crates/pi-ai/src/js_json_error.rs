//! The message of JavaScript's `JSON.parse` `SyntaxError` for a text, as Node 22 (V8) words
//! it — the text pi shows wherever it quotes a failed parse: an SSE data line of any wire API
//! (`errorMessage`), `settings.json`, `auth.json`, `models.json`.
//!
//! A small syntax scanner that follows V8's JSON parser (`json-parser.cc`) to the first error,
//! so the wording depends on where the parse stopped, not on serde_json's error kinds:
//!
//! | stop | message |
//! |---|---|
//! | end of text where a value is due | `Unexpected end of JSON input` |
//! | any other character where a value is due, a broken literal | `Unexpected token 'c', "<source>" is not valid JSON` |
//! | after `{` | `Expected property name or '}'` |
//! | after `,` in an object | `Expected double-quoted property name` |
//! | after a key | `Expected ':' after property name` |
//! | after an object member / array element | `Expected ',' or '}' after property value` / `Expected ',' or ']' after array element` |
//! | strings | `Unterminated string`, `Bad control character in string literal`, `Bad escaped character`, `Bad Unicode escape` |
//! | numbers | `No number after minus sign`, `Unexpected number` (leading zero), `Unterminated fractional number`, `Exponent part is missing a number` |
//! | after the value | `Unexpected non-whitespace character after JSON` |
//!
//! Positioned messages read `<message> in JSON at position <p> (line <l> column <c>)` (the
//! last one without `in JSON`): `p` is the UTF-16 index of the offending character (the text's
//! length at its end), lines end at LF, CR, CRLF, U+2028 and U+2029, and Node 22 appends the
//! line and column. `Unexpected token` shows the whole source up to 21 UTF-16 units, else 10
//! units of context on each side with `...` where cut. The scan is iterative: nesting depth
//! costs heap, not stack.

/// V8's context window on each side of an unexpected token (`kMaxContextCharacters`).
const CONTEXT: usize = 10;

/// Where the scan stopped.
enum Stop {
    /// The text ended where a value was due.
    End,
    /// An unexpected character at this UTF-16 index.
    Token(usize),
    /// A positioned message (`<message> in JSON at position …`).
    At(&'static str, usize),
    /// Non-whitespace after the top-level value.
    Trailing(usize),
}

enum Container {
    Object,
    Array,
}

struct Scanner {
    s: Vec<u16>,
    i: usize,
}

fn is_digit(u: u16) -> bool {
    (u16::from(b'0')..=u16::from(b'9')).contains(&u)
}

fn is_hex(u: u16) -> bool {
    is_digit(u)
        || (u16::from(b'a')..=u16::from(b'f')).contains(&u)
        || (u16::from(b'A')..=u16::from(b'F')).contains(&u)
}

impl Scanner {
    fn peek(&self) -> Option<u16> {
        self.s.get(self.i).copied()
    }

    fn peek_is(&self, c: u8) -> bool {
        self.peek() == Some(u16::from(c))
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(0x20 | 0x09 | 0x0A | 0x0D)) {
            self.i += 1;
        }
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(is_digit) {
            self.i += 1;
        }
    }

    /// A string starting at the opening quote.
    fn string(&mut self) -> Result<(), Stop> {
        self.i += 1;
        loop {
            let Some(u) = self.peek() else {
                return Err(Stop::At("Unterminated string", self.s.len()));
            };
            match u {
                0x22 => {
                    self.i += 1;
                    return Ok(());
                }
                0x5C => {
                    self.i += 1;
                    match self.peek() {
                        None => return Err(Stop::End),
                        Some(0x75) => {
                            self.i += 1;
                            for _ in 0..4 {
                                if !self.peek().is_some_and(is_hex) {
                                    return Err(Stop::At("Bad Unicode escape", self.i));
                                }
                                self.i += 1;
                            }
                        }
                        Some(e) if b"\"\\/bfnrt".iter().any(|&c| u16::from(c) == e) => {
                            self.i += 1;
                        }
                        Some(_) => return Err(Stop::At("Bad escaped character", self.i)),
                    }
                }
                u if u < 0x20 => {
                    return Err(Stop::At("Bad control character in string literal", self.i));
                }
                _ => self.i += 1,
            }
        }
    }

    fn number(&mut self) -> Result<(), Stop> {
        if self.peek_is(b'-') {
            self.i += 1;
            if !self.peek().is_some_and(is_digit) {
                return Err(Stop::At("No number after minus sign", self.i));
            }
        }
        if self.peek_is(b'0') {
            self.i += 1;
            if self.peek().is_some_and(is_digit) {
                return Err(Stop::At("Unexpected number", self.i));
            }
        } else {
            self.digits();
        }
        if self.peek_is(b'.') {
            self.i += 1;
            if !self.peek().is_some_and(is_digit) {
                return Err(Stop::At("Unterminated fractional number", self.i));
            }
            self.digits();
        }
        if self.peek_is(b'e') || self.peek_is(b'E') {
            self.i += 1;
            if self.peek_is(b'+') || self.peek_is(b'-') {
                self.i += 1;
            }
            if !self.peek().is_some_and(is_digit) {
                return Err(Stop::At("Exponent part is missing a number", self.i));
            }
            self.digits();
        }
        Ok(())
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Stop> {
        for &c in word {
            match self.peek() {
                None => return Err(Stop::End),
                Some(u) if u == u16::from(c) => self.i += 1,
                Some(_) => return Err(Stop::Token(self.i)),
            }
        }
        Ok(())
    }

    /// An object key and its colon, at the opening quote (`what` names the failure when the
    /// quote is missing).
    fn key(&mut self, what: &'static str) -> Result<(), Stop> {
        if !self.peek_is(b'"') {
            return Err(Stop::At(what, self.i));
        }
        self.string()?;
        self.skip_ws();
        if !self.peek_is(b':') {
            return Err(Stop::At("Expected ':' after property name", self.i));
        }
        self.i += 1;
        Ok(())
    }

    fn scan(&mut self) -> Result<(), Stop> {
        let mut stack: Vec<Container> = Vec::new();
        loop {
            // A value is due.
            self.skip_ws();
            let Some(u) = self.peek() else {
                return Err(Stop::End);
            };
            let mut opened = false;
            match u {
                0x7B => {
                    self.i += 1;
                    self.skip_ws();
                    if self.peek_is(b'}') {
                        self.i += 1;
                    } else {
                        self.key("Expected property name or '}'")?;
                        stack.push(Container::Object);
                        opened = true;
                    }
                }
                0x5B => {
                    self.i += 1;
                    self.skip_ws();
                    if self.peek_is(b']') {
                        self.i += 1;
                    } else {
                        stack.push(Container::Array);
                        opened = true;
                    }
                }
                0x22 => self.string()?,
                0x2D => self.number()?,
                u if is_digit(u) => self.number()?,
                0x74 => self.literal(b"true")?,
                0x66 => self.literal(b"false")?,
                0x6E => self.literal(b"null")?,
                _ => return Err(Stop::Token(self.i)),
            }
            if opened {
                continue;
            }
            // A value ended: close containers until one wants another value.
            loop {
                self.skip_ws();
                match stack.last() {
                    None => {
                        return match self.peek() {
                            Some(_) => Err(Stop::Trailing(self.i)),
                            None => Ok(()),
                        };
                    }
                    Some(Container::Object) => {
                        if self.peek_is(b',') {
                            self.i += 1;
                            self.skip_ws();
                            self.key("Expected double-quoted property name")?;
                            break;
                        }
                        if !self.peek_is(b'}') {
                            return Err(Stop::At(
                                "Expected ',' or '}' after property value",
                                self.i,
                            ));
                        }
                    }
                    Some(Container::Array) => {
                        if self.peek_is(b',') {
                            self.i += 1;
                            break;
                        }
                        if !self.peek_is(b']') {
                            return Err(Stop::At(
                                "Expected ',' or ']' after array element",
                                self.i,
                            ));
                        }
                    }
                }
                self.i += 1;
                stack.pop();
            }
        }
    }

    /// ` at position <p> (line <l> column <c>)`.
    fn position(&self, pos: usize) -> String {
        let (mut line, mut line_start) = (1, 0);
        for (k, &u) in self.s[..pos.min(self.s.len())].iter().enumerate() {
            let ends_line = match u {
                0x0A | 0x2028 | 0x2029 => true,
                // CRLF is one line end, counted at its LF.
                0x0D => self.s.get(k + 1) != Some(&0x0A),
                _ => false,
            };
            if ends_line {
                line += 1;
                line_start = k + 1;
            }
        }
        format!(
            " at position {pos} (line {line} column {})",
            pos - line_start + 1
        )
    }

    fn unexpected_token(&self, pos: usize) -> String {
        let token = String::from_utf16_lossy(&self.s[pos..pos + 1]);
        let len = self.s.len();
        if len <= CONTEXT * 2 + 1 {
            let source = String::from_utf16_lossy(&self.s);
            return format!("Unexpected token '{token}', \"{source}\" is not valid JSON");
        }
        let start = pos.saturating_sub(CONTEXT);
        let end = (pos + CONTEXT).min(len);
        let snippet = String::from_utf16_lossy(&self.s[start..end]);
        let pre = if start > 0 { "..." } else { "" };
        let post = if end < len { "..." } else { "" };
        format!("Unexpected token '{token}', {pre}\"{snippet}\"{post} is not valid JSON")
    }
}

/// The `JSON.parse` error message for `text`, or `None` when `JSON.parse` accepts it.
///
/// ```
/// use pi_ai::js_json_error::json_parse_error;
/// assert_eq!(
///     json_parse_error("{not json").as_deref(),
///     Some("Expected property name or '}' in JSON at position 1 (line 1 column 2)")
/// );
/// assert_eq!(json_parse_error("{\"a\":").as_deref(), Some("Unexpected end of JSON input"));
/// assert_eq!(json_parse_error("[1, {\"a\": null}]"), None);
/// ```
pub fn json_parse_error(text: &str) -> Option<String> {
    let mut scanner = Scanner {
        s: text.encode_utf16().collect(),
        i: 0,
    };
    let stop = scanner.scan().err()?;
    Some(match stop {
        Stop::End => "Unexpected end of JSON input".to_owned(),
        Stop::Token(pos) => scanner.unexpected_token(pos),
        Stop::At(message, pos) => format!("{message} in JSON{}", scanner.position(pos)),
        Stop::Trailing(pos) => format!(
            "Unexpected non-whitespace character after JSON{}",
            scanner.position(pos)
        ),
    })
}

/// The `JSON.parse` message for a text serde_json rejected with `err`: the scanner's message
/// when `JSON.parse` rejects it too, else serde_json's (texts JavaScript accepts but serde does
/// not, such as a lone surrogate escape or nesting past serde's depth limit).
pub fn json_parse_message(text: &str, err: &serde_json::Error) -> String {
    json_parse_error(text).unwrap_or_else(|| err.to_string())
}

#[cfg(test)]
mod tests;
