//! OpenAI Codex (ChatGPT Plus/Pro): pi-ai 0.85.1 `auth/oauth/openai-codex.js`.

use base64::Engine as _;
use serde_json::{Map, Value};
use tokio::time::Instant;

use super::http::{Exchange, form, now_ms, send};
use super::{OAuthError, endpoint, entry, ms_value, rotated_or_kept};

pub(crate) const CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
pub(crate) const TOKEN_URL: &str = "https://auth.openai.com/oauth/token";
const JWT_CLAIM_PATH: &str = "https://api.openai.com/auth";

/// The ChatGPT account id of an access token: the JWT payload's
/// `["https://api.openai.com/auth"].chatgpt_account_id` (non-empty), as pi's `getAccountId`.
pub fn account_id_from_jwt(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, Some(payload), Some(_), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    // `atob` accepts standard base64; JWTs use the URL alphabet without padding.
    let normalized: String = payload
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(normalized.trim_end_matches('='))
        .ok()?;
    let json: Value = serde_json::from_slice(&bytes).ok()?;
    let id = json
        .get(JWT_CLAIM_PATH)?
        .get("chatgpt_account_id")?
        .as_str()?;
    (!id.is_empty()).then(|| id.to_owned())
}

/// pi's `readTokenResponse` + `credentialsFromToken`: `{type, access, refresh, expires,
/// accountId}`.
pub(crate) fn credential_from(
    status: u16,
    status_text: &str,
    body: &str,
    previous_refresh: &str,
    operation: &str,
) -> Result<Map<String, Value>, OAuthError> {
    if !(200..300).contains(&status) {
        let text = if body.is_empty() { status_text } else { body };
        return Err(OAuthError::new(format!(
            "OpenAI Codex token {operation} failed ({status}): {text}"
        )));
    }
    let json: Value = serde_json::from_str(body).map_err(|e| OAuthError::new(e.to_string()))?;
    let obj = json.as_object().cloned().unwrap_or_default();
    let access = obj
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let refresh = rotated_or_kept(&obj, previous_refresh);
    let expires_in = obj.get("expires_in").and_then(Value::as_f64);
    let (Some(access), Some(refresh), Some(expires_in)) = (access, refresh, expires_in) else {
        return Err(OAuthError::new(format!(
            "OpenAI Codex token {operation} response missing fields: {}",
            crate::json::to_string(&json).unwrap_or_default()
        )));
    };
    let Some(account_id) = account_id_from_jwt(access) else {
        return Err(OAuthError::new("Failed to extract accountId from token"));
    };
    Ok(entry(vec![
        ("access", Value::from(access)),
        ("refresh", Value::from(refresh)),
        ("expires", ms_value(now_ms() + expires_in * 1000.0)),
        ("accountId", Value::from(account_id)),
    ]))
}

pub(crate) async fn refresh(
    refresh_token: &str,
    deadline: Instant,
) -> Result<Map<String, Value>, OAuthError> {
    let url = endpoint(TOKEN_URL);
    let reply = send(
        Exchange {
            method: reqwest::Method::POST,
            url: &url,
            headers: &[("Content-Type", "application/x-www-form-urlencoded")],
            body: Some(form(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh_token),
                ("client_id", CLIENT_ID),
            ])),
        },
        deadline,
    )
    .await
    .map_err(|e| OAuthError::new(format!("OpenAI Codex token refresh error: {}", e.message())))?;
    credential_from(
        reply.status,
        &reply.status_text,
        &reply.body,
        refresh_token,
        "refresh",
    )
}
