//! Kimi Code (subscription): pi-ai 0.85.1 `auth/oauth/kimi-coding.js`.

use std::time::Duration;

use serde_json::{Map, Value};
use tokio::time::Instant;

use super::http::{Exchange, form, now_ms, send, sleep_before};
use super::{OAuthError, endpoint, entry, ms_value, rotated_or_kept};

pub(crate) const CLIENT_ID: &str = "17e5f671-d194-4dfb-9706-5516cb48c098";
const DEFAULT_OAUTH_HOST: &str = "https://auth.kimi.com";
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const REFRESH_MAX_RETRIES: u32 = 3;

/// pi's `getOauthHost`: `KIMI_CODE_OAUTH_HOST`, else `KIMI_OAUTH_HOST`, else
/// `https://auth.kimi.com`, without trailing slashes (a documented pi setting, kept).
pub(crate) fn oauth_host() -> String {
    let host = ["KIMI_CODE_OAUTH_HOST", "KIMI_OAUTH_HOST"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| DEFAULT_OAUTH_HOST.to_owned());
    host.trim_end_matches('/').to_owned()
}

/// pi's `parseTokenResponse`: `{type, access, refresh, expires}`.
pub(crate) fn credential_from(
    json: Option<&Value>,
    previous_refresh: &str,
    operation: &str,
) -> Result<Map<String, Value>, OAuthError> {
    let obj = json.and_then(Value::as_object).cloned().unwrap_or_default();
    let access = obj
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let refresh = rotated_or_kept(&obj, previous_refresh);
    let expires_in = obj
        .get("expires_in")
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite() && *n > 0.0);
    let (Some(access), Some(refresh), Some(expires_in)) = (access, refresh, expires_in) else {
        let text = json.map_or_else(
            || "null".to_owned(),
            |j| crate::json::to_string(j).unwrap_or_default(),
        );
        return Err(OAuthError::new(format!(
            "Kimi Code token {operation} response missing fields: {text}"
        )));
    };
    Ok(entry(vec![
        ("access", Value::from(access)),
        ("refresh", Value::from(refresh)),
        ("expires", ms_value(now_ms() + expires_in * 1000.0)),
    ]))
}

pub(crate) async fn refresh(
    refresh_token: &str,
    deadline: Instant,
) -> Result<Map<String, Value>, OAuthError> {
    let url = endpoint(&format!("{}/api/oauth/token", oauth_host()));
    let mut last_error: Option<OAuthError> = None;
    for attempt in 0..=REFRESH_MAX_RETRIES {
        if attempt > 0 {
            let delay = Duration::from_millis(1000 << (attempt - 1));
            if !sleep_before(delay, deadline).await {
                return Err(OAuthError::new("Kimi Code token refresh aborted"));
            }
        }
        let request_deadline = deadline.min(Instant::now() + REQUEST_TIMEOUT);
        let reply = send(
            Exchange {
                method: reqwest::Method::POST,
                url: &url,
                headers: &[
                    ("Content-Type", "application/x-www-form-urlencoded"),
                    ("Accept", "application/json"),
                ],
                body: Some(form(&[
                    ("client_id", CLIENT_ID),
                    ("grant_type", "refresh_token"),
                    ("refresh_token", refresh_token),
                ])),
            },
            request_deadline,
        )
        .await;
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) => {
                last_error = Some(OAuthError::new(e.message()));
                if Instant::now() >= deadline {
                    break;
                }
                continue;
            }
        };
        let json: Option<Value> = serde_json::from_str::<Value>(&reply.body)
            .ok()
            .filter(|v| v.is_object() || v.is_array());
        if reply.ok() {
            return credential_from(json.as_ref(), refresh_token, "refresh");
        }
        let error = json
            .as_ref()
            .and_then(|j| j.get("error"))
            .and_then(Value::as_str);
        if reply.status == 401 || reply.status == 403 || error == Some("invalid_grant") {
            let description = json
                .as_ref()
                .and_then(|j| j.get("error_description"))
                .and_then(Value::as_str)
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            return Err(OAuthError::new(format!(
                "Kimi Code token refresh unauthorized (status {}){description}",
                reply.status
            )));
        }
        if (reply.status == 429 || reply.status >= 500) && attempt < REFRESH_MAX_RETRIES {
            last_error = Some(OAuthError::new(format!(
                "Kimi Code token refresh failed with status {}",
                reply.status
            )));
            continue;
        }
        let text = json.map_or_else(
            || "null".to_owned(),
            |j| crate::json::to_string(&j).unwrap_or_default(),
        );
        return Err(OAuthError::new(format!(
            "Kimi Code token refresh failed with status {}: {text}",
            reply.status
        )));
    }
    Err(last_error.unwrap_or_else(|| OAuthError::new("Kimi Code token refresh failed")))
}
