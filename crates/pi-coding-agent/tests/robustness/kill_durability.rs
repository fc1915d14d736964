//! `kill -9` durability through the `pi` binary: a seeded 10 of the
//! `cargo xtask kill-loop` runs (see `support/kill_loop.rs` for the conversation, the kill
//! points and the checks). `PI_KILL_SEED` picks another seed.

use crate::support;

use std::path::Path;

use serde_json::json;
use support::kill_loop::{Rng, acknowledged, kill_loop};

/// The seed of the suite's runs.
const SEED: u64 = 18;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_seeded_kills_leave_a_loadable_prefix_with_every_acknowledged_entry() {
    let seed = std::env::var("PI_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED);
    let pi = Path::new(env!("CARGO_BIN_EXE_pi"));
    let mut log = Vec::new();
    let summary = kill_loop(pi, 10, seed, |run, o| log.push(format!("{run}: {o:?}")))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    assert_eq!(summary.runs, 10);
    assert_eq!(summary.clean_entries, 13, "{summary:?}");
    assert!(summary.messages >= summary.acknowledged, "{summary:?}");
}

#[test]
fn an_entry_is_acknowledged_by_its_message_end_once_the_first_assistant_is_printed() {
    let end = |role: &str| json!({"type": "message_end", "message": {"role": role}});
    let other = |t: &str| json!({"type": t});
    // Before the first assistant message is printed, nothing is on disk.
    let early = [other("agent_start"), end("user"), other("message_start")];
    assert_eq!(acknowledged(&early), 0);
    let mut later = early.to_vec();
    later.push(end("assistant"));
    assert_eq!(
        acknowledged(&later),
        2,
        "the user message is written with it"
    );
    later.push(end("toolResult"));
    assert_eq!(
        acknowledged(&later),
        3,
        "the last line acknowledges its entry"
    );
    later.push(end("bashExecution"));
    assert_eq!(acknowledged(&later), 3, "not persisted at message_end");
}

#[test]
fn the_rng_is_seeded_and_stays_in_range() {
    let mut a = Rng::new(7);
    let mut b = Rng::new(7);
    let xs: Vec<u64> = (0..100).map(|_| a.range(3, 9)).collect();
    let ys: Vec<u64> = (0..100).map(|_| b.range(3, 9)).collect();
    assert_eq!(xs, ys);
    assert!(xs.iter().all(|x| (3..=9).contains(x)));
    assert!((3..=9).all(|v| xs.contains(&v)));
    assert_ne!(
        xs,
        (0..100)
            .map(|_| Rng::new(8).range(3, 9))
            .collect::<Vec<_>>()
    );
}
