//! `AgentSession`: the product-level session around one [`Agent`].
//!
//! Mirrors pi-coding-agent 0.85.0 `core/agent-session.ts`: the session is
//! one awaited listener on its agent (`handler`) that re-publishes every event to its
//! own synchronous listeners, persists messages at `message_end`, and drives the product
//! run: prompt preflight (`run`), auto-retry and compaction continuations, queues,
//! injected messages, and `agent_settled`.
//!
//! An [`AgentSession`] is a cheap handle (`Clone` shares it): listeners, hooks and other tasks
//! may call `steer`, `abort`, … while a run is in progress.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use pi_agent_core::{Agent, AgentMessage, HookError, ListenerError, Subscription};
use pi_ai::{AssistantMessage, Model, ModelThinkingLevel};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::durability::{Durability, StoreBarrier};
use super::events::AgentSessionEvent;
use super::hooks::{Compactor, SessionHooks};
use super::prompt::{AuthSource, SessionError};
use super::queues::DisplayQueues;
use crate::config::settings::SettingsManager;
use crate::config::skills::Skill;
use crate::config::templates::PromptTemplate;
use crate::storage::{EntryKind, SessionStore};

/// A session listener: called synchronously, in subscription order, for every event. An
/// `Err` (or a panic) stops the delivery of that event and fails the run it belongs to.
pub type SessionListener =
    Arc<dyn Fn(&AgentSessionEvent) -> Result<(), ListenerError> + Send + Sync>;

pub(super) use crate::sync::lock;

/// Mutable session bookkeeping (one lock; never held across an `await`).
#[derive(Default)]
pub(super) struct SessionState {
    pub queues: DisplayQueues,
    /// Custom messages held for the next prompt (`deliverAs: "nextTurn"`).
    pub pending_next_turn: Vec<AgentMessage>,
    /// Context-only custom messages deferred to the current `turn_end`.
    pub pending_custom: Vec<AgentMessage>,
    /// A product-level run is active (`isStreaming`).
    pub run_active: bool,
    pub turn_index: usize,
    /// The last assistant message of the current low-level run (for `postRun`).
    pub last_assistant: Option<Arc<AssistantMessage>>,
    pub retry_attempt: u32,
    /// Cancels the retry backoff sleep while one is pending (`isRetrying`).
    pub retry_cancel: Option<CancellationToken>,
    pub base_system_prompt: String,
    /// `before_agent_start`'s system prompt for the current run.
    pub system_prompt_override: Option<String>,
    /// Whether a real model was chosen (else the agent holds pi's `unknown` placeholder).
    pub has_model: bool,
    /// `bashExecution` messages deferred while a run streams.
    pub pending_bash: Vec<AgentMessage>,
    /// Running user commands.
    pub bash_cancel: Vec<(u64, CancellationToken)>,
    pub bash_next: u64,
    /// The `--models` scope.
    pub scoped_models: Vec<super::models::ScopedModel>,
    /// Cancels the running tree navigation's branch summary (`tree.rs`).
    pub branch_summary_cancel: Option<CancellationToken>,
}

pub(super) struct Inner {
    pub agent: Agent,
    pub store: Arc<Mutex<SessionStore>>,
    pub settings: Arc<Mutex<SettingsManager>>,
    pub hooks: Arc<dyn SessionHooks>,
    pub compactor: Arc<dyn Compactor>,
    pub auth: Arc<dyn AuthSource>,
    pub docs_dir: PathBuf,
    pub agent_dir: Option<PathBuf>,
    pub skills: Vec<Skill>,
    pub templates: Vec<PromptTemplate>,
    /// Rebuilds the base system prompt for a set of active tools (see
    /// [`AgentSession::set_active_tools`]).
    pub prompt_for_tools: Option<SystemPromptFn>,
    pub state: Mutex<SessionState>,
    pub listeners: Mutex<(u64, Vec<(u64, SessionListener)>)>,
    /// Bumped whenever the session may have become idle.
    pub idle: watch::Sender<u64>,
    pub agent_subscription: Mutex<Option<Subscription>>,
    /// Entry writes announced to listeners and not yet finished.
    pub durability: Durability,
}

pub use crate::config::system_prompt::SystemPromptFn;

/// The session (a shared handle).
///
/// # When an entry is in the session file
///
/// Listeners see `message_end` of a message the session persists (`user`, `assistant`,
/// `toolResult`, `custom`) *before* the session appends it to the store, as in pi: a
/// listener may still look at the store without it. The append follows at once, before the
/// next event; a listener that forwards the event (to stdout, a socket, a UI's "done" state)
/// and means "it is saved" takes [`AgentSession::store_barrier`] while it runs and waits on
/// it before publishing — the `pi` binary's json and rpc output does exactly that, so a
/// printed `message_end` is in the file. Every other event that reports an entry
/// (`session_info_changed`, `thinking_level_changed`, `entry_appended`, `compaction_end`, the
/// custom messages an extension sends, a model change, tree navigation and its
/// `branch_summary`/label entries) is emitted after its entry was written, and so is
/// everything the session returns (`set_session_name`, `navigate_tree`, …).
///
/// "Written" means the store's `write` returned (the bytes survive the process being
/// killed) and, for assistant messages and compactions, which the store `fdatasync`s, that
/// the sync returned. One exception, as in pi: a new session writes nothing before its first
/// assistant message, and then writes the header and every entry so far at once.
#[derive(Clone)]
pub struct AgentSession {
    pub(super) inner: Arc<Inner>,
}

impl std::fmt::Debug for AgentSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSession")
            .field("session_id", &self.session_id())
            .field("is_streaming", &self.is_streaming())
            .finish_non_exhaustive()
    }
}

/// A weak handle ([`AgentSession::downgrade`]): what long-lived parts of the session itself
/// (an extension runner, a compactor) keep, so that the session and its parts do not keep each
/// other alive.
#[derive(Clone, Debug)]
pub struct WeakAgentSession(Weak<Inner>);

impl WeakAgentSession {
    /// The session, if it still exists.
    pub fn upgrade(&self) -> Option<AgentSession> {
        self.0.upgrade().map(AgentSession::from_inner)
    }
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner").finish_non_exhaustive()
    }
}

/// Removes a session listener ([`AgentSession::subscribe`]); dropping it keeps the listener.
#[derive(Debug)]
pub struct SessionSubscription {
    inner: Weak<Inner>,
    id: u64,
}

impl SessionSubscription {
    /// Removes the listener; `false` if it was already gone.
    pub fn unsubscribe(&self) -> bool {
        let Some(inner) = self.inner.upgrade() else {
            return false;
        };
        let mut l = lock(&inner.listeners);
        let before = l.1.len();
        l.1.retain(|(i, _)| *i != self.id);
        l.1.len() != before
    }
}

impl AgentSession {
    pub(super) fn from_inner(inner: Arc<Inner>) -> Self {
        AgentSession { inner }
    }

    /// A weak handle to this session.
    pub fn downgrade(&self) -> WeakAgentSession {
        WeakAgentSession(self.weak())
    }

    pub(super) fn weak(&self) -> Weak<Inner> {
        Arc::downgrade(&self.inner)
    }

    pub(super) fn state(&self) -> MutexGuard<'_, SessionState> {
        lock(&self.inner.state)
    }

    // ----- listeners -----------------------------------------------------------------------

    /// Adds a listener (called synchronously for every event, in subscription order).
    pub fn subscribe(
        &self,
        f: impl Fn(&AgentSessionEvent) -> Result<(), ListenerError> + Send + Sync + 'static,
    ) -> SessionSubscription {
        let mut l = lock(&self.inner.listeners);
        l.0 += 1;
        let id = l.0;
        l.1.push((id, Arc::new(f)));
        SessionSubscription {
            inner: self.weak(),
            id,
        }
    }

    /// Delivers `event` to the listeners in order (pi's `_emit`); the first failure (an `Err`
    /// or a panic) stops the delivery and is returned. Public for the compaction and extension
    /// seams, which publish `compaction_*`, `entry_appended`, … themselves.
    pub fn emit_event(&self, event: &AgentSessionEvent) -> Result<(), ListenerError> {
        let listeners: Vec<SessionListener> = lock(&self.inner.listeners)
            .1
            .iter()
            .map(|(_, l)| Arc::clone(l))
            .collect();
        for l in listeners {
            match std::panic::catch_unwind(AssertUnwindSafe(|| l(event))) {
                Ok(r) => r?,
                Err(p) => return Err(HookError::new(panic_text(p))),
            }
        }
        Ok(())
    }

    pub(super) fn emit_queue_update(&self) -> Result<(), ListenerError> {
        let (steering, follow_up) = self.state().queues.snapshot();
        self.emit_event(&AgentSessionEvent::QueueUpdate {
            steering,
            follow_up,
        })
    }

    /// A barrier passed once every entry write pending now has finished: taken inside a
    /// listener of `message_end`, it waits for that message's append (see the type's docs).
    /// Passed at once when nothing is pending.
    pub fn store_barrier(&self) -> StoreBarrier {
        self.inner.durability.barrier()
    }

    /// The session's record of pending entry writes, for a listener that must not keep the
    /// session alive ([`Durability::barrier`] is [`AgentSession::store_barrier`]).
    pub fn durability(&self) -> Durability {
        self.inner.durability.clone()
    }

    // ----- accessors -----------------------------------------------------------------------

    /// The agent (shared handle).
    pub fn agent(&self) -> &Agent {
        &self.inner.agent
    }

    /// Where API keys come from.
    pub fn auth(&self) -> &Arc<dyn AuthSource> {
        &self.inner.auth
    }

    /// The session store (shared; lock it briefly, never across an `await`).
    pub fn store(&self) -> &Arc<Mutex<SessionStore>> {
        &self.inner.store
    }

    /// The settings (shared).
    pub fn settings(&self) -> &Arc<Mutex<SettingsManager>> {
        &self.inner.settings
    }

    /// The extension hooks.
    pub fn hooks(&self) -> &Arc<dyn SessionHooks> {
        &self.inner.hooks
    }

    /// The current model; `None` when none was resolved (the agent then holds pi's `unknown`
    /// placeholder).
    pub fn model(&self) -> Option<Model> {
        self.state()
            .has_model
            .then(|| self.inner.agent.with_state(|s| s.model.clone()))
    }

    /// The current thinking level.
    pub fn thinking_level(&self) -> ModelThinkingLevel {
        self.inner.agent.with_state(|s| s.thinking_level)
    }

    /// A copy of the transcript (custom roles included).
    pub fn messages(&self) -> Vec<AgentMessage> {
        self.inner.agent.messages()
    }

    /// `getLastAssistantText()`: the text blocks of the last assistant message (skipping
    /// aborted ones without content), concatenated and trimmed; `None` when empty.
    pub fn last_assistant_text(&self) -> Option<String> {
        self.inner.agent.with_state(|s| {
            let last = s.messages.iter().rev().find_map(|m| match m {
                AgentMessage::Assistant(a)
                    if !(a.stop_reason == pi_ai::StopReason::Aborted && a.content.is_empty()) =>
                {
                    Some(a)
                }
                _ => None,
            })?;
            let text: String = last
                .content
                .iter()
                .filter_map(|c| match c {
                    pi_ai::AssistantContent::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect();
            let text = text.trim();
            (!text.is_empty()).then(|| text.to_owned())
        })
    }

    /// The prompt templates the session was built with (`/name` commands).
    pub fn prompt_templates(&self) -> &[PromptTemplate] {
        &self.inner.templates
    }

    /// The skills the session was built with (`/skill:name` commands).
    pub fn skills(&self) -> &[Skill] {
        &self.inner.skills
    }

    /// The effective system prompt (including a run's `before_agent_start` override).
    pub fn system_prompt(&self) -> String {
        self.inner.agent.with_state(|s| s.system_prompt.clone())
    }

    /// What the HTML export shows beside the session file: the effective system prompt and
    /// the active tools (pi 0.85.0 `exportSessionToHtml` passes the agent's state the same way).
    pub fn html_extras(&self) -> crate::storage::export::HtmlExtras {
        self.inner
            .agent
            .with_state(|s| crate::storage::export::HtmlExtras {
                system_prompt: Some(s.system_prompt.clone()),
                tools: s
                    .tools
                    .iter()
                    .map(|t| crate::storage::export::ExportedTool {
                        name: t.name().to_owned(),
                        description: t.description().to_owned(),
                        parameters: t.parameters().clone(),
                    })
                    .collect(),
            })
    }

    /// Makes `tools` the active tools, in that order (pi 0.85.0 `setActiveToolsByName`). The
    /// same list again (the same tools, by identity, in the same order) changes nothing;
    /// otherwise the agent's tools are replaced and, when the session was built with
    /// [`super::AgentSessionBuilder::system_prompt_for_tools`], the base system prompt is
    /// rebuilt for the new tools (their snippets and guidelines included).
    pub fn set_active_tools(&self, tools: Vec<Arc<dyn pi_agent_core::AgentTool>>) {
        let unchanged = self.inner.agent.with_state(|st| {
            st.tools.len() == tools.len()
                && st.tools.iter().zip(&tools).all(|(a, b)| Arc::ptr_eq(a, b))
        });
        if unchanged {
            return;
        }
        let prompt = self
            .inner
            .prompt_for_tools
            .as_ref()
            .map(|rebuild| rebuild(&tools));
        self.inner.agent.set_tools(tools);
        if let Some(prompt) = prompt {
            self.set_base_system_prompt(prompt);
        }
    }

    /// Sets the base system prompt (used by every run without an override).
    pub fn set_base_system_prompt(&self, prompt: impl Into<String>) {
        let prompt = prompt.into();
        let mut st = self.state();
        st.base_system_prompt = prompt.clone();
        if st.system_prompt_override.is_none() {
            self.inner.agent.set_system_prompt(prompt);
        }
    }

    /// Whether a product-level run (retries, compactions, continuations included) is active.
    pub fn is_streaming(&self) -> bool {
        self.state().run_active
    }

    /// Whether a compaction or a tree navigation (branch summary) is running.
    pub fn is_compacting(&self) -> bool {
        self.inner.compactor.is_compacting() || self.state().branch_summary_cancel.is_some()
    }

    /// `!is_streaming && !is_compacting`.
    pub fn is_idle(&self) -> bool {
        !self.is_streaming() && !self.is_compacting()
    }

    /// Whether a retry backoff is pending.
    pub fn is_retrying(&self) -> bool {
        self.state().retry_cancel.is_some()
    }

    /// The current retry attempt (0 when not retrying).
    pub fn retry_attempt(&self) -> u32 {
        self.state().retry_attempt
    }

    /// Queued steering plus follow-up messages.
    pub fn pending_message_count(&self) -> usize {
        self.state().queues.len()
    }

    /// Texts of the queued steering messages.
    pub fn steering_messages(&self) -> Vec<String> {
        self.state().queues.snapshot().0
    }

    /// Texts of the queued follow-up messages.
    pub fn follow_up_messages(&self) -> Vec<String> {
        self.state().queues.snapshot().1
    }

    /// The session id.
    pub fn session_id(&self) -> String {
        lock(&self.inner.store).session_id().to_owned()
    }

    /// The session file (`None` in memory).
    pub fn session_file(&self) -> Option<PathBuf> {
        lock(&self.inner.store).path().map(PathBuf::from)
    }

    /// `retry.enabled`.
    pub fn auto_retry_enabled(&self) -> bool {
        lock(&self.inner.settings).retry().enabled
    }

    /// Sets `retry.enabled`.
    pub fn set_auto_retry_enabled(&self, enabled: bool) {
        lock(&self.inner.settings).set_retry_enabled(enabled);
    }

    // ----- idle, abort, lifecycle ----------------------------------------------------------

    /// Wakes [`AgentSession::wait_for_idle`] waiters; the compaction seam calls it when a
    /// compaction ends.
    pub fn notify_idle_changed(&self) {
        self.inner.idle.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// Resolves at once when idle, else at the next idle transition (after `agent_settled`
    /// or the end of a compaction).
    pub async fn wait_for_idle(&self) {
        let mut rx = self.inner.idle.subscribe();
        loop {
            if self.is_idle() {
                return;
            }
            if rx.changed().await.is_err() {
                return;
            }
        }
    }

    /// Cancels a pending retry backoff (`auto_retry_end {finalError:"Retry cancelled"}`).
    pub fn abort_retry(&self) {
        if let Some(t) = &self.state().retry_cancel {
            t.cancel();
        }
    }

    /// Aborts the retry, compaction, branch summary and agent run, then waits for idle.
    /// Queues are kept.
    pub async fn abort(&self) {
        self.abort_retry();
        self.inner.compactor.abort();
        self.abort_branch_summary();
        self.inner.agent.abort();
        self.wait_for_idle().await;
    }

    /// `compact(customInstructions?)`: aborts the current run, then compacts the session by
    /// hand (events `compaction_start` → `compaction_end`, and `session_compact` or
    /// `session_compact_failed`). Errors carry pi's texts, e.g. `Already compacted` or
    /// `Nothing to compact (session too small)`.
    pub async fn compact(
        &self,
        custom_instructions: Option<String>,
    ) -> Result<super::CompactionResult, crate::compaction::CompactionError> {
        self.abort().await;
        let compactor = Arc::clone(&self.inner.compactor);
        compactor
            .compact_manual(self.clone(), custom_instructions)
            .await
    }

    /// Binds the hooks: awaits `session_start {reason}` (pi's `bindExtensions`; default
    /// reason `startup`).
    pub async fn bind_hooks(
        &self,
        reason: super::SessionStartReason,
        previous_session_file: Option<String>,
    ) {
        self.inner
            .hooks
            .session_start(reason, previous_session_file)
            .await;
    }

    /// Ends the session: aborts everything, awaits `session_shutdown {reason}`, and detaches
    /// from the agent and the listeners (pi: teardown then `dispose()`).
    pub async fn shutdown(
        &self,
        reason: super::ShutdownReason,
        target_session_file: Option<String>,
    ) {
        self.abort().await;
        self.inner
            .hooks
            .session_shutdown(reason, target_session_file)
            .await;
        self.dispose();
    }

    /// Aborts everything without waiting, unsubscribes from the agent, drops the listeners.
    pub fn dispose(&self) {
        self.abort_retry();
        self.abort_bash();
        self.inner.compactor.abort();
        self.abort_branch_summary();
        self.inner.agent.abort();
        if let Some(s) = lock(&self.inner.agent_subscription).take() {
            s.unsubscribe();
        }
        lock(&self.inner.listeners).1.clear();
    }

    // ----- entries ---------------------------------------------------------------------------

    /// Sets (or, with an empty name, clears) the session name: a `session_info` entry and
    /// `session_info_changed` (pi's `setSessionName`).
    ///
    /// # Errors
    /// Store or listener failures.
    pub fn set_session_name(&self, name: &str) -> Result<(), SessionError> {
        let name = crate::storage::tree::normalize_session_name(name);
        let mut store = lock(&self.inner.store);
        store.append(EntryKind::SessionInfo {
            name: Some(name.clone()),
        })?;
        drop(store);
        let name = (!name.is_empty()).then_some(name);
        self.emit_event(&AgentSessionEvent::SessionInfoChanged { name })
            .map_err(SessionError::Listener)
    }

    /// `pi.appendEntry(customType, data)`: a `custom` entry and `entry_appended`.
    ///
    /// # Errors
    /// Store or listener failures.
    pub fn append_custom_entry(
        &self,
        custom_type: &str,
        data: Option<serde_json::Value>,
    ) -> Result<(), SessionError> {
        let mut store = lock(&self.inner.store);
        let id = store.append(EntryKind::Custom {
            custom_type: custom_type.to_owned(),
            data,
        })?;
        let entry = store.get(&id)?;
        drop(store);
        self.emit_event(&AgentSessionEvent::EntryAppended {
            entry: (*entry).clone(),
        })
        .map_err(SessionError::Listener)
    }
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_owned()
    }
}
