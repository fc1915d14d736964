//! The runner as the session's [`SessionHooks`]: what an [`AgentSession`] gets when
//! extensions are registered, plus the executor of the extensions' `pi`/`ctx` requests.
//!
//! Mirrors how pi-coding-agent 0.85.0 `core/agent-session.ts` calls its `ExtensionRunner`
//! (`_handleAgentEvent`, `_installAgentToolHooks`, `prompt`, `bindExtensions`). The hooks
//! hold the session strongly once [`ExtensionHooks::attach`]ed (the session holds the hooks),
//! so the link is dropped again on `session_shutdown` or [`ExtensionHooks::detach`].

use crate::storage::SessionEntry;
use futures::future::BoxFuture;
use pi_agent_core::{
    AfterToolCallResult, AgentEvent, AgentMessage, AgentTool, BeforeToolCallResult, HookError,
};
use pi_ai::{Model, ModelThinkingLevel};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

use super::api::{DeliverAs, ExtensionRequest};
use super::context::SessionView;
use super::errors::ExtensionErrorRecord;
use super::events as ev;
use super::runner::ExtensionRunner;
use crate::session::{
    self as s, AgentSession, CustomMessageOptions, SessionHooks, TurnInfo, UserMessageOptions,
};

/// Read access to an [`AgentSession`] for `ctx`.
struct SessionReader(AgentSession);

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
}

/// [`SessionHooks`] backed by an [`ExtensionRunner`].
pub struct ExtensionHooks {
    runner: ExtensionRunner,
    session: Mutex<Option<AgentSession>>,
    subscription: Mutex<Option<s::SessionSubscription>>,
    all_tools: Mutex<Vec<Arc<dyn AgentTool>>>,
    executor: Mutex<Option<tokio::task::JoinHandle<()>>>,
    shutdown_handler: Mutex<Option<ShutdownHandler>>,
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
            all_tools: Mutex::new(Vec::new()),
            executor: Mutex::new(None),
            shutdown_handler: Mutex::new(None),
        })
    }

    /// Installs what `ctx.shutdown()` does (RPC mode: shut down after the current command or
    /// at the next `agent_settled`). Without a handler the request is a no-op (print, json).
    pub fn set_shutdown_handler(&self, handler: ShutdownHandler) {
        if let Ok(mut h) = self.shutdown_handler.lock() {
            *h = Some(handler);
        }
    }

    /// The runner.
    pub fn runner(&self) -> &ExtensionRunner {
        &self.runner
    }

    /// Binds the session: `ctx` reads it and queued requests run against it. The session's
    /// current tools plus the extensions' tools form the registry for `setActiveTools`.
    pub fn attach(&self, session: &AgentSession) {
        self.runner
            .set_session(Arc::new(SessionReader(session.clone())));
        let mut tools: Vec<Arc<dyn AgentTool>> = session.agent().with_state(|st| st.tools.clone());
        for t in self.runner.tools() {
            if !tools.iter().any(|x| x.name() == t.name()) {
                tools.push(t);
            }
        }
        if let Ok(mut all) = self.all_tools.lock() {
            *all = tools;
        }
        if let Ok(mut slot) = self.session.lock() {
            *slot = Some(session.clone());
        }
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
        reason: &str,
        previous_session_file: Option<String>,
    ) -> super::DiscoveredResources {
        self.attach(session);
        session.bind_hooks(reason, previous_session_file).await;
        let discover_reason = if reason == "reload" {
            ev::ResourcesDiscoverReason::Reload
        } else {
            ev::ResourcesDiscoverReason::Startup
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
    fn pump(&self) {
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
        let all_tools = self.all_tools.lock().map(|t| t.clone()).unwrap_or_default();
        let shutdown = self.shutdown_handler.lock().ok().and_then(|h| h.clone());
        *chain = Some(handle.spawn(async move {
            if let Some(p) = previous {
                let _ = p.await;
            }
            let mut all_tools = all_tools;
            for r in requests {
                execute(&session, &runner, &mut all_tools, shutdown.as_ref(), r).await;
            }
        }));
    }
}

/// Runs one request; failures of `sendMessage`/`sendUserMessage` become extension errors.
async fn execute(
    session: &AgentSession,
    runner: &ExtensionRunner,
    all_tools: &mut Vec<Arc<dyn AgentTool>>,
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
                deliver_as: deliver_as.map(streaming_behavior),
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
            let active: Vec<Arc<dyn AgentTool>> = all_tools
                .iter()
                .filter(|t| names.iter().any(|n| n == t.name()))
                .cloned()
                .collect();
            session.agent().set_tools(active);
        }
        ExtensionRequest::RegisterTool(tool) => {
            if !all_tools.iter().any(|t| t.name() == tool.name()) {
                all_tools.push(Arc::clone(&tool));
                let mut active = session.agent().with_state(|st| st.tools.clone());
                active.push(tool);
                session.agent().set_tools(active);
            }
        }
        ExtensionRequest::SetThinkingLevel(level) => {
            if let Err(e) = session.set_thinking_level(level) {
                tracing::warn!("setThinkingLevel failed: {e}");
            }
        }
        ExtensionRequest::Abort => session.abort().await,
        // Print/json modes install no handler: `shutdown()` is a no-op there.
        ExtensionRequest::Shutdown => {
            if let Some(h) = shutdown {
                h();
            }
        }
        // Manual compaction is not wired to the session yet.
        ExtensionRequest::Compact { .. } => {}
    }
}

fn streaming_behavior(b: ev::StreamingBehavior) -> s::StreamingBehavior {
    match b {
        ev::StreamingBehavior::Steer => s::StreamingBehavior::Steer,
        ev::StreamingBehavior::FollowUp => s::StreamingBehavior::FollowUp,
    }
}

fn input_source(src: s::InputSource) -> ev::InputSource {
    match src {
        s::InputSource::Interactive => ev::InputSource::Interactive,
        s::InputSource::Rpc => ev::InputSource::Rpc,
        s::InputSource::Extension => ev::InputSource::Extension,
    }
}

fn start_reason(reason: &str) -> ev::SessionStartReason {
    match reason {
        "reload" => ev::SessionStartReason::Reload,
        "new" => ev::SessionStartReason::New,
        "resume" => ev::SessionStartReason::Resume,
        "fork" => ev::SessionStartReason::Fork,
        _ => ev::SessionStartReason::Startup,
    }
}

fn shutdown_reason(reason: &str) -> ev::ShutdownReason {
    match reason {
        "reload" => ev::ShutdownReason::Reload,
        "new" => ev::ShutdownReason::New,
        "resume" => ev::ShutdownReason::Resume,
        "fork" => ev::ShutdownReason::Fork,
        _ => ev::ShutdownReason::Quit,
    }
}

impl ExtensionHooks {
    /// Ext-emits the mirrored lifecycle event of `event`.
    async fn emit_agent_event(&self, event: &AgentEvent, turn: TurnInfo) {
        let r = &self.runner;
        match event {
            AgentEvent::AgentStart => r.emit(ev::AgentStartEvent).await,
            AgentEvent::AgentEnd { messages } => {
                r.emit(ev::AgentEndEvent {
                    messages: messages.clone(),
                })
                .await
            }
            AgentEvent::TurnStart => {
                r.emit(ev::TurnStartEvent {
                    turn_index: turn.turn_index as u64,
                    timestamp: turn.timestamp,
                })
                .await
            }
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => {
                r.emit(ev::TurnEndEvent {
                    turn_index: turn.turn_index as u64,
                    message: message.clone(),
                    tool_results: tool_results.clone(),
                })
                .await
            }
            AgentEvent::MessageStart { message } => {
                r.emit(ev::MessageStartEvent {
                    message: message.clone(),
                })
                .await
            }
            AgentEvent::MessageUpdate {
                assistant_message_event,
                message,
            } => {
                r.emit(ev::MessageUpdateEvent {
                    message: message.clone(),
                    assistant_message_event: assistant_message_event.clone(),
                })
                .await
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                r.emit(ev::ToolExecutionStartEvent {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    args: args.clone(),
                })
                .await
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial_result,
            } => {
                r.emit(ev::ToolExecutionUpdateEvent {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    args: args.clone(),
                    partial_result: partial_result.clone(),
                })
                .await
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
            } => {
                r.emit(ev::ToolExecutionEndEvent {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    result: result.clone(),
                    is_error: *is_error,
                })
                .await
            }
            // `message_end` has its own hook.
            AgentEvent::MessageEnd { .. } => {}
        }
    }
}

impl SessionHooks for ExtensionHooks {
    fn has_command(&self, name: &str) -> bool {
        self.runner.has_command(name)
    }

    fn run_command(&self, name: &str, args: &str) -> BoxFuture<'_, Result<(), String>> {
        let (name, args) = (name.to_owned(), args.to_owned());
        Box::pin(async move {
            let r = self.runner.run_command(&name, &args).await;
            self.pump();
            r
        })
    }

    fn input(&self, event: s::InputEvent) -> BoxFuture<'_, s::InputAction> {
        Box::pin(async move {
            let images = (!event.images.is_empty()).then_some(event.images);
            let result = self
                .runner
                .emit_input(ev::InputEvent {
                    text: event.text,
                    images,
                    source: input_source(event.source),
                    streaming_behavior: event.streaming_behavior.map(|b| match b {
                        s::StreamingBehavior::Steer => ev::StreamingBehavior::Steer,
                        s::StreamingBehavior::FollowUp => ev::StreamingBehavior::FollowUp,
                    }),
                })
                .await;
            self.pump();
            match result {
                ev::InputResult::Continue => s::InputAction::Continue,
                ev::InputResult::Handled => s::InputAction::Handled,
                ev::InputResult::Transform { text, images } => {
                    s::InputAction::Transform { text, images }
                }
            }
        })
    }

    fn before_agent_start(
        &self,
        event: s::BeforeAgentStartEvent,
    ) -> BoxFuture<'_, Option<s::BeforeAgentStartResult>> {
        Box::pin(async move {
            let images = (!event.images.is_empty()).then_some(event.images);
            let outcome = self
                .runner
                .emit_before_agent_start(ev::BeforeAgentStartEvent {
                    prompt: event.prompt,
                    images,
                    system_prompt: event.system_prompt,
                    system_prompt_options: serde_json::Value::Object(Default::default()),
                })
                .await;
            self.pump();
            outcome.map(|o| s::BeforeAgentStartResult {
                messages: o
                    .messages
                    .into_iter()
                    .map(|m| s::CustomMessageSpec {
                        custom_type: m.custom_type,
                        content: m.content,
                        display: m.display,
                        details: m.details,
                    })
                    .collect(),
                system_prompt: o.system_prompt,
            })
        })
    }

    fn context(&self, messages: Vec<AgentMessage>) -> BoxFuture<'_, Vec<AgentMessage>> {
        Box::pin(async move {
            if !self.runner.has_handlers::<ev::ContextEvent>() {
                return messages;
            }
            let out = self.runner.emit_context(&messages).await;
            self.pump();
            out
        })
    }

    fn tool_call(
        &self,
        event: s::ToolCallEvent,
    ) -> BoxFuture<'_, Result<Option<BeforeToolCallResult>, HookError>> {
        Box::pin(async move {
            if !self.runner.has_handlers::<ev::ToolCallEvent>() {
                return Ok(None);
            }
            let original = event.input.clone();
            let outcome = self
                .runner
                .emit_tool_call(ev::ToolCallEvent {
                    tool_call_id: event.tool_call_id,
                    tool_name: event.tool_name,
                    input: event.input,
                })
                .await;
            self.pump();
            let outcome = outcome.map_err(HookError::new)?;
            let args = (outcome.input != original).then_some(outcome.input);
            if outcome.result.is_none() && args.is_none() {
                return Ok(None);
            }
            let r = outcome.result.unwrap_or_default();
            Ok(Some(BeforeToolCallResult {
                block: r.block,
                reason: r.reason,
                terminate: r.terminate,
                args,
            }))
        })
    }

    fn tool_result(&self, event: s::ToolResultEvent) -> BoxFuture<'_, Option<AfterToolCallResult>> {
        Box::pin(async move {
            if !self.runner.has_handlers::<ev::ToolResultEvent>() {
                return None;
            }
            let patch = self
                .runner
                .emit_tool_result(ev::ToolResultEvent {
                    tool_call_id: event.tool_call_id,
                    tool_name: event.tool_name,
                    input: event.input,
                    content: event.result.content,
                    details: event.result.details,
                    is_error: event.is_error,
                    usage: event.usage,
                })
                .await;
            self.pump();
            patch.map(|p| AfterToolCallResult {
                content: p.content,
                details: p.details,
                usage: p.usage,
                terminate: None,
                is_error: p.is_error,
            })
        })
    }

    fn agent_event(&self, event: Arc<AgentEvent>, turn: TurnInfo) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.emit_agent_event(&event, turn).await;
            self.pump();
        })
    }

    fn message_end(&self, message: AgentMessage) -> BoxFuture<'_, Option<AgentMessage>> {
        Box::pin(async move {
            let out = self.runner.emit_message_end(message).await;
            self.pump();
            out
        })
    }

    fn agent_settled(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.runner.emit(ev::AgentSettledEvent).await;
            self.pump();
        })
    }

    fn session_start(
        &self,
        reason: &str,
        previous_session_file: Option<String>,
    ) -> BoxFuture<'_, ()> {
        let reason = start_reason(reason);
        Box::pin(async move {
            self.runner
                .emit(ev::SessionStartEvent {
                    reason,
                    previous_session_file,
                })
                .await;
            self.pump();
        })
    }

    fn session_shutdown(
        &self,
        reason: &str,
        target_session_file: Option<String>,
    ) -> BoxFuture<'_, ()> {
        let reason = shutdown_reason(reason);
        Box::pin(async move {
            if self.runner.has_handlers::<ev::SessionShutdownEvent>() {
                self.runner
                    .emit(ev::SessionShutdownEvent {
                        reason,
                        target_session_file,
                    })
                    .await;
            }
            self.detach();
        })
    }

    fn session_before_switch(
        &self,
        reason: &str,
        target_session_file: Option<String>,
    ) -> BoxFuture<'_, bool> {
        let reason = match reason {
            "resume" => ev::SwitchReason::Resume,
            _ => ev::SwitchReason::New,
        };
        Box::pin(async move {
            if !self.runner.has_handlers::<ev::SessionBeforeSwitchEvent>() {
                return false;
            }
            let result = self
                .runner
                .emit_before(ev::SessionBeforeSwitchEvent {
                    reason,
                    target_session_file,
                })
                .await;
            self.pump();
            result.is_some_and(|r| r.cancel)
        })
    }

    fn session_before_fork(&self, entry_id: &str, position: &str) -> BoxFuture<'_, bool> {
        let event = ev::SessionBeforeForkEvent {
            entry_id: entry_id.to_owned(),
            position: match position {
                "at" => ev::ForkPosition::At,
                _ => ev::ForkPosition::Before,
            },
        };
        Box::pin(async move {
            if !self.runner.has_handlers::<ev::SessionBeforeForkEvent>() {
                return false;
            }
            let result = self.runner.emit_before(event).await;
            self.pump();
            result.is_some_and(|r| r.cancel)
        })
    }

    fn before_provider_request(
        &self,
        payload: serde_json::Value,
    ) -> BoxFuture<'_, Option<serde_json::Value>> {
        Box::pin(async move {
            if !self.runner.has_handlers::<ev::BeforeProviderRequestEvent>() {
                return None;
            }
            let out = self.runner.emit_before_provider_request(payload).await;
            self.pump();
            Some(out)
        })
    }

    fn after_provider_response(
        &self,
        status: u16,
        headers: Vec<(String, String)>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.runner.has_handlers::<ev::AfterProviderResponseEvent>() {
                self.runner
                    .emit(ev::AfterProviderResponseEvent { status, headers })
                    .await;
                self.pump();
            }
        })
    }

    fn session_before_compact(
        &self,
        preparation: crate::compaction::CompactionPreparation,
        branch_entries: Vec<SessionEntry>,
        custom_instructions: Option<String>,
        reason: crate::session::CompactionReason,
        will_retry: bool,
        signal: tokio_util::sync::CancellationToken,
    ) -> BoxFuture<'_, Option<crate::session::hooks::BeforeCompactDecision>> {
        Box::pin(async move {
            let decision = self
                .runner
                .emit_before(ev::SessionBeforeCompactEvent {
                    preparation,
                    branch_entries,
                    custom_instructions,
                    reason,
                    will_retry,
                    signal,
                })
                .await;
            self.pump();
            decision.map(|d| crate::session::hooks::BeforeCompactDecision {
                cancel: d.cancel,
                compaction: d.compaction,
            })
        })
    }

    fn session_compact(
        &self,
        entry: SessionEntry,
        reason: crate::session::CompactionReason,
        will_retry: bool,
    ) -> BoxFuture<'_, ()> {
        // An extension-supplied compaction is written with `fromHook: true`.
        let from_extension = matches!(
            entry.kind,
            crate::storage::EntryKind::Compaction {
                from_hook: Some(true),
                ..
            }
        );
        Box::pin(async move {
            self.runner
                .emit(ev::SessionCompactEvent {
                    compaction_entry: entry,
                    from_extension,
                    reason,
                    will_retry,
                })
                .await;
            self.pump();
        })
    }

    fn session_compact_failed(
        &self,
        reason: crate::session::CompactionReason,
        error_message: Option<String>,
        aborted: bool,
        from_extension: bool,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.runner
                .emit(ev::SessionCompactFailedEvent {
                    reason,
                    error_message,
                    aborted,
                    will_retry: false,
                    from_extension,
                })
                .await;
            self.pump();
        })
    }

    fn session_before_tree(
        &self,
        preparation: s::tree::TreePreparation,
        signal: CancellationToken,
    ) -> BoxFuture<'_, Option<s::tree::TreeResult>> {
        Box::pin(async move {
            let decision = self
                .runner
                .emit_before(ev::SessionBeforeTreeEvent {
                    preparation,
                    signal,
                })
                .await;
            self.pump();
            decision
        })
    }

    fn session_tree(
        &self,
        new_leaf_id: Option<String>,
        old_leaf_id: Option<String>,
        summary_entry: Option<SessionEntry>,
        from_extension: Option<bool>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.runner
                .emit(ev::SessionTreeEvent {
                    new_leaf_id,
                    old_leaf_id,
                    summary_entry,
                    from_extension,
                })
                .await;
            self.pump();
        })
    }

    fn model_select(
        &self,
        model: Model,
        previous: Option<Model>,
        source: &str,
    ) -> BoxFuture<'_, ()> {
        let source = match source {
            "cycle" => ev::ModelSelectSource::Cycle,
            "restore" => ev::ModelSelectSource::Restore,
            _ => ev::ModelSelectSource::Set,
        };
        Box::pin(async move {
            self.runner
                .emit(ev::ModelSelectEvent {
                    model,
                    previous_model: previous,
                    source,
                })
                .await;
            self.pump();
        })
    }

    fn thinking_level_select(&self, level: ModelThinkingLevel, previous: ModelThinkingLevel) {
        self.runner.emit_detached(ev::ThinkingLevelSelectEvent {
            level,
            previous_level: previous,
        });
    }

    fn report_error(&self, error: s::ExtensionErrorInfo) {
        self.runner.report_error(ExtensionErrorRecord {
            extension_path: error.extension_path,
            event: error.event,
            error: error.error,
        });
    }
}
