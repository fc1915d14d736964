//! AgentEvent delivery through `Agent`, workload 4 of `cargo xtask bench` (the criterion form
//! of `examples/bench_delivery.rs`).
//!
//! One iteration is one `Agent::prompt` whose stream yields `DELTAS` one-byte text deltas, so
//! every delta becomes one `message_update` delivered to every (awaited) listener:
//! - `dispatch/listeners/1` and `/3`: ns per event with 1 and 3 listeners (goal ≤ 200 ns with
//!   3), the message already holding 1 KB;
//! - `dispatch/accumulated/1KB` and `/1MB`: one listener, the message already holding 1 KB vs
//!   1 MB of text (goal: ratio ≤ 1.5; the partial is shared, never copied per event).
//!
//! Run: `cargo bench -p pi-agent-core --bench dispatch` (or through `cargo xtask bench`).

use std::sync::Arc;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use pi_agent_core::{Agent, AgentOptions, StreamFn};
use pi_ai::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, PartialMessage, StopReason,
    TextContent, event_channel,
};

/// Text deltas per prompt.
const DELTAS: usize = 20_000;

/// Prints the facts `cargo xtask bench` needs to turn a median into ns/event.
fn meta(id: &str, events: usize, bytes: usize) {
    println!("pi-bench-meta {id} events={events} bytes={bytes}");
}

/// A stream of `DELTAS` one-byte text deltas on a message already holding `prefix` bytes.
fn delta_stream(prefix: usize) -> StreamFn {
    let text = Arc::new("x".repeat(prefix));
    Arc::new(move |model, _ctx, _opts| {
        let (mut sink, stream) = event_channel(None);
        let text = text.clone();
        tokio::spawn(async move {
            let mut m = AssistantMessage::empty(&model.api, &model.provider, &model.id);
            m.content
                .push(AssistantContent::Text(TextContent::new(text.as_str())));
            let partial = PartialMessage::new(m);
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

/// An agent streaming from `delta_stream(prefix)` with `listeners` awaited listeners.
fn agent(listeners: usize, prefix: usize) -> Agent {
    let agent = Agent::new(AgentOptions::new(delta_stream(prefix)));
    for _ in 0..listeners {
        // The subscription lives as long as the agent; dropping the handle does not detach.
        let _ = agent.subscribe(|_, _| async { Ok(()) });
    }
    agent
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
        ("listeners/1", 1, 1024),
        ("listeners/3", 3, 1024),
        ("accumulated/1KB", 1, 1024),
        ("accumulated/1MB", 1, 1024 * 1024),
    ];
    for (id, listeners, prefix) in cases {
        meta(&format!("dispatch/{id}"), DELTAS, 0);
        group.bench_function(id, |b| {
            b.iter_batched(
                || agent(listeners, prefix),
                |agent| {
                    if let Err(e) = rt.block_on(agent.prompt("bench")) {
                        panic!("prompt failed: {e}");
                    }
                    agent
                },
                criterion::BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench_dispatch);
criterion_main!(benches);
