//! Small text helpers shared by the configuration loaders.
//!
//! Mirrors pi 0.85.0 `utils/text.js` (`stripBom`) and `utils/json.js` (`stripJsonComments`:
//! `//` line comments and trailing commas are removed outside string literals; block comments
//! are not supported, as in the reference).

/// A file's text as Node's `readFileSync(path, "utf-8")` gives it: bytes that are not UTF-8
/// become U+FFFD instead of failing the read.
///
/// # Errors
/// The file cannot be read (missing, a directory, no permission).
pub fn read_text_lossy(path: &std::path::Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// Removes one leading U+FEFF.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Removes `//` comments and trailing commas (`,` before `}` or `]`) outside strings.
///
/// Line structure is preserved (comments are removed up to, not including, the newline), so
/// parse errors still point at the right line.
pub fn strip_json_comments(input: &str) -> String {
    let without_comments = strip_line_comments(input);
    strip_trailing_commas(&without_comments)
}

fn strip_line_comments(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut chars = input.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == '/' && chars.peek() == Some(&'/') {
            while chars.peek().is_some_and(|&n| n != '\n') {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn strip_trailing_commas(input: &str) -> String {
    let chars: Vec<char> = input.chars().collect();
    let mut out = String::with_capacity(input.len());
    let mut in_string = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 1;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|n| !n.is_whitespace());
            if !matches!(next, Some('}' | ']')) {
                out.push(c);
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// `message` for a serde_json error, naming line and column (`… at line L column C`).
pub fn json_error_message(err: &serde_json::Error) -> String {
    err.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_is_stripped_once() {
        assert_eq!(strip_bom("\u{feff}{}"), "{}");
        assert_eq!(strip_bom("{}"), "{}");
    }

    #[test]
    fn comments_and_trailing_commas_outside_strings() {
        let src = "{\n  // note\n  \"url\": \"http://x//y\", // tail\n  \"a\": [1, 2,],\n  \"s\": \",}\",\n}";
        let out = strip_json_comments(src);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["url"], "http://x//y");
        assert_eq!(v["a"], serde_json::json!([1, 2]));
        assert_eq!(v["s"], ",}");
        assert_eq!(out.lines().count(), src.lines().count());
    }

    #[test]
    fn escaped_quotes_keep_string_state() {
        let out = strip_json_comments(r#"{"a": "x\"//y"}"#);
        assert_eq!(out, r#"{"a": "x\"//y"}"#);
    }
}
