//! Google Application Default Credentials: an OAuth access token from a service-account key or
//! gcloud's authorized-user file, cached until shortly before it expires.
//!
//! Where pi (through `google-auth-library`) looks, in order: the file named by
//! `GOOGLE_APPLICATION_CREDENTIALS`, then gcloud's
//! `$CLOUDSDK_CONFIG/application_default_credentials.json` (default
//! `~/.config/gcloud/application_default_credentials.json`). pi-rs never asks the GCE metadata
//! server: without a file there are no credentials.
//!
//! - `service_account`: an RS256-signed JWT (`iss` = `client_email`, `scope` =
//!   `https://www.googleapis.com/auth/cloud-platform`, `aud`, `iat`, `exp` = `iat` + 1 h)
//!   exchanged at the key's `token_uri` with the JWT-bearer grant. pi always posts to
//!   `https://oauth2.googleapis.com/token`, whatever the key says; pi-rs honours `token_uri`
//!   (the field exists for private endpoints).
//! - `authorized_user`: the `refresh_token` grant with `client_id` and `client_secret` at the
//!   file's `token_uri`, default `https://oauth2.googleapis.com/token`.
//!
//! A token is reused until 5 minutes before `expires_in` runs out (google-auth-library's
//! eager-refresh margin). Error texts never include the key, the assertion or a token.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::providers::provider_env::ProviderEnv;

/// Why no access token could be had. The texts are what the user reads (they name the file and
/// the field, never the key, the assertion or a token).
#[derive(Debug, thiserror::Error)]
pub enum AdcError {
    /// No credentials file was found ([`NO_CREDENTIALS`]).
    #[error("{NO_CREDENTIALS}")]
    NoCredentials,
    /// The file could not be read (missing, not a regular file, over 1 MiB, I/O error).
    #[error("The file at {} does not exist, or it is not a file. {source}", path.display())]
    Unreadable {
        /// The credentials file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("The Google credentials file {} is not valid JSON: {source}", path.display())]
    InvalidJson {
        /// The credentials file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// A `type` other than `service_account` and `authorized_user`.
    #[error(
        "Unsupported Google credentials type {} in {} (pi-rs reads service_account and authorized_user files)",
        kind.as_ref().map_or_else(|| "(none)".to_owned(), |t| format!("\"{t}\"")),
        path.display()
    )]
    UnsupportedType {
        /// The credentials file.
        path: PathBuf,
        /// Its `type`, if any.
        kind: Option<String>,
    },
    /// A field the file's type needs is absent.
    #[error("The Google credentials file {} has no \"{field}\"", path.display())]
    MissingField {
        /// The credentials file.
        path: PathBuf,
        /// The field's name.
        field: &'static str,
    },
    /// `private_key` is not a PEM RSA key.
    #[error("The private key in {} is not a PEM RSA key: {source}", path.display())]
    BadKey {
        /// The credentials file.
        path: PathBuf,
        /// The key parser's error.
        source: jsonwebtoken::errors::Error,
    },
    /// Signing the service-account assertion failed.
    #[error("Signing the Google service-account assertion failed: {0}")]
    Signing(jsonwebtoken::errors::Error),
    /// The token request did not complete (the error without its URL).
    #[error("Google token request to {token_uri} failed: {message}")]
    Request {
        /// The token endpoint.
        token_uri: String,
        /// The transport error.
        message: String,
    },
    /// The endpoint refused with an OAuth error: google-auth-library's `error: description`.
    #[error("{error}: {}", description.as_deref().unwrap_or("undefined"))]
    Refused {
        /// The OAuth `error` code.
        error: String,
        /// Its `error_description`.
        description: Option<String>,
    },
    /// A non-2xx answer without an OAuth error (the body's first 500 characters).
    #[error("Google token request failed ({status}): {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// A 2xx answer that is not JSON.
    #[error("Google token response is not JSON")]
    NotJson,
    /// A 2xx answer without an `access_token`.
    #[error("Google token response has no access_token")]
    NoAccessToken,
}

/// Google's token endpoint.
pub const GOOGLE_TOKEN_URL: &str = "https://oauth2.googleapis.com/token";
/// The OAuth scope Vertex AI needs.
pub const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// `google-auth-library`'s text when no credentials file is found.
pub const NO_CREDENTIALS: &str = "Could not load the default credentials. Browse to https://cloud.google.com/docs/authentication/getting-started for more information.";
/// A cached token is refreshed this long before it expires.
const REFRESH_MARGIN: Duration = Duration::from_secs(300);
/// Lifetime assumed when the token response names none.
const DEFAULT_EXPIRES_IN: u64 = 3600;
/// Credentials files and token responses larger than this are refused (a key file is ~2 KiB).
const MAX_DOCUMENT_BYTES: u64 = 1 << 20;

/// The credentials file to use, or `None` when there is none.
pub fn credentials_path(env: &ProviderEnv) -> Option<PathBuf> {
    if let Some(path) = env.get("GOOGLE_APPLICATION_CREDENTIALS") {
        return Some(PathBuf::from(path));
    }
    let config = env.get("CLOUDSDK_CONFIG").map(PathBuf::from).or_else(|| {
        env.get("HOME")
            .map(|h| Path::new(&h).join(".config/gcloud"))
    })?;
    let file = config.join("application_default_credentials.json");
    file.is_file().then_some(file)
}

#[derive(Deserialize)]
struct CredentialsFile {
    #[serde(rename = "type")]
    kind: Option<String>,
    client_email: Option<String>,
    private_key: Option<String>,
    token_uri: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    refresh_token: Option<String>,
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    scope: &'a str,
    aud: &'a str,
    exp: u64,
    iat: u64,
}

struct Cached {
    token: String,
    refresh_at: Instant,
}

/// Access tokens per credentials file (keyed by path and content, so an edited file is
/// exchanged again).
#[derive(Default)]
pub struct TokenCache {
    tokens: Mutex<HashMap<(PathBuf, [u8; 32]), Cached>>,
}

impl std::fmt::Debug for TokenCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenCache { .. }")
    }
}

fn missing(path: &Path, field: &'static str) -> AdcError {
    AdcError::MissingField {
        path: path.to_owned(),
        field,
    }
}

impl TokenCache {
    /// A valid access token for the credentials `env` points at, exchanging (and caching) a
    /// new one when needed. `Err` carries a clear text: no file, unreadable file, unsupported
    /// type, bad key, or the token endpoint's `error: error_description`.
    pub async fn access_token(
        &self,
        env: &ProviderEnv,
        client: &reqwest::Client,
    ) -> Result<String, AdcError> {
        let path = credentials_path(env).ok_or(AdcError::NoCredentials)?;
        let bytes = read_limited(&path).map_err(|source| AdcError::Unreadable {
            path: path.clone(),
            source,
        })?;
        let key = (path.clone(), Sha256::digest(&bytes).into());
        if let Some(token) = self.cached(&key) {
            return Ok(token);
        }
        let file: CredentialsFile =
            serde_json::from_slice(&bytes).map_err(|source| AdcError::InvalidJson {
                path: path.clone(),
                source,
            })?;
        let form = match file.kind.as_deref() {
            Some("service_account") => service_account_form(&path, &file)?,
            Some("authorized_user") => authorized_user_form(&path, &file)?,
            other => {
                return Err(AdcError::UnsupportedType {
                    path: path.clone(),
                    kind: other.map(str::to_owned),
                });
            }
        };
        let (token_uri, form) = form;
        let started = Instant::now();
        let (token, expires_in) = exchange(client, &token_uri, &form).await?;
        let lifetime = Duration::from_secs(expires_in);
        let refresh_at = started + lifetime.saturating_sub(REFRESH_MARGIN);
        let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        tokens.insert(
            key,
            Cached {
                token: token.clone(),
                refresh_at,
            },
        );
        Ok(token)
    }

    fn cached(&self, key: &(PathBuf, [u8; 32])) -> Option<String> {
        let tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        tokens
            .get(key)
            .filter(|c| Instant::now() < c.refresh_at)
            .map(|c| c.token.clone())
    }
}

fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_DOCUMENT_BYTES {
        return Err(std::io::Error::other("larger than 1 MiB"));
    }
    std::fs::read(path)
}

type Form = (String, Vec<(&'static str, String)>);

fn service_account_form(path: &Path, file: &CredentialsFile) -> Result<Form, AdcError> {
    let email = file
        .client_email
        .as_deref()
        .ok_or_else(|| missing(path, "client_email"))?;
    let pem = file
        .private_key
        .as_deref()
        .ok_or_else(|| missing(path, "private_key"))?;
    let token_uri = file
        .token_uri
        .clone()
        .unwrap_or_else(|| GOOGLE_TOKEN_URL.to_owned());
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()).map_err(|source| {
        AdcError::BadKey {
            path: path.to_owned(),
            source,
        }
    })?;
    let iat = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let claims = Claims {
        iss: email,
        scope: CLOUD_PLATFORM_SCOPE,
        aud: &token_uri,
        exp: iat.saturating_add(3600),
        iat,
    };
    // pi's assertion header is `{"alg":"RS256"}` alone.
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.typ = None;
    let assertion = jsonwebtoken::encode(&header, &claims, &key).map_err(AdcError::Signing)?;
    Ok((
        token_uri,
        vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
            ),
            ("assertion", assertion),
        ],
    ))
}

fn authorized_user_form(path: &Path, file: &CredentialsFile) -> Result<Form, AdcError> {
    let field =
        |v: &Option<String>, name: &'static str| v.clone().ok_or_else(|| missing(path, name));
    Ok((
        file.token_uri
            .clone()
            .unwrap_or_else(|| GOOGLE_TOKEN_URL.to_owned()),
        vec![
            ("client_id", field(&file.client_id, "client_id")?),
            (
                "client_secret",
                field(&file.client_secret, "client_secret")?,
            ),
            (
                "refresh_token",
                field(&file.refresh_token, "refresh_token")?,
            ),
            ("grant_type", "refresh_token".to_owned()),
        ],
    ))
}

/// One token request: `(access_token, expires_in)`.
async fn exchange(
    client: &reqwest::Client,
    token_uri: &str,
    form: &[(&'static str, String)],
) -> Result<(String, u64), AdcError> {
    let body = form
        .iter()
        .map(|(k, v)| format!("{k}={}", form_encode(v)))
        .collect::<Vec<_>>()
        .join("&");
    let response = client
        .post(token_uri)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded;charset=UTF-8",
        )
        .body(body)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .map_err(|e| AdcError::Request {
            token_uri: token_uri.to_owned(),
            message: e.without_url().to_string(),
        })?;
    let status = response.status();
    let text = response.text().await.map_err(|e| AdcError::Request {
        token_uri: token_uri.to_owned(),
        message: e.without_url().to_string(),
    })?;
    let json: Option<Value> = serde_json::from_str(&text).ok();
    if !status.is_success() {
        let error = json
            .as_ref()
            .and_then(|j| j.get("error"))
            .and_then(Value::as_str);
        let description = json
            .as_ref()
            .and_then(|j| j.get("error_description"))
            .and_then(Value::as_str);
        return Err(match error {
            Some(e) => AdcError::Refused {
                error: e.to_owned(),
                description: description.map(str::to_owned),
            },
            None => AdcError::Status {
                status: status.as_u16(),
                body: text.chars().take(500).collect(),
            },
        });
    }
    let json = json.ok_or(AdcError::NotJson)?;
    let token = json
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or(AdcError::NoAccessToken)?;
    let expires_in = json
        .get("expires_in")
        .and_then(Value::as_f64)
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(DEFAULT_EXPIRES_IN, |s| s as u64);
    Ok((token.to_owned(), expires_in))
}

/// `application/x-www-form-urlencoded` value encoding.
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_values_are_encoded() {
        assert_eq!(form_encode("a b/c:d=e&f"), "a+b%2Fc%3Ad%3De%26f");
        assert_eq!(form_encode("1//0g-x_y.z"), "1%2F%2F0g-x_y.z");
    }

    #[test]
    fn the_credentials_file_is_found_as_pi_looks() {
        let dir = std::env::temp_dir().join(format!("pi-adc-find-{}", std::process::id()));
        let gcloud = dir.join("gcloud");
        std::fs::create_dir_all(&gcloud).unwrap();
        let env = |pairs: &[(&str, &str)]| ProviderEnv::fixed(pairs.iter().copied());
        assert_eq!(
            credentials_path(&env(&[("GOOGLE_APPLICATION_CREDENTIALS", "/x.json")])),
            Some(PathBuf::from("/x.json"))
        );
        let config = gcloud.to_str().unwrap();
        assert_eq!(credentials_path(&env(&[("CLOUDSDK_CONFIG", config)])), None);
        std::fs::write(gcloud.join("application_default_credentials.json"), "{}").unwrap();
        assert_eq!(
            credentials_path(&env(&[("CLOUDSDK_CONFIG", config)])),
            Some(gcloud.join("application_default_credentials.json"))
        );
        assert_eq!(credentials_path(&env(&[])), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
