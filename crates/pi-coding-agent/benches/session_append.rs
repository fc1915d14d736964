//! Session append throughput on a real file with the durability policy on, workload 4 of
//! `cargo xtask bench`.
//!
//! `SessionStore::append` writes every entry at once and `fdatasync`s after assistant messages
//! and compactions (the checkpoints). One iteration appends one turn of the shape pi writes —
//! user, assistant with a tool call, tool result, assistant (~2.4 KB, two `fdatasync`s) — to
//! a session file opened in a temporary directory:
//! - `session/append_turn`: the four appends (bytes/s and, per `pi-bench-meta`, ns/entry);
//! - `session/append_user`: one user-message append alone (no sync: the write path only).
//!
//! Run: `cargo bench -p pi-coding-agent --bench session_append`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pi_coding_agent::storage::{EntryKind, SessionEntry, SessionStore};

/// Prints the facts `cargo xtask bench` needs to turn a median into ns/event.
fn meta(id: &str, events: usize, bytes: usize) {
    println!("pi-bench-meta {id} events={events} bytes={bytes}");
}

const USAGE: &str = r#"{"input":1200,"output":300,"cacheRead":0,"cacheWrite":0,"totalTokens":1500,"cost":{"input":0.0036,"output":0.0045,"cacheRead":0,"cacheWrite":0,"total":0.0081}}"#;

fn words(n: usize) -> String {
    const W: [&str; 8] = [
        "the", "quick", "brown", "fox", "reads", "files", "and", "edits",
    ];
    (0..n).map(|i| W[i % W.len()]).collect::<Vec<_>>().join(" ")
}

/// The entry kinds of one turn, parsed from lines shaped like a real session's.
fn turn() -> Vec<EntryKind> {
    let lines = [
        format!(
            r#"{{"type":"message","id":"a0000001","parentId":null,"timestamp":"2026-06-01T10:00:00.000Z","message":{{"role":"user","content":[{{"type":"text","text":"{}"}}],"timestamp":1780308000000}}}}"#,
            words(60)
        ),
        format!(
            r#"{{"type":"message","id":"a0000002","parentId":"a0000001","timestamp":"2026-06-01T10:00:01.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{}"}},{{"type":"toolCall","id":"toolu_01","name":"read","arguments":{{"path":"src/main.rs"}}}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{USAGE},"stopReason":"toolUse","timestamp":1780308001000}}}}"#,
            words(40)
        ),
        format!(
            r#"{{"type":"message","id":"a0000003","parentId":"a0000002","timestamp":"2026-06-01T10:00:02.000Z","message":{{"role":"toolResult","toolCallId":"toolu_01","toolName":"read","content":[{{"type":"text","text":"{}"}}],"isError":false,"timestamp":1780308002000}}}}"#,
            words(250)
        ),
        format!(
            r#"{{"type":"message","id":"a0000004","parentId":"a0000003","timestamp":"2026-06-01T10:00:03.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{}"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{USAGE},"stopReason":"stop","timestamp":1780308003000}}}}"#,
            words(80)
        ),
    ];
    lines
        .iter()
        .map(|l| match SessionEntry::parse(l) {
            Ok(e) => e.kind,
            Err(e) => panic!("bench entry does not parse: {e:?}"),
        })
        .collect()
}

/// A session file with a header, opened for appending.
fn open_store(dir: &std::path::Path) -> SessionStore {
    let path = dir.join("bench.jsonl");
    let header = r#"{"type":"session","version":3,"id":"0197a000-0000-7000-8000-000000000000","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/tmp"}"#;
    if let Err(e) = std::fs::write(&path, format!("{header}\n")) {
        panic!("write {}: {e}", path.display());
    }
    match SessionStore::open(&path, "/tmp") {
        Ok(s) => s,
        Err(e) => panic!("open {}: {e}", path.display()),
    }
}

fn bench_append(c: &mut Criterion) {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("tempdir: {e}"),
    };
    let kinds = turn();
    let mut store = open_store(dir.path());
    let before = std::fs::metadata(dir.path().join("bench.jsonl")).map_or(0, |m| m.len());
    for k in &kinds {
        if let Err(e) = store.append(k.clone()) {
            panic!("append: {e}");
        }
    }
    let after = std::fs::metadata(dir.path().join("bench.jsonl")).map_or(0, |m| m.len());
    let turn_bytes = (after - before) as usize;
    assert!(
        turn_bytes > 2000,
        "a turn is written at once ({turn_bytes} bytes)"
    );

    let mut group = c.benchmark_group("session");
    meta("session/append_turn", kinds.len(), turn_bytes);
    group.throughput(Throughput::Bytes(turn_bytes as u64));
    group.bench_function("append_turn", |b| {
        b.iter(|| {
            for k in &kinds {
                if let Err(e) = store.append(k.clone()) {
                    panic!("append: {e}");
                }
            }
        })
    });
    meta("session/append_user", 1, 0);
    group.throughput(Throughput::Elements(1));
    group.bench_function("append_user", |b| {
        b.iter(|| {
            if let Err(e) = store.append(kinds[0].clone()) {
                panic!("append: {e}");
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_append);
criterion_main!(benches);
