//! Browser logins against a fake authorization server: the test plays the browser and calls
//! the callback URL itself. They bind pi's fixed ports, so they run one at a time.

use std::sync::Mutex;

use serde_json::json;

use super::interaction::{LoginEvent, LoginMessage, LoginUi, PromptKind};
use super::tests::TEST_ORIGIN;
use super::*;
use crate::testkit::{ReplayServer, Reply};

/// A UI that hands the authorization URL to `on_url` and answers the paste prompt with
/// what `paste` makes of the URL (`None`: the prompt stays open, unanswered).
fn ui_with(
    on_url: impl FnOnce(&str) + Send + 'static,
    paste: impl Fn(&str) -> Option<String> + Send + 'static,
) -> LoginUi {
    let (ui, mut rx) = LoginUi::new();
    tokio::spawn(async move {
        let mut on_url = Some(on_url);
        let mut url = String::new();
        let mut held = Vec::new();
        while let Some(message) = rx.recv().await {
            match message {
                LoginMessage::Event(LoginEvent::AuthUrl { url: u, .. }) => {
                    url = u;
                    if let Some(f) = on_url.take() {
                        f(&url);
                    }
                }
                LoginMessage::Prompt(prompt, reply) => {
                    assert_eq!(prompt.kind, PromptKind::ManualCode);
                    match paste(&url) {
                        Some(text) => {
                            let _ = reply.send(text);
                        }
                        None => held.push(reply),
                    }
                }
                LoginMessage::Event(_) => {}
            }
        }
    });
    ui
}

fn browser_ui(on_url: impl FnOnce(&str) + Send + 'static) -> LoginUi {
    ui_with(on_url, |_| None)
}

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
fn browser(
    port: u16,
    path: &'static str,
    code: &'static str,
) -> impl FnOnce(&str) + Send + 'static {
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
        &browser_ui(move |url| {
            *seen2.lock().unwrap() = url.to_owned();
            open(url)
        }),
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
        &browser_ui(browser(1455, "/auth/callback", "cx")),
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
    let err = login::login_anthropic(&browser_ui(|_| {}), std::time::Duration::from_millis(100))
        .await
        .unwrap_err();
    assert_eq!(err.message(), "Login timed out");
}

#[tokio::test]
async fn a_pasted_code_with_its_state_completes_the_login() {
    let _ports = FIXED_PORTS.lock().await;
    let (_, srv) = ReplayServer::start(vec![Reply::json(
        200,
        &json!({"access_token": "sk-ant-oat01-p", "refresh_token": "sk-ant-ort01-p", "expires_in": 28800}),
    )])
    .await
    .unwrap();
    TEST_ORIGIN.with(|o| *o.borrow_mut() = Some(srv.base_url()));
    // The browser is elsewhere: the user pastes `code#state` from its page.
    let ui = ui_with(
        |_| {},
        |url| Some(format!("  pasted-code#{}  ", param(url, "state"))),
    );
    let entry = login::login_anthropic(&ui, std::time::Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(entry["access"], "sk-ant-oat01-p");
    let body = srv.requests()[0].body_json().unwrap();
    assert_eq!(body["code"], "pasted-code");
    assert_eq!(body["state"], body["code_verifier"]);
}

#[tokio::test]
async fn a_pasted_redirect_url_works_even_when_the_port_is_taken() {
    let _ports = FIXED_PORTS.lock().await;
    let _taken = std::net::TcpListener::bind(("127.0.0.1", 1455)).unwrap();
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let access = format!(
        "h.{}.s",
        b64.encode(
            json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-9"}}).to_string()
        )
    );
    let (_, srv) = ReplayServer::start(vec![Reply::json(
        200,
        &json!({"access_token": access, "refresh_token": "r", "expires_in": 864000}),
    )])
    .await
    .unwrap();
    TEST_ORIGIN.with(|o| *o.borrow_mut() = Some(srv.base_url()));
    let ui = ui_with(
        |_| {},
        |url| {
            Some(format!(
                "http://localhost:1455/auth/callback?code=from-url&state={}",
                param(url, "state")
            ))
        },
    );
    let entry = login::login_openai_codex(&ui, std::time::Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(entry["accountId"], "acct-9");
    let body = String::from_utf8_lossy(&srv.requests()[0].body).into_owned();
    assert!(body.contains("&code=from-url&"), "{body}");
}

#[tokio::test]
async fn a_pasted_state_that_is_not_the_logins_is_refused() {
    let _ports = FIXED_PORTS.lock().await;
    let ui = ui_with(|_| {}, |_| Some("c#not-the-state".into()));
    let err = login::login_anthropic(&ui, std::time::Duration::from_secs(10))
        .await
        .unwrap_err();
    assert_eq!(err.message(), "OAuth state mismatch");
    let ui = ui_with(|_| {}, |_| Some("https://x/cb?code=c&state=nope".into()));
    let err = login::login_openai_codex(&ui, std::time::Duration::from_secs(10))
        .await
        .unwrap_err();
    assert_eq!(err.message(), "State mismatch");
    // A blank paste has no code; a closed prompt is pi's cancellation.
    let ui = ui_with(|_| {}, |_| Some("   ".into()));
    let err = login::login_anthropic(&ui, std::time::Duration::from_secs(10))
        .await
        .unwrap_err();
    assert_eq!(err.message(), "Missing authorization code");
    let (ui, rx) = LoginUi::new();
    drop(rx);
    let err = login::login_anthropic(&ui, std::time::Duration::from_secs(10))
        .await
        .unwrap_err();
    assert_eq!(err.message(), "Login cancelled");
}

#[test]
fn pasted_input_is_parsed_as_pi_parses_it() {
    use super::interaction::parse_authorization_input as parse;
    let s = |v: &str| Some(v.to_owned());
    assert_eq!(
        parse("http://localhost:53692/callback?code=a%2Bb&state=st"),
        (s("a+b"), s("st"))
    );
    assert_eq!(parse(" abc#def "), (s("abc"), s("def")));
    assert_eq!(parse("abc#def#ghi"), (s("abc"), s("def")));
    assert_eq!(parse("code=x&state=y"), (s("x"), s("y")));
    assert_eq!(parse("just-the-code"), (s("just-the-code"), None));
    assert_eq!(parse(""), (None, None));
}

/// A UI that answers every text prompt with `answer` and records what it was shown.
fn recording_ui(answer: &'static str) -> (LoginUi, std::sync::Arc<Mutex<Vec<LoginEvent>>>) {
    let (ui, mut rx) = LoginUi::new();
    let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Some(message) = rx.recv().await {
            match message {
                LoginMessage::Event(e) => log.lock().unwrap().push(e),
                LoginMessage::Prompt(p, reply) => {
                    assert_eq!(p.kind, PromptKind::Text);
                    let _ = reply.send(answer.to_owned());
                }
            }
        }
    });
    (ui, seen)
}

#[tokio::test]
async fn copilot_enterprise_login_keeps_the_domain_and_an_expired_code_fails() {
    let (_, srv) = ReplayServer::start(vec![
        Reply::json(
            200,
            &json!({"device_code": "d", "user_code": "U-1", "verification_uri": "https://company.ghe.com/login/device", "interval": 1, "expires_in": 60}),
        ),
        Reply::json(200, &json!({"access_token": "ghu_ent"})),
        // No proxy-ep: the enterprise base URL, so no policy fallback.
        Reply::json(200, &json!({"token": "tid=ent", "expires_at": 4_102_444_800u64})),
        Reply::json(
            200,
            &json!({"data": [{"id": "gpt-4o", "model_picker_enabled": false, "policy": {"state": "enabled"}}]}),
        ),
        Reply::json(
            200,
            &json!({"device_code": "d2", "user_code": "U-2", "verification_uri": "https://github.com/login/device", "interval": 1, "expires_in": 60}),
        ),
        Reply::json(200, &json!({"error": "expired_token", "error_description": "The code has expired"})),
    ])
    .await
    .unwrap();
    TEST_ORIGIN.with(|o| *o.borrow_mut() = Some(srv.base_url()));
    let (ui, seen) = recording_ui("https://company.ghe.com/some/path");
    let entry = login::login("github-copilot", &ui).await.unwrap();
    assert_eq!(entry["enterpriseUrl"], "company.ghe.com");
    assert_eq!(entry["availableModelIds"], json!([]));
    assert_eq!(entry["expires"], json!(4_102_444_800_000u64 - 300_000));
    assert_eq!(
        seen.lock().unwrap()[0],
        LoginEvent::DeviceCode {
            user_code: "U-1".into(),
            verification_uri: "https://company.ghe.com/login/device".into()
        }
    );
    let (ui, _) = recording_ui("");
    let err = login::login("github-copilot", &ui).await.unwrap_err();
    assert_eq!(
        err.message(),
        "Device flow failed: expired_token: The code has expired"
    );
    // An untrusted verification page is refused before anything is shown.
    let (_, srv) = ReplayServer::start(vec![Reply::json(
        200,
        &json!({"device_code": "d", "user_code": "U", "verification_uri": "file:///etc/passwd", "expires_in": 60}),
    )])
    .await
    .unwrap();
    TEST_ORIGIN.with(|o| *o.borrow_mut() = Some(srv.base_url()));
    let (ui, seen) = recording_ui("");
    let err = login::login("github-copilot", &ui).await.unwrap_err();
    assert_eq!(
        err.message(),
        "Untrusted verification_uri in device code response"
    );
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn xai_device_login_shows_the_complete_uri_and_stores_pis_entry() {
    let (_, srv) = ReplayServer::start(vec![
        Reply::json(
            200,
            &json!({"device_code": "xd", "user_code": "X-1", "verification_uri": "https://accounts.x.ai/device", "verification_uri_complete": "https://accounts.x.ai/device?user_code=X-1", "interval": 1, "expires_in": 600}),
        ),
        Reply::json(400, &json!({"error": "authorization_pending"})),
        Reply::json(
            200,
            &json!({"access_token": "xa", "refresh_token": "xr", "expires_in": 7200}),
        ),
        Reply::json(
            200,
            &json!({"device_code": "xd2", "user_code": "X-2", "verification_uri": "https://accounts.x.ai/device", "interval": 1, "expires_in": 600}),
        ),
        Reply::json(400, &json!({"error": "access_denied"})),
    ])
    .await
    .unwrap();
    TEST_ORIGIN.with(|o| *o.borrow_mut() = Some(srv.base_url()));
    let (ui, seen) = recording_ui("");
    let entry = login::login("xai", &ui).await.unwrap();
    let keys: Vec<&str> = entry.keys().map(String::as_str).collect();
    assert_eq!(keys, ["type", "access", "refresh", "expires"]);
    assert_eq!(
        (entry["access"].as_str(), entry["refresh"].as_str()),
        (Some("xa"), Some("xr"))
    );
    assert_eq!(
        seen.lock().unwrap()[0],
        LoginEvent::DeviceCode {
            user_code: "X-1".into(),
            verification_uri: "https://accounts.x.ai/device?user_code=X-1".into()
        }
    );
    let reqs = srv.requests();
    assert_eq!(reqs[0].path, "/oauth2/device/code");
    assert_eq!(
        String::from_utf8_lossy(&reqs[0].body),
        "client_id=b1a00492-073a-47ea-816f-4c329264a828&scope=openid+profile+email+offline_access+grok-cli%3Aaccess+api%3Aaccess&referrer=pi"
    );
    assert_eq!(reqs[1].path, "/oauth2/token");
    let (ui, _) = recording_ui("");
    let err = login::login("xai", &ui).await.unwrap_err();
    assert_eq!(err.message(), "xAI device authorization was denied");
}

#[tokio::test]
async fn kimi_device_login_polls_its_host_and_stores_pis_entry() {
    let (_, srv) = ReplayServer::start(vec![
        Reply::json(
            200,
            &json!({"device_code": "kd", "user_code": "K-1", "verification_uri": "https://www.kimi.com/device", "verification_uri_complete": "https://www.kimi.com/device?code=K-1", "interval": 1, "expires_in": 600}),
        ),
        Reply::json(400, &json!({"error": "slow_down"})),
        Reply::json(
            200,
            &json!({"access_token": "ka", "refresh_token": "kr", "expires_in": 3600}),
        ),
    ])
    .await
    .unwrap();
    TEST_ORIGIN.with(|o| *o.borrow_mut() = Some(srv.base_url()));
    let (ui, seen) = recording_ui("");
    let started = std::time::Instant::now();
    let entry = login::login("kimi-coding", &ui).await.unwrap();
    // A slow_down without an interval adds 5 s to the 1 s one.
    assert!(started.elapsed() >= std::time::Duration::from_secs(7));
    let keys: Vec<&str> = entry.keys().map(String::as_str).collect();
    assert_eq!(keys, ["type", "access", "refresh", "expires"]);
    assert_eq!(entry["access"], "ka");
    assert_eq!(
        seen.lock().unwrap()[0],
        LoginEvent::DeviceCode {
            user_code: "K-1".into(),
            verification_uri: "https://www.kimi.com/device?code=K-1".into()
        }
    );
    let reqs = srv.requests();
    assert_eq!(reqs[0].path, "/api/oauth/device_authorization");
    assert_eq!(
        String::from_utf8_lossy(&reqs[2].body),
        "client_id=17e5f671-d194-4dfb-9706-5516cb48c098&device_code=kd&grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code"
    );
}

#[tokio::test]
async fn openrouter_login_buys_a_key_through_its_ephemeral_callback() {
    let (_, srv) = ReplayServer::start(vec![
        Reply::json(200, &json!({"key": "sk-or-v1-bought"})),
        Reply::json(403, &json!({"error": {"message": "Invalid code"}})),
    ])
    .await
    .unwrap();
    TEST_ORIGIN.with(|o| *o.borrow_mut() = Some(srv.base_url()));
    // The browser follows the authorize URL's callback_url with a code (no state).
    let ui = ui_with(
        |url| {
            let callback = param(url, "callback_url");
            assert!(callback.starts_with("http://127.0.0.1:"), "{callback}");
            assert!(callback.contains("/oauth/callback/"), "{callback}");
            assert_eq!(param(url, "code_challenge_method"), "S256");
            tokio::spawn(async move {
                let r = reqwest::get(format!("{callback}?code=or-code"))
                    .await
                    .unwrap();
                assert_eq!(r.status().as_u16(), 200);
            });
        },
        |_| None,
    );
    let entry = login::login("openrouter", &ui).await.unwrap();
    assert_eq!(
        serde_json::Value::Object(entry),
        json!({"type": "oauth", "access": "sk-or-v1-bought", "refresh": "", "expires": 9_007_199_254_740_991u64})
    );
    let body = srv.requests()[0].body_json().unwrap();
    assert_eq!(body["code"], "or-code");
    assert_eq!(body["code_challenge_method"], "S256");
    assert!(body["code_verifier"].is_string());
    // A pasted redirect URL; the exchange's refusal is pi's text.
    let ui = ui_with(
        |_| {},
        |_| Some("http://127.0.0.1:1/oauth/callback/x?code=pasted".into()),
    );
    let err = login::login("openrouter", &ui).await.unwrap_err();
    assert_eq!(
        err.message(),
        "OpenRouter OAuth key exchange failed (HTTP 403): Invalid code"
    );
    assert_eq!(srv.requests()[1].body_json().unwrap()["code"], "pasted");
}

#[tokio::test]
async fn codex_device_login_failures_have_pis_texts() {
    let (_, srv) = ReplayServer::start(vec![
        Reply::json(404, &json!({})),
        Reply::json(200, &json!({"user_code": "U"})),
        Reply::json(
            200,
            &json!({"device_auth_id": "d", "user_code": "U", "interval": 1}),
        ),
        Reply::json(500, &json!({"error": "boom"})),
    ])
    .await
    .unwrap();
    TEST_ORIGIN.with(|o| *o.borrow_mut() = Some(srv.base_url()));
    let (ui, _) = recording_ui("");
    let err = login::login_openai_codex_device(&ui).await.unwrap_err();
    assert_eq!(
        err.message(),
        "OpenAI Codex device code login is not enabled for this server. Use browser login or verify the server URL."
    );
    let err = login::login_openai_codex_device(&ui).await.unwrap_err();
    assert_eq!(
        err.message(),
        r#"Invalid OpenAI Codex device code response: {"user_code":"U"}"#
    );
    let err = login::login_openai_codex_device(&ui).await.unwrap_err();
    assert_eq!(
        err.message(),
        r#"OpenAI Codex device auth failed with status 500: {"error":"boom"}"#
    );
}
