//! Open + context rebuild of a large session with time and peak RSS, workload 4 of
//! `cargo xtask bench` (goal for a 100 MiB session: ≤ 100 ms and ≤ 40 MiB).
//!
//! Not a criterion bench: peak RSS needs a fresh process per measurement. The parent spawns
//! itself once per run with `--child`; the child does `SessionStore::open` and
//! `storage::build_session_context` and reports its wall times and `VmHWM` (peak resident
//! set, from `/proc/self/status`). The parent prints every run and one summary line:
//!
//! `pi-bench-result session_open runs=N open_ms=M rebuild_ms=M total_ms=M cpu_ms=M peak_rss_kib=K entries=E messages=C`
//! (medians over the runs; `cpu_ms` is the user + system CPU time of open + rebuild, the
//! figure that does not depend on how loaded the machine is).
//!
//! Run: `cargo xtask gen-session /tmp/s.jsonl --mb 100` then
//! `cargo bench -p pi-coding-agent --bench session_open -- --session /tmp/s.jsonl --runs 5`.
//! Without `--session` it prints a note and exits successfully (plain `cargo bench`).

use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::Instant;

use pi_coding_agent::storage::{SessionStore, build_session_context};

/// One child's measurements.
#[derive(Clone, Copy, Debug, Default)]
struct Run {
    open_ms: f64,
    rebuild_ms: f64,
    cpu_ms: f64,
    peak_rss_kib: u64,
    entries: usize,
    messages: usize,
}

/// User + system CPU time of this process so far, in ms (the machine may be loaded: wall
/// time then overstates what the work costs).
fn cpu_ms() -> f64 {
    // SAFETY: an all-zero `rusage` is valid; `getrusage` only writes into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid out pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return f64::NAN;
    }
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The child: measure once and print `key=value` pairs.
fn child(path: &str) -> ExitCode {
    let cpu0 = cpu_ms();
    let t0 = Instant::now();
    let store = match SessionStore::open(Path::new(path), ".") {
        Ok(s) => s,
        Err(e) => {
            eprintln!("open failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let t1 = Instant::now();
    let ctx = match build_session_context(&store) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rebuild failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let t2 = Instant::now();
    let cpu = cpu_ms() - cpu0;
    println!(
        "open_ms={} rebuild_ms={} cpu_ms={cpu} peak_rss_kib={} entries={} messages={}",
        (t1 - t0).as_secs_f64() * 1e3,
        (t2 - t1).as_secs_f64() * 1e3,
        peak_rss_kib(),
        store.len(),
        ctx.messages.len()
    );
    ExitCode::SUCCESS
}

fn parse_run(line: &str) -> Option<Run> {
    let mut run = Run::default();
    for pair in line.split_whitespace() {
        let (k, v) = pair.split_once('=')?;
        match k {
            "open_ms" => run.open_ms = v.parse().ok()?,
            "rebuild_ms" => run.rebuild_ms = v.parse().ok()?,
            "cpu_ms" => run.cpu_ms = v.parse().ok()?,
            "peak_rss_kib" => run.peak_rss_kib = v.parse().ok()?,
            "entries" => run.entries = v.parse().ok()?,
            "messages" => run.messages = v.parse().ok()?,
            _ => {}
        }
    }
    Some(run)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    if let Some(path) = value("--child") {
        return child(&path);
    }
    let Some(session) = value("--session") else {
        println!(
            "session_open: no --session given; generate one with `cargo xtask gen-session <out> --mb 100` (skipped)"
        );
        return ExitCode::SUCCESS;
    };
    let runs: usize = value("--runs").and_then(|r| r.parse().ok()).unwrap_or(5);
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("current_exe: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut all = Vec::new();
    for i in 0..runs + 1 {
        let out = match Command::new(&exe).args(["--child", &session]).output() {
            Ok(o) => o,
            Err(e) => {
                eprintln!("spawn: {e}");
                return ExitCode::FAILURE;
            }
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let Some(run) = out
            .status
            .success()
            .then(|| parse_run(text.trim()))
            .flatten()
        else {
            eprintln!(
                "child failed: {}{}",
                text,
                String::from_utf8_lossy(&out.stderr)
            );
            return ExitCode::FAILURE;
        };
        // Run 0 warms the page cache and is not counted.
        println!(
            "run {i}{}: {}",
            if i == 0 { " (warm-up)" } else { "" },
            text.trim()
        );
        if i > 0 {
            all.push(run);
        }
    }
    let open = median(all.iter().map(|r| r.open_ms).collect());
    let rebuild = median(all.iter().map(|r| r.rebuild_ms).collect());
    let total = median(all.iter().map(|r| r.open_ms + r.rebuild_ms).collect());
    let cpu = median(all.iter().map(|r| r.cpu_ms).collect());
    let rss = median(all.iter().map(|r| r.peak_rss_kib as f64).collect());
    let last = all.last().copied().unwrap_or_default();
    println!(
        "pi-bench-result session_open runs={runs} open_ms={open:.2} rebuild_ms={rebuild:.2} total_ms={total:.2} cpu_ms={cpu:.2} peak_rss_kib={rss:.0} entries={} messages={}",
        last.entries, last.messages
    );
    ExitCode::SUCCESS
}
