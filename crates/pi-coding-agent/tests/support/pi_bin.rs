//! Running the `pi` binary in an isolated directory (no user configuration, no network).

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The binary under test.
pub(crate) const PI: &str = env!("CARGO_BIN_EXE_pi");

/// A scratch root: `agent/` (PI_CODING_AGENT_DIR), `home/` (HOME), `work/` (cwd).
pub(crate) struct Sandbox {
    dir: tempfile::TempDir,
}

/// What a run produced.
#[derive(Debug)]
pub(crate) struct Output {
    /// Exit status (`-signal` when killed).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Sandbox {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["agent", "home", "work"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        Sandbox { dir }
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    pub(crate) fn work(&self) -> PathBuf {
        self.root().join("work")
    }

    pub(crate) fn agent(&self) -> PathBuf {
        self.root().join("agent")
    }

    /// A command with the sandbox's environment (nothing inherited) and cwd.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(PI);
        cmd.args(args)
            .current_dir(self.work())
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", self.root().join("home"))
            .env("PI_CODING_AGENT_DIR", self.agent())
            .env("PI_OFFLINE", "1")
            .env("TERM", "dumb");
        cmd
    }

    /// Runs with stdin from `/dev/null`.
    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.run_with_stdin(args, None)
    }

    /// Runs with `input` piped on stdin (`None`: `/dev/null`).
    pub(crate) fn run_with_stdin(&self, args: &[&str], input: Option<&str>) -> Output {
        let mut cmd = self.command(args);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        let mut child = cmd.spawn().unwrap();
        if let Some(text) = input {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        let out = child.wait_with_output().unwrap();
        Output::from(out)
    }
}

impl From<std::process::Output> for Output {
    fn from(out: std::process::Output) -> Self {
        use std::os::unix::process::ExitStatusExt;
        Output {
            code: out
                .status
                .code()
                .unwrap_or_else(|| -out.status.signal().unwrap_or(0)),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Writes `text` to `path`, creating parent directories.
pub(crate) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}
