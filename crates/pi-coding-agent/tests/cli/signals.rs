//! Terminating signals through the `pi` binary (pi 0.85.0):
//! SIGTERM → exit 143, SIGHUP → exit 129, both after killing the bash tool's process group;
//! SIGINT → the same clean-up, then the process dies of SIGINT (the reference leaves bash
//! children running there; pi-rs does not). Nothing is printed after a signal, and the
//! session file holds only complete records.
//!
//! Real processes and a real local replay server: one stalls before answering, the other
//! makes the model call `bash` with a long `sleep` whose pid the test reads back.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use pi_ai::testkit::{ReplayHandle, ReplayServer, Reply};
use serde_json::{Value, json};

struct Run {
    root: tempfile::TempDir,
    work: PathBuf,
    sessions: PathBuf,
    child: Child,
    _server: ReplayHandle,
}

fn write_agent_dir(root: &Path, base_url: &str) {
    let agent = root.join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    let models = json!({"providers": {"replay-anthropic": {
        "baseUrl": base_url, "api": "anthropic-messages", "apiKey": "replay-test-key",
        "models": [{"id": "replay-model", "reasoning": false, "contextWindow": 128000, "maxTokens": 16384}]
    }}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    // No retries: a stalled or failed request must not be retried behind the test's back.
    std::fs::write(
        agent.join("settings.json"),
        r#"{"retry": {"enabled": false}}"#,
    )
    .unwrap();
}

/// Starts pi in json mode against a replay server with `script`.
async fn start(script: Vec<Reply>) -> Run {
    let (_, server) = ReplayServer::start(script).await.unwrap();
    let root = tempfile::tempdir().unwrap();
    write_agent_dir(root.path(), &server.base_url());
    let work = root.path().join("work");
    let sessions = root.path().join("sessions");
    for d in [&work, &root.path().join("home"), &root.path().join("tmp")] {
        std::fs::create_dir_all(d).unwrap();
    }
    let child = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["-p", "--mode", "json", "--session-dir"])
        .arg(&sessions)
        .args([
            "--provider",
            "replay-anthropic",
            "--model",
            "replay-model",
            "go",
        ])
        .current_dir(&work)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", root.path().join("home"))
        .env("TMPDIR", root.path().join("tmp"))
        .env("PI_CODING_AGENT_DIR", root.path().join("agent"))
        .env("PI_OFFLINE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Run {
        root,
        work,
        sessions,
        child,
        _server: server,
    }
}

/// Polls `ready` every 20 ms; panics after 30 s (a hung binary, not a slow one).
async fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn send(child: &Child, sig: i32) {
    // SAFETY: signalling our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

struct Finished {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Waits for pi; the temp root lives as long as the returned handle.
fn finish(run: Run) -> (Finished, tempfile::TempDir, PathBuf) {
    let out = run.child.wait_with_output().unwrap();
    (
        Finished {
            status: out.status,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        },
        run.root,
        run.sessions,
    )
}

fn assert_exit(f: &Finished, sig: i32) {
    match sig {
        libc::SIGTERM => assert_eq!(f.status.code(), Some(143), "{:?}", f.status),
        libc::SIGHUP => assert_eq!(f.status.code(), Some(129), "{:?}", f.status),
        _ => assert_eq!(f.status.signal(), Some(sig), "{:?}", f.status),
    }
    assert_eq!(f.stderr, "", "nothing is printed after a signal");
    let types: Vec<String> = f
        .stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("complete json lines only");
            v["type"].as_str().unwrap_or_default().to_owned()
        })
        .collect();
    assert_eq!(types.first().map(String::as_str), Some("session"));
    assert!(!types.iter().any(|t| t == "agent_settled"), "{types:?}");
}

/// Every line of every session file parses (appends were not cut).
fn assert_complete_session_files(dir: &Path) -> Vec<Value> {
    let mut records = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        assert!(text.is_empty() || text.ends_with('\n'), "{text}");
        for line in text.lines() {
            records.push(serde_json::from_str(line).expect("a complete record"));
        }
    }
    records
}

async fn stalled_request(sig: i32) {
    let run = start(vec![Reply::stall_before_headers()]).await;
    let server = &run._server;
    wait_until("the request", || server.request_count() == 1).await;
    send(&run.child, sig);
    let (f, _root, sessions) = finish(run);
    assert_exit(&f, sig);
    // The session file is written at the first assistant message: none arrived.
    assert!(assert_complete_session_files(&sessions).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_stalled_request_exits_143() {
    stalled_request(libc::SIGTERM).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_during_a_stalled_request_exits_129() {
    stalled_request(libc::SIGHUP).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_during_a_stalled_request_dies_of_the_signal() {
    stalled_request(libc::SIGINT).await;
}

/// An Anthropic reply calling `bash` with `command`.
fn bash_call(command: &str) -> Reply {
    let input = serde_json::to_string(&json!({ "command": command })).unwrap();
    let events = [
        json!({"type":"message_start","message":{"id":"msg_sig","type":"message","role":"assistant","model":"replay-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_sig","name":"bash","input":{}}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":input}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5}}),
        json!({"type":"message_stop"}),
    ];
    let mut body = String::new();
    for e in events {
        body.push_str(&format!(
            "event: {}\ndata: {e}\n\n",
            e["type"].as_str().unwrap()
        ));
    }
    Reply::sse(body)
}

fn process_alive(pid: i32) -> bool {
    // A zombie (state Z) is dead; no /proc entry is dead.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

async fn running_sleep(sig: i32) {
    let run = start(vec![bash_call("sleep 300 & echo $! > sleep.pid; wait")]).await;
    let pid_file = run.work.join("sleep.pid");
    wait_until("the sleep pid", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n'))
    })
    .await;
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(process_alive(pid));
    send(&run.child, sig);
    let (f, _root, sessions) = finish(run);
    assert_exit(&f, sig);
    // Events are written as they happen, not at the end.
    assert!(
        f.stdout.contains(r#""type":"tool_execution_start""#),
        "{}",
        f.stdout
    );
    wait_until("the sleep to be killed", || !process_alive(pid)).await;
    // The assistant's tool call was stored before the tool ran; nothing after it.
    let records = assert_complete_session_files(&sessions);
    let roles: Vec<&str> = records
        .iter()
        .filter_map(|r| r["message"]["role"].as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant"], "{records:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_kills_a_running_bash_sleep_and_exits_143() {
    running_sleep(libc::SIGTERM).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_kills_a_running_bash_sleep_and_exits_129() {
    running_sleep(libc::SIGHUP).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_kills_a_running_bash_sleep_then_dies_of_the_signal() {
    running_sleep(libc::SIGINT).await;
}
