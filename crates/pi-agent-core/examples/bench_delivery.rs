//! Micro-benchmark (criterion-free) of event delivery through `Agent`:
//! - ns per `message_update` with 1 and 3 awaited listeners;
//! - ns per text delta with 1 KB vs 1 MB already accumulated (the ratio shows whether the
//!   per-delta cost depends on the message length; the partial is shared, so it should not).
//!
//! Run in release mode on an otherwise idle machine:
//! `cargo run --release -p pi-agent-core --example bench_delivery`

use std::sync::Arc;
use std::time::Instant;

use pi_agent_core::{Agent, AgentOptions, StreamFn};
use pi_ai::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, PartialMessage, StopReason,
    TextContent, event_channel,
};

/// A stream of `deltas` one-byte text deltas on a message already holding `prefix` bytes.
fn delta_stream(deltas: usize, prefix: usize) -> StreamFn {
    Arc::new(move |model, _ctx, _opts| {
        let (mut sink, stream) = event_channel(None);
        tokio::spawn(async move {
            let mut m = AssistantMessage::empty(&model.api, &model.provider, &model.id);
            m.content
                .push(AssistantContent::Text(TextContent::new("x".repeat(prefix))));
            let partial = PartialMessage::new(m);
            sink.push(AssistantMessageEvent::Start {
                partial: partial.clone(),
            })
            .await;
            for _ in 0..deltas {
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

async fn ns_per_delta(listeners: usize, deltas: usize, prefix: usize) -> f64 {
    let agent = Agent::new(AgentOptions::new(delta_stream(deltas, prefix)));
    for _ in 0..listeners {
        agent.subscribe(|_, _| async { Ok(()) });
    }
    let start = Instant::now();
    if let Err(e) = agent.prompt("bench").await {
        eprintln!("run failed: {e}");
    }
    start.elapsed().as_nanos() as f64 / deltas as f64
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let one = ns_per_delta(1, n, 1024).await;
    let three = ns_per_delta(3, n, 1024).await;
    println!("ns/event (1 listener):  {one:.0}");
    println!("ns/event (3 listeners): {three:.0}");
    let small = ns_per_delta(1, n, 1024).await;
    let large = ns_per_delta(1, n, 1024 * 1024).await;
    println!("ns/delta at 1 KB: {small:.0}");
    println!("ns/delta at 1 MB: {large:.0}");
    println!("ratio 1 MB / 1 KB: {:.2}", large / small);
}
