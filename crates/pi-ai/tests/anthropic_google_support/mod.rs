//! Shared test harness for the wire mappers: replays an SSE body through a mapper in a chosen
//! chunking, framing the result as the driver does (`start`, mapped events, `done`/`error`),
//! and normalizes messages for comparison with the reference's recordings.
#![allow(dead_code)]

use pi_ai::providers::WireApi;
use pi_ai::{AssistantMessage, AssistantMessageEvent, Message, Model, PartialMessage, StopReason};
use serde_json::Value;

/// How the body is cut into network reads.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Chunking {
    Whole,
    Lines,
    Bytes(usize),
}

/// The four chunkings every stream must survive.
pub(crate) const CHUNKINGS: [Chunking; 4] = [
    Chunking::Whole,
    Chunking::Lines,
    Chunking::Bytes(1),
    Chunking::Bytes(7),
];

pub(crate) fn chunks(body: &[u8], chunking: Chunking) -> Vec<&[u8]> {
    match chunking {
        Chunking::Whole => vec![body],
        Chunking::Bytes(n) => body.chunks(n).collect(),
        Chunking::Lines => body.split_inclusive(|&b| b == b'\n').collect(),
    }
}

/// The final message and every event of one replay.
pub(crate) struct Outcome {
    pub message: AssistantMessage,
    pub events: Vec<AssistantMessageEvent>,
}

/// Replays `body` through `api`'s mapper for `model`.
pub(crate) fn replay(api: &dyn WireApi, model: &Model, body: &[u8], chunking: Chunking) -> Outcome {
    let options = pi_ai::StreamOptions::default();
    let partial = PartialMessage::new(AssistantMessage::empty(
        api.api(),
        &model.provider,
        &model.id,
    ));
    let mut mapper = api.new_mapper(model, partial.clone(), &options);
    let mut events = vec![AssistantMessageEvent::Start {
        partial: partial.clone(),
    }];
    // The API's own body decoder (SSE, or Bedrock's event stream), as the driver uses it.
    let mut parser = api.new_decoder();
    let mut sse = Vec::new();
    let mut result = Ok(());
    'read: for chunk in chunks(body, chunking) {
        let fed = parser.feed(chunk, &mut sse);
        for e in sse.drain(..) {
            result = mapper.on_event(&e, &mut events);
            if result.is_err() {
                break 'read;
            }
        }
        if let Err(e) = fed {
            result = Err(e);
            break;
        }
    }
    if result.is_ok() {
        let finished = parser.finish(&mut sse);
        for e in sse.drain(..) {
            result = mapper.on_event(&e, &mut events);
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            result = finished;
        }
    }
    if result.is_ok() {
        result = mapper.on_end(&mut events);
    }
    if result.is_err() {
        mapper.on_failure();
    }
    let message = match result {
        Ok(()) => {
            let message = partial.snapshot();
            events.push(AssistantMessageEvent::Done {
                reason: message.stop_reason,
                message: Box::new(message.clone()),
            });
            message
        }
        Err(text) => {
            partial.update(|m| {
                m.stop_reason = StopReason::Error;
                m.error_message = Some(text.to_string());
            });
            let message = partial.snapshot();
            events.push(AssistantMessageEvent::Error {
                reason: StopReason::Error,
                error: Box::new(message.clone()),
            });
            message
        }
    };
    Outcome { message, events }
}

/// The reference's compact event list: consecutive deltas of one block merged as `xN`.
pub(crate) fn event_summary(events: &[AssistantMessageEvent]) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for e in events {
        let label = match e {
            AssistantMessageEvent::Done { reason, .. }
            | AssistantMessageEvent::Error { reason, .. } => {
                format!("{}({})", e.kind(), reason.as_str())
            }
            _ => match e.content_index() {
                Some(i) => format!("{}[{i}]", e.kind()),
                None => e.kind().to_owned(),
            },
        };
        let is_delta = e.kind().ends_with("_delta");
        match out.last_mut() {
            Some((last, n)) if is_delta && *last == label => *n += 1,
            _ => out.push((label, 1)),
        }
    }
    out.into_iter()
        .map(|(label, n)| {
            if label.contains("_delta") {
                format!("{label}x{n}")
            } else {
                label
            }
        })
        .collect()
}

/// A message as JSON with its `role`, numbers as JavaScript writes them (`0`, not `0.0`).
pub(crate) fn message_json(message: &AssistantMessage) -> Value {
    let text = pi_ai::json::to_string(&Message::Assistant(message.clone())).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Replaces synthesized Google ids `<name>_<epochMs>_<n>` with `replacement(name, n)`.
pub(crate) fn normalize_google_ids(
    message: &mut Value,
    replacement: impl Fn(&str, &str) -> String,
) {
    let re = regex::Regex::new(r"^(.*)_\d{10,}_(\d+)$").unwrap();
    if let Some(Value::Array(content)) = message.get_mut("content") {
        for block in content {
            if block["type"] == "toolCall"
                && let Some(Value::String(id)) = block.get_mut("id")
                && let Some(c) = re.captures(id)
            {
                *id = replacement(&c[1], &c[2]);
            }
        }
    }
}

/// A data file under `tests/data/`.
pub(crate) fn data(path: &str) -> Vec<u8> {
    let full = format!("{}/tests/data/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

/// A JSON data file under `tests/data/`.
pub(crate) fn data_json(path: &str) -> Value {
    serde_json::from_slice(&data(path)).unwrap()
}

/// A model for replays.
pub(crate) fn model(api: &str, provider: &str, id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: api.into(),
        provider: provider.into(),
        ..Default::default()
    }
}

pub(crate) mod conformance;

/// Replays reply `i` of a conformance scenario and returns the final message as the golden
/// `message_end` record shows it (`timestamp` as `<TIMESTAMP_MS>`, Google's synthesized ids as
/// `<name>_<NOW>_<counter>`).
pub(crate) fn conformance_message(
    api: &dyn WireApi,
    scenario: &str,
    i: usize,
    chunking: Chunking,
) -> Value {
    let model = conformance::replay_model(scenario);
    let body = &conformance::replies(scenario)[i];
    let outcome = replay(api, &model, body, chunking);
    let mut got = message_json(&outcome.message);
    got["timestamp"] = Value::String("<TIMESTAMP_MS>".into());
    normalize_google_ids(&mut got, |name, n| format!("{name}_<NOW>_{n}"));
    got
}

/// Builds every request of a conformance scenario from its goldens and compares it with the
/// golden request after the harness's normalization.
pub(crate) fn check_conformance_requests(api: &dyn WireApi, scenario: &str) {
    let model = conformance::replay_model(scenario);
    let args = conformance::script_args(scenario);
    let reasoning = args
        .iter()
        .position(|a| a == "--thinking")
        .and_then(|i| args.get(i + 1))
        .map(|l| serde_json::from_value(Value::String(l.clone())).unwrap());
    let options = pi_ai::StreamOptions {
        reasoning,
        session_id: Some("0b6c4c1e-7a4e-4b1f-9d8e-2f3a4b5c6d7e".into()),
        ..Default::default()
    };
    let goldens = conformance::golden_requests(scenario);
    assert!(!goldens.is_empty());
    for (k, golden) in goldens.iter().enumerate() {
        let context = conformance::context_for(scenario, k, golden);
        let request = api
            .build_request(&model, &context, &options, "replay-test-key")
            .unwrap();
        assert_eq!(
            conformance::normalize_request(&request),
            conformance::golden_view(golden),
            "{scenario} request #{k}"
        );
    }
}

/// Replays every reply of a scenario and compares the final messages with the golden
/// assistant `message_end` records.
pub(crate) fn check_conformance_messages(api: &dyn WireApi, scenario: &str) {
    let goldens: Vec<Value> = conformance::golden_messages(scenario)
        .into_iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    let replies = conformance::replies(scenario);
    assert_eq!(
        goldens.len(),
        replies.len(),
        "{scenario}: one final message per reply"
    );
    for (i, golden) in goldens.iter().enumerate() {
        for chunking in CHUNKINGS {
            let got = conformance_message(api, scenario, i, chunking);
            assert_eq!(&got, golden, "{scenario} reply #{i} in {chunking:?}");
        }
    }
}
