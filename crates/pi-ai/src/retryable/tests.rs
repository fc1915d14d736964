//! One test per retryable phrase, per quota phrase, and the overflow/quota/transient order.

use super::*;
use crate::types::Usage;

fn failed(error: &str) -> AssistantMessage {
    AssistantMessage {
        stop_reason: StopReason::Error,
        error_message: Some(error.to_owned()),
        ..Default::default()
    }
}

/// `(phrase, a real-world message it must match)`, in pi's order.
const TRANSIENT: [(&str, &str); 41] = [
    ("overloaded", "Overloaded"),
    ("rate.?limit", "Rate-limit reached for requests"),
    ("too many requests", "429 Too Many Requests"),
    ("429", "HTTP 429"),
    ("500", "500 Internal Server Error"),
    ("502", "502 Bad Gateway"),
    ("503", "503 status code (no body)"),
    ("504", "504 Gateway Timeout"),
    ("524", "error code: 524"),
    ("service.?unavailable", "Service_Unavailable"),
    ("server.?error", "server error, please try later"),
    ("internal.?error", "InternalError"),
    ("provider.?returned.?error", "Provider returned error"),
    (
        "exceeded request buffer limit while retrying upstream",
        "exceeded request buffer limit while retrying upstream",
    ),
    ("network.?error", "Network error"),
    ("connection.?error", "Connection error."),
    (
        "connection.?refused",
        "connect ECONNREFUSED: connection refused",
    ),
    ("connection.?lost", "connection lost"),
    ("other side closed", "other side closed"),
    ("fetch failed", "fetch failed"),
    ("getaddrinfo", "getaddrinfo ENOTFOUND api.example.com"),
    ("ENOTFOUND", "ENOTFOUND"),
    ("EAI_AGAIN", "getaddr EAI_AGAIN"),
    (
        "upstream.?connect",
        "upstream connect error or disconnect/reset before headers",
    ),
    ("reset before headers", "reset before headers"),
    ("socket hang up", "socket hang up"),
    (
        "socket connection was closed",
        "The socket connection was closed unexpectedly",
    ),
    ("timed? out", "Request timed out."),
    ("timeout", "ETIMEDOUT: timeout"),
    ("terminated", "terminated"),
    ("websocket.?closed", "WebSocket closed"),
    ("websocket.?error", "websocket error"),
    (
        "ended without",
        "Anthropic stream ended without message_stop",
    ),
    (
        "stream ended before message_stop",
        "stream ended before message_stop",
    ),
    (
        "stream ended before a terminal response event",
        "OpenAI Responses stream ended before a terminal response event",
    ),
    (
        "http2 request did not get a response",
        "http2 request did not get a response",
    ),
    (
        "retry delay",
        "Server requested 120s retry delay (max: 60s). Slow down",
    ),
    (
        "you can retry your request",
        "An error occurred. You can retry your request.",
    ),
    (
        "try your request again",
        "Please try your request again later",
    ),
    ("please retry your request", "please retry your request"),
    ("ResourceExhausted", "grpc: ResourceExhausted"),
];

const QUOTA: [&str; 8] = [
    "GoUsageLimitError: weekly limit",
    "FreeUsageLimitError",
    "Monthly usage limit reached. Enable usage of available balance",
    "429 use your available balance to continue",
    "429 {\"error\":{\"code\":\"insufficient_quota\"}}",
    "503 account out of budget",
    "Quota exceeded for metric requests",
    "429 check your plan and billing details",
];

#[test]
fn phrase_table_is_pis() {
    let phrases: Vec<&str> = TRANSIENT.iter().map(|(p, _)| *p).collect();
    assert_eq!(phrases, RETRYABLE_PHRASES);
    assert_eq!(NON_RETRYABLE_LIMIT_PHRASES.len(), QUOTA.len());
    assert!(RETRYABLE.is_some() && NON_RETRYABLE_LIMIT.is_some());
}

#[test]
fn each_transient_phrase_is_retryable() {
    for (phrase, message) in TRANSIENT {
        let single = js_regex::compile(phrase).unwrap();
        assert!(single.is_match(message), "{phrase} vs {message}");
        assert!(is_retryable_assistant_error(&failed(message)), "{message}");
        assert_eq!(
            classify_error(&failed(message), 0),
            ErrorClass::Transient,
            "{message}"
        );
    }
}

#[test]
fn each_quota_phrase_is_not_retryable() {
    for message in QUOTA {
        assert!(is_quota_error_message(message), "{message}");
        assert!(!is_retryable_assistant_error(&failed(message)), "{message}");
        assert_eq!(
            classify_error(&failed(message), 0),
            ErrorClass::QuotaExhausted
        );
    }
}

#[test]
fn corrections_box_transport_texts_are_retryable() {
    for message in [
        "terminated",
        "Request timed out.",
        "Connection error.",
        "fetch failed",
    ] {
        assert!(is_retryable_error(&failed(message), 200_000), "{message}");
    }
}

#[test]
fn anthropic_mid_stream_overloaded_frame_is_retryable() {
    // pi's errorMessage is the raw JSON of the error frame.
    let frame = r#"{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CWnLzPcVjHRTqZHDbfHBn"}"#;
    assert!(is_retryable_error(&failed(frame), 200_000));
}

#[test]
fn matching_is_case_insensitive_and_unanchored() {
    assert!(is_transient_error_message("SERVICE UNAVAILABLE"));
    assert!(is_transient_error_message("request 15003 failed")); // contains 500, as in pi
    assert!(!is_transient_error_message("invalid x-api-key"));
    assert!(!is_transient_error_message("rate\nlimit")); // `.` stops at line breaks
}

#[test]
fn only_error_responses_with_text_are_retryable() {
    let mut message = failed("Overloaded");
    message.stop_reason = StopReason::Aborted;
    assert!(!is_retryable_assistant_error(&message));
    assert_eq!(classify_error(&message, 0), ErrorClass::NotAnError);
    assert!(!is_retryable_assistant_error(&failed("")));
    assert_eq!(classify_error(&failed(""), 0), ErrorClass::NotAnError);
    assert_eq!(
        classify_error(&failed("invalid x-api-key"), 0),
        ErrorClass::Permanent
    );
}

#[test]
fn overflow_is_compaction_not_retry() {
    // Matches both an overflow pattern and a transient phrase (413 is not in the transient
    // list, but "500" in the token count is).
    let message = failed("prompt is too long: 250000 tokens > 200000 maximum");
    assert!(is_retryable_assistant_error(&message));
    assert!(!is_retryable_error(&message, 200_000));
    assert_eq!(
        classify_error(&message, 200_000),
        ErrorClass::ContextOverflow
    );
    // An overflow exclusion (rate limit) stays a transient error.
    let message = failed("Rate limit: too many tokens per minute");
    assert!(is_retryable_error(&message, 200_000));
    // Silent overflow of a successful response is reported as overflow, not as an error.
    let message = AssistantMessage {
        stop_reason: StopReason::Stop,
        usage: Usage {
            input: 300.0,
            ..Default::default()
        },
        ..Default::default()
    };
    assert_eq!(classify_error(&message, 200), ErrorClass::ContextOverflow);
    assert_eq!(classify_error(&message, 0), ErrorClass::NotAnError);
}
