//! [`ExtensionHooks`]: what an [`AgentSession`] gets when extensions are registered — binding
//! the session to the runner (`ctx`, command actions, `session_start`), `user_bash`, and the
//! executor of the extensions' queued `pi`/`ctx` requests. The translation of every session
//! hook into its extension event is `hook_bridge`.
//!
//! Mirrors how pi-coding-agent 0.85.0 `core/agent-session.ts` calls its `ExtensionRunner`
//! (`_handleAgentEvent`, `_installAgentToolHooks`, `prompt`, `bindExtensions`). The hooks
//! hold the session strongly once [`ExtensionHooks::attach`]ed (the session holds the hooks),
//! so the link is dropped again on `session_shutdown` or [`ExtensionHooks::detach`].

use pi_agent_core::{AgentMessage, AgentTool};
use pi_ai::{Model, ModelThinkingLevel};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

use super::api::{DeliverAs, ExtensionRequest};
use super::command_actions::{CommandActions, SessionActions};
use super::command_info::{CommandInfo, resource_commands};
use super::context::SessionView;
use super::errors::ExtensionErrorRecord;
use super::events as ev;
use super::runner::ExtensionRunner;
use super::tool_info::ToolInfo;
use super::tool_registry::ToolRegistry;
use crate::session::{self as s, AgentSession, CustomMessageOptions, UserMessageOptions};
use crate::tools::ToolFilter;

/// Read access to an [`AgentSession`] (and the hooks' tool registry) for `ctx` and the `pi`
/// handles.
struct SessionReader(
    AgentSession,
    Arc<Mutex<ToolRegistry>>,
    Option<AvailableModels>,
);

/// The models a session may switch to (those whose provider has auth), in registry order.
pub type AvailableModels = Arc<dyn Fn() -> Vec<Model> + Send + Sync>;

impl SessionView for SessionReader {
    fn session_id(&self) -> String {
        self.0.session_id()
    }
    fn session_file(&self) -> Option<PathBuf> {
        self.0.session_file()
    }
    fn session_name(&self) -> Option<String> {
        let store = self.0.store().lock().ok()?;
        crate::storage::tree::session_name(&store).ok().flatten()
    }
    fn model(&self) -> Option<Model> {
        self.0.model()
    }
    fn thinking_level(&self) -> ModelThinkingLevel {
        self.0.thinking_level()
    }
    fn messages(&self) -> Vec<AgentMessage> {
        self.0.messages()
    }
    fn system_prompt(&self) -> String {
        self.0.system_prompt()
    }
    fn is_idle(&self) -> bool {
        self.0.is_idle()
    }
    fn has_pending_messages(&self) -> bool {
        self.0.pending_message_count() > 0
    }
    fn signal(&self) -> Option<CancellationToken> {
        self.0.agent().signal()
    }
    fn active_tools(&self) -> Vec<String> {
        self.0
            .agent()
            .with_state(|st| st.tools.iter().map(|t| t.name().to_owned()).collect())
    }
    fn all_tools(&self) -> Vec<ToolInfo> {
        self.1.lock().map(|r| r.infos()).unwrap_or_default()
    }
    fn resource_commands(&self) -> Vec<CommandInfo> {
        resource_commands(self.0.prompt_templates(), self.0.skills())
    }
    fn has_auth(&self, provider: &str) -> bool {
        self.0.auth().has_auth(provider)
    }
    fn available_models(&self) -> Vec<Model> {
        self.2.as_ref().map(|f| f()).unwrap_or_default()
    }
    fn entries_since(&self, start: usize, max: usize) -> super::context::EntryLog {
        let Ok(store) = self.0.store().lock() else {
            return super::context::EntryLog::default();
        };
        let total = store.len();
        let end = total.min(start.saturating_add(max));
        let entries = (start..end)
            .filter_map(|i| store.entry_at(i).ok())
            .filter_map(|e| serde_json::to_value(&*e).ok())
            .collect();
        super::context::EntryLog {
            entries,
            next: end,
            more: end < total,
            leaf_id: store.leaf_id().map(str::to_owned),
        }
    }
}

/// [`crate::session::SessionHooks`] backed by an [`ExtensionRunner`].
pub struct ExtensionHooks {
    pub(super) runner: ExtensionRunner,
    session: Mutex<Option<AgentSession>>,
    subscription: Mutex<Option<s::SessionSubscription>>,
    /// The tools `setActiveTools` can choose from (shared with the request executor).
    tools: Arc<Mutex<ToolRegistry>>,
    /// Base tools that may be activated later without being active at the start.
    available: Mutex<Vec<Arc<dyn AgentTool>>>,
    executor: Mutex<Option<tokio::task::JoinHandle<()>>>,
    shutdown_handler: Mutex<Option<ShutdownHandler>>,
    command_actions: Mutex<Option<Arc<dyn CommandActions>>>,
    available_models: Mutex<Option<AvailableModels>>,
}

/// What `ctx.shutdown()` does in a mode that honours it (RPC).
pub type ShutdownHandler = Arc<dyn Fn() + Send + Sync>;

impl ExtensionHooks {
    /// Hooks for `runner`; pass them to `AgentSession::builder().hooks(…)`, then
    /// [`ExtensionHooks::attach`] the built session.
    pub fn new(runner: ExtensionRunner) -> Arc<Self> {
        Arc::new(ExtensionHooks {
            runner,
            session: Mutex::new(None),
            subscription: Mutex::new(None),
            tools: Arc::new(Mutex::new(ToolRegistry::default())),
            available: Mutex::new(Vec::new()),
            executor: Mutex::new(None),
            shutdown_handler: Mutex::new(None),
            command_actions: Mutex::new(None),
            available_models: Mutex::new(None),
        })
    }

    /// The models `ctx.modelRegistry.getAvailable()` lists and `pi.setModel` may choose from
    /// (for extension processes, which cannot hold the registry); from the next
    /// [`ExtensionHooks::attach`] on. Default: none.
    pub fn set_available_models(&self, models: AvailableModels) {
        if let Ok(mut slot) = self.available_models.lock() {
            *slot = Some(models);
        }
    }

    /// pi's `--tools` allowlist and `--exclude-tools` denylist for the tool registry
    /// (`allowedToolNames`/`excludedToolNames`; `--no-tools` is an empty allowlist). They
    /// apply to every tool — built-in, the session's own and the extensions' — from the next
    /// [`ExtensionHooks::attach`] on, and to tools registered at run time. Default: no filter.
    pub fn set_tool_filter(&self, filter: ToolFilter) {
        if let Ok(mut registry) = self.tools.lock() {
            registry.set_filter(filter);
        }
    }

    /// Tools the extensions may activate later (`pi.set_active_tools`) without their being
    /// active when the session starts: pi's registry holds every built-in tool, and only
    /// `read`, `bash`, `edit`, `write` start active. Read at the next
    /// [`ExtensionHooks::attach`].
    pub fn set_available_tools(&self, tools: Vec<Arc<dyn AgentTool>>) {
        if let Ok(mut available) = self.available.lock() {
            *available = tools;
        }
    }

    /// Installs what `ctx.shutdown()` does (RPC mode: shut down after the current command or
    /// at the next `agent_settled`). Without a handler the request is a no-op (print, json).
    pub fn set_shutdown_handler(&self, handler: ShutdownHandler) {
        if let Ok(mut h) = self.shutdown_handler.lock() {
            *h = Some(handler);
        }
    }

    /// Binds the session actions of command contexts (pi's `commandContextActions`; the
    /// runtime host binds its own). Without them an attached session gets
    /// [`SessionActions`] (tree navigation and waiting only).
    pub fn set_command_actions(&self, actions: Arc<dyn CommandActions>) {
        if let Ok(mut slot) = self.command_actions.lock() {
            *slot = Some(Arc::clone(&actions));
        }
        self.runner.bind_command_context(Some(actions));
    }

    /// The runner.
    pub fn runner(&self) -> &ExtensionRunner {
        &self.runner
    }

    /// Binds the session: `ctx` reads it and queued requests run against it. The available
    /// tools, the session's current tools and the extensions' tools form the registry for
    /// `setActiveTools`, and the extensions' tools are activated (pi 0.85.0 `_buildRuntime`:
    /// the initial build activates every extension tool; the rules, filter
    /// included, are in `extensions/tool_registry.rs`).
    pub fn attach(&self, session: &AgentSession) {
        let models = self.available_models.lock().ok().and_then(|m| m.clone());
        self.runner.set_session(Arc::new(SessionReader(
            session.clone(),
            Arc::clone(&self.tools),
            models,
        )));
        let active: Vec<Arc<dyn AgentTool>> = session.agent().with_state(|st| st.tools.clone());
        let available = self.available.lock().map(|a| a.clone()).unwrap_or_default();
        if let Ok(mut registry) = self.tools.lock() {
            let next = registry.build(&available, &active, self.runner.tools_by_extension());
            session.set_active_tools(next);
        }
        if let Ok(mut slot) = self.session.lock() {
            *slot = Some(session.clone());
        }
        let actions = self.command_actions.lock().ok().and_then(|a| a.clone());
        self.runner
            .bind_command_context(Some(actions.unwrap_or_else(|| {
                Arc::new(SessionActions(session.downgrade())) as Arc<dyn CommandActions>
            })));
        let subscription = self.forward_session_events(session);
        if let Ok(mut slot) = self.subscription.lock()
            && let Some(old) = slot.replace(subscription)
        {
            old.unsubscribe();
        }
    }

    /// `session_info_changed` is ext-emitted without awaiting when the session announces a
    /// new name (pi: `setSessionName`).
    fn forward_session_events(&self, session: &AgentSession) -> s::SessionSubscription {
        let runner = self.runner.clone();
        session.subscribe(move |event| {
            if let s::AgentSessionEvent::SessionInfoChanged { name } = event {
                runner.emit_detached(ev::SessionInfoChangedEvent { name: name.clone() });
            }
            Ok(())
        })
    }

    /// pi's `bindExtensions`: attaches `session`, awaits `session_start {reason}`
    /// ([`AgentSession::bind_hooks`]), then `resources_discover {cwd, reason}` (`reload` for a
    /// reload, else `startup`). Returns the discovered paths; when there are any, the caller
    /// reloads skills/templates with them and rebuilds the system prompt.
    pub async fn bind(
        &self,
        session: &AgentSession,
        reason: ev::SessionStartReason,
        previous_session_file: Option<String>,
    ) -> super::DiscoveredResources {
        self.attach(session);
        session.bind_hooks(reason, previous_session_file).await;
        let discover_reason = match reason {
            ev::SessionStartReason::Reload => ev::ResourcesDiscoverReason::Reload,
            _ => ev::ResourcesDiscoverReason::Startup,
        };
        let found = self
            .runner
            .emit_resources_discover(ev::ResourcesDiscoverEvent {
                cwd: self.runner.context().cwd().display().to_string(),
                reason: discover_reason,
            })
            .await;
        self.pump();
        found
    }

    /// A user command (`!cmd`, `!!cmd`, RPC `bash`) with the `user_bash` hook: the first
    /// handler result is recorded as if the session had run the command; otherwise the
    /// session runs it ([`AgentSession::execute_bash`]). Mirrors pi's interactive
    /// `handleBashCommand` and RPC `bash`.
    ///
    /// # Errors
    /// As [`AgentSession::execute_bash`] / [`AgentSession::record_bash_result`].
    pub async fn user_bash(
        &self,
        session: &AgentSession,
        command: &str,
        options: s::ExecuteBashOptions,
        on_chunk: impl FnMut(&str),
    ) -> Result<crate::tools::bash::user::BashResult, s::SessionError> {
        let exclude = options.exclude_from_context;
        if self.runner.has_handlers::<ev::UserBashEvent>() {
            let cwd = session
                .store()
                .lock()
                .map(|st| st.header().cwd.clone())
                .unwrap_or_default();
            let answer = self
                .runner
                .emit_user_bash(ev::UserBashEvent {
                    command: command.to_owned(),
                    exclude_from_context: exclude.unwrap_or(false),
                    cwd,
                })
                .await;
            self.pump();
            if let Some(answer) = answer {
                session.record_bash_result(command, &answer.result, exclude)?;
                return Ok(answer.result);
            }
        }
        session.execute_bash(command, options, on_chunk).await
    }

    /// Drops the link to the session (and invalidates captured `pi` handles).
    pub fn detach(&self) {
        if let Ok(mut slot) = self.session.lock() {
            *slot = None;
        }
        if let Some(sub) = self.subscription.lock().ok().and_then(|mut s| s.take()) {
            sub.unsubscribe();
        }
        self.runner.clear_session();
        self.runner.invalidate();
    }

    /// Waits until every request queued so far has run.
    pub async fn flush_requests(&self) {
        self.pump();
        let pending = self.executor.lock().ok().and_then(|mut e| e.take());
        if let Some(p) = pending {
            let _ = p.await;
        }
    }

    /// Hands the queued requests to a task that runs them in order after the earlier ones
    /// (never inside the hook: a request may start a run).
    /// Without an attached session (or outside a Tokio runtime) the requests stay queued.
    pub(super) fn pump(&self) {
        let Some(session) = self.session.lock().ok().and_then(|s| s.clone()) else {
            return;
        };
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let requests = self.runner.take_requests();
        if requests.is_empty() {
            return;
        }
        let Ok(mut chain) = self.executor.lock() else {
            return;
        };
        let previous = chain.take();
        let runner = self.runner.clone();
        let tools = Arc::clone(&self.tools);
        let shutdown = self.shutdown_handler.lock().ok().and_then(|h| h.clone());
        *chain = Some(handle.spawn(async move {
            if let Some(p) = previous {
                let _ = p.await;
            }
            for r in requests {
                execute(&session, &runner, &tools, shutdown.as_ref(), r).await;
            }
        }));
    }
}

/// Runs one request; failures of `sendMessage`/`sendUserMessage` become extension errors.
async fn execute(
    session: &AgentSession,
    runner: &ExtensionRunner,
    tools: &Mutex<ToolRegistry>,
    shutdown: Option<&ShutdownHandler>,
    request: ExtensionRequest,
) {
    let failed = |path: &str, event: &str, error: String| {
        runner.report_error(ExtensionErrorRecord {
            extension_path: path.to_owned(),
            event: event.to_owned(),
            error,
        });
    };
    match request {
        ExtensionRequest::SendMessage {
            extension_path,
            message,
            options,
        } => {
            let spec = s::CustomMessageSpec {
                custom_type: message.custom_type,
                content: message.content,
                display: message.display,
                details: message.details,
            };
            let options = CustomMessageOptions {
                trigger_turn: options.trigger_turn,
                deliver_as: options.deliver_as.map(|d| match d {
                    DeliverAs::Steer => s::DeliverAs::Steer,
                    DeliverAs::FollowUp => s::DeliverAs::FollowUp,
                    DeliverAs::NextTurn => s::DeliverAs::NextTurn,
                }),
            };
            if let Err(e) = session.send_custom_message(spec, options).await {
                failed(&extension_path, "send_message", e.to_string());
            }
        }
        ExtensionRequest::SendUserMessage {
            extension_path,
            text,
            images,
            deliver_as,
        } => {
            let mut content = vec![pi_ai::UserContent::text(text)];
            content.extend(images.into_iter().map(pi_ai::UserContent::Image));
            let options = UserMessageOptions {
                deliver_as,
                expand_prompt_templates: None,
            };
            if let Err(e) = session.send_user_message(content, options).await {
                failed(&extension_path, "send_user_message", e.to_string());
            }
        }
        ExtensionRequest::AppendEntry { custom_type, data } => {
            if let Err(e) = session.append_custom_entry(&custom_type, data) {
                tracing::warn!("appendEntry failed: {e}");
            }
        }
        ExtensionRequest::SetSessionName(name) => {
            if let Err(e) = session.set_session_name(&name) {
                tracing::warn!("setSessionName failed: {e}");
            }
        }
        ExtensionRequest::SetLabel { entry_id, label } => {
            if let Ok(mut store) = session.store().lock()
                && let Err(e) = store.append(crate::storage::entry::EntryKind::Label {
                    target_id: entry_id,
                    label,
                })
            {
                tracing::warn!("setLabel failed: {e}");
            }
        }
        ExtensionRequest::SetActiveTools(names) => {
            let active = tools.lock().map(|r| r.select(&names));
            if let Ok(active) = active {
                session.set_active_tools(active);
            }
        }
        ExtensionRequest::RegisterTool {
            extension_path,
            tool,
        } => {
            runner.add_runtime_tool(&extension_path, Arc::clone(&tool));
            let active = session.agent().with_state(|st| st.tools.clone());
            let next = tools
                .lock()
                .ok()
                .and_then(|mut r| r.register(&extension_path, tool, &active));
            if let Some(next) = next {
                session.set_active_tools(next);
            }
        }
        ExtensionRequest::SetThinkingLevel(level) => {
            if let Err(e) = session.set_thinking_level(level) {
                tracing::warn!("setThinkingLevel failed: {e}");
            }
        }
        ExtensionRequest::SetModel(model) => {
            if let Err(e) = session.set_model(*model, false).await {
                tracing::warn!("setModel failed: {e}");
            }
        }
        ExtensionRequest::Abort => session.abort().await,
        // Print/json modes install no handler: `shutdown()` is a no-op there.
        ExtensionRequest::Shutdown => {
            if let Some(h) = shutdown {
                h();
            }
        }
        // pi does not await `compactFn`; here the request chain waits for it, so later
        // requests see the compacted session. Failures are pi's `onError` (logged).
        ExtensionRequest::Compact {
            custom_instructions,
        } => {
            if let Err(e) = session.compact(custom_instructions).await {
                tracing::warn!("ctx.compact() failed: {e}");
            }
        }
    }
}
