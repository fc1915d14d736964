//! The summarizer of the session's own summaries (compaction, branch summaries): one place
//! that picks the model's key, the session's stream function, thinking level and retry
//! settings, and turns retries into `summarization_retry_*` events.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/agent-session.ts` (`_runAutoCompaction`,
//! `compact`, `navigateTree`: each calls the summary with `this.model`, its API key,
//! `this.agent.streamFn`, the thinking level and the `retry` settings).

use std::sync::Arc;

use pi_ai::Model;
use tokio_util::sync::CancellationToken;

use super::agent_session::lock;
use super::{AgentSession, AgentSessionEvent, SummarizationSource};
use crate::compaction::{SummarizationRetryEvent, Summarizer, SummaryRetry};

impl AgentSession {
    /// The key of a summary request to `model`, resolved as a prompt's is: an OAuth
    /// credential about to expire is refreshed first (under the `auth.json` lock), so a
    /// compaction or branch summary never goes out with a stale token (pi's
    /// `_getSummarizationRequestAuth` goes through the same `getAuth` as prompts).
    ///
    /// Errors: the refresh's text (`OAuth refresh failed for <p>: …`); the key's resolution
    /// error.
    pub(crate) async fn summary_api_key(
        &self,
        model: &Model,
    ) -> Result<Option<String>, crate::config::registry::RequestAuthError> {
        if let Some(refresh) = self.auth().prepare_request(model) {
            refresh.await?;
        }
        self.auth().resolve_api_key(&model.provider)
    }

    /// A [`Summarizer`] for `model` with `api_key` (the caller resolves it with
    /// [`AuthSource::resolve_api_key`](super::AuthSource::resolve_api_key), as pi's
    /// `_getSummarizationRequestAuth` fails the summary with the key's resolution error), the
    /// session's stream function, thinking level and `retry` settings, cancelled by `cancel`. Retries are emitted as
    /// `summarization_retry_scheduled` / `_attempt_start {source}` / `_finished` (the session
    /// is held weakly; a failing listener is logged).
    pub(crate) fn summarizer(
        &self,
        model: Model,
        api_key: Option<String>,
        cancel: &CancellationToken,
        source: SummarizationSource,
    ) -> Summarizer {
        let retry = lock(self.settings()).retry();
        let events = self.downgrade();
        Summarizer {
            api_key,
            model,
            stream: self.agent().options().stream_fn.clone(),
            headers: Vec::new(),
            thinking_level: self.thinking_level(),
            session_id: None,
            signal: cancel.clone(),
            retry: SummaryRetry {
                enabled: retry.enabled,
                max_retries: retry.max_retries,
                base_delay_ms: retry.base_delay_ms,
            },
            on_retry: Some(Arc::new(move |e| {
                let Some(session) = events.upgrade() else {
                    return;
                };
                let event = retry_event(e, source);
                if let Err(err) = session.emit_event(&event) {
                    tracing::warn!("a session listener failed on a summarization retry: {err}");
                }
            })),
        }
    }
}

/// The session event of a summarization retry event.
fn retry_event(e: SummarizationRetryEvent, source: SummarizationSource) -> AgentSessionEvent {
    match e {
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
            AgentSessionEvent::SummarizationRetryAttemptStart { source }
        }
        SummarizationRetryEvent::Finished { .. } => AgentSessionEvent::SummarizationRetryFinished,
    }
}
