//! The spinner and status line shown while the agent works (pi's `── ⠼ Working ───` rule).

use std::time::{Duration, Instant};

use crate::ansi;
use crate::component::Component;
use crate::components::editor::BorderStatus;
use crate::style::paint;

/// Braille spinner frames.
pub const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Time per spinner frame.
pub(crate) const FRAME_TIME: Duration = Duration::from_millis(80);

/// A rule with a spinner and a label: `── ⠼ Working… ───…`. Without a start time (idle) it
/// draws nothing.
#[derive(Clone, Debug)]
pub struct StatusLine {
    label: String,
    started: Option<Instant>,
    frame: usize,
    rule_sgr: String,
    spinner_sgr: String,
    /// Custom frames (`None`: [`FRAMES`]; empty: no spinner at all).
    frames: Option<Vec<String>>,
    /// Custom time per frame (`None`: [`FRAME_TIME`]).
    frame_time: Option<Duration>,
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
            frames: None,
            frame_time: None,
        }
    }

    /// Replaces the spinner (pi's `setWorkingIndicator({frames, intervalMs})`): `None` frames
    /// restore the braille spinner, an empty list hides it; `None` interval keeps 80 ms.
    /// Frames are drawn as text: escape sequences (colours too: the rule has its own)
    /// dropped, control characters escaped.
    pub fn set_indicator(&mut self, frames: Option<Vec<String>>, interval: Option<Duration>) {
        self.frames = frames.map(|f| {
            f.iter()
                .map(|x| ansi::escape_control(&ansi::strip(x)).replace('\n', " "))
                .collect()
        });
        // A zero interval would divide by zero: at least one millisecond.
        self.frame_time = interval.map(|d| d.max(Duration::from_millis(1)));
        self.frame = 0;
    }

    /// The frame shown now (empty when the spinner is hidden).
    fn spinner(&self) -> String {
        match &self.frames {
            None => FRAMES[self.frame % FRAMES.len()].to_owned(),
            Some(f) if f.is_empty() => String::new(),
            Some(f) => f[self.frame % f.len()].clone(),
        }
    }

    fn frame_count(&self) -> usize {
        self.frames
            .as_ref()
            .map_or(FRAMES.len(), |f| f.len().max(1))
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
        let spinner = self.spinner();
        let text = if spinner.is_empty() {
            self.label.clone()
        } else {
            format!("{spinner} {}", self.label)
        };
        Some(BorderStatus { text, spinner })
    }

    /// Advances the spinner to `now`; returns whether the frame changed (a redraw is due).
    pub fn tick(&mut self, now: Instant) -> bool {
        let Some(t0) = self.started else {
            return false;
        };
        let step = self.frame_time.unwrap_or(FRAME_TIME).as_millis().max(1);
        let f =
            (now.saturating_duration_since(t0).as_millis() / step) as usize % self.frame_count();
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
        let spinner = self.spinner();
        let head = if spinner.is_empty() {
            format!("{} {label} ", paint(&self.rule_sgr, "──"))
        } else {
            format!(
                "{} {} {label} ",
                paint(&self.rule_sgr, "──"),
                paint(&self.spinner_sgr, &spinner)
            )
        };
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

    #[test]
    fn custom_frames_replace_the_spinner_and_an_empty_list_hides_it() {
        let t = Instant::now();
        let mut s = StatusLine::new("", "");
        s.set_indicator(
            Some(vec!["\x1b[31m<\x1b[39m".into(), "\x07>".into()]),
            Some(Duration::from_millis(100)),
        );
        s.start("Busy", t);
        assert_eq!(s.border_status().unwrap().text, "< Busy");
        assert!(s.tick(t + Duration::from_millis(150)));
        let text = s.border_status().unwrap().text;
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
        assert!(text.ends_with("> Busy"), "{text:?}");
        // Back to frame 0 after two frames of 100 ms.
        s.tick(t + Duration::from_millis(210));
        assert_eq!(s.border_status().unwrap().text, "< Busy");
        s.set_indicator(Some(Vec::new()), Some(Duration::ZERO));
        s.tick(t + Duration::from_millis(500));
        assert_eq!(
            s.border_status(),
            Some(BorderStatus {
                text: "Busy".into(),
                spinner: String::new()
            })
        );
        assert_eq!(s.render(12)[0], "── Busy ────");
        s.set_indicator(None, None);
        assert_eq!(s.border_status().unwrap().spinner.chars().count(), 1);
    }
}
