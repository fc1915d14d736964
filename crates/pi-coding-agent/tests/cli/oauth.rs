//! OAuth credentials through the `pi` binary: an `auth.json` written by the TypeScript pi,
//! with expired entries, refreshed before the request against a local fake authorization
//! server (`PI_RS_TEST_OAUTH_ORIGIN`, which only debug builds honour), under the
//! `auth.json.lock` lock, and written back without touching the other entries.

use crate::support;

use pi_ai::testkit::{ReplayServer, Reply};
use serde_json::{Value, json};
use support::anthropic_sse::anthropic_text;
use support::binary_rig::Rig;

/// An `auth.json` as pi 0.85.0 writes it (`JSON.stringify(data, null, 2)`), every OAuth entry
/// long expired.
const TS_AUTH: &str = r#"{
  "openai": {
    "type": "api_key",
    "key": "sk-keep-me"
  },
  "anthropic": {
    "type": "oauth",
    "refresh": "sk-ant-ort01-old",
    "access": "sk-ant-oat01-old",
    "expires": 1700000000000
  },
  "openai-codex": {
    "type": "oauth",
    "access": "eyJhbGciOiJub25lIn0.eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOnsiY2hhdGdwdF9hY2NvdW50X2lkIjoiYWNjdC1vbGQifX0.sig",
    "refresh": "codex-refresh-old",
    "expires": 1700000000000,
    "accountId": "acct-old"
  },
  "github-copilot": {
    "type": "oauth",
    "refresh": "ghu_github_token",
    "access": "tid=old;exp=1;proxy-ep=proxy.individual.githubcopilot.com",
    "expires": 1700000000000,
    "availableModelIds": [
      "claude-sonnet-4.6"
    ]
  }
}"#;

fn rig(server: &str) -> Rig {
    let models = json!({"providers": {
        "anthropic": {"baseUrl": server},
        "kimi-coding": {"baseUrl": server},
        "openai-codex": {"baseUrl": format!("{server}/backend-api")}
    }});
    let mut rig = Rig::with_models(&models, &json!({"retry": {"enabled": false}}));
    rig.env
        .push(("PI_RS_TEST_OAUTH_ORIGIN".into(), server.into()));
    std::fs::write(rig.path("agent/auth.json"), TS_AUTH).unwrap();
    rig
}

fn auth_file(rig: &Rig) -> Value {
    serde_json::from_str(&std::fs::read_to_string(rig.path("agent/auth.json")).unwrap()).unwrap()
}

fn run_args<'a>(provider: &'a str, model: &'a str) -> [&'a str; 7] {
    [
        "--no-session",
        "--provider",
        provider,
        "--model",
        model,
        "-p",
        "hi",
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_anthropic_login_is_refreshed_and_answers() {
    let (_, server) = ReplayServer::start(vec![
        Reply::json(200, &json!({"access_token": "sk-ant-oat01-new", "refresh_token": "sk-ant-ort01-new", "expires_in": 28800})),
        anthropic_text("Refreshed."),
    ])
    .await
    .unwrap();
    let rig = rig(&server.base_url());
    let run = rig.run(&run_args("anthropic", "claude-sonnet-4-5")).await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "Refreshed.\n"),
        "{run:?}"
    );
    let reqs = server.requests();
    assert_eq!(reqs[0].path, "/v1/oauth/token");
    assert_eq!(
        reqs[0].body_json().unwrap()["refresh_token"],
        "sk-ant-ort01-old"
    );
    assert_eq!(
        reqs[1].header("authorization"),
        Some("Bearer sk-ant-oat01-new")
    );
    assert_eq!(reqs[1].header("x-api-key"), None);
    let file = auth_file(&rig);
    assert_eq!(file["anthropic"]["access"], "sk-ant-oat01-new");
    assert_eq!(file["anthropic"]["refresh"], "sk-ant-ort01-new");
    let original: Value = serde_json::from_str(TS_AUTH).unwrap();
    assert_eq!(file["openai"], original["openai"]);
    assert_eq!(file["github-copilot"], original["github-copilot"]);
    let keys: Vec<&String> = file.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["openai", "anthropic", "openai-codex", "github-copilot"]
    );
    assert!(!rig.path("agent/auth.json.lock").exists());
    // Fresh now: the next run makes no refresh request.
    drop(server);
    let (_, server) = ReplayServer::start(vec![anthropic_text("Again.")])
        .await
        .unwrap();
    let mut rig2 = rig;
    for (k, v) in rig2.env.iter_mut() {
        if k == "PI_RS_TEST_OAUTH_ORIGIN" {
            *v = server.base_url();
        }
    }
    let models = json!({"providers": {"anthropic": {"baseUrl": server.base_url()}}});
    std::fs::write(rig2.path("agent/models.json"), models.to_string()).unwrap();
    let run = rig2.run(&run_args("anthropic", "claude-sonnet-4-5")).await;
    assert_eq!((run.code, run.stdout.as_str()), (0, "Again.\n"), "{run:?}");
    assert_eq!(server.request_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_copilot_token_is_exchanged_and_its_model_list_kept() {
    let (_, server) = ReplayServer::start(vec![
        Reply::json(200, &json!({"token": "tid=new;exp=2;proxy-ep=proxy.individual.githubcopilot.com", "expires_at": 4000000000u64})),
        Reply::json(200, &json!({"data": [
            {"id": "claude-sonnet-4.6", "model_picker_enabled": true},
            {"id": "gpt-5.4", "model_picker_enabled": true}
        ]})),
        anthropic_text("Copilot here."),
    ])
    .await
    .unwrap();
    let rig = rig(&server.base_url());
    let run = rig
        .run(&run_args("github-copilot", "claude-sonnet-4.6"))
        .await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "Copilot here.\n"),
        "{run:?}"
    );
    let reqs = server.requests();
    assert_eq!(reqs[0].path, "/copilot_internal/v2/token");
    assert_eq!(
        reqs[0].header("authorization"),
        Some("Bearer ghu_github_token")
    );
    assert_eq!(reqs[1].path, "/models");
    assert_eq!(reqs[2].path, "/v1/messages");
    assert_eq!(
        reqs[2].header("authorization"),
        Some("Bearer tid=new;exp=2;proxy-ep=proxy.individual.githubcopilot.com")
    );
    let file = auth_file(&rig);
    assert_eq!(file["github-copilot"]["refresh"], "ghu_github_token");
    assert_eq!(
        file["github-copilot"]["expires"],
        json!(4000000000000u64 - 300000)
    );
    assert_eq!(
        file["github-copilot"]["availableModelIds"],
        json!(["claude-sonnet-4.6", "gpt-5.4"])
    );
    assert_eq!(
        file["anthropic"]["access"], "sk-ant-oat01-old",
        "other entries untouched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_refresh_token_fails_with_pi_text_and_changes_nothing() {
    let (_, server) = ReplayServer::start(vec![Reply::json(
        400,
        &json!({"error": "invalid_grant", "error_description": "Refresh token revoked"}),
    )])
    .await
    .unwrap();
    let rig = rig(&server.base_url());
    let run = rig.run(&run_args("anthropic", "claude-sonnet-4-5")).await;
    assert_eq!((run.code, run.stdout.as_str()), (1, ""), "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "OAuth refresh failed for anthropic: Anthropic token refresh request failed. \
             url=https://platform.claude.com/v1/oauth/token; details=Error: HTTP request failed. \
             status=400; url={}/v1/oauth/token; body={{\"error\":\"invalid_grant\",\"error_description\":\"Refresh token revoked\"}}\n",
            server.base_url()
        )
    );
    assert_eq!(server.request_count(), 1, "no model request");
    assert_eq!(
        std::fs::read_to_string(rig.path("agent/auth.json")).unwrap(),
        TS_AUTH
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_authorization_server_times_out() {
    let (_, server) = ReplayServer::start(vec![Reply::stall_before_headers()])
        .await
        .unwrap();
    let mut rig = rig(&server.base_url());
    rig.env
        .push(("PI_RS_TEST_OAUTH_TIMEOUT_MS".into(), "300".into()));
    let started = std::time::Instant::now();
    let run = rig.run(&run_args("anthropic", "claude-sonnet-4-5")).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .ends_with("details=TimeoutError: The operation was aborted due to timeout\n"),
        "{run:?}"
    );
    assert_eq!(
        std::fs::read_to_string(rig.path("agent/auth.json")).unwrap(),
        TS_AUTH
    );
}

/// Two processes find the same expired entry: one refreshes under the lock, the other waits
/// for it, re-reads the file and uses the new token. One refresh request, two answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_refresh_once() {
    let (_, server) = ReplayServer::start(vec![
        Reply::json(200, &json!({"access_token": "sk-ant-oat01-new", "refresh_token": "sk-ant-ort01-new", "expires_in": 28800}))
            .event_delay(std::time::Duration::from_millis(300)),
        anthropic_text("One."),
        anthropic_text("Two."),
    ])
    .await
    .unwrap();
    let rig = rig(&server.base_url());
    let args = run_args("anthropic", "claude-sonnet-4-5");
    let (a, b) = tokio::join!(rig.run(&args), rig.run(&args));
    assert_eq!((a.code, b.code), (0, 0), "{a:?} {b:?}");
    let mut answers = [a.stdout, b.stdout];
    answers.sort();
    assert_eq!(answers, ["One.\n", "Two.\n"]);
    let reqs = server.requests();
    assert_eq!(
        reqs.iter().filter(|r| r.path == "/v1/oauth/token").count(),
        1
    );
    for r in reqs.iter().filter(|r| r.path == "/v1/messages") {
        assert_eq!(r.header("authorization"), Some("Bearer sk-ant-oat01-new"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kimi_login_is_a_bearer_token_and_copilot_lists_only_its_models() {
    let (_, server) = ReplayServer::start(vec![anthropic_text("Kimi.")])
        .await
        .unwrap();
    let rig = rig(&server.base_url());
    let far = 4_000_000_000_000u64;
    let auth = json!({
        "kimi-coding": {"type": "oauth", "access": "kimi-access", "refresh": "kimi-r", "expires": far},
        "github-copilot": {"type": "oauth", "refresh": "g", "access": "tid=1", "expires": far,
                           "availableModelIds": ["gpt-5.4", "claude-sonnet-4.6"]}
    });
    std::fs::write(rig.path("agent/auth.json"), auth.to_string()).unwrap();
    let run = rig.run(&run_args("kimi-coding", "kimi-for-coding")).await;
    assert_eq!((run.code, run.stdout.as_str()), (0, "Kimi.\n"), "{run:?}");
    let r = &server.requests()[0];
    assert_eq!(r.header("authorization"), Some("Bearer kimi-access"));
    assert_eq!(r.header("x-api-key"), None);
    let run = rig.run(&["--list-models", "github-copilot"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    let rows: Vec<&str> = run.stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{}", run.stdout);
    assert!(
        rows.iter().any(|l| l.contains("gpt-5.4 "))
            && rows.iter().any(|l| l.contains("claude-sonnet-4.6"))
    );
    let run = rig.run(&run_args("github-copilot", "gpt-5.5")).await;
    assert_eq!(
        run.code, 1,
        "a model the account lacks is not found: {run:?}"
    );
}

fn jwt(account: &str) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let payload = json!({"https://api.openai.com/auth": {"chatgpt_account_id": account}});
    format!(
        "{}.{}.sig",
        b64.encode("{\"alg\":\"none\"}"),
        b64.encode(payload.to_string())
    )
}

fn codex_text(text: &str) -> Reply {
    let ev = |v: Value| format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap());
    let body = [
        ev(
            json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
        ),
        ev(
            json!({"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_1",
            "content_index": 0, "delta": text}),
        ),
        ev(
            json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "message", "id": "msg_1", "role": "assistant",
                "content": [{"type": "output_text", "text": text}]}}),
        ),
        ev(
            json!({"type": "response.done", "response": {"id": "r", "status": "completed",
            "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}}}),
        ),
    ]
    .concat();
    Reply::sse(body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_codex_login_is_refreshed_and_the_codex_api_answers() {
    let access = jwt("acct-new");
    let (_, server) = ReplayServer::start(vec![
        Reply::json(200, &json!({"access_token": access, "refresh_token": "codex-refresh-new", "expires_in": 864000})),
        codex_text("Codex answers."),
    ])
    .await
    .unwrap();
    let rig = rig(&server.base_url());
    let run = rig.run(&run_args("openai-codex", "gpt-5.5")).await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "Codex answers.\n"),
        "{run:?}"
    );
    let reqs = server.requests();
    assert_eq!(reqs[0].path, "/oauth/token");
    assert!(String::from_utf8_lossy(&reqs[0].body).contains("refresh_token=codex-refresh-old"));
    assert_eq!(reqs[1].path, "/backend-api/codex/responses");
    assert_eq!(reqs[1].header("chatgpt-account-id"), Some("acct-new"));
    assert_eq!(
        reqs[1].header("authorization"),
        Some(format!("Bearer {access}").as_str())
    );
    let file = auth_file(&rig);
    assert_eq!(file["openai-codex"]["accountId"], "acct-new");
    assert_eq!(file["openai-codex"]["refresh"], "codex-refresh-new");
    assert_eq!(file["anthropic"]["access"], "sk-ant-oat01-old");
}

/// The TypeScript pi, when installed (the check is skipped without it).
/// The TypeScript pi 0.85.0, as a program and its leading arguments: the pinned install of
/// `.ci/run` (`PI_TEST_NODE` running the package's `dist/bundle/cli.js` from
/// `PI_TEST_NODE_MODULES`), else `~/.cache/pi-reference/bin/pi`.
fn reference_pi() -> Option<(std::path::PathBuf, Vec<String>)> {
    if let (Some(node), Some(modules)) = (
        std::env::var_os("PI_TEST_NODE"),
        std::env::var_os("PI_TEST_NODE_MODULES"),
    ) {
        let cli = std::path::Path::new(&modules)
            .join("@earendil-works/pi-coding-agent/dist/bundle/cli.js");
        if cli.is_file() {
            return Some((node.into(), vec![cli.display().to_string()]));
        }
    }
    let home = std::env::var_os("HOME")?;
    let bin = std::path::Path::new(&home).join(".cache/pi-reference/bin/pi");
    bin.is_file().then_some((bin, Vec::new()))
}

/// `pi auth check --provider P --json --no-refresh` of ours and, when installed, of the
/// TypeScript pi on the same agent directory: the same line and exit code.
async fn both_check(rig: &Rig, provider: &str) -> String {
    let args = [
        "auth",
        "check",
        "--provider",
        provider,
        "--json",
        "--no-refresh",
    ];
    let ours = rig.run(&args).await;
    if let Some((ts, lead)) = reference_pi() {
        let p = |sub: &str| rig.path(sub).display().to_string();
        let out = tokio::process::Command::new(ts)
            .args(lead)
            .args(args)
            .current_dir(rig.path("work"))
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", p("home"))
            .env("PI_CODING_AGENT_DIR", p("agent"))
            .env("PI_OFFLINE", "1")
            .env("NO_COLOR", "1")
            .output()
            .await
            .unwrap();
        assert_eq!(
            (
                String::from_utf8_lossy(&out.stdout).as_ref(),
                out.status.code()
            ),
            (ours.stdout.as_str(), Some(ours.code)),
            "the TypeScript pi reads the file the same way"
        );
    }
    assert_eq!(ours.code, 0, "{ours:?}");
    ours.stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_each_refresh_both_binaries_read_the_file_alike() {
    let access = jwt("acct-new");
    let (_, server) = ReplayServer::start(vec![
        Reply::json(200, &json!({"access_token": "sk-ant-oat01-new", "refresh_token": "sk-ant-ort01-new", "expires_in": 28800})),
        anthropic_text("A."),
        Reply::json(200, &json!({"access_token": access, "refresh_token": "codex-refresh-new", "expires_in": 864000})),
        codex_text("C."),
        Reply::json(200, &json!({"token": "tid=new;proxy-ep=proxy.individual.githubcopilot.com", "expires_at": 4000000000u64})),
        Reply::json(200, &json!({"data": [{"id": "claude-sonnet-4.6", "model_picker_enabled": true}]})),
        anthropic_text("G."),
    ])
    .await
    .unwrap();
    let rig = rig(&server.base_url());
    for (provider, model, answer) in [
        ("anthropic", "claude-sonnet-4-5", "A.\n"),
        ("openai-codex", "gpt-5.5", "C.\n"),
        ("github-copilot", "claude-sonnet-4.6", "G.\n"),
    ] {
        let run = rig.run(&run_args(provider, model)).await;
        assert_eq!((run.code, run.stdout.as_str()), (0, answer), "{run:?}");
        assert_eq!(
            both_check(&rig, provider).await,
            format!(
                "{{\"status\":\"ready\",\"provider\":\"{provider}\",\"authType\":\"oauth\"}}\n"
            )
        );
    }
    assert_eq!(server.request_count(), 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_auth_refreshes_prints_and_checks() {
    let (_, server) = ReplayServer::start(vec![
        Reply::json(200, &json!({"access_token": "sk-ant-oat01-new", "refresh_token": "sk-ant-ort01-new", "expires_in": 28800})),
        Reply::json(401, &json!({"error": "invalid_grant"})),
    ])
    .await
    .unwrap();
    let rig = rig(&server.base_url());
    // Without refresh the stored (expired) token is what there is.
    let run = rig
        .run(&[
            "auth",
            "check",
            "--provider",
            "anthropic",
            "--json",
            "--credentials",
            "--no-refresh",
        ])
        .await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (
            0,
            "{\"status\":\"ready\",\"provider\":\"anthropic\",\"authType\":\"oauth\",\"credentials\":\"sk-ant-oat01-old\"}\n"
        )
    );
    assert_eq!(server.request_count(), 0);
    // A bearer token is refreshed first and stored.
    let run = rig
        .run(&["auth", "print-bearer-token", "--provider", "anthropic"])
        .await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "sk-ant-oat01-new\n"),
        "{run:?}"
    );
    assert_eq!(auth_file(&rig)["anthropic"]["access"], "sk-ant-oat01-new");
    // 8 h of validity is less than the 10 h asked for: one more refresh, which fails.
    let run = rig
        .run(&[
            "auth",
            "print-bearer-token",
            "--provider",
            "anthropic",
            "--min-expiry",
            "10h",
        ])
        .await;
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (1, "Error: Failed to resolve credential\n")
    );
    assert_eq!(server.request_count(), 2);
    assert_eq!(
        auth_file(&rig)["anthropic"]["access"],
        "sk-ant-oat01-new",
        "kept after the failure"
    );
    let run = rig
        .run(&["auth", "print-api-key", "--provider", "openai"])
        .await;
    assert_eq!((run.code, run.stdout.as_str()), (0, "sk-keep-me\n"));
    let run = rig
        .run(&["auth", "print-api-key", "--provider", "anthropic"])
        .await;
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            1,
            "Error: Provider \"anthropic\" is configured with OAuth, not an API key\n"
        )
    );
    let run = rig.run(&["auth", "check", "--provider", "groq"]).await;
    assert_eq!((run.code, run.stdout.as_str()), (1, "not_ready\n"));
    let run = rig.run(&["auth", "check", "--json"]).await;
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            "Error: Auth checks require --provider <provider> or --model <model>\n"
        )
    );
    // A broken file: invalid, exit 2, and left as it is.
    std::fs::write(rig.path("agent/auth.json"), "{\"anthropic\":").unwrap();
    let run = rig
        .run(&["auth", "check", "--provider", "anthropic", "--json"])
        .await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (
            2,
            "{\"status\":\"invalid\",\"provider\":\"anthropic\",\"reason\":\"invalid_state\"}\n"
        )
    );
    assert_eq!(
        std::fs::read_to_string(rig.path("agent/auth.json")).unwrap(),
        "{\"anthropic\":"
    );
}

/// A root whose `anthropic` provider has a small-window model on `server` (so a big usage
/// compacts) and an expired Claude Pro/Max login.
fn compaction_rig(server: &str, settings: &Value) -> Rig {
    let models = json!({"providers": {"anthropic": {
        "baseUrl": server, "api": "anthropic-messages",
        "models": [{"id": "replay-model", "reasoning": false, "contextWindow": 128000,
                    "maxTokens": 16384,
                    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}]
    }}});
    let mut rig = Rig::with_models(&models, settings);
    rig.env
        .push(("PI_RS_TEST_OAUTH_ORIGIN".into(), server.into()));
    std::fs::write(
        rig.path("work/hello.txt"),
        "Hello from the scratch dir!\nSecond line.\n",
    )
    .unwrap();
    write_anthropic_login(&rig, "sk-ant-oat01-old", 1_700_000_000_000u64);
    rig
}

fn write_anthropic_login(rig: &Rig, access: &str, expires: u64) {
    let auth = json!({"anthropic": {"type": "oauth", "refresh": "sk-ant-ort01-old",
        "access": access, "expires": expires}});
    std::fs::write(rig.path("agent/auth.json"), auth.to_string()).unwrap();
}

/// A token reply whose token is already inside the 5-minute refresh window.
fn short_lived(access: &str, refresh: &str) -> Reply {
    Reply::json(
        200,
        &json!({"access_token": access, "refresh_token": refresh, "expires_in": 1}),
    )
}

fn scenario(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/conformance/compaction_auto")
            .join(name),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_automatic_compaction_refreshes_an_expired_login_before_its_summary() {
    // Every token but the last is born expired, so each request refreshes first: the
    // summary must go out with the token refreshed for it, not the one the turn used.
    let (_, server) = ReplayServer::start(vec![
        short_lived("sk-ant-oat01-t1", "ref-1"),
        Reply::sse(scenario("01-tool-use.sse")),
        short_lived("sk-ant-oat01-t2", "ref-2"),
        Reply::sse(scenario("02-big-usage.sse")),
        Reply::json(
            200,
            &json!({"access_token": "sk-ant-oat01-t3", "refresh_token": "ref-3", "expires_in": 28800}),
        ),
        Reply::sse(scenario("03-summary.sse")),
    ])
    .await
    .unwrap();
    let rig = compaction_rig(
        &server.base_url(),
        &json!({"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 10}}),
    );
    let run = rig
        .run(&[
            "--no-session",
            "--mode",
            "json",
            "--provider",
            "anthropic",
            "--model",
            "replay-model",
            "-p",
            "What does hello.txt say?",
        ])
        .await;
    assert_eq!(run.code, 0, "{run:?}");
    let end = run
        .records()
        .into_iter()
        .find(|r| r["type"] == "compaction_end")
        .expect("compaction_end");
    assert!(end["result"]["summary"].is_string(), "{end}");
    let reqs = server.requests();
    let paths: Vec<&str> = reqs.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/v1/oauth/token",
            "/v1/messages",
            "/v1/oauth/token",
            "/v1/messages",
            "/v1/oauth/token",
            "/v1/messages"
        ]
    );
    assert_eq!(reqs[4].body_json().unwrap()["refresh_token"], "ref-2");
    assert_eq!(
        reqs[5].header("authorization"),
        Some("Bearer sk-ant-oat01-t3")
    );
    assert_eq!(auth_file(&rig)["anthropic"]["access"], "sk-ant-oat01-t3");
}

/// `pi --mode rpc` in `rig`: sends `commands` one at a time, each after the response to the
/// one before; returns every record written.
async fn rpc_session(rig: &Rig, args: &[&str], commands: &[Value]) -> Vec<Value> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut cmd = rig.command(args);
    cmd.stdin(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for command in commands {
        stdin
            .write_all(format!("{command}\n").as_bytes())
            .await
            .unwrap();
        let id = command["id"].clone();
        let work = async {
            while let Some(line) = lines.next_line().await.unwrap() {
                let record: Value = serde_json::from_str(&line).unwrap();
                let done = record["type"] == "response" && record["id"] == id;
                seen.push(record);
                if done {
                    return;
                }
            }
            panic!("the output ended before the response to {id}");
        };
        tokio::time::timeout(std::time::Duration::from_secs(60), work)
            .await
            .expect("a response in time");
    }
    drop(stdin);
    let _ = child.wait().await;
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manual_compaction_refreshes_an_expired_login_first() {
    let (_, server) = ReplayServer::start(vec![
        anthropic_text("First answer."),
        anthropic_text("Second answer."),
        Reply::json(
            200,
            &json!({"access_token": "sk-ant-oat01-compact", "refresh_token": "ref-c", "expires_in": 28800}),
        ),
        anthropic_text("THE SUMMARY"),
        anthropic_text("THE PREFIX"),
    ])
    .await
    .unwrap();
    let rig = compaction_rig(
        &server.base_url(),
        &json!({"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 1}}),
    );
    // Two turns with a valid login, then the login expires.
    let far = 4_102_444_800_000u64;
    write_anthropic_login(&rig, "sk-ant-oat01-valid", far);
    let sessions = rig.sessions();
    let base = [
        "--session-dir",
        sessions.as_str(),
        "--provider",
        "anthropic",
        "--model",
        "replay-model",
    ];
    for (i, prompt) in ["one", "two"].iter().enumerate() {
        let mut args: Vec<&str> = base.to_vec();
        if i > 0 {
            args.push("--continue");
        }
        args.extend(["-p", prompt]);
        let run = rig.run(&args).await;
        assert_eq!(run.code, 0, "{run:?}");
    }
    write_anthropic_login(&rig, "sk-ant-oat01-old", 1_700_000_000_000u64);
    let mut args: Vec<&str> = base.to_vec();
    args.extend(["--continue", "--mode", "rpc"]);
    let records = rpc_session(&rig, &args, &[json!({"id": "c", "type": "compact"})]).await;
    let compact = records
        .iter()
        .find(|r| r["type"] == "response" && r["id"] == "c")
        .unwrap();
    assert_eq!(compact["success"], true, "{compact}");
    let reqs = server.requests();
    assert_eq!(reqs[2].path, "/v1/oauth/token");
    assert_eq!(
        reqs[2].body_json().unwrap()["refresh_token"],
        "sk-ant-ort01-old"
    );
    // Both summary requests (the history and the split turn's prefix) carry the new token.
    for r in &reqs[3..] {
        assert_eq!(
            r.header("authorization"),
            Some("Bearer sk-ant-oat01-compact")
        );
    }
    assert_eq!(
        auth_file(&rig)["anthropic"]["access"],
        "sk-ant-oat01-compact"
    );
    assert_eq!(reqs.len(), 5);
}

/// A clock far ahead of the authorization server's: every token it hands out already looks
/// expired here. As pi, a prompt refreshes once and uses what it got (no refresh loop, no
/// failure), while `pi auth print-bearer-token`, which promises a minimum lifetime, refuses
/// (`OAuth refresh returned a token that expires too soon`, reported as pi reports it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_far_ahead_refreshes_once_per_request_and_never_loops() {
    let (_, server) = ReplayServer::start(vec![
        short_lived("sk-ant-oat01-skewed", "sk-ant-ort01-skewed"),
        anthropic_text("Answered."),
        short_lived("sk-ant-oat01-skewed2", "sk-ant-ort01-skewed2"),
    ])
    .await
    .unwrap();
    let rig = rig(&server.base_url());
    let run = rig.run(&run_args("anthropic", "claude-sonnet-4-5")).await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "Answered.\n"),
        "{run:?}"
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "one refresh, one request");
    assert_eq!(
        reqs[1].header("authorization"),
        Some("Bearer sk-ant-oat01-skewed")
    );
    let file = auth_file(&rig);
    assert_eq!(file["anthropic"]["access"], "sk-ant-oat01-skewed");
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(file["anthropic"]["expires"].as_u64().unwrap() < now_ms);
    let run = rig
        .run(&["auth", "print-bearer-token", "--provider", "anthropic"])
        .await;
    // pi's generic text: the cause (a token that expires too soon) is not printed.
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (1, "Error: Failed to resolve credential\n"),
        "{run:?}"
    );
    assert!(!run.stdout.contains("sk-ant-oat01"), "{run:?}");
    // The refresh it made is stored all the same; the other entries are untouched.
    assert_eq!(
        auth_file(&rig)["anthropic"]["access"],
        "sk-ant-oat01-skewed2"
    );
    assert_eq!(auth_file(&rig)["openai"]["key"], "sk-keep-me");
}
