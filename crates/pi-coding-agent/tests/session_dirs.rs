//! Where `pi -p` keeps and looks up sessions, through the real binary against the test kit's
//! replay server. Each expectation was observed on pi 0.85.0 (`main.js` session selection and
//! `SessionManager.continueRecent` / `list`): `PI_CODING_AGENT_SESSION_DIR` sits between
//! `--session-dir` and settings `sessionDir`, and a directory other than this project's default
//! one may hold several projects' sessions, so `--continue` and `--session-id` only consider
//! sessions whose header `cwd` is the current directory.

mod support {
    pub mod conformance;
}

use std::path::{Path, PathBuf};

use pi_ai::testkit::{ReplayServer, Reply};
use serde_json::json;
use support::conformance::data_dir;
use support::conformance::run::{models_json, pi_env};

/// A temp root (`agent`, `home`, `tmp`, `work`) whose models.json points at a replay server.
struct Root {
    dir: tempfile::TempDir,
}

impl Root {
    fn new(base_url: &str) -> Root {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["agent", "home", "tmp", "work"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        std::fs::write(
            dir.path().join("agent/models.json"),
            serde_json::to_string(&models_json(base_url)).unwrap(),
        )
        .unwrap();
        Root { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn work(&self) -> PathBuf {
        self.path().join("work")
    }

    /// `pi -p --provider replay-openai --model replay-model <args> hi`; returns (code, stderr).
    async fn run(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
        let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_pi"))
            .args([
                "-p",
                "--provider",
                "replay-openai",
                "--model",
                "replay-model",
            ])
            .args(args)
            .arg("hi")
            .current_dir(self.work())
            .env_clear()
            .envs(pi_env(&self.path(), &json!({})))
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code().unwrap_or(-1), stderr)
    }
}

async fn server(runs: usize) -> pi_ai::testkit::ReplayHandle {
    let sse = std::fs::read(data_dir().join("text_openai_completions/01-text.sse")).unwrap();
    let replies = (0..runs).map(|_| Reply::sse(sse.clone())).collect();
    ReplayServer::start(replies).await.unwrap().1
}

/// A session file of another project (`cwd` `/elsewhere`) with `id`.
fn foreign_session(dir: &Path, id: &str) -> (PathBuf, String) {
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\
         \"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/elsewhere\"}}\n"
    );
    let path = dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl"));
    std::fs::write(&path, &text).unwrap();
    (path, text)
}

fn session_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn header_of(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

#[tokio::test]
async fn the_session_dir_environment_variable_is_used_and_the_flag_wins() {
    let handle = server(2).await;
    let root = Root::new(&handle.base_url());
    let env_dir = root.path().join("env-sessions");
    let env_dir_arg = env_dir.display().to_string();
    let env = [("PI_CODING_AGENT_SESSION_DIR", env_dir_arg.as_str())];

    assert_eq!(root.run(&[], &env).await.0, 0);
    let files = session_files(&env_dir);
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(
        header_of(&files[0])["cwd"],
        root.work().display().to_string()
    );
    assert!(!root.path().join("agent/sessions").exists());

    let flag_dir = root.path().join("flag-sessions");
    let flag_dir_arg = flag_dir.display().to_string();
    assert_eq!(root.run(&["--session-dir", &flag_dir_arg], &env).await.0, 0);
    assert_eq!(session_files(&flag_dir).len(), 1);
    assert_eq!(session_files(&env_dir).len(), 1);
}

#[tokio::test]
async fn continue_in_a_shared_dir_skips_other_projects_sessions() {
    let handle = server(2).await;
    let root = Root::new(&handle.base_url());
    let dir = root.path().join("shared");
    let dir_arg = dir.display().to_string();
    let (foreign, text) = foreign_session(&dir, "other-project");

    assert_eq!(root.run(&["--session-dir", &dir_arg, "-c"], &[]).await.0, 0);
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), text);
    let files = session_files(&dir);
    assert_eq!(files.len(), 2, "{files:?}");
    let own = files.iter().find(|f| **f != foreign).unwrap();
    assert_eq!(header_of(own)["cwd"], root.work().display().to_string());

    // The second -c continues this project's session, still not the foreign one.
    let before = std::fs::read_to_string(own).unwrap();
    assert_eq!(root.run(&["--session-dir", &dir_arg, "-c"], &[]).await.0, 0);
    assert_eq!(session_files(&dir).len(), 2);
    assert!(std::fs::read_to_string(own).unwrap().len() > before.len());
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), text);
}

#[tokio::test]
async fn session_id_in_a_shared_dir_ignores_other_projects_sessions() {
    let handle = server(1).await;
    let root = Root::new(&handle.base_url());
    let dir = root.path().join("shared");
    let dir_arg = dir.display().to_string();
    let (foreign, text) = foreign_session(&dir, "xyz");

    let (code, stderr) = root
        .run(&["--session-dir", &dir_arg, "--session-id", "xyz"], &[])
        .await;
    assert_eq!(code, 0);
    assert_eq!(
        stderr,
        "Warning: No project session found with id 'xyz'; creating a new session with that id.\n"
    );
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), text);
    let files = session_files(&dir);
    assert_eq!(files.len(), 2, "{files:?}");
    let own = files.iter().find(|f| **f != foreign).unwrap();
    assert_eq!(header_of(own)["id"], "xyz");
    assert_eq!(header_of(own)["cwd"], root.work().display().to_string());
}
