//! The browser logins pi runs without a terminal UI (pi-ai 0.85.1 `auth/oauth/anthropic.js`
//! `loginAnthropic`, `openai-codex.js` `loginOpenAICodex`): PKCE, the authorization URL handed
//! to the caller (who opens a browser or shows it), the local callback server on pi's fixed
//! port, and the code exchange. The result is the `auth.json` entry pi writes.
//!
//! Beside the callback server each flow asks for the paste-the-code fallback (pi's
//! `manual_code` prompt): the final redirect URL, `code#state` or the bare code, for a browser
//! on another machine. A pasted state must be the login's. When the fixed port cannot be
//! bound, the paste is the only way in (pi does this for Codex; for Anthropic pi fails the
//! login, which leaves a user whose port is taken no way to sign in).

use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::callback::{CallbackServer, callback_host};
use super::http::{Exchange, form, send};
use super::interaction::{
    LOGIN_CANCELLED, LoginEvent, LoginPrompt, LoginUi, PromptKind, pasted_code,
};
use super::pkce::{generate, random_bytes};
use super::{OAuthError, anthropic, endpoint, openai_codex};

/// pi's text of the paste-the-code prompt.
const MANUAL_PROMPT: &str =
    "Complete login in your browser, or paste the authorization code / redirect URL here:";

/// The code and state of a browser login: from the callback server (when it is bound) or the
/// pasted answer, whichever comes first, within `timeout`.
async fn code_and_state(
    server: Option<CallbackServer>,
    ui: &LoginUi,
    placeholder: &str,
    expected_state: &str,
    mismatch: &str,
    timeout: Duration,
) -> Result<(String, String), OAuthError> {
    let answer = ui.ask(LoginPrompt {
        kind: PromptKind::ManualCode,
        message: MANUAL_PROMPT.into(),
        placeholder: Some(placeholder.into()),
    });
    let pasted = async {
        let text = answer.await.map_err(|_| OAuthError::new(LOGIN_CANCELLED))?;
        pasted_code(&text, expected_state, mismatch)
    };
    match server {
        Some(server) => {
            tokio::select! {
                callback = server.wait(timeout) => callback.map(|c| (c.code, c.state)),
                pasted = pasted => pasted,
            }
        }
        None => tokio::time::timeout(timeout, pasted)
            .await
            .unwrap_or_else(|_| Err(OAuthError::new("Login timed out"))),
    }
}

/// How long a browser login waits for the callback.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(5 * 60);
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);

const ANTHROPIC_AUTHORIZE_URL: &str = "https://claude.ai/oauth/authorize";
const ANTHROPIC_PORT: u16 = 53692;
const ANTHROPIC_PATH: &str = "/callback";
const ANTHROPIC_SCOPES: &str = "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload";
const CODEX_AUTHORIZE_URL: &str = "https://auth.openai.com/oauth/authorize";
const CODEX_PORT: u16 = 1455;
const CODEX_PATH: &str = "/auth/callback";
const CODEX_REDIRECT_URI: &str = "http://localhost:1455/auth/callback";
const CODEX_SCOPE: &str = "openid profile email offline_access";

fn query(base: &str, pairs: &[(&str, &str)]) -> String {
    format!("{base}?{}", form(pairs))
}

/// Signs in to Claude Pro/Max: `ui` is shown the authorization URL and asked for the pasted
/// code; the callback arrives on `http://localhost:53692/callback`.
///
/// Errors: the login times out or is cancelled, a pasted state is not the login's
/// (`OAuth state mismatch`), the exchange fails
/// (`Token exchange request failed. url=…; redirect_uri=…; response_type=authorization_code; details=…`).
pub async fn login_anthropic(
    ui: &LoginUi,
    timeout: Duration,
) -> Result<Map<String, Value>, OAuthError> {
    let pkce = generate()?;
    let server = CallbackServer::bind(
        &callback_host(),
        ANTHROPIC_PORT,
        ANTHROPIC_PATH,
        &pkce.verifier,
    )
    .await
    .ok();
    let redirect_uri = format!("http://localhost:{ANTHROPIC_PORT}{ANTHROPIC_PATH}");
    let url = query(
        ANTHROPIC_AUTHORIZE_URL,
        &[
            ("code", "true"),
            ("client_id", anthropic::CLIENT_ID),
            ("response_type", "code"),
            ("redirect_uri", &redirect_uri),
            ("scope", ANTHROPIC_SCOPES),
            ("code_challenge", &pkce.challenge),
            ("code_challenge_method", "S256"),
            ("state", &pkce.verifier),
        ],
    );
    ui.notify(LoginEvent::AuthUrl {
        url,
        instructions: "Complete login in your browser. If the browser is on another machine, paste the final redirect URL here.".into(),
    });
    let (code, state) = code_and_state(
        server,
        ui,
        &redirect_uri,
        &pkce.verifier,
        "OAuth state mismatch",
        timeout,
    )
    .await?;
    ui.notify(LoginEvent::Progress(
        "Exchanging authorization code for tokens...".into(),
    ));
    let body = json!({
        "grant_type": "authorization_code",
        "client_id": anthropic::CLIENT_ID,
        "code": code,
        "state": state,
        "redirect_uri": redirect_uri,
        "code_verifier": pkce.verifier,
    });
    let reply = anthropic::post_json(anthropic::TOKEN_URL, &body, Instant::now() + EXCHANGE_TIMEOUT)
        .await
        .map_err(|details| {
            OAuthError::new(format!(
                "Token exchange request failed. url={}; redirect_uri={redirect_uri}; response_type=authorization_code; details={details}",
                anthropic::TOKEN_URL
            ))
        })?;
    anthropic::credential_from(&reply, "", "Token exchange")
}

/// Signs in to ChatGPT Plus/Pro (Codex): `ui` is shown the authorization URL and asked for
/// the pasted code; the callback arrives on `http://localhost:1455/auth/callback`.
///
/// Errors: as [`login_anthropic`] (a pasted state that is not the login's: `State mismatch`);
/// the exchange's `OpenAI Codex token exchange failed (<s>): …`,
/// `Failed to extract accountId from token`.
pub async fn login_openai_codex(
    ui: &LoginUi,
    timeout: Duration,
) -> Result<Map<String, Value>, OAuthError> {
    let pkce = generate()?;
    let state: String = random_bytes(16)?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let server = CallbackServer::bind(&callback_host(), CODEX_PORT, CODEX_PATH, &state)
        .await
        .ok();
    let url = query(
        CODEX_AUTHORIZE_URL,
        &[
            ("response_type", "code"),
            ("client_id", openai_codex::CLIENT_ID),
            ("redirect_uri", CODEX_REDIRECT_URI),
            ("scope", CODEX_SCOPE),
            ("code_challenge", &pkce.challenge),
            ("code_challenge_method", "S256"),
            ("state", &state),
            ("id_token_add_organizations", "true"),
            ("codex_cli_simplified_flow", "true"),
            ("originator", "pi"),
        ],
    );
    ui.notify(LoginEvent::AuthUrl {
        url,
        instructions: "A browser window should open. Complete login to finish.".into(),
    });
    let (code, _) = code_and_state(
        server,
        ui,
        CODEX_REDIRECT_URI,
        &state,
        "State mismatch",
        timeout,
    )
    .await?;
    codex_exchange(&code, &pkce.verifier, CODEX_REDIRECT_URI).await
}

/// The Codex code exchange: `{type, access, refresh, expires, accountId}`.
async fn codex_exchange(
    code: &str,
    verifier: &str,
    redirect_uri: &str,
) -> Result<Map<String, Value>, OAuthError> {
    let token_url = endpoint(openai_codex::TOKEN_URL);
    let reply = send(
        Exchange {
            method: reqwest::Method::POST,
            url: &token_url,
            headers: &[("Content-Type", "application/x-www-form-urlencoded")],
            body: Some(form(&[
                ("grant_type", "authorization_code"),
                ("client_id", openai_codex::CLIENT_ID),
                ("code", code),
                ("code_verifier", verifier),
                ("redirect_uri", redirect_uri),
            ])),
        },
        Instant::now() + EXCHANGE_TIMEOUT,
    )
    .await
    .map_err(|e| OAuthError::new(e.message()))?;
    openai_codex::credential_from(
        reply.status,
        &reply.status_text,
        &reply.body,
        "",
        "exchange",
    )
}

const CODEX_DEVICE_USER_CODE_URL: &str = "https://auth.openai.com/api/accounts/deviceauth/usercode";
const CODEX_DEVICE_TOKEN_URL: &str = "https://auth.openai.com/api/accounts/deviceauth/token";
const CODEX_DEVICE_VERIFICATION_URI: &str = "https://auth.openai.com/codex/device";
const CODEX_DEVICE_REDIRECT_URI: &str = "https://auth.openai.com/deviceauth/callback";
const CODEX_DEVICE_LIFETIME_SECONDS: f64 = 15.0 * 60.0;

/// A JSON `POST` of the Codex device flow: status and body text.
async fn codex_post(url: &str, body: &Value) -> Result<(u16, String), OAuthError> {
    let url = endpoint(url);
    let reply = send(
        Exchange {
            method: reqwest::Method::POST,
            url: &url,
            headers: &[("Content-Type", "application/json")],
            body: Some(body.to_string()),
        },
        Instant::now() + EXCHANGE_TIMEOUT,
    )
    .await
    .map_err(|e| OAuthError::new(e.message()))?;
    Ok((reply.status, reply.body))
}

fn with_body(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(": {text}")
    }
}

/// pi's `loginOpenAICodexDeviceCode`: a user code for `https://auth.openai.com/codex/device`,
/// polled until it yields an authorization code, which is exchanged as the browser's is.
///
/// Errors: `OpenAI Codex device code login is not enabled for this server. …` (404), `OpenAI
/// Codex device code request failed with status <s>: …`, `Invalid OpenAI Codex device code
/// response: <json>`, `OpenAI Codex device auth failed with status <s>: …`, the device
/// flow's timeouts, the exchange's texts.
pub async fn login_openai_codex_device(ui: &LoginUi) -> Result<Map<String, Value>, OAuthError> {
    use super::device::{Poll, poll_device_flow};
    let (status, text) = codex_post(
        CODEX_DEVICE_USER_CODE_URL,
        &json!({"client_id": openai_codex::CLIENT_ID}),
    )
    .await?;
    if status == 404 {
        return Err(OAuthError::new(
            "OpenAI Codex device code login is not enabled for this server. Use browser login or verify the server URL.",
        ));
    }
    if !(200..300).contains(&status) {
        return Err(OAuthError::new(format!(
            "OpenAI Codex device code request failed with status {status}{}",
            with_body(&text)
        )));
    }
    let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let interval = match json.get("interval") {
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        Some(v) => v.as_f64(),
        None => None,
    }
    .filter(|n| n.is_finite() && *n >= 0.0);
    let field = |k: &str| {
        json.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let (Some(device_auth_id), Some(user_code), Some(interval)) =
        (field("device_auth_id"), field("user_code"), interval)
    else {
        return Err(OAuthError::new(format!(
            "Invalid OpenAI Codex device code response: {}",
            crate::json::to_string(&json).unwrap_or_default()
        )));
    };
    ui.notify(LoginEvent::DeviceCode {
        user_code: user_code.clone(),
        verification_uri: CODEX_DEVICE_VERIFICATION_URI.into(),
    });
    let poll_body = json!({"device_auth_id": device_auth_id, "user_code": user_code});
    let (code, verifier) = poll_device_flow(
        Some(interval),
        Some(CODEX_DEVICE_LIFETIME_SECONDS),
        false,
        || async {
            let (status, text) = codex_post(CODEX_DEVICE_TOKEN_URL, &poll_body).await?;
            if (200..300).contains(&status) {
                let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let get = |k: &str| {
                    json.get(k)
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                };
                return Ok(match (get("authorization_code"), get("code_verifier")) {
                    (Some(c), Some(v)) => Poll::Complete((c.to_owned(), v.to_owned())),
                    _ => Poll::Failed(format!(
                        "Invalid OpenAI Codex device auth token response: {}",
                        crate::json::to_string(&json).unwrap_or_default()
                    )),
                });
            }
            if status == 403 || status == 404 {
                return Ok(Poll::Pending);
            }
            let error = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|j| j.get("error").cloned());
            let code = match &error {
                Some(Value::Object(o)) => o.get("code").and_then(Value::as_str),
                Some(Value::String(s)) => Some(s.as_str()),
                _ => None,
            };
            Ok(match code {
                Some("deviceauth_authorization_pending") => Poll::Pending,
                Some("slow_down") => Poll::SlowDown(None),
                _ => Poll::Failed(format!(
                    "OpenAI Codex device auth failed with status {status}{}",
                    with_body(&text)
                )),
            })
        },
    )
    .await?;
    codex_exchange(&code, &verifier, CODEX_DEVICE_REDIRECT_URI).await
}

/// pi's Codex `login`: asks for the method (the browser, or a device code for a machine
/// without one), then runs it.
async fn login_openai_codex_any(ui: &LoginUi) -> Result<Map<String, Value>, OAuthError> {
    let method = ui
        .prompt(LoginPrompt {
            kind: PromptKind::Select(vec![
                ("browser".into(), "Browser login (default)".into()),
                ("device_code".into(), "Device code login (headless)".into()),
            ]),
            message: "Select OpenAI Codex login method:".into(),
            placeholder: None,
        })
        .await?;
    match method.as_str() {
        "browser" => login_openai_codex(ui, LOGIN_TIMEOUT).await,
        "device_code" => login_openai_codex_device(ui).await,
        other => Err(OAuthError::new(format!(
            "Unknown OpenAI Codex login method: {other}"
        ))),
    }
}

/// Runs the login of `provider` pi has (`Login cancelled` and friends as its errors).
///
/// Errors: `No OAuth login for provider <p>` for one pi-rs has no flow for; the flow's own.
pub async fn login(provider: &str, ui: &LoginUi) -> Result<Map<String, Value>, OAuthError> {
    match provider {
        "anthropic" => login_anthropic(ui, LOGIN_TIMEOUT).await,
        "openai-codex" => login_openai_codex_any(ui).await,
        "github-copilot" => super::github_copilot::login(ui).await,
        "xai" => super::xai::login(ui).await,
        "kimi-coding" => super::kimi::login(ui).await,
        "openrouter" => super::openrouter::login(ui).await,
        other => Err(OAuthError::new(format!(
            "No OAuth login for provider {other}"
        ))),
    }
}

/// Whether [`login`] has a flow for `provider`.
pub fn has_login(provider: &str) -> bool {
    matches!(
        provider,
        "anthropic" | "openai-codex" | "github-copilot" | "xai" | "kimi-coding" | "openrouter"
    )
}
