//! A tool call in the transcript: a box that goes pending → success or error, with a title
//! made from the arguments and a preview of the result.
//!
//! Mirrors the collapsed and expanded views of pi-coding-agent 0.85.0's tool renderers
//! (`dist/core/tools/renderers/*.js`): bash shows the last 5 lines of output with
//! `... (N earlier lines, ctrl+o to expand)` and `Took 1.2s`; read shows nothing of a
//! successful result until expanded; write shows 10 lines of the content; edit the diff; grep
//! 15 lines, find and ls 20, any other tool 10, each with `... (N more lines, ctrl+o to
//! expand)`. The hint texts are pi's; the box is ours.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use pi_agent_core::AgentToolResult;
use pi_ai::UserContent;
use pi_tui::Component;
use pi_tui::ansi::{escape_control, visible_width, wrap};
use pi_tui::theme::Theme;
use serde_json::{Map, Value};

use super::transcript::Display;
use crate::tools::image::to_fixed;

/// Where a call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ToolState {
    /// Announced by the model, not started.
    Pending,
    /// Executing.
    Running,
    /// Done, successfully.
    Success,
    /// Done, failed.
    Error,
}

/// One tool call's box.
pub(crate) struct ToolView {
    /// The provider's call id.
    pub call_id: String,
    name: String,
    args: Map<String, Value>,
    state: ToolState,
    output: String,
    details: Option<Value>,
    started: Option<Instant>,
    took: Option<Duration>,
    /// The result's images, below the box.
    images: super::images::ImageList,
    theme: Arc<Theme>,
    display: Arc<Display>,
}

/// The text blocks of a result, joined by newlines (images as `[image]`).
pub(crate) fn result_text(content: &[UserContent]) -> String {
    let mut out = Vec::new();
    for c in content {
        match c {
            UserContent::Text(t) => out.push(t.text.clone()),
            UserContent::Image(i) => out.push(format!("[image: {}]", i.mime_type)),
        }
    }
    out.join("\n")
}

fn str_arg<'a>(args: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
}

/// How many lines of a collapsed result each tool shows (`None`: the last lines, bash).
fn preview_lines(name: &str) -> usize {
    match name {
        "grep" => 15,
        "find" | "ls" => 20,
        "bash" => 5,
        _ => 10,
    }
}

impl ToolView {
    /// A call announced with its arguments.
    pub(crate) fn new(
        call_id: String,
        name: String,
        args: Map<String, Value>,
        theme: Arc<Theme>,
        display: Arc<Display>,
    ) -> Self {
        Self {
            call_id,
            name,
            args,
            state: ToolState::Pending,
            output: String::new(),
            details: None,
            started: None,
            took: None,
            images: super::images::ImageList::new(Vec::new(), theme.clone(), display.clone()),
            theme,
            display,
        }
    }

    /// The state.
    #[cfg(test)]
    pub(crate) fn state(&self) -> ToolState {
        self.state
    }

    /// Whether the call is over.
    pub(crate) fn is_done(&self) -> bool {
        matches!(self.state, ToolState::Success | ToolState::Error)
    }

    /// The arguments as streamed so far, while the call is still pending.
    pub(crate) fn start_args(&mut self, args: &Map<String, Value>) {
        if self.state == ToolState::Pending {
            self.args = args.clone();
        }
    }

    /// Execution started (the arguments as the tool got them).
    pub(crate) fn start(&mut self, args: &Value, now: Instant) {
        if let Some(a) = args.as_object() {
            self.args = a.clone();
        }
        self.state = ToolState::Running;
        self.started = Some(now);
    }

    /// A partial result (bash streams its output).
    pub(crate) fn update(&mut self, partial: &AgentToolResult) {
        self.output = result_text(&partial.content);
    }

    /// The final result.
    pub(crate) fn finish(&mut self, result: &AgentToolResult, is_error: bool, now: Instant) {
        self.output = result_text(&result.content);
        self.details = result.details.clone();
        let images = result
            .content
            .iter()
            .filter_map(|c| match c {
                UserContent::Image(i) => Some(i.clone()),
                UserContent::Text(_) => None,
            })
            .collect();
        self.images =
            super::images::ImageList::new(images, self.theme.clone(), self.display.clone());
        self.state = if is_error {
            ToolState::Error
        } else {
            ToolState::Success
        };
        self.took = self.started.map(|s| now.saturating_duration_since(s));
    }

    fn title(&self) -> String {
        let t = &self.theme;
        let bold = |s: &str| t.fg("toolTitle", &format!("\x1b[1m{s}\x1b[22m"));
        let path = str_arg(&self.args, &["path", "file_path"]).unwrap_or("");
        let path = escape_control(path);
        match self.name.as_str() {
            "bash" => {
                let cmd = str_arg(&self.args, &["command"]).unwrap_or("...");
                let mut s = bold(&format!("$ {}", escape_control(cmd)));
                if let Some(timeout) = self.args.get("timeout").and_then(Value::as_f64) {
                    s.push_str(&t.fg("muted", &format!(" (timeout {timeout}s)")));
                }
                s
            }
            "read" => {
                let mut s = format!("{} {}", bold("read"), t.fg("accent", &path));
                let offset = self.args.get("offset").and_then(Value::as_u64);
                let limit = self.args.get("limit").and_then(Value::as_u64);
                if offset.is_some() || limit.is_some() {
                    let start = offset.unwrap_or(1);
                    let range = match limit {
                        Some(l) => {
                            format!(":{start}-{}", start.saturating_add(l).saturating_sub(1))
                        }
                        None => format!(":{start}"),
                    };
                    s.push_str(&t.fg("warning", &range));
                }
                s
            }
            "write" | "edit" | "ls" => format!("{} {}", bold(&self.name), t.fg("accent", &path)),
            "grep" | "find" => {
                let pattern = str_arg(&self.args, &["pattern"]).unwrap_or("");
                let mut s = format!(
                    "{} {}",
                    bold(&self.name),
                    t.fg("accent", &escape_control(pattern))
                );
                if !path.is_empty() {
                    s.push_str(&t.fg("toolOutput", &format!(" in {path}")));
                }
                s
            }
            _ => {
                let args = Value::Object(self.args.clone()).to_string();
                let args = if args.chars().count() > 200 {
                    let cut: String = args.chars().take(200).collect();
                    format!("{cut}…")
                } else {
                    args
                };
                format!(
                    "{} {}",
                    bold(&escape_control(&self.name)),
                    t.fg("muted", &escape_control(&args))
                )
            }
        }
    }

    /// The body lines (before wrapping), without the title.
    fn body(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let expanded = self.display.expand_tools.load(Ordering::Relaxed);
        let hint = |text: String| t.fg("muted", &format!("... ({text} ctrl+o to expand)"));
        let out_token = if self.state == ToolState::Error {
            "error"
        } else {
            "toolOutput"
        };
        let mut lines = Vec::new();
        match self.name.as_str() {
            "read" if self.state != ToolState::Error && !expanded => {}
            "write" if self.state != ToolState::Error => {
                let content = str_arg(&self.args, &["content"]).unwrap_or("");
                let all: Vec<&str> = content.trim_end_matches('\n').split('\n').collect();
                let show = if expanded {
                    all.len()
                } else {
                    all.len().min(10)
                };
                if !content.is_empty() {
                    lines.push(String::new());
                    for l in &all[..show] {
                        lines.push(t.fg("toolOutput", &escape_control(l)));
                    }
                    if show < all.len() {
                        lines.push(hint(format!(
                            "{} more lines, {} total,",
                            all.len() - show,
                            all.len()
                        )));
                    }
                }
            }
            "edit" if self.state == ToolState::Success => {
                let diff = self
                    .details
                    .as_ref()
                    .and_then(|d| d.get("diff"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if !diff.is_empty() {
                    lines.push(String::new());
                    for l in diff.split('\n') {
                        let token = if l.starts_with('+') {
                            "toolDiffAdded"
                        } else if l.starts_with('-') {
                            "toolDiffRemoved"
                        } else {
                            "toolDiffContext"
                        };
                        lines.push(t.fg(token, &escape_control(l)));
                    }
                }
            }
            "bash" => {
                let text = self.output.trim();
                if !text.is_empty() {
                    lines.push(String::new());
                    let visual: Vec<String> = text
                        .split('\n')
                        .flat_map(|l| wrap(&escape_control(l), width.max(1)))
                        .collect();
                    let keep = if expanded {
                        visual.len()
                    } else {
                        visual.len().min(preview_lines("bash"))
                    };
                    let skipped = visual.len() - keep;
                    if skipped > 0 {
                        lines.push(hint(format!("{skipped} earlier lines,")));
                    }
                    for l in &visual[skipped..] {
                        lines.push(t.fg(out_token, l));
                    }
                }
                if let Some(took) = self.took {
                    lines.push(String::new());
                    let secs = to_fixed(took.as_secs_f64(), 1);
                    lines.push(t.fg("muted", &format!("Took {secs}s")));
                } else if let (ToolState::Running, Some(s)) = (self.state, self.started) {
                    lines.push(String::new());
                    lines.push(t.fg(
                        "muted",
                        &format!("Elapsed {}s", to_fixed(s.elapsed().as_secs_f64(), 1)),
                    ));
                }
            }
            _ => {
                let text = self.output.trim_end();
                if !text.is_empty() {
                    let all: Vec<&str> = text.split('\n').collect();
                    let max = if expanded {
                        all.len()
                    } else {
                        preview_lines(&self.name)
                    };
                    let show = all.len().min(max);
                    lines.push(String::new());
                    for l in &all[..show] {
                        lines.push(t.fg(out_token, &escape_control(l)));
                    }
                    if show < all.len() {
                        lines.push(hint(format!("{} more lines,", all.len() - show)));
                    }
                }
            }
        }
        lines
    }
}

impl Component for ToolView {
    fn render(&mut self, width: u16) -> Vec<String> {
        let w = usize::from(width);
        let bg_token = match self.state {
            ToolState::Pending | ToolState::Running => "toolPendingBg",
            ToolState::Success => "toolSuccessBg",
            ToolState::Error => "toolErrorBg",
        };
        let bg = self.theme.bg_ansi(bg_token).to_owned();
        let inner = w.saturating_sub(2).max(1);
        let mut rows = vec![String::new()];
        let mut content = wrap(&self.title(), inner);
        for l in self.body(inner) {
            content.extend(wrap(&l, inner));
        }
        let boxed = |line: &str| {
            if w < 3 {
                return pi_tui::ansi::truncate(line, w, "");
            }
            let fill = inner.saturating_sub(visible_width(line));
            // The background is set again after each line's own resets.
            let line = line.replace("\x1b[0m", &format!("\x1b[0m{bg}"));
            format!("{bg} {line}{} \x1b[0m", " ".repeat(fill))
        };
        rows.push(boxed(""));
        for l in &content {
            rows.push(boxed(l));
        }
        rows.push(boxed(""));
        if !self.images.is_empty() {
            rows.extend(self.images.render(width));
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::TextContent;
    use pi_tui::ansi::strip;
    use pi_tui::terminal_colors::ColorScheme;
    use pi_tui::theme::ColorMode;
    use serde_json::json;

    fn view(name: &str, args: Value) -> (ToolView, Arc<Display>) {
        let display = Arc::new(Display::default());
        let theme = Arc::new(Theme::builtin(ColorScheme::Dark, ColorMode::None));
        let args = args.as_object().cloned().unwrap_or_default();
        (
            ToolView::new("c1".into(), name.into(), args, theme, display.clone()),
            display,
        )
    }

    fn result(text: &str) -> AgentToolResult {
        AgentToolResult {
            content: vec![UserContent::Text(TextContent::new(text))],
            ..AgentToolResult::default()
        }
    }

    fn text(v: &mut ToolView, width: u16) -> Vec<String> {
        v.render(width)
            .iter()
            .map(|l| strip(l).trim_end().to_owned())
            .collect()
    }

    #[test]
    fn bash_shows_the_last_five_lines_and_the_time() {
        let (mut v, display) = view("bash", json!({"command": "seq 8"}));
        let t0 = Instant::now();
        v.start(&json!({"command": "seq 8"}), t0);
        assert_eq!(v.state(), ToolState::Running);
        let out: Vec<String> = (1..=8).map(|i| i.to_string()).collect();
        v.finish(
            &result(&out.join("\n")),
            false,
            t0 + Duration::from_millis(1234),
        );
        let lines = text(&mut v, 60);
        assert_eq!(lines[2], " $ seq 8");
        assert_eq!(lines[4], " ... (3 earlier lines, ctrl+o to expand)");
        assert_eq!(lines[5..10], [" 4", " 5", " 6", " 7", " 8"]);
        assert_eq!(lines[11], " Took 1.2s");
        display.expand_tools.store(true, Ordering::Relaxed);
        let lines = text(&mut v, 60);
        assert_eq!(lines[4], " 1");
    }

    #[test]
    fn read_hides_a_successful_result_until_expanded() {
        let (mut v, display) = view(
            "read",
            json!({"path": "hello.txt", "offset": 2, "limit": 3}),
        );
        v.start(
            &json!({"path": "hello.txt", "offset": 2, "limit": 3}),
            Instant::now(),
        );
        v.finish(&result("a\nb\nc"), false, Instant::now());
        let lines = text(&mut v, 40);
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(lines[2], " read hello.txt:2-4");
        display.expand_tools.store(true, Ordering::Relaxed);
        assert_eq!(text(&mut v, 40)[4..7], [" a", " b", " c"]);
        let (mut e, _) = view("read", json!({"path": "nope"}));
        e.finish(&result("ENOENT"), true, Instant::now());
        assert_eq!(e.state(), ToolState::Error);
        assert_eq!(text(&mut e, 40)[4], " ENOENT");
    }

    #[test]
    fn other_tools_preview_ten_lines_and_every_line_fits() {
        let (mut v, _) = view("my_tool", json!({"q": "x\u{1b}[31m"}));
        let out: Vec<String> = (1..=12).map(|i| format!("line {i}")).collect();
        v.finish(&result(&out.join("\n")), false, Instant::now());
        let lines = text(&mut v, 40);
        assert!(lines[2].starts_with(" my_tool {\"q\":\"x"), "{lines:?}");
        assert_eq!(lines[13], " line 10");
        assert_eq!(lines[14], " ... (2 more lines, ctrl+o to expand)");
        for w in [1u16, 2, 3, 10, 80] {
            for l in v.render(w) {
                assert!(visible_width(&l) <= usize::from(w), "{w}: {l:?}");
            }
        }
    }

    #[test]
    fn edit_shows_its_diff_and_write_its_content() {
        let (mut v, _) = view("edit", json!({"path": "a.rs"}));
        let mut r = result("Successfully replaced text in a.rs.");
        r.details = Some(json!({"diff": " 1 keep\n-2 old\n+2 new"}));
        v.finish(&r, false, Instant::now());
        let lines = text(&mut v, 40);
        assert_eq!(lines[4..7], ["  1 keep", " -2 old", " +2 new"]);
        let content: Vec<String> = (1..=11).map(|i| format!("w{i}")).collect();
        let (mut w, _) = view(
            "write",
            json!({"path": "b.txt", "content": content.join("\n")}),
        );
        w.finish(&result("ok"), false, Instant::now());
        let lines = text(&mut w, 60);
        assert_eq!(lines[4], " w1");
        assert_eq!(lines[14], " ... (1 more lines, 11 total, ctrl+o to expand)");
    }
}
