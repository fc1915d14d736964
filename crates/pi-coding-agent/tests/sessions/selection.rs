//! Command-line session selection gaps through the `pi` binary (pi 0.85.0 `main.ts`
//! `createSessionManager`): a `--session <id>` found only in another project (confirm on stderr,
//! answer on stdin, fork or `Aborted.`; pi takes stdout over in every non-interactive mode, so its
//! `console.log` question lands on stderr), `--fork` with `--session-id`, and a resumed session
//! whose stored cwd no longer exists.

use std::path::{Path, PathBuf};

use pi_ai::testkit::ReplayServer;
use serde_json::{Value, json};

use crate::support;
use support::replay_env::Env;

use support::anthropic_sse::anthropic_text as answer;

/// Writes a session `id` of project `cwd` with one user message into `dir`.
fn write_session(dir: &Path, id: &str, cwd: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl"));
    let header = json!({"type":"session","version":3,"id":id,"timestamp":"2026-01-01T00:00:00.000Z","cwd":cwd});
    let user = json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",
        "message":{"role":"user","content":"old question","timestamp":1767225601000u64}});
    std::fs::write(&path, format!("{header}\n{user}\n")).unwrap();
    path
}

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const PROMPT: &str = "Session found in different project: /elsewhere\nFork this session into current directory? [y/N] ";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_projects_session_is_forked_here_after_yes() {
    let (_, server) = ReplayServer::start(vec![answer("forked answer")])
        .await
        .unwrap();
    let env = Env::new(&server.base_url());
    let src = write_session(
        &env.path("agent/sessions/--elsewhere--"),
        "abc12345",
        "/elsewhere",
    );
    let (code, out, err) = env.run_in(&["-p", "--session", "abc1", "hi"], "Yes\n");
    assert_eq!((code, err), (0, PROMPT.to_owned()));
    // Difference: pi 0.85.0 ends this run silently after the fork (exit 0, nothing on stdout,
    // no prompt or answer in the fork); pi-rs runs the prompt in the fork and answers.
    assert_eq!(out, "forked answer\n");
    // The fork lives in this project's default directory and names its parent.
    let here = env.here();
    let files = Env::files(&here);
    assert_eq!(files.len(), 1, "{here:?}");
    let recs = records(&files[0]);
    assert_eq!(recs[0]["parentSession"], src.display().to_string());
    assert_eq!(recs[0]["cwd"], env.work().display().to_string());
    assert_ne!(recs[0]["id"], "abc12345");
    let body = server.requests()[0].body_json().unwrap();
    let users: Vec<&Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .collect();
    assert_eq!(users.len(), 2, "the old question and `hi`");
    // The source is untouched.
    assert_eq!(records(&src).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_projects_session_is_refused_on_no_or_end_of_input() {
    let env = Env::new("http://127.0.0.1:9");
    write_session(
        &env.path("agent/sessions/--elsewhere--"),
        "abc12345",
        "/elsewhere",
    );
    for input in ["n\n", "", "maybe\n"] {
        let (code, out, err) = env.run_in(&["-p", "--session", "abc12345", "hi"], input);
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (0, "", format!("{PROMPT}Aborted.\n").as_str()),
            "{input:?}"
        );
    }
    assert!(Env::files(&env.here()).is_empty(), "nothing is forked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_takes_the_session_id_and_refuses_an_existing_one() {
    let (_, server) = ReplayServer::start(vec![answer("A")]).await.unwrap();
    let env = Env::new(&server.base_url());
    let dir = env.path("sessions");
    let src = write_session(&dir, "source-id", &env.work().display().to_string());
    let dir_s = dir.display().to_string();
    let src_s = src.display().to_string();
    let args = [
        "-p",
        "--session-dir",
        &dir_s,
        "--fork",
        &src_s,
        "--session-id",
        "my-fork",
        "q",
    ];
    let (code, out, err) = env.run_in(&args, "");
    assert_eq!((code, out.as_str(), err.as_str()), (0, "A\n", ""));
    let fork = Env::files(&dir)
        .into_iter()
        .find(|f| f.to_string_lossy().ends_with("_my-fork.jsonl"))
        .unwrap();
    let header = &records(&fork)[0];
    assert_eq!(header["id"], "my-fork");
    assert_eq!(header["parentSession"], src_s.as_str());

    let (code, out, err) = env.run_in(&args, "");
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (1, "", "Session already exists with id 'my-fork'\n")
    );
    assert_eq!(Env::files(&dir).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_stored_cwd_is_gone_is_refused() {
    let env = Env::new("http://127.0.0.1:9");
    // In this project's default directory every file counts as this project's.
    let src = write_session(&env.here(), "gone-cwd", "/no/such/dir");
    let expected = format!(
        "Stored session working directory does not exist: /no/such/dir\nSession file: {}\nCurrent working directory: {}\n",
        src.display(),
        env.work().display()
    );
    for args in [
        vec!["-p", "--session", src.to_str().unwrap(), "hi"],
        vec!["--mode", "json", "--session", "gone", "hi"],
    ] {
        let (code, out, err) = env.run_in(&args, "");
        assert_eq!(
            (code, out.as_str(), err.as_str()),
            (1, "", expected.as_str()),
            "{args:?}"
        );
    }
    // Observed on pi 0.85.0: `--continue` runs that session in the current cwd (no refusal);
    // here the request then fails (no server; retries off).
    std::fs::write(
        env.path("agent/settings.json"),
        r#"{"retry":{"enabled":false}}"#,
    )
    .unwrap();
    let (code, _, err) = env.run_in(&["-p", "--continue", "hi"], "");
    assert_eq!((code, err.as_str()), (1, "Connection error.\n"));
    assert!(std::fs::read_to_string(&src).unwrap().contains("\"hi\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_session_dir_keeps_projects_apart() {
    let (_, server) = ReplayServer::start(vec![answer("continued"), answer("fresh")])
        .await
        .unwrap();
    let env = Env::new(&server.base_url());
    let shared = env.path("sessions");
    let shared_s = shared.display().to_string();
    let here = env.work().display().to_string();
    let mine = write_session(&shared, "mine-1", &here);
    let theirs = write_session(&shared, "theirs-1", "/elsewhere");
    // The other project's file is the newest one.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .append(true)
        .open(&theirs)
        .unwrap()
        .set_modified(later)
        .unwrap();

    // --continue picks this project's session, not the newest file of the directory.
    let (code, out, _) = env.run_in(&["-p", "--session-dir", &shared_s, "--continue", "q"], "");
    assert_eq!((code, out.as_str()), (0, "continued\n"));
    let last = records(&mine).pop().unwrap();
    assert_eq!(last["message"]["content"][0]["text"], "continued");
    assert_eq!(records(&theirs).len(), 2);

    // The same directory through the environment: the other project's id is "another
    // project" (asked about), and `--session-id` of it is not this project's.
    let mut cmd_env = vec![("PI_CODING_AGENT_SESSION_DIR", shared_s.as_str())];
    let (code, out, err) =
        env.run_in_with_env(&["-p", "--session", "theirs", "q"], "n\n", &cmd_env);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "", format!("{PROMPT}Aborted.\n").as_str())
    );
    cmd_env.push(("PI_OFFLINE", "1"));
    let (code, out, err) =
        env.run_in_with_env(&["-p", "--session-id", "theirs-1", "q"], "", &cmd_env);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "fresh\n");
    assert!(
        err.starts_with("Warning: No project session found with id 'theirs-1'"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_session_takes_the_session_id_and_writes_nothing() {
    let (_, server) = ReplayServer::start(vec![answer("A")]).await.unwrap();
    let env = Env::new(&server.base_url());
    let (code, out, err) = env.run_in(
        &[
            "--mode",
            "json",
            "--no-session",
            "--session-id",
            "mem-id",
            "q",
        ],
        "",
    );
    assert_eq!((code, err.as_str()), (0, ""));
    let header: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(
        (header["type"].as_str(), header["id"].as_str()),
        (Some("session"), Some("mem-id"))
    );
    assert!(Env::files(&env.here()).is_empty());
}
