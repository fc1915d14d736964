//! A user `!cmd` (or `!!cmd`) in the transcript, in its own wording, as pi-coding-agent
//! 0.85.0 draws it (`modes/interactive/components/bash-execution.js`): between two rules in
//! the `bashMode` colour (`dim` for `!!`, whose output stays out of the context), `$ cmd`, the
//! last 20 lines of output, `Running... (escape to cancel)` while it runs, then `... N more
//! lines (ctrl+o to expand)`, `(cancelled)`, `(exit N)` and the truncation notice.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use pi_tui::Component;
use pi_tui::ansi::{escape_control, strip, wrap};
use pi_tui::theme::Theme;

use super::transcript::Display;

/// Lines of output shown while collapsed.
pub(crate) const PREVIEW_LINES: usize = 20;

/// How the command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BashStatus {
    /// Still running.
    Running,
    /// Exit 0.
    Complete,
    /// Cancelled (Esc).
    Cancelled,
    /// A non-zero exit code.
    Failed(i32),
}

/// One `!` command's block.
pub(crate) struct UserBashView {
    command: String,
    exclude: bool,
    output: String,
    status: BashStatus,
    full_output_path: Option<String>,
    truncated: bool,
    theme: Arc<Theme>,
    display: Arc<Display>,
}

impl UserBashView {
    /// A running command (`exclude`: `!!`).
    pub(crate) fn new(
        command: &str,
        exclude: bool,
        theme: Arc<Theme>,
        display: Arc<Display>,
    ) -> Self {
        Self {
            command: command.to_owned(),
            exclude,
            output: String::new(),
            status: BashStatus::Running,
            full_output_path: None,
            truncated: false,
            theme,
            display,
        }
    }

    /// More output (control sequences are shown escaped, CRs as line breaks).
    pub(crate) fn push(&mut self, chunk: &str) {
        self.output
            .push_str(&strip(chunk).replace("\r\n", "\n").replace('\r', "\n"));
    }

    /// The end: the final output (which replaces what streamed), the status, and where the
    /// whole output went when it was truncated.
    pub(crate) fn finish(
        &mut self,
        output: &str,
        status: BashStatus,
        truncated: bool,
        full_output_path: Option<String>,
    ) {
        self.output = strip(output).replace("\r\n", "\n").replace('\r', "\n");
        self.status = status;
        self.truncated = truncated;
        self.full_output_path = full_output_path;
    }
}

impl Component for UserBashView {
    fn render(&mut self, width: u16) -> Vec<String> {
        let t = &self.theme;
        let token = if self.exclude { "dim" } else { "bashMode" };
        let w = usize::from(width);
        let inner = w.saturating_sub(1).max(1);
        let rule = t.fg(token, &"─".repeat(w));
        let pad = |l: &str| format!(" {l}");
        let mut out = vec![String::new(), rule.clone()];
        for l in wrap(
            &t.fg(
                token,
                &format!("\x1b[1m$ {}\x1b[22m", escape_control(&self.command)),
            ),
            inner,
        ) {
            out.push(pad(&l));
        }
        let text = self.output.trim_end_matches('\n');
        let lines: Vec<&str> = if text.is_empty() {
            Vec::new()
        } else {
            text.split('\n').collect()
        };
        let expanded = self.display.expand_tools.load(Ordering::Relaxed);
        let shown = if expanded {
            &lines[..]
        } else {
            &lines[lines.len().saturating_sub(PREVIEW_LINES)..]
        };
        let hidden = lines.len() - shown.len();
        if !shown.is_empty() {
            out.push(String::new());
            let mut visual = Vec::new();
            for l in shown {
                for v in wrap(&t.fg("muted", &escape_control(l)), inner) {
                    visual.push(pad(&v));
                }
            }
            // The preview counts screen rows: long lines do not make it taller.
            if !expanded && visual.len() > PREVIEW_LINES {
                visual.drain(..visual.len() - PREVIEW_LINES);
            }
            out.extend(visual);
        }
        let mut status = Vec::new();
        match &self.status {
            BashStatus::Running => {
                status.push(t.fg("muted", "Running... (escape to cancel)"));
            }
            done => {
                if hidden > 0 {
                    status.push(t.fg(
                        "muted",
                        &format!("... {hidden} more lines (ctrl+o to expand)"),
                    ));
                } else if expanded && lines.len() > PREVIEW_LINES {
                    status.push(t.fg("muted", "(ctrl+o to collapse)"));
                }
                match done {
                    BashStatus::Cancelled => status.push(t.fg("warning", "(cancelled)")),
                    BashStatus::Failed(code) => {
                        status.push(t.fg("error", &format!("(exit {code})")))
                    }
                    _ => {}
                }
                if self.truncated
                    && let Some(p) = &self.full_output_path
                {
                    status.push(t.fg("warning", &format!("Output truncated. Full output: {p}")));
                }
            }
        }
        if !status.is_empty() {
            out.push(String::new());
            for s in status {
                for l in wrap(&s, inner) {
                    out.push(pad(&l));
                }
            }
        }
        out.push(rule);
        // Narrower than the padding: cut rather than overflow.
        out.into_iter()
            .map(|l| pi_tui::ansi::truncate(&l, w, ""))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::terminal_colors::ColorScheme;
    use pi_tui::theme::ColorMode;

    fn view() -> (UserBashView, Arc<Display>) {
        let d = Arc::new(Display::default());
        let theme = Arc::new(Theme::builtin(ColorScheme::Dark, ColorMode::None));
        (UserBashView::new("seq 1 25", false, theme, d.clone()), d)
    }

    fn text(v: &mut UserBashView) -> Vec<String> {
        v.render(40)
            .iter()
            .map(|l| strip(l).trim_end().to_owned())
            .collect()
    }

    #[test]
    fn running_then_done_with_the_last_twenty_lines() {
        let (mut v, d) = view();
        v.push("1\n2\n");
        let l = text(&mut v);
        assert_eq!(l[2], " $ seq 1 25");
        assert_eq!(l[4..6], [" 1", " 2"]);
        assert_eq!(l[7], " Running... (escape to cancel)");
        let out: Vec<String> = (1..=25).map(|i| i.to_string()).collect();
        v.finish(&out.join("\n"), BashStatus::Complete, false, None);
        let l = text(&mut v);
        assert_eq!(l[4], " 6");
        assert_eq!(l[23], " 25");
        assert_eq!(l[25], " ... 5 more lines (ctrl+o to expand)");
        assert!(l.last().is_some_and(|r| r.starts_with("────")));
        d.expand_tools.store(true, Ordering::Relaxed);
        let l = text(&mut v);
        assert_eq!(l[4], " 1");
        assert!(l.iter().any(|r| r == " (ctrl+o to collapse)"));
    }

    #[test]
    fn cancelled_failed_and_truncated() {
        let (mut v, _) = view();
        v.finish("partial", BashStatus::Cancelled, false, None);
        assert!(text(&mut v).iter().any(|l| l == " (cancelled)"));
        v.finish("", BashStatus::Failed(2), true, Some("/tmp/out.log".into()));
        let l = text(&mut v);
        assert!(l.iter().any(|r| r == " (exit 2)"));
        let joined = l.iter().map(|r| r.trim()).collect::<Vec<_>>().join(" ");
        assert!(
            joined.contains("Output truncated. Full output: /tmp/out.log"),
            "{l:?}"
        );
        for w in [1u16, 3, 10] {
            for r in v.render(w) {
                assert!(
                    pi_tui::ansi::visible_width(&r) <= usize::from(w),
                    "{w}: {r:?}"
                );
            }
        }
    }
}
