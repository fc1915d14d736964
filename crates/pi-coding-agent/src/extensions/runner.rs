//! The extension runner: loads extensions in order and dispatches every event.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/extensions/runner.ts`: handlers run
//! in extension load order, then registration order, one at a time and awaited. A handler
//! that returns `Err` or panics is reported to the error listeners as
//! `{extensionPath, event, error}` and the later handlers still run — except `tool_call`,
//! whose failure propagates and blocks the tool ([`ExtensionRunner::emit_tool_call`]).

use futures::FutureExt;
use pi_agent_core::{AgentMessage, AgentTool};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock, Weak};

use super::api::{EventBus, ExtensionRequest, Pi, RequestQueue, RunnerSlot, SessionSlot};
use super::command_actions::{CommandActions, UnboundActions};
use super::context::{ExtensionContext, PromptTracker, SessionView, Ui, UiHandle};
use super::errors::{ErrorListener, ExtensionErrorRecord, HandlerError, Mode, panic_message};
use super::events::{
    Cancellable, ExtensionEvent, UiPromptEndEvent, UiPromptKind, UiPromptStartEvent,
};
use super::extension::{
    CommandSpec, Extension, ExtensionApi, ExtensionLoadError, FlagSpec, FlagValue, Handler,
    LoadedExtension, ShortcutSpec,
};

/// How a handler call ended.
pub(crate) enum Outcome<T> {
    /// Returned normally.
    Done(Option<T>),
    /// Returned `Err` (the message).
    Failed(String),
    /// Panicked (the panic message).
    Panicked(String),
}

impl<T> Outcome<T> {
    /// The result, or the failure (its text is the error record's `error`).
    pub(crate) fn into_result(self) -> Result<Option<T>, HandlerError> {
        match self {
            Outcome::Done(v) => Ok(v),
            Outcome::Failed(e) | Outcome::Panicked(e) => Err(HandlerError::new(e)),
        }
    }
}

/// Calls `f`, catching a panic (the closure is `FnOnce`, so it may hand out borrows it
/// captured).
fn catch_call<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    std::panic::catch_unwind(AssertUnwindSafe(f))
}

/// Calls `handler`, turning a panic while building or polling its future into
/// [`Outcome::Panicked`].
pub(crate) async fn invoke<E: ExtensionEvent>(
    handler: &Handler<E>,
    event: &mut E,
    ctx: &ExtensionContext,
) -> Outcome<E::Output> {
    let future = match catch_call(move || handler(event, ctx)) {
        Ok(f) => f,
        Err(p) => return Outcome::Panicked(panic_message(p)),
    };
    match AssertUnwindSafe(future).catch_unwind().await {
        Ok(Ok(v)) => Outcome::Done(v),
        Ok(Err(e)) => Outcome::Failed(e.to_string()),
        Err(p) => Outcome::Panicked(panic_message(p)),
    }
}

/// A command as invoked: duplicates across extensions get `name:1`, `name:2`, … in load
/// order (pi `resolveRegisteredCommands`).
#[derive(Clone, Debug)]
pub struct ResolvedCommand {
    /// The name to type after `/`.
    pub invocation_name: String,
    /// The registration.
    pub spec: CommandSpec,
}

pub(crate) struct Inner {
    pub(crate) extensions: Vec<LoadedExtension>,
    load_errors: Vec<ExtensionLoadError>,
    cwd: Arc<Path>,
    mode: Mode,
    ui: RwLock<UiHandle>,
    session: SessionSlot,
    listeners: Mutex<Vec<ErrorListener>>,
    requests: RequestQueue,
    bus: EventBus,
    flag_values: Arc<Mutex<std::collections::HashMap<String, FlagValue>>>,
    detached: Mutex<Option<tokio::task::JoinHandle<()>>>,
    command_actions: RwLock<Option<Arc<dyn CommandActions>>>,
    /// Tools registered at run time (`pi.register_tool` after loading) with the registering
    /// extension's path, kept for every later registry build, as pi adds them to the
    /// extension's tools.
    runtime_tools: Mutex<Vec<(String, Arc<dyn AgentTool>)>>,
}

/// The runner (pi's `ExtensionRunner`): cheap to clone, shared by the session and its
/// hooks.
#[derive(Clone)]
pub struct ExtensionRunner {
    pub(crate) inner: Arc<Inner>,
}

/// Builds an [`ExtensionRunner`]: extensions load in the order added.
pub struct ExtensionRunnerBuilder {
    cwd: PathBuf,
    mode: Mode,
    extensions: Vec<Box<dyn Extension>>,
    flag_values: Vec<(String, FlagValue)>,
}

impl ExtensionRunnerBuilder {
    /// The run mode (`ctx.mode`; default print).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Adds an extension (load order = the order added).
    pub fn extension(mut self, extension: impl Extension + 'static) -> Self {
        self.extensions.push(Box::new(extension));
        self
    }

    /// A flag value given on the command line (beats the flag's default).
    pub fn flag_value(mut self, name: impl Into<String>, value: FlagValue) -> Self {
        self.flag_values.push((name.into(), value));
        self
    }

    /// Runs every factory in order. A factory that fails (or panics) contributes nothing
    /// and is listed in [`ExtensionRunner::load_errors`].
    pub fn build(self) -> ExtensionRunner {
        let requests = RequestQueue::default();
        let bus = EventBus::default();
        let flag_values = Arc::new(Mutex::new(
            self.flag_values
                .into_iter()
                .collect::<std::collections::HashMap<_, _>>(),
        ));
        let session: SessionSlot = Arc::default();
        let runner_slot: RunnerSlot = Arc::default();
        let mut loaded = Vec::new();
        let mut load_errors = Vec::new();
        for ext in &self.extensions {
            let path = ext.path().to_owned();
            let own_flags = Arc::new(Mutex::new(Vec::new()));
            let pi = Pi {
                path: Arc::from(path.as_str()),
                requests: requests.clone(),
                bus: bus.clone(),
                flags: Arc::clone(&flag_values),
                own_flags: Arc::clone(&own_flags),
                session: Arc::clone(&session),
                runner: Arc::clone(&runner_slot),
            };
            let mut record = LoadedExtension {
                path: path.clone(),
                ..LoadedExtension::default()
            };
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                ext.register(&mut ExtensionApi {
                    ext: &mut record,
                    pi,
                })
            }));
            let error = match result {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(p) => Some(panic_message(p)),
            };
            if let Some(error) = error {
                load_errors.push(ExtensionLoadError { path, error });
                continue;
            }
            if let (Ok(mut own), Ok(mut values)) = (own_flags.lock(), flag_values.lock()) {
                for flag in &record.flags {
                    own.push(flag.name.clone());
                    if let Some(d) = &flag.default {
                        values.entry(flag.name.clone()).or_insert_with(|| d.clone());
                    }
                }
            }
            loaded.push(record);
        }
        let runner = ExtensionRunner {
            inner: Arc::new(Inner {
                extensions: loaded,
                load_errors,
                cwd: Arc::from(self.cwd.as_path()),
                mode: self.mode,
                ui: RwLock::new(UiHandle::none()),
                session,
                listeners: Mutex::new(Vec::new()),
                runtime_tools: Mutex::new(Vec::new()),
                requests,
                bus,
                flag_values,
                detached: Mutex::new(None),
                command_actions: RwLock::new(None),
            }),
        };
        let _ = runner_slot.set(Arc::downgrade(&runner.inner));
        runner
    }
}

impl ExtensionRunner {
    /// The working directory the extensions run in (`ctx.cwd`, `pi.exec`'s default).
    pub fn cwd(&self) -> &Path {
        &self.inner.cwd
    }

    /// The runner behind a `pi` handle's weak link, while it exists.
    pub(crate) fn from_weak(inner: &Weak<Inner>) -> Option<ExtensionRunner> {
        inner.upgrade().map(|inner| ExtensionRunner { inner })
    }

    /// A builder for a runner in `cwd`.
    pub fn builder(cwd: impl Into<PathBuf>) -> ExtensionRunnerBuilder {
        ExtensionRunnerBuilder {
            cwd: cwd.into(),
            mode: Mode::default(),
            extensions: Vec::new(),
            flag_values: Vec::new(),
        }
    }

    /// The factories that failed: `Failed to load extension "<path>": <error>`.
    pub fn load_errors(&self) -> &[ExtensionLoadError] {
        &self.inner.load_errors
    }

    /// The loaded extensions' paths, in load order.
    pub fn extension_paths(&self) -> Vec<&str> {
        self.inner.extensions.iter().map(|e| e.path()).collect()
    }

    /// `ctx.mode`.
    pub fn mode(&self) -> Mode {
        self.inner.mode
    }

    /// Binds the mode's UI (`ctx.hasUI` becomes true; dialogs fire `ui_prompt_*`).
    pub fn set_ui(&self, ui: Arc<dyn Ui>) {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let tracker = Arc::new(PromptTracker::new(Arc::new(move |start, kind, title| {
            if let Some(inner) = weak.upgrade() {
                ExtensionRunner { inner }.schedule_ui_prompt(start, kind, title);
            }
        })));
        if let Ok(mut slot) = self.inner.ui.write() {
            *slot = UiHandle::with_tracker(ui, tracker);
        }
    }

    /// Gives handlers read access to the session (`ctx.model`, `ctx.isIdle()`, …).
    pub fn set_session(&self, session: Arc<dyn SessionView>) {
        if let Ok(mut slot) = self.inner.session.write() {
            *slot = Some(session);
        }
    }

    /// Drops the session view (`ctx` then answers as without a session).
    pub fn clear_session(&self) {
        if let Ok(mut slot) = self.inner.session.write() {
            *slot = None;
        }
    }

    /// `runner.onError(listener)`: listeners get every `{extensionPath, event, error}`.
    pub fn on_error(&self, listener: ErrorListener) {
        if let Ok(mut l) = self.inner.listeners.lock() {
            l.push(listener);
        }
    }

    /// Reports an error to every listener, synchronously and in subscription order (also
    /// used by the session for `command`, `send_message`, `send_user_message` failures).
    pub fn report_error(&self, record: ExtensionErrorRecord) {
        let listeners: Vec<ErrorListener> = match self.inner.listeners.lock() {
            Ok(l) => l.clone(),
            Err(_) => return,
        };
        for listener in listeners {
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| listener(&record)));
        }
    }

    pub(crate) fn report(&self, path: &str, event: &str, error: impl std::fmt::Display) {
        self.report_error(ExtensionErrorRecord {
            extension_path: path.to_owned(),
            event: event.to_owned(),
            error: error.to_string(),
        });
    }

    /// Takes the queued `pi`/`ctx` requests, oldest first (the session executes them).
    pub fn take_requests(&self) -> Vec<ExtensionRequest> {
        self.inner.requests.drain()
    }

    /// After session replacement or reload: every captured `pi` fails with the stale text.
    pub fn invalidate(&self) {
        self.inner.requests.invalidate();
    }

    /// The event bus shared by the extensions.
    pub fn events(&self) -> &EventBus {
        &self.inner.bus
    }

    /// Sets a flag value from the command line (`--name`).
    pub fn set_flag_value(&self, name: impl Into<String>, value: FlagValue) {
        if let Ok(mut v) = self.inner.flag_values.lock() {
            v.insert(name.into(), value);
        }
    }

    /// Every registered flag, in load order.
    pub fn flags(&self) -> Vec<FlagSpec> {
        self.inner
            .extensions
            .iter()
            .flat_map(|e| e.flags.iter().cloned())
            .collect()
    }

    /// Every registered tool — at load, then at run time; the first registration of a name
    /// wins.
    pub fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        self.tools_by_extension()
            .into_iter()
            .map(|(_, tool)| tool)
            .collect()
    }

    /// [`ExtensionRunner::tools`] with the path of the registering extension.
    pub(crate) fn tools_by_extension(&self) -> Vec<(String, Arc<dyn AgentTool>)> {
        let mut out: Vec<(String, Arc<dyn AgentTool>)> = Vec::new();
        let runtime = self
            .inner
            .runtime_tools
            .lock()
            .map(|t| t.clone())
            .unwrap_or_default();
        let loaded = self
            .inner
            .extensions
            .iter()
            .flat_map(|e| e.tools.iter().map(|t| (e.path.clone(), Arc::clone(t))));
        for (path, tool) in loaded.chain(runtime) {
            if !out.iter().any(|(_, t)| t.name() == tool.name()) {
                out.push((path, tool));
            }
        }
        out
    }

    /// Records a tool registered at run time by the extension at `path`, for
    /// [`ExtensionRunner::tools`].
    pub(crate) fn add_runtime_tool(&self, path: &str, tool: Arc<dyn AgentTool>) {
        if let Ok(mut tools) = self.inner.runtime_tools.lock()
            && !tools.iter().any(|(_, t)| t.name() == tool.name())
        {
            tools.push((path.to_owned(), tool));
        }
    }

    /// Every command with its invocation name (`name`, or `name:<n>` for duplicates).
    pub fn commands(&self) -> Vec<ResolvedCommand> {
        let all: Vec<&CommandSpec> = self
            .inner
            .extensions
            .iter()
            .flat_map(|e| e.commands.iter())
            .collect();
        let count = |name: &str| all.iter().filter(|c| c.name == name).count();
        let mut seen: std::collections::HashMap<&str, usize> = Default::default();
        let mut taken: std::collections::HashSet<String> = Default::default();
        let mut out = Vec::new();
        for c in &all {
            let occurrence = {
                let n = seen.entry(c.name.as_str()).or_insert(0);
                *n += 1;
                *n
            };
            let mut name = if count(&c.name) > 1 {
                format!("{}:{occurrence}", c.name)
            } else {
                c.name.clone()
            };
            let mut suffix = occurrence;
            while taken.contains(&name) {
                suffix += 1;
                name = format!("{}:{suffix}", c.name);
            }
            taken.insert(name.clone());
            out.push(ResolvedCommand {
                invocation_name: name,
                spec: (*c).clone(),
            });
        }
        out
    }

    /// Every shortcut the extensions registered, in load order (conflicts are the UI's to
    /// resolve against its key bindings: pi's `getShortcuts`).
    pub fn shortcuts(&self) -> Vec<ShortcutSpec> {
        self.inner
            .extensions
            .iter()
            .flat_map(|e| e.shortcuts.iter().cloned())
            .collect()
    }

    /// Runs a shortcut's handler with a fresh `ctx`. `Err`: its failure, or its panic
    /// message.
    pub async fn run_shortcut(&self, shortcut: &ShortcutSpec) -> Result<(), HandlerError> {
        let ctx = self.context();
        let handler = Arc::clone(&shortcut.handler);
        let future = std::panic::catch_unwind(AssertUnwindSafe(move || handler(ctx)))
            .map_err(|p| HandlerError::new(panic_message(p)))?;
        match AssertUnwindSafe(future).catch_unwind().await {
            Ok(r) => r,
            Err(p) => Err(HandlerError::new(panic_message(p))),
        }
    }

    /// Whether a command with this invocation name exists.
    pub fn has_command(&self, name: &str) -> bool {
        self.commands().iter().any(|c| c.invocation_name == name)
    }

    /// Runs command `name` with `args`. `Err` (a failure, or a panic's message) is for the
    /// caller to report as `{extensionPath:"command:<name>", event:"command"}`.
    pub async fn run_command(&self, name: &str, args: &str) -> Result<(), HandlerError> {
        let Some(cmd) = self
            .commands()
            .into_iter()
            .find(|c| c.invocation_name == name)
        else {
            return Ok(());
        };
        let ctx = self.command_context();
        let handler = Arc::clone(&cmd.spec.handler);
        let args = args.to_owned();
        let future = std::panic::catch_unwind(AssertUnwindSafe(move || handler(args, ctx)))
            .map_err(|p| HandlerError::new(panic_message(p)))?;
        match AssertUnwindSafe(future).catch_unwind().await {
            Ok(r) => r,
            Err(p) => Err(HandlerError::new(panic_message(p))),
        }
    }

    /// `hasHandlers(event)`.
    pub fn has_handlers<E: ExtensionEvent>(&self) -> bool {
        self.inner
            .extensions
            .iter()
            .any(|e| !e.handlers::<E>().is_empty())
    }

    /// Every handler of `E` with its extension path, in dispatch order.
    pub(crate) fn handlers<E: ExtensionEvent>(&self) -> Vec<(&str, Handler<E>)> {
        self.inner
            .extensions
            .iter()
            .flat_map(|e| {
                e.handlers::<E>()
                    .iter()
                    .map(move |h| (e.path(), Arc::clone(h)))
            })
            .collect()
    }

    /// pi's `bindCommandContext(actions)`: the session actions of command contexts
    /// (`None`: pi's unbound no-ops, [`UnboundActions`]).
    pub fn bind_command_context(&self, actions: Option<Arc<dyn CommandActions>>) {
        if let Ok(mut slot) = self.inner.command_actions.write() {
            *slot = actions;
        }
    }

    /// A fresh command `ctx` (pi's `createCommandContext`): `ctx` plus the bound session
    /// actions.
    pub fn command_context(&self) -> ExtensionContext {
        let actions = self
            .inner
            .command_actions
            .read()
            .ok()
            .and_then(|a| a.clone())
            .unwrap_or_else(|| Arc::new(UnboundActions));
        ExtensionContext {
            actions: Some(actions),
            ..self.context()
        }
    }

    /// A fresh `ctx`.
    pub fn context(&self) -> ExtensionContext {
        ExtensionContext {
            cwd: Arc::clone(&self.inner.cwd),
            mode: self.inner.mode,
            ui: self
                .inner
                .ui
                .read()
                .map(|u| u.clone())
                .unwrap_or_else(|_| UiHandle::none()),
            session: self.inner.session.read().ok().and_then(|s| s.clone()),
            system_prompt: None,
            requests: self.inner.requests.clone(),
            actions: None,
        }
    }

    /// Generic emit for observers: every handler runs, failures are reported.
    pub async fn emit<E: ExtensionEvent<Output = ()>>(&self, mut event: E) {
        let ctx = self.context();
        for (path, h) in self.handlers::<E>() {
            if let Err(e) = invoke(&h, &mut event, &ctx).await.into_result() {
                self.report(path, E::NAME, e);
            }
        }
    }

    /// The `session_before_*` dispatch: the last result is kept; a cancelling one returns at
    /// once (later handlers do not run).
    pub async fn emit_before<E>(&self, mut event: E) -> Option<E::Output>
    where
        E: ExtensionEvent,
        E::Output: Cancellable,
    {
        let ctx = self.context();
        let mut result = None;
        for (path, h) in self.handlers::<E>() {
            match invoke(&h, &mut event, &ctx).await.into_result() {
                Ok(Some(r)) => {
                    let cancel = r.is_cancel();
                    result = Some(r);
                    if cancel {
                        return result;
                    }
                }
                Ok(None) => {}
                Err(e) => self.report(path, E::NAME, e),
            }
        }
        result
    }

    /// Schedules `ui_prompt_start`/`_end` without awaiting it (best effort).
    fn schedule_ui_prompt(&self, start: bool, kind: UiPromptKind, title: Option<String>) {
        if start {
            self.emit_detached(UiPromptStartEvent {
                reason: "ui_prompt",
                kind,
                title,
            });
        } else {
            self.emit_detached(UiPromptEndEvent {
                reason: "ui_prompt",
                kind,
                title,
            });
        }
    }

    /// Ext-emits an observer event without awaiting it (pi: `void runner.emit(…)` /
    /// `queueMicrotask`), after every earlier detached event so they stay in order. Outside
    /// a Tokio runtime the event is dropped.
    pub fn emit_detached<E: ExtensionEvent<Output = ()>>(&self, event: E) {
        if !self.has_handlers::<E>() {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Ok(mut chain) = self.inner.detached.lock() else {
            return;
        };
        let previous = chain.take();
        let runner = self.clone();
        *chain = Some(handle.spawn(async move {
            if let Some(p) = previous {
                let _ = p.await;
            }
            runner.emit(event).await;
        }));
    }

    /// Waits for the detached dispatches ([`ExtensionRunner::emit_detached`], `ui_prompt_*`)
    /// scheduled so far.
    pub async fn flush_detached(&self) {
        let pending = self.inner.detached.lock().ok().and_then(|mut c| c.take());
        if let Some(p) = pending {
            let _ = p.await;
        }
    }

    /// A copy of the messages handed to `context` (pi's `structuredClone`).
    pub(crate) fn deep_copy(messages: &[AgentMessage]) -> Vec<AgentMessage> {
        messages.to_vec()
    }
}
