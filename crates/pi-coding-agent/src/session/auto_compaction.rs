//! Automatic compaction inside a session: the `Compactor` the session layer calls.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession` compaction:
//! - after each low-level run and before each prompt, a context overflow (or a recoverable
//!   length stop) of the current model triggers an overflow compaction that drops the failed
//!   assistant from the context and retries once (a second overflow fails with pi's exhausted
//!   message); otherwise crossing `contextWindow − reserveTokens` triggers a threshold
//!   compaction;
//! - between turns, once tool results are in, the same threshold check runs on the context;
//! - events: `compaction_start {reason}`, then `compaction_end {reason, result?, aborted,
//!   willRetry, errorMessage?}`; the summary call's retries emit the
//!   `summarization_retry_*` events.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::{AgentContext, AgentEvent, AgentMessage};
use pi_ai::{AssistantMessage, StopReason};
use tokio_util::sync::CancellationToken;

use super::hooks::{BeforeCompactDecision, CheckPhase, Compactor};
use super::{
    AgentSession, AgentSessionEvent, CompactionReason, CompactionResult, SummarizationSource,
};
use crate::compaction::CompactionError;
use crate::compaction::branch::branch_of;
use crate::compaction::prepare::prepare_compaction;
use crate::compaction::tokens::{
    CompactionSettings, context_tokens, estimate_context_tokens, estimate_tokens, should_compact,
};
use crate::storage::context::iso_to_ms;
use crate::storage::{EntryKind, EntryType, SessionEntry, build_session_context};

/// `compaction_end.errorMessage` when overflow recovery already ran once.
pub const OVERFLOW_EXHAUSTED: &str = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";
/// The same for a length stop.
pub const LENGTH_EXHAUSTED: &str =
    "Truncated response recovery failed after one compact-and-retry attempt.";

/// One compaction to run.
struct Job {
    reason: CompactionReason,
    /// Whether the interrupted turn is retried afterwards (overflow recovery).
    will_retry: bool,
    /// `/compact <instructions>`.
    custom_instructions: Option<String>,
    /// The API key an automatic compaction resolved before `compaction_start` (pi resolves it
    /// first there, and a failure is silent); `None` resolves it after the start, where a
    /// failure ends the compaction (manual: `Compaction failed: API key auth failed for
    /// provider …`).
    resolved_key: Option<Option<String>>,
}

/// The session's automatic compaction.
#[derive(Debug, Default)]
pub struct AutoCompactor {
    /// Overflow recovery already attempted in this run.
    overflow_attempted: AtomicBool,
    compacting: AtomicBool,
    manual: AtomicBool,
    cancel: Mutex<Option<CancellationToken>>,
}

use crate::sync::lock;

impl AutoCompactor {
    /// A compactor with no recovery attempted yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn settings(session: &AgentSession) -> CompactionSettings {
        lock(session.settings()).compaction()
    }

    /// The entries of the current branch that a compaction reads: from the latest
    /// compaction's first kept entry to the leaf (the whole root → leaf path when there is no
    /// compaction, or its kept entry is not on the path). `prepare_compaction` looks at
    /// nothing before that entry, and the entries before it are on disk only: a long session
    /// reads its tail, not its history, at each check.
    fn branch(session: &AgentSession) -> Vec<Arc<SessionEntry>> {
        let store = lock(session.store());
        let mut positions = Vec::new();
        let mut kept: Option<String> = None;
        let mut cur = store.leaf_position();
        while let Some(i) = cur {
            positions.push(i);
            if positions.len() > store.len() {
                // A cycle in the parent links: the full walk reports it as it always did.
                drop(store);
                return Self::full_branch(session);
            }
            if kept.as_deref() == Some(store.id_at(i)) {
                break;
            }
            if kept.is_none() && *store.kind_at(i) == EntryType::Compaction {
                match store.entry_at(i).map(|e| e.kind.clone()) {
                    Ok(EntryKind::Compaction {
                        first_kept_entry_id,
                        ..
                    }) => kept = Some(first_kept_entry_id),
                    _ => {
                        drop(store);
                        return Self::full_branch(session);
                    }
                }
            }
            cur = store.parent_position(i);
        }
        positions.reverse();
        positions
            .into_iter()
            .map(|i| store.entry_at(i))
            .collect::<Result<Vec<_>, _>>()
            .unwrap_or_default()
    }

    /// Every entry from the root to the leaf.
    fn full_branch(session: &AgentSession) -> Vec<Arc<SessionEntry>> {
        let store = lock(session.store());
        match store.leaf_id() {
            Some(leaf) => branch_of(&store, leaf).unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// The time (ms) of the latest compaction on the current branch. Walks the index only and
    /// reads that one entry: the checks run before every prompt and after every run, and a
    /// resumed session may hold a hundred thousand entries.
    fn latest_compaction_ms(session: &AgentSession) -> Option<i64> {
        let store = lock(session.store());
        let mut cur = store.leaf_position();
        let mut steps = 0usize;
        while let Some(i) = cur {
            if *store.kind_at(i) == EntryType::Compaction {
                return store.entry_at(i).ok().map(|e| iso_to_ms(&e.timestamp));
            }
            steps += 1;
            if steps > store.len() {
                return None; // a cycle
            }
            cur = store.parent_position(i);
        }
        None
    }

    fn emit(session: &AgentSession, event: AgentSessionEvent) {
        if let Err(e) = session.emit_event(&event) {
            tracing::warn!("a session listener failed on a compaction event: {e}");
        }
    }

    fn end_failed(
        session: &AgentSession,
        reason: CompactionReason,
        aborted: bool,
        error: Option<String>,
    ) {
        Self::emit(
            session,
            AgentSessionEvent::CompactionEnd {
                reason,
                result: None,
                aborted,
                will_retry: false,
                error_message: if aborted { None } else { error },
            },
        );
    }

    /// Runs one automatic compaction; `true` when a compaction entry was applied.
    async fn run(
        &self,
        session: &AgentSession,
        reason: CompactionReason,
        will_retry: bool,
    ) -> bool {
        // Automatic: failures before `compaction_start` are silent.
        let Some(model) = session.model() else {
            return false;
        };
        if session.auth().credential_error(&model.provider).is_some()
            || !session.auth().has_auth(&model.provider)
        {
            return false;
        }
        let Ok(api_key) = session.summary_api_key(&model).await else {
            return false;
        };
        let branch = Self::branch(session);
        if prepare_compaction(&branch, Self::settings(session)).is_err() {
            return false;
        }
        let job = Job {
            reason,
            will_retry,
            custom_instructions: None,
            resolved_key: Some(api_key),
        };
        self.execute(session, job).await.is_ok()
    }

    /// `compaction_start`, the summary, the entry, then `session_compact` and `compaction_end`
    /// (or `compaction_end` and `session_compact_failed`). Every failure after the start is
    /// reported as pi reports it for `reason` and returned as `Err(original error)`.
    ///
    /// Mirrors pi 0.85.0 `AgentSession.compact` / `_runAutoCompaction`: a manual compaction
    /// restores idle (`is_compacting() == false`) before `compaction_end` so its listeners may
    /// submit prompts; an automatic one stays compacting through `compaction_end` and the
    /// hooks and ends afterwards. `session_compact_failed.fromExtension` is true
    /// when a `session_before_compact` handler had supplied the content.
    ///
    async fn execute(
        &self,
        session: &AgentSession,
        job: Job,
    ) -> Result<CompactionResult, CompactionError> {
        let (reason, will_retry) = (job.reason, job.will_retry);
        let cancel = CancellationToken::new();
        *lock(&self.cancel) = Some(cancel.clone());
        self.compacting.store(true, Ordering::SeqCst);
        let manual = reason == CompactionReason::Manual;
        if manual {
            self.manual.store(true, Ordering::SeqCst);
        }
        Self::emit(session, AgentSessionEvent::CompactionStart { reason });
        let mut from_extension = false;
        let outcome = self
            .summarize_and_apply(session, job, &cancel, &mut from_extension)
            .await;
        let outcome = match outcome {
            Ok((result, entry)) => {
                session
                    .hooks()
                    .session_compact(entry, reason, will_retry)
                    .await;
                if manual {
                    self.finish(session);
                }
                Self::emit(
                    session,
                    AgentSessionEvent::CompactionEnd {
                        reason,
                        result: Some(result.clone()),
                        aborted: false,
                        will_retry,
                        error_message: None,
                    },
                );
                Ok(result)
            }
            Err(error) => {
                let aborted = cancel.is_cancelled() || matches!(error, CompactionError::Cancelled);
                let message = match reason {
                    CompactionReason::Manual => format!("Compaction failed: {error}"),
                    CompactionReason::Overflow => {
                        format!("Context overflow recovery failed: {error}")
                    }
                    CompactionReason::Threshold => format!("Auto-compaction failed: {error}"),
                };
                let message = (!aborted).then_some(message);
                if manual {
                    self.finish(session);
                }
                Self::end_failed(session, reason, aborted, message.clone());
                session
                    .hooks()
                    .session_compact_failed(reason, message, aborted, from_extension)
                    .await;
                Err(error)
            }
        };
        if !manual {
            self.finish(session);
        }
        outcome
    }

    /// Leaves the compacting state and wakes `wait_for_idle` (an `abort()` during a manual
    /// compaction waits for its end).
    fn finish(&self, session: &AgentSession) {
        self.compacting.store(false, Ordering::SeqCst);
        self.manual.store(false, Ordering::SeqCst);
        *lock(&self.cancel) = None;
        session.notify_idle_changed();
    }

    async fn summarize_and_apply(
        &self,
        session: &AgentSession,
        job: Job,
        cancel: &CancellationToken,
        from_extension: &mut bool,
    ) -> Result<(CompactionResult, SessionEntry), CompactionError> {
        let Job {
            reason,
            will_retry,
            custom_instructions,
            resolved_key,
        } = job;
        let model = session.model().ok_or(CompactionError::NoModel)?;
        if let Some(e) = session.auth().credential_error(&model.provider) {
            return Err(CompactionError::Auth(e));
        }
        if !session.auth().has_auth(&model.provider) {
            return Err(CompactionError::NoApiKey(model.provider.clone()));
        }
        let api_key = match resolved_key {
            Some(key) => key,
            None => session
                .summary_api_key(&model)
                .await
                .map_err(|e| CompactionError::Auth(e.to_string()))?,
        };
        let settings = Self::settings(session);
        let branch = Self::branch(session);
        let prep = prepare_compaction(&branch, settings)?;
        let summarizer = session.summarizer(
            model.clone(),
            api_key,
            cancel,
            SummarizationSource::Compaction(reason),
        );
        let decision = session
            .hooks()
            .session_before_compact(
                prep.clone(),
                branch.iter().map(|e| (**e).clone()).collect(),
                custom_instructions.clone(),
                reason,
                will_retry,
                cancel.clone(),
            )
            .await;
        let (result, from_hook) = match decision {
            Some(d) if d.cancel => return Err(CompactionError::Cancelled),
            Some(BeforeCompactDecision {
                compaction: Some(supplied),
                ..
            }) => {
                *from_extension = true;
                (Ok(supplied), true)
            }
            _ => (
                summarizer
                    .compact(&prep, custom_instructions.as_deref())
                    .await,
                false,
            ),
        };
        if cancel.is_cancelled() {
            return Err(CompactionError::Cancelled);
        }
        let result = result?;
        let usage = result.usage.and_then(|u| serde_json::to_value(u).ok());
        let entry = {
            let mut store = lock(session.store());
            let id = store.append(EntryKind::Compaction {
                summary: result.summary.clone(),
                first_kept_entry_id: result.first_kept_entry_id.clone(),
                tokens_before: result.tokens_before,
                details: Some(result.details.clone()),
                usage: usage.clone(),
                from_hook: Some(from_hook),
            })?;
            store.get(&id)?
        };
        let rebuilt = {
            let store = lock(session.store());
            build_session_context(&store).map(|c| c.messages)
        };
        let mut messages = rebuilt?;
        if will_retry
            && matches!(
                messages.last(),
                Some(AgentMessage::Assistant(a))
                    if matches!(a.stop_reason, StopReason::Error | StopReason::Length)
            )
        {
            messages.pop();
        }
        let after: u64 = messages.iter().map(estimate_tokens).sum();
        session.agent().set_messages(messages);
        Ok((
            CompactionResult {
                summary: result.summary,
                first_kept_entry_id: result.first_kept_entry_id,
                tokens_before: result.tokens_before,
                estimated_tokens_after: Some(after),
                usage,
                details: Some(result.details),
            },
            (*entry).clone(),
        ))
    }

    async fn check_message(
        &self,
        session: AgentSession,
        message: Arc<AssistantMessage>,
        phase: CheckPhase,
    ) -> bool {
        let settings = Self::settings(&session);
        if !settings.enabled {
            return false;
        }
        if phase == CheckPhase::AfterRun && message.stop_reason == StopReason::Aborted {
            return false;
        }
        let latest_compaction = Self::latest_compaction_ms(&session);
        if latest_compaction.is_some_and(|t| message.timestamp <= t) {
            return false;
        }
        let Some(model) = session.model() else {
            return false;
        };
        let same_model = message.provider == model.provider && message.model == model.id;
        let overflow = same_model
            && pi_ai::overflow::is_context_overflow(&message, Some(model.context_window));
        let length_recovery = same_model
            && message.stop_reason == StopReason::Length
            && model.max_tokens > 0
            && message.usage.output < model.max_tokens as f64;
        if overflow || length_recovery {
            if message.stop_reason == StopReason::Stop {
                // Silent overflow: compact, never retry.
                self.run(&session, CompactionReason::Overflow, false).await;
                return false;
            }
            if self.overflow_attempted.swap(true, Ordering::SeqCst) {
                let message = Some(
                    if overflow {
                        OVERFLOW_EXHAUSTED
                    } else {
                        LENGTH_EXHAUSTED
                    }
                    .to_owned(),
                );
                Self::end_failed(&session, CompactionReason::Overflow, false, message.clone());
                session
                    .hooks()
                    .session_compact_failed(CompactionReason::Overflow, message, false, false)
                    .await;
                return false;
            }
            // Drop the failed assistant from the context (it stays in the file).
            let mut messages = session.agent().messages();
            if matches!(messages.last(), Some(AgentMessage::Assistant(_))) {
                messages.pop();
                session.agent().set_messages(messages);
            }
            return self.run(&session, CompactionReason::Overflow, true).await
                && phase == CheckPhase::AfterRun;
        }
        let tokens =
            if message.stop_reason == StopReason::Error || context_tokens(&message.usage) == 0 {
                let estimate = estimate_context_tokens(&session.agent().messages());
                // An estimate anchored on an assistant older than the latest compaction is stale.
                let stale = match (estimate.last_usage_index, latest_compaction) {
                    (Some(i), Some(t)) => session.agent().messages().get(i).is_some_and(
                        |m| matches!(m, AgentMessage::Assistant(a) if a.timestamp <= t),
                    ),
                    _ => false,
                };
                if stale {
                    return false;
                }
                estimate.tokens
            } else {
                context_tokens(&message.usage)
            };
        if should_compact(tokens, model.context_window, &settings) {
            self.run(&session, CompactionReason::Threshold, false).await;
        }
        false
    }
}

impl Compactor for AutoCompactor {
    fn check(
        &self,
        session: AgentSession,
        message: Arc<AssistantMessage>,
        phase: CheckPhase,
    ) -> BoxFuture<'_, bool> {
        Box::pin(self.check_message(session, message, phase))
    }

    fn before_next_turn(
        &self,
        session: AgentSession,
        context: Arc<AgentContext>,
    ) -> BoxFuture<'_, Option<Vec<AgentMessage>>> {
        Box::pin(async move {
            let settings = Self::settings(&session);
            let model = session.model()?;
            let estimate = estimate_context_tokens(&context.messages);
            if !should_compact(estimate.tokens, model.context_window, &settings) {
                return None;
            }
            if self.run(&session, CompactionReason::Threshold, false).await {
                Some(session.agent().messages())
            } else {
                None
            }
        })
    }

    fn observe(&self, event: &AgentEvent) {
        match event {
            AgentEvent::MessageStart {
                message: AgentMessage::User(_),
            } => {
                self.overflow_attempted.store(false, Ordering::SeqCst);
            }
            AgentEvent::MessageEnd { message } => {
                if let AgentMessage::Assistant(a) = message
                    && !matches!(a.stop_reason, StopReason::Error | StopReason::Length)
                {
                    self.overflow_attempted.store(false, Ordering::SeqCst);
                }
            }
            _ => {}
        }
    }

    fn is_compacting(&self) -> bool {
        self.compacting.load(Ordering::SeqCst)
    }

    fn is_manual_compacting(&self) -> bool {
        self.manual.load(Ordering::SeqCst)
    }

    fn compact_manual(
        &self,
        session: AgentSession,
        custom_instructions: Option<String>,
    ) -> BoxFuture<'_, Result<CompactionResult, CompactionError>> {
        Box::pin(async move {
            let job = Job {
                reason: CompactionReason::Manual,
                will_retry: false,
                custom_instructions,
                resolved_key: None,
            };
            self.execute(&session, job).await
        })
    }

    fn abort(&self) {
        if let Some(c) = lock(&self.cancel).as_ref() {
            c.cancel();
        }
    }
}
