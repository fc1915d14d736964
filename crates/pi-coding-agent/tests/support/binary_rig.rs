//! Running the `pi` binary against the test kit's replay server, for the reliability tests
//! (fault injection, kill -9 durability, secrets): an isolated root, a `models.json` whose
//! providers point at the server, Anthropic replies built in code, and the records a run
//! printed.
//!
//! `PI_RIG_BIN=<path>` runs another binary (the TypeScript reference, to check by hand that
//! the expectations are the reference's; not part of the suite).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// The key every provider of the rig's `models.json` uses.
pub(crate) const KEY: &str = "replay-test-key";

/// No run of these tests may take longer (a hang fails the test instead of blocking it).
pub(crate) const RUN_LIMIT: Duration = Duration::from_secs(60);

/// wire API → (provider name in `models.json`, base URL suffix).
pub(crate) const PROVIDERS: [(&str, &str, &str); 4] = [
    ("anthropic-messages", "replay-anthropic", ""),
    ("openai-completions", "replay-openai", "/v1"),
    ("openai-responses", "replay-responses", "/v1"),
    ("google-generative-ai", "replay-google", "/v1beta"),
];

/// How many cases of one test binary may drive `pi` at once (see [`slot`]).
const SLOTS: usize = 4;

static BUSY: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();

/// A claim on one of [`SLOTS`]; released when dropped.
pub(crate) struct Slot(());

impl Drop for Slot {
    fn drop(&mut self) {
        *BUSY.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        FREED.notify_one();
    }
}

/// Waits for a free slot. The test harness starts every test of a file at once; cases that
/// rely on real-time limits (idle and request timeouts of a second) claim a slot first, so a
/// 2-core machine never runs dozens of debug `pi` processes side by side and starves them
/// past those limits.
pub(crate) fn slot() -> Slot {
    let mut busy = BUSY.lock().unwrap_or_else(|e| e.into_inner());
    while *busy >= SLOTS {
        busy = FREED.wait(busy).unwrap_or_else(|e| e.into_inner());
    }
    *busy += 1;
    Slot(())
}

/// The binary under test (`PI_RIG_BIN`, else this crate's `pi`).
pub(crate) fn pi_bin() -> PathBuf {
    std::env::var_os("PI_RIG_BIN")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_pi")))
}

/// The provider name serving `api`.
pub(crate) fn provider_for(api: &str) -> &'static str {
    PROVIDERS
        .iter()
        .find(|(a, _, _)| *a == api)
        .map(|(_, p, _)| *p)
        .unwrap_or_else(|| panic!("unknown api {api}"))
}

/// A scratch root: `agent/` (PI_CODING_AGENT_DIR, with `models.json` and `settings.json`),
/// `home/`, `tmp/`, `work/` (cwd), `sessions/` (`--session-dir`).
pub(crate) struct Rig {
    dir: tempfile::TempDir,
    /// Extra environment for every run.
    pub env: Vec<(String, String)>,
}

/// What a run produced.
#[derive(Debug)]
pub(crate) struct Run {
    /// Exit status (`-signal` when killed).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Every stdout line as JSON (json and rpc modes).
    pub(crate) fn records(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

impl Rig {
    /// A root whose providers all point at `base_url` with [`KEY`], and `settings`.
    pub(crate) fn new(base_url: &str, settings: &Value) -> Rig {
        Rig::with_models(&models_json(base_url, Some(KEY)), settings)
    }

    /// A root with this `models.json` and `settings.json`.
    pub(crate) fn with_models(models: &Value, settings: &Value) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        for d in ["agent", "home", "tmp", "work", "sessions"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let rig = Rig {
            dir,
            env: Vec::new(),
        };
        std::fs::write(rig.path("agent/models.json"), models.to_string()).unwrap();
        std::fs::write(rig.path("agent/settings.json"), settings.to_string()).unwrap();
        rig
    }

    /// A path under the root.
    pub(crate) fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// `--session-dir` value.
    pub(crate) fn sessions(&self) -> String {
        self.path("sessions").display().to_string()
    }

    /// A command for the binary with the rig's environment (nothing inherited) and cwd.
    pub(crate) fn command(&self, args: &[&str]) -> tokio::process::Command {
        let p = |sub: &str| self.path(sub).display().to_string();
        let mut cmd = tokio::process::Command::new(pi_bin());
        cmd.args(args)
            .current_dir(self.path("work"))
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", p("home"))
            .env("TMPDIR", p("tmp"))
            .env("PI_CODING_AGENT_DIR", p("agent"))
            .env("PI_OFFLINE", "1")
            .env("PI_SKIP_VERSION_CHECK", "1")
            .env("PI_TELEMETRY", "0")
            .env("TERM", "dumb")
            .env("NO_COLOR", "1")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    /// Runs to completion (at most [`RUN_LIMIT`]), stdin `/dev/null` or `input`.
    pub(crate) async fn run_with_input(&self, args: &[&str], input: Option<&str>) -> Run {
        use tokio::io::AsyncWriteExt;
        let mut cmd = self.command(args);
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn().unwrap();
        if let Some(text) = input {
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(text.as_bytes()).await.unwrap();
            drop(stdin);
        }
        let out = tokio::time::timeout(RUN_LIMIT, child.wait_with_output())
            .await
            .unwrap_or_else(|_| panic!("pi {args:?} ran longer than {RUN_LIMIT:?}"))
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        Run {
            code: out
                .status
                .code()
                .unwrap_or_else(|| -out.status.signal().unwrap_or(0)),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs to completion with stdin `/dev/null`.
    pub(crate) async fn run(&self, args: &[&str]) -> Run {
        self.run_with_input(args, None).await
    }

    /// The session files, sorted by name (= creation time).
    pub(crate) fn session_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.path("sessions"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        files
    }
}

/// A `models.json` with one provider per wire API at `base_url` (key `key`, if any), each
/// serving `replay-model`.
pub(crate) fn models_json(base_url: &str, key: Option<&str>) -> Value {
    let mut providers = serde_json::Map::new();
    for (api, name, suffix) in PROVIDERS {
        let mut p = json!({"baseUrl": format!("{base_url}{suffix}"), "api": api,
            "models": [{"id": "replay-model", "reasoning": false, "contextWindow": 128000,
                        "maxTokens": 16384}]});
        if let Some(key) = key {
            p["apiKey"] = json!(key);
        }
        providers.insert(name.into(), p);
    }
    json!({ "providers": providers })
}

/// The records of a session file, one JSON value per line.
pub(crate) fn file_records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The arguments of a print-mode run of `replay-model`, with `extra` before the prompt.
pub(crate) fn print_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "-p",
        "--provider",
        "replay-anthropic",
        "--model",
        "replay-model",
    ];
    args.extend_from_slice(extra);
    args.push("hi");
    args
}
