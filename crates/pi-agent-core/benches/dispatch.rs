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

use criterion::{BatchSize, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};

#[path = "support/workload.rs"]
mod workload;

use workload::{DELTAS, Source, case_agent};

/// Prints the facts `cargo xtask bench` needs to turn a median into ns/event.
fn meta(id: &str, events: usize, bytes: usize) {
    println!("pi-bench-meta {id} events={events} bytes={bytes}");
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
                || case_agent(source, listeners, prefix),
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
