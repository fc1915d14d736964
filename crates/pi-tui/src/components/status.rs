//! The spinner and status line shown while the agent works (pi's `── ⠼ Working ───` rule).

use std::time::{Duration, Instant};

use crate::ansi;
use crate::component::Component;
use crate::components::editor::BorderStatus;
use crate::style::paint;

/// Braille spinner frames.
pub const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Time per spinner frame.
pub const FRAME_TIME: Duration = Duration::from_millis(80);

/// A rule with a spinner and a label: `── ⠼ Working… ───…`. Without a start time (idle) it
/// draws nothing.
#[derive(Clone, Debug)]
pub struct StatusLine {
    label: String,
    started: Option<Instant>,
    frame: usize,
    rule_sgr: String,
    spinner_sgr: String,
}

impl StatusLine {
    /// An idle status line; `rule_sgr` and `spinner_sgr` style the rule and the spinner.
    pub fn new(rule_sgr: impl Into<String>, spinner_sgr: impl Into<String>) -> Self {
        Self {
            label: String::new(),
            started: None,
            frame: 0,
            rule_sgr: rule_sgr.into(),
            spinner_sgr: spinner_sgr.into(),
        }
    }

    /// New colours for the rule and the spinner (a theme change), the state kept.
    pub fn set_colors(&mut self, rule_sgr: impl Into<String>, spinner_sgr: impl Into<String>) {
        self.rule_sgr = rule_sgr.into();
        self.spinner_sgr = spinner_sgr.into();
    }

    /// Starts (or relabels) the working indicator.
    pub fn start(&mut self, label: impl Into<String>, now: Instant) {
        self.label = label.into();
        if self.started.is_none() {
            self.started = Some(now);
        }
    }

    /// Stops it (the line disappears).
    pub fn stop(&mut self) {
        self.started = None;
    }

    /// Whether it is showing.
    pub fn is_active(&self) -> bool {
        self.started.is_some()
    }

    /// The label and spinner for the editor's top rule
    /// ([`Editor::set_border_status`](crate::components::editor::Editor::set_border_status));
    /// `None` when idle.
    pub fn border_status(&self) -> Option<BorderStatus> {
        self.started?;
        let spinner = FRAMES[self.frame % FRAMES.len()].to_owned();
        Some(BorderStatus {
            text: format!("{spinner} {}", self.label),
            spinner,
        })
    }

    /// Advances the spinner to `now`; returns whether the frame changed (a redraw is due).
    pub fn tick(&mut self, now: Instant) -> bool {
        let Some(t0) = self.started else {
            return false;
        };
        let f = (now.saturating_duration_since(t0).as_millis() / FRAME_TIME.as_millis()) as usize
            % FRAMES.len();
        let changed = f != self.frame;
        self.frame = f;
        changed
    }
}

impl Component for StatusLine {
    fn render(&mut self, width: u16) -> Vec<String> {
        if self.started.is_none() {
            return Vec::new();
        }
        let width = usize::from(width);
        let label = ansi::escape_control(&self.label).replace('\n', " ");
        let head = format!(
            "{} {} {label} ",
            paint(&self.rule_sgr, "──"),
            paint(&self.spinner_sgr, FRAMES[self.frame])
        );
        let used = ansi::visible_width(&head);
        let line = format!(
            "{head}{}",
            paint(&self.rule_sgr, &"─".repeat(width.saturating_sub(used)))
        );
        vec![ansi::truncate(&line, width, "…")]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spins_and_fills_the_width() {
        let t = Instant::now();
        let mut s = StatusLine::new("", "");
        assert!(s.render(30).is_empty());
        s.start("Working", t);
        insta::assert_debug_snapshot!(s.render(24), @r#"
        [
            "── ⠋ Working ───────────",
        ]
        "#);
        assert!(s.tick(t + Duration::from_millis(170)));
        assert_eq!(s.render(24)[0].chars().nth(3), Some('⠹'));
        assert!(!s.tick(t + Duration::from_millis(171)));
        assert!(ansi::visible_width(&s.render(5)[0]) <= 5);
        assert_eq!(
            s.border_status(),
            Some(BorderStatus {
                text: "⠹ Working".into(),
                spinner: "⠹".into()
            })
        );
        s.stop();
        assert!(s.render(30).is_empty());
        assert_eq!(s.border_status(), None);
    }
}
