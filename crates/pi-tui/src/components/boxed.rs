//! A box with a background colour and padding around another component (pi's tool boxes on
//! `toolPendingBg` / `toolSuccessBg` / `toolErrorBg`).

use crate::ansi::{self, RESET};
use crate::component::Component;
use crate::input::InputEvent;

/// A background-filled box around a child component.
pub struct BoxComponent {
    child: Box<dyn Component + Send>,
    bg: String,
    padding_x: u16,
    padding_y: u16,
}

impl BoxComponent {
    /// `child` on background `bg` (an SGR sequence; empty for none), with padding in cells.
    pub fn new(
        child: Box<dyn Component + Send>,
        bg: impl Into<String>,
        padding_x: u16,
        padding_y: u16,
    ) -> Self {
        Self {
            child,
            bg: bg.into(),
            padding_x,
            padding_y,
        }
    }

    /// Changes the background (e.g. pending → success).
    pub fn set_bg(&mut self, bg: impl Into<String>) {
        self.bg = bg.into();
    }

    /// The child.
    pub fn child_mut(&mut self) -> &mut (dyn Component + Send + 'static) {
        &mut *self.child
    }

    fn fill(&self, line: &str, width: usize) -> String {
        // Inner resets would end the background: put it back after each.
        let body = if self.bg.is_empty() {
            line.to_owned()
        } else {
            line.replace(RESET, &format!("{RESET}{}", self.bg))
        };
        let pad = " ".repeat(usize::from(self.padding_x));
        let inner = format!("{pad}{body}");
        let filled = ansi::pad(&ansi::truncate(&inner, width, ""), width);
        if self.bg.is_empty() {
            filled
        } else {
            format!("{}{filled}{RESET}", self.bg)
        }
    }
}

impl Component for BoxComponent {
    fn render(&mut self, width: u16) -> Vec<String> {
        let w = usize::from(width);
        let inner = width
            .saturating_sub(self.padding_x.saturating_mul(2))
            .max(1);
        let lines = self.child.render(inner);
        let mut out = Vec::with_capacity(lines.len() + 2 * usize::from(self.padding_y));
        for _ in 0..self.padding_y {
            out.push(self.fill("", w));
        }
        for l in &lines {
            out.push(self.fill(l, w));
        }
        for _ in 0..self.padding_y {
            out.push(self.fill("", w));
        }
        out
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        self.child.handle_input(event)
    }

    fn invalidate(&mut self) {
        self.child.invalidate();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::Text;

    #[test]
    fn fills_every_line_with_the_background() {
        let mut b = BoxComponent::new(
            Box::new(Text::new("a \x1b[1mbold\x1b[0m word")),
            "\x1b[44m",
            1,
            1,
        );
        let lines = b.render(12);
        assert_eq!(lines.len(), 4);
        for l in &lines {
            assert_eq!(ansi::visible_width(l), 12);
            assert!(l.starts_with("\x1b[44m"));
        }
        assert!(
            lines[1].contains("\x1b[0m\x1b[44m"),
            "background restored after the inner reset"
        );
        insta::assert_debug_snapshot!(lines.iter().map(|l| ansi::strip(l)).collect::<Vec<_>>(), @r#"
        [
            "            ",
            " a bold     ",
            " word       ",
            "            ",
        ]
        "#);
    }
}
