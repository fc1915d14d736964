//! OAuth credentials that keep working: the refresh of an `auth.json` entry before a request.
//!
//! Mirrors pi-ai 0.85.1 `auth/resolve.js` `resolveStoredOAuth` over pi-coding-agent 0.85.0
//! `AuthStorage.modify`: an entry within 5 minutes of `expires` (or of a caller's longer
//! minimum) is refreshed under the `auth.json.lock` directory lock, taken with the refresh
//! path's rules (`FileLock::acquire_for_refresh`: stale after 30 s, retried within 30 s). The
//! file is re-read under the lock, since another pi (TypeScript or Rust) may have refreshed the
//! entry meanwhile; then nothing is requested. Otherwise the provider's refresh runs (15 s
//! timeout) and the new entry replaces the old one in place; every other entry is written back
//! as it was read, and the file is replaced atomically (mode 0600 when created).
//!
//! Failures, as pi words them: `OAuth refresh failed for <p>: <cause>`,
//! `Credential store modify failed for <p>: <cause>` (lock, read, JSON, write, a lock another
//! process took over), `OAuth refresh returned a token that expires too soon for <p>`. A failed
//! refresh writes nothing.

use std::path::Path;
use std::time::Duration;

use pi_ai::auth::oauth;
use serde_json::{Map, Value};

use super::auth::{parse_auth_syntax, prepare_file};
use super::lock::FileLock;

/// Why an OAuth credential could not be made fresh.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OAuthRefreshError {
    /// The provider's refresh failed (revoked token, HTTP error, timeout…).
    #[error("OAuth refresh failed for {provider}: {cause}")]
    Refresh {
        /// The provider id.
        provider: String,
        /// The provider's failure text.
        cause: String,
    },
    /// The credential store could not be locked, read or written.
    #[error("Credential store modify failed for {provider}: {cause}")]
    Store {
        /// The provider id.
        provider: String,
        /// The I/O, lock or JSON failure.
        cause: String,
    },
    /// The refreshed token does not last the requested minimum.
    #[error("OAuth refresh returned a token that expires too soon for {provider}")]
    TooSoon {
        /// The provider id.
        provider: String,
    },
}

/// The outcome of [`refresh_stored`].
#[derive(Debug, Clone, PartialEq)]
pub enum Refreshed {
    /// The entry now in the file: refreshed by us, or found fresh under the lock.
    Entry(Map<String, Value>),
    /// The provider has no OAuth entry any more (logged out meanwhile).
    Gone,
}

/// Refreshes `provider`'s OAuth entry in the `auth.json` at `path` when it expires within
/// `max(5 min, min_validity)`, as described in the module docs. `min_validity` given, the
/// refreshed token must last that long.
///
/// Errors: [`OAuthRefreshError`].
pub async fn refresh_stored(
    path: &Path,
    provider: &str,
    min_validity: Option<Duration>,
    timeout: Duration,
) -> Result<Refreshed, OAuthRefreshError> {
    refresh_stored_with(path, provider, min_validity, |current| async move {
        oauth::refresh(provider, &current, timeout).await
    })
    .await
}

/// [`refresh_stored`] with the provider exchange given: `exchange` gets the entry read under
/// the lock and returns the entry to store, or the failure (its text is the `cause` of
/// [`OAuthRefreshError::Refresh`]).
pub async fn refresh_stored_with<F, Fut, E>(
    path: &Path,
    provider: &str,
    min_validity: Option<Duration>,
    exchange: F,
) -> Result<Refreshed, OAuthRefreshError>
where
    F: FnOnce(Map<String, Value>) -> Fut,
    Fut: std::future::Future<Output = Result<Map<String, Value>, E>>,
    E: std::fmt::Display,
{
    let store = |cause: String| OAuthRefreshError::Store {
        provider: provider.to_owned(),
        cause,
    };
    prepare_file(path).map_err(|e| store(e.to_string()))?;
    let lock = FileLock::acquire_for_refresh(path)
        .await
        .map_err(|e| store(e.to_string()))?;
    let text = std::fs::read_to_string(path).map_err(|e| store(e.to_string()))?;
    let mut data = match parse_auth_syntax(&text).map_err(|e| store(e.to_string()))? {
        Value::Object(map) => map,
        _ => return Err(store("Invalid auth.json: expected an object".into())),
    };
    let Some(current) = data
        .get(provider)
        .and_then(Value::as_object)
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("oauth"))
        .cloned()
    else {
        return Ok(Refreshed::Gone);
    };
    if !oauth::expires_soon(&current, min_validity) {
        return Ok(Refreshed::Entry(current));
    }
    if !current.get("refresh").is_some_and(Value::is_string) {
        return Err(OAuthRefreshError::Refresh {
            provider: provider.to_owned(),
            cause: format!("Invalid auth.json credential for provider \"{provider}\""),
        });
    }
    let next = exchange(current)
        .await
        .map_err(|cause| OAuthRefreshError::Refresh {
            provider: provider.to_owned(),
            cause: cause.to_string(),
        })?;
    lock.check().map_err(|e| store(e.to_string()))?;
    if let Some(slot) = data.get_mut(provider) {
        *slot = Value::Object(next.clone());
    }
    let text =
        pi_ai::json::to_string_pretty(&Value::Object(data)).map_err(|e| store(e.to_string()))?;
    super::replace::replace_file(path, text.as_bytes(), 0o600).map_err(|e| store(e.to_string()))?;
    lock.check().map_err(|e| store(e.to_string()))?;
    drop(lock);
    if min_validity.is_some() && oauth::expires_soon(&next, min_validity) {
        return Err(OAuthRefreshError::TooSoon {
            provider: provider.to_owned(),
        });
    }
    Ok(Refreshed::Entry(next))
}

#[cfg(test)]
mod tests;
