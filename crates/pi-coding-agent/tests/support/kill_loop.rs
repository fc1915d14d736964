//! The `kill -9` durability loop, shared by the seeded test
//! (`tests/robustness/kill_durability.rs`) and `cargo xtask kill-loop` (which includes this file).
//!
//! A scripted conversation runs through `pi --mode json` with a session: two prompts, three
//! tool rounds (bash and read, the first with two parallel calls), so the session grows to 13
//! entries. One clean run gives the reference entries. Each killed run stops the process with
//! `SIGKILL` after the K-th json line was printed plus a sub-delay (both from a seeded RNG),
//! then checks the session file:
//!
//! - it loads (`SessionStore::open`, no warnings);
//! - its entries are a prefix of the clean run's, compared by type, role and content (ids
//!   and timestamps ignored) — cut short at most by the entry in flight;
//! - every acknowledged entry is there: an entry counts as acknowledged as soon as its
//!   `message_end` line was printed (pi-rs prints it only once the entry is in the file).
//!   The one exception is the reference's too: a new session is written only when its first
//!   assistant message is handled (header and all entries at once), so nothing is
//!   acknowledged before that assistant message's `message_end` was printed.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use pi_ai::testkit::{ReplayServer, Reply};
use pi_coding_agent::storage::SessionStore;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::anthropic_sse::{anthropic_text, anthropic_tools};

/// Longest a single run may take before it counts as hung.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// The largest random sub-delay after the K-th line, in microseconds (the delays are
/// skewed towards 0).
const MAX_SUB_DELAY_US: u64 = 3000;

/// The file the read tool reads.
const NOTES: &str = "alpha\nbeta\ngamma\n";

/// SplitMix64: a small seeded generator (the kill points need no more).
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
}

/// The replies of the scripted conversation, one per request.
fn script() -> Vec<Reply> {
    vec![
        anthropic_tools(&[
            ("toolu_1", "bash", json!({"command": "echo one"})),
            ("toolu_2", "read", json!({"path": "notes.txt"})),
        ]),
        anthropic_tools(&[("toolu_3", "bash", json!({"command": "printf 'two\\n'"}))]),
        anthropic_tools(&[("toolu_4", "read", json!({"path": "notes.txt", "offset": 2}))]),
        anthropic_text("Done with the first task."),
        anthropic_text("Second answer."),
    ]
}

/// One run's surroundings: a replay server with the script and an isolated root.
struct Sandbox {
    _server: pi_ai::testkit::ReplayHandle,
    dir: tempfile::TempDir,
}

impl Sandbox {
    async fn new() -> Result<Self, String> {
        let (_, server) = ReplayServer::start(script())
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
        write("agent/settings.json", r#"{"retry": {"enabled": false}}"#)?;
        write("work/notes.txt", NOTES)?;
        Ok(Sandbox {
            _server: server,
            dir,
        })
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn spawn(&self, pi: &Path) -> Result<tokio::process::Child, String> {
        let p = |sub: &str| self.path(sub).display().to_string();
        tokio::process::Command::new(pi)
            .args(["--mode", "json", "--provider", "replay-anthropic"])
            .args(["--model", "replay-model", "--session-dir", &p("sessions")])
            .args(["first", "second"])
            .current_dir(self.path("work"))
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", p("home"))
            .env("TMPDIR", p("tmp"))
            .env("PI_CODING_AGENT_DIR", p("agent"))
            .env("PI_OFFLINE", "1")
            .env("PI_SKIP_VERSION_CHECK", "1")
            .env("PI_TELEMETRY", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
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

    /// The session's entries as comparison keys; errors when the file does not load cleanly.
    fn entries(&self) -> Result<Option<Vec<Value>>, String> {
        let Some(path) = self.session_file()? else {
            return Ok(None);
        };
        let cwd = self.path("work").display().to_string();
        let store = SessionStore::open(&path, &cwd).map_err(|e| format!("does not load: {e}"))?;
        if !store.warnings().is_empty() {
            return Err(format!("loads with warnings: {:?}", store.warnings()));
        }
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let mut keys = Vec::new();
        for line in text.lines().skip(1) {
            let record: Value = serde_json::from_str(line).map_err(|e| format!("{e}: {line}"))?;
            keys.push(entry_key(&record));
        }
        Ok(Some(keys))
    }
}

/// An entry without what differs between runs: a message as its type, role and content;
/// any other entry without its id, parent id and timestamp.
fn entry_key(record: &Value) -> Value {
    if record["type"] == "message" {
        return json!({"type": "message", "role": record["message"]["role"],
            "content": record["message"]["content"]});
    }
    let mut key = record.clone();
    if let Some(map) = key.as_object_mut() {
        for field in ["id", "parentId", "timestamp"] {
            map.shift_remove(field);
        }
    }
    key
}

/// Reads complete (newline-terminated) lines until `stop` of them were read or the output
/// ends; an unterminated tail (a line cut by the kill) is dropped.
async fn read_lines(
    reader: &mut BufReader<tokio::process::ChildStdout>,
    lines: &mut Vec<Value>,
    stop: usize,
) -> Result<bool, String> {
    while lines.len() < stop {
        let mut buf = Vec::new();
        let n = tokio::time::timeout(RUN_LIMIT, reader.read_until(b'\n', &mut buf))
            .await
            .map_err(|_| "no output for 60 s".to_owned())?
            .map_err(|e| e.to_string())?;
        if n == 0 || buf.last() != Some(&b'\n') {
            return Ok(false);
        }
        let line = String::from_utf8_lossy(&buf);
        lines.push(serde_json::from_str(line.trim_end()).map_err(|e| format!("{e}: {line}"))?);
    }
    Ok(true)
}

/// The reference: the entries and json lines of an undisturbed run.
#[derive(Clone, Debug)]
pub(crate) struct Clean {
    /// Entry keys in file order (header excluded).
    pub entries: Vec<Value>,
    /// Number of json lines printed.
    pub lines: usize,
}

/// Runs the conversation to its end.
pub(crate) async fn clean_run(pi: &Path) -> Result<Clean, String> {
    let sandbox = Sandbox::new().await?;
    let mut child = sandbox.spawn(pi)?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut reader = BufReader::new(stdout);
    let mut lines = Vec::new();
    read_lines(&mut reader, &mut lines, usize::MAX).await?;
    let status = child.wait().await.map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("clean run: {status}"));
    }
    let entries = sandbox.entries()?.ok_or("clean run wrote no session")?;
    let messages = entries.iter().filter(|e| e["type"] == "message").count();
    if messages != 11 || lines.last().map(|l| &l["type"]) != Some(&json!("agent_settled")) {
        return Err(format!("clean run: unexpected shape {entries:?}"));
    }
    Ok(Clean {
        entries,
        lines: lines.len(),
    })
}

/// Number of message entries the printed lines acknowledge (see the module docs): every
/// printed `message_end` of a persisted message once the first assistant one is among them.
pub(crate) fn acknowledged(printed: &[Value]) -> usize {
    let persisted = |r: &Value| {
        r["type"] == "message_end"
            && matches!(
                r["message"]["role"].as_str(),
                Some("user" | "assistant" | "toolResult" | "custom")
            )
    };
    let ends = printed.iter().filter(|r| persisted(r));
    if !ends.clone().any(|r| r["message"]["role"] == "assistant") {
        return 0;
    }
    ends.count()
}

/// What one killed run saw.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    /// Kill after this many printed lines…
    pub k: usize,
    /// …plus this sub-delay.
    pub delay_us: u64,
    /// The run ended by itself before the kill point.
    pub completed: bool,
    /// Lines printed (read from the pipe, including after the kill).
    pub printed: usize,
    /// Message entries acknowledged by the printed lines.
    pub acknowledged: usize,
    /// Entries in the file (`None`: no file).
    pub entries: Option<usize>,
    /// Message entries in the file.
    pub messages: usize,
}

/// One run killed after `k` lines plus `delay_us`; `Err` describes a durability violation.
pub(crate) async fn killed_run(
    pi: &Path,
    clean: &Clean,
    k: usize,
    delay_us: u64,
) -> Result<Outcome, String> {
    let sandbox = Sandbox::new().await?;
    let mut child = sandbox.spawn(pi)?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut reader = BufReader::new(stdout);
    let mut printed = Vec::new();
    let reached = read_lines(&mut reader, &mut printed, k).await?;
    if reached {
        // Tokio's timer has millisecond steps; a thread sleep keeps the microseconds.
        std::thread::sleep(Duration::from_micros(delay_us));
        // SIGKILL; an error means the process already exited.
        let _ = child.start_kill();
    }
    read_lines(&mut reader, &mut printed, usize::MAX).await?;
    let status = child.wait().await.map_err(|e| e.to_string())?;
    let completed = status.success();
    let acknowledged = acknowledged(&printed);
    let entries = sandbox.entries()?;
    let (count, messages) = match &entries {
        None => (None, 0),
        Some(found) => {
            if found.len() > clean.entries.len() || clean.entries[..found.len()] != found[..] {
                return Err(format!(
                    "entries are not a prefix of the clean run's:\n{found:#?}"
                ));
            }
            let messages = found.iter().filter(|e| e["type"] == "message").count();
            (Some(found.len()), messages)
        }
    };
    if messages < acknowledged {
        return Err(format!(
            "{acknowledged} acknowledged message entries, {messages} in the file"
        ));
    }
    if completed && entries.as_ref().map(Vec::len) != Some(clean.entries.len()) {
        return Err("a completed run lacks entries".into());
    }
    Ok(Outcome {
        k,
        delay_us,
        completed,
        printed: printed.len(),
        acknowledged,
        entries: count,
        messages,
    })
}

/// Totals over a loop.
#[derive(Clone, Debug, Default)]
pub(crate) struct Summary {
    /// Runs done.
    pub runs: usize,
    /// Runs that finished before their kill point.
    pub completed: usize,
    /// Killed runs that left no file (killed before the first assistant message).
    pub no_file: usize,
    /// Killed runs whose file loaded and matched.
    pub files: usize,
    /// Message entries acknowledged, summed over the runs.
    pub acknowledged: usize,
    /// Message entries found, summed over the runs.
    pub messages: usize,
    /// Runs whose file held the entry in flight (one more message than acknowledged).
    pub in_flight_kept: usize,
    /// Entries of the clean run.
    pub clean_entries: usize,
    /// Json lines of the clean run.
    pub clean_lines: usize,
}

/// `runs` killed runs with kill points from `seed`; `each` sees every outcome. Stops at the
/// first violation.
pub(crate) async fn kill_loop(
    pi: &Path,
    runs: usize,
    seed: u64,
    mut each: impl FnMut(usize, &Outcome),
) -> Result<Summary, String> {
    let clean = clean_run(pi).await?;
    let mut rng = Rng::new(seed);
    let mut summary = Summary {
        clean_entries: clean.entries.len(),
        clean_lines: clean.lines,
        ..Summary::default()
    };
    for run in 0..runs {
        let k = usize::try_from(rng.range(1, clean.lines as u64)).unwrap_or(1);
        // Skewed towards short delays (quadratic), so kills land close to a line too.
        let u = rng.range(0, 1000);
        let delay_us = u * u * MAX_SUB_DELAY_US / 1_000_000;
        let outcome = killed_run(pi, &clean, k, delay_us)
            .await
            .map_err(|e| format!("run {run} (seed {seed}, k {k}, delay {delay_us} µs): {e}"))?;
        summary.runs += 1;
        if outcome.completed {
            summary.completed += 1;
        } else if outcome.entries.is_none() {
            summary.no_file += 1;
        } else {
            summary.files += 1;
        }
        summary.acknowledged += outcome.acknowledged;
        summary.messages += outcome.messages;
        if outcome.messages > outcome.acknowledged && !outcome.completed {
            summary.in_flight_kept += 1;
        }
        each(run, &outcome);
    }
    Ok(summary)
}
