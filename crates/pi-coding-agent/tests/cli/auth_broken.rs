//! A broken `auth.json` through the `pi` binary: pi 0.85.0's credential
//! store fails every read of a file that is not JSON, so every run that looks a key up fails
//! with `Credential store read failed for <provider>: <JSON.parse message>` — also when the
//! key would come from `models.json` or the environment — in print, json and rpc mode;
//! `--api-key` bypasses the store; `--list-models` warns and exits 1. The file is never
//! rewritten. (Checked against the TypeScript pi with `PI_RIG_BIN`.)

use crate::support;

use std::process::Stdio;

use pi_ai::testkit::ReplayServer;
use serde_json::{Value, json};
use support::anthropic_sse::anthropic_text;
use support::binary_rig::{KEY, RUN_LIMIT, Rig, models_json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A truncated `auth.json` and V8's `JSON.parse` message for it (pi 0.85.0 prints exactly
/// this after `Credential store read failed for <provider>: `).
const BROKEN: &str = r#"{"anthropic": {"type":"api_key","key":"sk-x""#;
const BROKEN_MESSAGE: &str =
    "Expected ',' or '}' after property value in JSON at position 44 (line 1 column 45)";

/// A root whose `models.json` points every provider (and the built-in `anthropic`) at
/// `base_url`, with `auth.json` holding `auth`.
fn rig(base_url: &str, auth: &str) -> Rig {
    let mut models = models_json(base_url, Some(KEY));
    models["providers"]["anthropic"] = json!({"baseUrl": base_url});
    let rig = Rig::with_models(&models, &json!({"retry": {"enabled": false}}));
    std::fs::write(rig.path("agent/auth.json"), auth).unwrap();
    rig
}

fn store_error(provider: &str, message: &str) -> String {
    format!("Credential store read failed for {provider}: {message}")
}

/// The `auth.json` is byte for byte what the test wrote.
fn assert_untouched(rig: &Rig, auth: &str) {
    assert_eq!(
        std::fs::read_to_string(rig.path("agent/auth.json")).unwrap(),
        auth,
        "auth.json must never be rewritten"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_fails_even_with_a_models_json_or_environment_key() {
    let (_, server) = ReplayServer::start(vec![]).await.unwrap();
    let mut rig = rig(&server.base_url(), BROKEN);
    rig.env
        .push(("ANTHROPIC_API_KEY".into(), "sk-ant-env".into()));
    for (provider, model) in [
        ("replay-anthropic", "replay-model"),
        ("anthropic", "claude-sonnet-4-5"),
    ] {
        let run = rig
            .run(&[
                "--no-session",
                "--provider",
                provider,
                "--model",
                model,
                "-p",
                "hi",
            ])
            .await;
        assert_eq!(run.code, 1, "{run:?}");
        assert_eq!(run.stdout, "", "{run:?}");
        assert_eq!(
            run.stderr,
            format!("{}\n", store_error(provider, BROKEN_MESSAGE))
        );
    }
    assert_eq!(server.request_count(), 0);
    assert_untouched(&rig, BROKEN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_prints_the_header_then_fails() {
    let (_, server) = ReplayServer::start(vec![]).await.unwrap();
    let auth = r#"{"openai": "#;
    let rig = rig(&server.base_url(), auth);
    let run = rig
        .run(&[
            "--no-session",
            "--provider",
            "replay-openai",
            "--model",
            "replay-model",
            "--mode",
            "json",
            "hi",
        ])
        .await;
    assert_eq!(run.code, 1, "{run:?}");
    let records = run.records();
    assert_eq!(records.len(), 1, "{run:?}");
    assert_eq!(records[0]["type"], "session");
    assert_eq!(
        run.stderr,
        format!(
            "{}\n",
            store_error("replay-openai", "Unexpected end of JSON input")
        )
    );
    assert_eq!(server.request_count(), 0);
    assert_untouched(&rig, auth);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpc_mode_refuses_the_prompt_and_keeps_serving() {
    let (_, server) = ReplayServer::start(vec![]).await.unwrap();
    let rig = rig(&server.base_url(), BROKEN);
    let mut cmd = rig.command(&[
        "--no-session",
        "--provider",
        "replay-anthropic",
        "--model",
        "replay-model",
        "--mode",
        "rpc",
    ]);
    cmd.stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(RUN_LIMIT, lines.next_line())
            .await
            .expect("rpc output stalled")
            .unwrap()
            .expect("rpc output ended early");
        serde_json::from_str(&line).unwrap()
    };
    stdin
        .write_all(b"{\"id\":\"1\",\"type\":\"prompt\",\"message\":\"hi\"}\n")
        .await
        .unwrap();
    assert_eq!(
        next().await,
        json!({"id": "1", "type": "response", "command": "prompt", "success": false,
               "error": store_error("replay-anthropic", BROKEN_MESSAGE)})
    );
    stdin
        .write_all(b"{\"id\":\"2\",\"type\":\"get_state\"}\n")
        .await
        .unwrap();
    let state = next().await;
    assert_eq!(state["id"], "2");
    assert_eq!(state["success"], true, "{state}");
    drop(stdin);
    let status = tokio::time::timeout(RUN_LIMIT, child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(server.request_count(), 0);
    assert_untouched(&rig, BROKEN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_flag_bypasses_the_store() {
    let (_, server) = ReplayServer::start(vec![anthropic_text("Fine.")])
        .await
        .unwrap();
    let rig = rig(&server.base_url(), BROKEN);
    let run = rig
        .run(&[
            "--no-session",
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--api-key",
            "sk-ant-flag",
            "-p",
            "hi",
        ])
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Fine.\n");
    assert_eq!(server.request_count(), 1);
    assert_untouched(&rig, BROKEN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_models_warns_and_fails() {
    let (_, server) = ReplayServer::start(vec![]).await.unwrap();
    let rig = rig(&server.base_url(), BROKEN);
    let run = rig.run(&["--list-models"]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stdout, "", "nothing is listed: {run:?}");
    assert!(
        run.stderr.starts_with(&format!(
            "Warning: errors loading models.json:\nAvailability refresh: {BROKEN_MESSAGE}\n"
        )),
        "{run:?}"
    );
    assert_untouched(&rig, BROKEN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_auth_json_is_an_empty_store() {
    // `parseStorageData` returns `{}` for empty content: the models.json key is used.
    let (_, server) = ReplayServer::start(vec![anthropic_text("Fine.")])
        .await
        .unwrap();
    let rig = rig(&server.base_url(), "");
    let run = rig
        .run(&[
            "--no-session",
            "--provider",
            "replay-anthropic",
            "--model",
            "replay-model",
            "-p",
            "hi",
        ])
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "Fine.\n");
}
