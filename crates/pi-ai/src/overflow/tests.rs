//! One test per overflow pattern (with the provider's real message where pi documents one),
//! per exclusion, and per usage-based rule.

use super::*;
use crate::types::Usage;

fn failed(error: &str) -> AssistantMessage {
    AssistantMessage {
        stop_reason: StopReason::Error,
        error_message: Some(error.to_owned()),
        ..Default::default()
    }
}

fn with_usage(
    stop_reason: StopReason,
    input: u64,
    cache_read: u64,
    output: u64,
) -> AssistantMessage {
    AssistantMessage {
        stop_reason,
        usage: Usage {
            input: input as f64,
            cache_read: cache_read as f64,
            output: output as f64,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// One message per pattern, in pattern order, each matched by its own pattern.
const EXAMPLES: [&str; 25] = [
    "prompt is too long: 213462 tokens > 200000 maximum",
    "413 {\"error\":{\"type\":\"request_too_large\",\"message\":\"Request exceeds the maximum size\"}}",
    "Input is too long for requested model.",
    "Your input exceeds the context window of this model",
    "Requested token count exceeds the model's maximum context length of 131,072 tokens",
    "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
    "Please reduce the length of the messages or completion",
    "This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens",
    "Input length 300000 exceeds the maximum allowed input length of 256,000 tokens.",
    "The input (140000 tokens) is longer than the model's context length (131072 tokens).",
    "prompt token count of 140000 exceeds the limit of 128000",
    "the request exceeds the available context size, try increasing it",
    "tokens to keep from the initial prompt is greater than the context length",
    "invalid params, context window exceeds limit",
    "Your request exceeded model token limit: 262144 (requested: 300000)",
    "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
    "Prompt has 1,234 tokens, but the configured context size is 1,024 tokens",
    "finish_reason: model_context_window_exceeded",
    "prompt too long; exceeded max context length by 1200 tokens",
    "Range of input length should be [1, 129024]",
    "context_length_exceeded",
    "Too many tokens in request",
    "Token limit exceeded for this request",
    "413 status code (no body)",
];

#[test]
fn every_pattern_compiles_in_order() {
    assert_eq!(overflow_patterns().len(), OVERFLOW_SOURCES.len());
    assert_eq!(NON_OVERFLOW_PATTERNS.len(), NON_OVERFLOW_SOURCES.len());
}

#[test]
fn each_pattern_matches_its_provider_message() {
    let patterns = overflow_patterns();
    for (index, example) in EXAMPLES.iter().enumerate() {
        assert!(
            patterns[index].is_match(example),
            "pattern {index}: {example}"
        );
        assert!(is_context_overflow(&failed(example), None), "{example}");
    }
}

#[test]
fn pattern_details() {
    // `exceeds … maximum context length` needs the token count or a parenthesized count.
    assert!(is_overflow_error_message(
        "Input length (265330) exceeds model's maximum context length (262144)."
    ));
    assert!(is_overflow_error_message(
        "exceeds the maximum context length of 1 token"
    ));
    assert!(!is_overflow_error_message(
        "exceeds the maximum context length"
    ));
    // Cerebras: only at the start, 400 or 413, "status code" optional.
    assert!(is_overflow_error_message("400 (no body)"));
    assert!(is_overflow_error_message("400status code(no body)"));
    assert!(!is_overflow_error_message(
        "error: 400 status code (no body)"
    ));
    assert!(!is_overflow_error_message("401 status code (no body)"));
    // Case-insensitive, ASCII only (JavaScript `/i` without `/u`).
    assert!(is_overflow_error_message("PROMPT IS TOO LONG"));
    assert!(!is_overflow_error_message("prompt is too \u{212A}ong"));
    // `.` does not cross a line break; `\d` is ASCII.
    assert!(!is_overflow_error_message(
        "input token count\nexceeds the maximum"
    ));
    assert!(!is_overflow_error_message(
        "maximum prompt length is \u{0664}"
    ));
    assert!(!is_overflow_error_message(
        "input token count\u{2028} exceeds the maximum"
    ));
    assert!(is_overflow_error_message(
        "input token count\u{85} exceeds the maximum"
    ));
    // `\s` is JavaScript's: NBSP yes, NEL no.
    assert!(is_overflow_error_message("413\u{A0}(no body)"));
    assert!(!is_overflow_error_message("413\u{85}(no body)"));
    // Commas in token counts where pi allows them, not elsewhere.
    assert!(!is_overflow_error_message(
        "maximum context length is 1,000 tokens"
    ));
}

#[test]
fn exclusions_win_over_overflow_patterns() {
    for error in [
        "Throttling error: Too many tokens, please wait before trying again.",
        "Service unavailable: too many tokens",
        "Rate limit reached: too many tokens per minute",
        "429 Too Many Requests: prompt is too long",
    ] {
        assert!(!is_context_overflow(&failed(error), None), "{error}");
    }
    // The Bedrock prefixes only count at the start.
    assert!(is_overflow_error_message(
        "Error. Throttling error: too many tokens"
    ));
}

#[test]
fn error_pattern_needs_error_stop_reason_and_message() {
    let mut message = failed("prompt is too long");
    message.stop_reason = StopReason::Aborted;
    assert!(!is_context_overflow(&message, None));
    let mut message = failed("");
    message.error_message = None;
    assert!(!is_context_overflow(&message, None));
    assert!(!is_context_overflow(&failed("connection reset"), None));
}

#[test]
fn silent_overflow_counts_input_and_cache_reads() {
    assert!(is_context_overflow(
        &with_usage(StopReason::Stop, 900, 101, 5),
        Some(1000)
    ));
    assert!(!is_context_overflow(
        &with_usage(StopReason::Stop, 900, 100, 5),
        Some(1000)
    ));
    assert!(!is_context_overflow(
        &with_usage(StopReason::Stop, 5000, 0, 5),
        None
    ));
    assert!(!is_context_overflow(
        &with_usage(StopReason::Stop, 5000, 0, 5),
        Some(0)
    ));
    assert!(!is_context_overflow(
        &with_usage(StopReason::ToolUse, 5000, 0, 5),
        Some(1000)
    ));
}

#[test]
fn length_stop_with_zero_output_and_full_window_is_overflow() {
    assert!(is_context_overflow(
        &with_usage(StopReason::Length, 980, 10, 0),
        Some(1000)
    ));
    assert!(!is_context_overflow(
        &with_usage(StopReason::Length, 980, 9, 0),
        Some(1000)
    ));
    assert!(!is_context_overflow(
        &with_usage(StopReason::Length, 1000, 0, 1),
        Some(1000)
    ));
    assert!(!is_context_overflow(
        &with_usage(StopReason::Length, 1000, 0, 0),
        None
    ));
}

#[test]
fn recoverable_length() {
    assert!(is_recoverable_length(
        &with_usage(StopReason::Length, 0, 0, 100),
        200
    ));
    assert!(!is_recoverable_length(
        &with_usage(StopReason::Length, 0, 0, 200),
        200
    ));
    assert!(!is_recoverable_length(
        &with_usage(StopReason::Length, 0, 0, 0),
        0
    ));
    assert!(!is_recoverable_length(
        &with_usage(StopReason::Stop, 0, 0, 100),
        200
    ));
}
