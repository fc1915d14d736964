//! Opens a session file and rebuilds its context, printing what it found and how long it took.
//!
//! `cargo run --release -p pi-coding-agent --example resume_session -- <file.jsonl>`

use std::time::Instant;

use pi_coding_agent::storage::{SessionStore, build_session_context};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: resume_session <file.jsonl>");
        std::process::exit(2);
    };
    let t0 = Instant::now();
    let store = match SessionStore::open(std::path::Path::new(&path), ".") {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let t1 = Instant::now();
    let ctx = match build_session_context(&store) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let t2 = Instant::now();
    println!(
        "entries {} · context messages {} · open {:?} · rebuild {:?}",
        store.len(),
        ctx.messages.len(),
        t1 - t0,
        t2 - t1
    );
}
