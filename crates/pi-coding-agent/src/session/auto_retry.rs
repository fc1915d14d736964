//! Auto-retry of transient provider failures.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession._prepareRetry` / `_willRetryAfterAgentEnd`.
//! A run whose last assistant message is retryable (pi-ai's classifier, context
//! overflows excluded — they go to compaction) is retried up to `retry.maxRetries` times:
//! attempt+1, `auto_retry_start {attempt, maxAttempts, delayMs = baseDelayMs·2^(attempt−1),
//! errorMessage}`, the failed assistant is dropped from the agent state (it stays in the
//! file), an abortable sleep, then the caller continues the agent. An abort during the sleep
//! ends the sequence with `auto_retry_end {success:false, finalError:"Retry cancelled"}`.

use std::time::Duration;

use pi_agent_core::{AgentMessage, ListenerError};
use pi_ai::AssistantMessage;
use tokio_util::sync::CancellationToken;

use super::agent_session::{AgentSession, lock};
use super::events::AgentSessionEvent;

/// `finalError` of a retry sequence cancelled during its backoff.
pub const RETRY_CANCELLED: &str = "Retry cancelled";

/// `errorMessage` of `auto_retry_start` when the failure has none.
pub const UNKNOWN_ERROR: &str = "Unknown error";

/// `baseDelayMs · 2^(attempt−1)` in ms (attempt ≥ 1), saturating.
pub fn retry_delay_ms(base_delay_ms: u64, attempt: u32) -> u64 {
    let exp = attempt.saturating_sub(1).min(63);
    base_delay_ms.saturating_mul(1u64 << exp)
}

impl AgentSession {
    /// `_isRetryableError`: not a context overflow for the current model's window, and a
    /// transient error by pi-ai's classifier.
    pub(super) fn is_retryable(&self, message: &AssistantMessage) -> bool {
        let window = self.inner.agent.with_state(|s| s.model.context_window);
        pi_ai::retryable::is_retryable_error(message, window)
    }

    /// `agent_end.willRetry`: retry enabled, attempts left, and the run's last assistant
    /// message is retryable.
    pub(super) fn will_retry_after(&self, messages: &[AgentMessage]) -> bool {
        let settings = lock(&self.inner.settings).retry();
        if !settings.enabled || self.state().retry_attempt >= settings.max_retries {
            return false;
        }
        messages
            .iter()
            .rev()
            .find_map(|m| match m {
                AgentMessage::Assistant(a) => Some(a),
                _ => None,
            })
            .is_some_and(|a| self.is_retryable(a))
    }

    /// Schedules a retry of `message`'s run. `Ok(true)`: the caller continues the agent.
    pub(super) async fn prepare_retry(
        &self,
        message: &AssistantMessage,
    ) -> Result<bool, ListenerError> {
        let settings = lock(&self.inner.settings).retry();
        if !settings.enabled {
            return Ok(false);
        }
        let (attempt, token) = {
            let mut st = self.state();
            if st.retry_attempt >= settings.max_retries {
                // The completed attempt count stays for the final `auto_retry_end`.
                return Ok(false);
            }
            st.retry_attempt += 1;
            let token = CancellationToken::new();
            st.retry_cancel = Some(token.clone());
            (st.retry_attempt, token)
        };
        let delay_ms = retry_delay_ms(settings.base_delay_ms, attempt);
        let error_message = message
            .error_message
            .clone()
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| UNKNOWN_ERROR.to_owned());
        let emitted = self.emit_event(&AgentSessionEvent::AutoRetryStart {
            attempt,
            max_attempts: settings.max_retries,
            delay_ms,
            error_message,
        });
        if let Err(e) = emitted {
            self.state().retry_cancel = None;
            return Err(e);
        }
        self.drop_trailing_assistant();
        let slept = tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(delay_ms)) => true,
            _ = token.cancelled() => false,
        };
        self.state().retry_cancel = None;
        if slept {
            return Ok(true);
        }
        let attempt = std::mem::take(&mut self.state().retry_attempt);
        self.emit_event(&AgentSessionEvent::AutoRetryEnd {
            success: false,
            attempt,
            final_error: Some(RETRY_CANCELLED.to_owned()),
        })?;
        Ok(false)
    }

    /// Removes the last message from the agent state when it is an assistant message (the
    /// session file keeps it).
    pub(super) fn drop_trailing_assistant(&self) {
        let mut messages = self.inner.agent.messages();
        if matches!(messages.last(), Some(AgentMessage::Assistant(_))) {
            messages.pop();
            self.inner.agent.set_messages(messages);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_from_the_base() {
        assert_eq!(retry_delay_ms(100, 1), 100);
        assert_eq!(retry_delay_ms(100, 2), 200);
        assert_eq!(retry_delay_ms(100, 3), 400);
        assert_eq!(retry_delay_ms(2000, 4), 16000);
        assert_eq!(retry_delay_ms(u64::MAX, 5), u64::MAX);
    }
}
