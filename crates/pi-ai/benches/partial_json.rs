//! Per-delta cost of streamed tool-call arguments (`pi_ai::partial_json::PartialJsonParser`),
//! workload 4 of `cargo xtask bench`.
//!
//! A parser already holding 1 KB or 100 KB of an unterminated `{"path":…,"content":"…`
//! receives 16-byte fragments (batches of 256 resp. 32 from a fresh copy, so the size stays
//! near its label):
//! - `partial_json/push/<size>`: the push alone (goal: independent of the size, O(fragment));
//! - `partial_json/push_value/<size>`: push plus reading the published value
//!   (`arguments()`), what a wire mapper does per argument delta (goal: O(fragment) too; pi's
//!   `parseStreamingJson` re-parses the whole text every delta);
//! - `partial_json/stream/<size>`: a whole stream of 16-byte fragments from an empty parser
//!   to a 64 KB resp. 1 MB argument text, per fragment (goal: the same for both sizes: the
//!   stream is linear in its text).
//!
//! Run: `cargo bench -p pi-ai --bench partial_json` (or through `cargo xtask bench`).

use std::hint::black_box;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use pi_ai::partial_json::PartialJsonParser;

/// Prints the facts `cargo xtask bench` needs to turn a median into ns/event.
fn meta(id: &str, events: usize, bytes: usize) {
    println!("pi-bench-meta {id} events={events} bytes={bytes}");
}

/// A parser holding `size` bytes of arguments, inside the `content` string.
fn prefilled(size: usize) -> PartialJsonParser {
    let mut p = PartialJsonParser::new();
    p.push(r#"{"path":"src/lib.rs","content":""#);
    let line = "fn main() { println!(\\\"hi\\\"); }\\n";
    while p.buffer().len() < size {
        p.push(line);
    }
    p
}

const FRAGMENT: &str = "let x = 42;\\n    ";

/// Times `batch` consecutive pushes (and `value()` calls when `with_value`) per fresh copy of
/// `base`, for `iters` pushes in all. The copy and its first push (which reallocates: a clone
/// has no spare capacity) are not timed, so the timed pushes grow the buffers with the
/// amortized doubling of a real stream.
fn timed_pushes(base: &PartialJsonParser, iters: u64, batch: u64, with_value: bool) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(batch);
        let mut p = base.clone();
        p.push(FRAGMENT);
        let start = Instant::now();
        for _ in 0..n {
            p.push(black_box(FRAGMENT));
            if with_value {
                black_box(p.arguments().len());
            }
        }
        total += start.elapsed();
        left -= n;
    }
    total
}

fn bench_partial_json(c: &mut Criterion) {
    let mut group = c.benchmark_group("partial_json");
    for (label, size) in [("1KB", 1024usize), ("100KB", 100 * 1024)] {
        let base = prefilled(size);
        assert!(base.value().contains_key("content"));
        meta(&format!("partial_json/push/{label}"), 1, FRAGMENT.len());
        group.bench_function(format!("push/{label}"), |b| {
            b.iter_custom(|iters| timed_pushes(&base, iters, 256, false))
        });
        meta(
            &format!("partial_json/push_value/{label}"),
            1,
            FRAGMENT.len(),
        );
        group.bench_function(format!("push_value/{label}"), |b| {
            b.iter_custom(|iters| timed_pushes(&base, iters, 32, true))
        });
    }
    for (label, size) in [("64KB", 64 * 1024usize), ("1MB", 1024 * 1024)] {
        let fragments = size / FRAGMENT.len();
        meta(&format!("partial_json/stream/{label}"), fragments, size);
        group.bench_function(format!("stream/{label}"), |b| {
            b.iter(|| {
                let mut p = PartialJsonParser::new();
                p.push(r#"{"path":"src/lib.rs","content":""#);
                for _ in 0..fragments {
                    p.push(black_box(FRAGMENT));
                    black_box(p.arguments().len());
                }
                p.push("\"}");
                p.finish().map(|args| args.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_partial_json);
criterion_main!(benches);
