//! The browser logins pi runs without a terminal UI (pi-ai 0.85.1 `auth/oauth/anthropic.js`
//! `loginAnthropic`, `openai-codex.js` `loginOpenAICodex`): PKCE, the authorization URL handed
//! to the caller (who opens a browser or shows it), the local callback server on pi's fixed
//! port, and the code exchange. The result is the `auth.json` entry pi writes.
//!
//! The paste-the-code fallback and the provider picker belong to the interactive `/login`,
//! which pi-rs does not have yet.

use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::callback::{CallbackServer, callback_host};
use super::http::{Exchange, form, send};
use super::pkce::{generate, random_bytes};
use super::{OAuthError, anthropic, endpoint, openai_codex};

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

/// Signs in to Claude Pro/Max: `on_url` gets the authorization URL; the callback arrives on
/// `http://localhost:53692/callback`.
///
/// Errors: the port is taken, the login times out, the exchange fails
/// (`Token exchange request failed. url=…; redirect_uri=…; response_type=authorization_code; details=…`).
pub async fn login_anthropic(
    on_url: impl FnOnce(&str),
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
    .map_err(|e| OAuthError::new(e.to_string()))?;
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
    on_url(&url);
    let callback = server.wait(timeout).await?;
    drop(server);
    let body = json!({
        "grant_type": "authorization_code",
        "client_id": anthropic::CLIENT_ID,
        "code": callback.code,
        "state": callback.state,
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

/// Signs in to ChatGPT Plus/Pro (Codex): `on_url` gets the authorization URL; the callback
/// arrives on `http://localhost:1455/auth/callback`.
///
/// Errors: as [`login_anthropic`]; the exchange's `OpenAI Codex token exchange failed (<s>): …`,
/// `Failed to extract accountId from token`.
pub async fn login_openai_codex(
    on_url: impl FnOnce(&str),
    timeout: Duration,
) -> Result<Map<String, Value>, OAuthError> {
    let pkce = generate()?;
    let state: String = random_bytes(16)?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let server = CallbackServer::bind(&callback_host(), CODEX_PORT, CODEX_PATH, &state)
        .await
        .map_err(|e| OAuthError::new(e.to_string()))?;
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
    on_url(&url);
    let callback = server.wait(timeout).await?;
    drop(server);
    let token_url = endpoint(openai_codex::TOKEN_URL);
    let reply = send(
        Exchange {
            method: reqwest::Method::POST,
            url: &token_url,
            headers: &[("Content-Type", "application/x-www-form-urlencoded")],
            body: Some(form(&[
                ("grant_type", "authorization_code"),
                ("client_id", openai_codex::CLIENT_ID),
                ("code", &callback.code),
                ("code_verifier", &pkce.verifier),
                ("redirect_uri", CODEX_REDIRECT_URI),
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
