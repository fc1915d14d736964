//! JavaScript regular expressions (`/…/i`, no `u` flag) compiled with the `regex` crate.
//!
//! pi's classifiers (`utils/overflow.js`, `utils/retry.js`) are JavaScript regexes with the
//! `i` flag. Without the `u` flag JavaScript folds case for ASCII letters only (`K` never
//! matches the Kelvin sign), `\d` is `[0-9]`, `\s` is JavaScript's whitespace set (with
//! U+FEFF, without U+0085) and `.` is anything but `\n`, `\r`, U+2028 and U+2029. [`compile`]
//! gives the Rust regex those semantics.

use regex::Regex;

/// JavaScript `\s`: the WhiteSpace and LineTerminator code points.
const JS_SPACE: &str = r"(?u:[\t\n\x0B\x0C\r \u{A0}\u{1680}\u{2000}-\u{200A}\u{2028}\u{2029}\u{202F}\u{205F}\u{3000}\u{FEFF}])";

/// JavaScript `.` without the `s` flag.
const JS_DOT: &str = r"(?u:[^\n\r\u{2028}\u{2029}])";

/// Compiles a JavaScript pattern written with the `i` flag. Supported syntax: literals,
/// groups, alternation, quantifiers, classes of ASCII characters and `\d`, `\s`, `.`, `^`,
/// escaped punctuation. `None` if the translation does not compile (a programming error for
/// the constant patterns; their tests compile each one).
pub(crate) fn compile(source: &str) -> Option<Regex> {
    let mut out = String::from("(?i-u)");
    let mut in_class = false;
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let escaped = chars.next()?;
                if escaped == 's' && !in_class {
                    out.push_str(JS_SPACE);
                } else {
                    out.push('\\');
                    out.push(escaped);
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '.' if !in_class => out.push_str(JS_DOT),
            _ => out.push(c),
        }
    }
    Regex::new(&out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_match(pattern: &str, text: &str) -> bool {
        compile(pattern).unwrap().is_match(text)
    }

    #[test]
    fn case_folding_is_ascii_only() {
        assert!(is_match("too long", "TOO LONG"));
        assert!(!is_match("k", "\u{212A}"));
        assert!(!is_match("s", "\u{17F}"));
    }

    #[test]
    fn dot_and_space_follow_javascript() {
        assert!(is_match("a.b", "a\u{85}b"));
        assert!(!is_match("a.b", "a\nb"));
        assert!(!is_match("a.b", "a\u{2028}b"));
        assert!(is_match(r"a\sb", "a\u{FEFF}b"));
        assert!(!is_match(r"a\sb", "a\u{85}b"));
        assert!(is_match(r"[.]", "."));
        assert!(!is_match(r"[.]", "x"));
    }

    #[test]
    fn digits_are_ascii() {
        assert!(is_match(r"^\d+$", "0123456789"));
        assert!(!is_match(r"\d", "\u{0664}"));
    }
}
