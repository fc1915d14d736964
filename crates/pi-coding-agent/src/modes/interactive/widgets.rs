//! `ctx.ui.setWidget`: extension lines shown above or below the editor, as pi's interactive
//! mode shows string-array widgets (each key one block, blocks in the order their keys were
//! last set, at most ten entries a block then a "... (widget truncated)" line).

use pi_tui::ansi::{self, Token};
use pi_tui::theme::Theme;

use crate::extensions::WidgetPlacement;

/// pi's `MAX_WIDGET_LINES`: entries shown of one widget.
pub(super) const MAX_WIDGET_LINES: usize = 10;

/// The widgets by placement, each in insertion order.
#[derive(Debug, Default)]
pub(super) struct Widgets {
    above: Vec<(String, Vec<String>)>,
    below: Vec<(String, Vec<String>)>,
}

impl Widgets {
    /// Sets or (`None`) removes the widget `key`. Setting a key again moves it to the end of
    /// its placement, as pi's delete-then-insert does.
    pub(super) fn set(
        &mut self,
        key: &str,
        lines: Option<Vec<String>>,
        placement: WidgetPlacement,
    ) {
        self.above.retain(|(k, _)| k != key);
        self.below.retain(|(k, _)| k != key);
        if let Some(lines) = lines {
            let list = match placement {
                WidgetPlacement::AboveEditor => &mut self.above,
                WidgetPlacement::BelowEditor => &mut self.below,
            };
            list.push((key.to_owned(), lines));
        }
    }

    /// The rows above the editor.
    pub(super) fn render_above(&self, width: usize, theme: &Theme) -> Vec<String> {
        render(&self.above, width, theme)
    }

    /// The rows below the editor.
    pub(super) fn render_below(&self, width: usize, theme: &Theme) -> Vec<String> {
        render(&self.below, width, theme)
    }
}

fn render(widgets: &[(String, Vec<String>)], width: usize, theme: &Theme) -> Vec<String> {
    let mut out = Vec::new();
    for (_, lines) in widgets {
        for line in lines.iter().take(MAX_WIDGET_LINES) {
            for row in line.split('\n') {
                out.push(row_of(&clean(row), width));
            }
        }
        if lines.len() > MAX_WIDGET_LINES {
            out.push(row_of(&theme.fg("muted", "... (widget truncated)"), width));
        }
    }
    out
}

/// One padded row, cut to the width.
fn row_of(text: &str, width: usize) -> String {
    ansi::truncate(&format!(" {text}"), width, "…")
}

/// The line an extension sent, safe to draw: its colours (SGR) kept, every other escape
/// sequence dropped and control characters shown as visible escapes.
fn clean(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for t in ansi::tokens(line) {
        match t {
            Token::Escape(e) if e.starts_with("\x1b[") && e.ends_with('m') => out.push_str(e),
            Token::Escape(_) => {}
            Token::Text(t) => out.push_str(&ansi::escape_control(t)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::terminal_colors::ColorScheme;
    use pi_tui::theme::ColorMode;

    fn theme() -> Theme {
        Theme::builtin(ColorScheme::Dark, ColorMode::None)
    }

    #[test]
    fn keys_keep_insertion_order_and_resetting_one_moves_it_last() {
        let mut w = Widgets::default();
        w.set("a", Some(vec!["A".into()]), WidgetPlacement::AboveEditor);
        w.set("b", Some(vec!["B".into()]), WidgetPlacement::AboveEditor);
        w.set("c", Some(vec!["C".into()]), WidgetPlacement::BelowEditor);
        assert_eq!(w.render_above(10, &theme()), [" A", " B"]);
        assert_eq!(w.render_below(10, &theme()), [" C"]);
        w.set("a", Some(vec!["A2".into()]), WidgetPlacement::AboveEditor);
        assert_eq!(w.render_above(10, &theme()), [" B", " A2"]);
        // A key moves between placements; None removes it.
        w.set("b", Some(vec!["B".into()]), WidgetPlacement::BelowEditor);
        assert_eq!(w.render_below(10, &theme()), [" C", " B"]);
        w.set("c", None, WidgetPlacement::AboveEditor);
        assert_eq!(w.render_below(10, &theme()), [" B"]);
    }

    #[test]
    fn lines_are_cut_to_the_width_and_control_characters_made_visible() {
        let mut w = Widgets::default();
        let lines = vec![
            "x".repeat(50),
            "bell\x07 \x1b[2J\x1b[31mred\x1b[0m \r\x08".into(),
            "two\nrows".into(),
        ];
        w.set("k", Some(lines), WidgetPlacement::AboveEditor);
        let rows = w.render_above(20, &theme());
        assert_eq!(rows.len(), 4, "{rows:?}");
        assert!(ansi::visible_width(&rows[0]) <= 20);
        assert!(rows[0].ends_with('…'), "{rows:?}");
        let plain = ansi::strip(&rows[1]);
        assert!(plain.contains("bell\\x07"), "{plain:?}");
        assert!(!rows[1].contains("\x1b[2J") && !rows[1].contains('\x07'));
        assert!(rows[1].contains("\x1b[31m"), "colours are kept: {rows:?}");
        assert_eq!(&rows[2..], [" two", " rows"]);
        // Any width, even zero, draws without panicking.
        for width in 0..4 {
            for r in w.render_above(width, &theme()) {
                assert!(ansi::visible_width(&r) <= width);
            }
        }
    }

    #[test]
    fn more_than_ten_entries_are_cut_with_pi_notice() {
        let mut w = Widgets::default();
        let lines: Vec<String> = (1..=12).map(|i| format!("line {i}")).collect();
        w.set("k", Some(lines), WidgetPlacement::BelowEditor);
        let rows = w.render_below(40, &theme());
        assert_eq!(rows.len(), 11);
        assert_eq!(rows[9], " line 10");
        assert_eq!(ansi::strip(&rows[10]), " ... (widget truncated)");
    }
}
