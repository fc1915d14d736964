//! String-literal repair and the strict parse shared by every stage of `parseStreamingJson`.
//!
//! Mirrors pi-ai 0.85.1 `utils/json-parse.js` (`repairJson`, `JSON.parse`), with one Rust
//! difference: `serde_json` rejects lone UTF-16 surrogate escapes (`"\ud83d"`) that
//! JavaScript accepts, so [`strict_parse`] retries with those escapes removed (pi-rs drops
//! unpaired surrogates everywhere).

use std::borrow::Cow;

use serde_json::Value;

use crate::json_depth::{self, DeepJsonError, MAX_DOCUMENT_DEPTH};

/// JavaScript's `WhiteSpace` and `LineTerminator` (what `String.prototype.trim` removes):
/// unlike Rust's `char::is_whitespace`, U+FEFF is included and U+0085 is not.
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{B}' | '\u{C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// JavaScript's `String.prototype.trim`.
pub(crate) fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

/// `JSON.parse(text)`: the whole text must be one JSON value (surrounding JSON whitespace
/// allowed). Lone surrogate escapes are dropped instead of failing. Non-finite numbers cannot
/// occur (JSON has no syntax for them).
///
/// Nesting up to [`MAX_DOCUMENT_DEPTH`] parses exactly (serde_json's own limit of 128 would
/// fail deeper text, and the lenient stage would then rebuild it in another shape); deeper text
/// fails.
pub(crate) fn strict_parse(text: &str) -> Option<Value> {
    match json_depth::from_str(text, MAX_DOCUMENT_DEPTH) {
        Ok(value) => Some(value),
        Err(DeepJsonError::TooDeep { .. }) => None,
        Err(_) if text.contains("\\u") => {
            let cleaned = drop_lone_surrogate_escapes(text);
            match cleaned {
                Cow::Owned(cleaned) => json_depth::from_str(&cleaned, MAX_DOCUMENT_DEPTH).ok(),
                Cow::Borrowed(_) => None,
            }
        }
        Err(_) => None,
    }
}

/// pi's `repairJson`: inside string literals, raw control characters (U+0000–U+001F) are
/// escaped (`\b \f \n \r \t`, else `\u00xx`), a backslash before an invalid escape character
/// (or at the very end) is doubled, and valid escapes are kept. Text outside strings is copied.
pub(crate) fn repair_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 8);
    let mut in_string = false;
    let mut chars = json.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        if !in_string {
            out.push(c);
            in_string = c == '"';
            continue;
        }
        match c {
            '"' => {
                out.push('"');
                in_string = false;
            }
            '\\' => match chars.peek().map(|&(_, next)| next) {
                None => out.push_str("\\\\"),
                Some('u') if is_hex4(json.as_bytes().get(index + 2..index + 6)) => {
                    out.push_str(&json[index..index + 6]);
                    // Skip `u` and the four digits.
                    for _ in 0..5 {
                        chars.next();
                    }
                }
                Some(next @ ('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' | 'u')) => {
                    out.push('\\');
                    out.push(next);
                    chars.next();
                }
                Some(_) => out.push_str("\\\\"),
            },
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn is_hex4(bytes: Option<&[u8]>) -> bool {
    bytes.is_some_and(|b| b.len() == 4 && b.iter().all(u8::is_ascii_hexdigit))
}

/// The value of the `\uXXXX` escape starting at `bytes[at]` (the backslash), if well formed.
fn unicode_escape_at(bytes: &[u8], at: usize) -> Option<u16> {
    if bytes.get(at) != Some(&b'\\') || bytes.get(at + 1) != Some(&b'u') {
        return None;
    }
    let digits = bytes.get(at + 2..at + 6)?;
    let text = std::str::from_utf8(digits).ok()?;
    if !is_hex4(Some(digits)) {
        return None;
    }
    u16::from_str_radix(text, 16).ok()
}

/// Removes `\uD800`–`\uDFFF` escapes that are not part of a high+low pair, inside string
/// literals only. Borrowed when there is nothing to remove.
pub(crate) fn drop_lone_surrogate_escapes(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0; // bytes[..copied] are already in `out` (or unchanged so far)
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !in_string {
            in_string = b == b'"';
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' => match unicode_escape_at(bytes, i) {
                Some(0xD800..=0xDBFF) => {
                    let paired = unicode_escape_at(bytes, i + 6)
                        .is_some_and(|low| (0xDC00..=0xDFFF).contains(&low));
                    if paired {
                        i += 12;
                    } else {
                        let buf = out.get_or_insert_with(String::new);
                        buf.push_str(&text[copied..i]);
                        i += 6;
                        copied = i;
                    }
                }
                Some(0xDC00..=0xDFFF) => {
                    let buf = out.get_or_insert_with(String::new);
                    buf.push_str(&text[copied..i]);
                    i += 6;
                    copied = i;
                }
                // Any other escape: skip the backslash and the escaped character.
                _ => i += 2,
            },
            _ => i += 1,
        }
    }
    match out {
        Some(mut buf) => {
            buf.push_str(&text[copied.min(text.len())..]);
            Cow::Owned(buf)
        }
        None => Cow::Borrowed(text),
    }
}

/// `JSON.parse` of a JSON string literal given as raw bytes (the lenient parser's sub-parses).
/// `None` when the bytes are not exactly one string literal (optionally with surrounding JSON
/// whitespace). Lone surrogate escapes are dropped.
pub(crate) fn parse_string_literal(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    match strict_parse(text)? {
        Value::String(s) => Some(s),
        _ => None,
    }
}
