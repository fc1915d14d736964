//! `cargo xtask rpc-kill [--runs N] [--no-build] [--pi <path>]`: `pi --mode rpc` killed with
//! `SIGKILL` right after a `message_end` line, many times.
//!
//! Runs the loop of `crates/pi-coding-agent/tests/support/rpc_kill.rs` (included here, so the
//! suite's runs and this command check the same things): three prompts with a tool call, two
//! 1 MiB answers and a short one; each run is killed the moment the K-th `message_end` line
//! was read (K going through all eight, pinned to one CPU and on two in turn) and its session
//! file, resumed, must hold every message whose `message_end` was read. `--pi` runs another
//! binary (the TypeScript pi too). Prints one line per run and the totals; exits non-zero at
//! the first violation (`--keep-going`: after all runs, listing every violation).

#[path = "../../crates/pi-coding-agent/tests/support/rpc_kill.rs"]
mod core;

use std::path::PathBuf;

// The replies' builders, shared with the json-mode kill loop.
use crate::kill_loop::anthropic_sse;
use std::time::Instant;

use crate::workspace::{build_debug_pi, target_dir, workspace_root};

const USAGE: &str =
    "usage: cargo xtask rpc-kill [--runs N] [--keep-going] [--no-build] [--pi <path>]";

/// Runs the command with its arguments (after `rpc-kill`).
pub fn run(args: &[String]) -> Result<(), String> {
    let root = workspace_root();
    let (mut runs, mut build, mut pi) = (320_usize, true, None::<PathBuf>);
    let mut keep_going = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => {
                runs = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| USAGE.to_owned())?;
            }
            "--no-build" => build = false,
            "--keep-going" => keep_going = true,
            "--pi" => pi = Some(it.next().ok_or(USAGE)?.into()),
            _ => return Err(USAGE.into()),
        }
    }
    let pi = match pi {
        Some(p) => p,
        None if build => build_debug_pi(&root)?,
        None => target_dir(&root).join("debug/pi"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let summary = runtime.block_on(core::rpc_kill_loop(&pi, runs, keep_going, |run, o| {
        let file = match o.context {
            _ if o.completed => "completed before the kill".to_owned(),
            None => "no file".to_owned(),
            Some(n) => format!(
                "{n} messages resumed{}",
                if o.torn_tail { ", last line torn" } else { "" }
            ),
        };
        println!(
            "run {run:>3}: kill after message_end {} on {} CPU(s) ({:>3} µs after the line); \
             {} message_end read, {} promised ({} large); {file}; {} ms",
            o.k,
            if o.one_cpu { 1 } else { 2 },
            o.kill_latency_us,
            o.ends_read,
            o.promised,
            o.promised_large,
            o.millis
        );
    }))?;
    println!(
        "\nrpc-kill: {} runs of {} in {:.1} s ({} pinned to one CPU)\n  \
         messages promised by a printed message_end in the runs without a violation: {} ({} of 1 MiB or more), all resumed\n  \
         killed before the first assistant message (no file, as in pi): {}\n  \
         finished before the kill: {}\n  files whose last line the kill cut (an entry in flight): {}\n  \
         longest time from reading the line to the kill: {} µs",
        summary.runs,
        pi.display(),
        started.elapsed().as_secs_f64(),
        summary.one_cpu,
        summary.promised,
        summary.promised_large,
        summary.no_file,
        summary.completed,
        summary.torn_tails,
        summary.max_kill_latency_us
    );
    if summary.violations.is_empty() {
        return Ok(());
    }
    println!("  violations: {}", summary.violations.len());
    for v in &summary.violations {
        println!("    {v}");
    }
    Err(format!(
        "{} of {} runs lost a message whose message_end was printed",
        summary.violations.len(),
        summary.runs
    ))
}
