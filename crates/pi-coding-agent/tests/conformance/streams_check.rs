//! The recorded-stream checker's pieces (`support/streams.rs`, a port of
//! `conformance/check_streams.py`), tested without running the binary.

use crate::support;

use serde_json::json;
use support::streams::{check_correct, first_assistant, follow_up, py_eq, streams, strip};

#[test]
fn all_25_recorded_streams_are_found_with_their_expectations() {
    let all = streams();
    assert_eq!(all.len(), 25);
    for (api, name, body, expected) in &all {
        assert!(body.is_file() && expected.is_file(), "{api}/{name}");
        let exp: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(expected).unwrap()).unwrap();
        assert_eq!(exp["replay_model"]["api"], api.as_str(), "{name}");
        assert!(!follow_up(api).is_empty());
    }
}

#[test]
fn python_equality_treats_ints_and_floats_alike() {
    assert!(py_eq(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
    assert!(!py_eq(&json!({"a": 1}), &json!({"a": 1, "b": null})));
    assert!(!py_eq(&json!("1"), &json!(1)));
}

#[test]
fn strip_keeps_what_is_compared() {
    let msg = json!({"role": "assistant", "content": [{"type": "toolCall", "id": "<generated 1>", "name": "x"}],
                     "usage": {"input": 1, "cost": {"total": 2}}, "stopReason": "toolUse", "errorMessage": "",
                     "timestamp": 5});
    assert_eq!(
        strip(&msg),
        json!({"content": [{"type": "toolCall", "id": "<generated>", "name": "x"}], "stopReason": "toolUse",
               "responseId": null, "usage": {"input": 1}, "hasError": false})
    );
    assert_eq!(strip(&json!({"errorMessage": "boom"}))["hasError"], true);
}

#[test]
fn first_assistant_message_end() {
    let out = "{\"type\":\"session\"}\nnot json\n{\"type\":\"message_end\",\"message\":{\"role\":\"user\"}}\n\
               {\"type\":\"message_end\",\"message\":{\"role\":\"assistant\",\"n\":1}}\n\
               {\"type\":\"message_end\",\"message\":{\"role\":\"assistant\",\"n\":2}}\n";
    assert_eq!(
        first_assistant(out),
        Some(json!({"role": "assistant", "n": 1}))
    );
    assert_eq!(first_assistant(""), None);
}

#[test]
fn corrected_results_are_checked_field_by_field() {
    let got = json!({"content": [{"type": "thinking", "thinking": "a"}, {"type": "thinking", "thinking": "b"},
                                 {"type": "toolCall", "name": "f", "arguments": {"x": 1}}], "stopReason": "toolUse"});
    assert_eq!(
        check_correct(
            &got,
            &json!({"thinking": "ab", "toolCalls": [{"name": "f", "arguments": {"x": 1.0}}]})
        ),
        Ok(())
    );
    assert_eq!(
        check_correct(&got, &json!({"text": "t", "stopReason": "stop"})),
        Err("differs from the correct result in text,stopReason".into())
    );
}
