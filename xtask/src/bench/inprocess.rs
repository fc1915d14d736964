//! Workload 4: the in-process criterion benchmarks in `crates/*/benches/`, run through
//! `cargo bench`, and the `session_open` child-process benchmark.
//!
//! Each bench prints `pi-bench-meta <id> events=<n> bytes=<n>` for every benchmark so a median
//! time per iteration can become MB/s and ns/event; the medians come from criterion's
//! `<CRITERION_HOME>/<id>/new/{benchmark,estimates}.json`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

/// The criterion bench targets per package.
pub const CRITERION_BENCHES: [(&str, &[&str]); 4] = [
    ("pi-ai", &["sse", "wire", "partial_json"]),
    ("pi-agent-core", &["dispatch"]),
    ("pi-tui", &["render", "input"]),
    ("pi-coding-agent", &["session_append"]),
];

/// One criterion benchmark's result (keyed by its criterion id, e.g. `wire/anthropic-messages`).
#[derive(Clone, Debug, Default)]
pub struct BenchResult {
    /// Median time of one iteration, ns.
    pub median_ns: f64,
    /// Events (or entries, deltas) one iteration handles, from the meta line.
    pub events: u64,
    /// Bytes one iteration handles, from the meta line (0 when not meaningful).
    pub bytes: u64,
    /// 99th percentiles the bench measured itself (`pi-bench-p99 <id> wall_ns=… cpu_ns=…`),
    /// by name.
    pub p99_ns: Vec<(String, f64)>,
}

impl BenchResult {
    /// Throughput in MB/s (10^6 bytes per second).
    pub fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / self.median_ns * 1e3
    }

    /// Median ns per event.
    pub fn ns_per_event(&self) -> f64 {
        self.median_ns / self.events.max(1) as f64
    }
}

/// The `session_open` result: medians over the child runs.
#[derive(Clone, Debug, Default)]
pub struct SessionOpen {
    /// Session file size, MiB.
    pub file_mib: f64,
    /// Child runs measured.
    pub runs: usize,
    /// `SessionStore::open`, ms.
    pub open_ms: f64,
    /// `build_session_context`, ms.
    pub rebuild_ms: f64,
    /// Both, ms.
    pub total_ms: f64,
    /// User + system CPU time of both, ms.
    pub cpu_ms: f64,
    /// Peak RSS of the child (`VmHWM`), KiB.
    pub peak_rss_kib: f64,
    /// Entries indexed.
    pub entries: u64,
    /// Messages in the rebuilt context.
    pub messages: u64,
}

/// Criterion command-line options for a full or `--quick` run.
pub fn criterion_args(quick: bool) -> Vec<&'static str> {
    let mut args = vec!["--noplot"];
    args.extend(if quick {
        [
            "--warm-up-time",
            "0.3",
            "--measurement-time",
            "1",
            "--sample-size",
            "10",
        ]
    } else {
        [
            "--warm-up-time",
            "2",
            "--measurement-time",
            "5",
            "--sample-size",
            "20",
        ]
    });
    args
}

/// Parses a `pi-bench-meta <id> events=<n> bytes=<n>` line into `(id, events, bytes)`.
pub fn parse_meta(line: &str) -> Option<(String, u64, u64)> {
    let mut parts = line.strip_prefix("pi-bench-meta ")?.split_whitespace();
    let id = parts.next()?.to_owned();
    let (mut events, mut bytes) = (0, 0);
    for p in parts {
        match p.split_once('=')? {
            ("events", v) => events = v.parse().ok()?,
            ("bytes", v) => bytes = v.parse().ok()?,
            _ => {}
        }
    }
    Some((id, events, bytes))
}

/// Parses a `pi-bench-p99 <id> <name>=<ns>…` line into `(id, [(name, ns)])`.
pub fn parse_p99(line: &str) -> Option<(String, Vec<(String, f64)>)> {
    let mut parts = line.strip_prefix("pi-bench-p99 ")?.split_whitespace();
    let id = parts.next()?.to_owned();
    let mut v = Vec::new();
    for p in parts {
        let (k, n) = p.split_once('=')?;
        v.push((k.to_owned(), n.parse().ok()?));
    }
    Some((id, v))
}

/// The cargo profile of the in-process benchmarks (workspace `Cargo.toml`): the bench
/// settings, built into `target/inprocess/` so `target/release/pi` stays the release build.
pub const PROFILE: &str = "inprocess";

/// Builds every in-process benchmark without running it (so the time of a run can be told
/// apart from the time of its builds).
///
/// Errors: the build failed.
pub fn build_all(root: &Path) -> Result<(), String> {
    // One build per package, selected exactly as the runs select it: features are unified
    // over the packages of one cargo invocation, so a combined build would not be reused.
    for (package, benches) in CRITERION_BENCHES {
        let mut args = vec!["--no-run", "-p", package];
        for b in benches {
            args.extend(["--bench", b]);
        }
        cargo_bench(root, &args, &[], "\u{0}")?;
    }
    cargo_bench(
        root,
        &[
            "--no-run",
            "-p",
            "pi-coding-agent",
            "--bench",
            "session_open",
        ],
        &[],
        "\u{0}",
    )
    .map(drop)
}

/// Runs `cargo bench` with `args`, forwarding its output to stderr and returning the lines
/// that start with `prefix`.
fn cargo_bench(
    root: &Path,
    cargo_args: &[&str],
    env: &[(&str, &Path)],
    prefix: &str,
) -> Result<Vec<String>, String> {
    let mut cmd = crate::workspace::cargo();
    cmd.current_dir(root)
        .args(["bench", "--profile", PROFILE])
        .args(cargo_args)
        .stdout(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().map_err(|e| format!("cargo bench: {e}"))?;
    let mut kept = Vec::new();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if line.starts_with(prefix) {
                kept.push(line);
            } else {
                eprintln!("{line}");
            }
        }
    }
    let status = child.wait().map_err(|e| format!("cargo bench: {e}"))?;
    if !status.success() {
        return Err(format!(
            "cargo bench {} failed ({status})",
            cargo_args.join(" ")
        ));
    }
    Ok(kept)
}

/// Every `new/benchmark.json` under `dir`: criterion id → median ns.
pub fn read_criterion_dir(dir: &Path) -> HashMap<String, f64> {
    let mut found = HashMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "benchmark.json")
                && p.parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == "new")
                && let Some((id, median)) = read_estimate(&p)
            {
                found.insert(id, median);
            }
        }
    }
    found
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn read_estimate(benchmark_json: &Path) -> Option<(String, f64)> {
    let bench = read_json(benchmark_json)?;
    let estimates = read_json(&benchmark_json.with_file_name("estimates.json"))?;
    let id = bench.get("full_id")?.as_str()?.to_owned();
    let median = estimates.get("median")?.get("point_estimate")?.as_f64()?;
    Some((id, median))
}

/// Runs every criterion bench and returns the results by id.
///
/// Errors: a `cargo bench` run failed.
pub fn run_criterion(
    root: &Path,
    work: &Path,
    quick: bool,
) -> Result<HashMap<String, BenchResult>, String> {
    let home: PathBuf = work.join("criterion");
    // Stale results of an earlier run must not mix in.
    let _ = std::fs::remove_dir_all(&home);
    let mut meta = Vec::new();
    for (package, benches) in CRITERION_BENCHES {
        let mut args = vec!["-p", package];
        for b in benches {
            args.extend(["--bench", b]);
        }
        args.push("--");
        args.extend(criterion_args(quick));
        meta.extend(cargo_bench(
            root,
            &args,
            &[("CRITERION_HOME", &home)],
            "pi-bench-",
        )?);
    }
    let medians = read_criterion_dir(&home);
    let mut results = HashMap::new();
    for line in &meta {
        if let Some((id, events, bytes)) = parse_meta(line)
            && let Some(&median_ns) = medians.get(&id)
        {
            results.insert(
                id,
                BenchResult {
                    median_ns,
                    events,
                    bytes,
                    p99_ns: Vec::new(),
                },
            );
        }
    }
    for line in &meta {
        if let Some((id, p99)) = parse_p99(line)
            && let Some(r) = results.get_mut(&id)
        {
            r.p99_ns = p99;
        }
    }
    Ok(results)
}

/// Parses the `pi-bench-result session_open key=value…` summary line.
pub fn parse_session_open(line: &str) -> Option<SessionOpen> {
    let rest = line.strip_prefix("pi-bench-result session_open ")?;
    let mut r = SessionOpen::default();
    for pair in rest.split_whitespace() {
        let (k, v) = pair.split_once('=')?;
        let n: f64 = v.parse().ok()?;
        match k {
            "runs" => r.runs = n as usize,
            "open_ms" => r.open_ms = n,
            "rebuild_ms" => r.rebuild_ms = n,
            "total_ms" => r.total_ms = n,
            "cpu_ms" => r.cpu_ms = n,
            "peak_rss_kib" => r.peak_rss_kib = n,
            "entries" => r.entries = n as u64,
            "messages" => r.messages = n as u64,
            _ => {}
        }
    }
    Some(r)
}

/// Runs the `session_open` bench on `session` with `runs` measured child runs.
///
/// Errors: the bench failed or printed no summary.
pub fn run_session_open(root: &Path, session: &Path, runs: usize) -> Result<SessionOpen, String> {
    let session_arg = session.display().to_string();
    let runs_arg = runs.to_string();
    let lines = cargo_bench(
        root,
        &[
            "-p",
            "pi-coding-agent",
            "--bench",
            "session_open",
            "--",
            "--session",
            &session_arg,
            "--runs",
            &runs_arg,
        ],
        &[],
        "pi-bench-result ",
    )?;
    let mut r = lines
        .iter()
        .find_map(|l| parse_session_open(l))
        .ok_or("session_open printed no result")?;
    r.file_mib = std::fs::metadata(session).map_or(0.0, |m| m.len() as f64 / 1048576.0);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_meta_and_session_lines() {
        assert_eq!(
            parse_meta("pi-bench-meta wire/google-generative-ai events=12 bytes=345"),
            Some(("wire/google-generative-ai".into(), 12, 345))
        );
        assert_eq!(parse_meta("Benchmarking wire"), None);
        assert_eq!(
            parse_p99("pi-bench-p99 render/frame_200x60 wall_ns=4000 cpu_ns=900"),
            Some((
                "render/frame_200x60".into(),
                vec![("wall_ns".into(), 4000.0), ("cpu_ns".into(), 900.0)]
            ))
        );
        let s = parse_session_open(
            "pi-bench-result session_open runs=5 open_ms=80.5 rebuild_ms=1.25 total_ms=81.75 peak_rss_kib=30000 entries=170000 messages=5",
        )
        .unwrap();
        assert_eq!((s.runs, s.entries, s.messages), (5, 170000, 5));
        assert_eq!(s.total_ms, 81.75);
    }

    #[test]
    fn reads_criterion_medians() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("sse").join("parse").join("new");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(new.join("benchmark.json"), r#"{"full_id":"sse/parse"}"#).unwrap();
        std::fs::write(
            new.join("estimates.json"),
            r#"{"median":{"point_estimate":2000000.0}}"#,
        )
        .unwrap();
        let m = read_criterion_dir(dir.path());
        assert_eq!(m.get("sse/parse"), Some(&2e6));
        let r = BenchResult {
            median_ns: 2e6,
            events: 1000,
            bytes: 1_000_000,
            p99_ns: Vec::new(),
        };
        assert_eq!(r.mb_per_s(), 500.0);
        assert_eq!(r.ns_per_event(), 2000.0);
    }
}
