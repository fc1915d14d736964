//! `JSON.parse` error texts, as Node 22 words them, for the files pi reports on.
//!
//! pi quotes the message of `JSON.parse` in its diagnostics (e.g. `Invalid settings file <path>:
//! Expected double-quoted property name in JSON at position 27 (line 3 column 3)`). We parse with
//! serde_json and translate its error into V8's wording: the position is the offending
//! character's UTF-16 index; Node appends `(line L column C)`; `Unexpected token` messages show
//! the source (whole up to 21 characters, else 10 characters of context on each side).

use serde_json::error::Category;

/// V8's context window on each side of an unexpected token.
const CONTEXT: usize = 10;

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Byte offset of serde's 1-based (line, column) — column counted in bytes.
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            let col = column.saturating_sub(1).min(l.len());
            let mut at = offset + col;
            while at < text.len() && !text.is_char_boundary(at) {
                at += 1;
            }
            return at;
        }
        offset += l.len();
    }
    text.len()
}

fn located(message: &str, text: &str, byte: usize) -> String {
    position_suffix(&format!("{message} in JSON"), text, byte)
}

fn position_suffix(message: &str, text: &str, byte: usize) -> String {
    let before = &text[..byte];
    let pos = utf16_len(before);
    let line = before.matches('\n').count() + 1;
    let column = utf16_len(&before[before.rfind('\n').map_or(0, |i| i + 1)..]) + 1;
    format!("{message} at position {pos} (line {line} column {column})")
}

fn unexpected_token(text: &str, byte: usize) -> String {
    let token = text[byte..].chars().next().unwrap_or(' ');
    let units: Vec<u16> = text.encode_utf16().collect();
    let pos = utf16_len(&text[..byte]);
    if units.len() <= CONTEXT * 2 + 1 {
        return format!("Unexpected token '{token}', \"{text}\" is not valid JSON");
    }
    let start = pos.saturating_sub(CONTEXT);
    let end = (pos + CONTEXT).min(units.len());
    let snippet = String::from_utf16_lossy(&units[start..end]);
    let pre = if start > 0 { "..." } else { "" };
    let post = if end < units.len() { "..." } else { "" };
    format!("Unexpected token '{token}', {pre}\"{snippet}\"{post} is not valid JSON")
}

/// The `JSON.parse` message for `text`, given serde_json's error on the same text.
pub fn js_json_parse_message(text: &str, err: &serde_json::Error) -> String {
    if err.classify() == Category::Eof {
        let message = err.to_string();
        if message.starts_with("EOF while parsing a string") {
            return located("Unterminated string", text, text.len());
        }
        return "Unexpected end of JSON input".to_owned();
    }
    if err.classify() != Category::Syntax {
        return err.to_string();
    }
    let byte = byte_offset(text, err.line(), err.column());
    let at = text[byte..].chars().next();
    let full = err.to_string();
    let kind = full.split(" at line ").next().unwrap_or(&full);
    match kind {
        "key must be a string" => located("Expected double-quoted property name", text, byte),
        "expected `:`" => located("Expected ':' after property name", text, byte),
        "expected `,` or `}`" => located("Expected ',' or '}' after property value", text, byte),
        "expected `,` or `]`" => located("Expected ',' or ']' after array element", text, byte),
        "trailing characters" => {
            position_suffix("Unexpected non-whitespace character after JSON", text, byte)
        }
        "trailing comma" if at == Some('}') => {
            located("Expected double-quoted property name", text, byte)
        }
        "invalid number" | "number out of range" => located("Unexpected number", text, byte),
        k if k.starts_with("control character") => {
            located("Bad control character in string literal", text, byte)
        }
        _ if at.is_some() => unexpected_token(text, byte),
        _ => "Unexpected end of JSON input".to_owned(),
    }
}

/// Parses JSON; on failure returns the `JSON.parse` message.
pub fn parse_json(text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|e| js_json_parse_message(text, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(text: &str) -> String {
        parse_json(text).unwrap_err()
    }

    // Expected texts: Node 22 (`JSON.parse`) on the same inputs.
    #[test]
    fn node_22_messages() {
        let cases = [
            (
                "{\n  \"a\": \"x\",\n  oops\n}",
                "Expected double-quoted property name in JSON at position 16 (line 3 column 3)",
            ),
            (
                "{\"a\":1,}",
                "Expected double-quoted property name in JSON at position 7 (line 1 column 8)",
            ),
            ("[1,]", "Unexpected token ']', \"[1,]\" is not valid JSON"),
            ("{\"a\":", "Unexpected end of JSON input"),
            ("", "Unexpected end of JSON input"),
            (
                "{\"a\" 1}",
                "Expected ':' after property name in JSON at position 5 (line 1 column 6)",
            ),
            (
                "{\"a\":1}}",
                "Unexpected non-whitespace character after JSON at position 7 (line 1 column 8)",
            ),
            (
                "{\"a\":tru}",
                "Unexpected token '}', \"{\"a\":tru}\" is not valid JSON",
            ),
            (
                "{\"a\":\"x}",
                "Unterminated string in JSON at position 8 (line 1 column 9)",
            ),
            (
                "{\"a\":1 \"b\":2}",
                "Expected ',' or '}' after property value in JSON at position 7 (line 1 column 8)",
            ),
            (
                "[1 2]",
                "Expected ',' or ']' after array element in JSON at position 3 (line 1 column 4)",
            ),
            (
                "{\"key\": [1, 2, 3], \"other\": value}",
                "Unexpected token 'v', ...\" \"other\": value}\" is not valid JSON",
            ),
            (
                "{\"key\": [1, 2, 3], \"other\": 1, \"more\": x, \"tail\": 2222222}",
                "Unexpected token 'x', ...\", \"more\": x, \"tail\":\"... is not valid JSON",
            ),
            (
                "{\"a\":\"\u{1}\"}",
                "Bad control character in string literal in JSON at position 6 (line 1 column 7)",
            ),
            (
                "{\"é\": 1,, }",
                "Expected double-quoted property name in JSON at position 8 (line 1 column 9)",
            ),
            (
                "{\n\"a\": 1,\n}",
                "Expected double-quoted property name in JSON at position 10 (line 3 column 1)",
            ),
            (
                "{\n  \"defaultModel\": \"x\",\n  oops\n}",
                "Expected double-quoted property name in JSON at position 27 (line 3 column 3)",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(msg(input), expected, "input {input:?}");
        }
    }
}
