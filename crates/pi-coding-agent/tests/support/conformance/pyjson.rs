//! Python's `json.dumps` and `str.splitlines`, as the shared harness (`run_pi.py`,
//! `compare.py`) applies them: goldens are Python's spelling of each value.

use serde_json::{Map, Number, Value};

/// `json.dumps` options the harness uses.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Dumps {
    /// `sort_keys=True`.
    pub sort_keys: bool,
    /// `ensure_ascii=True` (Python's default): everything outside `' '..='~'` escaped.
    pub ensure_ascii: bool,
    /// `indent=n` (then items are separated by `,` + newline, else by `, `).
    pub indent: Option<usize>,
}

/// `json.dumps(v, sort_keys=True, ensure_ascii=False)`: the harness's record spelling.
pub(crate) fn dumps(v: &Value) -> String {
    Dumps {
        sort_keys: true,
        ..Dumps::default()
    }
    .to_string(v)
}

impl Dumps {
    /// Serializes `v` as Python would.
    pub(crate) fn to_string(self, v: &Value) -> String {
        let mut out = String::new();
        self.write(&mut out, v, 0);
        out
    }

    fn newline(self, out: &mut String, depth: usize) {
        if let Some(n) = self.indent {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', n * depth));
        }
    }

    fn separator(self) -> &'static str {
        if self.indent.is_some() { "," } else { ", " }
    }

    fn write(self, out: &mut String, v: &Value, depth: usize) {
        match v {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => out.push_str(&number(n)),
            Value::String(s) => string(out, s, self.ensure_ascii),
            Value::Array(items) => {
                if items.is_empty() {
                    out.push_str("[]");
                    return;
                }
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(self.separator());
                    }
                    self.newline(out, depth + 1);
                    self.write(out, item, depth + 1);
                }
                self.newline(out, depth);
                out.push(']');
            }
            Value::Object(map) => {
                if map.is_empty() {
                    out.push_str("{}");
                    return;
                }
                out.push('{');
                for (i, (k, item)) in self.entries(map).into_iter().enumerate() {
                    if i > 0 {
                        out.push_str(self.separator());
                    }
                    self.newline(out, depth + 1);
                    string(out, k, self.ensure_ascii);
                    out.push_str(": ");
                    self.write(out, item, depth + 1);
                }
                self.newline(out, depth);
                out.push('}');
            }
        }
    }

    fn entries(self, map: &Map<String, Value>) -> Vec<(&String, &Value)> {
        let mut entries: Vec<_> = map.iter().collect();
        if self.sort_keys {
            // Python compares code points; UTF-8 byte order is the same order.
            entries.sort_by(|a, b| a.0.cmp(b.0));
        }
        entries
    }
}

fn string(out: &mut String, s: &str, ensure_ascii: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if ensure_ascii && !(' '..='~').contains(&c) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A JSON number as Python writes it: integers as integers, floats with `repr` (`5.0`,
/// `7.5e-05`, `1e+16`, `0.0001`).
pub(crate) fn number(n: &Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() => float_repr(f),
        _ => n.to_string(),
    }
}

/// Python's `float.__repr__` (shortest round-trip digits; exponent form when the decimal
/// point would sit more than 16 places right or 4 or more places left of the digits).
pub(crate) fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    // Rust's `{:e}` gives the shortest round-trip digits: `d[.ddd]e<exp>`.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let decpt = exp + 1;
    let body = if decpt <= -4 || decpt > 16 {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{first}{frac}e{esign}{:02}", exp.abs())
    } else if decpt <= 0 {
        format!("0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt as usize >= digits.len() {
        format!("{digits}{}.0", "0".repeat(decpt as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(decpt as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

/// Python's `str.splitlines()`: splits on `\n`, `\r\n`, `\r`, `\v`, `\f`, `\x1c`–`\x1e`,
/// `\x85`, U+2028, U+2029; no empty item after a final separator.
pub(crate) fn splitlines(s: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\u{b}'
                | '\u{c}'
                | '\u{1c}'
                | '\u{1d}'
                | '\u{1e}'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if !is_break {
            continue;
        }
        lines.push(&s[start..i]);
        let mut end = i + c.len_utf8();
        if c == '\r' && chars.peek().is_some_and(|(_, n)| *n == '\n') {
            chars.next();
            end += 1;
        }
        start = end;
    }
    if start < s.len() {
        lines.push(&s[start..]);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_as_python_repr() {
        for (x, want) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (5.0, "5.0"),
            (0.3, "0.3"),
            (3.75, "3.75"),
            (0.0001, "0.0001"),
            (0.000075, "7.5e-05"),
            (0.00001, "1e-05"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (1.5e300, "1.5e+300"),
            (123.456, "123.456"),
            (-2.5e-7, "-2.5e-07"),
        ] {
            assert_eq!(float_repr(x), want, "{x}");
        }
    }

    #[test]
    fn dumps_like_python() {
        let v: Value = serde_json::from_str(
            r#"{"b": [1, 2.0, {"z": null, "a": true}], "a": "é\u0001\n\"\\\u007f😀", "c": {}, "d": []}"#,
        )
        .unwrap();
        assert_eq!(
            dumps(&v),
            "{\"a\": \"é\\u0001\\n\\\"\\\\\u{7f}😀\", \"b\": [1, 2.0, {\"a\": true, \"z\": null}], \"c\": {}, \"d\": []}"
        );
        let ascii = Dumps {
            ensure_ascii: true,
            ..Dumps::default()
        };
        assert_eq!(
            ascii.to_string(&json!("é\u{7f}😀")),
            "\"\\u00e9\\u007f\\ud83d\\ude00\""
        );
        let pretty = Dumps {
            sort_keys: true,
            indent: Some(2),
            ..Dumps::default()
        };
        assert_eq!(
            pretty.to_string(&json!({"b": {"x": [1, []]}, "a": "t"})),
            "{\n  \"a\": \"t\",\n  \"b\": {\n    \"x\": [\n      1,\n      []\n    ]\n  }\n}"
        );
    }

    #[test]
    fn splitlines_like_python() {
        assert_eq!(
            splitlines("a\nb\r\nc\rd\u{2028}e\u{85}f\n"),
            ["a", "b", "c", "d", "e", "f"]
        );
        assert_eq!(splitlines("a\n\nb"), ["a", "", "b"]);
        assert!(splitlines("").is_empty());
        assert_eq!(splitlines("\n"), [""]);
    }
}
