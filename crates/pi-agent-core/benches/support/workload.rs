//! The `Agent::prompt` workloads shared by `benches/dispatch.rs` and
//! `examples/bench_delivery.rs`: `DELTAS` one-byte text deltas from a pre-filled stream or a
//! live producer task, delivered to N awaited listeners.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use pi_agent_core::{Agent, AgentOptions, StreamFn};
use pi_ai::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream,
    PartialMessage, StopReason, TextContent, event_channel,
};

/// Text deltas per prompt.
pub(crate) const DELTAS: usize = 20_000;

/// An assistant message holding one text block of `prefix` bytes.
pub(crate) fn message_with_text(prefix: usize) -> AssistantMessage {
    let mut m = AssistantMessage::empty("bench", "bench", "bench");
    m.content
        .push(AssistantContent::Text(TextContent::new("x".repeat(prefix))));
    m
}

/// A live stream: a spawned producer appends `DELTAS` one-byte deltas to `message` (taken
/// from the slot the setup filled) and pushes each through `event_channel`.
pub(crate) fn live_stream(slot: Arc<Mutex<Option<AssistantMessage>>>) -> StreamFn {
    Arc::new(move |_model, _ctx, _opts| {
        let (mut sink, stream) = event_channel(None);
        let message = slot
            .lock()
            .ok()
            .and_then(|mut s| s.take())
            .unwrap_or_default();
        tokio::spawn(async move {
            let partial = PartialMessage::new(message);
            sink.push(AssistantMessageEvent::Start {
                partial: partial.clone(),
            })
            .await;
            for _ in 0..DELTAS {
                partial.update(|m| {
                    if let Some(AssistantContent::Text(t)) = m.content.first_mut() {
                        t.text.push('y');
                    }
                });
                sink.push(AssistantMessageEvent::TextDelta {
                    content_index: 0,
                    delta: "y".into(),
                    partial: partial.clone(),
                })
                .await;
            }
            partial.update(|m| m.stop_reason = StopReason::Stop);
            let message = partial.snapshot();
            sink.push(AssistantMessageEvent::Done {
                reason: StopReason::Stop,
                message: Box::new(message),
            })
            .await;
        });
        stream
    })
}

/// The events of a whole response (`start`, `DELTAS` deltas, `done`), built in advance: the
/// partial already holds the final text, as after a producer ran ahead of the consumer.
pub(crate) fn filled_stream(prefix: usize) -> AssistantMessageEventStream {
    let mut m = message_with_text(prefix);
    if let Some(AssistantContent::Text(t)) = m.content.first_mut() {
        t.text.push_str(&"y".repeat(DELTAS));
    }
    m.stop_reason = StopReason::Stop;
    let partial = PartialMessage::new(m.clone());
    let mut events = Vec::with_capacity(DELTAS + 2);
    events.push(AssistantMessageEvent::Start {
        partial: partial.clone(),
    });
    events.extend((0..DELTAS).map(|_| AssistantMessageEvent::TextDelta {
        content_index: 0,
        delta: "y".into(),
        partial: partial.clone(),
    }));
    events.push(AssistantMessageEvent::Done {
        reason: StopReason::Stop,
        message: Box::new(m),
    });
    AssistantMessageEventStream::from_events(events)
}

/// A stream function handing out the stream the setup left in `slot`.
pub(crate) fn prefilled(slot: Arc<Mutex<Option<AssistantMessageEventStream>>>) -> StreamFn {
    Arc::new(move |_model, _ctx, _opts| {
        slot.lock()
            .ok()
            .and_then(|mut s| s.take())
            .unwrap_or_else(|| AssistantMessageEventStream::error_only(Default::default()))
    })
}

/// An agent streaming from `stream_fn` with `listeners` awaited listeners.
pub(crate) fn agent(stream_fn: StreamFn, listeners: usize) -> Agent {
    let agent = Agent::new(AgentOptions::new(stream_fn));
    for _ in 0..listeners {
        // The subscription lives as long as the agent; dropping the handle does not detach.
        let _ = agent.subscribe(|_, _| async { Ok(()) });
    }
    agent
}

/// How a case's stream is made.
#[derive(Clone, Copy)]
pub(crate) enum Source {
    /// Pre-filled (`delivery/*`).
    Filled,
    /// A live producer task (`end_to_end/*`, `accumulated/*`).
    Live,
}

/// An agent for one case: its stream built per [`Source`] with `prefix` bytes already in the
/// message, and `listeners` awaited listeners.
pub(crate) fn case_agent(source: Source, listeners: usize, prefix: usize) -> Agent {
    match source {
        Source::Filled => agent(
            prefilled(Arc::new(Mutex::new(Some(filled_stream(prefix))))),
            listeners,
        ),
        Source::Live => agent(
            live_stream(Arc::new(Mutex::new(Some(message_with_text(prefix))))),
            listeners,
        ),
    }
}
