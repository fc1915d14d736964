//! Input-side costs of `pi-tui`, workload 4 of `cargo xtask bench`.
//!
//! - `input/decode`: ~1 MB of mixed terminal input (typed text, Kitty CSI-u keys, arrows,
//!   Alt+keys) fed to `keys::Decoder` in 4 KiB reads; MB/s and ns per decoded event.
//! - `input/paste`: one 1 MiB bracketed paste in 4 KiB reads (the decoder must not rescan the
//!   pending paste per read).
//! - `editor/keystroke/10` vs `editor/keystroke/1000`: one typed character plus one
//!   `render(100)` of an editor holding 10 vs 1,000 lines of text; what a keystroke costs
//!   before the renderer's diff.
//!
//! Run: `cargo bench -p pi-tui --bench input` (or through `cargo xtask bench`).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use pi_tui::components::editor::{Editor, EditorStyle};
use pi_tui::keybindings::{Keybindings, Platform};
use pi_tui::keys::{Decoded, Decoder};
use pi_tui::{Component, InputEvent, KeyCode, KeyEvent, Modifiers};

/// Prints the facts `cargo xtask bench` needs to turn a median into ns/event.
fn meta(id: &str, events: usize, bytes: usize) {
    println!("pi-bench-meta {id} events={events} bytes={bytes}");
}

fn mixed_input(target: usize) -> Vec<u8> {
    let pieces: [&[u8]; 8] = [
        b"hello world ",
        "gr\u{fc}\u{df}e ".as_bytes(),
        b"\x1b[97;5u",
        b"\x1b[1;5C",
        b"\x1b[A",
        b"\x1bb",
        b"\x1b[13;2u",
        b"\x7f",
    ];
    let mut out = Vec::with_capacity(target + 32);
    let mut i = 0;
    while out.len() < target {
        out.extend_from_slice(pieces[i % pieces.len()]);
        i += 1;
    }
    out
}

fn decode(reads: &[&[u8]], out: &mut Vec<Decoded>) -> usize {
    let mut d = Decoder::new();
    let mut n = 0;
    for r in reads {
        d.feed(r, out);
        n += out.len();
        out.clear();
    }
    d.flush_pending(out);
    n + out.len()
}

fn bench_decoder(c: &mut Criterion) {
    let mut group = c.benchmark_group("input");
    group.sampling_mode(SamplingMode::Flat);
    let body = mixed_input(1024 * 1024);
    let reads: Vec<&[u8]> = body.chunks(4096).collect();
    let mut out = Vec::with_capacity(4096);
    let events = decode(&reads, &mut out);
    meta("input/decode", events, body.len());
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("decode", |b| b.iter(|| decode(black_box(&reads), &mut out)));

    let mut paste = b"\x1b[200~".to_vec();
    paste.extend(std::iter::repeat_n(b'p', 1024 * 1024));
    paste.extend_from_slice(b"\x1b[201~");
    let reads: Vec<&[u8]> = paste.chunks(4096).collect();
    assert_eq!(decode(&reads, &mut out), 1);
    meta("input/paste", 1, paste.len());
    group.throughput(Throughput::Bytes(paste.len() as u64));
    group.bench_function("paste", |b| b.iter(|| decode(black_box(&reads), &mut out)));
    group.finish();
}

fn bench_editor(c: &mut Criterion) {
    let mut group = c.benchmark_group("editor");
    let kb = Arc::new(Keybindings::defaults(Platform::Unix));
    let key = InputEvent::Key(KeyEvent::new(KeyCode::Char('x'), Modifiers::NONE));
    let backspace = InputEvent::Key(KeyEvent::new(KeyCode::Backspace, Modifiers::NONE));
    for lines in [10usize, 1000] {
        let mut editor = Editor::new(Arc::clone(&kb), EditorStyle::default());
        editor.set_focused(true);
        editor.set_terminal_rows(50);
        let text: Vec<String> = (0..lines)
            .map(|i| {
                format!("line {i}: the quick brown fox jumps over the lazy dog, again and again")
            })
            .collect();
        editor.set_text(&text.join("\n"));
        editor.render(100);
        let id = format!("keystroke/{lines}");
        meta(&format!("editor/{id}"), 1, 0);
        group.bench_function(id, |b| {
            b.iter(|| {
                editor.handle_input(&key);
                let rendered = editor.render(black_box(100));
                editor.handle_input(&backspace);
                rendered
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_decoder, bench_editor);
criterion_main!(benches);
