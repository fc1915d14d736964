//! `ctx`: what a handler sees besides its event.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/extensions/runner.ts` (`createContext`, the no-op UI
//! context, `wrapUIPromptContext`/`withUIPrompt`, `createCommandContext`). Actions that
//! change the session (`abort`, `shutdown`, `compact`) are queued as [`ExtensionRequest`]s for
//! the session; a command's session actions (`wait_for_idle`, `new_session`, `fork`,
//! `navigate_tree`, `switch_session`) are awaited through the bound [`CommandActions`].

use crate::session::NavigateTreeOptions;
use crate::storage::ForkPosition;
use futures::future::BoxFuture;
use pi_agent_core::AgentMessage;
use pi_ai::{Model, ModelThinkingLevel};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

use super::api::{ExtensionRequest, RequestQueue, StaleError};
use super::command_actions::{ActionOutcome, CommandActions, NewSessionOptions};
use super::errors::HandlerError;
use super::errors::Mode;
use super::events::UiPromptKind;

/// Severity of [`Ui::notify`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NotifyLevel {
    /// `info`
    #[default]
    Info,
    /// `warning`
    Warning,
    /// `error`
    Error,
}

/// Options of a dialog (pi's `{signal?, timeout?}`): when the timeout passes or the signal
/// fires, the dialog resolves to its default (`None`; `confirm` → `false`).
#[derive(Clone, Debug, Default)]
pub struct DialogOptions {
    /// Milliseconds until the dialog gives up (`None` or 0: never).
    pub timeout_ms: Option<u64>,
    /// Cancels the dialog.
    pub signal: Option<CancellationToken>,
}

/// Where `setWidget` puts a widget (pi's `{placement}`; default above the editor).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WidgetPlacement {
    /// `aboveEditor`
    #[default]
    AboveEditor,
    /// `belowEditor`
    BelowEditor,
}

impl WidgetPlacement {
    /// pi's name of the placement.
    pub fn as_str(self) -> &'static str {
        match self {
            WidgetPlacement::AboveEditor => "aboveEditor",
            WidgetPlacement::BelowEditor => "belowEditor",
        }
    }

    /// The placement named `name` (pi treats anything but `belowEditor` as above).
    pub fn from_name(name: &str) -> Self {
        if name == "belowEditor" {
            WidgetPlacement::BelowEditor
        } else {
            WidgetPlacement::AboveEditor
        }
    }
}

/// pi's `WorkingIndicatorOptions`: the frames of the working spinner (empty: no spinner) and
/// the time per frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkingIndicator {
    /// Animation frames (`None`: the built-in spinner; empty: hidden).
    pub frames: Option<Vec<String>>,
    /// Milliseconds per frame (`None`: the built-in interval).
    pub interval_ms: Option<u64>,
}

/// The user interface extensions talk to (`ctx.ui`). Every method has the no-UI default:
/// dialogs resolve at once (`None`; `confirm` → `false`), everything else does nothing.
pub trait Ui: Send + Sync {
    /// Shows a notification.
    fn notify(&self, _message: &str, _level: NotifyLevel) {}

    /// Asks a yes/no question.
    fn confirm<'a>(&'a self, _title: &'a str, _message: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async { false })
    }

    /// Lets the user pick one of `options`.
    fn select<'a>(
        &'a self,
        _title: &'a str,
        _options: &'a [String],
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async { None })
    }

    /// Asks for one line of text.
    fn input<'a>(
        &'a self,
        _title: &'a str,
        _placeholder: Option<&'a str>,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async { None })
    }

    /// Opens a multi-line editor.
    fn editor<'a>(
        &'a self,
        _title: &'a str,
        _prefill: Option<&'a str>,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async { None })
    }

    /// Sets (`Some`) or clears (`None`) the status text under `key`.
    fn set_status(&self, _key: &str, _text: Option<&str>) {}

    /// Sets (`Some`) or clears (`None`) the widget lines under `key`; `placement` `None` is
    /// pi's omitted option (above the editor).
    fn set_widget(
        &self,
        _key: &str,
        _lines: Option<&[String]>,
        _placement: Option<WidgetPlacement>,
    ) {
    }

    /// Replaces the working indicator's text while the agent runs (`None`: the default).
    fn set_working_message(&self, _message: Option<&str>) {}

    /// Replaces the working indicator's spinner (`None`: the default).
    fn set_working_indicator(&self, _indicator: Option<WorkingIndicator>) {}

    /// [`Ui::select`] with a timeout and a cancel signal (default: ignores them).
    fn select_with<'a>(
        &'a self,
        title: &'a str,
        options: &'a [String],
        _opts: DialogOptions,
    ) -> BoxFuture<'a, Option<String>> {
        self.select(title, options)
    }

    /// [`Ui::confirm`] with a timeout and a cancel signal (default: ignores them).
    fn confirm_with<'a>(
        &'a self,
        title: &'a str,
        message: &'a str,
        _opts: DialogOptions,
    ) -> BoxFuture<'a, bool> {
        self.confirm(title, message)
    }

    /// [`Ui::input`] with a timeout and a cancel signal (default: ignores them).
    fn input_with<'a>(
        &'a self,
        title: &'a str,
        placeholder: Option<&'a str>,
        _opts: DialogOptions,
    ) -> BoxFuture<'a, Option<String>> {
        self.input(title, placeholder)
    }

    /// Sets the terminal/window title.
    fn set_title(&self, _title: &str) {}

    /// Replaces the editor's text (also pi's `pasteToEditor`).
    fn set_editor_text(&self, _text: &str) {}
}

/// The UI of modes without one (print, json): every call is a no-op.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoUi;

impl Ui for NoUi {}

/// Called with `(start, kind, title)` for each `ui_prompt_start`/`ui_prompt_end`.
pub(crate) type PromptSink = Arc<dyn Fn(bool, UiPromptKind, Option<String>) + Send + Sync>;

/// The outermost prompt's kind and title.
type OpenPrompt = (UiPromptKind, Option<String>);

/// The depth counter that merges nested prompts into one outer span.
pub(crate) struct PromptTracker {
    state: Mutex<(usize, Option<OpenPrompt>)>,
    sink: PromptSink,
}

impl PromptTracker {
    pub(crate) fn new(sink: PromptSink) -> Self {
        PromptTracker {
            state: Mutex::new((0, None)),
            sink,
        }
    }

    fn enter(self: &Arc<Self>, kind: UiPromptKind, title: Option<&str>) -> PromptGuard {
        let title = title.filter(|t| !t.is_empty()).map(str::to_owned);
        let start = match self.state.lock() {
            Ok(mut s) => {
                s.0 += 1;
                if s.0 == 1 {
                    s.1 = Some((kind, title.clone()));
                    true
                } else {
                    false
                }
            }
            Err(_) => false,
        };
        if start {
            (self.sink)(true, kind, title.clone());
        }
        PromptGuard {
            tracker: Arc::clone(self),
            kind,
            title,
        }
    }
}

/// Ends a prompt span when dropped (also when the prompt future panics or is cancelled).
struct PromptGuard {
    tracker: Arc<PromptTracker>,
    kind: UiPromptKind,
    title: Option<String>,
}

impl Drop for PromptGuard {
    fn drop(&mut self) {
        let end = match self.tracker.state.lock() {
            Ok(mut s) => {
                s.0 = s.0.saturating_sub(1);
                if s.0 == 0 {
                    Some(s.1.take().unwrap_or((self.kind, self.title.clone())))
                } else {
                    None
                }
            }
            Err(_) => None,
        };
        if let Some((kind, title)) = end {
            (self.tracker.sink)(false, kind, title);
        }
    }
}

/// `ctx.ui`: the mode's [`Ui`]; with a real UI its dialogs fire `ui_prompt_start`/`_end`.
#[derive(Clone)]
pub struct UiHandle {
    ui: Arc<dyn Ui>,
    prompts: Option<Arc<PromptTracker>>,
}

impl UiHandle {
    /// The no-UI handle.
    pub fn none() -> Self {
        UiHandle {
            ui: Arc::new(NoUi),
            prompts: None,
        }
    }

    pub(crate) fn with_tracker(ui: Arc<dyn Ui>, tracker: Arc<PromptTracker>) -> Self {
        UiHandle {
            ui,
            prompts: Some(tracker),
        }
    }

    /// Whether a real UI is attached (`ctx.hasUI`).
    pub fn has_ui(&self) -> bool {
        self.prompts.is_some()
    }

    fn guard(&self, kind: UiPromptKind, title: Option<&str>) -> Option<PromptGuard> {
        self.prompts.as_ref().map(|t| t.enter(kind, title))
    }

    /// [`Ui::notify`].
    pub fn notify(&self, message: &str, level: NotifyLevel) {
        self.ui.notify(message, level);
    }

    /// [`Ui::confirm`] inside a `confirm` prompt span.
    pub async fn confirm(&self, title: &str, message: &str) -> bool {
        let _span = self.guard(UiPromptKind::Confirm, Some(title));
        self.ui.confirm(title, message).await
    }

    /// [`Ui::select`] inside a `select` prompt span.
    pub async fn select(&self, title: &str, options: &[String]) -> Option<String> {
        let _span = self.guard(UiPromptKind::Select, Some(title));
        self.ui.select(title, options).await
    }

    /// [`Ui::input`] inside an `input` prompt span.
    pub async fn input(&self, title: &str, placeholder: Option<&str>) -> Option<String> {
        let _span = self.guard(UiPromptKind::Input, Some(title));
        self.ui.input(title, placeholder).await
    }

    /// [`Ui::editor`] inside an `editor` prompt span.
    pub async fn editor(&self, title: &str, prefill: Option<&str>) -> Option<String> {
        let _span = self.guard(UiPromptKind::Editor, Some(title));
        self.ui.editor(title, prefill).await
    }

    /// [`Ui::select_with`] inside a `select` prompt span.
    pub async fn select_with(
        &self,
        title: &str,
        options: &[String],
        opts: DialogOptions,
    ) -> Option<String> {
        let _span = self.guard(UiPromptKind::Select, Some(title));
        self.ui.select_with(title, options, opts).await
    }

    /// [`Ui::confirm_with`] inside a `confirm` prompt span.
    pub async fn confirm_with(&self, title: &str, message: &str, opts: DialogOptions) -> bool {
        let _span = self.guard(UiPromptKind::Confirm, Some(title));
        self.ui.confirm_with(title, message, opts).await
    }

    /// [`Ui::input_with`] inside an `input` prompt span.
    pub async fn input_with(
        &self,
        title: &str,
        placeholder: Option<&str>,
        opts: DialogOptions,
    ) -> Option<String> {
        let _span = self.guard(UiPromptKind::Input, Some(title));
        self.ui.input_with(title, placeholder, opts).await
    }

    /// [`Ui::set_title`].
    pub fn set_title(&self, title: &str) {
        self.ui.set_title(title);
    }

    /// [`Ui::set_editor_text`].
    pub fn set_editor_text(&self, text: &str) {
        self.ui.set_editor_text(text);
    }

    /// [`Ui::set_status`].
    pub fn set_status(&self, key: &str, text: Option<&str>) {
        self.ui.set_status(key, text);
    }

    /// [`Ui::set_widget`].
    pub fn set_widget(
        &self,
        key: &str,
        lines: Option<&[String]>,
        placement: Option<WidgetPlacement>,
    ) {
        self.ui.set_widget(key, lines, placement);
    }

    /// [`Ui::set_working_message`].
    pub fn set_working_message(&self, message: Option<&str>) {
        self.ui.set_working_message(message);
    }

    /// [`Ui::set_working_indicator`].
    pub fn set_working_indicator(&self, indicator: Option<WorkingIndicator>) {
        self.ui.set_working_indicator(indicator);
    }
}

/// Read access to the session for handlers (`ctx.sessionManager`, `ctx.model`, …).
/// Implemented by the session; a runner without one answers with empty values.
pub trait SessionView: Send + Sync {
    /// The session id.
    fn session_id(&self) -> String;
    /// The session file, when persisted.
    fn session_file(&self) -> Option<PathBuf>;
    /// The session name.
    fn session_name(&self) -> Option<String>;
    /// The current model.
    fn model(&self) -> Option<Model>;
    /// The effective thinking level.
    fn thinking_level(&self) -> ModelThinkingLevel;
    /// The transcript (agent state).
    fn messages(&self) -> Vec<AgentMessage>;
    /// The current system prompt.
    fn system_prompt(&self) -> String;
    /// `isIdle()`: no run, no compaction.
    fn is_idle(&self) -> bool;
    /// `hasPendingMessages()`: queued steering/follow-up messages.
    fn has_pending_messages(&self) -> bool;
    /// The current run's abort signal, if a run is active.
    fn signal(&self) -> Option<CancellationToken>;
    /// The active tool names.
    fn active_tools(&self) -> Vec<String>;
    /// Every tool of the session's registry (`pi.get_all_tools()`); a view without a
    /// registry has none (the default).
    fn all_tools(&self) -> Vec<super::tool_info::ToolInfo> {
        Vec::new()
    }
    /// The session's prompt-template and skill commands (`pi.get_commands()` adds the
    /// extensions'); a view without resources has none (the default).
    fn resource_commands(&self) -> Vec<super::command_info::CommandInfo> {
        Vec::new()
    }
    /// Whether `provider` has configured auth (`pi.set_model`'s check); `false` by default.
    fn has_auth(&self, _provider: &str) -> bool {
        false
    }
    /// The models the session may switch to (`ctx.modelRegistry.getAvailable()` of an
    /// extension process); none by default.
    fn available_models(&self) -> Vec<Model> {
        Vec::new()
    }
    /// At most `max` session entries from file position `start` on, as session-file JSON,
    /// with the entry count and the leaf (the extension-process mirror); a view without a
    /// store has none (the default).
    fn entries_since(&self, _start: usize, _max: usize) -> EntryLog {
        EntryLog::default()
    }
}

/// Session entries read for the extension-process mirror ([`SessionView::entries_since`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EntryLog {
    /// The entries read, in file order (session-file JSON).
    pub entries: Vec<serde_json::Value>,
    /// The file position after the last entry read (where the next read starts).
    pub next: usize,
    /// Whether entries remain after `next`.
    pub more: bool,
    /// The current leaf.
    pub leaf_id: Option<String>,
}

/// `ctx`: cheap to clone. Built by the runner for each dispatch.
#[derive(Clone)]
pub struct ExtensionContext {
    pub(crate) cwd: Arc<Path>,
    pub(crate) mode: Mode,
    pub(crate) ui: UiHandle,
    pub(crate) session: Option<Arc<dyn SessionView>>,
    pub(crate) system_prompt: Option<Arc<str>>,
    pub(crate) requests: RequestQueue,
    /// The session actions; `Some` only in a command's `ctx` (pi's `ExtensionCommandContext`).
    pub(crate) actions: Option<Arc<dyn CommandActions>>,
}

impl ExtensionContext {
    /// `ctx.cwd`.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// `ctx.mode`.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// `ctx.hasUI` (true in the TUI and rpc modes, when the mode binds a UI).
    pub fn has_ui(&self) -> bool {
        self.ui.has_ui()
    }

    /// `ctx.ui`.
    pub fn ui(&self) -> &UiHandle {
        &self.ui
    }

    /// Read access to the session (`None` before the runner is bound to one).
    pub fn session(&self) -> Option<&dyn SessionView> {
        self.session.as_deref()
    }

    /// `ctx.model`.
    pub fn model(&self) -> Option<Model> {
        self.session.as_ref().and_then(|s| s.model())
    }

    /// `ctx.thinkingLevel` (`off` without a session).
    pub fn thinking_level(&self) -> ModelThinkingLevel {
        self.session
            .as_ref()
            .map_or(ModelThinkingLevel::Off, |s| s.thinking_level())
    }

    /// `ctx.isIdle()` (true without a session).
    pub fn is_idle(&self) -> bool {
        self.session.as_ref().is_none_or(|s| s.is_idle())
    }

    /// `ctx.hasPendingMessages()`.
    pub fn has_pending_messages(&self) -> bool {
        self.session
            .as_ref()
            .is_some_and(|s| s.has_pending_messages())
    }

    /// `ctx.signal`: the current run's cancellation token, if a run is active.
    pub fn signal(&self) -> Option<CancellationToken> {
        self.session.as_ref().and_then(|s| s.signal())
    }

    /// `ctx.getSystemPrompt()`: inside `before_agent_start`, the value chained so far;
    /// otherwise the session's prompt (empty without a session).
    pub fn system_prompt(&self) -> String {
        match &self.system_prompt {
            Some(p) => p.to_string(),
            None => self
                .session
                .as_ref()
                .map(|s| s.system_prompt())
                .unwrap_or_default(),
        }
    }

    /// `ctx.abort()`: queued for the session.
    pub fn abort(&self) {
        self.requests.push(ExtensionRequest::Abort);
    }

    /// `ctx.shutdown()`: queued for the session (print mode: no-op there).
    pub fn shutdown(&self) {
        self.requests.push(ExtensionRequest::Shutdown);
    }

    /// `ctx.compact({customInstructions})`: queued for the session, not awaited; the
    /// session runs [`crate::session::AgentSession::compact`] (a failure is logged).
    pub fn compact(&self, custom_instructions: Option<String>) {
        self.requests.push(ExtensionRequest::Compact {
            custom_instructions,
        });
    }

    /// The bound actions of a command's `ctx`, checked like pi's `assertActive()`.
    fn command_actions(&self, name: &str) -> Result<&Arc<dyn CommandActions>, HandlerError> {
        if self.requests.is_stale() {
            return Err(StaleError.into());
        }
        self.actions.as_ref().ok_or_else(|| {
            HandlerError::new(format!(
                "ctx.{name}() is only available in command handlers"
            ))
        })
    }

    /// `ctx.waitForIdle()` (command `ctx` only): resolves when the session has no run and
    /// no compaction.
    ///
    /// # Errors
    /// [`StaleError`]'s text after session replacement; outside a command handler.
    pub async fn wait_for_idle(&self) -> Result<(), HandlerError> {
        self.command_actions("waitForIdle")?.wait_for_idle().await;
        Ok(())
    }

    /// `ctx.newSession({parentSession?})` (command `ctx` only): replaces the session with a
    /// new one (`session_before_switch {reason:"new"}` may cancel). Afterwards this `ctx` and
    /// every captured `pi` are stale.
    ///
    /// # Errors
    /// As [`ExtensionContext::wait_for_idle`]; the replacement's failure text.
    pub async fn new_session(
        &self,
        options: NewSessionOptions,
    ) -> Result<ActionOutcome, HandlerError> {
        Ok(self
            .command_actions("newSession")?
            .new_session(options)
            .await?)
    }

    /// `ctx.fork(entryId, {position})` (command `ctx` only): replaces the session with a
    /// branch of it (`session_before_fork` may cancel).
    ///
    /// # Errors
    /// As [`ExtensionContext::wait_for_idle`]; `Invalid entry ID for forking`, …
    pub async fn fork(
        &self,
        entry_id: impl Into<String>,
        position: ForkPosition,
    ) -> Result<ActionOutcome, HandlerError> {
        Ok(self
            .command_actions("fork")?
            .fork(entry_id.into(), position)
            .await?)
    }

    /// `ctx.navigateTree(targetId, options)` (command `ctx` only): moves the session's leaf
    /// ([`crate::session::AgentSession::navigate_tree`]; `session_before_tree` may cancel).
    ///
    /// # Errors
    /// As [`ExtensionContext::wait_for_idle`]; `Entry <id> not found`, …
    pub async fn navigate_tree(
        &self,
        target_id: impl Into<String>,
        options: NavigateTreeOptions,
    ) -> Result<ActionOutcome, HandlerError> {
        Ok(self
            .command_actions("navigateTree")?
            .navigate_tree(target_id.into(), options)
            .await?)
    }

    /// `ctx.switchSession(sessionPath)` (command `ctx` only): replaces the session with the
    /// one stored at `path` (`session_before_switch {reason:"resume"}` may cancel).
    ///
    /// # Errors
    /// As [`ExtensionContext::wait_for_idle`]; `Stored session working directory does not
    /// exist: …`, …
    pub async fn switch_session(
        &self,
        path: impl Into<PathBuf>,
    ) -> Result<ActionOutcome, HandlerError> {
        Ok(self
            .command_actions("switchSession")?
            .switch_session(path.into())
            .await?)
    }
}
