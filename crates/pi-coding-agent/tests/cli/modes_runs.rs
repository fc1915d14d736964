//! Print and json modes through the `pi` binary beyond the conformance scenarios: session
//! selection (`--continue`, `--session <id>`, `--fork`, `--session-id`, `--no-session`,
//! `--name`), several messages as successive prompts, text mode's failure output, json mode's
//! exit status on a failed assistant, and start-up errors.

use std::path::Path;
use std::process::{Command, Stdio};

use pi_ai::testkit::{ReplayServer, Reply};
use serde_json::{Value, json};

use crate::support::replay_env::Env;

/// An Anthropic reply with one text block.
fn answer(text: &str) -> Reply {
    let events = [
        json!({"type":"message_start","message":{"id":"msg_x","type":"message","role":"assistant","model":"replay-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
        json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}),
        json!({"type":"content_block_stop","index":0}),
        json!({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}),
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

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The user texts of a recorded Anthropic request body.
fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            c => c[0]["text"].as_str().unwrap_or_default().to_owned(),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_messages_are_successive_prompts_and_text_mode_prints_the_last_answer() {
    let (_, server) = ReplayServer::start(vec![answer("first"), answer("second")])
        .await
        .unwrap();
    let env = Env::new(&server.base_url());
    let (code, stdout, stderr) = env.run(&["-p", "--no-session", "one", "two"]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (0, "second\n", "")
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        user_texts(&requests[1].body_json().unwrap()),
        ["one", "two"]
    );
    assert!(
        env.session_files().is_empty(),
        "--no-session writes nothing"
    );
}

/// Observed on pi 0.85.0: an empty first message is not sent (`if (initialMessage)`): `-p ""`
/// makes no request and prints nothing; `-p "" second` sends only `second`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_first_message_is_not_sent() {
    let (_, server) = ReplayServer::start(vec![answer("only")]).await.unwrap();
    let env = Env::new(&server.base_url());
    let (code, stdout, stderr) = env.run(&["-p", "--no-session", ""]);
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "", ""));
    assert_eq!(server.request_count(), 0);
    let (code, stdout, _) = env.run(&["-p", "--no-session", "", "second"]);
    assert_eq!((code, stdout.as_str()), (0, "only\n"));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(user_texts(&requests[0].body_json().unwrap()), ["second"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_mode_writes_a_failed_answer_to_stderr_and_exits_1_json_mode_exits_0() {
    let fail = || {
        Reply::json(
            400,
            &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad request"}}),
        )
    };
    let (_, server) = ReplayServer::start(vec![fail(), fail()]).await.unwrap();
    let env = Env::new(&server.base_url());
    let (code, stdout, stderr) = env.run(&["-p", "--no-session", "hi"]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert!(stderr.contains("bad request"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");

    let (code, stdout, stderr) = env.run(&["--mode", "json", "--no-session", "hi"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "agent_settled");
    let end = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "agent_end")
        .unwrap();
    assert_eq!(end["messages"][1]["stopReason"], "error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_session_and_fork_pick_the_right_files() {
    let (_, server) =
        ReplayServer::start(vec![answer("A1"), answer("A2"), answer("A3"), answer("A4")])
            .await
            .unwrap();
    let env = Env::new(&server.base_url());
    let dir = env.sessions();

    // A named session with a chosen id.
    let (code, out, err) = env.run(&[
        "-p",
        "--session-dir",
        &dir,
        "--session-id",
        "first-session",
        "--name",
        "  My session ",
        "q1",
    ]);
    assert_eq!((code, out.as_str()), (0, "A1\n"));
    assert!(err.starts_with("Warning: No project session found with id 'first-session'"));
    let files = env.session_files();
    assert_eq!(files.len(), 1);
    assert!(files[0].to_string_lossy().ends_with("_first-session.jsonl"));
    let first = records(&files[0]);
    assert_eq!(first[0]["id"], "first-session");
    assert!(
        first
            .iter()
            .any(|r| r["type"] == "session_info" && r["name"] == "My session"),
        "{first:?}"
    );

    // --continue appends to it and sends its history.
    let (code, out, _) = env.run(&["-p", "--session-dir", &dir, "--continue", "q2"]);
    assert_eq!((code, out.as_str()), (0, "A2\n"));
    assert_eq!(env.session_files().len(), 1);
    let body = server.requests()[1].body_json().unwrap();
    assert_eq!(user_texts(&body), ["q1", "q2"]);

    // --session by id prefix opens the same file.
    let (code, out, _) = env.run(&["-p", "--session-dir", &dir, "--session", "first", "q3"]);
    assert_eq!((code, out.as_str()), (0, "A3\n"));
    assert_eq!(
        user_texts(&server.requests()[2].body_json().unwrap()),
        ["q1", "q2", "q3"]
    );

    // --fork copies it into a new file that names its parent.
    let src = files[0].display().to_string();
    let (code, out, _) = env.run(&["-p", "--session-dir", &dir, "--fork", &src, "q4"]);
    assert_eq!((code, out.as_str()), (0, "A4\n"));
    let files = env.session_files();
    assert_eq!(files.len(), 2);
    let forked = files
        .iter()
        .find(|f| f.as_path() != Path::new(&src))
        .unwrap();
    let header = &records(forked)[0];
    assert_eq!(header["parentSession"], src.as_str());
    assert_ne!(header["id"], "first-session");
    assert_eq!(
        records(&files[0]).len(),
        first.len() + 4,
        "two more exchanges"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_session_id_is_a_startup_error() {
    let env = Env::new("http://127.0.0.1:9");
    let (code, out, err) = env.run(&[
        "-p",
        "--session-dir",
        &env.sessions(),
        "--session",
        "nope",
        "hi",
    ]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (1, "", "No session found matching 'nope'\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_session_id_warns_and_a_missing_session_wins_over_a_bad_model() {
    let (_, server) = ReplayServer::start(vec![answer("ok")]).await.unwrap();
    let env = Env::new(&server.base_url());
    let (code, out, err) = env.run(&[
        "-p",
        "--session-dir",
        &env.sessions(),
        "--session-id",
        "brand-new",
        "hi",
    ]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            0,
            "ok\n",
            "Warning: No project session found with id 'brand-new'; creating a new session with that id.\n"
        )
    );
    let (code, _, err) = env.run(&[
        "-p",
        "--session-dir",
        &env.sessions(),
        "--model",
        "nothing/x",
        "--session",
        "nope",
        "hi",
    ]);
    assert_eq!(
        (code, err.as_str()),
        (1, "No session found matching 'nope'\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_model_is_a_startup_error_before_any_output() {
    let env = Env::new("http://127.0.0.1:9");
    let out = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["--mode", "json", "--model", "replay-x/nothing", "hi"])
        .current_dir(env.path("work"))
        .env_clear()
        .env("HOME", env.path("home"))
        .env("PI_CODING_AGENT_DIR", env.path("agent"))
        .env("PI_OFFLINE", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "Error: Model \"replay-x/nothing\" not found. Use --list-models to see available models.\n"
    );
}

#[test]
fn a_fresh_machine_gets_pis_no_key_line_and_our_help() {
    let root = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["-p", "hello"])
        .current_dir(root.path())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", root.path())
        .env("PI_CODING_AGENT_DIR", root.path().join("agent"))
        .env("PI_OFFLINE", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .unwrap();
    let (readme, providers) = (repo.join("README.md"), repo.join("docs/providers.md"));
    assert!(readme.is_file() && providers.is_file());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "No API key found for the selected model.\n\nSet the provider's API key in the environment (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY) or pass --api-key, or add a local OpenAI-compatible server (Ollama, llama.cpp, vLLM) to models.json. See:\n  {}\n  {}\n",
            readme.display(),
            providers.display()
        )
    );
}
