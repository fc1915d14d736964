//! Manual compaction (`compact {customInstructions?}`) on top of the session's public API.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession.compact` (spec §2.4 "Manual", §3.5): abort
//! the run, `compaction_start {reason:"manual"}` before every check, then the model and auth
//! checks, `prepareCompaction` (`Already compacted`, `Nothing to compact (session too
//! small)`), the default summary, the compaction entry, the rebuilt transcript and
//! `compaction_end {reason:"manual", result, aborted:false, willRetry:false}`. A failure ends
//! with `compaction_end {result: none, aborted:false, willRetry:false, errorMessage:
//! "Compaction failed: <msg>"}` and the command fails with `<msg>`.
//!
//! Not here: the `session_before_compact` / `session_compact` / `session_compact_failed`
//! extension events, and `isCompacting` while it runs (the session's compaction seam owns
//! both).

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::ManualCompaction;
use crate::compaction::branch::branch_of;
use crate::compaction::prepare::prepare_compaction;
use crate::compaction::summarize::{Summarizer, SummaryRetry};
use crate::compaction::tokens::estimate_tokens;
use crate::config::model_resolver::format_no_model_selected;
use crate::session::prompt::no_api_key;
use crate::session::{AgentSession, AgentSessionEvent, CompactionReason, CompactionResult};
use crate::storage::{EntryKind, build_session_context};

/// The default manual compaction; `docs_dir` names the docs in the no-model/no-key texts.
#[derive(Clone, Debug, Default)]
pub struct SessionCompaction {
    /// pi's documentation directory.
    pub docs_dir: PathBuf,
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn emit(session: &AgentSession, event: AgentSessionEvent) {
    if let Err(e) = session.emit_event(&event) {
        tracing::warn!("a session listener failed on a compaction event: {e}");
    }
}

impl SessionCompaction {
    async fn run(
        &self,
        session: &AgentSession,
        custom_instructions: Option<String>,
    ) -> Result<CompactionResult, String> {
        let model = session
            .model()
            .ok_or_else(|| format_no_model_selected(&self.docs_dir))?;
        if !session.auth().has_auth(&model.provider) {
            return Err(no_api_key(&model.provider, &self.docs_dir));
        }
        let settings = lock(session.settings()).compaction();
        let branch = {
            let store = lock(session.store());
            match store.leaf_id() {
                Some(leaf) => branch_of(&store, leaf).map_err(|e| e.to_string())?,
                None => Vec::new(),
            }
        };
        let prep = prepare_compaction(&branch, settings).map_err(|e| e.to_string())?;
        let retry = lock(session.settings()).retry();
        let summarizer = Summarizer {
            model: model.clone(),
            stream: session.agent().options().stream_fn.clone(),
            api_key: session.auth().api_key(&model.provider),
            headers: Vec::new(),
            thinking_level: session.thinking_level(),
            session_id: None,
            signal: CancellationToken::new(),
            retry: SummaryRetry {
                enabled: retry.enabled,
                max_retries: retry.max_retries,
                base_delay_ms: retry.base_delay_ms,
            },
            on_retry: None,
        };
        let result = summarizer
            .compact(&prep, custom_instructions.as_deref())
            .await?;
        let usage = result.usage.and_then(|u| serde_json::to_value(u).ok());
        let messages = {
            let mut store = lock(session.store());
            store
                .append(EntryKind::Compaction {
                    summary: result.summary.clone(),
                    first_kept_entry_id: result.first_kept_entry_id.clone(),
                    tokens_before: result.tokens_before,
                    details: Some(result.details.clone()),
                    usage: usage.clone(),
                    from_hook: Some(false),
                })
                .map_err(|e| e.to_string())?;
            build_session_context(&store)
                .map_err(|e| e.to_string())?
                .messages
        };
        let after: u64 = messages.iter().map(estimate_tokens).sum();
        session.agent().set_messages(messages);
        Ok(CompactionResult {
            summary: result.summary,
            first_kept_entry_id: result.first_kept_entry_id,
            tokens_before: result.tokens_before,
            estimated_tokens_after: Some(after),
            usage,
            details: Some(result.details),
        })
    }
}

impl ManualCompaction for SessionCompaction {
    fn compact(
        &self,
        session: AgentSession,
        custom_instructions: Option<String>,
    ) -> BoxFuture<'_, Result<Value, String>> {
        Box::pin(async move {
            session.abort().await;
            let reason = CompactionReason::Manual;
            emit(&session, AgentSessionEvent::CompactionStart { reason });
            match self.run(&session, custom_instructions).await {
                Ok(result) => {
                    emit(
                        &session,
                        AgentSessionEvent::CompactionEnd {
                            reason,
                            result: Some(result.clone()),
                            aborted: false,
                            will_retry: false,
                            error_message: None,
                        },
                    );
                    serde_json::to_value(result).map_err(|e| e.to_string())
                }
                Err(message) => {
                    emit(
                        &session,
                        AgentSessionEvent::CompactionEnd {
                            reason,
                            result: None,
                            aborted: false,
                            will_retry: false,
                            error_message: Some(format!("Compaction failed: {message}")),
                        },
                    );
                    Err(message)
                }
            }
        })
    }
}

/// The default [`ManualCompaction`] as a trait object.
pub fn session_compaction(docs_dir: impl Into<PathBuf>) -> Arc<dyn ManualCompaction> {
    Arc::new(SessionCompaction {
        docs_dir: docs_dir.into(),
    })
}
