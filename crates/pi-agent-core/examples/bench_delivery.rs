//! Criterion-free form of `benches/dispatch.rs` that also reports **on-CPU** time, for a
//! loaded machine where wall-clock medians measure the other jobs.
//!
//! Same cases as the bench (one `Agent::prompt` of `DELTAS` one-byte text deltas, on a
//! current-thread runtime, so the producer task, the loop and the listeners all run on this
//! thread): `delivery/N` (stream filled in advance: the agent's per-event work and the delivery
//! to N awaited listeners), `end_to_end/N` (a live producer task and `event_channel`), and
//! `accumulated/1KB|1MB` (end to end with 1 KB vs 1 MB already in the message).
//!
//! For each case it runs `RUNS` prompts and prints the median ns/event of wall time and of the
//! thread's on-CPU time (`CLOCK_THREAD_CPUTIME_ID`).
//!
//! Run: `cargo run --profile bench -p pi-agent-core --example bench_delivery [runs] [case]`
//! (`case`: only the cases whose name contains it). Under `valgrind --tool=callgrind` it
//! gives exact instruction counts per function, unaffected by the machine's load.

use std::time::Instant;

#[path = "../benches/support/workload.rs"]
mod workload;

use workload::{DELTAS, Source, case_agent};

/// This thread's on-CPU time in ns (`CLOCK_THREAD_CPUTIME_ID`, exact on Linux).
fn cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(30);
    let filter = std::env::args().nth(2).unwrap_or_default();
    let rt = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => panic!("tokio runtime: {e}"),
    };
    let cases = [
        ("delivery/1", Source::Filled, 1, 1024),
        ("delivery/3", Source::Filled, 3, 1024),
        ("end_to_end/1", Source::Live, 1, 1024),
        ("end_to_end/3", Source::Live, 3, 1024),
        ("accumulated/1KB", Source::Live, 1, 1024),
        ("accumulated/1MB", Source::Live, 1, 1024 * 1024),
    ];
    println!("{:<18} {:>12} {:>12}", "case", "wall ns/ev", "cpu ns/ev");
    for (id, source, listeners, prefix) in cases {
        if !id.contains(filter.as_str()) {
            continue;
        }
        let (mut wall, mut cpu) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let agent = case_agent(source, listeners, prefix);
            let (c0, t0) = (cpu_ns(), Instant::now());
            if let Err(e) = rt.block_on(agent.prompt("bench")) {
                panic!("prompt failed: {e}");
            }
            let (t1, c1) = (t0.elapsed(), cpu_ns());
            wall.push(t1.as_nanos() as f64 / DELTAS as f64);
            if let (Some(a), Some(b)) = (c0, c1) {
                cpu.push(b.saturating_sub(a) as f64 / DELTAS as f64);
            }
        }
        let cpu = if cpu.is_empty() {
            "-".to_owned()
        } else {
            format!("{:.0}", median(&mut cpu))
        };
        println!("{id:<18} {:>12.0} {cpu:>12}", median(&mut wall));
    }
}
