//! SSE parser throughput (`pi_ai::sse::SseParser`), workload 4 of `cargo xtask bench`.
//!
//! - `sse/parse`: a ~10 MB body of typical streaming events (~170 bytes each) fed in 16 KiB
//!   reads; MB/s and, with the event count printed on the `pi-bench-meta` line, ns/event.
//! - `sse/big_event/1` vs `sse/big_event/4096`: one 4 MiB `data:` line delivered in one read
//!   vs 4,096 reads of 1 KiB. Goal: the 4,096-read case costs at most 3× the single read
//!   (the parser must not rescan or copy the pending line per read).
//!
//! Run: `cargo bench -p pi-ai --bench sse` (or through `cargo xtask bench`).

use std::hint::black_box;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use pi_ai::sse::{SseEvent, SseParser};

/// Prints the facts `cargo xtask bench` needs to turn a median into ns/event.
fn meta(id: &str, events: usize, bytes: usize) {
    println!("pi-bench-meta {id} events={events} bytes={bytes}");
}

/// A body of `target` bytes or a little more of Anthropic-shaped text-delta events.
fn typical_body(target: usize) -> (Vec<u8>, usize) {
    let words = [
        "the ", "quick ", "brown ", "fox ", "jumps ", "over ", "lazy ", "dog\\n",
    ];
    let mut body = Vec::with_capacity(target + 256);
    let mut n = 0;
    while body.len() < target {
        let text: String = (0..4).map(|k| words[(n + k) % words.len()]).collect();
        body.extend_from_slice(
            format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"text_delta\",\"text\":\"{text}\"}}}}\n\n"
            )
            .as_bytes(),
        );
        n += 1;
    }
    (body, n)
}

/// Feeds `chunks` to a fresh parser and returns the number of events.
fn parse(chunks: &[&[u8]], out: &mut Vec<SseEvent>) -> usize {
    let mut parser = SseParser::new();
    let mut count = 0;
    for chunk in chunks {
        parser.feed(chunk, out).expect("within the default limit");
        count += out.len();
        out.clear();
    }
    parser.finish(out).expect("within the default limit");
    count += out.len();
    out.clear();
    count
}

fn bench_sse(c: &mut Criterion) {
    let mut group = c.benchmark_group("sse");
    group.sampling_mode(SamplingMode::Flat);

    let (body, events) = typical_body(10 * 1024 * 1024);
    let reads: Vec<&[u8]> = body.chunks(16 * 1024).collect();
    let mut out = Vec::with_capacity(1024);
    assert_eq!(
        parse(&reads, &mut out),
        events,
        "generated body must parse fully"
    );
    meta("sse/parse", events, body.len());
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("parse", |b| b.iter(|| parse(black_box(&reads), &mut out)));

    let mut big = b"data: ".to_vec();
    big.extend(std::iter::repeat_n(b'x', 4 * 1024 * 1024));
    big.extend_from_slice(b"\n\n");
    for pieces in [1usize, 4096] {
        let size = big.len().div_ceil(pieces);
        let reads: Vec<&[u8]> = big.chunks(size).collect();
        assert_eq!(parse(&reads, &mut out), 1);
        let id = format!("big_event/{pieces}");
        meta(&format!("sse/{id}"), 1, big.len());
        group.throughput(Throughput::Bytes(big.len() as u64));
        group.bench_function(id, |b| b.iter(|| parse(black_box(&reads), &mut out)));
    }
    group.finish();
}

criterion_group!(benches, bench_sse);
criterion_main!(benches);
