//! A `/skill:name` invocation in the transcript. The session expands the command into a
//! `<skill name="…" location="…">…</skill>` block (with the user's words after it); pi 0.85.0
//! shows that block as one collapsed line, `[skill] name (ctrl+o to expand)`, on the custom
//! message background, and the user's words as a user message of their own
//! (`components/skill-invocation-message.js`). Ctrl+O shows the skill's text.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use pi_tui::Component;
use pi_tui::ansi::escape_control;
use pi_tui::components::{BoxComponent, render_markdown};
use pi_tui::style::Style;
use pi_tui::theme::Theme;

use super::transcript::Display;

/// A parsed skill block (pi's `parseSkillBlock`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SkillInvocation {
    /// The skill's name.
    pub name: String,
    /// Its file.
    pub location: String,
    /// The text between the opening and closing tags.
    pub content: String,
    /// The user's words after the block, trimmed; `None` when there were none.
    pub user_message: Option<String>,
}

/// Parses a user message that is exactly a skill block, optionally followed by a blank line
/// and the user's words; `None` for any other text.
pub(crate) fn parse(text: &str) -> Option<SkillInvocation> {
    let rest = text.strip_prefix("<skill name=\"")?;
    let (name, rest) = rest.split_once('"')?;
    let rest = rest.strip_prefix(" location=\"")?;
    let (location, rest) = rest.split_once('"')?;
    let body = rest.strip_prefix(">\n")?;
    if name.is_empty() || location.is_empty() {
        return None;
    }
    // The content ends at the first `\n</skill>` that closes the text or is followed by a
    // blank line and the user's words (pi's lazy match).
    let mut from = 0;
    while let Some(i) = body[from..].find("\n</skill>") {
        let at = from + i;
        let after = &body[at + "\n</skill>".len()..];
        let user = if after.is_empty() {
            Some(None)
        } else {
            after
                .strip_prefix("\n\n")
                .filter(|u| !u.is_empty())
                .map(|u| Some(u.trim()).filter(|u| !u.is_empty()).map(str::to_owned))
        };
        if let Some(user_message) = user {
            return Some(SkillInvocation {
                name: name.to_owned(),
                location: location.to_owned(),
                content: body[..at].to_owned(),
                user_message,
            });
        }
        from = at + 1;
    }
    None
}

/// The transcript block of a skill invocation: collapsed to one line unless tool output is
/// expanded (Ctrl+O), read at render time.
pub(crate) struct SkillBlock {
    skill: SkillInvocation,
    theme: Arc<Theme>,
    style: Arc<Style>,
    display: Arc<Display>,
    expand_key: String,
}

impl SkillBlock {
    /// The block of `skill`; `expand_key` names the key that expands it (`ctrl+o`).
    pub(crate) fn new(
        skill: SkillInvocation,
        theme: Arc<Theme>,
        style: Arc<Style>,
        display: Arc<Display>,
        expand_key: impl Into<String>,
    ) -> Self {
        Self {
            skill,
            theme,
            style,
            display,
            expand_key: expand_key.into(),
        }
    }
}

/// The lines inside the box, for one width.
struct Body<'a> {
    block: &'a SkillBlock,
}

impl Component for Body<'_> {
    fn render(&mut self, width: u16) -> Vec<String> {
        let b = self.block;
        let t = &b.theme;
        let name = escape_control(&b.skill.name);
        let label = t.fg("customMessageLabel", "\x1b[1m[skill]\x1b[22m");
        if !b.display.expand_tools.load(Ordering::Relaxed) {
            let line = format!(
                "{label} {}{}",
                t.fg("customMessageText", &name),
                t.fg("dim", &format!(" ({} to expand)", b.expand_key))
            );
            return vec![pi_tui::ansi::truncate(&line, usize::from(width), "…")];
        }
        let source = format!("**{name}**\n\n{}", b.skill.content);
        let mut out = vec![label];
        out.extend(render_markdown(&source, width, &b.style));
        out
    }
}

impl Component for SkillBlock {
    fn render(&mut self, width: u16) -> Vec<String> {
        let bg = self.theme.bg_ansi("customMessageBg").to_owned();
        let mut lines = vec![String::new()];
        let body: Vec<String> = Body { block: self }.render(width.saturating_sub(2).max(1));
        let mut boxed = BoxComponent::new(Box::new(Lines(body)), bg, 1, 1);
        lines.extend(boxed.render(width));
        lines
    }
}

/// Lines already rendered, as a component (the box's child).
struct Lines(Vec<String>);

impl Component for Lines {
    fn render(&mut self, _width: u16) -> Vec<String> {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::ansi::strip;
    use pi_tui::terminal_colors::ColorScheme;
    use pi_tui::theme::ColorMode;

    const BLOCK: &str = "<skill name=\"pdf\" location=\"/s/pdf/SKILL.md\">\nReferences are relative to /s/pdf.\n\nUse tools.\n</skill>";

    #[test]
    fn parses_pi_skill_blocks_and_nothing_else() {
        let s = parse(BLOCK).unwrap();
        assert_eq!(s.name, "pdf");
        assert_eq!(s.location, "/s/pdf/SKILL.md");
        assert_eq!(
            s.content,
            "References are relative to /s/pdf.\n\nUse tools."
        );
        assert_eq!(s.user_message, None);
        let with_words = parse(&format!("{BLOCK}\n\n  summarize a.pdf \n")).unwrap();
        assert_eq!(with_words.user_message.as_deref(), Some("summarize a.pdf"));
        assert_eq!(with_words.content, s.content);
        // A closing tag inside the content that is not the end is part of the content.
        let inner = "<skill name=\"x\" location=\"/x\">\na\n</skill> b\n</skill>";
        assert_eq!(parse(inner).unwrap().content, "a\n</skill> b");
        for not in [
            "hello",
            "<skill name=\"pdf\" location=\"/p\">\nbody",
            "<skill name=\"pdf\" location=\"/p\">\nbody\n</skill>trailing",
            "<skill name=\"\" location=\"/p\">\nbody\n</skill>",
            " <skill name=\"pdf\" location=\"/p\">\nbody\n</skill>",
        ] {
            assert_eq!(parse(not), None, "{not:?}");
        }
    }

    #[test]
    fn collapsed_to_one_line_until_expanded() {
        let theme = Arc::new(Theme::builtin(ColorScheme::Dark, ColorMode::None));
        let display = Arc::new(Display::default());
        let mut b = SkillBlock::new(
            parse(BLOCK).unwrap(),
            theme,
            Arc::new(Style::plain()),
            display.clone(),
            "ctrl+o",
        );
        let lines = |b: &mut SkillBlock| -> Vec<String> {
            b.render(40)
                .iter()
                .map(|l| strip(l).trim_end().to_owned())
                .collect()
        };
        assert_eq!(
            lines(&mut b),
            ["", "", " [skill] pdf (ctrl+o to expand)", ""]
        );
        display.expand_tools.store(true, Ordering::Relaxed);
        let expanded = lines(&mut b);
        assert_eq!(expanded[2], " [skill]");
        assert_eq!(expanded[3], " pdf");
        assert!(expanded.contains(&" Use tools.".to_owned()), "{expanded:?}");
        assert!(
            expanded
                .iter()
                .all(|l| pi_tui::ansi::visible_width(l) <= 40)
        );
    }
}
