//! AgentEvent delivery through `Agent`, workload 4 of `cargo xtask bench` (the criterion form
//! of `examples/bench_delivery.rs`).
//!
//! One iteration is one `Agent::prompt` whose stream yields `DELTAS` one-byte text deltas, so
//! every delta becomes one `message_update` delivered to every (awaited) listener. The
//! dozen other events of a prompt (`agent_start`, the user message, `message_start`/`_end`,
//! `turn_end`, `agent_end`) are in the timed iteration too, spread over the deltas.
//!
//! - `dispatch/delivery/1` and `/3`: **the dispatch cost** — the agent's per-event work (the
//!   loop taking the event off the stream, wrapping it in an `AgentEvent`, reducing the state)
//!   and its awaited delivery to 1 and 3 listeners (goal ≤ 200 ns/event with 3). The stream is
//!   already filled when the prompt starts (built in the un-timed setup), so no producer task
//!   runs and the stream never waits.
//! - `dispatch/end_to_end/1` and `/3`: the same with a live producer: a spawned task updates
//!   the shared partial and pushes each delta through `pi_ai::event_channel` (bounded), so
//!   the figure adds the producer's work and the task switches of a real stream.
//! - `dispatch/accumulated/1KB` and `/1MB`: end to end, one listener, the message already
//!   holding 1 KB vs 1 MB of text (goal: ratio ≤ 1.5; the partial is shared, never copied per
//!   event). The 1 MB message is built in the setup; what the prompt copies of it once per
//!   message (`message_start`'s snapshot, the final message) is timed.
//!
//! All cases run on a current-thread tokio runtime (the agent, the producer and the
//! listeners share one thread, as in the CLI's event loop).
//!
//! Run: `cargo bench -p pi-agent-core --bench dispatch` (or through `cargo xtask bench`).

use std::sync::{Arc, Mutex};

use criterion::{BatchSize, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use pi_agent_core::{Agent, AgentOptions, StreamFn};
use pi_ai::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream,
    PartialMessage, StopReason, TextContent, event_channel,
};

/// Text deltas per prompt.
const DELTAS: usize = 20_000;

/// Prints the facts `cargo xtask bench` needs to turn a median into ns/event.
fn meta(id: &str, events: usize, bytes: usize) {
    println!("pi-bench-meta {id} events={events} bytes={bytes}");
}

/// An assistant message holding one text block of `prefix` bytes.
fn message_with_text(prefix: usize) -> AssistantMessage {
    let mut m = AssistantMessage::empty("bench", "bench", "bench");
    m.content
        .push(AssistantContent::Text(TextContent::new("x".repeat(prefix))));
    m
}

/// A live stream: a spawned producer appends `DELTAS` one-byte deltas to `message` (taken
/// from the slot the setup filled) and pushes each through `event_channel`.
fn live_stream(slot: Arc<Mutex<Option<AssistantMessage>>>) -> StreamFn {
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
                message,
            })
            .await;
        });
        stream
    })
}

/// The events of a whole response (`start`, `DELTAS` deltas, `done`), built in advance: the
/// partial already holds the final text, as after a producer ran ahead of the consumer.
fn filled_stream(prefix: usize) -> AssistantMessageEventStream {
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
        message: m,
    });
    AssistantMessageEventStream::from_events(events)
}

/// A stream function handing out the stream the setup left in `slot`.
fn prefilled(slot: Arc<Mutex<Option<AssistantMessageEventStream>>>) -> StreamFn {
    Arc::new(move |_model, _ctx, _opts| {
        slot.lock()
            .ok()
            .and_then(|mut s| s.take())
            .unwrap_or_else(|| AssistantMessageEventStream::error_only(Default::default()))
    })
}

/// An agent streaming from `stream_fn` with `listeners` awaited listeners.
fn agent(stream_fn: StreamFn, listeners: usize) -> Agent {
    let agent = Agent::new(AgentOptions::new(stream_fn));
    for _ in 0..listeners {
        // The subscription lives as long as the agent; dropping the handle does not detach.
        let _ = agent.subscribe(|_, _| async { Ok(()) });
    }
    agent
}

/// How a case's stream is made.
#[derive(Clone, Copy)]
enum Source {
    /// Pre-filled (`delivery/*`).
    Filled,
    /// A live producer task (`end_to_end/*`, `accumulated/*`).
    Live,
}

fn bench_dispatch(c: &mut Criterion) {
    let rt = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => panic!("tokio runtime: {e}"),
    };
    let mut group = c.benchmark_group("dispatch");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(DELTAS as u64));
    let cases = [
        ("delivery/1", Source::Filled, 1, 1024),
        ("delivery/3", Source::Filled, 3, 1024),
        ("end_to_end/1", Source::Live, 1, 1024),
        ("end_to_end/3", Source::Live, 3, 1024),
        ("accumulated/1KB", Source::Live, 1, 1024),
        ("accumulated/1MB", Source::Live, 1, 1024 * 1024),
    ];
    for (id, source, listeners, prefix) in cases {
        meta(&format!("dispatch/{id}"), DELTAS, 0);
        group.bench_function(id, |b| {
            b.iter_batched(
                || match source {
                    Source::Filled => {
                        let slot = Arc::new(Mutex::new(Some(filled_stream(prefix))));
                        agent(prefilled(slot), listeners)
                    }
                    Source::Live => {
                        let slot = Arc::new(Mutex::new(Some(message_with_text(prefix))));
                        agent(live_stream(slot), listeners)
                    }
                },
                |agent| {
                    if let Err(e) = rt.block_on(agent.prompt("bench")) {
                        panic!("prompt failed: {e}");
                    }
                    agent
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench_dispatch);
criterion_main!(benches);
