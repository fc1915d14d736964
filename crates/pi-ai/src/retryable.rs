//! Which failed responses are worth retrying.
//!
//! Mirrors pi-ai 0.85.1 `utils/retry.js` (`isRetryableAssistantError`) and pi-coding-agent
//! 0.85.0 `AgentSession._isRetryableError`: a response that ended with
//! `stopReason: "error"` is retried when its `errorMessage` reads as a transient provider or
//! transport failure — overload, rate limit, 5xx, network, timeout, stream cut short — unless
//! it reads as an exhausted quota or budget (retrying cannot help) or, at the session level, as
//! a context overflow (compaction handles that instead).
//!
//! The transport texts pi-rs produces itself match on purpose: an idle
//! stall `terminated`, no response headers `Request timed out.`, a reset before headers
//! `Connection error.` / `fetch failed`.

use std::sync::LazyLock;

use regex::Regex;

use crate::js_regex;
use crate::overflow::is_context_overflow;
use crate::types::{AssistantMessage, StopReason};

/// Quota, budget and billing exhaustion: never retryable (checked first).
const NON_RETRYABLE_LIMIT_PHRASES: &[&str] = &[
    // OpenCode Go / free-tier limits (HTTP 429 error types).
    "GoUsageLimitError",
    "FreeUsageLimitError",
    "Monthly usage limit reached",
    "available balance",
    "insufficient_quota", // OpenAI quota/billing error code
    "out of budget",
    "quota exceeded",
    "billing",
];

/// Transient provider and transport failures (JavaScript syntax, case-insensitive).
const RETRYABLE_PHRASES: &[&str] = &[
    // Provider load, HTTP status, server-side failures.
    "overloaded",
    "rate.?limit",
    "too many requests",
    "429",
    "500",
    "502",
    "503",
    "504",
    "524",
    "service.?unavailable",
    "server.?error",
    "internal.?error",
    // Wrapper texts for upstream failures (OpenRouter "Provider returned error").
    "provider.?returned.?error",
    "exceeded request buffer limit while retrying upstream",
    // Network, proxy and fetch transport failures.
    "network.?error",
    "connection.?error",
    "connection.?refused",
    "connection.?lost",
    "other side closed",
    "fetch failed",
    "getaddrinfo",
    "ENOTFOUND",
    "EAI_AGAIN",
    "upstream.?connect",
    "reset before headers",
    "socket hang up",
    "socket connection was closed",
    "timed? out",
    "timeout",
    "terminated",
    // WebSocket transports.
    "websocket.?closed",
    "websocket.?error",
    // Streams that ended early.
    "ended without",
    "stream ended before message_stop",
    "stream ended before a terminal response event",
    "http2 request did not get a response",
    // A provider-requested retry delay above the cap: the outer retry policy decides.
    "retry delay",
    // Explicit retry guidance in mid-stream errors.
    "you can retry your request",
    "try your request again",
    "please retry your request",
    // gRPC providers.
    "ResourceExhausted",
];

/// The phrases joined into one alternation, as pi builds them.
fn alternation(phrases: &[&str]) -> Option<Regex> {
    js_regex::compile(&phrases.join("|"))
}

static NON_RETRYABLE_LIMIT: LazyLock<Option<Regex>> =
    LazyLock::new(|| alternation(NON_RETRYABLE_LIMIT_PHRASES));

static RETRYABLE: LazyLock<Option<Regex>> = LazyLock::new(|| alternation(RETRYABLE_PHRASES));

/// What a failed response calls for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// Not a failure (`stopReason` other than `error`), or an error without a message.
    NotAnError,
    /// The prompt no longer fits: compact, don't retry ([`is_context_overflow`]).
    ContextOverflow,
    /// Quota, budget or billing exhausted: retrying cannot help.
    QuotaExhausted,
    /// Transient: retry with backoff.
    Transient,
    /// Anything else: fail.
    Permanent,
}

/// Whether `error_message` names an exhausted quota, budget or billing limit.
pub fn is_quota_error_message(error_message: &str) -> bool {
    NON_RETRYABLE_LIMIT
        .as_ref()
        .is_some_and(|re| re.is_match(error_message))
}

/// Whether `error_message` reads as a transient failure (and not as an exhausted quota).
pub fn is_transient_error_message(error_message: &str) -> bool {
    !is_quota_error_message(error_message)
        && RETRYABLE
            .as_ref()
            .is_some_and(|re| re.is_match(error_message))
}

/// pi-ai's `isRetryableAssistantError`: `stopReason` is `error`, `errorMessage` is non-empty,
/// names no exhausted quota and reads as a transient failure. Does not look at context
/// overflow (callers check that first; see [`is_retryable_error`]).
pub fn is_retryable_assistant_error(message: &AssistantMessage) -> bool {
    match failure_text(message) {
        Some(error) => is_transient_error_message(error),
        None => false,
    }
}

/// pi-coding-agent's `_isRetryableError`: not a context overflow for a model with
/// `context_window` tokens (0 = unknown, which disables the usage-based overflow rules), and
/// [`is_retryable_assistant_error`].
pub fn is_retryable_error(message: &AssistantMessage, context_window: u64) -> bool {
    !is_context_overflow(message, Some(context_window)) && is_retryable_assistant_error(message)
}

/// Classifies a response the way the session's retry and compaction logic treats it: overflow
/// first, then quota, then transient. `context_window` in tokens (0 = unknown).
pub fn classify_error(message: &AssistantMessage, context_window: u64) -> ErrorClass {
    if is_context_overflow(message, Some(context_window)) {
        return ErrorClass::ContextOverflow;
    }
    let Some(error) = failure_text(message) else {
        return ErrorClass::NotAnError;
    };
    if is_quota_error_message(error) {
        ErrorClass::QuotaExhausted
    } else if is_transient_error_message(error) {
        ErrorClass::Transient
    } else {
        ErrorClass::Permanent
    }
}

/// The error text of an `error` response, if it has a non-empty one.
fn failure_text(message: &AssistantMessage) -> Option<&str> {
    if message.stop_reason != StopReason::Error {
        return None;
    }
    message.error_message.as_deref().filter(|e| !e.is_empty())
}

#[cfg(test)]
mod tests;
