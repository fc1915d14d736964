//! The transcript: session messages as history blocks and a live tail.
//!
//! Finished parts go to the history once ([`Transcript::take_commits`]), in order: a user
//! message as soon as it starts; an assistant message part by part as it streams (a thinking
//! block when the next part begins, text block by block as the markdown renderer finishes
//! them); tool boxes when their call is over, and only after every box before them. What is
//! still changing — the open markdown block, a running tool, a `!` command — is the live tail
//! ([`Transcript::render_live`]), repainted each frame.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use pi_agent_core::{AgentMessage, AgentToolResult};
use pi_ai::{AssistantContent, AssistantMessage, StopReason};
use pi_tui::Component;
use pi_tui::ansi::{escape_control, wrap};
use pi_tui::components::StreamingMarkdown;
use pi_tui::history::Block;
use pi_tui::style::Style;
use pi_tui::theme::Theme;
use serde_json::{Map, Value};

use super::notices::{CacheTracker, dropped_thinking};
use super::skill_block::{self, SkillBlock};
use super::tool_view::ToolView;
use super::user_bash::{BashStatus, UserBashView};
use crate::session::queues::content_text;

/// Display toggles shared by every block, read at render time (Ctrl+O, Ctrl+T): a toggle
/// replays the history, which renders each block again.
#[derive(Debug, Default)]
pub(crate) struct Display {
    /// Tool output shown whole (pi's `app.tools.expand`).
    pub expand_tools: AtomicBool,
    /// Thinking blocks collapsed to one line (pi's `hideThinkingBlock`).
    pub hide_thinking: AtomicBool,
    /// pi's `terminal.showImages`.
    pub show_images: AtomicBool,
    /// pi's `terminal.imageWidthCells` (0: its default, 60).
    pub image_width: std::sync::atomic::AtomicU32,
    /// The terminal's inline image protocol, when it has one (set once at start).
    pub image_protocol: std::sync::OnceLock<pi_tui::capabilities::ImageProtocol>,
}

/// An empty line.
struct Blank;

impl Component for Blank {
    fn render(&mut self, _width: u16) -> Vec<String> {
        vec![String::new()]
    }
}

/// Lines drawn as they are (already styled, cut to the width).
struct Lines(Vec<String>);

impl Component for Lines {
    fn render(&mut self, width: u16) -> Vec<String> {
        self.0
            .iter()
            .map(|l| pi_tui::ansi::truncate(l, usize::from(width), "…"))
            .collect()
    }
}

/// A child drawn one cell in from the left (pi's padding of message text).
struct Padded(Box<dyn Component + Send>);

impl Component for Padded {
    fn render(&mut self, width: u16) -> Vec<String> {
        if width < 2 {
            return self.0.render(width);
        }
        self.0
            .render(width - 1)
            .into_iter()
            .map(|l| format!(" {l}"))
            .collect()
    }

    fn invalidate(&mut self) {
        self.0.invalidate();
    }
}

/// A user message: a blank line, then the text on `userMessageBg` with a padding row above
/// and below.
pub(crate) struct UserBlock {
    text: String,
    theme: Arc<Theme>,
}

impl Component for UserBlock {
    fn render(&mut self, width: u16) -> Vec<String> {
        let w = usize::from(width);
        let bg = self.theme.bg_ansi("userMessageBg").to_owned();
        let fg = self.theme.fg_ansi("userMessageText").to_owned();
        let inner = w.saturating_sub(2).max(1);
        let row = |text: &str| {
            if w < 3 {
                return pi_tui::ansi::truncate(text, w, "");
            }
            let fill = inner.saturating_sub(pi_tui::ansi::visible_width(text));
            format!("{bg} {fg}{text}{} \x1b[0m", " ".repeat(fill))
        };
        let mut out = vec![String::new(), row("")];
        for line in self.text.split('\n') {
            for l in wrap(&escape_control(line), inner) {
                out.push(row(&l));
            }
        }
        out.push(row(""));
        out
    }
}

/// A thinking block: italic in `thinkingText`, or one `Thinking...` line when hidden.
struct ThinkingBlock {
    text: String,
    theme: Arc<Theme>,
    display: Arc<Display>,
}

impl Component for ThinkingBlock {
    fn render(&mut self, width: u16) -> Vec<String> {
        thinking_lines(&self.text, width, &self.theme, &self.display)
    }
}

/// A thinking block's lines (the live tail draws the streaming one without copying it).
fn thinking_lines(text: &str, width: u16, theme: &Theme, display: &Display) -> Vec<String> {
    let w = usize::from(width.saturating_sub(1)).max(1);
    let paint = |s: &str| theme.fg("thinkingText", &format!("\x1b[3m{s}\x1b[23m"));
    if display.hide_thinking.load(Ordering::Relaxed) {
        return vec![String::new(), format!(" {}", paint("Thinking..."))];
    }
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    let mut out = vec![String::new()];
    for line in text.split('\n') {
        for l in wrap(&escape_control(line), w) {
            out.push(format!(" {}", paint(&l)));
        }
    }
    out
}

/// A line of notice text (errors, aborts, compaction, retries) in a theme colour.
pub(crate) struct Notice {
    text: String,
    token: &'static str,
    theme: Arc<Theme>,
}

impl Notice {
    /// `text` in the theme's `token` colour.
    pub(crate) fn new(text: impl Into<String>, token: &'static str, theme: Arc<Theme>) -> Self {
        Self {
            text: text.into(),
            token,
            theme,
        }
    }
}

impl Component for Notice {
    fn render(&mut self, width: u16) -> Vec<String> {
        let w = usize::from(width.saturating_sub(1)).max(1);
        let mut out = vec![String::new()];
        for line in self.text.split('\n') {
            for l in wrap(&escape_control(line), w) {
                out.push(format!(" {}", self.theme.fg(self.token, &l)));
            }
        }
        out
    }
}

/// A part of the assistant message being streamed.
enum Part {
    Thinking(String),
    Text {
        md: StreamingMarkdown,
        /// Whether the blank line before it is in the history.
        opened: bool,
    },
}

struct LiveAssistant {
    /// Parts by content index (`None`: a tool call or not begun).
    parts: Vec<(usize, Part)>,
    /// Parts wholly in the history.
    committed: usize,
}

/// See the module docs.
pub(crate) struct Transcript {
    theme: Arc<Theme>,
    style: Arc<Style>,
    display: Arc<Display>,
    assistant: Option<LiveAssistant>,
    tools: Vec<ToolView>,
    commits: Vec<Block>,
    /// Notices about a finished message, shown after its tool boxes (as pi orders them).
    after_tools: Vec<Block>,
    /// The session's retry attempt when the current message ends (pi's abort text names it).
    pub retry_attempt: u32,
    /// Cache misses counted over the messages shown, in order.
    pub cache: CacheTracker,
    /// pi's `showCacheMissNotices`: cache-miss and dropped-thinking notices are shown.
    pub cache_notices: bool,
    /// The key that expands tool output, named in collapsed blocks (`ctrl+o`).
    pub expand_key: String,
}

impl Transcript {
    /// An empty transcript drawn with `theme` (boxes, notices) and `style` (markdown).
    pub(crate) fn new(theme: Arc<Theme>, style: Arc<Style>, display: Arc<Display>) -> Self {
        Self {
            theme,
            style,
            display,
            assistant: None,
            tools: Vec::new(),
            commits: Vec::new(),
            after_tools: Vec::new(),
            retry_attempt: 0,
            cache: CacheTracker::default(),
            cache_notices: false,
            expand_key: "ctrl+o".to_owned(),
        }
    }

    /// Draws the blocks made from now on with another theme (a theme change).
    pub(crate) fn set_theme(&mut self, theme: Arc<Theme>, style: Arc<Style>) {
        self.theme = theme;
        self.style = style;
    }

    /// The blocks finished since the last call, in history order.
    pub(crate) fn take_commits(&mut self) -> Vec<Block> {
        std::mem::take(&mut self.commits)
    }

    /// Whether anything is live (streaming text, a running tool).
    #[cfg(test)]
    pub(crate) fn has_live(&self) -> bool {
        self.assistant.is_some() || !self.tools.is_empty()
    }

    /// Commits a block now (after anything live is flushed; a notice during a stream lands
    /// after the part already shown).
    pub(crate) fn push_block(&mut self, block: Block) {
        self.commits.push(block);
    }

    /// Commits a notice.
    pub(crate) fn notice(&mut self, text: impl Into<String>, token: &'static str) {
        let n = Notice::new(text, token, self.theme.clone());
        self.commits.push(Box::new(n));
    }

    /// Commits a titled markdown document (`/changelog`): a blank line, the title, the text.
    pub(crate) fn document(&mut self, title: &str, markdown: &str) {
        let line = self.theme.fg(
            "accent",
            &format!("\x1b[1m{}\x1b[22m", escape_control(title)),
        );
        self.commits
            .push(Box::new(Lines(vec![String::new(), format!(" {line}")])));
        let md = pi_tui::components::Markdown::new(markdown, self.style.clone());
        self.commits.push(Box::new(Padded(Box::new(md))));
    }

    /// A user message (live or from a resumed session). A `/skill:name` invocation shows as
    /// pi shows it: the skill's collapsed block, then the user's words, if any, on their own.
    pub(crate) fn user(&mut self, text: &str) {
        let text = match skill_block::parse(text) {
            Some(mut skill) => {
                let words = skill.user_message.take();
                self.commits.push(Box::new(SkillBlock::new(
                    skill,
                    self.theme.clone(),
                    self.style.clone(),
                    self.display.clone(),
                    self.expand_key.clone(),
                )));
                match words {
                    Some(w) => w,
                    None => return,
                }
            }
            None => text.to_owned(),
        };
        self.commits.push(Box::new(UserBlock {
            text,
            theme: self.theme.clone(),
        }));
    }

    /// The images of a user message, below it (see [`super::images`]).
    pub(crate) fn user_images(&mut self, content: &pi_ai::UserMessageContent) {
        let pi_ai::UserMessageContent::Blocks(blocks) = content else {
            return;
        };
        let images: Vec<pi_ai::ImageContent> = blocks
            .iter()
            .filter_map(|c| match c {
                pi_ai::UserContent::Image(i) => Some(i.clone()),
                pi_ai::UserContent::Text(_) => None,
            })
            .collect();
        if !images.is_empty() {
            self.commits.push(Box::new(super::images::ImageList::new(
                images,
                self.theme.clone(),
                self.display.clone(),
            )));
        }
    }

    /// An assistant message starts streaming.
    pub(crate) fn assistant_start(&mut self) {
        self.assistant = Some(LiveAssistant {
            parts: Vec::new(),
            committed: 0,
        });
    }

    fn part(&mut self, index: usize, thinking: bool) -> Option<&mut Part> {
        let style = self.style.clone();
        let a = self.assistant.as_mut()?;
        if let Some(pos) = a.parts.iter().position(|(i, _)| *i == index) {
            return Some(&mut a.parts[pos].1);
        }
        let part = if thinking {
            Part::Thinking(String::new())
        } else {
            Part::Text {
                md: StreamingMarkdown::new(style),
                opened: false,
            }
        };
        a.parts.push((index, part));
        a.parts.last_mut().map(|(_, p)| p)
    }

    /// A text delta of content block `index`.
    pub(crate) fn text_delta(&mut self, index: usize, delta: &str) {
        if let Some(Part::Text { md, .. }) = self.part(index, false) {
            md.push(delta);
        }
        self.flush_assistant(false);
    }

    /// A thinking delta of content block `index`.
    pub(crate) fn thinking_delta(&mut self, index: usize, delta: &str) {
        if let Some(Part::Thinking(t)) = self.part(index, true) {
            t.push_str(delta);
        }
        self.flush_assistant(false);
    }

    /// A tool call was announced in the streamed message: its box appears, pending.
    pub(crate) fn tool_call_seen(&mut self, id: &str, name: &str, args: &Map<String, Value>) {
        if let Some(v) = self.tools.iter_mut().find(|v| v.call_id == id) {
            v.start_args(args);
            return;
        }
        self.tools.push(ToolView::new(
            id.to_owned(),
            name.to_owned(),
            args.clone(),
            self.theme.clone(),
            self.display.clone(),
        ));
    }

    /// Commits the parts that are finished: every part before the last, and the finished
    /// markdown blocks of the last (`all`: the message ended, everything).
    fn flush_assistant(&mut self, all: bool) {
        let Some(a) = self.assistant.as_mut() else {
            return;
        };
        let n = a.parts.len();
        while a.committed < n {
            let last = a.committed + 1 == n && !all;
            let (_, part) = &mut a.parts[a.committed];
            match part {
                Part::Thinking(t) => {
                    if last {
                        break;
                    }
                    self.commits.push(Box::new(ThinkingBlock {
                        text: std::mem::take(t),
                        theme: self.theme.clone(),
                        display: self.display.clone(),
                    }));
                }
                Part::Text { md, opened } => {
                    let blocks = if last {
                        md.take_finished()
                    } else {
                        md.finish()
                    };
                    if !blocks.is_empty() || (!last && !md.source().trim().is_empty()) {
                        if !*opened {
                            self.commits.push(Box::new(Blank));
                            *opened = true;
                        }
                        for b in blocks {
                            self.commits.push(Box::new(Padded(Box::new(b))));
                        }
                    }
                    if last {
                        break;
                    }
                }
            }
            a.committed += 1;
        }
    }

    /// The assistant message ended: everything of it goes to the history, then an error
    /// or abort notice; its tool calls stay live until they finish.
    pub(crate) fn assistant_end(&mut self, message: &AssistantMessage) {
        if self.assistant.is_none() {
            // Not streamed (a resumed session): the parts from the final message.
            self.assistant_start();
            for (i, c) in message.content.iter().enumerate() {
                match c {
                    AssistantContent::Thinking(t) => {
                        if let Some(Part::Thinking(s)) = self.part(i, true) {
                            s.push_str(&t.thinking);
                        }
                    }
                    AssistantContent::Text(t) => {
                        if let Some(Part::Text { md, .. }) = self.part(i, false) {
                            md.push(&t.text);
                        }
                    }
                    AssistantContent::ToolCall(_) => {}
                }
            }
        }
        self.flush_assistant(true);
        self.assistant = None;
        for c in &message.content {
            if let AssistantContent::ToolCall(call) = c {
                self.tool_call_seen(&call.id, &call.name, &call.arguments);
            }
        }
        match message.stop_reason {
            StopReason::Aborted => {
                // pi replaces whatever the provider said with its own words.
                let text = match self.retry_attempt {
                    0 => "Operation aborted".to_owned(),
                    1 => "Aborted after 1 retry attempt".to_owned(),
                    n => format!("Aborted after {n} retry attempts"),
                };
                self.notice(text, "error");
            }
            StopReason::Error => {
                let text = message
                    .error_message
                    .clone()
                    .unwrap_or_else(|| "Unknown error".to_owned());
                self.notice(format!("Error: {text}"), "error");
            }
            _ => {}
        }
        let miss = self.cache.observe(message);
        let failed = matches!(message.stop_reason, StopReason::Aborted | StopReason::Error);
        if self.cache_notices && !failed {
            let texts = dropped_thinking(message)
                .into_iter()
                .chain(miss.and_then(|m| m.notice()));
            for text in texts {
                let n = Notice::new(text, "warning", self.theme.clone());
                self.after_tools.push(Box::new(n));
            }
        }
        self.flush_tools();
    }

    fn tool(&mut self, id: &str, name: &str) -> &mut ToolView {
        if let Some(pos) = self.tools.iter().position(|v| v.call_id == id) {
            return &mut self.tools[pos];
        }
        self.tools.push(ToolView::new(
            id.to_owned(),
            name.to_owned(),
            Map::new(),
            self.theme.clone(),
            self.display.clone(),
        ));
        let last = self.tools.len() - 1;
        &mut self.tools[last]
    }

    /// A tool starts executing.
    pub(crate) fn tool_start(&mut self, id: &str, name: &str, args: &Value, now: Instant) {
        self.tool(id, name).start(args, now);
    }

    /// A tool reports progress.
    pub(crate) fn tool_update(&mut self, id: &str, name: &str, partial: &AgentToolResult) {
        self.tool(id, name).update(partial);
    }

    /// A tool finished.
    pub(crate) fn tool_end(
        &mut self,
        id: &str,
        name: &str,
        result: &AgentToolResult,
        is_error: bool,
    ) {
        self.tool(id, name).finish(result, is_error, Instant::now());
        self.flush_tools();
    }

    fn flush_tools(&mut self) {
        if self.assistant.is_some() {
            return;
        }
        while self.tools.first().is_some_and(ToolView::is_done) {
            let v = self.tools.remove(0);
            self.commits.push(Box::new(v));
        }
        if self.tools.is_empty() {
            self.commits.append(&mut self.after_tools);
        }
    }

    /// Ends whatever is live (an aborted run, the end of the mode): open parts go to the
    /// history as they are, unfinished tool boxes stay as they were last seen.
    pub(crate) fn settle(&mut self) {
        self.flush_assistant(true);
        self.assistant = None;
        for v in std::mem::take(&mut self.tools) {
            self.commits.push(Box::new(v));
        }
        self.commits.append(&mut self.after_tools);
    }

    /// A message of a resumed session (or one the session added outside a stream).
    pub(crate) fn replay_message(&mut self, message: &AgentMessage) {
        match message {
            AgentMessage::User(u) => {
                self.user(&content_text(&u.content));
                self.user_images(&u.content);
            }
            AgentMessage::Assistant(a) => self.assistant_end(a),
            AgentMessage::ToolResult(r) => {
                let result = AgentToolResult {
                    content: r.content.clone(),
                    details: r.details.clone(),
                    ..AgentToolResult::default()
                };
                self.tool_end(&r.tool_call_id, &r.tool_name, &result, r.is_error);
            }
            AgentMessage::Custom(m) => self.custom_message(m),
        }
    }

    /// A custom message: a `!` command's record, a compaction or branch summary, an
    /// extension's message.
    pub(crate) fn custom_message(&mut self, m: &Map<String, Value>) {
        let s = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("");
        if matches!(s("role"), "compactionSummary" | "branchSummary") {
            // The context changed on purpose: the next prompt is new, not re-billed.
            self.cache.reset();
        }
        match s("role") {
            "bashExecution" => {
                let mut v = UserBashView::new(
                    s("command"),
                    m.get("excludeFromContext").and_then(Value::as_bool) == Some(true),
                    self.theme.clone(),
                    self.display.clone(),
                );
                let status = if m.get("cancelled").and_then(Value::as_bool) == Some(true) {
                    BashStatus::Cancelled
                } else {
                    match m.get("exitCode").and_then(Value::as_i64) {
                        Some(0) | None => BashStatus::Complete,
                        Some(c) => BashStatus::Failed(i32::try_from(c).unwrap_or(i32::MAX)),
                    }
                };
                let truncated = m.get("truncated").and_then(Value::as_bool) == Some(true);
                let path = m
                    .get("fullOutputPath")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                v.finish(s("output"), status, truncated, path);
                self.commits.push(Box::new(v));
            }
            "compactionSummary" => self.notice(
                format!(
                    "Compacted from {} tokens",
                    m.get("tokensBefore").and_then(Value::as_u64).unwrap_or(0)
                ),
                "muted",
            ),
            "branchSummary" => self.notice(format!("Branch summary: {}", s("summary")), "muted"),
            _ => {
                let text = match m.get("content") {
                    Some(Value::String(t)) => t.clone(),
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                };
                if m.get("display").and_then(Value::as_bool) != Some(false) && !text.is_empty() {
                    let tag = s("customType");
                    let head = if tag.is_empty() {
                        String::new()
                    } else {
                        format!("[{tag}] ")
                    };
                    self.notice(format!("{head}{text}"), "customMessageText");
                }
            }
        }
    }

    /// The live tail's lines.
    pub(crate) fn render_live(&mut self, width: u16) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(a) = &mut self.assistant {
            for (_, part) in a.parts.iter_mut().skip(a.committed) {
                match part {
                    Part::Thinking(t) => {
                        out.extend(thinking_lines(t, width, &self.theme, &self.display));
                    }
                    Part::Text { md, opened } => {
                        if md.source().trim().is_empty() {
                            continue;
                        }
                        if !*opened {
                            out.push(String::new());
                        }
                        let inner = width.saturating_sub(1).max(1);
                        out.extend(md.render(inner).into_iter().map(|l| format!(" {l}")));
                    }
                }
            }
        }
        for v in &mut self.tools {
            out.extend(v.render(width));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::{TextContent, ToolCall, Usage};
    use pi_tui::ansi::strip;
    use pi_tui::terminal_colors::ColorScheme;
    use pi_tui::theme::ColorMode;
    use serde_json::json;

    fn transcript() -> Transcript {
        let theme = Arc::new(Theme::builtin(ColorScheme::Dark, ColorMode::None));
        Transcript::new(
            theme,
            Arc::new(Style::plain()),
            Arc::new(Display::default()),
        )
    }

    fn lines(blocks: Vec<Block>, width: u16) -> Vec<String> {
        blocks
            .into_iter()
            .flat_map(|mut b| b.render(width))
            .map(|l| strip(&l).trim_end().to_owned())
            .collect()
    }

    fn assistant(content: Vec<AssistantContent>, stop: StopReason) -> AssistantMessage {
        let mut m = AssistantMessage::empty("anthropic-messages", "p", "m");
        m.content = content;
        m.stop_reason = stop;
        m.usage = Usage::default();
        m
    }

    #[test]
    fn streamed_text_is_committed_once_and_in_order() {
        let mut t = transcript();
        t.user("hi");
        t.assistant_start();
        t.thinking_delta(0, "let me think");
        assert!(lines(t.take_commits(), 40).contains(&" hi".to_owned()));
        t.text_delta(1, "First paragraph.\n\nSecond ");
        let first = lines(t.take_commits(), 40);
        assert_eq!(first, ["", " let me think", "", " First paragraph."]);
        let live: Vec<String> = t.render_live(40).iter().map(|l| strip(l)).collect();
        assert!(live.iter().any(|l| l.contains("Second")), "{live:?}");
        t.text_delta(1, "one.");
        let msg = assistant(
            vec![AssistantContent::Text(TextContent::new(
                "First paragraph.\n\nSecond one.",
            ))],
            StopReason::Stop,
        );
        t.assistant_end(&msg);
        let rest = lines(t.take_commits(), 40);
        assert_eq!(rest.iter().filter(|l| l.contains("Second one.")).count(), 1);
        assert!(!rest.iter().any(|l| l.contains("First")));
        assert!(!t.has_live());
    }

    #[test]
    fn tool_boxes_commit_in_call_order_when_done() {
        let mut t = transcript();
        t.assistant_start();
        let call = |id: &str| {
            AssistantContent::ToolCall(ToolCall {
                id: id.into(),
                name: "ls".into(),
                arguments: json!({"path": id}).as_object().cloned().unwrap_or_default(),
                ..ToolCall::default()
            })
        };
        t.assistant_end(&assistant(vec![call("a"), call("b")], StopReason::ToolUse));
        assert!(t.has_live());
        let done = AgentToolResult::default();
        t.tool_end("b", "ls", &done, false);
        assert!(t.take_commits().is_empty(), "b waits for a");
        t.tool_end("a", "ls", &done, false);
        let l = lines(t.take_commits(), 30);
        let a = l.iter().position(|x| x == " ls a").unwrap();
        let b = l.iter().position(|x| x == " ls b").unwrap();
        assert!(a < b);
        assert!(!t.has_live());
    }

    #[test]
    fn failures_and_aborts_become_notices() {
        let mut t = transcript();
        let mut m = assistant(vec![], StopReason::Error);
        m.error_message = Some("overloaded".into());
        t.replay_message(&AgentMessage::from(m));
        t.replay_message(&AgentMessage::from(assistant(vec![], StopReason::Aborted)));
        assert_eq!(
            lines(t.take_commits(), 40),
            ["", " Error: overloaded", "", " Operation aborted"]
        );
    }

    #[test]
    fn a_skill_invocation_shows_its_block_then_the_words() {
        let mut t = transcript();
        t.user("<skill name=\"pdf\" location=\"/s/SKILL.md\">\nUse tools.\n</skill>\n\nread a.pdf");
        let l = lines(t.take_commits(), 40);
        let skill = l
            .iter()
            .position(|x| x == " [skill] pdf (ctrl+o to expand)");
        let words = l.iter().position(|x| x == " read a.pdf");
        assert!(skill.is_some() && words > skill, "{l:?}");
        assert!(!l.iter().any(|x| x.contains("Use tools.")), "{l:?}");
    }

    #[test]
    fn cache_miss_notices_follow_the_tool_boxes_and_the_setting() {
        let turn = |model: &str, at: i64, read: f64, write: f64, tools: bool| {
            let call = AssistantContent::ToolCall(ToolCall {
                id: format!("c{at}"),
                name: "ls".into(),
                ..ToolCall::default()
            });
            let mut m = assistant(
                if tools { vec![call] } else { vec![] },
                if tools {
                    StopReason::ToolUse
                } else {
                    StopReason::Stop
                },
            );
            m.model = model.into();
            m.timestamp = at;
            m.usage.input = 10.0;
            m.usage.cache_read = read;
            m.usage.cache_write = write;
            m
        };
        let mut t = transcript();
        t.cache_notices = true;
        t.assistant_end(&turn("a", 1, 0.0, 40_000.0, false));
        t.assistant_end(&turn("b", 2, 0.0, 40_000.0, true));
        assert!(
            !lines(t.take_commits(), 60)
                .iter()
                .any(|l| l.contains("Cache"))
        );
        t.tool_end("c2", "ls", &AgentToolResult::default(), false);
        let l = lines(t.take_commits(), 60);
        let tool = l.iter().position(|x| x.starts_with(" ls")).unwrap();
        let notice = l
            .iter()
            .position(|x| x == " Cache miss after model switch: 40k tokens re-billed")
            .unwrap_or_else(|| panic!("{l:?}"));
        assert!(tool < notice);
        // Off (pi's default): counted, never shown.
        t.cache_notices = false;
        t.assistant_end(&turn("a", 3, 0.0, 40_000.0, false));
        assert!(
            !lines(t.take_commits(), 60)
                .iter()
                .any(|l| l.contains("Cache"))
        );
    }
}
