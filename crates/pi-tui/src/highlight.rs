//! Syntax colours for fenced code (feature `highlight`, on by default): a small lexical
//! highlighter — comments, strings, numbers, keywords and capitalised type names — shared by
//! the common languages. It never changes the text, only wraps tokens in the style's SGR.

use crate::style::Style;

/// Keywords of the common languages (one list; a word that is a keyword in one language and
/// an identifier in another is coloured either way, which is harmless).
#[cfg(feature = "highlight")]
const KEYWORDS: &[&str] = &[
    "as",
    "async",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "def",
    "default",
    "defer",
    "do",
    "elif",
    "else",
    "enum",
    "except",
    "export",
    "extends",
    "false",
    "finally",
    "fn",
    "for",
    "from",
    "func",
    "function",
    "go",
    "if",
    "impl",
    "import",
    "in",
    "interface",
    "let",
    "loop",
    "match",
    "mod",
    "mut",
    "new",
    "nil",
    "None",
    "not",
    "null",
    "or",
    "and",
    "package",
    "pass",
    "pub",
    "raise",
    "return",
    "self",
    "Self",
    "static",
    "struct",
    "super",
    "switch",
    "this",
    "throw",
    "trait",
    "True",
    "False",
    "true",
    "try",
    "type",
    "typeof",
    "undefined",
    "use",
    "var",
    "where",
    "while",
    "with",
    "yield",
    "lambda",
    "local",
    "then",
    "end",
    "fi",
    "done",
    "echo",
];

/// Which line-comment starts a language uses.
#[cfg(feature = "highlight")]
fn comment_starts(lang: &str) -> &'static [&'static str] {
    match lang {
        "py" | "python" | "sh" | "bash" | "zsh" | "shell" | "rb" | "ruby" | "yaml" | "yml"
        | "toml" | "perl" | "r" | "make" | "makefile" | "dockerfile" | "conf" => &["#"],
        "sql" | "lua" | "haskell" | "hs" => &["--"],
        "lisp" | "clojure" | "scheme" | "el" => &[";"],
        "" | "text" | "txt" | "plain" | "md" | "markdown" | "mermaid" | "latex" | "tex"
        | "math" => &[],
        _ => &["//"],
    }
}

/// The line with syntax colours, or `None` when highlighting is off or the language is one
/// that is shown as plain source (text, markdown, mermaid, LaTeX).
#[cfg(feature = "highlight")]
pub fn highlight_line(line: &str, lang: &str, style: &Style) -> Option<String> {
    let lang = lang.to_ascii_lowercase();
    if matches!(
        lang.as_str(),
        "" | "text" | "txt" | "plain" | "md" | "markdown" | "mermaid" | "latex" | "tex" | "math"
    ) || style.syntax_keyword.is_empty()
    {
        return None;
    }
    let comments = comment_starts(&lang);
    let mut out = String::with_capacity(line.len() * 2);
    let base = &style.md_code_block;
    let emit = |out: &mut String, sgr: &str, t: &str| {
        let sgr = if sgr.is_empty() { base } else { sgr };
        if sgr.is_empty() {
            out.push_str(t);
        } else {
            out.push_str(sgr);
            out.push_str(t);
            out.push_str(crate::ansi::RESET);
        }
    };
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let rest = &line[i..];
        if let Some(c) = comments.iter().find(|c| rest.starts_with(**c)) {
            let _ = c;
            emit(&mut out, &style.syntax_comment, rest);
            break;
        }
        let ch = rest.chars().next().unwrap_or(' ');
        let len = ch.len_utf8();
        if ch == '"' || ch == '\'' || ch == '`' {
            let mut j = i + 1;
            while j < b.len() && b[j] != ch as u8 {
                if b[j] == b'\\' {
                    j += 1;
                }
                j += 1;
            }
            let end = (j + 1).min(b.len());
            let end = (end..=b.len())
                .find(|&e| line.is_char_boundary(e))
                .unwrap_or(b.len());
            emit(&mut out, &style.syntax_string, &line[i..end]);
            i = end;
        } else if ch.is_ascii_digit() {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
                .map_or(b.len(), |e| i + e);
            emit(&mut out, &style.syntax_number, &line[i..end]);
            i = end;
        } else if ch.is_alphabetic() || ch == '_' {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map_or(b.len(), |e| i + e);
            let word = &line[i..end];
            let sgr = if KEYWORDS.contains(&word) {
                &style.syntax_keyword
            } else if word.chars().next().is_some_and(char::is_uppercase) {
                &style.syntax_type
            } else {
                base
            };
            emit(&mut out, sgr, word);
            i = end;
        } else {
            let end = rest
                .find(|c: char| {
                    c.is_alphanumeric()
                        || c == '_'
                        || c == '"'
                        || c == '\''
                        || c == '`'
                        || comments.iter().any(|s| s.starts_with(c))
                })
                .map_or(b.len(), |e| i + e.max(len));
            emit(&mut out, base, &line[i..end]);
            i = end;
        }
    }
    Some(out)
}

/// Highlighting is compiled out: code is drawn in the code-block style.
#[cfg(not(feature = "highlight"))]
pub fn highlight_line(_line: &str, _lang: &str, _style: &Style) -> Option<String> {
    None
}

#[cfg(all(test, feature = "highlight"))]
mod tests {
    use super::*;
    use crate::capabilities::ColorDepth;

    #[test]
    fn colours_tokens_and_keeps_the_text() {
        let st = Style::dark(ColorDepth::Ansi16, false);
        for (line, lang) in [
            ("fn main() { let x = \"hi\"; // note", "rust"),
            ("def f(a): return 1.5  # c", "python"),
            ("x = 'unterminated", "js"),
            ("naïve → ünïcode \"é\"", "go"),
        ] {
            let h = highlight_line(line, lang, &st).unwrap_or_default();
            assert_eq!(crate::ansi::strip(&h), line);
            assert!(h.contains(&st.syntax_string) || !line.contains('"'));
        }
        let h = highlight_line("let x", "rust", &st).unwrap_or_default();
        assert!(h.starts_with(&format!("{}let", st.syntax_keyword)));
        assert!(highlight_line("graph TD", "mermaid", &st).is_none());
        assert!(highlight_line("let x", "rust", &Style::plain()).is_none());
    }
}
