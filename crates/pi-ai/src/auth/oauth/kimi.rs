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

/// pi's `trustedHttpUrl`: only a web URL is shown for the user to open.
fn trusted_http_url(value: Option<&str>) -> Option<String> {
    let url = url::Url::parse(value.filter(|v| !v.is_empty())?).ok()?;
    matches!(url.scheme(), "https" | "http").then(|| url.to_string())
}

/// A form `POST` to the Kimi OAuth host: status, body text and the body as JSON.
async fn post(
    path: &str,
    fields: &[(&str, &str)],
) -> Result<(u16, String, Option<Value>), OAuthError> {
    let url = endpoint(&format!("{}{path}", oauth_host()));
    let reply = send(
        Exchange {
            method: reqwest::Method::POST,
            url: &url,
            headers: &[
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Accept", "application/json"),
            ],
            body: Some(form(fields)),
        },
        Instant::now() + REQUEST_TIMEOUT,
    )
    .await
    .map_err(|e| OAuthError::new(e.message()))?;
    let json = serde_json::from_str::<Value>(&reply.body)
        .ok()
        .filter(|v| v.is_object() || v.is_array());
    Ok((reply.status, reply.body, json))
}

/// pi's `loginKimiCoding`: the device authorization (its `verification_uri_complete` is
/// shown), then polling `/api/oauth/token`; the entry `{type, access, refresh, expires}`.
///
/// Errors: `Kimi Code device authorization failed with status <s>…`, `Invalid Kimi Code device
/// authorization response: <json>`, the poll's texts (`Kimi Code login was denied.`, …).
pub(crate) async fn login(
    ui: &super::interaction::LoginUi,
) -> Result<Map<String, Value>, OAuthError> {
    use super::device::{Poll, poll_device_flow};
    let (status, text, json) = post(
        "/api/oauth/device_authorization",
        &[("client_id", CLIENT_ID)],
    )
    .await?;
    if !(200..300).contains(&status) {
        let suffix = if text.is_empty() {
            String::new()
        } else {
            format!(": {text}")
        };
        return Err(OAuthError::new(format!(
            "Kimi Code device authorization failed with status {status}{suffix}"
        )));
    }
    let field = |k: &str| json.as_ref().and_then(|j| j.get(k)).and_then(Value::as_str);
    let complete = trusted_http_url(field("verification_uri_complete"));
    let (Some(device_code), Some(user_code), Some(_), Some(complete)) = (
        field("device_code").map(str::to_owned),
        field("user_code").map(str::to_owned),
        trusted_http_url(field("verification_uri")),
        complete,
    ) else {
        let shown = json
            .as_ref()
            .and_then(|j| crate::json::to_string(j).ok())
            .unwrap_or_else(|| "null".to_owned());
        return Err(OAuthError::new(format!(
            "Invalid Kimi Code device authorization response: {shown}"
        )));
    };
    let number = |k: &str| {
        json.as_ref()
            .and_then(|j| j.get(k))
            .and_then(Value::as_f64)
            .filter(|n| n.is_finite() && *n > 0.0)
    };
    let interval = number("interval").unwrap_or(5.0);
    let expires_in = number("expires_in").unwrap_or(15.0 * 60.0);
    ui.notify(super::interaction::LoginEvent::DeviceCode {
        user_code,
        verification_uri: complete,
    });
    poll_device_flow(Some(interval), Some(expires_in), true, || async {
        let (status, text, json) = post(
            "/api/oauth/token",
            &[
                ("client_id", CLIENT_ID),
                ("device_code", &device_code),
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ],
        )
        .await?;
        if status >= 500 {
            let suffix = if text.is_empty() {
                String::new()
            } else {
                format!(": {text}")
            };
            return Ok(Poll::Failed(format!(
                "Kimi Code device token request failed with status {status}{suffix}"
            )));
        }
        let get = |k: &str| json.as_ref().and_then(|j| j.get(k));
        if (200..300).contains(&status) && get("access_token").is_some_and(Value::is_string) {
            return Ok(match credential_from(json.as_ref(), "", "poll") {
                Ok(entry) => Poll::Complete(entry),
                Err(e) => Poll::Failed(e.message().to_owned()),
            });
        }
        let error = get("error").and_then(Value::as_str);
        let description = get("error_description")
            .and_then(Value::as_str)
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        Ok(match error {
            Some("authorization_pending") => Poll::Pending,
            Some("slow_down") => {
                Poll::SlowDown(get("interval").and_then(Value::as_f64).filter(|n| *n > 0.0))
            }
            Some("expired_token") => {
                Poll::Failed("Kimi Code device authorization expired. Please restart login.".into())
            }
            Some("access_denied") => Poll::Failed("Kimi Code login was denied.".into()),
            Some(e) => Poll::Failed(format!(
                "Kimi Code device token request failed (status {status}): {e}{description}"
            )),
            None => Poll::Failed(format!(
                "Kimi Code device token request failed (status {status})"
            )),
        })
    })
    .await
}
