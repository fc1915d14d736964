//! The interactive mode's pty rig: an isolated root for `pi` in a pty against the replay
//! server, and the waits and keystrokes the interactive tests share.

use std::path::PathBuf;
use std::time::Duration;

use pi_ai::testkit::{ReplayHandle, ReplayServer, Reply};
use pi_tui::testkit::{Answers, CommandBuilder, PtySession, ScreenModel};
use serde_json::{Value, json};

use crate::support::binary_rig::{models_json, pi_bin};

/// Generous for a loaded 2-core machine running debug builds.
pub(crate) const WAIT: Duration = Duration::from_secs(30);

/// An isolated root: agent dir, home, a work dir with `hello.txt`, a sessions dir.
pub(crate) struct Root {
    dir: tempfile::TempDir,
}

impl Root {
    pub(crate) fn new(base_url: &str, settings: Value) -> Root {
        let dir = tempfile::tempdir().unwrap();
        for d in ["agent", "home", "tmp", "work", "sessions"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let root = Root { dir };
        std::fs::write(
            root.path("agent/models.json"),
            models_json(base_url, Some("replay-test-key")).to_string(),
        )
        .unwrap();
        let mut s = json!({"retry": {"enabled": false}});
        if let (Some(s), Some(extra)) = (s.as_object_mut(), settings.as_object()) {
            s.extend(extra.clone());
        }
        std::fs::write(root.path("agent/settings.json"), s.to_string()).unwrap();
        std::fs::write(root.path("work/hello.txt"), "Hello from the scratch dir!\n").unwrap();
        root
    }

    pub(crate) fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    pub(crate) fn sessions(&self) -> String {
        self.path("sessions").display().to_string()
    }

    /// `pi --provider replay-anthropic --model replay-model` and `args` in a `rows`×`cols`
    /// pty: the replay server's model.
    pub(crate) fn spawn_replay(&self, args: &[&str], rows: u16, cols: u16) -> PtySession {
        let mut all = vec!["--provider", "replay-anthropic", "--model", "replay-model"];
        all.extend_from_slice(args);
        self.spawn(&all, rows, cols)
    }

    /// `pi` with `args` in a `rows`×`cols` pty.
    pub(crate) fn spawn(&self, args: &[&str], rows: u16, cols: u16) -> PtySession {
        self.spawn_with_path(args, "/usr/local/bin:/usr/bin:/bin", rows, cols)
    }

    /// [`Root::spawn`] with `path` as `PATH` (fake tools first, or none at all).
    pub(crate) fn spawn_with_path(
        &self,
        args: &[&str],
        path: &str,
        rows: u16,
        cols: u16,
    ) -> PtySession {
        self.spawn_with_env(args, path, &[], rows, cols)
    }

    /// [`Root::spawn_with_path`] with more environment variables (`extra` wins).
    pub(crate) fn spawn_with_env(
        &self,
        args: &[&str],
        path: &str,
        extra: &[(&str, String)],
        rows: u16,
        cols: u16,
    ) -> PtySession {
        let mut cmd = CommandBuilder::new(pi_bin());
        cmd.args(args);
        cmd.cwd(self.path("work"));
        cmd.env_clear();
        let base = [
            ("PATH", path.to_owned()),
            ("HOME", self.path("home").display().to_string()),
            ("TMPDIR", self.path("tmp").display().to_string()),
            (
                "PI_CODING_AGENT_DIR",
                self.path("agent").display().to_string(),
            ),
            ("PI_OFFLINE", "1".to_owned()),
            ("PI_SKIP_VERSION_CHECK", "1".to_owned()),
            ("COLORTERM", "truecolor".to_owned()),
        ];
        for (k, v) in base.iter().chain(extra) {
            cmd.env(k, v);
        }
        PtySession::spawn(cmd, rows, cols, Answers::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    pub(crate) fn session_files(&self) -> Vec<PathBuf> {
        let mut f: Vec<PathBuf> = std::fs::read_dir(self.path("sessions"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        f.sort();
        f
    }
}

pub(crate) fn ok<T>(r: Result<T, pi_tui::testkit::PtyError>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

pub(crate) fn wait_text(s: &mut PtySession, needle: &str) {
    ok(s.wait_for_text(needle, WAIT));
}

/// The editor is drawn: the footer's model line is on screen.
pub(crate) fn wait_ready(s: &mut PtySession) {
    ok(s.wait_for("the editor and footer", WAIT, |m| {
        m.screen_text().contains("(auto)")
    }));
}

pub(crate) fn pump_for(s: &mut PtySession, time: Duration) {
    let end = std::time::Instant::now() + time;
    while std::time::Instant::now() < end {
        ok(s.pump(Duration::from_millis(20)));
    }
}

pub(crate) fn type_line(s: &mut PtySession, text: &str) {
    ok(s.send(text.as_bytes()));
    ok(s.send(b"\r"));
}

/// Ctrl+D on an empty editor: exit 0 with the terminal restored.
pub(crate) fn quit(s: &mut PtySession) -> String {
    ok(s.send(b"\x04"));
    assert_eq!(ok(s.wait_exit(WAIT)), 0, "{}", s.model().screen_text());
    let m = s.model();
    assert!(!m.bracketed_paste(), "bracketed paste left on");
    assert!(!m.cursor_hidden(), "cursor left hidden");
    assert!(!m.alternate_screen());
    m.all_lines().join("\n")
}

pub(crate) fn assert_once(m: &mut ScreenModel, line: &str) {
    let n = m.all_lines().iter().filter(|l| l.trim() == line).count();
    assert_eq!(n, 1, "{line:?} {n} times in:\n{}", m.all_lines().join("\n"));
}

pub(crate) async fn server(replies: Vec<Reply>) -> ReplayHandle {
    ReplayServer::start(replies).await.unwrap().1
}

/// The user texts of the `n`-th recorded request.
pub(crate) fn request_user_texts(server: &ReplayHandle, n: usize) -> Vec<String> {
    let body = server.requests()[n].body_json().unwrap();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| match &m["content"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str().map(str::to_owned))
                .collect(),
            _ => vec![],
        })
        .collect()
}
