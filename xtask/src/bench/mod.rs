//! `cargo xtask bench [--quick] [--json <out>] …`: the performance suite.
//!
//! Side by side with the TypeScript pi (workloads 1–3, [`workloads`]): whole processes,
//! medians of at least 5 alternating runs, wall time and peak RSS, the ratios TS / pi-rs as the
//! figures of record. In process (workload 4, [`inprocess`]): the criterion benches of
//! `crates/*/benches/` and the `session_open` child-process bench. Prints a table and writes
//! the generated part of `docs/benchmarks.md` (table, exact commands, machine, date, binary
//! size of `target/release/pi`).

mod ext_overhead;
mod inprocess;
mod interactive;
mod interactive_keys;
mod machine;
mod process;
mod report;
mod rpc_long;
mod sse_http;
mod tui_reference;
mod workloads;

use std::path::{Path, PathBuf};

use report::{RatioGoal, Row};

use crate::workspace::{cargo, target_dir, workspace_root};

/// Command-line options.
#[derive(Clone, Debug, Default)]
struct Options {
    /// Short settings (5 runs, 1 s criterion measurements): under 2 minutes once built.
    quick: bool,
    /// Also write the results as JSON here.
    json: Option<PathBuf>,
    /// Measured runs per program and workload (default 5 with `--quick`, else 10).
    runs: Option<usize>,
    /// The TS pi (default `$PI_REFERENCE`, else `~/.cache/pi-reference/bin/pi`).
    ts: Option<PathBuf>,
    /// Use the existing `target/release/pi` instead of building it (the in-process benches
    /// build into `target/inprocess/`, so it stays the release build; a plain `cargo bench`
    /// of `pi-coding-agent` would replace it with a bench-profile build).
    no_build: bool,
    /// Measure this `pi` (a debug build, say) instead of `target/release/pi`; nothing is built.
    pi: Option<PathBuf>,
    /// Only these side-by-side workloads (`version`, `tool_read`, `long_answer`, `resume`,
    /// `resume_again`, `resume_1g_again`, `interactive_start`, `interactive_resume`,
    /// `interactive_keys`, `rpc_long`, `ext_overhead`).
    only: Vec<String>,
    /// Skip the side-by-side workloads.
    skip_side_by_side: bool,
    /// Skip the in-process benchmarks.
    skip_inprocess: bool,
    /// Don't write `docs/benchmarks.md`.
    no_docs: bool,
    /// Turns of the long RPC workload (default 10,000; 1,000 with `--quick`).
    turns: Option<usize>,
}

const USAGE: &str = "usage: cargo xtask bench [--quick] [--json <out>] [--runs N] [--ts <pi>] [--no-build] \
[--pi <binary>] [--only <workload>]… [--skip-side-by-side] [--skip-inprocess] [--no-docs] [--turns N]";

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--json" => o.json = Some(it.next().ok_or(USAGE)?.into()),
            "--runs" => {
                let n: usize = it.next().and_then(|v| v.parse().ok()).ok_or(USAGE)?;
                if n < 5 {
                    return Err("--runs: at least 5 runs (medians of ≥ 5)".into());
                }
                o.runs = Some(n);
            }
            "--ts" => o.ts = Some(it.next().ok_or(USAGE)?.into()),
            "--no-build" => o.no_build = true,
            "--pi" => {
                o.pi = Some(it.next().ok_or(USAGE)?.into());
                o.no_build = true;
            }
            "--only" => {
                let name = it.next().ok_or(USAGE)?;
                if describe(name) == "?" {
                    return Err(format!(
                        "--only: unknown workload {name} (version, tool_read, long_answer, resume, \
                         resume_again, resume_1g_again, interactive_start, interactive_resume, interactive_keys, rpc_long, ext_overhead)"
                    ));
                }
                o.only.push(name.clone());
            }
            "--skip-side-by-side" => o.skip_side_by_side = true,
            "--skip-inprocess" => o.skip_inprocess = true,
            "--no-docs" => o.no_docs = true,
            "--turns" => {
                let n: usize = it.next().and_then(|v| v.parse().ok()).ok_or(USAGE)?;
                o.turns = Some(n.max(1));
            }
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(o)
}

/// The TS pi to compare with: `--ts`, `$PI_REFERENCE` or `~/.cache/pi-reference/bin/pi`.
fn ts_pi(o: &Options) -> Result<PathBuf, String> {
    let path = o
        .ts
        .clone()
        .or_else(|| std::env::var_os("PI_REFERENCE").map(PathBuf::from))
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/pi-reference/bin/pi"))
        })
        .ok_or("no TS pi path (set PI_REFERENCE or pass --ts)")?;
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "the TS pi 0.85.0 is not installed at {} (install it, set PI_REFERENCE or pass --ts)",
            path.display()
        ))
    }
}

/// `cargo build --release -p pi-coding-agent --bin pi`.
fn build_pi(root: &Path) -> Result<(), String> {
    eprintln!("== cargo build --release -p pi-coding-agent --bin pi");
    let status = cargo()
        .current_dir(root)
        .args(["build", "--release", "-p", "pi-coding-agent", "--bin", "pi"])
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo build --release failed ({status})"))
    }
}

/// The generated session of `mib` MiB, made once per target directory (generation is
/// deterministic, so a present file is the same file).
fn session_file(work: &Path, mib: u32) -> Result<PathBuf, String> {
    let name = if mib == 100 {
        "session-100mb.jsonl".to_owned()
    } else {
        format!("session-{mib}mib.jsonl")
    };
    let path = work.join(name);
    if !path.is_file() {
        eprintln!("== cargo xtask gen-session {} --mb {mib}", path.display());
        crate::gen_session::generate(&path, f64::from(mib), "/tmp")
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(path)
}

/// Goals of the side-by-side workloads.
fn goal(name: &str) -> Option<RatioGoal> {
    match name {
        "version" => Some(RatioGoal {
            speed: 150.0,
            memory: 15.0,
        }),
        "tool_read" => Some(RatioGoal {
            speed: 20.0,
            memory: 10.0,
        }),
        "resume" => Some(RatioGoal {
            speed: 25.0,
            memory: 7.0,
        }),
        "resume_again" => Some(RatioGoal {
            speed: 40.0,
            memory: 7.0,
        }),
        "interactive_start" => Some(RatioGoal {
            speed: 20.0,
            memory: 8.0,
        }),
        _ => None,
    }
}

fn describe(name: &str) -> &'static str {
    match name {
        "version" => "1. `pi --version`",
        "tool_read" => "2. `tool_read` scenario, json mode, replay server, no pauses",
        "long_answer" => "2. long answer: 2 MB in 20,000 deltas, json mode",
        "resume" => "3. resume a 100 MiB session + one prompt",
        "resume_again" => "3. resume the same 100 MiB session again + one prompt",
        "resume_1g_again" => "3. resume the same 1 GiB session again + one prompt",
        "interactive_resume" => {
            "4. interactive resume of the 100 MiB session to the first frame (pty)"
        }
        "interactive_start" => "4. interactive start to the first frame, editor ready (pty)",
        "interactive_keys" => {
            "4. interactive keystroke to echo (10,000 messages) and full redraws on resize (pty)"
        }
        "rpc_long" => "5. one `pi --mode rpc` process, 10,000 turns with a 10 KB tool result each",
        "ext_overhead" => {
            "6. extension overhead: tool_call round trip to the Node host, host start, none"
        }
        _ => "?",
    }
}

/// Runs the suite with the given arguments.
///
/// Errors: bad arguments, a failed build, or a failed `cargo bench`.
pub fn run(args: &[String]) -> Result<(), String> {
    let o = parse(args)?;
    let started = std::time::Instant::now();
    let root = workspace_root();
    let target = target_dir(&root);
    let work = target.join("xtask-bench");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let runs = o.runs.unwrap_or(if o.quick { 5 } else { 10 });
    let machine = machine::Machine::detect();
    let mut building = std::time::Duration::ZERO;
    if !o.no_build {
        let t = std::time::Instant::now();
        build_pi(&root)?;
        building += t.elapsed();
    }
    // Measure a copy: `cargo bench` rebuilds `target/release/pi` in the bench profile (cargo
    // builds a package's binaries for its benches), which would change the binary under test.
    let built =
        o.pi.clone()
            .unwrap_or_else(|| target.join("release").join("pi"));
    let rs = work.join("pi");
    let _ = std::fs::remove_file(&rs);
    if built.is_file() {
        std::fs::copy(&built, &rs).map_err(|e| format!("copy {}: {e}", built.display()))?;
    }
    let binary = std::fs::metadata(&rs).ok().map(|m| m.len());
    // The OAuth endpoint override exists for tests only (debug builds): a release binary that
    // knows its variable could be pointed at another token endpoint.
    if o.pi.is_none()
        && let Ok(bytes) = std::fs::read(&rs)
    {
        let needle = b"PI_RS_TEST_OAUTH_ORIGIN";
        if bytes.windows(needle.len()).any(|w| w == needle) {
            return Err(format!(
                "{}: the release binary reads the test-only OAuth endpoint override",
                built.display()
            ));
        }
        eprintln!("== release binary: no test-only OAuth endpoint override");
    }
    let session = session_file(&work, 100)?;
    let wanted = |name: &str| o.only.is_empty() || o.only.iter().any(|n| n == name);
    // 1 GiB takes a while to generate: only when its workload runs.
    let big = if !o.skip_side_by_side && wanted("resume_1g_again") {
        session_file(&work, 1024)?
    } else {
        work.join("session-1024mib.jsonl")
    };
    let ts = ts_pi(&o);

    let mut side_rows: Vec<Row> = Vec::new();
    let mut side_json = Vec::new();
    let mut commands = Vec::new();
    if !o.skip_side_by_side {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| format!("tokio runtime: {e}"))?;
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-data");
        for w in workloads::all(&data, &session, &big)
            .into_iter()
            .filter(|w| wanted(&w.name))
        {
            let outcome = if rs.is_file() {
                workloads::run(&w, &rs, ts.as_deref().map_err(Clone::clone), runs, &rt)
            } else {
                workloads::Outcome::Skipped(format!("{} does not exist", built.display()))
            };
            side_rows.push(report::side_by_side_row(
                describe(&w.name),
                &outcome,
                goal(&w.name),
            ));
            side_json.push(report::outcome_json(&w.name, &outcome));
            commands.push(format!("pi {}", w.args.join(" ")));
        }
        for (name, resume) in [
            ("interactive_start", None),
            ("interactive_resume", Some(&session)),
        ] {
            if !wanted(name) {
                continue;
            }
            let outcome = if rs.is_file() {
                interactive::run(
                    &rs,
                    ts.as_deref().map_err(Clone::clone),
                    runs,
                    resume.map(PathBuf::as_path),
                )
            } else {
                workloads::Outcome::Skipped(format!("{} does not exist", built.display()))
            };
            side_rows.push(report::side_by_side_row(
                describe(name),
                &outcome,
                goal(name),
            ));
            side_json.push(report::outcome_json(name, &outcome));
            commands.push(format!(
                "pi --provider replay-anthropic --model replay-model{} (in a 100x30 pty, until the footer shows)",
                if resume.is_some() { " --session <copy of session-100mb.jsonl>" } else { "" }
            ));
        }
        if wanted("interactive_keys") {
            let figures = if rs.is_file() {
                interactive_keys::run(&rs, &rt)
            } else {
                Err(format!("{} does not exist", built.display()))
            };
            match &figures {
                Ok(f) => {
                    println!(
                        "\n== interactive keys (pi-rs): keystroke to echo with 10,000 messages p50 {:.2} ms, \
                         p99 {:.2} ms (goal <= 5 ms); full redraws during the exchange with one width and \
                         one height change: CSI 2J x{}, CSI 3J x{} (goal: 1)",
                        f.echo_p50_ms, f.echo_p99_ms, f.clear_screen, f.clear_scrollback
                    );
                    side_json.push(serde_json::json!({
                        "name": "interactive_keys",
                        "echo_p50_ms": f.echo_p50_ms,
                        "echo_p99_ms": f.echo_p99_ms,
                        "clear_screen": f.clear_screen,
                        "clear_scrollback": f.clear_scrollback,
                    }));
                }
                Err(why) => {
                    println!("\n== interactive keys: skipped ({why})");
                    side_json.push(serde_json::json!({"name": "interactive_keys", "skipped": why}));
                }
            }
        }
        if wanted("rpc_long") {
            let turns = o.turns.unwrap_or(if o.quick { 1_000 } else { 10_000 });
            eprintln!("== long RPC process: {turns} turns, auto-compaction on");
            let figures = if rs.is_file() {
                rpc_long::run(&rs, turns)
            } else {
                Err(format!("{} does not exist", built.display()))
            };
            match &figures {
                Ok(f) => {
                    println!(
                        "\n== long RPC process (pi-rs): {} turns in {:.1} s, session file {:.1} MiB, \
                         {} compactions; peak RSS {:.1} MiB (goal <= 64 MiB), RSS after {} turns \
                         {:.1} MiB, at the end {:.1} MiB",
                        f.turns,
                        f.seconds,
                        f.session_mib,
                        f.compactions,
                        f.peak_mib,
                        f.turns / 10,
                        f.early_rss_mib,
                        f.final_rss_mib
                    );
                    side_json.push(serde_json::json!({
                        "name": "rpc_long",
                        "turns": f.turns,
                        "seconds": f.seconds,
                        "session_mib": f.session_mib,
                        "compactions": f.compactions,
                        "peak_rss_mib": f.peak_mib,
                        "early_rss_mib": f.early_rss_mib,
                        "final_rss_mib": f.final_rss_mib,
                    }));
                }
                Err(why) => {
                    println!("\n== long RPC process: failed ({why})");
                    side_json.push(serde_json::json!({"name": "rpc_long", "failed": why}));
                }
            }
        }
        if wanted("ext_overhead") {
            let calls = if o.quick { 500 } else { 1_000 };
            eprintln!("== extension overhead: {calls} tool calls a run, {runs} runs a variant");
            let figures = if rs.is_file() {
                ext_overhead::run(&rs, calls, runs)
            } else {
                Err(format!("{} does not exist", built.display()))
            };
            match &figures {
                Ok(f) => {
                    let [none, flag, cold, warm, handler] = f.medians_ms;
                    println!(
                        "\n== extension overhead (pi-rs, medians of {} runs, {} tool calls a run): \
                         tool_call round trip {:.0} µs (goal <= 150 µs); host start to first reply \
                         cold {:.0} ms, jiti cache warm {:.0} ms; no extension vs --no-extensions \
                         {:+.1} ms (goal: 0)\n   runs: none {none:.0} ms, --no-extensions {flag:.0} ms, \
                         empty .ts cold {cold:.0} ms, warm {warm:.0} ms, tool_call handler \
                         {handler:.0} ms ({} events seen)",
                        f.runs,
                        f.calls,
                        f.per_event_us,
                        f.start_cold_ms,
                        f.start_warm_ms,
                        f.no_extension_ms,
                        f.handler_events,
                    );
                    let medians: serde_json::Map<String, serde_json::Value> =
                        ext_overhead::VARIANTS
                            .iter()
                            .zip(f.medians_ms)
                            .map(|(k, v)| ((*k).to_owned(), serde_json::json!(v)))
                            .collect();
                    side_json.push(serde_json::json!({
                        "name": "ext_overhead",
                        "calls": f.calls,
                        "runs": f.runs,
                        "medians_ms": medians,
                        "tool_call_round_trip_us": f.per_event_us,
                        "host_start_cold_ms": f.start_cold_ms,
                        "host_start_warm_ms": f.start_warm_ms,
                        "no_extension_ms": f.no_extension_ms,
                    }));
                }
                Err(why) => {
                    println!("\n== extension overhead: failed ({why})");
                    side_json.push(serde_json::json!({"name": "ext_overhead", "failed": why}));
                }
            }
        }
    }

    let (bench, open) = if o.skip_inprocess {
        (
            Default::default(),
            Err("skipped (--skip-inprocess)".to_owned()),
        )
    } else {
        eprintln!("== building the in-process benchmarks");
        let t = std::time::Instant::now();
        inprocess::build_all(&root)?;
        building += t.elapsed();
        eprintln!("== in-process benchmarks (criterion)");
        let bench = inprocess::run_criterion(&root, &work, o.quick)?;
        let open = inprocess::run_session_open(&root, &session, runs);
        (bench, open)
    };
    let inproc_rows = if o.skip_inprocess {
        Vec::new()
    } else {
        report::inprocess_rows(&bench, &open)
    };

    println!(
        "\n== pi-rs vs TS pi (medians of {runs} alternating runs; ratios are the figures of record)"
    );
    print!("{}", report::text_table(&side_rows));
    println!("\n== in process");
    print!("{}", report::text_table(&inproc_rows));
    if let Some(size) = binary {
        println!(
            "\nbinary: {} = {size} bytes ({:.2} MiB)",
            built.display(),
            size as f64 / 1048576.0
        );
    }
    let elapsed = started.elapsed().as_secs_f64();
    let built_s = building.as_secs_f64();
    println!(
        "finished in {elapsed:.0} s ({:.0} s measuring, {built_s:.0} s building)",
        elapsed - built_s
    );

    if let Some(path) = &o.json {
        let value = serde_json::json!({
            "machine": {"cpu": machine.cpu, "cpus": machine.cpus, "memory_mib": machine.memory_mib,
                        "kernel": machine.kernel, "rustc": machine.rustc, "date": machine.date},
            "quick": o.quick,
            "runs": runs,
            "binary_bytes": binary,
            "side_by_side": side_json,
            "in_process": report::inprocess_json(&bench, &open),
        });
        std::fs::write(path, format!("{value:#}\n"))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if !o.no_docs {
        let doc = root.join("docs").join("benchmarks.md");
        let generated = render_docs(
            &o,
            runs,
            &machine,
            binary,
            &side_rows,
            &inproc_rows,
            &commands,
            elapsed,
            built_s,
        );
        let existing = std::fs::read_to_string(&doc).unwrap_or_default();
        std::fs::write(&doc, report::splice(&existing, &generated))
            .map_err(|e| format!("{}: {e}", doc.display()))?;
        eprintln!("wrote {}", doc.display());
    }
    Ok(())
}

/// The generated part of `docs/benchmarks.md`.
#[allow(clippy::too_many_arguments)]
fn render_docs(
    o: &Options,
    runs: usize,
    machine: &machine::Machine,
    binary: Option<u64>,
    side: &[Row],
    inproc: &[Row],
    commands: &[String],
    elapsed: f64,
    built_s: f64,
) -> String {
    let mut invocation = format!("cargo xtask bench{}", if o.quick { " --quick" } else { "" });
    for name in &o.only {
        invocation.push_str(&format!(" --only {name}"));
    }
    let mut s = format!(
        "Last run: `{invocation}` ({:.0} s measuring, {built_s:.0} s building). The machine is shared and noisy: absolute \
         times move by ±30 % between runs; the ratios (both programs measured in the same run, \
         alternating) are the figures of record.\n\n## Machine\n\n{}",
        elapsed - built_s,
        report::machine_lines(machine)
    );
    s.push_str(&match binary {
        Some(b) => format!(
            "- Binary: `target/release/pi`, {b} bytes ({:.2} MiB); release profile `lto = \"fat\"`, \
             `codegen-units = 1`, `panic = \"unwind\"`\n",
            b as f64 / 1048576.0
        ),
        None => "- Binary: `target/release/pi` not built\n".into(),
    });
    if !side.is_empty() {
        s.push_str(&format!(
            "\n## Side by side with the TS pi 0.85.0\n\nWall time (plain runs) and peak RSS (the \
             child's `VmHWM` at exit, from separate runs under `ptrace`) of the whole process; medians of {runs} runs per program after one \
             warm-up each, the two programs alternating.\n\n{}",
            report::markdown_table(side)
        ));
    }
    if !inproc.is_empty() {
        s.push_str(&format!(
            "\n## In process\n\nCriterion medians ({}); the session open is a child process per \
             run (medians of {runs}, peak RSS from `VmHWM`).\n\n{}",
            if o.quick {
                "`--quick`: 0.3 s warm-up, 1 s measurement, 10 samples"
            } else {
                "2 s warm-up, 5 s measurement, 20 samples"
            },
            report::markdown_table(inproc)
        ));
    }
    s.push_str("\n## Commands\n\n```sh\n");
    s.push_str(&format!(
        "{invocation}   # everything below, then this file\n"
    ));
    s.push_str("cargo build --release -p pi-coding-agent --bin pi\n");
    s.push_str("cargo xtask gen-session $TARGET/xtask-bench/session-100mb.jsonl --mb 100\n");
    s.push_str("cargo xtask gen-session $TARGET/xtask-bench/session-1024mib.jsonl --mb 1024\n");
    for (package, benches) in inprocess::CRITERION_BENCHES {
        let names: Vec<String> = benches.iter().map(|b| format!("--bench {b}")).collect();
        s.push_str(&format!(
            "cargo bench --profile {} -p {package} {} -- {}\n",
            inprocess::PROFILE,
            names.join(" "),
            inprocess::criterion_args(o.quick).join(" ")
        ));
    }
    s.push_str(&format!(
        "cargo bench --profile inprocess -p pi-coding-agent --bench session_open -- --session $TARGET/xtask-bench/session-100mb.jsonl --runs {runs}\n"
    ));
    for c in commands {
        s.push_str(&format!(
            "{c}   # in a fresh root, replay server, TS pi alternating\n"
        ));
    }
    s.push_str("```\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_and_reject_fewer_than_five_runs() {
        let args: Vec<String> = ["--quick", "--json", "out.json", "--runs", "7"]
            .map(String::from)
            .to_vec();
        let o = parse(&args).unwrap();
        assert!(o.quick);
        assert_eq!(o.json.as_deref(), Some(Path::new("out.json")));
        assert_eq!(o.runs, Some(7));
        assert!(parse(&["--runs".into(), "3".into()]).is_err());
        assert!(parse(&["--bogus".into()]).is_err());
        let o = parse(&[
            "--only".into(),
            "resume".into(),
            "--only".into(),
            "version".into(),
        ])
        .unwrap();
        assert_eq!(o.only, ["resume", "version"]);
        let err = parse(&["--only".into(), "resum".into()]).unwrap_err();
        assert!(err.contains("unknown workload resum"), "{err}");
    }

    #[test]
    fn every_side_by_side_workload_has_a_description() {
        let w = workloads::all(
            Path::new("data"),
            Path::new("s.jsonl"),
            Path::new("b.jsonl"),
        );
        let names: Vec<&str> = w.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "version",
                "tool_read",
                "long_answer",
                "resume",
                "resume_again",
                "resume_1g_again"
            ]
        );
        assert!(describe("interactive_resume") != "?");
        assert!(w.iter().all(|w| describe(&w.name) != "?"));
        assert!(goal("version").is_some() && goal("long_answer").is_none());
    }
}
