//! Renderer benchmarks (`cargo bench -p pi-tui --bench render`, run by `cargo xtask bench`):
//!
//! - `render/delta/{10,10000}`: one streamed markdown delta (push, commit of finished blocks,
//!   one frame) with 10 and 10,000 messages already in the history; the ratio shows whether
//!   a delta's cost depends on the transcript's length (pi-tui re-renders every component
//!   each frame).
//! - `render/answer`: a whole streamed answer at 100×30; its meta line carries the deltas and
//!   the bytes written, i.e. bytes per delta.
//! - `render/frame_200x60`: one delta and frame at 200×60 with a 45-line live region; the
//!   bench also times 3,000 frames one by one and prints their 99th percentile
//!   (`pi-bench-p99`).

use std::sync::Arc;
use std::time::Instant;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use pi_tui::Component;
use pi_tui::capabilities::ColorDepth;
use pi_tui::components::{StreamingMarkdown, Text};
use pi_tui::style::Style;
use pi_tui::tui::{Tui, TuiOptions};

const ANSWER: &str = include_str!("../tests/data/answers/mixed-long.md");

/// The deltas of the answer: 3 to 12 bytes, as a model streams.
fn deltas() -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut k = 0;
    while at < ANSWER.len() {
        let mut end = (at + 3 + (k * 7) % 10).min(ANSWER.len());
        while !ANSWER.is_char_boundary(end) {
            end += 1;
        }
        out.push(&ANSWER[at..end]);
        at = end;
        k += 1;
    }
    out
}

/// CPU time of the calling thread, ns.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass.
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

struct Dock;

impl Component for Dock {
    fn render(&mut self, width: u16) -> Vec<String> {
        let rule = "─".repeat(usize::from(width));
        vec![
            rule.clone(),
            "> ".into(),
            rule,
            "~/project (main) · model".into(),
        ]
    }
}

/// A transcript streaming the answer over and over.
struct Session {
    tui: Tui,
    live: StreamingMarkdown,
    style: Arc<Style>,
    deltas: Vec<&'static str>,
    next: usize,
    bytes: u64,
    t: Instant,
}

impl Session {
    fn new(width: u16, height: u16, history: usize) -> Self {
        Self::with_style(
            width,
            height,
            history,
            Style::dark(ColorDepth::TrueColor, true),
        )
    }

    fn with_style(width: u16, height: u16, history: usize, style: Style) -> Self {
        let style = Arc::new(style);
        let opts = TuiOptions {
            min_frame_interval: std::time::Duration::ZERO,
            ..TuiOptions::default()
        };
        let mut tui = Tui::new(width, height, opts);
        // A fresh terminal with the cursor on the top row, as a cursor position report at
        // start says.
        tui.set_cursor_row(0);
        for i in 0..history {
            tui.commit(Box::new(Text::new(format!(
                "message {i}: an earlier exchange with a few words in it"
            ))));
        }
        let mut s = Self {
            tui,
            live: StreamingMarkdown::new(style.clone()),
            style,
            deltas: deltas(),
            next: 0,
            bytes: 0,
            t: Instant::now(),
        };
        // Write the history once, outside the measurement.
        let t = s.t;
        let _ = s.tui.frame(&mut s.live, &mut Dock, t, true);
        s
    }

    /// One delta: push, commit finished blocks, build the frame. Returns the frame's bytes.
    fn delta(&mut self) -> usize {
        let d = self.deltas[self.next];
        self.next += 1;
        self.live.push(d);
        for b in self.live.take_finished() {
            self.tui.commit(Box::new(b));
        }
        if self.next == self.deltas.len() {
            for b in self.live.finish() {
                self.tui.commit(Box::new(b));
            }
            self.live = StreamingMarkdown::new(self.style.clone());
            self.next = 0;
        }
        let t = self.t;
        let n = self
            .tui
            .frame(&mut self.live, &mut Dock, t, true)
            .map_or(0, |b| b.len());
        self.bytes += n as u64;
        n
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("render");
    for n in [10usize, 10_000] {
        let mut s = Session::new(100, 30, n);
        println!("pi-bench-meta render/delta/{n} events=1 bytes=0");
        g.bench_with_input(BenchmarkId::new("delta", n), &n, |b, _| {
            b.iter(|| s.delta())
        });
    }

    // Bytes per delta over one whole answer, without colours (as the TypeScript pi-tui is
    // measured beside it, with an identity theme).
    let ds = deltas().len();
    let mut s = Session::with_style(100, 30, 10, Style::dark(ColorDepth::None, false));
    let mut total = 0usize;
    for _ in 0..ds {
        total += s.delta();
    }
    println!("pi-bench-meta render/answer events={ds} bytes={total}");
    g.bench_function("answer", |b| {
        b.iter(|| {
            let mut s = Session::new(100, 30, 10);
            for _ in 0..ds {
                s.delta();
            }
        })
    });

    // Frame build time at 200×60, with a live region of 45 lines: the answer's first part
    // pushed as one open code block so nothing commits.
    let mut s = Session::new(200, 60, 1000);
    let mut base = String::from("```text\n");
    for i in 0..44 {
        base.push_str(&format!(
            "line {i} of a long tool output that keeps streaming\n"
        ));
    }
    let mut tick = 0u64;
    let mut frame = move || {
        // The open block grows by one byte a frame and starts over every 64 frames, so the
        // frame measured stays the same size however many iterations criterion runs.
        if tick.is_multiple_of(64) {
            s.live = StreamingMarkdown::new(s.style.clone());
            s.live.push(&base);
        }
        tick += 1;
        s.live.push(if tick.is_multiple_of(2) { "x" } else { "y" });
        let t = s.t;
        s.tui
            .frame(&mut s.live, &mut Dock, t, true)
            .map_or(0, |b| b.len())
    };
    // Wall time and this thread's CPU time per frame: on a shared machine the wall time's
    // tail is the scheduler's, the CPU time's is ours.
    let (mut wall, mut cpu): (Vec<u64>, Vec<u64>) = (0..3000)
        .map(|_| {
            let (t, c) = (Instant::now(), thread_cpu_ns());
            std::hint::black_box(frame());
            (
                t.elapsed().as_nanos() as u64,
                thread_cpu_ns().saturating_sub(c),
            )
        })
        .unzip();
    wall.sort_unstable();
    cpu.sort_unstable();
    let p99 = |v: &[u64]| v[v.len() * 99 / 100];
    println!("pi-bench-meta render/frame_200x60 events=1 bytes=0");
    println!(
        "pi-bench-p99 render/frame_200x60 wall_ns={} cpu_ns={}",
        p99(&wall),
        p99(&cpu)
    );
    g.bench_function("frame_200x60", |b| b.iter(&mut frame));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
