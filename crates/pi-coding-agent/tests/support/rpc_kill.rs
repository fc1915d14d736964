//! `SIGKILL` right after a `message_end` line of `pi --mode rpc`: shared by the suite's test
//! (`tests/rpc/kill.rs`) and `cargo xtask rpc-kill` (which includes this file).
//!
//! The guarantee under test: an event that reports a session entry complete is printed only
//! once the entry is in the session file. A run drives `pi --mode rpc` with a session through
//! three prompts against the replay server — a short answer with a `bash` call, then a 1 MiB
//! answer; a short answer; another 1 MiB answer — eight `message_end` lines in all. It kills the
//! process with `SIGKILL` the moment it has read the K-th `message_end` line (it kills before
//! it parses the line), reads what is left in the pipe, and opens the session file as a
//! resume does (`SessionStore::open`, `build_session_context`). Every message whose
//! `message_end` line was read, before or after the kill, must be in that context, in order,
//! with its role and content.
//!
//! One exception is pi's: a new session writes nothing before its first assistant message
//! (then the header and everything so far at once), so a `user` `message_end` printed before
//! it promises nothing. The process runs either pinned to one CPU (`taskset -c 0`), where the
//! writer and the appending thread take turns, or on two.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pi_ai::testkit::{Reply, SseBuilder};
use pi_coding_agent::storage::{SessionStore, build_session_context};
use serde_json::{Value, json};

use super::anthropic_sse::anthropic_tools;

/// `message_end` lines of a complete run (user, assistant, toolResult, assistant; user,
/// assistant; user, assistant).
pub(crate) const MESSAGE_ENDS: usize = 8;

/// The prompts, each sent once the previous run settled.
const PROMPTS: [&str; 3] = ["first", "second", "third"];

/// The size of the large answers (1 MiB).
pub(crate) const LARGE: usize = 1 << 20;

/// Text deltas per large answer.
const DELTAS: usize = 16;

/// Longest a single run may take before it counts as hung.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// An Anthropic text answer of `len` bytes in `deltas` deltas, made of `fill` repeated.
fn long_text(fill: &str, len: usize, deltas: usize) -> (String, Reply) {
    let text: String = fill.chars().cycle().take(len).collect();
    let mut sse = SseBuilder::new()
        .event(
            "message_start",
            &json!({"type":"message_start","message":{"id":"msg_kill","type":"message",
                "role":"assistant","model":"replay-model","content":[],"stop_reason":null,
                "stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}),
        )
        .event(
            "content_block_start",
            &json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        );
    let step = len.div_ceil(deltas);
    for piece in text.as_bytes().chunks(step) {
        let piece = std::str::from_utf8(piece).unwrap_or_default();
        sse = sse.event(
            "content_block_delta",
            &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":piece}}),
        );
    }
    let body = sse
        .event(
            "content_block_stop",
            &json!({"type":"content_block_stop","index":0}),
        )
        .event(
            "message_delta",
            &json!({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},
                "usage":{"output_tokens":5}}),
        )
        .event("message_stop", &json!({"type":"message_stop"}))
        .build();
    (text, Reply::sse(body))
}

/// The replies, one per request.
fn script() -> Vec<Reply> {
    vec![
        anthropic_tools(&[("toolu_1", "bash", json!({"command": "echo one"}))]),
        long_text("large answer one; ", LARGE, DELTAS).1,
        long_text("a short answer", 14, 1).1,
        long_text("large answer two, ", LARGE, DELTAS).1,
    ]
}

/// One run's surroundings: a replay server with the script and an isolated root.
struct Sandbox {
    _server: pi_ai::testkit::ReplayHandle,
    dir: tempfile::TempDir,
}

impl Sandbox {
    async fn new() -> Result<Self, String> {
        let (_, server) = pi_ai::testkit::ReplayServer::start(script())
            .await
            .map_err(|e| e.to_string())?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        for d in ["agent", "home", "tmp", "work", "sessions"] {
            std::fs::create_dir_all(dir.path().join(d)).map_err(|e| e.to_string())?;
        }
        let models = json!({"providers": {"replay-anthropic": {
            "baseUrl": server.base_url(), "api": "anthropic-messages", "apiKey": "replay-test-key",
            "models": [{"id": "replay-model", "contextWindow": 128000, "maxTokens": 16384}]}}});
        let write = |p: &str, text: &str| {
            std::fs::write(dir.path().join(p), text).map_err(|e| format!("{p}: {e}"))
        };
        write("agent/models.json", &models.to_string())?;
        write(
            "agent/settings.json",
            r#"{"retry": {"enabled": false}, "compaction": {"enabled": false}}"#,
        )?;
        Ok(Sandbox {
            _server: server,
            dir,
        })
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn spawn(&self, pi: &Path, one_cpu: bool) -> Result<Child, String> {
        let p = |sub: &str| self.path(sub).display().to_string();
        let mut cmd = if one_cpu {
            let mut c = Command::new("taskset");
            c.args(["-c", "0"]).arg(pi);
            c
        } else {
            Command::new(pi)
        };
        cmd.args(["--mode", "rpc", "--provider", "replay-anthropic"])
            .args(["--model", "replay-model", "--session-dir", &p("sessions")])
            .current_dir(self.path("work"))
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", p("home"))
            .env("TMPDIR", p("tmp"))
            .env("PI_CODING_AGENT_DIR", p("agent"))
            .env("PI_OFFLINE", "1")
            .env("PI_SKIP_VERSION_CHECK", "1")
            .env("PI_TELEMETRY", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", pi.display()))
    }

    /// The session file, if one was written.
    fn session_file(&self) -> Result<Option<PathBuf>, String> {
        let files: Vec<PathBuf> = std::fs::read_dir(self.path("sessions"))
            .map_err(|e| e.to_string())?
            .flatten()
            .map(|e| e.path())
            .collect();
        match files.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one.clone())),
            more => Err(format!("{} session files", more.len())),
        }
    }
}

/// A message as compared: its role and content.
fn key(message: &Value) -> (String, Value) {
    (
        message["role"].as_str().unwrap_or_default().to_owned(),
        message["content"].clone(),
    )
}

/// Whether the session appends a message with this role at its `message_end`.
fn persisted_role(role: &str) -> bool {
    matches!(role, "user" | "assistant" | "toolResult" | "custom")
}

/// The messages the printed `message_end` lines promise to be in the file: all of them once
/// an assistant message was printed (the new session's file is written with the first
/// assistant message), none before.
pub(crate) fn promised(ends: &[Value]) -> Vec<(String, Value)> {
    let keys: Vec<(String, Value)> = ends
        .iter()
        .map(key)
        .filter(|(role, _)| persisted_role(role))
        .collect();
    if keys.iter().any(|(role, _)| role == "assistant") {
        keys
    } else {
        Vec::new()
    }
}

/// What one killed run saw.
#[derive(Clone, Debug, Default)]
pub(crate) struct Outcome {
    /// Killed right after this `message_end` line (1-based).
    pub k: usize,
    /// The process ran pinned to one CPU.
    pub one_cpu: bool,
    /// The run ended by itself first.
    pub completed: bool,
    /// `message_end` lines read, after the kill included.
    pub ends_read: usize,
    /// Messages those lines promise to be in the file.
    pub promised: usize,
    /// Of those, the ones of 1 MiB or more.
    pub promised_large: usize,
    /// Messages of the resumed context (`None`: no file).
    pub context: Option<usize>,
    /// The file's last line was cut by the kill (an entry in flight, not promised).
    pub torn_tail: bool,
    /// Microseconds from reading the K-th `message_end` line to the kill being sent.
    pub kill_latency_us: u128,
    /// The whole run, in milliseconds.
    pub millis: u128,
}

/// Reads one complete line (`None`: end of output or a line cut short).
fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> Result<bool, String> {
    buf.clear();
    let n = reader.read_until(b'\n', buf).map_err(|e| e.to_string())?;
    Ok(n > 0 && buf.last() == Some(&b'\n'))
}

/// One run killed right after the `k`-th `message_end` line; `Err` describes a violation.
pub(crate) async fn killed_run(pi: &Path, k: usize, one_cpu: bool) -> Result<Outcome, String> {
    let sandbox = Sandbox::new().await?;
    let pi = pi.to_owned();
    // The reading side blocks: no runtime hop between reading the line and the kill.
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let (mut outcome, promised) = drive(&sandbox, &pi, k, one_cpu)?;
        check(&sandbox, &mut outcome, &promised)?;
        outcome.millis = started.elapsed().as_millis();
        Ok(outcome)
    })
    .await
    .map_err(|e| e.to_string())?
}

/// Runs pi, kills it after the `k`-th `message_end` line, and returns what was read with the
/// messages promised.
fn drive(
    sandbox: &Sandbox,
    pi: &Path,
    k: usize,
    one_cpu: bool,
) -> Result<(Outcome, Vec<(String, Value)>), String> {
    let mut child = sandbox.spawn(pi, one_cpu)?;
    let result = read_run(&mut child, k, one_cpu);
    if result.is_err() {
        let _ = child.kill();
        let _ = child.wait();
    }
    result
}

fn read_run(
    child: &mut Child,
    k: usize,
    one_cpu: bool,
) -> Result<(Outcome, Vec<(String, Value)>), String> {
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut reader = BufReader::with_capacity(1 << 22, stdout);
    let deadline = Instant::now() + RUN_LIMIT;
    let mut outcome = Outcome {
        k,
        one_cpu,
        ..Outcome::default()
    };
    let mut ends = Vec::new();
    let mut prompts = PROMPTS.iter();
    let send = |stdin: &mut std::process::ChildStdin, text: &str| {
        let line = json!({"type": "prompt", "message": text}).to_string() + "\n";
        stdin.write_all(line.as_bytes()).map_err(|e| e.to_string())
    };
    let mut stdin = Some(stdin);
    if let (Some(s), Some(text)) = (stdin.as_mut(), prompts.next()) {
        send(s, text)?;
    }
    let mut buf = Vec::new();
    let mut killed = false;
    while read_line(&mut reader, &mut buf)? {
        let is_end = buf.starts_with(br#"{"type":"message_end""#);
        if is_end && !killed && ends.len() + 1 == k {
            let read_at = Instant::now();
            let _ = child.kill();
            outcome.kill_latency_us = read_at.elapsed().as_micros();
            killed = true;
            stdin = None;
        }
        if Instant::now() > deadline {
            return Err("the run took more than 60 s".into());
        }
        if is_end {
            let record: Value = serde_json::from_slice(&buf).map_err(|e| e.to_string())?;
            ends.push(record["message"].clone());
        } else if !killed && buf.starts_with(br#"{"type":"agent_settled""#) {
            match (stdin.as_mut(), prompts.next()) {
                (Some(s), Some(text)) => send(s, text)?,
                // End of input: pi shuts down and exits 0.
                _ => stdin = None,
            }
        }
    }
    drop(stdin);
    let status = child.wait().map_err(|e| e.to_string())?;
    outcome.completed = !killed && status.success();
    if !killed && !outcome.completed {
        return Err(format!("pi ended by itself with {status}"));
    }
    if outcome.completed && ends.len() != MESSAGE_ENDS {
        return Err(format!(
            "a complete run printed {} message_end lines, not {MESSAGE_ENDS}",
            ends.len()
        ));
    }
    outcome.ends_read = ends.len();
    let promised = promised(&ends);
    outcome.promised = promised.len();
    outcome.promised_large = promised
        .iter()
        .filter(|(_, content)| content.to_string().len() >= LARGE)
        .count();
    Ok((outcome, promised))
}

/// Resumes the session file as pi does and checks that it holds every promised message.
fn check(
    sandbox: &Sandbox,
    outcome: &mut Outcome,
    promised: &[(String, Value)],
) -> Result<(), String> {
    let Some(path) = sandbox.session_file()? else {
        if promised.is_empty() {
            return Ok(());
        }
        return Err(format!(
            "no session file, but {} message_end lines were printed, the last {:?}",
            promised.len(),
            promised.last().map(|(role, _)| role)
        ));
    };
    let text = std::fs::read(&path).map_err(|e| e.to_string())?;
    outcome.torn_tail = text.last().is_some_and(|&b| b != b'\n');
    let cwd = sandbox.path("work").display().to_string();
    let store = SessionStore::open(&path, &cwd).map_err(|e| format!("does not load: {e}"))?;
    let context = build_session_context(&store).map_err(|e| format!("no context: {e}"))?;
    let found: Vec<(String, Value)> = context
        .messages
        .iter()
        .map(|m| key(&serde_json::to_value(m).unwrap_or_default()))
        .collect();
    outcome.context = Some(found.len());
    for (i, want) in promised.iter().enumerate() {
        match found.get(i) {
            Some(got) if got == want => {}
            Some(got) => {
                return Err(format!(
                    "message {} of the context is not the printed one: {} ({} bytes) where \
                     {} ({} bytes) was printed",
                    i + 1,
                    got.0,
                    got.1.to_string().len(),
                    want.0,
                    want.1.to_string().len()
                ));
            }
            None => {
                return Err(format!(
                    "{} messages printed as ended, {} in the resumed context (missing: {}, \
                     {} bytes; the file's last line is {})",
                    promised.len(),
                    found.len(),
                    want.0,
                    want.1.to_string().len(),
                    if outcome.torn_tail { "torn" } else { "whole" }
                ));
            }
        }
    }
    Ok(())
}

/// Totals over a loop.
#[derive(Clone, Debug, Default)]
pub(crate) struct Summary {
    /// Runs done.
    pub runs: usize,
    /// Runs pinned to one CPU.
    pub one_cpu: usize,
    /// Runs that finished before their kill point.
    pub completed: usize,
    /// Killed runs that left no file (only the first user message printed).
    pub no_file: usize,
    /// Messages promised, summed over the runs; all were found.
    pub promised: usize,
    /// Promised messages of 1 MiB or more.
    pub promised_large: usize,
    /// Files whose last line the kill cut (an entry in flight).
    pub torn_tails: usize,
    /// The longest time from reading a line to sending the kill, in microseconds.
    pub max_kill_latency_us: u128,
    /// Violations seen by a loop told to go on after them.
    pub violations: Vec<String>,
}

/// Which `message_end` line run `run` kills after, and whether it is pinned to one CPU: every
/// line on both, in turn.
pub(crate) fn plan(run: usize) -> (usize, bool) {
    (
        run % MESSAGE_ENDS + 1,
        (run / MESSAGE_ENDS).is_multiple_of(2),
    )
}

/// `runs` killed runs ([`plan`]); `each` sees every outcome. Stops at the first violation,
/// or with `keep_going` records it in [`Summary::violations`] and goes on.
pub(crate) async fn rpc_kill_loop(
    pi: &Path,
    runs: usize,
    keep_going: bool,
    mut each: impl FnMut(usize, &Outcome),
) -> Result<Summary, String> {
    let mut summary = Summary::default();
    for run in 0..runs {
        let (k, one_cpu) = plan(run);
        let cpus = if one_cpu { "one CPU" } else { "two CPUs" };
        let outcome = match killed_run(pi, k, one_cpu).await {
            Ok(o) => o,
            Err(e) => {
                let e = format!("run {run} (after message_end {k}, {cpus}): {e}");
                if !keep_going {
                    return Err(e);
                }
                summary.runs += 1;
                summary.one_cpu += usize::from(one_cpu);
                summary.violations.push(e);
                continue;
            }
        };
        summary.runs += 1;
        summary.one_cpu += usize::from(one_cpu);
        summary.completed += usize::from(outcome.completed);
        summary.no_file += usize::from(outcome.context.is_none());
        summary.promised += outcome.promised;
        summary.promised_large += outcome.promised_large;
        summary.torn_tails += usize::from(outcome.torn_tail);
        summary.max_kill_latency_us = summary.max_kill_latency_us.max(outcome.kill_latency_us);
        each(run, &outcome);
    }
    Ok(summary)
}
