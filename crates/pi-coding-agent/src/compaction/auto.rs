//! Automatic compaction inside a session: the `Compactor` the session layer calls.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession` compaction (spec §3.2, §3.5, §3.6, §2.4):
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
use pi_ai::{AssistantMessage, Message, StopReason};
use tokio_util::sync::CancellationToken;

use super::branch::branch_of;
use super::prepare::prepare_compaction;
use super::summarize::{SummarizationRetryEvent, Summarizer, SummaryRetry};
use super::tokens::{
    CompactionSettings, context_tokens, estimate_context_tokens, estimate_tokens, should_compact,
};
use crate::session::hooks::{CheckPhase, Compactor};
use crate::session::{
    AgentSession, AgentSessionEvent, CompactionReason, CompactionResult, SummarizationSource,
};
use crate::storage::context::iso_to_ms;
use crate::storage::{EntryKind, SessionEntry, build_session_context};

/// `compaction_end.errorMessage` when overflow recovery already ran once.
pub const OVERFLOW_EXHAUSTED: &str = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";
/// The same for a length stop.
pub const LENGTH_EXHAUSTED: &str =
    "Truncated response recovery failed after one compact-and-retry attempt.";

/// The session's automatic compaction.
#[derive(Debug, Default)]
pub struct AutoCompactor {
    /// Overflow recovery already attempted in this run.
    overflow_attempted: AtomicBool,
    compacting: AtomicBool,
    cancel: Mutex<Option<CancellationToken>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl AutoCompactor {
    /// A compactor with no recovery attempted yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn settings(session: &AgentSession) -> CompactionSettings {
        lock(session.settings()).compaction()
    }

    /// The root → leaf entries and the latest compaction's time (ms) on that branch.
    fn branch(session: &AgentSession) -> (Vec<Arc<SessionEntry>>, Option<i64>) {
        let store = lock(session.store());
        let branch = match store.leaf_id() {
            Some(leaf) => branch_of(&store, leaf).unwrap_or_default(),
            None => Vec::new(),
        };
        let latest = branch
            .iter()
            .rev()
            .find(|e| matches!(e.kind, EntryKind::Compaction { .. }))
            .map(|e| iso_to_ms(&e.timestamp));
        (branch, latest)
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
        let Some(model) = session.model() else {
            return false;
        };
        if !session.auth().has_auth(&model.provider) {
            return false;
        }
        let settings = Self::settings(session);
        let (branch, _) = Self::branch(session);
        let Ok(prep) = prepare_compaction(&branch, settings) else {
            return false;
        };
        let cancel = CancellationToken::new();
        *lock(&self.cancel) = Some(cancel.clone());
        self.compacting.store(true, Ordering::SeqCst);
        Self::emit(session, AgentSessionEvent::CompactionStart { reason });

        let retry = lock(session.settings()).retry();
        let events_session = session.clone();
        let summarizer = Summarizer {
            model: model.clone(),
            stream: session.agent().options().stream_fn.clone(),
            api_key: session.auth().api_key(&model.provider),
            headers: Vec::new(),
            thinking_level: session.thinking_level(),
            session_id: None,
            signal: cancel.clone(),
            retry: SummaryRetry {
                enabled: retry.enabled,
                max_retries: retry.max_retries,
                base_delay_ms: retry.base_delay_ms,
            },
            on_retry: Some(Arc::new(move |e| {
                let event = match e {
                    SummarizationRetryEvent::Scheduled {
                        attempt,
                        max_attempts,
                        delay_ms,
                        error_message,
                    } => AgentSessionEvent::SummarizationRetryScheduled {
                        attempt,
                        max_attempts,
                        delay_ms,
                        error_message,
                    },
                    SummarizationRetryEvent::AttemptStart { .. } => {
                        AgentSessionEvent::SummarizationRetryAttemptStart {
                            source: SummarizationSource::Compaction(reason),
                        }
                    }
                    SummarizationRetryEvent::Finished { .. } => {
                        AgentSessionEvent::SummarizationRetryFinished
                    }
                };
                Self::emit(&events_session, event);
            })),
        };
        let outcome = summarizer.compact(&prep, None).await;
        let applied = match outcome {
            _ if cancel.is_cancelled() => {
                Self::end_failed(session, reason, true, None);
                false
            }
            Err(e) => {
                let prefix = match reason {
                    CompactionReason::Overflow => "Context overflow recovery failed",
                    _ => "Auto-compaction failed",
                };
                Self::end_failed(session, reason, false, Some(format!("{prefix}: {e}")));
                false
            }
            Ok(result) => {
                let usage = result.usage.and_then(|u| serde_json::to_value(u).ok());
                let appended = lock(session.store()).append(EntryKind::Compaction {
                    summary: result.summary.clone(),
                    first_kept_entry_id: result.first_kept_entry_id.clone(),
                    tokens_before: result.tokens_before,
                    details: Some(result.details.clone()),
                    usage: usage.clone(),
                    from_hook: Some(false),
                });
                match appended {
                    Err(e) => {
                        Self::end_failed(session, reason, false, Some(e.to_string()));
                        false
                    }
                    Ok(_) => {
                        let rebuilt = {
                            let store = lock(session.store());
                            build_session_context(&store).map(|c| c.messages)
                        };
                        let mut messages = rebuilt.unwrap_or_default();
                        if will_retry
                            && matches!(
                                messages.last(),
                                Some(AgentMessage::Llm(Message::Assistant(a)))
                                    if matches!(a.stop_reason, StopReason::Error | StopReason::Length)
                            )
                        {
                            messages.pop();
                        }
                        let after: u64 = messages.iter().map(estimate_tokens).sum();
                        session.agent().set_messages(messages);
                        Self::emit(
                            session,
                            AgentSessionEvent::CompactionEnd {
                                reason,
                                result: Some(CompactionResult {
                                    summary: result.summary,
                                    first_kept_entry_id: result.first_kept_entry_id,
                                    tokens_before: result.tokens_before,
                                    estimated_tokens_after: Some(after),
                                    usage,
                                    details: Some(result.details),
                                }),
                                aborted: false,
                                will_retry,
                                error_message: None,
                            },
                        );
                        true
                    }
                }
            }
        };
        self.compacting.store(false, Ordering::SeqCst);
        *lock(&self.cancel) = None;
        applied
    }

    async fn check_message(
        &self,
        session: AgentSession,
        message: AssistantMessage,
        phase: CheckPhase,
    ) -> bool {
        let settings = Self::settings(&session);
        if !settings.enabled {
            return false;
        }
        if phase == CheckPhase::AfterRun && message.stop_reason == StopReason::Aborted {
            return false;
        }
        let (_, latest_compaction) = Self::branch(&session);
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
            && message.usage.output < model.max_tokens;
        if overflow || length_recovery {
            if message.stop_reason == StopReason::Stop {
                // Silent overflow: compact, never retry.
                self.run(&session, CompactionReason::Overflow, false).await;
                return false;
            }
            if self.overflow_attempted.swap(true, Ordering::SeqCst) {
                Self::end_failed(
                    &session,
                    CompactionReason::Overflow,
                    false,
                    Some(
                        if overflow {
                            OVERFLOW_EXHAUSTED
                        } else {
                            LENGTH_EXHAUSTED
                        }
                        .to_owned(),
                    ),
                );
                return false;
            }
            // Drop the failed assistant from the context (it stays in the file).
            let mut messages = session.agent().messages();
            if matches!(
                messages.last(),
                Some(AgentMessage::Llm(Message::Assistant(_)))
            ) {
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
                    |m| matches!(m, AgentMessage::Llm(Message::Assistant(a)) if a.timestamp <= t),
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
        message: AssistantMessage,
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
            AgentEvent::MessageStart { message } if message.role() == "user" => {
                self.overflow_attempted.store(false, Ordering::SeqCst);
            }
            AgentEvent::MessageEnd { message } => {
                if let AgentMessage::Llm(Message::Assistant(a)) = message
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

    fn abort(&self) {
        if let Some(c) = lock(&self.cancel).as_ref() {
            c.cancel();
        }
    }
}
