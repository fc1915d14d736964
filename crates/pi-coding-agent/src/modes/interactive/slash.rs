//! The built-in slash commands the interactive mode has so far, recognised as pi recognises
//! them (`modes/interactive/interactive-mode.js`: the exact word, or the word and a space
//! before its argument). Any other `/text` goes to the session as a prompt, where extension
//! commands, `/skill:name` and prompt templates are expanded, as in pi.

/// A recognised command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slash {
    /// `/quit`.
    Quit,
    /// `/name [name]` (the trimmed argument; empty shows the current name).
    Name(String),
    /// `/session`.
    Session,
    /// `/compact [instructions]`.
    Compact(Option<String>),
    /// `/copy`.
    Copy,
}

/// `text` as a built-in command, if it is one.
pub fn parse(text: &str) -> Option<Slash> {
    let arg = |word: &str| -> Option<Option<String>> {
        if text == word {
            Some(None)
        } else {
            text.strip_prefix(word)
                .and_then(|rest| rest.strip_prefix(char::is_whitespace))
                .map(|rest| Some(rest.trim().to_owned()))
        }
    };
    if text == "/quit" {
        return Some(Slash::Quit);
    }
    if text == "/session" {
        return Some(Slash::Session);
    }
    if text == "/copy" {
        return Some(Slash::Copy);
    }
    if let Some(a) = arg("/compact") {
        return Some(Slash::Compact(a.filter(|s| !s.is_empty())));
    }
    // pi matches `/name` as a prefix (`/name\s*`), so `/namex` is not it.
    if let Some(a) = arg("/name") {
        return Some(Slash::Name(a.unwrap_or_default()));
    }
    None
}

/// A count as JavaScript's `toLocaleString()` writes it in the `en-US` locale: `1,234,567`.
pub fn locale_count(n: f64) -> String {
    let n = if n.is_finite() {
        n.max(0.0).round()
    } else {
        0.0
    };
    let digits = format!("{n:.0}");
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_as_pi_recognises_them() {
        assert_eq!(parse("/quit"), Some(Slash::Quit));
        assert_eq!(parse("/quit now"), None);
        assert_eq!(parse("/session"), Some(Slash::Session));
        assert_eq!(parse("/compact"), Some(Slash::Compact(None)));
        assert_eq!(
            parse("/compact keep the API notes"),
            Some(Slash::Compact(Some("keep the API notes".into())))
        );
        assert_eq!(parse("/compacted"), None);
        assert_eq!(parse("/name"), Some(Slash::Name(String::new())));
        assert_eq!(
            parse("/name  my work "),
            Some(Slash::Name("my work".into()))
        );
        assert_eq!(parse("/copy"), Some(Slash::Copy));
        assert_eq!(parse("/skill:review"), None);
        assert_eq!(parse("hello"), None);
    }

    #[test]
    fn counts_with_thousands_separators() {
        assert_eq!(locale_count(0.0), "0");
        assert_eq!(locale_count(999.0), "999");
        assert_eq!(locale_count(1000.0), "1,000");
        assert_eq!(locale_count(1_234_567.0), "1,234,567");
        assert_eq!(locale_count(f64::NAN), "0");
    }
}
