//! A temp root for running the `pi` binary against the replay server with the synchronous
//! `std::process` API: an agent dir whose `models.json` has one provider `replay-anthropic`
//! (model `replay-model`, a test key) at the server's URL and `retry.enabled: false`, plus
//! `home`, `tmp`, `work` (the cwd) and `sessions`. Used by the session-selection and
//! run-mode tests; [`super::binary_rig`] is the async, configurable kin.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

/// The temp root (removed on drop).
pub(crate) struct Env {
    root: tempfile::TempDir,
}

impl Env {
    /// A root whose provider points at `base_url`.
    pub(crate) fn new(base_url: &str) -> Env {
        let root = tempfile::tempdir().unwrap();
        for d in ["agent", "home", "tmp", "work", "sessions"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        let models = json!({"providers": {"replay-anthropic": {
            "baseUrl": base_url, "api": "anthropic-messages", "apiKey": "replay-test-key",
            "models": [{"id": "replay-model", "contextWindow": 128000, "maxTokens": 16384}]
        }}});
        std::fs::write(root.path().join("agent/models.json"), models.to_string()).unwrap();
        std::fs::write(
            root.path().join("agent/settings.json"),
            r#"{"retry": {"enabled": false}}"#,
        )
        .unwrap();
        Env { root }
    }

    /// A path below the root.
    pub(crate) fn path(&self, sub: &str) -> PathBuf {
        self.root.path().join(sub)
    }

    /// The working directory as the process sees it.
    pub(crate) fn work(&self) -> PathBuf {
        self.path("work").canonicalize().unwrap()
    }

    /// The `sessions` dir (for `--session-dir`).
    pub(crate) fn sessions(&self) -> String {
        self.path("sessions").display().to_string()
    }

    /// This project's default session directory below the agent dir.
    pub(crate) fn here(&self) -> PathBuf {
        self.path("agent/sessions").join(format!(
            "--{}--",
            self.work()
                .display()
                .to_string()
                .trim_start_matches('/')
                .replace('/', "-")
        ))
    }

    /// Runs pi with the replay model and stdin on `/dev/null`; returns (exit code, stdout,
    /// stderr).
    pub(crate) fn run(&self, args: &[&str]) -> (i32, String, String) {
        self.spawn(args, None, &[])
    }

    /// Runs pi with `input` piped to stdin.
    pub(crate) fn run_in(&self, args: &[&str], input: &str) -> (i32, String, String) {
        self.spawn(args, Some(input), &[])
    }

    /// [`Env::run_in`] with extra environment variables.
    pub(crate) fn run_in_with_env(
        &self,
        args: &[&str],
        input: &str,
        vars: &[(&str, &str)],
    ) -> (i32, String, String) {
        self.spawn(args, Some(input), vars)
    }

    fn spawn(
        &self,
        args: &[&str],
        input: Option<&str>,
        vars: &[(&str, &str)],
    ) -> (i32, String, String) {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_pi"))
            .args(["--provider", "replay-anthropic", "--model", "replay-model"])
            .args(args)
            .current_dir(self.path("work"))
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", self.path("home"))
            .env("TMPDIR", self.path("tmp"))
            .env("PI_CODING_AGENT_DIR", self.path("agent"))
            .env("PI_OFFLINE", "1")
            .envs(vars.iter().copied())
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(input) = input {
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(input.as_bytes()).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// The files of the `sessions` dir, sorted by name (= creation time).
    pub(crate) fn session_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.path("sessions"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        files
    }

    /// The `.jsonl` files of `dir`, sorted (none when it does not exist).
    pub(crate) fn files(dir: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.retain(|f| f.extension().is_some_and(|e| e == "jsonl"));
        files.sort();
        files
    }
}
