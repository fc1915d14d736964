//! A string order close to JavaScript's `a.localeCompare(b)` (ICU root collation) for the
//! identifiers pi sorts: model ids, provider ids, file names.
//!
//! Primary level: case and common Latin accents ignored; whitespace and punctuation (in ICU's
//! order `_ - , ; : ! ? . ' " ( ) [ ] { } @ * / \ & # % ` ^ + < = > | ~ $`) sort before digits,
//! digits before letters. Ties are broken by accents (plain first), then case (lower first),
//! then code point.

use std::cmp::Ordering;

const PUNCTUATION: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

fn base_letter(c: char) -> Option<char> {
    let lower = c.to_lowercase().next().unwrap_or(c);
    let base = match lower {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => 'a',
        'ç' => 'c',
        'è' | 'é' | 'ê' | 'ë' => 'e',
        'ì' | 'í' | 'î' | 'ï' => 'i',
        'ñ' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' => 'o',
        'ù' | 'ú' | 'û' | 'ü' => 'u',
        'ý' | 'ÿ' => 'y',
        other => other,
    };
    base.is_alphabetic().then_some(base)
}

/// Primary weight: (class, value).
fn primary(c: char) -> (u8, u32) {
    if c.is_whitespace() {
        return (0, c as u32);
    }
    if let Some(i) = PUNCTUATION.find(c) {
        return (1, i as u32);
    }
    if c.is_ascii_digit() {
        return (3, c as u32);
    }
    if let Some(b) = base_letter(c) {
        return (4, b as u32);
    }
    // Other symbols: after the known punctuation, before digits.
    (2, c as u32)
}

fn secondary(c: char) -> u8 {
    let lower = c.to_lowercase().next().unwrap_or(c);
    u8::from(base_letter(c).is_some_and(|b| b != lower))
}

fn tertiary(c: char) -> u8 {
    u8::from(c.is_uppercase())
}

/// Compares like `a.localeCompare(b)`.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    let key =
        |s: &str, f: &dyn Fn(char) -> (u8, u32)| -> Vec<(u8, u32)> { s.chars().map(f).collect() };
    key(a, &primary)
        .cmp(&key(b, &primary))
        .then_with(|| key(a, &|c| (secondary(c), 0)).cmp(&key(b, &|c| (secondary(c), 0))))
        .then_with(|| key(a, &|c| (tertiary(c), 0)).cmp(&key(b, &|c| (tertiary(c), 0))))
        .then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_ls_order_of_lowercased_names() {
        // pi's ls sorts `a.toLowerCase().localeCompare(b.toLowerCase())`.
        let mut names = vec![
            "z",
            "notes.txt",
            "B",
            "a.b",
            "~x",
            "é",
            "a_b",
            ".hidden",
            "a",
            "-b",
            "_a",
        ];
        names.sort_by(|a, b| locale_compare(&a.to_lowercase(), &b.to_lowercase()));
        assert_eq!(
            names,
            vec![
                "_a",
                "-b",
                ".hidden",
                "~x",
                "a",
                "a_b",
                "a.b",
                "B",
                "é",
                "notes.txt",
                "z"
            ]
        );
    }

    #[test]
    fn digits_before_letters_and_case_tiebreak() {
        assert_eq!(locale_compare("gpt-4o", "gpt-o1"), Ordering::Less);
        assert_eq!(locale_compare("a", "A"), Ordering::Less);
        assert_eq!(locale_compare("abc", "ABD"), Ordering::Less);
        assert_eq!(locale_compare("claude-3", "claude-3-5"), Ordering::Less);
        assert_eq!(locale_compare("x", "x"), Ordering::Equal);
    }
}
