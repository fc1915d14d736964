//! GitHub Copilot: pi-ai 0.85.1 `auth/oauth/github-copilot.js`. The credential's `refresh` is
//! the GitHub OAuth token; `access` is the short-lived Copilot token it is exchanged for.

use serde_json::{Map, Value};
use tokio::time::Instant;

use super::device::{Poll, poll_device_flow};
use super::http::{Exchange, FetchError, Reply, form, send};
use super::interaction::{LoginEvent, LoginPrompt, LoginUi, PromptKind};
use super::{OAuthError, endpoint, entry, ms_value};

/// pi's Copilot OAuth client id.
const CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
/// A login request's own timeout (pi relies on the login's cancellation alone; a server that
/// never answers should not hang the dialog).
const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

pub(crate) const USER_AGENT: &str = "GitHubCopilotChat/0.35.0";
const EDITOR_VERSION: &str = "vscode/1.107.0";
const EDITOR_PLUGIN_VERSION: &str = "copilot-chat/0.35.0";
const INTEGRATION_ID: &str = "vscode-chat";
const API_VERSION: &str = "2026-06-01";
const INDIVIDUAL_BASE_URL: &str = "https://api.individual.githubcopilot.com";
const FIVE_MINUTES_MS: f64 = 5.0 * 60.0 * 1000.0;
/// The models request's own timeout (`fetchWithRateLimitRetry`).
const MODELS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// pi's `normalizeDomain`: the host name of a URL or bare domain (`None` for blank or
/// unparsable input).
pub fn normalize_domain(input: &str) -> Option<String> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return None;
    }
    let text = if trimmed.contains("://") {
        trimmed.to_owned()
    } else {
        format!("https://{trimmed}")
    };
    let url = url::Url::parse(&text).ok()?;
    url.host_str().map(str::to_owned)
}

/// The enterprise domain of a credential (`enterpriseUrl`, normalized).
pub(crate) fn enterprise_domain(credential: &Map<String, Value>) -> Option<String> {
    let url = credential.get("enterpriseUrl")?.as_str()?;
    if url.is_empty() {
        return None;
    }
    normalize_domain(url)
}

/// pi's `getGitHubCopilotBaseUrl`: `https://api.<host>` from the token's
/// `proxy-ep=proxy.<host>`, else `https://copilot-api.<enterprise domain>`, else the
/// individual endpoint.
pub fn copilot_base_url(token: Option<&str>, enterprise_domain: Option<&str>) -> String {
    if let Some(token) = token
        && let Some(start) = token.find("proxy-ep=")
    {
        let host = token[start + "proxy-ep=".len()..]
            .split(';')
            .next()
            .unwrap_or("");
        if !host.is_empty() {
            let api = host
                .strip_prefix("proxy.")
                .map_or_else(|| host.to_owned(), |rest| format!("api.{rest}"));
            return format!("https://{api}");
        }
    }
    if let Some(domain) = enterprise_domain {
        return format!("https://copilot-api.{domain}");
    }
    INDIVIDUAL_BASE_URL.to_owned()
}

/// The credential's `availableModelIds` when it is an array of strings (pi's
/// `filterModels`: anything else does not filter).
pub fn available_model_ids(credential: &Map<String, Value>) -> Option<Vec<&str>> {
    let ids = credential.get("availableModelIds")?.as_array()?;
    ids.iter().map(Value::as_str).collect()
}

fn copilot_headers(bearer: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Accept", "application/json".into()),
        ("Authorization", format!("Bearer {bearer}")),
        ("User-Agent", USER_AGENT.into()),
        ("Editor-Version", EDITOR_VERSION.into()),
        ("Editor-Plugin-Version", EDITOR_PLUGIN_VERSION.into()),
        ("Copilot-Integration-Id", INTEGRATION_ID.into()),
    ]
}

async fn get(
    url: &str,
    headers: &[(&str, String)],
    deadline: Instant,
) -> Result<Reply, FetchError> {
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    send(
        Exchange {
            method: reqwest::Method::GET,
            url,
            headers: &headers,
            body: None,
        },
        deadline,
    )
    .await
}

/// pi's `fetchJson`: `<status> <statusText>: <body>` for a non-2xx status.
fn json_or_status(reply: &Reply) -> Result<Value, OAuthError> {
    if !reply.ok() {
        return Err(OAuthError::new(format!(
            "{} {}: {}",
            reply.status, reply.status_text, reply.body
        )));
    }
    serde_json::from_str(&reply.body).map_err(|e| OAuthError::new(e.to_string()))
}

/// The Copilot token exchange: `{type, refresh, access, expires, enterpriseUrl?}`.
pub(crate) async fn exchange_token(
    github_token: &str,
    enterprise: Option<&str>,
    deadline: Instant,
) -> Result<Map<String, Value>, OAuthError> {
    let domain = enterprise.unwrap_or("github.com");
    let url = endpoint(&format!("https://api.{domain}/copilot_internal/v2/token"));
    let reply = get(&url, &copilot_headers(github_token), deadline)
        .await
        .map_err(|e| OAuthError::new(e.message()))?;
    let raw = json_or_status(&reply)?;
    let Some(raw) = raw.as_object() else {
        return Err(OAuthError::new("Invalid Copilot token response"));
    };
    let (Some(token), Some(expires_at)) = (
        raw.get("token").and_then(Value::as_str),
        raw.get("expires_at").and_then(Value::as_f64),
    ) else {
        return Err(OAuthError::new("Invalid Copilot token response fields"));
    };
    let mut fields = vec![
        ("refresh", Value::from(github_token)),
        ("access", Value::from(token)),
        ("expires", ms_value(expires_at * 1000.0 - FIVE_MINUTES_MS)),
    ];
    if let Some(domain) = enterprise {
        fields.push(("enterpriseUrl", Value::from(domain)));
    }
    Ok(entry(fields))
}

/// The account's model ids (`availableModelIds` of pi's `parseGitHubCopilotModelCatalog`):
/// picker-enabled models whose policy is not `disabled`; on the individual endpoint, when
/// there are none, the models whose policy is `enabled`. Models without tool calls are left out.
pub(crate) async fn fetch_model_ids(
    copilot_token: &str,
    enterprise: Option<&str>,
    deadline: Instant,
) -> Result<Vec<String>, OAuthError> {
    Ok(fetch_catalog(copilot_token, enterprise, deadline).await?.0)
}

/// The account's available model ids and the ids of known models whose policy is still
/// `unconfigured` (pi's `policyModelIds`, enabled at login).
async fn fetch_catalog(
    copilot_token: &str,
    enterprise: Option<&str>,
    deadline: Instant,
) -> Result<(Vec<String>, Vec<String>), OAuthError> {
    let base = copilot_base_url(Some(copilot_token), enterprise);
    let allow_policy_fallback = base == INDIVIDUAL_BASE_URL;
    let url = endpoint(&format!("{base}/models"));
    let mut headers = copilot_headers(copilot_token);
    headers.push(("X-GitHub-Api-Version", API_VERSION.into()));
    let deadline = deadline.min(Instant::now() + MODELS_TIMEOUT);
    let reply = get(&url, &headers, deadline)
        .await
        .map_err(|e| OAuthError::new(e.message()))?;
    let raw = json_or_status(&reply)?;
    let Some(data) = raw.get("data").and_then(Value::as_array) else {
        return Err(OAuthError::new("Invalid Copilot models response"));
    };
    let models: Vec<(&str, bool, Option<&str>)> = data
        .iter()
        .filter_map(|item| {
            let id = item.get("id")?.as_str()?;
            let tools = item
                .get("capabilities")
                .and_then(|c| c.get("supports"))
                .and_then(|s| s.get("tool_calls"));
            if tools == Some(&Value::Bool(false)) {
                return None;
            }
            let picker = item.get("model_picker_enabled") == Some(&Value::Bool(true));
            let policy = item
                .get("policy")
                .and_then(|p| p.get("state"))
                .and_then(Value::as_str);
            Some((id, picker, policy))
        })
        .collect();
    let picker: Vec<String> = models
        .iter()
        .filter(|(_, picker, policy)| *picker && *policy != Some("disabled"))
        .map(|(id, ..)| (*id).to_owned())
        .collect();
    let use_policy_fallback = allow_policy_fallback && picker.is_empty();
    let policy: Vec<String> = models
        .iter()
        .filter(|(id, picker, policy)| {
            *policy == Some("unconfigured")
                && crate::models::get_builtin_model("github-copilot", id).is_some()
                && (*picker || use_policy_fallback)
        })
        .map(|(id, ..)| (*id).to_owned())
        .collect();
    if !picker.is_empty() || !allow_policy_fallback {
        return Ok((picker, policy));
    }
    let enabled = models
        .iter()
        .filter(|(_, _, policy)| *policy == Some("enabled"))
        .map(|(id, ..)| (*id).to_owned())
        .collect();
    Ok((enabled, policy))
}

/// pi's `enableGitHubCopilotModels`: `POST <base>/models/<id>/policy {"state":"enabled"}` for
/// each id, best effort; the ids that succeeded. A 429 ends the batch.
async fn enable_models(
    copilot_token: &str,
    ids: &[String],
    enterprise: Option<&str>,
) -> Vec<String> {
    let base = copilot_base_url(Some(copilot_token), enterprise);
    let mut enabled = Vec::new();
    for id in ids {
        let url = endpoint(&format!("{base}/models/{id}/policy"));
        let mut headers = copilot_headers(copilot_token);
        headers.retain(|(k, _)| *k != "Accept");
        headers.insert(0, ("Content-Type", "application/json".into()));
        headers.push(("openai-intent", "chat-policy".into()));
        headers.push(("x-interaction-type", "chat-policy".into()));
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let reply = send(
            Exchange {
                method: reqwest::Method::POST,
                url: &url,
                headers: &headers,
                body: Some(r#"{"state":"enabled"}"#.to_owned()),
            },
            Instant::now() + MODELS_TIMEOUT,
        )
        .await;
        match reply {
            Ok(r) if r.status == 429 => break,
            Ok(r) if r.ok() => enabled.push(id.clone()),
            _ => {}
        }
    }
    enabled
}

/// pi's `startDeviceFlow`: the device code, user code, verification page, interval and
/// lifetime.
async fn start_device_flow(
    domain: &str,
) -> Result<(String, String, String, Option<f64>, f64), OAuthError> {
    let url = endpoint(&format!("https://{domain}/login/device/code"));
    let reply = send(
        Exchange {
            method: reqwest::Method::POST,
            url: &url,
            headers: &[
                ("Accept", "application/json"),
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("User-Agent", USER_AGENT),
            ],
            body: Some(form(&[("client_id", CLIENT_ID), ("scope", "read:user")])),
        },
        Instant::now() + REQUEST_TIMEOUT,
    )
    .await
    .map_err(|e| OAuthError::new(e.message()))?;
    let raw = json_or_status(&reply)?;
    let Some(raw) = raw.as_object() else {
        return Err(OAuthError::new("Invalid device code response"));
    };
    let fields = (
        raw.get("device_code").and_then(Value::as_str),
        raw.get("user_code").and_then(Value::as_str),
        raw.get("verification_uri").and_then(Value::as_str),
        raw.get("interval"),
        raw.get("expires_in").and_then(Value::as_f64),
    );
    let (Some(device), Some(user), Some(uri), interval, Some(expires_in)) = fields else {
        return Err(OAuthError::new("Invalid device code response fields"));
    };
    let interval = match interval {
        None => None,
        Some(v) => Some(
            v.as_f64()
                .ok_or_else(|| OAuthError::new("Invalid device code response fields"))?,
        ),
    };
    // The page is shown for the user to open; only a web URL is trusted.
    let uri = url::Url::parse(uri)
        .ok()
        .filter(|u| matches!(u.scheme(), "https" | "http"))
        .ok_or_else(|| OAuthError::new("Untrusted verification_uri in device code response"))?;
    Ok((
        device.to_owned(),
        user.to_owned(),
        uri.to_string(),
        interval,
        expires_in,
    ))
}

/// One poll of `…/login/oauth/access_token`.
async fn poll_access_token(domain: &str, device_code: &str) -> Result<Poll<String>, OAuthError> {
    let url = endpoint(&format!("https://{domain}/login/oauth/access_token"));
    let reply = send(
        Exchange {
            method: reqwest::Method::POST,
            url: &url,
            headers: &[
                ("Accept", "application/json"),
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("User-Agent", USER_AGENT),
            ],
            body: Some(form(&[
                ("client_id", CLIENT_ID),
                ("device_code", device_code),
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ])),
        },
        Instant::now() + REQUEST_TIMEOUT,
    )
    .await
    .map_err(|e| OAuthError::new(e.message()))?;
    let raw = json_or_status(&reply)?;
    if let Some(token) = raw.get("access_token").and_then(Value::as_str) {
        return Ok(Poll::Complete(token.to_owned()));
    }
    let Some(error) = raw.get("error").and_then(Value::as_str) else {
        return Ok(Poll::Failed("Invalid device token response".into()));
    };
    Ok(match error {
        "authorization_pending" => Poll::Pending,
        "slow_down" => Poll::SlowDown(raw.get("interval").and_then(Value::as_f64)),
        _ => {
            let suffix = raw
                .get("error_description")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            Poll::Failed(format!("Device flow failed: {error}{suffix}"))
        }
    })
}

/// pi's `loginGitHubCopilot`: asks for a GitHub Enterprise domain (blank: github.com), shows
/// the device code, polls for the GitHub token, exchanges it for a Copilot token, enables the
/// account's unconfigured models and returns the entry
/// `{type, refresh, access, expires, enterpriseUrl?, availableModelIds}`.
///
/// Errors: `Invalid GitHub Enterprise URL/domain`; the device flow's texts; the exchange's.
pub(crate) async fn login(ui: &LoginUi) -> Result<Map<String, Value>, OAuthError> {
    let input = ui
        .prompt(LoginPrompt {
            kind: PromptKind::Text,
            message: "GitHub Enterprise URL/domain (blank for github.com)".into(),
            placeholder: Some("company.ghe.com".into()),
        })
        .await?;
    let enterprise = normalize_domain(&input);
    if !input.trim().is_empty() && enterprise.is_none() {
        return Err(OAuthError::new("Invalid GitHub Enterprise URL/domain"));
    }
    let domain = enterprise.as_deref().unwrap_or("github.com");
    let (device_code, user_code, verification_uri, interval, expires_in) =
        start_device_flow(domain).await?;
    ui.notify(LoginEvent::DeviceCode {
        user_code,
        verification_uri,
    });
    let github_token = poll_device_flow(interval, Some(expires_in), true, || {
        poll_access_token(domain, &device_code)
    })
    .await?;
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    let mut entry = exchange_token(&github_token, enterprise.as_deref(), deadline).await?;
    let access = entry
        .get("access")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let (mut ids, policy) = fetch_catalog(
        &access,
        enterprise.as_deref(),
        Instant::now() + REQUEST_TIMEOUT,
    )
    .await?;
    if !policy.is_empty() {
        ui.notify(LoginEvent::Progress("Enabling models...".into()));
        for id in enable_models(&access, &policy, enterprise.as_deref()).await {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    entry.insert(
        "availableModelIds".into(),
        Value::Array(ids.into_iter().map(Value::from).collect()),
    );
    Ok(entry)
}

pub(crate) async fn refresh(
    credential: &Map<String, Value>,
    deadline: Instant,
) -> Result<Map<String, Value>, OAuthError> {
    let github_token = credential
        .get("refresh")
        .and_then(Value::as_str)
        .unwrap_or("");
    let enterprise = enterprise_domain(credential);
    let mut next = exchange_token(github_token, enterprise.as_deref(), deadline).await?;
    let access = next
        .get("access")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let ids = fetch_model_ids(&access, enterprise.as_deref(), deadline).await?;
    next.insert(
        "availableModelIds".into(),
        Value::Array(ids.into_iter().map(Value::from).collect()),
    );
    Ok(next)
}
