use std::cell::RefCell;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use super::*;
use crate::testkit::{ReplayHandle, ReplayServer, Reply};

thread_local! {
    /// The fake authorization server of the test running on this thread.
    pub(super) static TEST_ORIGIN: RefCell<Option<String>> = const { RefCell::new(None) };
}

async fn server(script: Vec<Reply>) -> ReplayHandle {
    let (_, handle) = ReplayServer::start(script).await.unwrap();
    TEST_ORIGIN.with(|o| *o.borrow_mut() = Some(handle.base_url()));
    handle
}

fn cred(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn jwt(account: &str) -> String {
    let payload = json!({"https://api.openai.com/auth": {"chatgpt_account_id": account}});
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    format!(
        "{}.{}.sig",
        b64.encode(b"{\"alg\":\"none\"}"),
        b64.encode(payload.to_string())
    )
}

fn keys(m: &Map<String, Value>) -> Vec<&str> {
    m.keys().map(String::as_str).collect()
}

fn near(ms: &Value, expected: f64) {
    let got = ms.as_f64().unwrap();
    assert!((got - expected).abs() < 5_000.0, "{got} vs {expected}");
}

const LONG: Duration = Duration::from_secs(10);

#[tokio::test]
async fn anthropic_refresh_sends_pi_json_and_keeps_an_unrotated_refresh_token() {
    let srv = server(vec![
        Reply::json(
            200,
            &json!({"access_token": "at-2", "refresh_token": "rt-2", "expires_in": 28800}),
        ),
        Reply::json(200, &json!({"access_token": "at-3", "expires_in": 3600})),
    ])
    .await;
    let old = cred(json!({"type": "oauth", "refresh": "rt-1", "access": "at-1", "expires": 1}));
    let next = refresh("anthropic", &old, LONG).await.unwrap();
    assert_eq!(keys(&next), ["type", "refresh", "access", "expires"]);
    assert_eq!(
        (next["refresh"].as_str(), next["access"].as_str()),
        (Some("rt-2"), Some("at-2"))
    );
    near(&next["expires"], http::now_ms() + 28_800_000.0 - 300_000.0);
    let req = &srv.requests()[0];
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/v1/oauth/token")
    );
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(
        req.body_json().unwrap(),
        json!({"grant_type": "refresh_token", "client_id": anthropic::CLIENT_ID, "refresh_token": "rt-1"})
    );
    // No `refresh_token` in the reply: the stored one stays (pi 0.85 drops it).
    let kept = refresh("anthropic", &next, LONG).await.unwrap();
    assert_eq!(kept["refresh"], "rt-2");
    assert_eq!(kept["access"], "at-3");
}

#[tokio::test]
async fn anthropic_failures_have_pi_text() {
    let srv = server(vec![
        Reply::json(400, &json!({"error": "invalid_grant"})),
        Reply::text(200, "not json"),
    ])
    .await;
    let old = cred(json!({"type": "oauth", "refresh": "rt", "access": "a", "expires": 1}));
    let err = refresh("anthropic", &old, LONG).await.unwrap_err();
    assert_eq!(
        err.message(),
        format!(
            "Anthropic token refresh request failed. url=https://platform.claude.com/v1/oauth/token; \
             details=Error: HTTP request failed. status=400; url={}/v1/oauth/token; body={{\"error\":\"invalid_grant\"}}",
            srv.base_url()
        )
    );
    let err = refresh("anthropic", &old, LONG).await.unwrap_err();
    assert!(
        err.message().starts_with(
            "Anthropic token refresh returned invalid JSON. url=https://platform.claude.com/v1/oauth/token; body=not json; details=SyntaxError: "
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_hanging_server_times_out() {
    let _srv = server(vec![Reply::stall_before_headers()]).await;
    let old = cred(json!({"type": "oauth", "refresh": "rt", "access": "a", "expires": 1}));
    let started = std::time::Instant::now();
    let err = refresh("anthropic", &old, Duration::from_millis(200))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        err.message()
            .ends_with("details=TimeoutError: The operation was aborted due to timeout"),
        "{err}"
    );
    let err = refresh("openai-codex", &old, Duration::from_millis(200)).await;
    // The script is exhausted; whatever the server does, the text is pi's prefix.
    assert!(err.is_err());
}

#[tokio::test]
async fn codex_refresh_is_a_form_post_and_takes_the_account_id_from_the_jwt() {
    let access = jwt("acct-42");
    let srv = server(vec![
        Reply::json(
            200,
            &json!({"access_token": access, "refresh_token": "rt-2", "expires_in": 864000}),
        ),
        Reply::json(401, &json!({"error": "refresh_token_reused"})),
        Reply::json(
            200,
            &json!({"access_token": "not-a-jwt", "refresh_token": "r", "expires_in": 1}),
        ),
    ])
    .await;
    let old = cred(
        json!({"type": "oauth", "access": "x", "refresh": "rt-1", "expires": 1, "accountId": "old"}),
    );
    let next = refresh("openai-codex", &old, LONG).await.unwrap();
    assert_eq!(
        keys(&next),
        ["type", "access", "refresh", "expires", "accountId"]
    );
    assert_eq!(next["accountId"], "acct-42");
    near(&next["expires"], http::now_ms() + 864_000_000.0);
    let req = &srv.requests()[0];
    assert_eq!(req.path, "/oauth/token");
    assert_eq!(
        req.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        String::from_utf8_lossy(&req.body),
        "grant_type=refresh_token&refresh_token=rt-1&client_id=app_EMoamEEZ73f0CkXaXp7hrann"
    );
    let err = refresh("openai-codex", &old, LONG).await.unwrap_err();
    assert_eq!(
        err.message(),
        "OpenAI Codex token refresh failed (401): {\"error\":\"refresh_token_reused\"}"
    );
    let err = refresh("openai-codex", &old, LONG).await.unwrap_err();
    assert_eq!(err.message(), "Failed to extract accountId from token");
}

#[test]
fn jwt_account_ids() {
    assert_eq!(account_id_from_jwt(&jwt("a-1")).as_deref(), Some("a-1"));
    assert_eq!(account_id_from_jwt(&jwt("")), None);
    assert_eq!(account_id_from_jwt("a.b"), None);
    assert_eq!(account_id_from_jwt("a.!!!.c"), None);
}

#[tokio::test]
async fn copilot_refresh_exchanges_the_github_token_and_lists_the_models() {
    let srv = server(vec![
        Reply::json(200, &json!({"token": "tid=1;exp=9;proxy-ep=proxy.individual.githubcopilot.com", "expires_at": 2000000000})),
        Reply::json(200, &json!({"data": [
            {"id": "gpt-5.4", "model_picker_enabled": true, "policy": {"state": "enabled"}},
            {"id": "claude-sonnet-4.6", "model_picker_enabled": true},
            {"id": "off", "model_picker_enabled": true, "policy": {"state": "disabled"}},
            {"id": "hidden", "model_picker_enabled": false},
            {"id": "notools", "model_picker_enabled": true, "capabilities": {"supports": {"tool_calls": false}}}
        ]})),
    ])
    .await;
    let old = cred(
        json!({"type": "oauth", "refresh": "ghu_1", "access": "old", "expires": 1, "availableModelIds": ["x"]}),
    );
    let next = refresh("github-copilot", &old, LONG).await.unwrap();
    assert_eq!(
        keys(&next),
        ["type", "refresh", "access", "expires", "availableModelIds"]
    );
    assert_eq!(next["refresh"], "ghu_1");
    assert_eq!(next["expires"], json!(2000000000000i64 - 300000));
    assert_eq!(
        next["availableModelIds"],
        json!(["gpt-5.4", "claude-sonnet-4.6"])
    );
    let reqs = srv.requests();
    assert_eq!(
        (reqs[0].method.as_str(), reqs[0].path.as_str()),
        ("GET", "/copilot_internal/v2/token")
    );
    assert_eq!(reqs[0].header("authorization"), Some("Bearer ghu_1"));
    assert_eq!(reqs[0].header("editor-version"), Some("vscode/1.107.0"));
    assert_eq!(reqs[1].path, "/models");
    assert_eq!(
        reqs[1].header("authorization"),
        Some("Bearer tid=1;exp=9;proxy-ep=proxy.individual.githubcopilot.com")
    );
    assert_eq!(reqs[1].header("x-github-api-version"), Some("2026-06-01"));
}

#[tokio::test]
async fn copilot_enterprise_keeps_its_domain_and_a_revoked_token_fails() {
    let _srv = server(vec![
        Reply::json(200, &json!({"token": "tid=2", "expires_at": 2000000000})),
        Reply::json(200, &json!({"data": [{"id": "m", "model_picker_enabled": false, "policy": {"state": "enabled"}}]})),
        Reply::text(401, "Bad credentials"),
    ])
    .await;
    let old = cred(
        json!({"type": "oauth", "refresh": "ghu", "access": "a", "expires": 1, "enterpriseUrl": "https://corp.ghe.com/"}),
    );
    let next = refresh("github-copilot", &old, LONG).await.unwrap();
    assert_eq!(next["enterpriseUrl"], "corp.ghe.com");
    // Not the individual endpoint: no policy fallback.
    assert_eq!(next["availableModelIds"], json!([]));
    let err = refresh("github-copilot", &old, LONG).await.unwrap_err();
    assert_eq!(err.message(), "401 Unauthorized: Bad credentials");
}

#[test]
fn copilot_base_urls_and_model_filter() {
    TEST_ORIGIN.with(|o| *o.borrow_mut() = None);
    assert_eq!(
        copilot_base_url(
            Some("tid=1;proxy-ep=proxy.business.githubcopilot.com;x=y"),
            None
        ),
        "https://api.business.githubcopilot.com"
    );
    assert_eq!(
        copilot_base_url(Some("tid=1"), Some("corp.ghe.com")),
        "https://copilot-api.corp.ghe.com"
    );
    assert_eq!(
        copilot_base_url(None, None),
        "https://api.individual.githubcopilot.com"
    );
    let c = cred(
        json!({"type": "oauth", "access": "tid=1", "refresh": "r", "expires": 1, "enterpriseUrl": "corp.ghe.com", "availableModelIds": ["a", "b"]}),
    );
    assert_eq!(
        to_auth("github-copilot", &c).base_url.as_deref(),
        Some("https://copilot-api.corp.ghe.com")
    );
    assert_eq!(available_model_ids(&c), Some(vec!["a", "b"]));
    let mixed = cred(json!({"availableModelIds": ["a", 1]}));
    assert_eq!(available_model_ids(&mixed), None);
    assert_eq!(
        normalize_domain(" https://x.ghe.com/path "),
        Some("x.ghe.com".into())
    );
    assert_eq!(normalize_domain(""), None);
}

#[test]
fn kimi_sends_a_bearer_header_not_a_key() {
    let c = cred(json!({"type": "oauth", "access": "kimi-at", "refresh": "r", "expires": 1}));
    let auth = to_auth("kimi-coding", &c);
    assert_eq!(auth.api_key, None);
    assert_eq!(
        auth.headers,
        vec![("Authorization".to_owned(), "Bearer kimi-at".to_owned())]
    );
    assert_eq!(to_auth("anthropic", &c).api_key.as_deref(), Some("kimi-at"));
    assert!(!format!("{auth:?}").contains("kimi-at"));
}

#[tokio::test]
async fn xai_refresh_and_errors() {
    let _srv = server(vec![
        Reply::json(200, &json!({"access_token": "x2"})),
        Reply::json(
            400,
            &json!({"error": "invalid_grant", "error_description": "revoked"}),
        ),
        Reply::text(502, "<html>"),
    ])
    .await;
    let old = cred(json!({"type": "oauth", "access": "x1", "refresh": "xr", "expires": 1}));
    let next = refresh("xai", &old, LONG).await.unwrap();
    assert_eq!(keys(&next), ["type", "access", "refresh", "expires"]);
    assert_eq!(next["refresh"], "xr");
    near(&next["expires"], http::now_ms() + 3_300_000.0);
    assert_eq!(
        refresh("xai", &old, LONG).await.unwrap_err().message(),
        "xAI OAuth token refresh failed (HTTP 400): invalid_grant: revoked"
    );
    assert_eq!(
        refresh("xai", &old, LONG).await.unwrap_err().message(),
        "xAI OAuth returned invalid JSON (HTTP 502)"
    );
}

#[tokio::test]
async fn kimi_refresh_retries_server_errors_and_stops_on_unauthorized() {
    let srv = server(vec![
        Reply::json(503, &json!({})),
        Reply::json(
            200,
            &json!({"access_token": "k2", "refresh_token": "kr2", "expires_in": 900}),
        ),
        Reply::json(
            401,
            &json!({"error": "invalid_grant", "error_description": "expired"}),
        ),
    ])
    .await;
    let old = cred(json!({"type": "oauth", "access": "k1", "refresh": "kr", "expires": 1}));
    let next = refresh("kimi-coding", &old, LONG).await.unwrap();
    assert_eq!(next["refresh"], "kr2");
    assert_eq!(srv.request_count(), 2);
    assert_eq!(srv.requests()[0].path, "/api/oauth/token");
    assert_eq!(
        refresh("kimi-coding", &old, LONG)
            .await
            .unwrap_err()
            .message(),
        "Kimi Code token refresh unauthorized (status 401): expired"
    );
}

#[test]
fn expiry_window() {
    let now = http::now_ms();
    let at = |ms: f64| cred(json!({"expires": ms}));
    assert!(expires_soon(&at(now + 60_000.0), None));
    assert!(!expires_soon(&at(now + 600_000.0), None));
    assert!(expires_soon(
        &at(now + 600_000.0),
        Some(Duration::from_secs(1800))
    ));
    assert!(expires_soon(&cred(json!({})), None));
}

#[test]
fn the_override_replaces_only_the_origin() {
    TEST_ORIGIN.with(|o| *o.borrow_mut() = Some("http://127.0.0.1:9/".into()));
    assert_eq!(
        endpoint("https://auth.x.ai/oauth2/token"),
        "http://127.0.0.1:9/oauth2/token"
    );
    assert_eq!(endpoint("https://api.github.com"), "http://127.0.0.1:9");
    TEST_ORIGIN.with(|o| *o.borrow_mut() = None);
}
