//! Stream options: what a caller can set per request.
//!
//! Mirrors pi-ai 0.85.1 `StreamOptions` + `SimpleStreamOptions` in one struct:
//! `reasoning`, `thinking_budgets` and `tool_choice` are the "simple" additions that every
//! adapter maps to its own wire fields.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::model::{Model, ThinkingLevel};

/// Prompt-cache retention: `none|short|long` (default `short`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheRetention {
    /// No cache markers.
    None,
    /// Default (5 minutes on Anthropic).
    #[default]
    Short,
    /// 1 hour / 24 h where supported.
    Long,
}

/// Token budgets per thinking level for budget-based providers.
/// Defaults: minimal 1024, low 2048, medium 8192, high 16384.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingBudgets {
    /// `minimal`
    pub minimal: u64,
    /// `low`
    pub low: u64,
    /// `medium`
    pub medium: u64,
    /// `high` (also used for `xhigh`/`max`)
    pub high: u64,
}

impl Default for ThinkingBudgets {
    fn default() -> Self {
        ThinkingBudgets {
            minimal: 1024,
            low: 2048,
            medium: 8192,
            high: 16384,
        }
    }
}

impl ThinkingBudgets {
    /// The budget for a level (`xhigh`/`max` → `high`).
    pub fn for_level(&self, level: ThinkingLevel) -> u64 {
        match level {
            ThinkingLevel::Minimal => self.minimal,
            ThinkingLevel::Low => self.low,
            ThinkingLevel::Medium => self.medium,
            ThinkingLevel::High | ThinkingLevel::Xhigh | ThinkingLevel::Max => self.high,
        }
    }
}

/// Response status and headers handed to [`StreamOptions::on_response`] before the body.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResponseInfo {
    /// HTTP status.
    pub status: u16,
    /// Lower-cased header names with their values, in arrival order.
    pub headers: Vec<(String, String)>,
}

/// A failed [`OnPayload`] or [`OnResponse`] hook (pi's hook threw): the request fails with this
/// message as its `errorMessage`, before any event but `error` is delivered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StreamHookError {
    /// The `errorMessage` text.
    pub message: String,
}

impl From<String> for StreamHookError {
    fn from(message: String) -> Self {
        Self { message }
    }
}

impl From<&str> for StreamHookError {
    fn from(message: &str) -> Self {
        Self {
            message: message.to_owned(),
        }
    }
}

/// `onPayload(payload, model)`: returns a replacement body, or `None` to keep it.
pub type OnPayload = Arc<
    dyn Fn(Value, Model) -> BoxFuture<'static, Result<Option<Value>, StreamHookError>>
        + Send
        + Sync,
>;

/// `onResponse({status, headers}, model)`: runs after headers, before the body.
pub type OnResponse = Arc<
    dyn Fn(ResponseInfo, Model) -> BoxFuture<'static, Result<(), StreamHookError>> + Send + Sync,
>;

/// Options for one request. Every field is optional; `Default` is "nothing set".
#[derive(Clone, Default)]
pub struct StreamOptions {
    /// Cancellation (pi's `signal`).
    pub signal: Option<CancellationToken>,
    /// API key; otherwise the provider's environment variable.
    pub api_key: Option<String>,
    /// Extra headers merged last; `None` deletes a default header.
    pub headers: Vec<(String, Option<String>)>,
    /// Request-body hook.
    pub on_payload: Option<OnPayload>,
    /// Response-headers hook.
    pub on_response: Option<OnResponse>,
    /// Request timeout in ms (no response headers within it → `Request timed out.`).
    pub timeout_ms: Option<u64>,
    /// Idle limit between received body chunks in ms (`httpIdleTimeoutMs`; default 300 000,
    /// `Some(0)` = off). A stall past it ends the stream with `terminated`.
    pub idle_timeout_ms: Option<u64>,
    /// pi-side retries of the HTTP request (default 0).
    pub max_retries: Option<u32>,
    /// Cap on a server-requested retry delay in ms (default 60 000; 0 = no cap).
    pub max_retry_delay_ms: Option<u64>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Extra sampling parameters (over `model.sampling_params`).
    pub sampling_params: Option<Map<String, Value>>,
    /// Output cap in tokens (default `model.max_tokens`).
    pub max_tokens: Option<u64>,
    /// Prompt-cache retention.
    pub cache_retention: Option<CacheRetention>,
    /// Session id (cache keys, affinity headers).
    pub session_id: Option<String>,
    /// Provider metadata (Anthropic `metadata.user_id`).
    pub metadata: Option<Map<String, Value>>,
    /// Reasoning level; `None` = off.
    pub reasoning: Option<ThinkingLevel>,
    /// Budgets for budget-based providers.
    pub thinking_budgets: Option<ThinkingBudgets>,
    /// `auto` / `none` / a provider-specific value.
    pub tool_choice: Option<Value>,
    /// Bedrock's `requestMetadata` (pi-ai's Bedrock `stream` option): string pairs sent as
    /// the request's `requestMetadata` map, in this order (a repeated key keeps its first
    /// place and takes the last value), for filtering invocation logs. Other APIs ignore it.
    pub request_metadata: Option<Vec<(String, String)>>,
}

impl fmt::Debug for StreamOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the API key or header values (they may carry credentials).
        f.debug_struct("StreamOptions")
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("timeout_ms", &self.timeout_ms)
            .field("idle_timeout_ms", &self.idle_timeout_ms)
            .field("max_retries", &self.max_retries)
            .field("max_tokens", &self.max_tokens)
            .field("session_id", &self.session_id)
            .field("reasoning", &self.reasoning)
            .finish_non_exhaustive()
    }
}
