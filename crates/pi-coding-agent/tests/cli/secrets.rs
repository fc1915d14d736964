//! Secrets through the `pi` binary (the library level is `secrets.rs`): an
//! API key given by `models.json` (a literal, a `$VAR` template, a `!command`), the
//! provider's environment variable, `auth.json` or `--api-key` never appears in what pi-rs
//! writes — stdout (json and rpc records, print text), stderr (errors; tracing requested at
//! TRACE through `RUST_LOG` and `PI_LOG`, which the binary does not act on), the session
//! file or any other file it leaves behind — in json, print and rpc mode, on success and on
//! a 401. The replay server's request log carries the key exactly once, in the provider's
//! auth header (`x-api-key` for Anthropic), and nowhere else (URL, other headers, body).

use crate::support;

use std::path::Path;
use std::process::Stdio;

use pi_ai::testkit::{RecordedRequest, ReplayServer, Reply};
use serde_json::{Value, json};
use support::anthropic_sse::{anthropic_error, anthropic_text};
use support::binary_rig::{RUN_LIMIT, Rig, Run, models_json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Every secret of these tests contains this marker; nothing pi-rs writes may contain it.
const MARK: &str = "S3CR3T";

/// The model the built-in `anthropic` provider serves in these runs.
const BUILTIN_MODEL: &str = "claude-sonnet-4-5";

/// Where a key comes from.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// `models.json` `apiKey` literal.
    ModelsLiteral,
    /// `models.json` `apiKey: "$REPLAY_SECRET"` with the variable set.
    ModelsEnvTemplate,
    /// `models.json` `apiKey: "!printf …"`.
    ModelsCommand,
    /// `ANTHROPIC_API_KEY` for the built-in provider.
    ProviderEnv,
    /// `auth.json` `{"anthropic": {"type": "api_key", "key": …}}`.
    AuthJson,
    /// `--api-key`.
    Flag,
}

impl Source {
    /// The key this source yields.
    fn key(self) -> String {
        format!("sk-ant-api03-{MARK}-{self:?}")
    }

    /// A root whose configuration gives the key this way, and the `--provider`/`--model`
    /// (and `--api-key`) arguments selecting it.
    fn rig(self, base_url: &str) -> (Rig, Vec<String>) {
        let key = self.key();
        let settings = json!({"retry": {"enabled": false}});
        let custom = |api_key: &str| {
            let mut models = models_json(base_url, Some(api_key));
            models["providers"] = json!({
                "replay-anthropic": models["providers"]["replay-anthropic"].clone()
            });
            models
        };
        // The built-in provider with its base URL moved to the replay server.
        let builtin = json!({"providers": {"anthropic": {"baseUrl": base_url}}});
        let (models, provider, model) = match self {
            Source::ModelsLiteral => (custom(&key), "replay-anthropic", "replay-model"),
            Source::ModelsEnvTemplate => {
                (custom("$REPLAY_SECRET"), "replay-anthropic", "replay-model")
            }
            Source::ModelsCommand => (
                custom(&format!("!printf %s {key}")),
                "replay-anthropic",
                "replay-model",
            ),
            Source::ProviderEnv | Source::AuthJson | Source::Flag => {
                (builtin, "anthropic", BUILTIN_MODEL)
            }
        };
        let mut rig = Rig::with_models(&models, &settings);
        rig.env.push(("RUST_LOG".into(), "trace".into()));
        rig.env.push(("PI_LOG".into(), "trace".into()));
        rig.env.push(("RUST_BACKTRACE".into(), "1".into()));
        match self {
            Source::ModelsEnvTemplate => rig.env.push(("REPLAY_SECRET".into(), key.clone())),
            Source::ProviderEnv => rig.env.push(("ANTHROPIC_API_KEY".into(), key.clone())),
            Source::AuthJson => std::fs::write(
                rig.path("agent/auth.json"),
                json!({"anthropic": {"type": "api_key", "key": key}}).to_string(),
            )
            .unwrap(),
            _ => {}
        }
        let mut args: Vec<String> = ["--provider", provider, "--model", model]
            .map(String::from)
            .to_vec();
        if let Source::Flag = self {
            args.extend(["--api-key".into(), key]);
        }
        (rig, args)
    }
}

fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(MARK), "{what} leaks a secret:\n{text}");
}

/// Every file under `dir` except the configuration that holds the key by design.
fn assert_files_clean(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            assert_files_clean(&path);
        } else if !["auth.json", "models.json"]
            .iter()
            .any(|f| path.ends_with(Path::new("agent").join(f)))
        {
            let bytes = std::fs::read(&path).unwrap();
            assert_clean(
                &path.display().to_string(),
                &String::from_utf8_lossy(&bytes),
            );
        }
    }
}

/// The key reached the server once, in `x-api-key`, and nowhere else.
fn assert_sent_only_in_the_auth_header(request: &RecordedRequest, key: &str) {
    assert_eq!(request.header("x-api-key"), Some(key));
    for (name, value) in &request.headers {
        if name != "x-api-key" {
            assert_clean(&format!("request header {name}"), value);
        }
    }
    assert_clean("request path", &request.path);
    assert_clean("request query", &request.query);
    assert_clean("request body", &String::from_utf8_lossy(&request.body));
}

/// A 401 as Anthropic sends it.
fn unauthorized() -> Reply {
    anthropic_error(401, "authentication_error", "invalid x-api-key")
}

/// Writes one rpc command line.
async fn send(stdin: &mut tokio::process::ChildStdin, command: Value) {
    stdin
        .write_all(format!("{command}\n").as_bytes())
        .await
        .unwrap();
    stdin.flush().await.unwrap();
}

/// Drives `pi --mode rpc`: a prompt to `agent_settled`, then state, messages and stats
/// requests, then end of input. Returns everything printed.
async fn rpc_run(rig: &Rig, args: &[&str]) -> Run {
    let mut cmd = rig.command(args);
    cmd.stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stdout = String::new();
    send(
        &mut stdin,
        json!({"id": "p", "type": "prompt", "message": "hi"}),
    )
    .await;
    loop {
        let line = tokio::time::timeout(RUN_LIMIT, lines.next_line())
            .await
            .expect("rpc output stalled")
            .unwrap()
            .expect("rpc output ended early");
        stdout.push_str(&line);
        stdout.push('\n');
        if serde_json::from_str::<Value>(&line).unwrap()["type"] == "agent_settled" {
            break;
        }
    }
    for kind in [
        "get_state",
        "get_messages",
        "get_session_stats",
        "get_entries",
    ] {
        send(&mut stdin, json!({"id": kind, "type": kind})).await;
    }
    drop(stdin);
    while let Some(line) = tokio::time::timeout(RUN_LIMIT, lines.next_line())
        .await
        .expect("rpc output stalled")
        .unwrap()
    {
        stdout.push_str(&line);
        stdout.push('\n');
    }
    let out = tokio::time::timeout(RUN_LIMIT, child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// One mode's run; the checks that the run did what it should (so the secret checks look at
/// real output).
async fn run_mode(rig: &Rig, base: &[String], mode: &str, ok: bool) -> Run {
    let sessions = rig.sessions();
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.extend(["--session-dir", &sessions]);
    let run = match mode {
        "json" => {
            rig.run(&[&args[..], &["--mode", "json", "hi"]].concat())
                .await
        }
        "print" => rig.run(&[&args[..], &["-p", "hi"]].concat()).await,
        _ => rpc_run(rig, &[&args[..], &["--mode", "rpc"]].concat()).await,
    };
    let failed_print = mode == "print" && !ok;
    assert_eq!(run.code, i32::from(failed_print), "{mode}: {run:?}");
    match (mode, ok) {
        ("print", true) => assert_eq!(run.stdout, "Fine.\n"),
        ("print", false) => assert!(run.stderr.contains("invalid x-api-key"), "{run:?}"),
        (_, true) => assert!(run.stdout.contains("Fine."), "{run:?}"),
        (_, false) => assert!(run.stdout.contains("invalid x-api-key"), "{run:?}"),
    }
    if mode == "rpc" {
        for id in [
            "get_state",
            "get_messages",
            "get_session_stats",
            "get_entries",
        ] {
            assert!(
                run.stdout.contains(&format!("\"id\":\"{id}\"")),
                "{id}: {run:?}"
            );
        }
    }
    run
}

/// Runs every mode on success and on a 401 with the key from `source`.
async fn check_source(source: Source) {
    let key = source.key();
    let mut script = Vec::new();
    for _ in ["json", "print", "rpc"] {
        script.push(anthropic_text("Fine."));
        script.push(unauthorized());
    }
    let (_, server) = ReplayServer::start(script).await.unwrap();
    let (rig, args) = source.rig(&server.base_url());
    for mode in ["json", "print", "rpc"] {
        for ok in [true, false] {
            let run = run_mode(&rig, &args, mode, ok).await;
            assert_clean(&format!("{mode} stdout ({source:?}, ok {ok})"), &run.stdout);
            assert_clean(&format!("{mode} stderr ({source:?}, ok {ok})"), &run.stderr);
        }
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    for request in &requests {
        assert_sent_only_in_the_auth_header(request, &key);
    }
    assert_eq!(rig.session_files().len(), 6, "each run kept its session");
    assert_files_clean(&rig.path(""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_json_key_stays_out_of_every_output() {
    check_source(Source::ModelsLiteral).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_json_env_template_key_stays_out_of_every_output() {
    check_source(Source::ModelsEnvTemplate).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_json_command_key_stays_out_of_every_output() {
    check_source(Source::ModelsCommand).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_env_key_stays_out_of_every_output() {
    check_source(Source::ProviderEnv).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auth_json_key_stays_out_of_every_output() {
    check_source(Source::AuthJson).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_flag_stays_out_of_every_output() {
    check_source(Source::Flag).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_auth_json_holding_a_key_is_reported_without_it() {
    let (_, server) = ReplayServer::start(vec![]).await.unwrap();
    let (rig, args) = Source::AuthJson.rig(&server.base_url());
    let path = rig.path("agent/auth.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() - 2]).unwrap();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = rig.run(&[&args[..], &["-p", "hi"]].concat()).await;
    // pi 0.85.0 fails the read of the store (`auth_broken_binary.rs` has the cases).
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .starts_with("Credential store read failed for anthropic: Expected ',' or '}'"),
        "{run:?}"
    );
    assert_clean("stderr", &run.stderr);
    assert_clean("stdout", &run.stdout);
    assert_eq!(server.request_count(), 0);
}

/// OAuth tokens (pi 0.85 prints them only through `pi auth`): an expired login is refreshed
/// against a fake authorization server (`PI_RS_TEST_OAUTH_ORIGIN`, debug builds only), and
/// neither the old nor the new access token nor either refresh token appears in any mode's
/// output, the session files or a failed refresh's error; the access token reaches the model
/// server only as `Authorization: Bearer`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_tokens_stay_out_of_every_output() {
    let new_access = format!("sk-ant-oat01-{MARK}-new");
    let mut script = vec![Reply::json(
        200,
        &json!({"access_token": new_access, "refresh_token": format!("sk-ant-ort01-{MARK}-r2"), "expires_in": 28800}),
    )];
    for _ in ["json", "print", "rpc"] {
        script.push(anthropic_text("Fine."));
    }
    script.push(Reply::json(400, &json!({"error": "invalid_grant"})));
    let (_, server) = ReplayServer::start(script).await.unwrap();
    let (mut rig, args) = Source::ProviderEnv.rig(&server.base_url());
    rig.env.retain(|(k, _)| k != "ANTHROPIC_API_KEY");
    rig.env
        .push(("PI_RS_TEST_OAUTH_ORIGIN".into(), server.base_url()));
    let expired = json!({"anthropic": {"type": "oauth", "refresh": format!("sk-ant-ort01-{MARK}-r1"),
        "access": format!("sk-ant-oat01-{MARK}-old"), "expires": 1_700_000_000_000u64}});
    std::fs::write(rig.path("agent/auth.json"), expired.to_string()).unwrap();
    for mode in ["json", "print", "rpc"] {
        let run = run_mode(&rig, &args, mode, true).await;
        assert_clean(&format!("{mode} stdout (oauth)"), &run.stdout);
        assert_clean(&format!("{mode} stderr (oauth)"), &run.stderr);
    }
    // The refresh token goes to the authorization server in the body, as OAuth requires; the
    // access token to the model server only in its auth header.
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/oauth/token");
    for request in &requests[1..] {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {new_access}").as_str())
        );
        for (name, value) in &request.headers {
            if name != "authorization" {
                assert_clean(&format!("request header {name}"), value);
            }
        }
        assert_clean("request body", &String::from_utf8_lossy(&request.body));
    }
    // A failed refresh reports pi's text without the tokens.
    std::fs::write(rig.path("agent/auth.json"), expired.to_string()).unwrap();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = rig.run(&[&args[..], &["-p", "hi"]].concat()).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .starts_with("OAuth refresh failed for anthropic: "),
        "{run:?}"
    );
    assert_clean("stderr (failed refresh)", &run.stderr);
    assert_clean("stdout (failed refresh)", &run.stdout);
    assert_files_clean(&rig.path(""));
}
