//! Anthropic (Claude Pro/Max): pi-ai 0.85.1 `auth/oauth/anthropic.js`.

use serde_json::{Map, Value};
use tokio::time::Instant;

use super::http::{Exchange, FetchError, Reply, now_ms, send};
use super::{OAuthError, endpoint, entry, ms_value, rotated_or_kept};

/// The public client id of pi's Anthropic flow.
pub(crate) const CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
pub(crate) const TOKEN_URL: &str = "https://platform.claude.com/v1/oauth/token";
const FIVE_MINUTES_MS: f64 = 5.0 * 60.0 * 1000.0;

/// Why [`post_json`] got no 2xx body; the text is the `details=` part that the refresh and
/// the token exchange wrap into their [`OAuthError`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum PostError {
    /// No reply (timeout or transport): [`FetchError::details`].
    #[error("{}", .0.details())]
    Fetch(FetchError),
    /// A reply with a non-2xx status.
    #[error("Error: HTTP request failed. status={status}; url={url}; body={body}")]
    Status {
        status: u16,
        url: String,
        body: String,
    },
}

/// pi's `postJson`: a JSON POST; a non-2xx status is
/// `HTTP request failed. status=<s>; url=<u>; body=<b>`.
pub(crate) async fn post_json(
    url: &str,
    body: &Value,
    deadline: Instant,
) -> Result<String, PostError> {
    let url = endpoint(url);
    let reply: Reply = send(
        Exchange {
            method: reqwest::Method::POST,
            url: &url,
            headers: &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json"),
            ],
            body: Some(body.to_string()),
        },
        deadline,
    )
    .await
    .map_err(PostError::Fetch)?;
    if !reply.ok() {
        return Err(PostError::Status {
            status: reply.status,
            url,
            body: reply.body,
        });
    }
    Ok(reply.body)
}

/// The stored entry from a token response: `{type, refresh, access, expires}`.
pub(crate) fn credential_from(
    body: &str,
    previous_refresh: &str,
    what: &str,
) -> Result<Map<String, Value>, OAuthError> {
    let invalid = |details: &str| {
        OAuthError::new(format!(
            "{what} returned invalid JSON. url={TOKEN_URL}; body={body}; details={details}"
        ))
    };
    let data: Value =
        serde_json::from_str(body).map_err(|e| invalid(&format!("SyntaxError: {e}")))?;
    let data = data.as_object().cloned().unwrap_or_default();
    let access = data.get("access_token").and_then(Value::as_str);
    let expires_in = data
        .get("expires_in")
        .and_then(Value::as_f64)
        .filter(|e| e.is_finite());
    let refresh = rotated_or_kept(&data, previous_refresh);
    let (Some(access), Some(expires_in), Some(refresh)) = (access, expires_in, refresh) else {
        return Err(invalid("missing access_token, refresh_token or expires_in"));
    };
    Ok(entry(vec![
        ("refresh", Value::from(refresh)),
        ("access", Value::from(access)),
        (
            "expires",
            ms_value(now_ms() + expires_in * 1000.0 - FIVE_MINUTES_MS),
        ),
    ]))
}

pub(crate) async fn refresh(
    refresh_token: &str,
    deadline: Instant,
) -> Result<Map<String, Value>, OAuthError> {
    let body = serde_json::json!({
        "grant_type": "refresh_token",
        "client_id": CLIENT_ID,
        "refresh_token": refresh_token,
    });
    let reply = post_json(TOKEN_URL, &body, deadline)
        .await
        .map_err(|details| {
            OAuthError::new(format!(
                "Anthropic token refresh request failed. url={TOKEN_URL}; details={details}"
            ))
        })?;
    credential_from(&reply, refresh_token, "Anthropic token refresh")
}
