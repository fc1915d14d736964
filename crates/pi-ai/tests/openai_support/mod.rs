//! Shared test harness for the OpenAI wire APIs: a miniature driver (SSE parser → mapper →
//! `start`/`done`/`error` framing) and the replay models of the recorded streams.

#![allow(dead_code)]

use pi_ai::event::{AssistantMessageEvent, PartialMessage};
use pi_ai::providers::WireApi;
use pi_ai::sse::{SseEvent, SseParser};
use pi_ai::types::{AssistantMessage, Model, ModelCost, StopReason, StreamOptions};

/// Path of a vendored test-data file.
pub(crate) fn data(rel: &str) -> String {
    format!("{}/tests/data/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// How the body is delivered to the SSE parser.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Chunking {
    /// One read.
    Whole,
    /// One read per line (split after each `\n`).
    Lines,
    /// Fixed-size reads.
    Bytes(usize),
}

/// The model a recorded stream is replayed as (conformance prices).
pub(crate) fn replay_model(api: &str, provider: &str, id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: api.into(),
        provider: provider.into(),
        base_url: "http://127.0.0.1:9/v1".into(),
        reasoning: false,
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: None,
        },
        context_window: 128_000,
        max_tokens: 16_384,
        ..Default::default()
    }
}

/// A finished run: the final message and the event summary (`kind[index]`, consecutive deltas
/// of one block merged as `xN`, terminal as `done(reason)` / `error(reason)`).
pub(crate) struct Run {
    pub message: AssistantMessage,
    pub events: Vec<String>,
}

fn chunks(bytes: &[u8], how: Chunking) -> Vec<&[u8]> {
    match how {
        Chunking::Whole => vec![bytes],
        Chunking::Lines => bytes.split_inclusive(|b| *b == b'\n').collect(),
        Chunking::Bytes(n) => bytes.chunks(n).collect(),
    }
}

/// Feeds `bytes` through the SSE parser and `api`'s mapper, framing like the driver.
pub(crate) fn run_stream(api: &dyn WireApi, model: &Model, bytes: &[u8], how: Chunking) -> Run {
    let partial = PartialMessage::new(AssistantMessage::empty(
        &model.api,
        &model.provider,
        &model.id,
    ));
    let mut mapper = api.new_mapper(model, partial.clone(), &StreamOptions::default());
    let mut parser = SseParser::new();
    let mut sse: Vec<SseEvent> = Vec::new();
    let mut events: Vec<AssistantMessageEvent> = vec![AssistantMessageEvent::Start {
        partial: partial.clone(),
    }];
    let mut failure: Option<String> = None;
    let mut process = |sse: &mut Vec<SseEvent>,
                       events: &mut Vec<AssistantMessageEvent>,
                       failure: &mut Option<String>| {
        for e in sse.drain(..) {
            if failure.is_some() {
                continue;
            }
            if let Err(t) = mapper.on_event(&e, events) {
                *failure = Some(t.to_string());
            }
        }
    };
    for c in chunks(bytes, how) {
        parser.feed(c, &mut sse).unwrap();
        process(&mut sse, &mut events, &mut failure);
    }
    parser.finish(&mut sse).unwrap();
    process(&mut sse, &mut events, &mut failure);
    if failure.is_none()
        && let Err(t) = mapper.on_end(&mut events)
    {
        failure = Some(t.to_string());
    }
    let message = partial.update(|m| {
        if let Some(t) = &failure {
            m.stop_reason = StopReason::Error;
            m.error_message = Some(t.clone());
        }
        m.clone()
    });
    let terminal = match &failure {
        Some(_) => "error(error)".to_owned(),
        None => format!("done({})", message.stop_reason.as_str()),
    };
    let mut summary: Vec<String> = Vec::new();
    let mut last_delta: Option<(String, usize, usize)> = None;
    for e in &events {
        let kind = e.kind();
        if kind.ends_with("_delta") {
            let idx = e.content_index().unwrap_or(0);
            match &mut last_delta {
                Some((k, i, n)) if k == kind && *i == idx => {
                    *n += 1;
                    summary.pop();
                    summary.push(format!("{kind}[{idx}]x{n}"));
                }
                _ => {
                    last_delta = Some((kind.to_owned(), idx, 1));
                    summary.push(format!("{kind}[{idx}]x1"));
                }
            }
            continue;
        }
        last_delta = None;
        summary.push(match e.content_index() {
            Some(i) => format!("{kind}[{i}]"),
            None => kind.to_owned(),
        });
    }
    summary.push(terminal);
    Run {
        message,
        events: summary,
    }
}
