//! Context-overflow detection: is this failed (or suspiciously short) response a sign that the
//! prompt no longer fits the model's context window?
//!
//! Mirrors pi-ai 0.85.1 `utils/overflow.js`: the same patterns in the same order,
//! the same exclusions, the same silent-overflow (z.ai) and length-stop (Xiaomi MiMo) rules.
//!
//! The patterns are JavaScript regular expressions with the `i` flag; they are compiled once,
//! with JavaScript's semantics (see `js_regex`).

use std::sync::LazyLock;

use regex::Regex;

use crate::js_regex;
use crate::types::{AssistantMessage, StopReason};

/// The overflow patterns as written in pi (JavaScript syntax, `i` flag), in pi's order.
const OVERFLOW_SOURCES: [&str; 25] = [
    r"prompt is too long",                    // Anthropic token overflow
    r"request_too_large",                     // Anthropic request byte size (HTTP 413)
    r"input is too long for requested model", // Amazon Bedrock
    r"exceeds the context window",            // OpenAI Completions and Responses
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))", // LiteLLM and other OpenAI-compatible proxies
    r"input token count.*exceeds the maximum", // Google Gemini
    r"maximum prompt length is \d+",           // xAI
    r"reduce the length of the messages",      // Groq
    r"maximum context length is \d+ tokens",   // OpenRouter
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?", // OpenRouter/Poolside
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)", // Together AI
    r"exceeds the limit of \d+",           // GitHub Copilot
    r"exceeds the available context size", // llama.cpp
    r"greater than the context length",    // LM Studio
    r"context window exceeds limit",       // MiniMax
    r"exceeded model token limit",         // Kimi For Coding
    r"too large for model with \d+ maximum context length", // Mistral
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?", // DS4
    r"model_context_window_exceeded",      // z.ai finish reason surfaced as error text
    r"prompt too long; exceeded (?:max )?context length", // Ollama
    r"range of input length should be",    // DashScope / Qwen
    r"context[_ ]length[_ ]exceeded",      // generic
    r"too many tokens",                    // generic
    r"token limit exceeded",               // generic
    r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)", // Cerebras 400/413 without body
];

/// Messages matching these are never overflow, even if an overflow pattern matches
/// (e.g. Bedrock's `ThrottlingException: Too many tokens, please wait…`).
const NON_OVERFLOW_SOURCES: [&str; 3] = [
    r"^(Throttling error|Service unavailable):", // Bedrock, human-readable prefixes
    r"rate limit",
    r"too many requests",
];

static OVERFLOW_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    OVERFLOW_SOURCES
        .iter()
        .filter_map(|s| js_regex::compile(s))
        .collect()
});

static NON_OVERFLOW_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    NON_OVERFLOW_SOURCES
        .iter()
        .filter_map(|s| js_regex::compile(s))
        .collect()
});

/// pi's `getOverflowPatterns()`: a copy of the overflow patterns, in pi's order.
pub fn overflow_patterns() -> Vec<Regex> {
    OVERFLOW_PATTERNS.clone()
}

/// Whether `error_message` reads as a context overflow: some overflow pattern matches and no
/// exclusion does.
pub fn is_overflow_error_message(error_message: &str) -> bool {
    !NON_OVERFLOW_PATTERNS
        .iter()
        .any(|p| p.is_match(error_message))
        && OVERFLOW_PATTERNS.iter().any(|p| p.is_match(error_message))
}

/// pi's `isContextOverflow(message, contextWindow)`: true when
///
/// 1. `stopReason` is `error` and the (non-empty) `errorMessage` reads as an overflow
///    ([`is_overflow_error_message`]);
/// 2. or `context_window` is given (non-zero), `stopReason` is `stop` and
///    `input + cacheRead > context_window` (silent overflow, z.ai);
/// 3. or `context_window` is given (non-zero), `stopReason` is `length`, `output == 0` and
///    `input + cacheRead ≥ 0.99 · context_window` (input truncated to fill the window, Xiaomi
///    MiMo).
///
/// `context_window` is in tokens.
pub fn is_context_overflow(message: &AssistantMessage, context_window: Option<u64>) -> bool {
    if message.stop_reason == StopReason::Error
        && let Some(error) = message.error_message.as_deref()
        && !error.is_empty()
        && is_overflow_error_message(error)
    {
        return true;
    }
    let Some(window) = context_window.filter(|&w| w > 0) else {
        return false;
    };
    // In doubles, as pi adds them.
    let input = message.usage.input + message.usage.cache_read;
    let window = window as f64;
    match message.stop_reason {
        StopReason::Stop => input > window,
        StopReason::Length => message.usage.output == 0.0 && input >= window * 0.99,
        _ => false,
    }
}

/// pi's `isRecoverableLength(message, desiredMaxOutput)`: the response stopped at `length`
/// below the intended output limit (`desired_max_output`, tokens, the limit before any
/// context-based clamping), so one compact-and-retry attempt may help.
pub fn is_recoverable_length(message: &AssistantMessage, desired_max_output: u64) -> bool {
    message.stop_reason == StopReason::Length
        && desired_max_output > 0
        && message.usage.output < desired_max_output as f64
}

#[cfg(test)]
mod tests;
