//! xAI (SuperGrok / X Premium): pi-ai 0.85.1 `auth/oauth/xai.js`.

use serde_json::{Map, Value};
use tokio::time::Instant;

use super::http::{Exchange, form, now_ms, send};
use super::{OAuthError, endpoint, entry, ms_value};

pub(crate) const CLIENT_ID: &str = "b1a00492-073a-47ea-816f-4c329264a828";
pub(crate) const TOKEN_URL: &str = "https://auth.x.ai/oauth2/token";
const REFRESH_SKEW_MS: f64 = 5.0 * 60.0 * 1000.0;
const DEFAULT_LIFETIME_SECONDS: f64 = 3600.0;

fn required_string<'a>(body: &'a Map<String, Value>, field: &str) -> Result<&'a str, OAuthError> {
    body.get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| OAuthError::new(format!("Invalid xAI OAuth response field: {field}")))
}

/// pi's `credentialsFromTokenResponse`: `{type, access, refresh, expires}`; a missing
/// `refresh_token` keeps the previous one.
pub(crate) fn credential_from(
    body: &Map<String, Value>,
    previous_refresh: Option<&str>,
) -> Result<Map<String, Value>, OAuthError> {
    let access = required_string(body, "access_token")?;
    let refresh = match (body.get("refresh_token"), previous_refresh) {
        (None, Some(previous)) if !previous.is_empty() => previous,
        _ => required_string(body, "refresh_token")?,
    };
    let expires_in = match body.get("expires_in") {
        None => DEFAULT_LIFETIME_SECONDS,
        Some(v) => v
            .as_f64()
            .filter(|n| n.is_finite() && *n > 0.0)
            .ok_or_else(|| OAuthError::new("Invalid xAI OAuth response field: expires_in"))?,
    };
    Ok(entry(vec![
        ("access", Value::from(access)),
        ("refresh", Value::from(refresh)),
        (
            "expires",
            ms_value(now_ms() + expires_in * 1000.0 - REFRESH_SKEW_MS),
        ),
    ]))
}

/// pi's `requestFailure`: `xAI OAuth <action> failed (HTTP <s>)[: <error>[: <description>]]`.
pub(crate) fn request_failure(action: &str, status: u16, body: &Map<String, Value>) -> OAuthError {
    let detail: Vec<&str> = ["error", "error_description"]
        .iter()
        .filter_map(|k| body.get(*k).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
        .collect();
    let suffix = if detail.is_empty() {
        String::new()
    } else {
        format!(": {}", detail.join(": "))
    };
    OAuthError::new(format!("xAI OAuth {action} failed (HTTP {status}){suffix}"))
}

/// pi's `postForm`: the status and the body as an object (`{}` when it is not one).
pub(crate) async fn post_form(
    url: &str,
    fields: &[(&str, &str)],
    deadline: Instant,
) -> Result<(u16, Map<String, Value>), OAuthError> {
    let url = endpoint(url);
    let reply = send(
        Exchange {
            method: reqwest::Method::POST,
            url: &url,
            headers: &[
                ("Accept", "application/json"),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            body: Some(form(fields)),
        },
        deadline,
    )
    .await
    .map_err(|e| OAuthError::new(e.message()))?;
    let body = match serde_json::from_str::<Value>(&reply.body) {
        Ok(Value::Object(map)) => map,
        Ok(_) => Map::new(),
        Err(_) => {
            return Err(OAuthError::new(format!(
                "xAI OAuth returned invalid JSON (HTTP {})",
                reply.status
            )));
        }
    };
    Ok((reply.status, body))
}

pub(crate) async fn refresh(
    refresh_token: &str,
    deadline: Instant,
) -> Result<Map<String, Value>, OAuthError> {
    let (status, body) = post_form(
        TOKEN_URL,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", CLIENT_ID),
            ("refresh_token", refresh_token),
        ],
        deadline,
    )
    .await?;
    if !(200..300).contains(&status) {
        return Err(request_failure("token refresh", status, &body));
    }
    credential_from(&body, Some(refresh_token))
}

const DEVICE_CODE_URL: &str = "https://auth.x.ai/oauth2/device/code";
const SCOPE: &str = "openid profile email offline_access grok-cli:access api:access";
/// A login request's own timeout, so a server that never answers does not hang the dialog.
const LOGIN_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// pi's `validateVerificationUri`: only an https URL is shown for the user to open.
fn verification_uri(raw: &str) -> Result<String, OAuthError> {
    url::Url::parse(raw)
        .ok()
        .filter(|u| u.scheme() == "https")
        .map(|u| u.to_string())
        .ok_or_else(|| OAuthError::new("Untrusted verification URI in xAI OAuth response"))
}

/// pi's `loginXai`: the device code (its `verification_uri_complete` when there is one), then
/// polling the token endpoint; the entry `{type, access, refresh, expires}`.
///
/// Errors: `xAI OAuth device authorization failed (HTTP <s>)…`, `xAI device authorization was
/// denied`, `xAI device code expired`, the device flow's timeouts.
pub(crate) async fn login(
    ui: &super::interaction::LoginUi,
) -> Result<Map<String, Value>, OAuthError> {
    use super::device::{Poll, poll_device_flow};
    let (status, body) = post_form(
        DEVICE_CODE_URL,
        &[
            ("client_id", CLIENT_ID),
            ("scope", SCOPE),
            ("referrer", "pi"),
        ],
        Instant::now() + LOGIN_REQUEST_TIMEOUT,
    )
    .await?;
    if !(200..300).contains(&status) {
        return Err(request_failure("device authorization", status, &body));
    }
    let interval = body
        .get("interval")
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite() && *n > 0.0);
    let complete = match body
        .get("verification_uri_complete")
        .and_then(Value::as_str)
    {
        Some(s) if !s.is_empty() => Some(verification_uri(s)?),
        _ => None,
    };
    let device_code = required_string(&body, "device_code")?.to_owned();
    let user_code = required_string(&body, "user_code")?.to_owned();
    let uri = verification_uri(required_string(&body, "verification_uri")?)?;
    let expires_in = body
        .get("expires_in")
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite() && *n > 0.0)
        .ok_or_else(|| OAuthError::new("Invalid xAI OAuth response field: expires_in"))?;
    ui.notify(super::interaction::LoginEvent::DeviceCode {
        user_code,
        verification_uri: complete.unwrap_or(uri),
    });
    poll_device_flow(interval, Some(expires_in), true, || async {
        let (status, body) = post_form(
            TOKEN_URL,
            &[
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                ("client_id", CLIENT_ID),
                ("device_code", &device_code),
            ],
            Instant::now() + LOGIN_REQUEST_TIMEOUT,
        )
        .await?;
        if (200..300).contains(&status) {
            return credential_from(&body, None).map(Poll::Complete);
        }
        Ok(match body.get("error").and_then(Value::as_str) {
            Some("authorization_pending") => Poll::Pending,
            Some("slow_down") => Poll::SlowDown(body.get("interval").and_then(Value::as_f64)),
            Some("access_denied" | "authorization_denied") => {
                Poll::Failed("xAI device authorization was denied".into())
            }
            Some("expired_token") => Poll::Failed("xAI device code expired".into()),
            _ => Poll::Failed(
                request_failure("device token polling", status, &body)
                    .message()
                    .to_owned(),
            ),
        })
    })
    .await
}
