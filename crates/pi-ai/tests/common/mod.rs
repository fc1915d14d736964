//! Shared test harness for the wire mappers: replays an SSE body through a mapper in a chosen
//! chunking, framing the result as the driver does (`start`, mapped events, `done`/`error`),
//! and normalizes messages for comparison with the reference's recordings.
#![allow(dead_code)]

use pi_ai::providers::WireApi;
use pi_ai::{AssistantMessage, AssistantMessageEvent, Message, Model, PartialMessage, StopReason};
use serde_json::Value;
use pi_ai::sse::SseParser;

/// How the body is cut into network reads.
#[derive(Clone, Copy, Debug)]
pub enum Chunking {
    Whole,
    Lines,
    Bytes(usize),
}

/// The four chunkings every stream must survive.
pub const CHUNKINGS: [Chunking; 4] = [
    Chunking::Whole,
    Chunking::Lines,
    Chunking::Bytes(1),
    Chunking::Bytes(7),
];

pub fn chunks(body: &[u8], chunking: Chunking) -> Vec<&[u8]> {
    match chunking {
        Chunking::Whole => vec![body],
        Chunking::Bytes(n) => body.chunks(n).collect(),
        Chunking::Lines => body.split_inclusive(|&b| b == b'\n').collect(),
    }
}

/// The final message and every event of one replay.
pub struct Outcome {
    pub message: AssistantMessage,
    pub events: Vec<AssistantMessageEvent>,
}

/// Replays `body` through `api`'s mapper for `model`.
pub fn replay(api: &dyn WireApi, model: &Model, body: &[u8], chunking: Chunking) -> Outcome {
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
    let mut parser = SseParser::new();
    let mut sse = Vec::new();
    let mut result = Ok(());
    'read: for chunk in chunks(body, chunking) {
        parser.feed(chunk, &mut sse);
        for e in sse.drain(..) {
            result = mapper.on_event(&e, &mut events);
            if result.is_err() {
                break 'read;
            }
        }
    }
    if result.is_ok() {
        parser.finish(&mut sse);
        for e in sse.drain(..) {
            result = mapper.on_event(&e, &mut events);
            if result.is_err() {
                break;
            }
        }
    }
    if result.is_ok() {
        result = mapper.on_end(&mut events);
    }
    let message = match result {
        Ok(()) => {
            let message = partial.snapshot();
            events.push(AssistantMessageEvent::Done {
                reason: message.stop_reason,
                message: message.clone(),
            });
            message
        }
        Err(text) => {
            partial.update(|m| {
                m.stop_reason = StopReason::Error;
                m.error_message = Some(text);
            });
            let message = partial.snapshot();
            events.push(AssistantMessageEvent::Error {
                reason: StopReason::Error,
                error: message.clone(),
            });
            message
        }
    };
    Outcome { message, events }
}

/// The reference's compact event list: consecutive deltas of one block merged as `xN`.
pub fn event_summary(events: &[AssistantMessageEvent]) -> Vec<String> {
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

/// A message as JSON with its `role`.
pub fn message_json(message: &AssistantMessage) -> Value {
    serde_json::to_value(Message::Assistant(message.clone())).unwrap()
}

/// Replaces synthesized Google ids `<name>_<epochMs>_<n>` with `replacement(name, n)`.
pub fn normalize_google_ids(message: &mut Value, replacement: impl Fn(&str, &str) -> String) {
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
pub fn data(path: &str) -> Vec<u8> {
    let full = format!("{}/tests/data/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

/// A JSON data file under `tests/data/`.
pub fn data_json(path: &str) -> Value {
    serde_json::from_slice(&data(path)).unwrap()
}

/// A model for replays.
pub fn model(api: &str, provider: &str, id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: api.into(),
        provider: provider.into(),
        ..Default::default()
    }
}
