//! The interactive mode: `pi` in a terminal.
//!
//! Mirrors the behaviour of pi-coding-agent 0.85.0 `modes/interactive/interactive-mode.js`
//! on the session events, with pi's keys (`keybindings.json` applies) and the flicker-free
//! renderer of `pi-tui`: finished transcript blocks go to the terminal's scrollback once;
//! only the live tail (the streaming message, running tools, the queue, the status line),
//! the editor and the footer are repainted.
//!
//! | module | job |
//! |---|---|
//! | [`transcript`] | session messages → history blocks and the live tail |
//! | [`tool_view`] | a tool call's box and its per-tool preview |
//! | [`footer`] | the footer lines |
//! | [`images`] | images of messages and tool results, inline or not at all |
//! | [`notices`] | cache-miss and dropped-thinking notices |
//! | [`skill_block`] | a `/skill:name` invocation's block |
//! | [`slash`] | the built-in slash commands and the `/` menu's list |
//! | [`changelog`] | `/changelog`'s entries |
//! | `commands` | what those commands and their selectors do |
//! | `login` | `/login` (API keys, browser logins) and `/logout` |
//! | `reload` | `/reload` |
//! | `session_picker` | the session selector of `/resume` and `--resume` (scope, rename, delete) |
//! | `tree_commands` | `/tree`'s filters and labels |
//! | `scoped_commands` | what `/scoped-models` does with its answers |
//! | `share` | `/share` (a secret gist through the GitHub CLI) |
//! | [`clipboard`] | Ctrl+V: a clipboard image by path, else text |
//! | [`picker`] | the selectors that take the editor's place |
//! | [`session_list`] | what the session selector shows of a file |
//! | [`tree_view`] | the `/tree` selector's rows |
//! | [`settings_view`] | `/settings` |
//! | `themes` | the start-up theme, the theme selector, hot reload |
//! | [`config_view`] | `pi config`: the resource configuration screen |
//! | [`scoped_models`] | `/scoped-models` |
//! | [`user_bash`] | a user `!cmd` block |
//! | [`trust`] | the project-trust question before the session is built |
//!
//! Threads: the UI runs on a blocking thread of the tokio runtime and owns the terminal;
//! the session runs on the runtime. A session listener forwards each event through a
//! channel and wakes the UI ([`pi_tui::terminal::Waker`]); the UI starts prompts, aborts
//! and model changes as tasks on the runtime and hears of their end the same way.

pub(crate) mod changelog;
pub(crate) mod clipboard;
mod commands;
pub(crate) mod config_view;
mod ext_ui;
pub(crate) mod footer;
pub(crate) mod images;
mod login;
pub(crate) mod notices;
pub(crate) mod picker;
mod reload;
mod scoped_commands;
pub(crate) mod scoped_models;
pub(crate) mod session_list;
mod session_picker;
pub(crate) mod settings_view;
mod share;
mod shortcuts;
pub(crate) mod skill_block;
pub(crate) mod slash;
mod standalone_input;
mod themes;
mod tmux_keys;
pub(crate) mod tool_view;
pub(crate) mod transcript;
mod tree_commands;
pub(crate) mod tree_view;
pub(crate) mod trust;
pub(crate) mod user_bash;
mod widgets;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use pi_agent_core::{AgentEvent, AgentMessage};
use pi_ai::{AssistantContent, AssistantMessageEvent};
use pi_tui::capabilities::Capabilities;
use pi_tui::components::StatusLine;
use pi_tui::components::editor::{Editor, EditorEvent, EditorStyle};
use pi_tui::keybindings::{Keybindings, Platform, UserBindings};
use pi_tui::keys::{Decoded, Decoder, escape_timeout_from_env};
use pi_tui::terminal::{self, TermEvent, Terminal, TerminalOptions, Waker};
use pi_tui::theme::{ColorMode, Theme};
use pi_tui::tui::{Mode, Tui, TuiOptions};
use pi_tui::{Component, InputEvent, KeyEvent};
use tokio::runtime::Handle;

use crate::app::{InitialMessage, Running};
use crate::session::hooks::StreamingBehavior;
use crate::session::queues::content_text;
use crate::session::stats::Totals as UsageTotals;
use crate::session::{
    AgentSession, AgentSessionEvent, ExecuteBashOptions, PromptOptions, ShutdownReason,
};
use transcript::{Display, Transcript};

/// What the interactive mode needs besides the session.
#[derive(Clone, Debug)]
pub(crate) struct InteractiveOptions {
    /// The working directory (the footer's first line).
    pub cwd: PathBuf,
    /// The agent directory (`keybindings.json`).
    pub agent_dir: PathBuf,
    /// `--session-dir`, when given (the resume hint repeats it).
    pub session_dir: Option<String>,
    /// `--tui-mode fullscreen`.
    pub fullscreen: bool,
    /// `-r/--resume`: start with the session picker; Esc there quits (`No session
    /// selected`).
    pub resume_picker: bool,
    /// The UI the extensions had during `session_start`; what they showed there is shown
    /// once the terminal is ready.
    pub startup_ui: Option<std::sync::Arc<StartupUi>>,
    /// `--theme` paths.
    pub theme_paths: Vec<String>,
    /// `--no-themes`.
    pub no_themes: bool,
    /// `--use-theme`: the theme setting of this run, not written to `settings.json`.
    pub use_theme: Option<String>,
}

pub(crate) use ext_ui::StartupUi;

/// Something for the UI thread besides terminal input.
enum UiMsg {
    /// A session event, in emission order.
    Session(Box<AgentSessionEvent>),
    /// A prompt task ended (its error text, if it failed).
    PromptDone(Option<String>),
    /// A `!` command ended.
    BashDone(Result<crate::tools::bash::user::BashResult, crate::session::SessionError>),
    /// The usage totals of the entries stored before the mode started.
    StoredTotals(UsageTotals),
    /// A background command failed with this text (shown as pi's `Error: …`).
    Failed(String),
    /// A model cycle ended: pi's status text (`Switched to …`, `Only one model …`) or the
    /// error.
    Cycled(Result<String, crate::session::SessionError>),
    /// A background command's notice (pi's `showStatus`; empty: nothing to say).
    Status(String),
    /// A background check's warning (pi's `showWarning`: `Warning: <text>`).
    Warning(&'static str),
    /// The host replaced the session (`/new`, `/resume`, `/fork`, `/clone`, `/import`).
    Replaced(commands::Replaced),
    /// An extension's `ctx.ui` call.
    Extension(Box<ext_ui::ExtRequest>),
    /// `/tree` navigation ended.
    Navigated(Box<Result<crate::session::NavigateTreeResult, crate::session::SessionError>>),
    /// `/share` ended.
    Shared(share::ShareOutcome),
    /// A `/login` account login ended (the provider id).
    LoggedIn(&'static str, login::LoginOutcome),
    /// A running `/login` account login shows or asks something.
    Login(&'static str, pi_ai::auth::oauth::interaction::LoginMessage),
}

/// Runs the interactive mode on `running` until the user quits; returns the exit status.
/// Must run inside a tokio runtime (the UI takes a blocking thread of it).
pub(crate) async fn run(
    running: Running,
    initial: InitialMessage,
    options: InteractiveOptions,
) -> i32 {
    let handle = Handle::current();
    match tokio::task::spawn_blocking(move || ui_main(running, initial, options, handle)).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    }
}

fn ui_main(
    running: Running,
    initial: InitialMessage,
    options: InteractiveOptions,
    handle: Handle,
) -> i32 {
    let term = match Terminal::enter(TerminalOptions {
        terminate_events: true,
        ..TerminalOptions::default()
    }) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("Error: {e}");
            return 1;
        }
    };
    let mut app = App::new(running, term, options, handle);
    app.start(initial);
    let code = app.run_loop();
    app.finish();
    code
}

/// The resume hint pi prints on exit: `pi [--session-dir D] --session <id>`, when the session
/// has a file on disk.
pub(crate) fn resume_command(session: &AgentSession, session_dir: Option<&str>) -> Option<String> {
    let file = session.session_file()?;
    if !file.exists() {
        return None;
    }
    let mut args = vec!["pi".to_owned()];
    if let Some(dir) = session_dir {
        args.push("--session-dir".into());
        args.push(quote_if_needed(dir));
    }
    args.push("--session".into());
    args.push(session.session_id());
    Some(args.join(" "))
}

fn quote_if_needed(s: &str) -> String {
    if s.chars()
        .any(|c| c.is_whitespace() || "\"'$`\\".contains(c))
    {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        s.to_owned()
    }
}

/// The git branch of `cwd` (from `.git/HEAD` of it or an ancestor), or a short commit id
/// when detached.
fn git_branch(cwd: &Path) -> Option<String> {
    for dir in cwd.ancestors() {
        let git = dir.join(".git");
        let head_path = if git.is_file() {
            // A worktree or submodule: `gitdir: <path>`.
            let text = std::fs::read_to_string(&git).ok()?;
            let gitdir = text.strip_prefix("gitdir:")?.trim();
            dir.join(gitdir).join("HEAD")
        } else if git.is_dir() {
            git.join("HEAD")
        } else {
            continue;
        };
        let head = std::fs::read_to_string(head_path).ok()?;
        let head = head.trim();
        return Some(match head.strip_prefix("ref: refs/heads/") {
            Some(branch) => branch.to_owned(),
            None => "detached".to_owned(),
        });
    }
    None
}

/// pi's status line after Ctrl+P: the model switched to (its name, else its id) and the
/// thinking level when the model reasons and it is not off; without a switch, why.
fn cycled_text(c: Option<&crate::session::CycleResult>, scoped: bool) -> String {
    match c {
        Some(c) => {
            let name = if c.model.name.is_empty() {
                &c.model.id
            } else {
                &c.model.name
            };
            let thinking =
                if c.model.reasoning && c.thinking_level != pi_ai::ModelThinkingLevel::Off {
                    format!(" (thinking: {})", c.thinking_level.as_str())
                } else {
                    String::new()
                };
            format!("Switched to {name}{thinking}")
        }
        None if scoped => "Only one model in scope".to_owned(),
        None => "Only one model available".to_owned(),
    }
}

/// At most this many messages of a resumed session are drawn; the earlier ones are counted
/// in one line (the whole context still goes to the model). Keeps the start of a very long
/// session as fast as a short one.
const RESUME_MESSAGES: usize = 200;

struct App {
    session: AgentSession,
    running: Running,
    handle: Handle,
    options: InteractiveOptions,
    term: Terminal,
    waker: Waker,
    tx: Sender<UiMsg>,
    rx: Receiver<UiMsg>,
    tui: Tui,
    decoder: Decoder,
    keys: Arc<Keybindings>,
    theme: Arc<Theme>,
    /// The themes offered, the active one and its file's watch.
    themes: themes::ThemeState,
    display: Arc<Display>,
    transcript: Transcript,
    status: StatusLine,
    /// The status is pi's working indicator, drawn in the editor's top rule; otherwise
    /// (retry, compaction) it is a line of its own above the editor.
    status_in_rule: bool,
    /// A retry's countdown: attempt, attempts allowed, when the wait ends.
    retry_until: Option<(u32, u32, Instant)>,
    editor: Editor,
    footer: footer::FooterData,
    /// Usage totals of the messages that ended since the start (the store reads entries back
    /// from disk, so its totals cost the whole file: they are read once, in the background).
    totals: UsageTotals,
    /// The totals of the entries stored before the start (computed in the background).
    stored_totals: UsageTotals,
    /// The latest assistant message's usage (the cache hit rate).
    last_usage: Option<pi_ai::Usage>,
    branch: Option<String>,
    steering: Vec<String>,
    follow_up: Vec<String>,
    /// A `!` command's block while it runs.
    bash: Option<user_bash::UserBashView>,
    /// Prompt tasks running.
    prompts: usize,
    last_clear: Option<Instant>,
    /// The last Esc on an idle, empty editor (the double-Esc action).
    last_escape: Option<Instant>,
    quit: bool,
    /// A write to the terminal failed: it is gone.
    lost_terminal: bool,
    /// The start's `--resume` picker was cancelled: pi prints `No session selected`.
    no_session_selected: bool,
    dirty: bool,
    force: bool,
    /// The selector in the editor's place, if one is open.
    picker: Option<(commands::Pick, picker::Picker)>,
    /// `/settings`, when open (in the editor's place too).
    settings_view: Option<settings_view::SettingsView>,
    /// `/scoped-models`, when open (in the editor's place too).
    scoped_view: Option<scoped_models::ScopedModelsView>,
    /// The `/share` task, while it runs (Esc cancels it).
    share: Option<tokio::task::AbortHandle>,
    /// A `/login` account login, while it runs (Esc cancels it).
    login: Option<tokio::task::AbortHandle>,
    /// Where the answer to the running login's open question goes.
    login_reply: Option<tokio::sync::oneshot::Sender<String>>,
    /// The session selector's scope (kept while renaming or deleting from it).
    session_scope: session_picker::Scope,
    /// The session selector's sort, name filter, path toggle and search.
    session_view: session_picker::View,
    /// `/tree`'s filter while it is open.
    tree_filter: tree_view::TreeFilter,
    /// Extension dialogs waiting for the open one to close.
    dialogs: std::collections::VecDeque<ext_ui::Dialog>,
    /// The extension dialog shown now (its selector is `picker`).
    dialog: Option<ext_ui::Dialog>,
    /// `ctx.ui.setStatus` texts by key.
    ext_statuses: std::collections::BTreeMap<String, String>,
    /// `ctx.ui.setWidget` blocks above and below the editor.
    widgets: widgets::Widgets,
    /// `ctx.ui.setWorkingMessage`: the working indicator's text instead of "Working".
    working_message: Option<String>,
    /// `ctx.ui.setWorkingIndicator`: the spinner's frames and time per frame.
    working_indicator: Option<crate::extensions::WorkingIndicator>,
    /// The extensions' shortcuts, bound while the editor has the keyboard.
    ext_shortcuts: Vec<shortcuts::Bound>,
    /// The UI's listener on the host's sessions (it follows replacements).
    subscription: Option<crate::runtime::HostSubscription>,
}

/// The live region above the editor: transcript tail, `!` command, queue, status.
struct LiveView<'a> {
    transcript: &'a mut Transcript,
    bash: &'a mut Option<user_bash::UserBashView>,
    steering: &'a [String],
    follow_up: &'a [String],
    status: &'a mut StatusLine,
    /// The status is in the editor's rule, not here.
    status_in_rule: bool,
    theme: &'a Theme,
}

impl Component for LiveView<'_> {
    fn render(&mut self, width: u16) -> Vec<String> {
        let mut out = self.transcript.render_live(width);
        if let Some(b) = self.bash.as_mut() {
            out.extend(b.render(width));
        }
        let w = usize::from(width);
        if !self.steering.is_empty() || !self.follow_up.is_empty() {
            out.push(String::new());
            for (label, items) in [("Steering", self.steering), ("Follow-up", self.follow_up)] {
                for text in items {
                    let line = format!("{label}: {}", text.replace('\n', " "));
                    let line = pi_tui::ansi::escape_control(&line);
                    out.push(pi_tui::ansi::truncate(&self.theme.fg("dim", &line), w, "…"));
                }
            }
            out.push(pi_tui::ansi::truncate(
                &self.theme.fg("dim", "↳ Alt+Up to edit all queued messages"),
                w,
                "…",
            ));
        }
        // The status line takes the blank row above the editor while it shows, so starting
        // and ending a run does not change the region's height.
        let status = if self.status_in_rule {
            Vec::new()
        } else {
            self.status.render(width)
        };
        if status.is_empty() {
            out.push(String::new());
        } else {
            out.extend(status);
        }
        out
    }
}

/// The docked bottom: extension widgets around the editor, and the footer.
struct DockView<'a> {
    editor: &'a mut Editor,
    /// A selector shown instead of the editor.
    panel: Option<&'a mut dyn Component>,
    widgets: &'a widgets::Widgets,
    footer: &'a footer::FooterData,
    theme: &'a Theme,
}

impl Component for DockView<'_> {
    fn render(&mut self, width: u16) -> Vec<String> {
        let w = usize::from(width);
        let mut out = self.widgets.render_above(w, self.theme);
        out.extend(match self.panel.as_mut() {
            Some(p) => p.render(width),
            None => self.editor.render(width),
        });
        out.extend(self.widgets.render_below(w, self.theme));
        out.extend(footer::render(self.footer, w, self.theme));
        out
    }
}

impl App {
    fn new(
        running: Running,
        mut term: Terminal,
        options: InteractiveOptions,
        handle: Handle,
    ) -> Self {
        let session = running.session.clone();
        let caps = Capabilities::detect();
        let mode = ColorMode::from_env();
        let (hide_thinking, theme_name, hardware_cursor, theme_settings, trusted) = {
            let s = crate::sync::lock(session.settings());
            let name = s
                .get("theme")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned);
            let paths = s.scoped_resource_paths("themes");
            let trusted = s.is_project_trusted();
            // pi: the setting, else the terminal's default (`PI_HARDWARE_CURSOR`).
            let cursor = s
                .get("showHardwareCursor")
                .and_then(serde_json::Value::as_bool);
            (s.hide_thinking_block(), name, cursor, paths, trusted)
        };
        let theme_cli_paths = crate::packages::with_package_themes(
            &options.theme_paths,
            options.no_themes,
            &crate::sync::lock(session.settings()),
            &options.cwd,
            &options.agent_dir,
        );
        let (themes, theme, theme_error) = themes::ThemeState::start(
            &crate::config::themes::ThemeSources {
                cwd: &options.cwd,
                agent_dir: &options.agent_dir,
                project_trusted: trusted,
                settings: &theme_settings,
                cli_paths: &theme_cli_paths,
                no_themes: options.no_themes,
            },
            theme_name.as_deref(),
            options.use_theme.clone(),
            mode,
        );
        let theme = Arc::new(theme);
        let style = Arc::new(theme.markdown_style(caps.hyperlinks));
        let display = Arc::new(Display::default());
        display
            .hide_thinking
            .store(hide_thinking, Ordering::Relaxed);
        {
            let s = crate::sync::lock(session.settings());
            let terminal = s.get("terminal");
            let show = terminal
                .and_then(|t| t.get("showImages"))
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(true);
            let width = terminal
                .and_then(|t| t.get("imageWidthCells"))
                .and_then(serde_json::Value::as_u64)
                .map_or(0, |w| u32::try_from(w.max(1)).unwrap_or(u32::MAX));
            display.show_images.store(show, Ordering::Relaxed);
            display.image_width.store(width, Ordering::Relaxed);
        }
        // Inline images need the scrollback to move them with the text: not on the alternate
        // screen, whose scroll view repaints rows.
        if let Some(p) = caps.images.filter(|_| !options.fullscreen) {
            let _ = display.image_protocol.set(p);
            let _ = term.write(pi_tui::terminal_image::CELL_SIZE_QUERY);
        }
        let (user, diagnostics) = UserBindings::load(&options.agent_dir.join("keybindings.json"));
        let keys = Arc::new(Keybindings::with_user(Platform::current(), &user));
        let mut editor = Editor::new(keys.clone(), EditorStyle::from_theme(&theme));
        editor.set_focused(true);
        let (cols, rows) = terminal::size();
        editor.set_terminal_rows(rows);
        let mut tui = Tui::new(
            cols,
            rows,
            TuiOptions {
                hardware_cursor: hardware_cursor.unwrap_or(caps.hardware_cursor),
                ..TuiOptions::default()
            },
        );
        if let Some(row) = term.cursor_row() {
            tui.set_cursor_row(row);
        }
        let (tx, rx) = channel();
        let waker = term.waker();
        let mut transcript = Transcript::new(theme.clone(), style, display.clone());
        for d in diagnostics {
            transcript.notice(format!("Warning: keybindings.json: {d}"), "warning");
        }
        if let Some(report) = themes.report() {
            transcript.notice(report, "warning");
        }
        if let Some(e) = theme_error {
            transcript.notice(format!("Error: {e}"), "error");
        }
        transcript.expand_key = keys
            .keys("app.tools.expand")
            .first()
            .map_or_else(|| "ctrl+o".to_owned(), ToString::to_string);
        transcript.cache = notices::CacheTracker::new(&(running.available_models)());
        let branch = git_branch(&options.cwd);
        let status = StatusLine::new(theme.fg_ansi("borderMuted"), theme.fg_ansi("accent"));
        Self {
            session,
            running,
            handle,
            options,
            term,
            waker,
            tx,
            rx,
            tui,
            decoder: Decoder::new().with_escape_timeout(escape_timeout_from_env()),
            keys,
            theme,
            themes,
            display,
            transcript,
            status,
            status_in_rule: false,
            retry_until: None,
            editor,
            footer: footer::FooterData::default(),
            totals: UsageTotals::default(),
            stored_totals: UsageTotals::default(),
            last_usage: None,
            branch,
            steering: Vec::new(),
            follow_up: Vec::new(),
            bash: None,
            prompts: 0,
            last_clear: None,
            last_escape: None,
            quit: false,
            lost_terminal: false,
            no_session_selected: false,
            dirty: true,
            force: true,
            picker: None,
            settings_view: None,
            scoped_view: None,
            share: None,
            login: None,
            login_reply: None,
            session_scope: session_picker::Scope::Current,
            session_view: session_picker::View::default(),
            tree_filter: tree_view::TreeFilter::Default,
            dialogs: std::collections::VecDeque::new(),
            dialog: None,
            ext_statuses: std::collections::BTreeMap::new(),
            widgets: widgets::Widgets::default(),
            working_message: None,
            working_indicator: None,
            ext_shortcuts: Vec::new(),
            subscription: None,
        }
    }

    fn key_hint(&self, action: &str) -> String {
        self.keys
            .keys(action)
            .first()
            .map(ToString::to_string)
            .unwrap_or_default()
    }

    /// The header, the resumed transcript, the listener and the first prompt.
    fn start(&mut self, initial: InitialMessage) {
        if self.options.fullscreen {
            let bytes = self.tui.set_mode(Mode::Fullscreen);
            let _ = self.term.write(&bytes);
        }
        self.commit_model_scope();
        self.commit_header();
        self.startup_changelog();
        let prompt_now =
            initial.text.as_deref().is_some_and(|t| !t.is_empty()) || !initial.rest.is_empty();
        self.show_history(prompt_now);
        self.check_tmux_keys();
        let (tx, waker) = (self.tx.clone(), self.waker.clone());
        self.subscription = Some(self.running.host.subscribe(move |e| {
            let _ = tx.send(UiMsg::Session(Box::new(e.clone())));
            waker.wake();
            Ok(())
        }));
        self.install_autocomplete();
        self.bind_extension_ui(true);
        self.install_rebind();
        self.refresh_footer();
        if let Some(name) = self.session.session_name() {
            let _ = self.term.set_title(&format!("pi - {name}"));
        }
        if self.options.resume_picker {
            self.session_view = session_picker::View::default();
            self.open_sessions(
                session_picker::Scope::Current,
                commands::Pick::StartupSession,
            );
        }
        if let Some(text) = initial.text.filter(|t| !t.is_empty()) {
            self.editor.add_to_history(&text);
            self.spawn_prompt(text, initial.images, None);
        }
        for m in initial.rest {
            self.spawn_prompt(m, Vec::new(), Some(StreamingBehavior::FollowUp));
        }
    }

    /// pi's tmux keyboard check, off the UI thread (it runs `tmux show` twice); its warning
    /// arrives as [`UiMsg::Warning`].
    fn check_tmux_keys(&self) {
        let (tx, waker) = (self.tx.clone(), self.waker.clone());
        self.handle.spawn_blocking(move || {
            if let Some(text) = tmux_keys::warning() {
                let _ = tx.send(UiMsg::Warning(text));
                waker.wake();
            }
        });
    }

    /// pi's header (unless `quietStartup`): name, version and the main keys.
    /// pi's `lastChangelogVersion`: a new session of a first run records this version and
    /// shows nothing; after an upgrade the entries since the recorded version show (or pi's
    /// one line with `collapseChangelog`) and this version is recorded. A resumed session
    /// (it has messages) leaves it alone.
    fn startup_changelog(&mut self) {
        if !self.session.messages().is_empty() {
            return;
        }
        let (last, collapse) = {
            let s = crate::sync::lock(self.session.settings());
            let collapse = s
                .get("collapseChangelog")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
            (s.last_changelog_version().map(str::to_owned), collapse)
        };
        let Some(last) = last else {
            crate::sync::lock(self.session.settings()).set_last_changelog_version(crate::VERSION);
            return;
        };
        let entries = changelog::newer_than(changelog::CHANGELOG, &last);
        let Some(latest) = entries.first() else {
            return;
        };
        crate::sync::lock(self.session.settings()).set_last_changelog_version(crate::VERSION);
        if collapse {
            let (a, b, c) = latest.version;
            self.transcript.notice(
                format!("Updated to v{a}.{b}.{c}. Use /changelog to view full changelog."),
                "text",
            );
        } else {
            let text = entries
                .iter()
                .map(|e| e.content.as_str())
                .collect::<Vec<_>>()
                .join("\n\n");
            self.transcript.document("What's New", &text);
        }
    }

    /// pi's line for a `--models` scope, printed before the header at the start:
    /// `Model scope: a, b:high (Ctrl+P to cycle)`.
    fn commit_model_scope(&mut self) {
        let scoped = self.session.scoped_models();
        let quiet = crate::sync::lock(self.session.settings()).quiet_startup();
        if scoped.is_empty() || quiet {
            return;
        }
        let list = scoped
            .iter()
            .map(|s| match s.thinking_level {
                Some(level) => format!("{}:{}", s.model.id, level.as_str()),
                None => s.model.id.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let keys: Vec<String> = self
            .keys
            .keys("app.model.cycleForward")
            .iter()
            .map(ToString::to_string)
            .collect();
        let hint = if keys.is_empty() {
            String::new()
        } else {
            let keys = shortcuts::display(&keys.join("/"));
            self.theme.fg("muted", &format!(" ({keys} to cycle)"))
        };
        let line = format!(
            "{}{hint}",
            self.theme.fg(
                "dim",
                &pi_tui::ansi::escape_control(&format!("Model scope: {list}"))
            )
        );
        self.tui
            .commit(Box::new(pi_tui::components::Text::new(line)));
    }

    fn commit_header(&mut self) {
        let t = self.theme.clone();
        let hint =
            |key: String, what: &str| format!("{}{}", t.fg("dim", &key), t.fg("muted", what));
        let header = format!(
            " {}{}\n {}{}{}{}{}",
            t.fg("accent", "\x1b[1mpi\x1b[22m"),
            t.fg("dim", &format!(" v{}", crate::VERSION)),
            hint(self.key_hint("app.interrupt"), " interrupt · "),
            hint(
                format!(
                    "{}/{}",
                    self.key_hint("app.clear"),
                    self.key_hint("app.exit")
                ),
                " clear/exit · "
            ),
            hint("!".into(), " bash · "),
            hint(self.key_hint("app.tools.expand"), " expand tools · "),
            hint(self.key_hint("app.thinking.cycle"), " thinking"),
        );
        let quiet = crate::sync::lock(self.session.settings()).quiet_startup();
        if !quiet {
            self.tui
                .commit(Box::new(pi_tui::components::Text::new(header)));
        }
    }

    /// A new conversation on screen (pi's `chatContainer.clear()`): what was drawn is
    /// dropped, the screen and scrollback cleared, the header drawn again.
    fn clear_chat(&mut self) {
        self.transcript.settle();
        drop(self.transcript.take_commits());
        self.transcript.cache.reset();
        let bytes = self.tui.clear_history();
        let _ = self.term.write(&bytes);
        self.commit_header();
        self.force = true;
    }

    /// The session's messages (the last [`RESUME_MESSAGES`]) into the transcript and the
    /// editor history; its stored usage totals read in the background unless `now`; pi's
    /// compaction count and the no-model warning.
    fn show_history(&mut self, prompt_now: bool) {
        self.sync_notice_setting();
        let messages = self.session.messages();
        let skip = messages.len().saturating_sub(RESUME_MESSAGES);
        if skip > 0 {
            self.transcript.notice(
                format!("··· {skip} earlier messages of this session not shown ···"),
                "dim",
            );
        }
        // pi's "Compaction: … tokens billed" notices after the summaries that paid for them,
        // from the entries' stored usage (only read when the notices are on).
        let mut usages = if self.transcript.cache_notices {
            crate::storage::context::summary_usages(&crate::sync::lock(self.session.store()))
                .unwrap_or_default()
        } else {
            Vec::new()
        }
        .into_iter();
        for (i, m) in messages.iter().enumerate() {
            if let AgentMessage::User(u) = m {
                self.editor.add_to_history(&content_text(&u.content));
            }
            let label = match m.role() {
                "compactionSummary" => Some("Compaction"),
                "branchSummary" => Some("Branch summary"),
                _ => None,
            };
            let usage = label.and_then(|_| usages.next()).flatten();
            if i >= skip {
                self.transcript.replay_message(m);
                if let Some(text) = label
                    .zip(usage.as_ref())
                    .and_then(|(l, u)| notices::summary_cost(l, u))
                {
                    self.transcript.notice(text, "warning");
                }
            }
        }
        self.transcript.settle();
        self.last_usage = messages.iter().rev().find_map(|m| match m {
            AgentMessage::Assistant(a) => Some(a.usage),
            _ => None,
        });
        // The totals of the stored entries come from the session index, but the first resume
        // of a long session reads them from the file: off the UI thread, so its first frame
        // does not wait for them (the footer fills in after).
        // With a first prompt on the command line they are read now: a message that ends
        // while they are read must not count twice.
        let (session, tx, waker) = (self.session.clone(), self.tx.clone(), self.waker.clone());
        let read = move || {
            if let Ok(st) = session.session_stats() {
                let _ = tx.send(UiMsg::StoredTotals(UsageTotals {
                    input: st.tokens.input,
                    output: st.tokens.output,
                    cache_read: st.tokens.cache_read,
                    cache_write: st.tokens.cache_write,
                    cost: st.cost,
                }));
                waker.wake();
            }
        };
        if prompt_now {
            read();
        } else {
            self.handle.spawn_blocking(read);
        }
        let compactions = messages
            .iter()
            .filter(|m| m.role() == "compactionSummary")
            .count();
        if compactions > 0 {
            let times = if compactions == 1 { "time" } else { "times" };
            self.transcript
                .notice(format!("Session compacted {compactions} {times}"), "muted");
        }
        if self.session.model().is_none() {
            // pi's start-up warning when no model could be chosen.
            let text =
                crate::config::model_resolver::format_no_models_available(&crate::app::docs_dir());
            self.transcript
                .notice(format!("Warning: {text}"), "warning");
        }
    }

    /// pi reads `showCacheMissNotices` whenever it may show one (`/settings` changes it).
    fn sync_notice_setting(&mut self) {
        self.transcript.cache_notices = crate::sync::lock(self.session.settings())
            .get("showCacheMissNotices")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
    }

    fn refresh_footer(&mut self) {
        let s = &self.session;
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let model = s.model();
        let mut d = footer::FooterData {
            cwd: footer::format_cwd(&self.options.cwd, home.as_deref()),
            branch: self.branch.clone(),
            session_name: s.session_name(),
            auto_compact: s.auto_compaction_enabled(),
            model: model.as_ref().map(|m| m.id.clone()),
            provider: model.as_ref().map(|m| m.provider.clone()),
            reasoning: model.as_ref().is_some_and(|m| m.reasoning),
            thinking: s.thinking_level().as_str().to_owned(),
            ..footer::FooterData::default()
        };
        let (t, base) = (&self.totals, &self.stored_totals);
        d.input = base.input + t.input;
        d.output = base.output + t.output;
        d.cache_read = base.cache_read + t.cache_read;
        d.cache_write = base.cache_write + t.cache_write;
        d.cost = base.cost + t.cost;
        match s.context_usage() {
            Some(u) => {
                d.context_window = u.context_window;
                d.context_percent = u.percent;
            }
            None => {
                d.context_window = model.as_ref().map_or(0, |m| m.context_window);
                d.context_percent = Some(0.0);
            }
        }
        if let Some(AgentMessage::Assistant(a)) =
            s.messages().iter().rev().find(|m| m.role() == "assistant")
        {
            let prompt = a.usage.input + a.usage.cache_read + a.usage.cache_write;
            if prompt > 0.0 {
                d.cache_hit_rate = Some(a.usage.cache_read / prompt * 100.0);
            }
        }
        let models = (self.running.available_models)();
        let mut providers: Vec<&str> = models.iter().map(|m| m.provider.as_str()).collect();
        providers.sort_unstable();
        providers.dedup();
        d.provider_count = providers.len();
        let level = s.thinking_level();
        let border = if d.reasoning {
            self.theme.thinking_border(level.as_str())
        } else {
            self.theme.thinking_border("off")
        };
        if !self.editor.text().starts_with('!') {
            self.editor.set_border(border);
        }
        d.statuses = self.ext_statuses.values().cloned().collect();
        self.footer = d;
        self.dirty = true;
    }

    /// pi's working indicator, in the editor's top rule.
    fn show_working(&mut self) {
        let label = self.working_message.as_deref().unwrap_or("Working");
        let (frames, interval) = match &self.working_indicator {
            Some(i) => (i.frames.clone(), i.interval_ms.map(Duration::from_millis)),
            None => (None, None),
        };
        self.status.set_indicator(frames, interval);
        self.status.start(label, Instant::now());
        self.status_in_rule = true;
        self.retry_until = None;
    }

    /// A status of its own above the editor (retry, compaction), as pi shows them.
    fn show_status(&mut self, label: String) {
        // An extension's spinner is for the working indicator only.
        self.status.set_indicator(None, None);
        self.status.start(label, Instant::now());
        self.status_in_rule = false;
        self.retry_until = None;
    }

    /// pi's retry indicator text.
    fn retry_label(&self, attempt: u32, max: u32, seconds: u128) -> String {
        format!(
            "Retrying ({attempt}/{max}) in {seconds}s... ({} to cancel)",
            self.key_hint("app.interrupt")
        )
    }

    fn busy(&self) -> bool {
        self.prompts > 0 || self.session.is_streaming() || self.session.is_compacting()
    }

    fn spawn_prompt(
        &mut self,
        text: String,
        images: Vec<pi_ai::ImageContent>,
        behavior: Option<StreamingBehavior>,
    ) {
        let session = self.session.clone();
        let (tx, waker) = (self.tx.clone(), self.waker.clone());
        self.prompts += 1;
        self.handle.spawn(async move {
            let options = PromptOptions {
                images,
                streaming_behavior: behavior,
                ..PromptOptions::default()
            };
            let r = session.prompt(text, options).await;
            let _ = tx.send(UiMsg::PromptDone(r.err().map(|e| e.to_string())));
            waker.wake();
        });
    }

    fn submit(&mut self, text: String) {
        let text = text.trim().to_owned();
        if text.is_empty() {
            return;
        }
        self.editor.add_to_history(&text);
        if let Some(cmd) = text.strip_prefix('!') {
            let (exclude, cmd) = match cmd.strip_prefix('!') {
                Some(rest) => (true, rest.trim()),
                None => (false, cmd.trim()),
            };
            if !cmd.is_empty() {
                self.run_bash(cmd.to_owned(), exclude);
            }
            return;
        }
        if let Some(cmd) = slash::parse(&text) {
            self.run_slash(cmd);
            return;
        }
        if self.busy() {
            self.spawn_prompt(text, Vec::new(), Some(StreamingBehavior::Steer));
        } else {
            self.spawn_prompt(text, Vec::new(), None);
        }
    }

    fn run_slash(&mut self, cmd: slash::Slash) {
        match cmd {
            slash::Slash::Quit => self.quit = true,
            slash::Slash::Copy => self.copy_last_reply(),
            slash::Slash::Name(name) if name.is_empty() => match self.session.session_name() {
                Some(n) => self.transcript.notice(format!("Session name: {n}"), "dim"),
                None => self
                    .transcript
                    .notice("Warning: Usage: /name <name>", "warning"),
            },
            slash::Slash::Name(name) => match self.session.set_session_name(&name) {
                Ok(()) => {
                    let stored = self.session.session_name();
                    if stored.as_deref() != Some(name.as_str()) {
                        self.transcript.notice(
                            format!(
                                "Warning: Session name was normalized from {} to {}",
                                serde_json::Value::from(name.clone()),
                                serde_json::Value::from(stored.clone().unwrap_or_default())
                            ),
                            "warning",
                        );
                    }
                    let shown = stored.unwrap_or(name);
                    self.transcript
                        .notice(format!("Session name set: {shown}"), "dim");
                }
                Err(e) => self.transcript.notice(format!("Error: {e}"), "error"),
            },
            slash::Slash::Session => self.show_session_info(),
            slash::Slash::Model(search) => self.model_command(search),
            slash::Slash::Thinking(level) => self.thinking_command(level),
            slash::Slash::Export(path) => self.export_command(path),
            slash::Slash::Import(path) => self.import_command(path),
            slash::Slash::Hotkeys => self.hotkeys_command(),
            slash::Slash::Fork => self.fork_command(),
            slash::Slash::Clone => self.clone_command(),
            slash::Slash::New => self.new_command(),
            slash::Slash::Resume => self.resume_command(),
            slash::Slash::Tree => self.tree_command(),
            slash::Slash::Settings => self.settings_command(),
            slash::Slash::Trust => self.trust_command(),
            slash::Slash::Debug => self.debug_command(),
            slash::Slash::ScopedModels => self.scoped_models_command(),
            slash::Slash::Share => self.share_command(),
            slash::Slash::Reload => self.reload_command(),
            slash::Slash::Login(provider) => self.login_command(provider),
            slash::Slash::Logout => self.logout_command(),
            slash::Slash::Changelog => {
                let md = changelog::markdown(changelog::CHANGELOG);
                self.transcript.document("What's New", &md);
            }
            slash::Slash::Compact(instructions) => {
                let session = self.session.clone();
                let (tx, waker) = (self.tx.clone(), self.waker.clone());
                self.handle.spawn(async move {
                    if let Err(e) = session.compact(instructions).await {
                        let _ = tx.send(UiMsg::Failed(e.to_string()));
                        waker.wake();
                    }
                });
            }
        }
    }

    /// `/session`: pi's session info block (name, file, id, message and token counts, cost).
    fn show_session_info(&mut self) {
        let stats = match self.session.session_stats() {
            Ok(s) => s,
            Err(e) => {
                self.transcript.notice(format!("Error: {e}"), "error");
                return;
            }
        };
        let n = slash::locale_count;
        let mut info = String::from("Session Info\n\n");
        if let Some(name) = self.session.session_name() {
            info.push_str(&format!("Name: {name}\n"));
        }
        let file = stats
            .session_file
            .clone()
            .unwrap_or_else(|| "In-memory".into());
        info.push_str(&format!("File: {file}\nID: {}\n\n", stats.session_id));
        info.push_str(&format!(
            "Messages\nTotal: {}\nUser: {}\nAssistant: {}\nTools: {} calls, {} results\n\n",
            stats.total_messages,
            stats.user_messages,
            stats.assistant_messages,
            stats.tool_calls,
            stats.tool_results
        ));
        let t = &stats.tokens;
        let prompt = t.input + t.cache_read + t.cache_write;
        info.push_str(&format!("Tokens\nInput: {}\n", n(prompt)));
        if prompt > 0.0 && (t.cache_read > 0.0 || t.cache_write > 0.0) {
            let rate = crate::tools::image::to_fixed(t.cache_read / prompt * 100.0, 1);
            info.push_str(&format!("  Cached: {} ({rate}%)\n", n(t.cache_read)));
            let written = if t.cache_write > 0.0 {
                format!(" ({} written to cache)", n(t.cache_write))
            } else {
                String::new()
            };
            info.push_str(&format!(
                "  Uncached: {}{written}\n",
                n(t.input + t.cache_write)
            ));
        }
        info.push_str(&format!("Output: {}\nTotal: {}", n(t.output), n(t.total)));
        if stats.cost > 0.0 {
            let cost = crate::tools::image::to_fixed(stats.cost, 3);
            info.push_str(&format!("\n\nCost\nTotal: ${cost}"));
        }
        self.transcript.notice(info, "text");
    }

    fn follow_up(&mut self) {
        let text = self.editor.text().trim().to_owned();
        if text.is_empty() {
            return;
        }
        self.editor.set_text("");
        if self.busy() {
            self.editor.add_to_history(&text);
            self.spawn_prompt(text, Vec::new(), Some(StreamingBehavior::FollowUp));
        } else {
            self.submit(text);
        }
    }

    fn run_bash(&mut self, command: String, exclude: bool) {
        if self.bash.is_some() {
            self.transcript.notice(
                "A bash command is already running. Press Esc to cancel it first.",
                "warning",
            );
            return;
        }
        let view = user_bash::UserBashView::new(
            &command,
            exclude,
            self.theme.clone(),
            self.display.clone(),
        );
        self.bash = Some(view);
        let session = self.session.clone();
        let hooks = self.running.host.extensions();
        let (tx, waker) = (self.tx.clone(), self.waker.clone());
        self.handle.spawn(async move {
            let options = ExecuteBashOptions {
                exclude_from_context: exclude.then_some(true),
                id: None,
            };
            // pi's `handleBashCommand`: `user_bash` handlers first; a `{result}` is recorded
            // as if the session had run the command.
            let r = match hooks {
                Some(hooks) => hooks.user_bash(&session, &command, options, |_| {}).await,
                None => session.execute_bash(&command, options, |_| {}).await,
            };
            let _ = tx.send(UiMsg::BashDone(r));
            waker.wake();
        });
    }

    fn abort(&mut self) {
        if self.bash.is_some() {
            self.session.abort_bash();
            return;
        }
        if self.busy() {
            if let Ok((steering, follow_up)) = self.session.clear_queue() {
                self.restore_queued(steering, follow_up);
            }
            let session = self.session.clone();
            self.handle.spawn(async move { session.abort().await });
            return;
        }
        if self.editor.text().starts_with('!') {
            self.editor.set_text("");
            return;
        }
        if !self.editor.text().trim().is_empty() {
            return;
        }
        // Esc twice within 500 ms on an empty editor: pi's `doubleEscapeAction`.
        let action = crate::sync::lock(self.session.settings())
            .get("doubleEscapeAction")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("tree")
            .to_owned();
        if action == "none" {
            return;
        }
        let now = Instant::now();
        match self.last_escape.take() {
            Some(t) if now.duration_since(t) < Duration::from_millis(500) => {
                if action == "fork" {
                    self.fork_command();
                } else {
                    self.tree_command();
                }
            }
            _ => self.last_escape = Some(now),
        }
    }

    fn restore_queued(&mut self, steering: Vec<String>, follow_up: Vec<String>) {
        let mut all: Vec<String> = steering.into_iter().chain(follow_up).collect();
        if all.is_empty() {
            return;
        }
        let current = self.editor.text();
        if !current.trim().is_empty() {
            all.push(current);
        }
        self.editor.set_text(&all.join("\n\n"));
    }

    fn on_key(&mut self, k: &KeyEvent) {
        let kb = self.keys.clone();
        let is = |action: &str| kb.matches(k, action);
        if self.picker.is_some() {
            self.picker_key(k);
            self.force = true;
            return;
        }
        if self.settings_view.is_some() {
            self.settings_key(k);
            self.force = true;
            return;
        }
        if self.scoped_view.is_some() {
            self.scoped_models_key(k);
            self.force = true;
            return;
        }
        // pi's editor gives extension shortcuts the first look at a key.
        if let Some(b) = self.ext_shortcuts.iter().find(|b| b.key.matches(k)) {
            let shortcut = b.shortcut.clone();
            self.run_shortcut(shortcut);
            return;
        }
        if self.editor.is_showing_autocomplete() {
            // Enter on a `/` item completes and submits in one go: the submit is handled now.
            self.editor.handle_input(&InputEvent::Key(*k));
            self.after_editor();
            return;
        }
        if is("app.interrupt") && (self.cancel_share() || self.cancel_login()) {
        } else if is("app.interrupt") {
            self.abort();
        } else if is("app.clear") {
            let now = Instant::now();
            let again = self
                .last_clear
                .is_some_and(|t| now.duration_since(t) < Duration::from_millis(500));
            if again {
                self.quit = true;
            } else {
                self.editor.set_text("");
                self.last_clear = Some(now);
            }
        } else if is("app.exit") && self.editor.is_empty() {
            self.quit = true;
        } else if is("app.suspend") {
            let _ = self.term.suspend();
            let bytes = self.tui.replay();
            let _ = self.term.write(&bytes);
        } else if is("app.thinking.cycle") {
            match self.session.cycle_thinking_level() {
                Ok(Some(level)) => {
                    self.transcript
                        .notice(format!("Thinking level: {}", level.as_str()), "dim");
                    self.refresh_footer();
                }
                Ok(None) => self
                    .transcript
                    .notice("Current model does not support thinking", "muted"),
                Err(e) => self.transcript.notice(format!("Error: {e}"), "error"),
            }
        } else if is("app.model.cycleForward") || is("app.model.cycleBackward") {
            let forward = is("app.model.cycleForward");
            let session = self.session.clone();
            let models = (self.running.available_models)();
            let (tx, waker) = (self.tx.clone(), self.waker.clone());
            self.handle.spawn(async move {
                let scoped = !session.scoped_models().is_empty();
                let r = session.cycle_model(forward, &models, false).await;
                let _ = tx.send(UiMsg::Cycled(r.map(|c| cycled_text(c.as_ref(), scoped))));
                waker.wake();
            });
        } else if is("app.clipboard.pasteImage") {
            self.paste_clipboard();
        } else if is("app.model.select") {
            // pi's Ctrl+L: the selector `/model` opens without an argument.
            self.model_command(None);
        } else if is("app.thinking.toggle") {
            let hidden = !self.display.hide_thinking.load(Ordering::Relaxed);
            self.display.hide_thinking.store(hidden, Ordering::Relaxed);
            let state = if hidden { "hidden" } else { "visible" };
            self.transcript
                .notice(format!("Thinking blocks: {state}"), "dim");
            let bytes = self.tui.replay();
            let _ = self.term.write(&bytes);
        } else if is("app.tools.expand") {
            let expanded = !self.display.expand_tools.load(Ordering::Relaxed);
            self.display.expand_tools.store(expanded, Ordering::Relaxed);
            let state = if expanded { "expanded" } else { "collapsed" };
            self.transcript
                .notice(format!("Tool output: {state}"), "dim");
            let bytes = self.tui.replay();
            let _ = self.term.write(&bytes);
        } else if is("app.editor.external") {
            self.external_editor();
        } else if is("app.message.copy") {
            self.copy_last_reply();
        } else if is("app.message.followUp") {
            self.follow_up();
        } else if is("app.message.dequeue") {
            if let Ok((steering, follow_up)) = self.session.clear_queue() {
                let n = steering.len() + follow_up.len();
                if n == 0 {
                    self.transcript
                        .notice("No queued messages to restore", "dim");
                } else {
                    let s = if n == 1 { "" } else { "s" };
                    self.transcript
                        .notice(format!("Restored {n} queued message{s} to editor"), "dim");
                }
                self.restore_queued(steering, follow_up);
            }
        } else {
            self.editor.handle_input(&InputEvent::Key(*k));
        }
        self.after_editor();
    }

    /// Ctrl+G: the editor's text in the user's editor (settings `externalEditor`, else
    /// `$VISUAL`, `$EDITOR`, `nano`, as pi picks it), run through `sh -c` with the file as
    /// its argument; a zero exit puts the file's text back into the editor.
    fn external_editor(&mut self) {
        let command = {
            let s = crate::sync::lock(self.session.settings());
            s.get("externalEditor")
                .and_then(serde_json::Value::as_str)
                .filter(|c| !c.trim().is_empty())
                .map(str::to_owned)
        }
        .or_else(|| std::env::var("VISUAL").ok().filter(|v| !v.is_empty()))
        .or_else(|| std::env::var("EDITOR").ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "nano".to_owned());
        let path = std::env::temp_dir().join(format!(
            "pi-editor-{}-{}.md",
            std::process::id(),
            pi_ai::now_ms()
        ));
        if let Err(e) = std::fs::write(&path, self.editor.expanded_text()) {
            self.transcript
                .notice(format!("Error: {}: {e}", path.display()), "error");
            return;
        }
        let outcome = self.term.run_outside(|| {
            std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("{command} \"$1\""))
                .arg("sh")
                .arg(&path)
                .status()
        });
        match outcome {
            Ok(Ok(status)) if status.success() => match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let text = text.strip_suffix('\n').unwrap_or(&text);
                    self.editor.set_text(text);
                }
                Err(e) => self
                    .transcript
                    .notice(format!("Error: {}: {e}", path.display()), "error"),
            },
            Ok(Ok(_)) => {}
            Ok(Err(e)) => self
                .transcript
                .notice(format!("Error: {command}: {e}"), "error"),
            Err(e) => self.transcript.notice(format!("Error: {e}"), "error"),
        }
        let _ = std::fs::remove_file(&path);
        if self.tui.mode() == Mode::Fullscreen {
            let _ = self.term.write(pi_tui::fullscreen::ENTER);
        }
        let bytes = self.tui.replay();
        let _ = self.term.write(&bytes);
        self.force = true;
    }

    /// Ctrl+X: the last assistant text to the clipboard through OSC 52 (the terminal's
    /// clipboard, which also works over SSH), with pi's notices.
    fn copy_last_reply(&mut self) {
        use base64::Engine as _;
        let Some(text) = self.session.last_assistant_text().filter(|t| !t.is_empty()) else {
            self.transcript
                .notice("Error: No agent messages to copy yet.", "error");
            return;
        };
        let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        if self.term.write(&format!("\x1b]52;c;{b64}\x07")).is_ok() {
            self.transcript
                .notice("Copied last agent message to clipboard", "muted");
        }
    }

    fn after_editor(&mut self) {
        for e in self.editor.take_events() {
            match e {
                EditorEvent::Submit(text) => self.submit(text),
            }
        }
        let bash_mode = self.editor.text().starts_with('!');
        if bash_mode {
            self.editor.set_border(self.theme.fg_paint("bashMode"));
        } else {
            let border = if self.footer.reasoning {
                self.theme.thinking_border(&self.footer.thinking)
            } else {
                self.theme.thinking_border("off")
            };
            self.editor.set_border(border);
        }
    }

    fn on_input(&mut self, event: InputEvent) {
        self.force = true;
        match &event {
            InputEvent::Key(k) => self.on_key(k),
            InputEvent::Paste(text) if self.picker.is_some() => {
                if let Some((_, p)) = self.picker.as_mut() {
                    p.paste(text);
                }
            }
            InputEvent::Paste(text) if self.scoped_view.is_some() => {
                if let Some(v) = self.scoped_view.as_mut() {
                    v.paste(text);
                }
            }
            InputEvent::Paste(_) => {
                self.editor.handle_input(&event);
                self.after_editor();
            }
            InputEvent::Resize { cols, rows } => self.on_resize(*cols, *rows),
            InputEvent::FocusGained | InputEvent::FocusLost => {}
        }
    }

    fn on_resize(&mut self, cols: u16, rows: u16) {
        self.editor.set_terminal_rows(rows);
        let bytes = self.tui.resize(cols, rows, Instant::now());
        let _ = self.term.write(&bytes);
        self.dirty = true;
    }

    fn on_session(&mut self, event: AgentSessionEvent) {
        self.dirty = true;
        match event {
            AgentSessionEvent::Agent(e) => self.on_agent(&e),
            AgentSessionEvent::AgentEnd { .. } => {}
            AgentSessionEvent::AgentSettled => {
                self.status.stop();
                let _ = self.term.set_progress(false);
                self.refresh_footer();
            }
            AgentSessionEvent::QueueUpdate {
                steering,
                follow_up,
            } => {
                self.steering = steering;
                self.follow_up = follow_up;
            }
            AgentSessionEvent::CompactionStart { reason } => {
                let hint = format!("({} to cancel)", self.key_hint("app.interrupt"));
                let label = match reason {
                    crate::session::CompactionReason::Manual => {
                        format!("Compacting context... {hint}")
                    }
                    crate::session::CompactionReason::Overflow => {
                        format!("Context overflow detected, Auto-compacting... {hint}")
                    }
                    crate::session::CompactionReason::Threshold => {
                        format!("Auto-compacting... {hint}")
                    }
                };
                self.show_status(label);
            }
            AgentSessionEvent::CompactionEnd {
                result,
                aborted,
                error_message,
                ..
            } => {
                if let Some(r) = result {
                    self.transcript.cache.reset();
                    if let Some(u) = &r.usage {
                        self.totals.add_json(u);
                    }
                    self.transcript.notice(
                        format!(
                            "Compacted from {} tokens",
                            footer::format_tokens(r.tokens_before as f64)
                        ),
                        "muted",
                    );
                    self.sync_notice_setting();
                    let cost = r
                        .usage
                        .as_ref()
                        .and_then(|u| notices::summary_cost("Compaction", u));
                    if let Some(text) = cost.filter(|_| self.transcript.cache_notices) {
                        self.transcript.notice(text, "warning");
                    }
                } else if aborted {
                    self.transcript.notice("Compaction cancelled", "warning");
                } else if let Some(e) = error_message {
                    self.transcript
                        .notice(format!("Compaction failed: {e}"), "error");
                }
                if self.busy() {
                    self.show_working();
                } else {
                    self.status.stop();
                }
                self.refresh_footer();
            }
            AgentSessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                ..
            } => {
                let now = Instant::now();
                let until = now + Duration::from_millis(delay_ms);
                let label =
                    self.retry_label(attempt, max_attempts, u128::from(delay_ms).div_ceil(1000));
                self.show_status(label);
                self.retry_until = Some((attempt, max_attempts, until));
            }
            AgentSessionEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } => {
                if !success {
                    let e = final_error.unwrap_or_else(|| "Unknown error".into());
                    self.transcript.notice(
                        format!("Retry failed after {attempt} attempts: {e}"),
                        "error",
                    );
                }
            }
            AgentSessionEvent::ThinkingLevelChanged { .. } => self.refresh_footer(),
            AgentSessionEvent::SessionInfoChanged { name } => {
                let title = name.map_or_else(|| "pi".to_owned(), |n| format!("pi - {n}"));
                let _ = self.term.set_title(&title);
                self.refresh_footer();
            }
            AgentSessionEvent::BashExecutionUpdate { delta, .. } => {
                if let Some(b) = self.bash.as_mut() {
                    b.push(&delta);
                }
            }
            AgentSessionEvent::EntryAppended { .. }
            | AgentSessionEvent::SummarizationRetryScheduled { .. }
            | AgentSessionEvent::SummarizationRetryAttemptStart { .. }
            | AgentSessionEvent::SummarizationRetryFinished => {}
        }
    }

    fn on_agent(&mut self, e: &AgentEvent) {
        let now = Instant::now();
        match e {
            AgentEvent::AgentStart => {
                self.show_working();
                // pi: only with `terminal.showTerminalProgress`.
                let progress = crate::sync::lock(self.session.settings())
                    .get_nested("terminal", "showTerminalProgress")
                    .and_then(serde_json::Value::as_bool)
                    .unwrap_or(false);
                if progress {
                    let _ = self.term.set_progress(true);
                }
            }
            AgentEvent::MessageStart { message } => match message {
                AgentMessage::User(u) => {
                    self.transcript.user(&content_text(&u.content));
                    self.transcript.user_images(&u.content);
                }
                AgentMessage::Assistant(_) => {
                    if self.retry_until.is_some() {
                        // The retried request is under way: pi shows Working again.
                        self.show_working();
                    }
                    self.transcript.assistant_start();
                }
                AgentMessage::ToolResult(_) => {}
                AgentMessage::Custom(m) => {
                    // A `!` command's record is drawn by its own box.
                    if m.get("role").and_then(serde_json::Value::as_str) != Some("bashExecution") {
                        self.transcript.custom_message(m);
                    }
                }
            },
            AgentEvent::MessageUpdate {
                assistant_message_event: ev,
                ..
            } => match ev {
                AssistantMessageEvent::TextDelta {
                    content_index,
                    delta,
                    ..
                } => self.transcript.text_delta(*content_index, delta),
                AssistantMessageEvent::ThinkingDelta {
                    content_index,
                    delta,
                    ..
                } => self.transcript.thinking_delta(*content_index, delta),
                AssistantMessageEvent::ToolcallStart {
                    content_index,
                    partial,
                }
                | AssistantMessageEvent::ToolcallEnd {
                    content_index,
                    partial,
                    ..
                } => {
                    let call = partial
                        .read()
                        .content
                        .get(*content_index)
                        .and_then(|c| match c {
                            AssistantContent::ToolCall(t) => Some(t.clone()),
                            _ => None,
                        });
                    if let Some(call) = call {
                        self.transcript
                            .tool_call_seen(&call.id, &call.name, &call.arguments);
                    }
                }
                _ => {}
            },
            AgentEvent::MessageEnd { message } => {
                if let AgentMessage::ToolResult(r) = message
                    && let Some(u) = &r.usage
                {
                    self.totals.add(u);
                }
                if let AgentMessage::Assistant(a) = message {
                    self.sync_notice_setting();
                    self.totals.add(&a.usage);
                    self.last_usage = Some(a.usage);
                    self.transcript.retry_attempt = self.session.retry_attempt();
                    self.transcript.assistant_end(a);
                    self.refresh_footer();
                }
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => self
                .transcript
                .tool_start(tool_call_id, tool_name, args, now),
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                partial_result,
                ..
            } => self
                .transcript
                .tool_update(tool_call_id, tool_name, partial_result),
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
            } => self
                .transcript
                .tool_end(tool_call_id, tool_name, result, *is_error),
            AgentEvent::AgentEnd { .. } | AgentEvent::TurnStart | AgentEvent::TurnEnd { .. } => {}
        }
    }

    fn on_msg(&mut self, msg: UiMsg) {
        self.dirty = true;
        match msg {
            UiMsg::Session(e) => self.on_session(*e),
            UiMsg::PromptDone(err) => {
                self.prompts = self.prompts.saturating_sub(1);
                if let Some(e) = err {
                    self.transcript.notice(format!("Error: {e}"), "error");
                }
                if !self.busy() {
                    self.status.stop();
                    let _ = self.term.set_progress(false);
                }
            }
            UiMsg::BashDone(r) => {
                if let Some(mut v) = self.bash.take() {
                    match r {
                        Ok(res) => {
                            let status = if res.cancelled {
                                user_bash::BashStatus::Cancelled
                            } else {
                                match res.exit_code {
                                    Some(0) | None => user_bash::BashStatus::Complete,
                                    Some(c) => user_bash::BashStatus::Failed(c),
                                }
                            };
                            v.finish(
                                &res.output,
                                status,
                                res.truncated,
                                res.full_output_path.clone(),
                            );
                        }
                        Err(e) => {
                            v.finish("", user_bash::BashStatus::Failed(-1), false, None);
                            self.transcript.push_block(Box::new(v));
                            self.transcript.notice(format!("Error: {e}"), "error");
                            return;
                        }
                    }
                    self.transcript.push_block(Box::new(v));
                }
            }
            UiMsg::Failed(e) => self.transcript.notice(format!("Error: {e}"), "error"),
            UiMsg::Warning(text) => self
                .transcript
                .notice(format!("Warning: {text}"), "warning"),
            UiMsg::Status(text) => {
                if !text.is_empty() {
                    self.status_notice(text);
                }
                self.refresh_footer();
            }
            UiMsg::Replaced(r) => self.adopt_session(r),
            UiMsg::Shared(outcome) => self.shared(outcome),
            UiMsg::LoggedIn(id, outcome) => self.logged_in(id, outcome),
            UiMsg::Login(id, message) => self.login_message(id, message),
            UiMsg::Navigated(r) => self.navigated(*r),
            UiMsg::Extension(r) => self.extension_request(*r),
            UiMsg::StoredTotals(t) => {
                self.stored_totals = t;
                self.refresh_footer();
            }
            UiMsg::Cycled(r) => match r {
                Ok(text) => {
                    self.refresh_footer();
                    self.status_notice(text);
                }
                Err(e) => self.transcript.notice(format!("Error: {e}"), "error"),
            },
        }
    }

    fn draw(&mut self) {
        self.drop_abandoned_dialog();
        for b in self.transcript.take_commits() {
            self.tui.commit(b);
        }
        let now = Instant::now();
        if let Some((attempt, max, until)) = self.retry_until
            && self.status.is_active()
        {
            // pi's countdown: whole seconds left, rounded up.
            let left = until
                .saturating_duration_since(now)
                .as_millis()
                .div_ceil(1000);
            let label = self.retry_label(attempt, max, left);
            self.status.start(label, now);
        }
        if self.status.tick(now) || self.bash.is_some() {
            self.dirty = true;
        }
        let in_rule = if self.status_in_rule {
            self.status.border_status()
        } else {
            None
        };
        self.editor.set_border_status(in_rule);
        if !(self.dirty || self.force) {
            return;
        }
        let mut live = LiveView {
            transcript: &mut self.transcript,
            bash: &mut self.bash,
            steering: &self.steering,
            follow_up: &self.follow_up,
            status: &mut self.status,
            status_in_rule: self.status_in_rule,
            theme: &self.theme,
        };
        let mut dock = DockView {
            editor: &mut self.editor,
            panel: match (
                self.picker.as_mut(),
                self.settings_view.as_mut(),
                self.scoped_view.as_mut(),
            ) {
                (Some((_, p)), _, _) => Some(p as &mut dyn Component),
                (None, Some(v), _) => Some(v as &mut dyn Component),
                (None, None, Some(v)) => Some(v as &mut dyn Component),
                (None, None, None) => None,
            },
            widgets: &self.widgets,
            footer: &self.footer,
            theme: &self.theme,
        };
        if let Some(bytes) = self.tui.frame(&mut live, &mut dock, now, self.force) {
            if self.term.write(&bytes).is_err() {
                // The terminal went away (EIO): pi exits 129.
                self.quit = true;
                self.lost_terminal = true;
            }
            self.dirty = false;
            self.force = false;
        }
    }

    fn run_loop(&mut self) -> i32 {
        let mut decoded = Vec::new();
        // When the decoder began holding an incomplete sequence (a lone Esc waits to see
        // whether a sequence follows); other events must not keep postponing its timeout.
        let mut pending_since: Option<Instant> = None;
        while !self.quit {
            while let Ok(msg) = self.rx.try_recv() {
                self.on_msg(msg);
            }
            let now = Instant::now();
            if let (Some(since), Some(timeout)) = (pending_since, self.decoder.pending_timeout())
                && now.duration_since(since) >= timeout
            {
                self.decoder.flush_pending(&mut decoded);
                self.dispatch(&mut decoded);
                pending_since = None;
            }
            self.poll_theme(now);
            self.draw();
            if self.quit {
                break;
            }
            let now = Instant::now();
            let mut wait = Duration::from_millis(100);
            if self.status.is_active() || self.bash.is_some() {
                wait = wait.min(Duration::from_millis(80));
            }
            if let Some(d) = self.tui.next_deadline()
                && (self.dirty || self.force)
            {
                wait = wait.min(
                    d.saturating_duration_since(now)
                        .max(Duration::from_millis(1)),
                );
            }
            if let (Some(since), Some(timeout)) = (pending_since, self.decoder.pending_timeout()) {
                wait = wait.min((since + timeout).saturating_duration_since(now));
            }
            match self.term.recv(wait) {
                Some(TermEvent::Input(bytes)) => {
                    self.decoder.feed(&bytes, &mut decoded);
                    self.dispatch(&mut decoded);
                    pending_since = match self.decoder.pending_timeout() {
                        Some(_) => pending_since.or(Some(Instant::now())),
                        None => None,
                    };
                }
                Some(TermEvent::Resize(c, r)) => self.on_resize(c, r),
                Some(TermEvent::Resumed) => {
                    let bytes = self.tui.replay();
                    let _ = self.term.write(&bytes);
                    self.force = true;
                }
                Some(TermEvent::Terminate(_)) => self.terminate(),
                Some(TermEvent::Wake) | None => {}
            }
        }
        if self.lost_terminal { 129 } else { 0 }
    }

    /// SIGTERM / SIGHUP: pi's graceful shutdown. A session append in progress finishes and
    /// later ones are kept out, the tools' process groups are killed, the terminal restored;
    /// exit 0 without the resume hint.
    fn terminate(&mut self) -> ! {
        let store = self.session.store().clone();
        let guard = crate::modes::signals::settle_store(&store);
        crate::modes::signals::kill_children();
        let bytes = self.tui.finish();
        let _ = self.term.write(&bytes);
        self.term.restore();
        std::process::exit({
            let _keep = &guard;
            0
        })
    }

    fn dispatch(&mut self, decoded: &mut Vec<Decoded>) {
        for d in decoded.drain(..) {
            match d {
                Decoded::Input(e) => {
                    self.on_input(e);
                    if self.quit {
                        break;
                    }
                }
                // The reply to the start's cell-size query (pi-tui reads it the same way).
                Decoded::Unrecognized(text)
                | Decoded::Reply(pi_tui::keys::TerminalReply::Other(text)) => {
                    if let Some(cell) = pi_tui::terminal_image::parse_cell_size_reply(&text) {
                        pi_tui::terminal_image::set_cell_dimensions(cell);
                    }
                }
                Decoded::Reply(_) => {}
            }
        }
    }

    /// Leaves the terminal as pi does: the run aborted, the last frame kept, the cursor
    /// below it, then the resume hint.
    fn finish(&mut self) {
        let session = self.session.clone();
        let _ = self.handle.block_on(async {
            tokio::time::timeout(
                Duration::from_secs(3),
                session.shutdown(ShutdownReason::Quit, None),
            )
            .await
        });
        while let Ok(msg) = self.rx.try_recv() {
            if let UiMsg::Session(e) = msg {
                self.on_session(*e);
            }
        }
        self.transcript.settle();
        self.force = true;
        self.draw();
        let bytes = self.tui.finish();
        let _ = self.term.write(&bytes);
        self.term.restore();
        if self.lost_terminal {
            return;
        }
        if self.no_session_selected {
            println!("\x1b[2mNo session selected\x1b[22m");
            return;
        }
        if let Some(cmd) = resume_command(&self.session, self.options.session_dir.as_deref()) {
            println!("\x1b[2mTo resume this session:\x1b[22m {cmd}");
        }
    }
}
