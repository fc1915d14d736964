//! The conformance scenarios of the Anthropic wire API (vendored goldens of the TS pi
//! 0.85.0): each reply's final assistant message equals its golden `message_end` record
//! (usage and cost with the `run_pi.py` prices), and each request rebuilt from the goldens
//! equals the golden request after the harness's normalization.

use crate::anthropic_google_support;

use anthropic_google_support::{check_conformance_messages, check_conformance_requests};
use pi_ai::providers::AnthropicMessages;

const SCENARIOS: [&str; 5] = [
    "text_anthropic",
    "thinking_anthropic",
    "tool_read",
    "tool_invalid_args",
    "stream_error_event",
];

#[test]
fn final_messages_match_the_goldens() {
    for scenario in SCENARIOS {
        check_conformance_messages(&AnthropicMessages, scenario);
    }
}

#[test]
fn requests_match_the_goldens() {
    for scenario in SCENARIOS {
        check_conformance_requests(&AnthropicMessages, scenario);
    }
}
