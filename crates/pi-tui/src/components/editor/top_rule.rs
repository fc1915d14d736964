//! The editor's top rule with a working status drawn into it, as pi-coding-agent 0.85.0's
//! `CustomEditor.renderTopBorder` draws its working indicator: `── ⠋ Working ──────`, with the
//! ` ↑ N more ` scroll label centred when lines are hidden above, the spinner alone when the
//! text does not fit.

use crate::components::plain_text;

/// A status shown in the editor's top rule, as plain text (no escape sequences; the rule's
/// colour paints it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BorderStatus {
    /// The spinner and its message, `⠋ Working`.
    pub text: String,
    /// The spinner alone, for narrow widths.
    pub spinner: String,
}

/// The top rule of `width` cells (plain text) with `status` in it and, when `hidden` lines
/// are scrolled off above, the ` ↑ N more ` label; `None` when the status is empty (the
/// plain rule applies).
pub(super) fn with_status(status: &BorderStatus, width: usize, hidden: usize) -> Option<String> {
    if width == 0 {
        return None;
    }
    let clean = |s: &str| plain_text::single_line(s);
    let full = clean(&status.text);
    let spinner = clean(&status.spinner);
    let mut text = plain_text::truncate(&full, width.saturating_sub(5).max(1)).to_owned();
    let mut text_width = plain_text::width(&text);
    if text_width == 0 {
        return None;
    }
    let overflow = (hidden > 0).then(|| format!(" ↑ {hidden} more "));
    let overflow_width = overflow.as_deref().map_or(0, plain_text::width);
    let overflow_start = width.saturating_sub(overflow_width) / 2;
    let fits = |tw: usize| {
        overflow.is_some() && overflow_width + 2 <= width && overflow_start > 3 + tw + 1
    };
    if overflow.is_some() && !fits(text_width) {
        text = plain_text::truncate(&spinner, width).to_owned();
        text_width = plain_text::width(&text);
    }
    let rule = |n: usize| "─".repeat(n);
    if let Some(label) = overflow.as_deref().filter(|_| fits(text_width)) {
        let left = overflow_start - (3 + text_width + 1);
        return Some(format!(
            "── {text} {}{label}{}",
            rule(left),
            rule(width - overflow_start - overflow_width)
        ));
    }
    if width >= text_width + 5 {
        return Some(format!("── {text} {}", rule(width - text_width - 4)));
    }
    let text = plain_text::truncate(&spinner, width).to_owned();
    let text_width = plain_text::width(&text);
    let prefix = 3.min(width.saturating_sub(text_width));
    Some(format!(
        "{}{text}{}",
        rule(prefix),
        rule(width.saturating_sub(prefix + text_width))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn working() -> BorderStatus {
        BorderStatus {
            text: "⠋ Working".into(),
            spinner: "⠋".into(),
        }
    }

    #[test]
    fn the_status_sits_after_two_rule_cells() {
        let line = with_status(&working(), 20, 0).unwrap();
        assert_eq!(line, "── ⠋ Working ───────");
        assert_eq!(plain_text::width(&line), 20);
    }

    #[test]
    fn the_scroll_label_stays_centred_beside_it() {
        let line = with_status(&working(), 40, 3).unwrap();
        assert_eq!(line, format!("── ⠋ Working ── ↑ 3 more {}", "─".repeat(15)));
        assert_eq!(plain_text::width(&line), 40);
        // No room for both: the spinner alone beside the label.
        let line = with_status(&working(), 24, 3).unwrap();
        assert_eq!(line, "── ⠋ ── ↑ 3 more ───────");
        assert_eq!(plain_text::width(&line), 24);
    }

    #[test]
    fn narrow_rules_keep_the_spinner_and_the_width() {
        for w in 1..12 {
            let line = with_status(&working(), w, 0).unwrap();
            assert_eq!(plain_text::width(&line), w, "{w}: {line:?}");
            assert!(line.contains('⠋'), "{w}: {line:?}");
        }
        assert_eq!(with_status(&working(), 8, 0).unwrap(), "── ⠋ W ─");
        assert_eq!(with_status(&working(), 5, 0).unwrap(), "───⠋─");
        let empty = BorderStatus::default();
        assert_eq!(with_status(&empty, 30, 0), None);
        assert_eq!(with_status(&working(), 0, 0), None);
    }

    #[test]
    fn control_characters_never_reach_the_rule() {
        let s = BorderStatus {
            text: "⠋ a\x1b[31m\nb".into(),
            spinner: "⠋".into(),
        };
        let line = with_status(&s, 30, 0).unwrap();
        assert!(!line.contains('\x1b') && !line.contains('\n'), "{line:?}");
    }
}
