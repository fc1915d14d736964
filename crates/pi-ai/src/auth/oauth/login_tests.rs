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
