//! Browser logins against a fake authorization server: the test plays the browser and calls
//! the callback URL itself. They bind pi's fixed ports, so they run one at a time.

use std::sync::Mutex;

use serde_json::json;

use super::tests::TEST_ORIGIN;
use super::*;
use crate::testkit::{ReplayServer, Reply};

static FIXED_PORTS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn param(url: &str, name: &str) -> String {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .unwrap()
}

/// The browser: follows the redirect to the callback with `code` and the URL's state.
fn browser(port: u16, path: &'static str, code: &'static str) -> impl FnOnce(&str) {
    move |url: &str| {
        let state = param(url, "state");
        tokio::spawn(async move {
            let client = reqwest::Client::new();
            // A wrong route and a wrong state first: both refused, the wait goes on.
            let base = format!("http://127.0.0.1:{port}");
            let r = client
                .get(format!("{base}/elsewhere"))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status().as_u16(), 404);
            let r = client
                .get(format!("{base}{path}?code=x&state=wrong"))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status().as_u16(), 400);
            let r = client
                .get(format!("{base}{path}?code={code}&state={state}"))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status().as_u16(), 200);
            assert!(r.text().await.unwrap().contains("Authentication completed"));
        });
    }
}

#[tokio::test]
async fn anthropic_browser_login_exchanges_the_code() {
    let _ports = FIXED_PORTS.lock().await;
    let (_, srv) = ReplayServer::start(vec![Reply::json(
        200,
        &json!({"access_token": "sk-ant-oat01-a", "refresh_token": "sk-ant-ort01-r", "expires_in": 28800}),
    )])
    .await
    .unwrap();
    TEST_ORIGIN.with(|o| *o.borrow_mut() = Some(srv.base_url()));
    let seen = std::sync::Arc::new(Mutex::new(String::new()));
    let seen2 = seen.clone();
    let open = browser(53692, "/callback", "the-code");
    let entry = login::login_anthropic(
        move |url| {
            *seen2.lock().unwrap() = url.to_owned();
            open(url)
        },
        std::time::Duration::from_secs(10),
    )
    .await
    .unwrap();
    let url = seen.lock().unwrap().clone();
    assert!(url.starts_with("https://claude.ai/oauth/authorize?code=true&client_id="));
    assert_eq!(
        param(&url, "redirect_uri"),
        "http://localhost:53692/callback"
    );
    assert_eq!(param(&url, "code_challenge_method"), "S256");
    let verifier = param(&url, "state");
    assert_eq!(param(&url, "code_challenge"), pkce::challenge_of(&verifier));
    assert_eq!(entry["access"], "sk-ant-oat01-a");
    assert_eq!(entry["refresh"], "sk-ant-ort01-r");
    let body = srv.requests()[0].body_json().unwrap();
    assert_eq!(body["grant_type"], "authorization_code");
    assert_eq!(body["code"], "the-code");
    assert_eq!(body["code_verifier"], verifier.as_str());
    assert_eq!(body["redirect_uri"], "http://localhost:53692/callback");
}

#[tokio::test]
async fn codex_browser_login_keeps_the_account_id() {
    let _ports = FIXED_PORTS.lock().await;
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let access = format!(
        "h.{}.s",
        b64.encode(
            json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-7"}}).to_string()
        )
    );
    let (_, srv) = ReplayServer::start(vec![Reply::json(
        200,
        &json!({"access_token": access, "refresh_token": "r", "expires_in": 864000}),
    )])
    .await
    .unwrap();
    TEST_ORIGIN.with(|o| *o.borrow_mut() = Some(srv.base_url()));
    let entry = login::login_openai_codex(
        browser(1455, "/auth/callback", "cx"),
        std::time::Duration::from_secs(10),
    )
    .await
    .unwrap();
    assert_eq!(entry["accountId"], "acct-7");
    let body = String::from_utf8_lossy(&srv.requests()[0].body).into_owned();
    assert!(body.starts_with("grant_type=authorization_code&client_id=app_EMoamEEZ73f0CkXaXp7hrann&code=cx&code_verifier="), "{body}");
}

#[tokio::test]
async fn a_login_nobody_completes_times_out() {
    let _ports = FIXED_PORTS.lock().await;
    let err = login::login_anthropic(|_| {}, std::time::Duration::from_millis(100))
        .await
        .unwrap_err();
    assert_eq!(err.message(), "Login timed out");
}
