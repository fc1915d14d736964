//! OpenRouter: pi-ai 0.85.1 `auth/oauth/openrouter.js`. The login is browser PKCE with a
//! callback server on an ephemeral port (path `/oauth/callback/<random uuid>`) beside the
//! paste-the-code fallback, and the code is exchanged for a permanent API key, stored as an
//! OAuth entry that never expires: `{type, access: <key>, refresh: "", expires:
//! Number.MAX_SAFE_INTEGER}`.

use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::callback::{CallbackServer, callback_host};
use super::http::{Exchange, FetchError, form, send};
use super::interaction::{LOGIN_CANCELLED, LoginEvent, LoginPrompt, LoginUi, PromptKind};
use super::pkce::{generate, random_bytes};
use super::{OAuthError, endpoint, entry};

const AUTHORIZE_URL: &str = "https://openrouter.ai/auth";
const TOKEN_URL: &str = "https://openrouter.ai/api/v1/auth/keys";
const LOGIN_TIMEOUT: Duration = Duration::from_secs(5 * 60);
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);
/// `Number.MAX_SAFE_INTEGER`, pi's "never expires".
const NEVER: u64 = 9_007_199_254_740_991;

/// pi's `parseAuthorizationInput` of this flow: the `code` of a URL or query string, else
/// the text itself (`None` for blank input).
pub(crate) fn parse_code(input: &str) -> Option<String> {
    let value = input.trim();
    if value.is_empty() {
        return None;
    }
    let code_of = |pairs: url::form_urlencoded::Parse<'_>| {
        pairs
            .into_iter()
            .find(|(k, _)| k == "code")
            .map(|(_, v)| v.into_owned())
    };
    if let Ok(url) = url::Url::parse(value) {
        return code_of(url.query_pairs());
    }
    if value.contains("code=") {
        return code_of(url::form_urlencoded::parse(value.as_bytes()));
    }
    Some(value.to_owned())
}

/// A random version-4 UUID (`crypto.randomUUID()`).
fn random_uuid() -> Result<String, OAuthError> {
    let mut b = random_bytes(16)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// pi's `errorDetail`: `error_description`, `message`, `error` (a string, or an object's
/// `message`).
fn error_detail(body: &Map<String, Value>) -> Option<String> {
    let s = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_owned);
    s("error_description")
        .or_else(|| s("message"))
        .or_else(|| s("error"))
        .or_else(|| {
            body.get("error")?
                .get("message")?
                .as_str()
                .map(str::to_owned)
        })
}

/// pi's `exchangeAuthorizationCode`: `POST …/api/v1/auth/keys` with the code and verifier.
async fn exchange(code: &str, verifier: &str) -> Result<Map<String, Value>, OAuthError> {
    let url = endpoint(TOKEN_URL);
    let body = json!({"code": code, "code_verifier": verifier, "code_challenge_method": "S256"});
    let reply = send(
        Exchange {
            method: reqwest::Method::POST,
            url: &url,
            headers: &[
                ("accept", "application/json"),
                ("content-type", "application/json"),
            ],
            body: Some(body.to_string()),
        },
        Instant::now() + EXCHANGE_TIMEOUT,
    )
    .await
    .map_err(|e| match e {
        FetchError::Timeout => OAuthError::new("OpenRouter OAuth token exchange timed out"),
        other => OAuthError::new(other.message()),
    })?;
    let parsed = serde_json::from_str::<Value>(&reply.body);
    if parsed.is_err() && reply.ok() {
        return Err(OAuthError::new("OpenRouter OAuth returned invalid JSON"));
    }
    let body = match parsed {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    if !reply.ok() {
        let detail = error_detail(&body)
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        return Err(OAuthError::new(format!(
            "OpenRouter OAuth key exchange failed (HTTP {}){detail}",
            reply.status
        )));
    }
    let Some(key) = body
        .get("key")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
    else {
        return Err(OAuthError::new(
            "OpenRouter OAuth response carries no \"key\"",
        ));
    };
    Ok(entry(vec![
        ("access", Value::from(key)),
        ("refresh", Value::from("")),
        ("expires", Value::from(NEVER)),
    ]))
}

fn denied(description: &str) -> String {
    format!("OpenRouter authorization failed: {description}")
}

/// pi's `loginOpenRouter`.
///
/// Errors: `OpenRouter OAuth login timed out`, `OpenRouter authorization failed: …`,
/// `Missing authorization code`, the exchange's texts, `Login cancelled`.
pub(crate) async fn login(ui: &LoginUi) -> Result<Map<String, Value>, OAuthError> {
    let pkce = generate()?;
    let path = format!("/oauth/callback/{}", random_uuid()?);
    let host = callback_host();
    let server = CallbackServer::bind(&host, 0, &path, "")
        .await
        .map_err(|e| OAuthError::new(e.to_string()))?
        .without_state(denied);
    let port = server.port().unwrap_or(0);
    let callback_url = format!("http://{host}:{port}{path}");
    let url = format!(
        "{AUTHORIZE_URL}?{}",
        form(&[
            ("callback_url", &callback_url),
            ("code_challenge", &pkce.challenge),
            ("code_challenge_method", "S256"),
        ])
    );
    ui.notify(LoginEvent::Progress(format!(
        "Listening for OpenRouter OAuth callback on {callback_url}"
    )));
    ui.notify(LoginEvent::AuthUrl {
        url,
        instructions: "Complete sign-in in your browser. If the browser is on another machine, paste the final redirect URL here.".into(),
    });
    let answer = ui.ask(LoginPrompt {
        kind: PromptKind::ManualCode,
        message:
            "Complete sign-in in your browser, or paste the authorization code / redirect URL here:"
                .into(),
        placeholder: Some(callback_url.clone()),
    });
    let code = tokio::select! {
        callback = server.wait(LOGIN_TIMEOUT) => match callback {
            Ok(c) => c.code,
            Err(e) if e.message() == "Login timed out" => {
                return Err(OAuthError::new("OpenRouter OAuth login timed out"));
            }
            Err(e) => return Err(e),
        },
        pasted = answer => {
            let text = pasted.map_err(|_| OAuthError::new(LOGIN_CANCELLED))?;
            let code = parse_code(&text)
                .ok_or_else(|| OAuthError::new("Missing authorization code"))?;
            ui.notify(LoginEvent::Progress(
                "Exchanging authorization code for an API key...".into(),
            ));
            code
        }
    };
    drop(server);
    exchange(&code, &pkce.verifier).await
}
