//! Display width of plain text (no escape sequences): grapheme clusters measured with
//! unicode-width, for the editor and the select list.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Cells one grapheme cluster takes: its unicode-width width, at most 2 for a multi-character
/// cluster (an emoji ZWJ sequence or a flag is one wide glyph, not the sum of its parts).
pub(crate) fn grapheme_width(g: &str) -> usize {
    let w = UnicodeWidthStr::width(g);
    if g.chars().nth(1).is_some() {
        w.min(2)
    } else {
        w
    }
}

/// Cells `text` takes.
pub(crate) fn width(text: &str) -> usize {
    if text.is_ascii() {
        return text.bytes().filter(|b| !b.is_ascii_control()).count();
    }
    text.graphemes(true).map(grapheme_width).sum()
}

/// The longest prefix of `text` (whole grapheme clusters) that fits in `max` cells.
pub(crate) fn truncate(text: &str, max: usize) -> &str {
    let mut used = 0;
    for (i, g) in text.grapheme_indices(true) {
        let w = grapheme_width(g);
        if used + w > max {
            return &text[..i];
        }
        used += w;
    }
    text
}

/// `text` on one line: runs of CR/LF become one space, the ends trimmed, other control
/// characters dropped.
pub(crate) fn single_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_break = false;
    for c in text.chars() {
        if c == '\r' || c == '\n' {
            if !in_break {
                out.push(' ');
            }
            in_break = true;
            continue;
        }
        in_break = false;
        if !c.is_control() {
            out.push(c);
        }
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本"), 4);
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(width("👨‍👩‍👧"), 2);
        assert_eq!(truncate("日本語", 5), "日本");
        assert_eq!(truncate("abc", 0), "");
        assert_eq!(single_line(" a\r\n\nb\x07 "), "a b");
    }
}
