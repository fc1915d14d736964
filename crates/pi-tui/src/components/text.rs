//! Plain (or pre-styled) text, word-wrapped to the width: pi-tui's `Text`.

use crate::ansi;
use crate::component::Component;

/// Text wrapped to the width, with optional left/right padding in cells. Untrusted text
/// should go through [`Text::untrusted`] so that control characters are shown escaped.
#[derive(Clone, Debug, Default)]
pub struct Text {
    text: String,
    padding_x: u16,
    cache: Option<(u16, Vec<String>)>,
}

impl Text {
    /// Text that may hold SGR styles and OSC 8 links (other escapes are dropped when drawn).
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    /// Text from outside (tool output, a file): control characters are shown as `\xNN`,
    /// nothing is sent raw to the terminal.
    pub fn untrusted(text: &str) -> Self {
        Self::new(ansi::escape_control(text))
    }

    /// Cells of padding left and right.
    pub fn with_padding(mut self, x: u16) -> Self {
        self.padding_x = x;
        self
    }

    /// Replaces the text.
    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.cache = None;
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl Component for Text {
    fn render(&mut self, width: u16) -> Vec<String> {
        if let Some((w, lines)) = &self.cache
            && *w == width
        {
            return lines.clone();
        }
        let pad = usize::from(self.padding_x);
        let inner = usize::from(width).saturating_sub(2 * pad).max(1);
        let lines: Vec<String> = ansi::wrap_text(&self.text, inner)
            .into_iter()
            .map(|l| {
                if pad == 0 {
                    l
                } else {
                    format!("{}{l}", " ".repeat(pad))
                }
            })
            .collect();
        self.cache = Some((width, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_and_pads() {
        let mut t = Text::new("alpha beta gamma").with_padding(1);
        insta::assert_debug_snapshot!(t.render(12), @r#"
        [
            " alpha beta",
            " gamma",
        ]
        "#);
    }

    #[test]
    fn untrusted_text_is_escaped() {
        let mut t = Text::untrusted("ok\x1b[2J\x07\nnext");
        assert_eq!(t.render(40), ["ok\\x1b[2J\\x07", "next"]);
    }
}
