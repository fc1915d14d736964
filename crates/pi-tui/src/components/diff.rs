//! A unified diff, coloured by line kind (pi's `components/diff.js` look: added, removed,
//! context, hunk headers).

use crate::ansi;
use crate::component::Component;
use crate::style::{Style, paint};

/// A diff view of unified diff text. Lines wider than the width wrap, keeping their colour.
#[derive(Clone, Debug)]
pub struct DiffView {
    diff: String,
    style: Style,
}

impl DiffView {
    /// A view of `diff` (unified format; untrusted text, shown escaped).
    pub fn new(diff: &str, style: Style) -> Self {
        Self {
            diff: ansi::escape_control(diff),
            style,
        }
    }
}

impl Component for DiffView {
    fn render(&mut self, width: u16) -> Vec<String> {
        let w = usize::from(width);
        let mut out = Vec::new();
        for line in self.diff.lines() {
            let sgr = if line.starts_with("+++") || line.starts_with("---") {
                &self.style.bold
            } else if line.starts_with('+') {
                &self.style.diff_added
            } else if line.starts_with('-') {
                &self.style.diff_removed
            } else if line.starts_with("@@") {
                &self.style.accent
            } else {
                &self.style.diff_context
            };
            out.extend(ansi::wrap(&paint(sgr, line), w));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_by_kind() {
        let st = Style {
            diff_added: "\x1b[32m".into(),
            diff_removed: "\x1b[31m".into(),
            ..Style::default()
        };
        let mut d = DiffView::new("@@ -1,2 +1,2 @@\n ctx\n-old\n+new\x1b[2J", st);
        let l = d.render(40);
        assert_eq!(l[2], "\x1b[31m-old\x1b[0m");
        assert_eq!(l[3], "\x1b[32m+new\\x1b[2J\x1b[0m");
        assert_eq!(l[1], " ctx");
    }
}
