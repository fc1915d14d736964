//! OAuth credentials: the providers pi signs in to, their token refresh, and what a request
//! derives from a credential.
//!
//! Mirrors pi-ai 0.85.1 `auth/oauth/*.js` and `auth/resolve.js`. A credential is the
//! `auth.json` entry `{"type":"oauth","access","refresh","expires"(epoch ms),…extra}` kept as a
//! JSON object, so fields pi-rs does not know survive. [`refresh`] performs one provider's
//! refresh exchange and returns the entry to store in place of the old one, keys in pi's order:
//!
//! | provider | exchange | `expires` |
//! |---|---|---|
//! | `anthropic` | JSON `POST https://platform.claude.com/v1/oauth/token` | `expires_in` − 5 min |
//! | `openai-codex` | form `POST https://auth.openai.com/oauth/token`; `accountId` from the JWT | `expires_in` |
//! | `github-copilot` | `GET https://api.<domain>/copilot_internal/v2/token` with the GitHub token, then `GET <base>/models` for `availableModelIds` | `expires_at` − 5 min |
//! | `xai` | form `POST https://auth.x.ai/oauth2/token` | `expires_in` (default 3600 s) − 5 min |
//! | `kimi-coding` | form `POST <KIMI_CODE_OAUTH_HOST or https://auth.kimi.com>/api/oauth/token`, retried on 429/5xx | `expires_in` |
//! | `openrouter` | none: the credential is a non-expiring API key | — |
//!
//! One deliberate difference: a refresh response without a `refresh_token` keeps the stored
//! one (the server did not rotate it). pi 0.85 writes `undefined` for Anthropic, which drops
//! the field and breaks the entry (earendil-works/pi#9369), and fails Codex and Kimi.
//!
//! Logins ([`login`]), talking to their UI through [`interaction`]: the browser PKCE flows of
//! Anthropic and Codex with the local callback server on pi's fixed ports ([`callback`],
//! [`pkce`]) and the paste-the-code fallback, OpenRouter's (an ephemeral port; the code buys
//! a permanent key); the device-code flows of GitHub Copilot, xAI and
//! Kimi.
//!
//! Tests only: in debug builds (`cfg(debug_assertions)`) the variable `PI_RS_TEST_OAUTH_ORIGIN`
//! (e.g. `http://127.0.0.1:4010`) replaces the scheme, host and port of every endpoint here,
//! Copilot's derived API base URL included, and `PI_RS_TEST_OAUTH_TIMEOUT_MS` shortens the
//! refresh timeout. Release builds compile neither, so no environment can send tokens
//! elsewhere.

mod anthropic;
pub mod callback;
mod device;
pub mod interaction;

mod github_copilot;
pub(crate) mod http;
mod kimi;
pub mod login;

mod openai_codex;
mod openrouter;
pub mod pkce;

mod xai;

use std::time::Duration;

use serde_json::{Map, Value};

pub use github_copilot::{available_model_ids, copilot_base_url, normalize_domain};
pub use openai_codex::account_id_from_jwt;

/// pi's refresh timeout (`DEFAULT_OAUTH_REFRESH_TIMEOUT_MS`).
pub const REFRESH_TIMEOUT: Duration = Duration::from_secs(15);
/// An OAuth credential is refreshed when it expires within this window.
pub const MIN_VALIDITY: Duration = Duration::from_secs(5 * 60);

/// The providers with an OAuth flow, as pi-ai 0.85.1 registers them (Radius excepted: its
/// models need the `pi-messages` API).
pub const OAUTH_PROVIDERS: &[&str] = &[
    "anthropic",
    "openai-codex",
    "github-copilot",
    "xai",
    "kimi-coding",
    "openrouter",
];

/// Whether `provider` accepts a stored OAuth credential.
pub fn is_oauth_provider(provider: &str) -> bool {
    OAUTH_PROVIDERS.contains(&provider)
}

/// The display name of a provider's OAuth flow (pi's `OAuthAuth.name`).
pub fn oauth_name(provider: &str) -> Option<&'static str> {
    Some(match provider {
        "anthropic" => "Anthropic (Claude Pro/Max)",
        "openai-codex" => "OpenAI (ChatGPT Plus/Pro)",
        "github-copilot" => "GitHub Copilot",
        "xai" => "xAI (Grok/X subscription)",
        "kimi-coding" => "Kimi Code (subscription)",
        "openrouter" => "OpenRouter OAuth",
        _ => return None,
    })
}

/// A failed refresh or login step: pi's text of the cause (the caller prefixes
/// `OAuth refresh failed for <provider>: `).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OAuthError {
    message: String,
}

impl OAuthError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        OAuthError {
            message: message.into(),
        }
    }

    /// The text.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// What a request derives from a credential (pi's `toAuth`).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthAuth {
    /// The key the wire API sends its usual way (most providers: `access`).
    pub api_key: Option<String>,
    /// Headers instead of a key (Kimi: `Authorization: Bearer <access>`).
    pub headers: Vec<(String, String)>,
    /// A base URL replacing the model's (Copilot: from the token's `proxy-ep`).
    pub base_url: Option<String>,
}

impl std::fmt::Debug for OAuthAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthAuth")
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("base_url", &self.base_url)
            .finish()
    }
}

/// The credential's `access` token.
pub fn access(credential: &Map<String, Value>) -> Option<&str> {
    credential.get("access")?.as_str()
}

/// The credential's `expires` (epoch ms).
pub fn expires(credential: &Map<String, Value>) -> Option<f64> {
    credential.get("expires")?.as_f64()
}

/// pi's `expiresSoon`: `now + max(5 min, min_validity) >= expires` (a missing or non-finite
/// `expires` counts as expired).
pub fn expires_soon(credential: &Map<String, Value>, min_validity: Option<Duration>) -> bool {
    let window = min_validity.map_or(MIN_VALIDITY, |m| m.max(MIN_VALIDITY));
    let Some(expires) = expires(credential).filter(|e| e.is_finite()) else {
        return true;
    };
    http::now_ms() + window.as_millis() as f64 >= expires
}

/// What a request to `provider` derives from its credential (pi's `toAuth`).
pub fn to_auth(provider: &str, credential: &Map<String, Value>) -> OAuthAuth {
    let access = access(credential).map(str::to_owned);
    match provider {
        "kimi-coding" => OAuthAuth {
            api_key: None,
            headers: access
                .map(|a| vec![("Authorization".to_owned(), format!("Bearer {a}"))])
                .unwrap_or_default(),
            base_url: None,
        },
        "github-copilot" => OAuthAuth {
            base_url: Some(endpoint(&copilot_base_url(
                access.as_deref(),
                github_copilot::enterprise_domain(credential).as_deref(),
            ))),
            api_key: access,
            headers: Vec::new(),
        },
        _ => OAuthAuth {
            api_key: access,
            ..Default::default()
        },
    }
}

/// Refreshes `credential` of `provider` with pi's exchange, within `timeout`, and returns the
/// entry to store.
///
/// Errors: the provider's failure text (HTTP status and body, invalid JSON, missing fields,
/// the timeout as `The operation was aborted due to timeout`), or
/// `No OAuth refresh for provider <p>` for a provider without a flow.
pub async fn refresh(
    provider: &str,
    credential: &Map<String, Value>,
    timeout: Duration,
) -> Result<Map<String, Value>, OAuthError> {
    let deadline = tokio::time::Instant::now() + test_timeout().unwrap_or(timeout);
    let refresh_token = credential
        .get("refresh")
        .and_then(Value::as_str)
        .unwrap_or("");
    match provider {
        "anthropic" => anthropic::refresh(refresh_token, deadline).await,
        "openai-codex" => openai_codex::refresh(refresh_token, deadline).await,
        "github-copilot" => github_copilot::refresh(credential, deadline).await,
        "xai" => xai::refresh(refresh_token, deadline).await,
        "kimi-coding" => kimi::refresh(refresh_token, deadline).await,
        "openrouter" => Ok(credential.clone()),
        other => Err(OAuthError::new(format!(
            "No OAuth refresh for provider {other}"
        ))),
    }
}

/// A refresh token from a response, or the stored one when the server did not rotate it.
pub(crate) fn rotated_or_kept(body: &Map<String, Value>, previous: &str) -> Option<String> {
    match body.get("refresh_token") {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        None | Some(Value::Null) if !previous.is_empty() => Some(previous.to_owned()),
        _ => None,
    }
}

/// `{"type":"oauth", ...}` in the given key order.
pub(crate) fn entry(fields: Vec<(&str, Value)>) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("type".into(), Value::from("oauth"));
    for (k, v) in fields {
        map.insert(k.to_owned(), v);
    }
    map
}

/// A millisecond timestamp as pi stores it (an integer when it is one).
pub(crate) fn ms_value(ms: f64) -> Value {
    if ms.fract() == 0.0 && ms.abs() < 9.007_199_254_740_992e15 {
        Value::from(ms as i64)
    } else {
        serde_json::Number::from_f64(ms).map_or(Value::Null, Value::Number)
    }
}

/// `url` with its origin replaced by the test override (debug builds only; see the module
/// docs); `url` itself otherwise.
pub fn endpoint(url: &str) -> String {
    #[cfg(test)]
    let origin = tests::TEST_ORIGIN
        .with(|o| o.borrow().clone())
        .ok_or(())
        .or_else(|()| std::env::var("PI_RS_TEST_OAUTH_ORIGIN"));
    #[cfg(all(debug_assertions, not(test)))]
    let origin = std::env::var("PI_RS_TEST_OAUTH_ORIGIN");
    #[cfg(debug_assertions)]
    if let Ok(origin) = origin
        && !origin.is_empty()
        && let Some(rest) = url.split_once("://").map(|(_, r)| r)
    {
        let path = rest.find('/').map_or("", |i| &rest[i..]);
        return format!("{}{path}", origin.trim_end_matches('/'));
    }
    url.to_owned()
}

fn test_timeout() -> Option<Duration> {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("PI_RS_TEST_OAUTH_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        return Some(Duration::from_millis(ms));
    }
    None
}

#[cfg(test)]
mod login_tests;
#[cfg(test)]
mod tests;
