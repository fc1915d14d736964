use super::*;
use crate::types::Message;
use proptest::prelude::*;

const USAGE: &str = r#"{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;

fn parse(json: &str) -> AssistantMessage {
    serde_json::from_str(json).unwrap()
}

/// pi 0.85.0 `--mode json`, a `models.json` key command that exits 3: the message pi-ai's
/// `lazyStream` builds (no content, `errorMessage` before `timestamp`).
#[test]
fn a_setup_error_is_written_as_pi_writes_it() {
    let mut m = AssistantMessage::setup_error(
        "openai-completions",
        "x",
        "m",
        "API key auth failed for provider x: exit 3".into(),
    );
    m.timestamp = 1796028164882;
    let json = crate::json::to_string(&Message::Assistant(m)).unwrap();
    assert_eq!(
        json,
        format!(
            r#"{{"role":"assistant","content":[],"api":"openai-completions","provider":"x","model":"m","usage":{USAGE},"stopReason":"error","errorMessage":"API key auth failed for provider x: exit 3","timestamp":1796028164882}}"#
        )
    );
}

/// A streamed message: every optional key, `errorMessage` after `timestamp` (pi-ai's
/// providers add it to the message being streamed).
const STREAMED: &str = r#"{"content":[{"type":"text","text":"hi"}],"api":"openai-responses","provider":"openai","model":"gpt","usage":USAGE,"stopReason":"error","timestamp":5,"responseId":"resp_1","responseModel":"gpt-x","providerThinkingLevel":"high","diagnostics":[{"type":"retry","timestamp":4}],"rawStopReason":"failed","errorMessage":"boom","endTurn":true,"deferred":{"id":"d"}}"#;

/// A Bedrock failure: pi appends its `bedrock_response_failure` diagnostic after
/// `errorMessage`, and the message keeps it there through a read and a write.
#[test]
fn diagnostics_appended_after_the_error_stay_last() {
    let json = format!(
        r#"{{"content":[],"api":"bedrock-converse-stream","provider":"amazon-bedrock","model":"m","usage":{USAGE},"stopReason":"error","timestamp":5,"rawStopReason":"guardrail_intervened","errorMessage":"Provider stopped with: guardrail_intervened","diagnostics":[{{"type":"bedrock_response_failure","timestamp":6,"details":{{"requestId":"r"}}}}]}}"#
    );
    let m = parse(&json);
    assert!(m.diagnostics_last);
    assert_eq!(crate::json::to_string(&m).unwrap(), json);
    let mut fixed = m.clone();
    fixed.diagnostics_last = false;
    let written = crate::json::to_string(&fixed).unwrap();
    assert!(
        written.contains(r#""timestamp":5,"diagnostics":"#),
        "{written}"
    );
    // In the usual place it is read as not last.
    assert!(!parse(&written).diagnostics_last);
}

#[test]
fn both_key_orders_are_read_and_written_back_unchanged() {
    let streamed = STREAMED.replace("USAGE", USAGE);
    let m = parse(&streamed);
    assert!(!m.error_before_timestamp);
    assert_eq!(m.error_message.as_deref(), Some("boom"));
    assert_eq!(m.response_id.as_deref(), Some("resp_1"));
    assert_eq!(m.diagnostics.as_ref().unwrap()[0].kind, "retry");
    assert_eq!(m.end_turn, Some(true));
    assert_eq!(crate::json::to_string(&m).unwrap(), streamed);

    let built = format!(
        r#"{{"content":[{{"type":"text","text":""}}],"api":"a","provider":"p","model":"m","usage":{USAGE},"stopReason":"aborted","errorMessage":"Request was aborted","timestamp":7}}"#
    );
    let m = parse(&built);
    assert!(m.error_before_timestamp);
    assert_eq!(crate::json::to_string(&m).unwrap(), built);
    // Inside a role-tagged message and with `with_role` too.
    let tagged = format!(r#"{{"role":"assistant",{}"#, &built[1..]);
    let Message::Assistant(m) = serde_json::from_str::<Message>(&tagged).unwrap() else {
        panic!("not an assistant message")
    };
    assert!(m.error_before_timestamp);
    assert_eq!(
        crate::json::to_string(&Message::Assistant(m.clone())).unwrap(),
        tagged
    );
    assert_eq!(crate::json::to_string(&m.with_role()).unwrap(), tagged);
}

#[test]
fn the_order_only_counts_when_both_keys_are_there() {
    let m = parse(r#"{"errorMessage":"e","api":"a","provider":"p","model":"m"}"#);
    assert!(!m.error_before_timestamp, "no timestamp");
    assert_eq!(m.timestamp, 0);
    let m = parse(r#"{"errorMessage":null,"timestamp":1,"api":"a","provider":"p","model":"m"}"#);
    assert!(!m.error_before_timestamp, "a null errorMessage is unset");
    assert_eq!(m.error_message, None);
    // The flag without an error message writes nothing extra.
    let m = AssistantMessage {
        error_before_timestamp: true,
        ..AssistantMessage::default()
    };
    let v: Value = serde_json::to_value(&m).unwrap();
    assert!(v.get("errorMessage").is_none());
}

#[test]
fn missing_null_unknown_and_repeated_keys_read_as_before() {
    let m = parse(
        r#"{"content":null,"api":"a","provider":"p","model":"m","responseId":null,"future":{"x":[1]}}"#,
    );
    assert!(m.content.is_empty());
    assert_eq!(m.usage, Usage::default());
    assert_eq!(m.stop_reason, StopReason::Pending);
    assert_eq!(m.response_id, None);

    let missing = serde_json::from_str::<AssistantMessage>(r#"{"api":"a","provider":"p"}"#)
        .unwrap_err()
        .to_string();
    assert!(missing.starts_with("missing field `model`"), "{missing}");
    let repeated = serde_json::from_str::<AssistantMessage>(
        r#"{"api":"a","api":"b","provider":"p","model":"m"}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(repeated.starts_with("duplicate field `api`"), "{repeated}");
    let wrong = serde_json::from_str::<AssistantMessage>(r#"{"api":1,"provider":"p","model":"m"}"#);
    assert!(wrong.is_err());
    let not_an_object = serde_json::from_str::<AssistantMessage>("[1]");
    assert!(not_an_object.is_err());
}

fn arb_message() -> impl Strategy<Value = AssistantMessage> {
    let opt_text = || proptest::option::of("[a-z\"\\\\é]{0,6}");
    (
        (opt_text(), opt_text(), opt_text(), opt_text(), opt_text()),
        (
            proptest::option::of(any::<bool>()),
            any::<bool>(),
            // JavaScript's exact integers: past 2^53 pi (and crate::json) keep the nearest double.
            -(1i64 << 53)..=(1i64 << 53),
            any::<bool>(),
        ),
        proptest::option::of(Just(serde_json::json!({"id": "d", "n": [1, 2]}))),
    )
        .prop_map(
            |((id, model, level, raw, error), (end_turn, before, ts, ids_before), deferred)| {
                AssistantMessage {
                    content: vec![AssistantContent::text("t")],
                    api: "api".into(),
                    provider: "p".into(),
                    model: "m".into(),
                    stop_reason: StopReason::Error,
                    timestamp: ts,
                    ids_before_timestamp: ids_before && (id.is_some() || deferred.is_some()),
                    response_id: id,
                    response_model: model,
                    provider_thinking_level: level,
                    raw_stop_reason: raw,
                    error_before_timestamp: before && error.is_some(),
                    error_message: error,
                    end_turn,
                    deferred,
                    ..AssistantMessage::default()
                }
            },
        )
}

proptest! {
    /// Written, then read: the same message (the order flag included), and the same text when
    /// written again.
    #[test]
    fn a_message_survives_a_round_trip(m in arb_message()) {
        let json = crate::json::to_string(&m).unwrap();
        let back: AssistantMessage = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&back, &m);
        prop_assert_eq!(crate::json::to_string(&back).unwrap(), json.clone());
        // Through a `Value` (serde_json's map keeps insertion order here only with
        // `preserve_order`; the typed path is what pi-rs uses).
        let value: Value = serde_json::from_str(&json).unwrap();
        let from_value: AssistantMessage = serde_json::from_value(value).unwrap();
        prop_assert_eq!(from_value.error_message, m.error_message);
    }
}
