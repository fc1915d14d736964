//! `SIGKILL` right after each `message_end` line of `pi --mode rpc`, with answers of 1 MiB
//! and more and short ones, pinned to one CPU and on two: every message whose `message_end`
//! was printed is in the resumed session (see `support/rpc_kill.rs`). The suite runs every
//! kill point on both CPU settings a few times; `cargo xtask rpc-kill` and the ignored test
//! run more (`PI_RPC_KILL_RUNS`).

use crate::support;

use std::path::Path;

use serde_json::json;
use support::rpc_kill::{MESSAGE_ENDS, plan, promised, rpc_kill_loop};

/// Runs in the suite: each of the eight kill points, on one CPU and on two, three times
/// (20–60 s with a debug build on two shared cores, depending on their load).
const SUITE_RUNS: usize = MESSAGE_ENDS * 2 * 3;

async fn run_loop(runs: usize) {
    let pi = Path::new(env!("CARGO_BIN_EXE_pi"));
    let mut log = Vec::new();
    let summary = rpc_kill_loop(pi, runs, false, |run, o| {
        eprintln!("{run}: {o:?}");
        log.push(format!("{run}: {o:?}"));
    })
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", log.join("\n")));
    assert_eq!(summary.runs, runs);
    assert_eq!(summary.one_cpu, runs / 2);
    // Every kill point was reached: the runs killed after the last line are the only ones
    // that may have finished first.
    assert!(summary.completed <= runs / MESSAGE_ENDS, "{summary:?}");
    assert!(summary.promised_large > 0, "{summary:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_end_printed_by_rpc_mode_is_in_the_file_when_killed_right_after_it() {
    run_loop(SUITE_RUNS).await;
}

/// The larger run behind the figures in `docs/reliability.md`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a few minutes; run with --ignored (PI_RPC_KILL_RUNS, default 320)"]
async fn many_kills_right_after_message_end_lose_nothing() {
    let runs = std::env::var("PI_RPC_KILL_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(320);
    run_loop(runs).await;
}

#[test]
fn the_plan_visits_every_kill_point_on_both_cpu_settings() {
    let plans: Vec<(usize, bool)> = (0..MESSAGE_ENDS * 2).map(plan).collect();
    for k in 1..=MESSAGE_ENDS {
        assert!(
            plans.contains(&(k, true)) && plans.contains(&(k, false)),
            "{k}"
        );
    }
}

#[test]
fn nothing_is_promised_before_the_first_assistant_message_then_everything_printed() {
    let m =
        |role: &str, text: &str| json!({"role": role, "content": [{"type": "text", "text": text}]});
    assert!(promised(&[m("user", "first")]).is_empty());
    let ends = [
        m("user", "first"),
        m("assistant", "answer"),
        m("toolResult", "one"),
    ];
    let p = promised(&ends);
    assert_eq!(p.len(), 3);
    assert_eq!(p[1].0, "assistant");
    assert_eq!(p[2].1, json!([{"type": "text", "text": "one"}]));
    // A role the session does not persist at `message_end` promises nothing.
    let mut more = ends.to_vec();
    more.push(m("bashExecution", "x"));
    assert_eq!(promised(&more).len(), 3);
}
