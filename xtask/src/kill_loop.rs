//! `cargo xtask kill-loop [--runs N] [--seed N] [--no-build] [--pi <path>]`: the `kill -9`
//! durability loop over many runs.
//!
//! Builds `pi` (debug profile) unless told otherwise, then runs the loop of
//! `crates/pi-coding-agent/tests/support/kill_loop.rs` (included here, so the suite's seeded
//! 10 runs and this command check the same things): a clean run of a scripted two-prompt,
//! three-tool-round conversation in json mode with a session, then `--runs` runs (default
//! 200) each killed with SIGKILL at a seeded random point, each checked for a loadable
//! session file that is a prefix of the clean run's entries and holds every acknowledged
//! entry. Prints one line per run and the totals; exits non-zero at the first violation.

#[path = "../../crates/pi-coding-agent/tests/support/anthropic_sse.rs"]
pub(crate) mod anthropic_sse;
#[path = "../../crates/pi-coding-agent/tests/support/kill_loop.rs"]
mod core;

use std::path::PathBuf;
use std::time::Instant;

use crate::workspace::{build_debug_pi, target_dir, workspace_root};

const USAGE: &str = "usage: cargo xtask kill-loop [--runs N] [--seed N] [--no-build] [--pi <path>]";

fn number(value: Option<&String>) -> Result<u64, String> {
    value
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| USAGE.to_owned())
}

/// Runs the command with its arguments (after `kill-loop`).
pub fn run(args: &[String]) -> Result<(), String> {
    let root = workspace_root();
    let (mut runs, mut seed, mut build, mut pi) = (200_u64, 1_u64, true, None::<PathBuf>);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => runs = number(it.next())?,
            "--seed" => seed = number(it.next())?,
            "--no-build" => build = false,
            "--pi" => pi = Some(it.next().ok_or(USAGE)?.into()),
            _ => return Err(USAGE.into()),
        }
    }
    let pi = match pi {
        Some(p) => p,
        None if build => build_debug_pi(&root)?,
        None => target_dir(&root).join("debug/pi"),
    };
    let runs = usize::try_from(runs).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let summary = runtime.block_on(core::kill_loop(&pi, runs, seed, |run, o| {
        let file = match o.entries {
            _ if o.completed => "completed before the kill".to_owned(),
            None => "no file".to_owned(),
            Some(n) => format!("{n} entries, {} messages", o.messages),
        };
        println!(
            "run {run:>3}: kill after line {:>2} + {:>4} µs; {:>2} lines printed, {:>2} acknowledged; {file}",
            o.k, o.delay_us, o.printed, o.acknowledged
        );
    }))?;
    println!(
        "\nkill-loop: {} runs (seed {seed}) in {:.1} s against a clean run of {} json lines and {} entries",
        summary.runs,
        started.elapsed().as_secs_f64(),
        summary.clean_lines,
        summary.clean_entries
    );
    println!(
        "  killed with a session file: {} (all loaded, all a prefix of the clean run)\n  killed before the first assistant message (no file, as in pi): {}\n  finished before the kill point: {}\n  acknowledged message entries: {} — all present; message entries found: {}\n  runs whose file also held the entry in flight: {}",
        summary.files,
        summary.no_file,
        summary.completed,
        summary.acknowledged,
        summary.messages,
        summary.in_flight_kept
    );
    Ok(())
}
