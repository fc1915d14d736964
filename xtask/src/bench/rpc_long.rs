//! Workload 5: memory of one long-lived `pi --mode rpc` process.
//!
//! One process runs `turns` scripted turns (default 10,000) with auto-compaction on; each turn
//! is a prompt, a `read` of a 10 KB file, and a short answer, so the session file grows by
//! about 11 KB a turn (past 100 MiB at 10,000). The model's context window is 64k tokens: the
//! compaction threshold is crossed every few turns and the summarization requests go to the
//! same server. Reported: the process's peak RSS (`VmHWM`, read while it is still alive after
//! the last turn), the RSS after the first 1,000 turns, the session file's size, the number of
//! compactions and the wall time.
//!
//! The server is a small HTTP/1.1 loop in this file rather than the test kit's replay server:
//! that one records every request, and 20,000 requests of up to a context window each would
//! make the server, not pi, the memory under test. It decides each answer from the request:
//! no `tools` → a summarization request (a summary), a last message holding a `tool_result` →
//! the answer, else → the `read` tool call. The reported `input_tokens` are the request's
//! size / 4, so pi's compaction check sees a context that grows as the real one does.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::sse_http;

/// What one run measured.
#[derive(Clone, Debug)]
pub struct LongRunFigures {
    /// Turns completed.
    pub turns: usize,
    /// Peak RSS of the whole run, MiB.
    pub peak_mib: f64,
    /// RSS after the first tenth of the turns, MiB (what the process settles at).
    pub early_rss_mib: f64,
    /// Final RSS, MiB.
    pub final_rss_mib: f64,
    /// Size of the session file at the end, MiB.
    pub session_mib: f64,
    /// Compactions that ended with a result.
    pub compactions: usize,
    /// Wall time of all turns, seconds.
    pub seconds: f64,
}

fn reply(input_tokens: usize, block: &Value, stop: &str) -> String {
    sse_http::anthropic_reply(input_tokens, std::slice::from_ref(block), stop)
}

/// The answer to one request body (see the module docs).
fn answer(body: &[u8], seq: usize) -> String {
    let tokens = body.len() / 4;
    let Ok(req) = serde_json::from_slice::<Value>(body) else {
        return reply(tokens, &json!({"type":"text","text":"?"}), "end_turn");
    };
    let has_tools = req
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    if !has_tools {
        let text = "## Goal\nRead blob.txt many times.\n\n## Progress\nDone so far: many reads.";
        return reply(tokens, &json!({"type":"text","text":text}), "end_turn");
    }
    let last_has_result = req
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result"));
    if last_has_result {
        reply(
            tokens,
            &json!({"type":"text","text":"The file holds the expected bytes."}),
            "end_turn",
        )
    } else {
        reply(
            tokens,
            &json!({"type":"tool_use","id":format!("toolu_{seq}"),"name":"read",
                "input":{"path":"blob.txt"}}),
            "tool_use",
        )
    }
}

fn rss_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Runs `turns` turns through one `pi --mode rpc` process of `pi`.
///
/// Errors: the server, the process or a turn failed (with the process's last stderr).
pub fn run(pi: &Path, turns: usize) -> Result<LongRunFigures, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path();
    for d in ["agent", "home", "tmp", "work"] {
        std::fs::create_dir_all(root.join(d)).map_err(|e| e.to_string())?;
    }
    let blob: String = (0..10_240u32)
        .map(|i| {
            if i % 64 == 63 {
                '\n'
            } else {
                (b'a' + (i % 26) as u8) as char
            }
        })
        .collect();
    std::fs::write(root.join("work/blob.txt"), blob).map_err(|e| e.to_string())?;

    let port = sse_http::serve(std::sync::Arc::new(answer))?;
    sse_http::write_agent_config(root, port, 64_000, true)?;

    let p = |s: &str| root.join(s).display().to_string();
    let mut child = Command::new(pi)
        .args([
            "--mode",
            "rpc",
            "--provider",
            "replay-anthropic",
            "--model",
            "replay-model",
        ])
        .current_dir(root.join("work"))
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", p("home"))
        .env("TMPDIR", p("tmp"))
        .env("PI_CODING_AGENT_DIR", p("agent"))
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", pi.display()))?;
    let pid = child.id();
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let err_tail = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = BufReader::new(stderr).read_to_string(&mut s);
        s.chars()
            .rev()
            .take(2000)
            .collect::<String>()
            .chars()
            .rev()
            .collect::<String>()
    });
    let mut lines = BufReader::new(stdout).lines();
    let started = Instant::now();
    let mut compactions = 0usize;
    let mut early_rss = 0u64;
    let fail = |why: String, child: &mut std::process::Child| {
        let _ = child.kill();
        why
    };
    let mut turn = 0usize;
    while turn < turns {
        let cmd = json!({"id": format!("t{turn}"), "type": "prompt",
            "message": format!("Turn {turn}: read blob.txt and say what it holds.")});
        writeln!(stdin, "{cmd}").map_err(|e| fail(e.to_string(), &mut child))?;
        let mut refused = false;
        loop {
            let Some(Ok(line)) = lines.next() else {
                return Err(fail(
                    format!("pi closed its output at turn {turn}"),
                    &mut child,
                ));
            };
            // Only the small lines matter; skip parsing the big ones (10 KB tool results).
            if line.len() > 4096 {
                continue;
            }
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            match v["type"].as_str() {
                Some("response") if v["id"] == format!("t{turn}") && v["success"] == false => {
                    let error = v["error"].as_str().unwrap_or_default();
                    if error.contains("compaction") {
                        refused = true;
                    } else {
                        return Err(fail(format!("turn {turn}: {error}"), &mut child));
                    }
                }
                Some("compaction_end") => {
                    if !v["result"].is_null() {
                        compactions += 1;
                    }
                    if refused {
                        break;
                    }
                }
                // pi's "no retry, compaction or continuation remains": the next prompt is
                // accepted (after `agent_end` a compaction may still be starting).
                Some("agent_settled") if !refused => {
                    turn += 1;
                    break;
                }
                _ => {}
            }
        }
        if turn == turns / 10 && early_rss == 0 {
            early_rss = rss_kib(pid, "VmRSS:").unwrap_or(0);
        }
        if started.elapsed() > Duration::from_secs(3600) {
            return Err(fail("over an hour: stopped".into(), &mut child));
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    // Let a compaction that the last turn started finish before reading the figures.
    std::thread::sleep(Duration::from_millis(300));
    let peak = rss_kib(pid, "VmHWM:").unwrap_or(0);
    let final_rss = rss_kib(pid, "VmRSS:").unwrap_or(0);
    drop(stdin);
    let status = child.wait().map_err(|e| e.to_string())?;
    let tail = err_tail.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("pi exited with {status}: {tail}"));
    }
    let session_bytes: u64 = walk_jsonl(&root.join("agent/sessions"));
    let mib = |kib: u64| kib as f64 / 1024.0;
    Ok(LongRunFigures {
        turns,
        peak_mib: mib(peak),
        early_rss_mib: mib(early_rss),
        final_rss_mib: mib(final_rss),
        session_mib: session_bytes as f64 / (1024.0 * 1024.0),
        compactions,
        seconds,
    })
}

/// Total size of the `.jsonl` files under `dir`.
fn walk_jsonl(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            let path = e.path();
            if path.is_dir() {
                walk_jsonl(&path)
            } else if path.extension().is_some_and(|x| x == "jsonl") {
                e.metadata().map_or(0, |m| m.len())
            } else {
                0
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_answers_by_the_shape_of_the_request() {
        let tool_call = answer(
            br#"{"tools":[{"name":"read"}],"messages":[{"role":"user","content":"hi"}]}"#,
            3,
        );
        assert!(tool_call.contains("toolu_3") && tool_call.contains("blob.txt"));
        let done = answer(
            br#"{"tools":[{"name":"read"}],"messages":[{"role":"user","content":[{"type":"tool_result"}]}]}"#,
            4,
        );
        assert!(done.contains("expected bytes") && done.contains("end_turn"));
        let summary = answer(
            br#"{"messages":[{"role":"user","content":"summarize"}]}"#,
            5,
        );
        assert!(summary.contains("## Goal"));
        assert!(summary.contains("\"input_tokens\":13"), "{summary}");
    }
}
