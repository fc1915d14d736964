//! Summarization retry through the real `pi` binary in json mode: the
//! `compaction_auto` scenario (a read round trip whose answer reports 120 000 input tokens,
//! `keepRecentTokens: 10`) with the summary request answered `529 overloaded` once. The
//! retry events appear between `compaction_start` and `compaction_end`, with pi's exact JSON,
//! and the retried request is the same request.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use pi_ai::testkit::{ReplayServer, Reply};
use serde_json::{Value, json};

fn scenario_file(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/conformance/compaction_auto")
        .join(name);
    std::fs::read(path).unwrap()
}

/// An isolated root: `agent/` (models.json, settings.json), `home/`, `tmp/`, `work/`,
/// `sessions/`.
fn sandbox(base_url: &str, settings: Value) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for d in ["agent", "home", "tmp", "work", "sessions"] {
        std::fs::create_dir_all(root.path().join(d)).unwrap();
    }
    let models = json!({"providers": {"replay-anthropic": {
        "baseUrl": base_url, "api": "anthropic-messages", "apiKey": "replay-test-key",
        "models": [{"id": "replay-model", "reasoning": false, "contextWindow": 128000,
                    "maxTokens": 16384,
                    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}]
    }}});
    std::fs::write(root.path().join("agent/models.json"), models.to_string()).unwrap();
    std::fs::write(
        root.path().join("agent/settings.json"),
        settings.to_string(),
    )
    .unwrap();
    std::fs::write(
        root.path().join("work/hello.txt"),
        "Hello from the scratch dir!\nSecond line.\n",
    )
    .unwrap();
    root
}

/// Runs `pi -p --mode json` with the replay model in `root`; `(exit code, stdout lines)`.
async fn run_json(root: &Path, prompt: &str) -> (i32, Vec<Value>) {
    let sessions: PathBuf = root.join("sessions");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["-p", "--mode", "json", "--session-dir"])
        .arg(&sessions)
        .args([
            "--provider",
            "replay-anthropic",
            "--model",
            "replay-model",
            prompt,
        ])
        .current_dir(root.join("work"))
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", root.join("home"))
        .env("TMPDIR", root.join("tmp"))
        .env("PI_CODING_AGENT_DIR", root.join("agent"))
        .env("PI_OFFLINE", "1")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (out.status.code().unwrap_or(-1), lines)
}

const OVERLOADED: &str =
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_summary_answered_529_once_is_retried_with_the_three_events() {
    let overloaded: Value = serde_json::from_str(OVERLOADED).unwrap();
    let (_addr, server) = ReplayServer::start(vec![
        Reply::sse(scenario_file("01-tool-use.sse")),
        Reply::sse(scenario_file("02-big-usage.sse")),
        Reply::json(529, &overloaded),
        Reply::sse(scenario_file("03-summary.sse")),
    ])
    .await
    .unwrap();
    let root = sandbox(
        &server.base_url(),
        json!({"retry": {"baseDelayMs": 20}, "compaction": {"keepRecentTokens": 10}}),
    );
    let (code, lines) = run_json(root.path(), "What does hello.txt say?").await;
    assert_eq!(code, 0);

    // From the end of the run on, in order.
    let from = lines
        .iter()
        .position(|l| l["type"] == "agent_end")
        .expect("agent_end");
    let types: Vec<&str> = lines[from..]
        .iter()
        .map(|l| l["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "agent_end",
            "compaction_start",
            "summarization_retry_scheduled",
            "summarization_retry_attempt_start",
            "summarization_retry_finished",
            "compaction_end",
            "agent_settled"
        ]
    );
    // The exact records pi writes (the Anthropic SDK's `<status> <body>` error text).
    assert_eq!(
        lines[from + 2],
        json!({"type": "summarization_retry_scheduled", "attempt": 1, "maxAttempts": 3,
               "delayMs": 20, "errorMessage": format!("529 {OVERLOADED}")})
    );
    assert_eq!(
        lines[from + 3],
        json!({"type": "summarization_retry_attempt_start", "source": "compaction",
               "reason": "threshold"})
    );
    assert_eq!(
        lines[from + 4],
        json!({"type": "summarization_retry_finished"})
    );
    let end = &lines[from + 5];
    assert_eq!(end["reason"], "threshold");
    assert_eq!(end["aborted"], false);
    assert_eq!(end["willRetry"], false);
    assert!(end.get("errorMessage").is_none(), "{end}");
    // The summary is the one the successful attempt returned; the failed attempt's usage is
    // not counted.
    assert!(
        end["result"]["summary"]
            .as_str()
            .unwrap()
            .starts_with("No prior history.\n\n---\n\n**Turn Context (split turn):**\n\n## Goal"),
        "{end}"
    );
    assert_eq!(end["result"]["usage"]["input"], 500);
    assert_eq!(
        end["result"]["details"],
        json!({"readFiles": ["hello.txt"], "modifiedFiles": []})
    );

    // The retried request is the failed one again.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let body = |i: usize| serde_json::from_slice::<Value>(&requests[i].body).unwrap();
    assert_eq!(body(2), body(3));
    assert_eq!(body(3)["max_tokens"], 8192);

    // One compaction entry in the session file.
    let file = std::fs::read_dir(root.path().join("sessions"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let compactions = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""type":"compaction""#))
        .count();
    assert_eq!(compactions, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_retry_disabled_the_529_fails_the_compaction_without_retry_events() {
    let overloaded: Value = serde_json::from_str(OVERLOADED).unwrap();
    let (_addr, server) = ReplayServer::start(vec![
        Reply::sse(scenario_file("01-tool-use.sse")),
        Reply::sse(scenario_file("02-big-usage.sse")),
        Reply::json(529, &overloaded),
    ])
    .await
    .unwrap();
    let root = sandbox(
        &server.base_url(),
        json!({"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 10}}),
    );
    let (code, lines) = run_json(root.path(), "What does hello.txt say?").await;
    assert_eq!(code, 0);
    assert!(
        !lines.iter().any(|l| l["type"]
            .as_str()
            .unwrap()
            .starts_with("summarization_retry")),
        "{lines:?}"
    );
    let end = lines
        .iter()
        .find(|l| l["type"] == "compaction_end")
        .unwrap();
    assert_eq!(
        end,
        &json!({"type": "compaction_end", "reason": "threshold", "aborted": false,
                "willRetry": false,
                "errorMessage": format!("Auto-compaction failed: Turn prefix summarization failed: 529 {OVERLOADED}")})
    );
    assert_eq!(server.requests().len(), 3);
}
