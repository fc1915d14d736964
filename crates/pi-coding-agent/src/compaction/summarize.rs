//! Generating summaries through the session's stream function.
//!
//! Mirrors pi-coding-agent 0.85.0 `compact`, `generateSummary`, `generateTurnPrefixSummary`,
//! `completeSummarization` and `getSummarizationFailure`: one request per
//! summary with the serialized conversation, `maxTokens` of 80 % (50 % for a turn prefix) of
//! `reserveTokens`, the session's thinking level for reasoning models, `cacheRetention: none`
//! and a fresh routing session id; transient failures are retried with the session retry
//! policy, reported through [`SummarizationRetryEvent`]s. pi-rs's own addition: every request
//! is fitted to `contextWindow − maxTokens` ([`super::fit`], `docs/compaction.md`).

use std::sync::Arc;
use std::time::Duration;

use pi_agent_core::AgentMessage;
use pi_agent_core::agent_loop::StreamFn;
use pi_ai::{
    AssistantContent, AssistantMessage, CacheRetention, Context, Message, Model,
    ModelThinkingLevel, StopReason, StreamOptions, Usage, UserMessage,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::error::SummaryError;
use super::fit::{Omitted, fit_conversation, input_budget, js_len};
use super::prepare::{CompactionPreparation, format_file_operations};
use super::prompts::{
    SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT, TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
};
use crate::messages::convert_to_llm;

/// The summarization retry events (session events of the same names).
#[derive(Clone, Debug, PartialEq)]
pub enum SummarizationRetryEvent {
    /// `summarization_retry_scheduled {attempt, maxAttempts, delayMs, errorMessage}`.
    Scheduled {
        /// 1-based attempt number.
        attempt: u32,
        /// `retry.maxRetries`.
        max_attempts: u32,
        /// Delay before the attempt.
        delay_ms: u64,
        /// The failure being retried.
        error_message: String,
    },
    /// `summarization_retry_attempt_start {attempt}`.
    AttemptStart {
        /// 1-based attempt number.
        attempt: u32,
    },
    /// `summarization_retry_finished {success, attempts}` — once, if any retry was scheduled.
    Finished {
        /// Whether the last response succeeded.
        success: bool,
        /// Retries made.
        attempts: u32,
    },
}

/// Retry policy for summary calls (`retry.*` settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SummaryRetry {
    /// `retry.enabled`.
    pub enabled: bool,
    /// `retry.maxRetries`.
    pub max_retries: u32,
    /// `retry.baseDelayMs`.
    pub base_delay_ms: u64,
}

impl Default for SummaryRetry {
    fn default() -> Self {
        SummaryRetry {
            enabled: true,
            max_retries: 3,
            base_delay_ms: 2000,
        }
    }
}

/// Everything a summary call needs from the session.
#[derive(Clone)]
pub struct Summarizer {
    /// The model to ask (the session's current model).
    pub model: Model,
    /// The session's stream function.
    pub stream: StreamFn,
    /// API key for the model.
    pub api_key: Option<String>,
    /// Extra headers.
    pub headers: Vec<(String, Option<String>)>,
    /// The session's thinking level (sent only to reasoning models, never `off`).
    pub thinking_level: ModelThinkingLevel,
    /// Routing session id; a fresh UUIDv7 when `None`.
    pub session_id: Option<String>,
    /// Cancellation.
    pub signal: CancellationToken,
    /// Retry policy.
    pub retry: SummaryRetry,
    /// Receives the retry events.
    pub on_retry: Option<Arc<dyn Fn(SummarizationRetryEvent) + Send + Sync>>,
}

/// A finished summary.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionResult {
    /// The summary text (file lists appended).
    pub summary: String,
    /// First entry kept.
    pub first_kept_entry_id: String,
    /// Estimated tokens before compaction.
    pub tokens_before: u64,
    /// Usage of the summary call(s).
    pub usage: Option<Usage>,
    /// `{readFiles, modifiedFiles}`.
    pub details: Value,
}

/// `getSummarizationFailure`: the error text for an `error` or `length` response.
pub(crate) fn summarization_failure(
    response: &AssistantMessage,
    label: &'static str,
) -> Option<SummaryError> {
    match response.stop_reason {
        StopReason::Error => Some(SummaryError::Failed {
            label,
            message: response
                .error_message
                .as_deref()
                .filter(|s| !s.is_empty())
                .unwrap_or("Unknown error")
                .to_owned(),
        }),
        StopReason::Length => Some(SummaryError::Truncated { label }),
        _ => None,
    }
}

fn text_of(m: &AssistantMessage) -> String {
    m.content
        .iter()
        .filter_map(|c| match c {
            AssistantContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Sums two usages as pi's `combineUsage` does.
pub(crate) fn combine_usage(a: &Usage, b: &Usage) -> Usage {
    let opt = |x: Option<f64>, y: Option<f64>| {
        (x.is_some() || y.is_some()).then(|| x.unwrap_or(0.0) + y.unwrap_or(0.0))
    };
    Usage {
        input: a.input + b.input,
        output: a.output + b.output,
        cache_read: a.cache_read + b.cache_read,
        cache_write: a.cache_write + b.cache_write,
        cache_write_1h: opt(a.cache_write_1h, b.cache_write_1h),
        reasoning: opt(a.reasoning, b.reasoning),
        total_tokens: a.total_tokens + b.total_tokens,
        // pi builds it whole: `cacheWrite1h`/`reasoning` before `totalTokens`.
        optional_before_total: true,
        cost: pi_ai::Cost {
            input: a.cost.input + b.cost.input,
            output: a.cost.output + b.cost.output,
            cache_read: a.cost.cache_read + b.cost.cache_read,
            cache_write: a.cost.cache_write + b.cost.cache_write,
            total: a.cost.total + b.cost.total,
        },
    }
}

impl Summarizer {
    fn options(
        &self,
        max_tokens: u64,
        with_reasoning: bool,
        routing: Option<String>,
    ) -> StreamOptions {
        StreamOptions {
            signal: Some(self.signal.clone()),
            api_key: self.api_key.clone(),
            headers: self.headers.clone(),
            max_tokens: Some(max_tokens),
            reasoning: if with_reasoning && self.model.reasoning {
                self.thinking_level.reasoning()
            } else {
                None
            },
            cache_retention: Some(CacheRetention::None),
            session_id: Some(routing.unwrap_or_else(|| uuid::Uuid::now_v7().to_string())),
            ..Default::default()
        }
    }

    fn cap(&self, fraction: f64, reserve_tokens: u64) -> u64 {
        let budget = (fraction * reserve_tokens as f64).floor() as u64;
        if self.model.max_tokens > 0 {
            budget.min(self.model.max_tokens)
        } else {
            budget
        }
    }

    /// One summarization request (`completeSummarization`), retried on transient failures.
    pub async fn complete(&self, prompt_text: String, max_tokens: u64) -> AssistantMessage {
        self.complete_with(prompt_text, max_tokens, true, self.session_id.clone())
            .await
    }

    /// [`Summarizer::complete`] choosing whether the thinking level is sent and the routing id
    /// (`None`: a fresh UUIDv7, as branch summaries use).
    pub async fn complete_with(
        &self,
        prompt_text: String,
        max_tokens: u64,
        with_reasoning: bool,
        routing: Option<String>,
    ) -> AssistantMessage {
        let context = Context {
            system_prompt: Some(SUMMARIZATION_SYSTEM_PROMPT.to_owned()),
            messages: vec![Message::User(UserMessage::text(prompt_text))],
            tools: None,
        };
        let options = self.options(max_tokens, with_reasoning, routing);
        let mut attempt = 0u32;
        let mut scheduled = false;
        loop {
            let response = (self.stream)(self.model.clone(), context.clone(), options.clone())
                .result()
                .await;
            let retryable = self.retry.enabled
                && response.stop_reason == StopReason::Error
                && pi_ai::retryable::is_retryable_assistant_error(&response);
            if !retryable || attempt >= self.retry.max_retries || self.signal.is_cancelled() {
                if scheduled {
                    self.emit(SummarizationRetryEvent::Finished {
                        success: !response.stop_reason.is_failure(),
                        attempts: attempt,
                    });
                }
                return response;
            }
            attempt += 1;
            scheduled = true;
            let delay_ms = self
                .retry
                .base_delay_ms
                .saturating_mul(1 << (attempt - 1).min(30));
            self.emit(SummarizationRetryEvent::Scheduled {
                attempt,
                max_attempts: self.retry.max_retries,
                delay_ms,
                error_message: response
                    .error_message
                    .clone()
                    .unwrap_or_else(|| "Unknown error".into()),
            });
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(delay_ms)) => {}
                _ = self.signal.cancelled() => {
                    let mut aborted = response;
                    aborted.stop_reason = StopReason::Aborted;
                    aborted.error_message = Some("Request was aborted".into());
                    self.emit(SummarizationRetryEvent::Finished { success: false, attempts: attempt });
                    return aborted;
                }
            }
            self.emit(SummarizationRetryEvent::AttemptStart { attempt });
        }
    }

    fn emit(&self, e: SummarizationRetryEvent) {
        if let Some(cb) = &self.on_retry {
            cb(e);
        }
    }

    /// The user text of a summary request, `<conversation>\n{conversation}\n</conversation>
    /// \n\n{tail}`, with the conversation fitted (see [`super::fit`]) so that the whole
    /// request — system prompt included — estimates to at most `contextWindow − max_tokens`.
    pub fn fitted_prompt(
        &self,
        messages: &[AgentMessage],
        tail: &str,
        max_tokens: u64,
    ) -> (String, Omitted) {
        const OPEN: &str = "<conversation>\n";
        const CLOSE: &str = "\n</conversation>\n\n";
        let fixed =
            js_len(SUMMARIZATION_SYSTEM_PROMPT) + js_len(OPEN) + js_len(CLOSE) + js_len(tail);
        let fitted = fit_conversation(
            &convert_to_llm(messages),
            fixed,
            input_budget(self.model.context_window, max_tokens),
        );
        (
            format!("{OPEN}{}{CLOSE}{tail}", fitted.text),
            fitted.omitted,
        )
    }

    /// `generateSummaryWithUsage`: summarizes (or updates `previous_summary` with) `messages`.
    pub async fn generate_summary(
        &self,
        messages: &[AgentMessage],
        reserve_tokens: u64,
        custom_instructions: Option<&str>,
        previous_summary: Option<&str>,
    ) -> Result<SummaryText, SummaryError> {
        let mut tail = String::new();
        if let Some(prev) = previous_summary {
            tail.push_str(&format!(
                "<previous-summary>\n{prev}\n</previous-summary>\n\n"
            ));
        }
        tail.push_str(if previous_summary.is_some() {
            UPDATE_SUMMARIZATION_PROMPT
        } else {
            SUMMARIZATION_PROMPT
        });
        if let Some(focus) = custom_instructions.filter(|s| !s.is_empty()) {
            tail.push_str(&format!("\n\nAdditional focus: {focus}"));
        }
        let max_tokens = self.cap(0.8, reserve_tokens);
        let (prompt, omitted) = self.fitted_prompt(messages, &tail, max_tokens);
        let response = self.complete(prompt, max_tokens).await;
        finish(response, "Summarization", omitted)
    }

    /// `generateTurnPrefixSummary`: summarizes the beginning of a split turn.
    pub async fn generate_turn_prefix_summary(
        &self,
        messages: &[AgentMessage],
        reserve_tokens: u64,
    ) -> Result<SummaryText, SummaryError> {
        let max_tokens = self.cap(0.5, reserve_tokens);
        let (prompt, omitted) =
            self.fitted_prompt(messages, TURN_PREFIX_SUMMARIZATION_PROMPT, max_tokens);
        let response = self.complete(prompt, max_tokens).await;
        finish(response, "Turn prefix summarization", omitted)
    }

    /// `compact(preparation, …)`: the summary (history, split-turn prefix merged as pi does,
    /// file lists appended), its usage and details (`{readFiles, modifiedFiles}`, plus
    /// `omitted: {messages, truncatedToolResults}` when a request had to be fitted).
    pub async fn compact(
        &self,
        prep: &CompactionPreparation,
        custom_instructions: Option<&str>,
    ) -> Result<CompactionResult, SummaryError> {
        let reserve = prep.settings.reserve_tokens;
        let history = || {
            self.generate_summary(
                &prep.messages_to_summarize,
                reserve,
                custom_instructions,
                prep.previous_summary.as_deref(),
            )
        };
        let (mut summary, usage, omitted) =
            if prep.is_split_turn && !prep.turn_prefix_messages.is_empty() {
                let previous = if prep.messages_to_summarize.is_empty() {
                    None
                } else {
                    Some(history().await?)
                };
                let prefix = self
                    .generate_turn_prefix_summary(&prep.turn_prefix_messages, reserve)
                    .await?;
                let (history_text, usage, omitted) = match previous {
                    Some(h) => (
                        h.text,
                        combine_usage(&h.usage, &prefix.usage),
                        h.omitted.plus(prefix.omitted),
                    ),
                    None => ("No prior history.".to_owned(), prefix.usage, prefix.omitted),
                };
                (
                    format!(
                        "{history_text}\n\n---\n\n**Turn Context (split turn):**\n\n{}",
                        prefix.text
                    ),
                    usage,
                    omitted,
                )
            } else {
                let h = history().await?;
                (h.text, h.usage, h.omitted)
            };
        let (read, modified) = prep.file_ops.file_lists();
        summary.push_str(&format_file_operations(&read, &modified));
        let mut details = serde_json::json!({"readFiles": read, "modifiedFiles": modified});
        if !omitted.is_empty()
            && let Some(map) = details.as_object_mut()
        {
            map.insert("omitted".into(), omitted.to_json());
        }
        Ok(CompactionResult {
            summary,
            first_kept_entry_id: prep.first_kept_entry_id.clone(),
            tokens_before: prep.tokens_before,
            usage: Some(usage),
            details,
        })
    }
}

/// One summary call's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryText {
    /// The response's text blocks joined by `\n`.
    pub text: String,
    /// The response's usage.
    pub usage: Usage,
    /// What the request left out to fit.
    pub omitted: Omitted,
}

fn finish(
    response: AssistantMessage,
    label: &'static str,
    omitted: Omitted,
) -> Result<SummaryText, SummaryError> {
    if let Some(f) = summarization_failure(&response, label) {
        return Err(f);
    }
    if response.tool_calls().next().is_some() {
        return Err(SummaryError::ToolCall { label });
    }
    Ok(SummaryText {
        text: text_of(&response),
        usage: response.usage,
        omitted,
    })
}
