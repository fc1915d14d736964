//! `auth.json`: stored credentials per provider, plus run-time `--api-key` overrides.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/auth-storage.js` and `runtime-credentials.js`:
//! - the file is `{"<provider>": {"type":"api_key","key"?,"env"?} | {"type":"oauth",…}}`;
//! - opening it creates the agent directory (0700) and the file as `{}` with mode 0600 (the mode
//!   applies only on creation, so administrator-set modes stay); reads and writes hold its lock;
//! - a stored `key` resolves like every configured value (literal, `$VAR`, `!command` cached
//!   for the process), with the credential's `env` consulted before the process environment;
//! - a stored credential beats environment variables; a run-time key (`--api-key`) beats both
//!   and is never written;
//! - writes are `JSON.stringify(data, null, 2)`.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::js_json::{JsonParseError, parse_json};
use super::lock::FileLock;
use super::resolve_value::{EnvOverlay, resolve_config_value};
use super::text::strip_bom;

/// One stored credential. `Debug` never prints keys, tokens or variable values.
#[derive(Clone, PartialEq)]
pub enum Credential {
    /// `{"type":"api_key","key"?,"env"?}`; `key` is the configured (unresolved) value.
    ApiKey {
        /// Literal, `$VAR`/`${VAR}` template or `!command`.
        key: Option<String>,
        /// Variables for resolving `key` (and the provider's headers).
        env: Option<EnvOverlay>,
    },
    /// `{"type":"oauth","access","refresh","expires",…}` as stored.
    OAuth(Map<String, Value>),
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credential::ApiKey { key, env } => f
                .debug_struct("ApiKey")
                .field("key", &key.as_ref().map(|_| "<redacted>"))
                .field("env", &env.as_ref().map(|e| e.keys().collect::<Vec<_>>()))
                .finish(),
            Credential::OAuth(map) => f
                .debug_tuple("OAuth")
                .field(&map.keys().collect::<Vec<_>>())
                .finish(),
        }
    }
}

impl Credential {
    /// `"api_key"` or `"oauth"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Credential::ApiKey { .. } => "api_key",
            Credential::OAuth(_) => "oauth",
        }
    }
}

/// Why `auth.json` could not be read, parsed or written; `Display` is pi's text (the
/// credential store's load error, shown with the file's path).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthFileError {
    /// The text is not JSON: `Failed to parse auth.json: <JSON.parse message>`.
    #[error("Failed to parse auth.json: {0}")]
    Syntax(String),
    /// The JSON is not an object.
    #[error("Invalid auth.json: expected an object")]
    NotAnObject,
    /// A provider's entry is not a valid credential.
    #[error("Invalid auth.json credential for provider \"{0}\"")]
    InvalidCredential(String),
    /// Creating, locking or reading the file failed (the I/O error).
    #[error("Failed to read auth.json: {0}")]
    Read(String),
    /// Writing the file failed (the I/O error).
    #[error("{0}")]
    Write(String),
}

/// Validates one entry like pi's `ReadOnlyAuthStorage.load`.
fn parse_credential(provider: &str, value: &Value) -> Result<Credential, AuthFileError> {
    let invalid = || AuthFileError::InvalidCredential(provider.to_owned());
    let obj = value.as_object().ok_or_else(invalid)?;
    match obj.get("type").and_then(Value::as_str) {
        Some("api_key") => {
            let key = match obj.get("key") {
                None => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => return Err(invalid()),
            };
            let env = match obj.get("env") {
                None => None,
                Some(Value::Object(m)) => {
                    let mut env = EnvOverlay::new();
                    for (k, v) in m {
                        env.insert(k.clone(), v.as_str().ok_or_else(invalid)?.to_owned());
                    }
                    Some(env)
                }
                Some(_) => return Err(invalid()),
            };
            Ok(Credential::ApiKey { key, env })
        }
        Some("oauth")
            if obj.get("access").is_some_and(Value::is_string)
                && obj.get("refresh").is_some_and(Value::is_string)
                && obj
                    .get("expires")
                    .and_then(Value::as_f64)
                    .is_some_and(f64::is_finite) =>
        {
            Ok(Credential::OAuth(obj.clone()))
        }
        _ => Err(invalid()),
    }
}

/// The file text as JSON, as pi 0.85.0 `AuthStorage.parseStorageData` reads it: an empty file
/// is `{}`; anything else (whitespace only included) goes through `JSON.parse` after the BOM.
///
/// Errors: V8's `JSON.parse` message, e.g. `Unexpected end of JSON input` or
/// `Expected ',' or '}' after property value in JSON at position 44 (line 1 column 45)`.
pub(crate) fn parse_auth_syntax(text: &str) -> Result<Value, JsonParseError> {
    if text.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    parse_json(strip_bom(text))
}

/// Parses the whole file text (BOM stripped; empty = `{}`).
///
/// Errors: `Failed to parse auth.json: <why, with line and column>`, `Invalid auth.json:
/// expected an object`, `Invalid auth.json credential for provider "<p>"`.
pub fn parse_auth_json(text: &str) -> Result<Map<String, Value>, AuthFileError> {
    let value = parse_auth_syntax(text).map_err(|e| AuthFileError::Syntax(e.to_string()))?;
    let Value::Object(map) = value else {
        return Err(AuthFileError::NotAnObject);
    };
    for (provider, cred) in &map {
        parse_credential(provider, cred)?;
    }
    Ok(map)
}

/// Credentials from `auth.json` plus run-time overrides. `Debug` prints provider names only.
#[derive(Default)]
pub struct AuthStorage {
    path: Option<PathBuf>,
    data: Map<String, Value>,
    runtime: HashMap<String, String>,
    error: Option<String>,
    /// `JSON.parse`'s message when the file's text is not JSON (pi's credential store then
    /// fails every read).
    syntax_error: Option<String>,
}

impl std::fmt::Debug for AuthStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthStorage")
            .field("path", &self.path)
            .field("stored", &self.data.keys().collect::<Vec<_>>())
            .field("runtime", &self.runtime.keys().collect::<Vec<_>>())
            .field("error", &self.error)
            .field("syntax_error", &self.syntax_error)
            .finish()
    }
}

fn create_private_file(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(mut f) => f.write_all(b"{}"),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Creates the agent directory (0700) and `auth.json` as `{}` (0600) when missing, as pi's
/// `ensureParentDir` + `ensureFileExists`.
pub(crate) fn prepare_file(path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    create_private_file(path)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

impl AuthStorage {
    /// Opens (creating if needed) the file at `path` and loads it. A broken file loads as empty
    /// and is reported by [`AuthStorage::error`] (`… File: <path>` appended) and, when its text
    /// is not JSON, by [`AuthStorage::syntax_error`]; it is never rewritten (setting a
    /// credential re-reads the file and fails while it is broken).
    pub fn open(path: &Path) -> Self {
        let mut storage = AuthStorage {
            path: Some(path.to_path_buf()),
            ..Default::default()
        };
        storage.reload();
        storage
    }

    /// Credentials held in memory only.
    pub fn in_memory(data: Map<String, Value>) -> Self {
        AuthStorage {
            data,
            ..Default::default()
        }
    }

    /// Re-reads the file.
    pub fn reload(&mut self) {
        let Some(path) = self.path.clone() else {
            return;
        };
        match Self::read_locked(&path) {
            Ok(data) => {
                self.data = data;
                self.error = None;
                self.syntax_error = None;
            }
            Err(e) => {
                self.error = Some(format!("{e}\n\nFile: {}", path.display()));
                self.syntax_error = match e {
                    AuthFileError::Syntax(syntax) => Some(syntax),
                    _ => None,
                };
            }
        }
    }

    /// Creates the directory and file if needed and takes the file's lock.
    fn ensure_and_lock(path: &Path) -> Result<FileLock, AuthFileError> {
        let read = |e: std::io::Error| AuthFileError::Read(e.to_string());
        prepare_file(path).map_err(read)?;
        FileLock::acquire(path).map_err(read)
    }

    fn read_unlocked(path: &Path) -> Result<Map<String, Value>, AuthFileError> {
        let text = crate::config::text::read_config_text(path)
            .map_err(|e| AuthFileError::Read(e.to_string()))?;
        parse_auth_json(&text)
    }

    /// Reads under the lock; [`AuthFileError::Syntax`] carries `JSON.parse`'s message when the
    /// text is not JSON.
    fn read_locked(path: &Path) -> Result<Map<String, Value>, AuthFileError> {
        let _lock = Self::ensure_and_lock(path)?;
        let text = crate::config::text::read_config_text(path)
            .map_err(|e| AuthFileError::Read(e.to_string()))?;
        parse_auth_json(&text)
    }

    /// The load error of the last read, if any.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// `JSON.parse`'s message when the file's text is not JSON: pi 0.85.0's file credential
    /// store then fails every read, so every key lookup that reaches the store fails with
    /// `Credential store read failed for <provider>: <message>` (see
    /// [`crate::config::registry::ModelRegistry::credential_store_error`]). `None` for a
    /// readable file, also one with an invalid shape (loaded as empty, see [`Self::error`]).
    pub fn syntax_error(&self) -> Option<&str> {
        self.syntax_error.as_deref()
    }

    /// The file, when file-backed.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Providers with a stored credential, in file order.
    pub fn stored_providers(&self) -> Vec<String> {
        self.data.keys().cloned().collect()
    }

    /// Whether the provider has a stored credential (any type).
    pub fn has_stored(&self, provider: &str) -> bool {
        self.data.contains_key(provider)
    }

    /// The stored credential of a provider.
    pub fn credential(&self, provider: &str) -> Option<Credential> {
        parse_credential(provider, self.data.get(provider)?).ok()
    }

    /// The stored OAuth entry of a provider, as stored.
    pub fn oauth_entry(&self, provider: &str) -> Option<&Map<String, Value>> {
        let entry = self.data.get(provider)?.as_object()?;
        matches!(self.credential(provider)?, Credential::OAuth(_)).then_some(entry)
    }

    /// Replaces a provider's entry in memory only (after [`super::oauth::refresh_stored`]
    /// wrote it to the file).
    pub fn replace_in_memory(&mut self, provider: &str, entry: Map<String, Value>) {
        self.data.insert(provider.to_owned(), Value::Object(entry));
    }

    /// The stored key, resolved: api_key → `key` via the value resolver (with the credential's
    /// `env`); oauth → the `access` token. `None` when absent or unresolvable.
    pub fn stored_api_key(&self, provider: &str) -> Option<String> {
        match self.credential(provider)? {
            Credential::ApiKey { key, env } => resolve_config_value(&key?, env.as_ref()),
            Credential::OAuth(map) => map.get("access")?.as_str().map(str::to_owned),
        }
    }

    /// The credential's `env` overlay (for header resolution).
    pub fn stored_env(&self, provider: &str) -> Option<EnvOverlay> {
        match self.credential(provider)? {
            Credential::ApiKey { env, .. } => env,
            Credential::OAuth(_) => None,
        }
    }

    /// Sets a run-time key (`--api-key`); never persisted.
    pub fn set_runtime_api_key(&mut self, provider: &str, key: &str) {
        self.runtime.insert(provider.to_owned(), key.to_owned());
    }

    /// Removes a run-time key.
    pub fn remove_runtime_api_key(&mut self, provider: &str) {
        self.runtime.remove(provider);
    }

    /// The run-time key of a provider.
    pub fn runtime_api_key(&self, provider: &str) -> Option<&str> {
        self.runtime.get(provider).map(String::as_str)
    }

    /// The key auth.json and run-time overrides give a provider: run-time first, then stored.
    pub fn api_key(&self, provider: &str) -> Option<String> {
        self.runtime_api_key(provider)
            .map(str::to_owned)
            .or_else(|| self.stored_api_key(provider))
    }

    /// Stores `{"type":"api_key","key":key}` for a provider. Errors: I/O, lock, or a file that
    /// no longer parses.
    pub fn set_api_key(&mut self, provider: &str, key: &str) -> Result<(), AuthFileError> {
        let mut cred = Map::new();
        cred.insert("type".into(), Value::from("api_key"));
        cred.insert("key".into(), Value::from(key));
        self.modify(provider, Some(Value::Object(cred)))
    }

    /// Stores an OAuth entry as a login produced it (`{"type":"oauth","refresh","access",
    /// "expires",…}`). Errors: as [`AuthStorage::set_api_key`].
    pub fn set_oauth(
        &mut self,
        provider: &str,
        entry: Map<String, Value>,
    ) -> Result<(), AuthFileError> {
        self.modify(provider, Some(Value::Object(entry)))
    }

    /// Removes a provider's stored credential.
    pub fn remove(&mut self, provider: &str) -> Result<(), AuthFileError> {
        self.modify(provider, None)
    }

    fn modify(&mut self, provider: &str, value: Option<Value>) -> Result<(), AuthFileError> {
        let Some(path) = self.path.clone() else {
            match value {
                Some(v) => self.data.insert(provider.to_owned(), v),
                None => self.data.remove(provider),
            };
            return Ok(());
        };
        let _lock = Self::ensure_and_lock(&path)?;
        let mut current = Self::read_unlocked(&path)?;
        match value {
            Some(v) => current.insert(provider.to_owned(), v),
            None => current.remove(provider),
        };
        let text = pi_ai::json::to_string_pretty(&Value::Object(current.clone()))
            .map_err(|e| AuthFileError::Write(e.to_string()))?;
        super::replace::replace_file(&path, text.as_bytes(), 0o600)
            .map_err(|e| AuthFileError::Write(e.to_string()))?;
        self.data = current;
        self.error = None;
        self.syntax_error = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn open_creates_private_dir_and_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent/auth.json");
        let auth = AuthStorage::open(&path);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
        assert!(auth.error().is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
            let dmode = std::fs::metadata(path.parent().unwrap())
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(dmode, 0o700);
        }
        assert!(!tmp.path().join("agent/auth.json.lock").exists());
    }

    #[test]
    fn existing_mode_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("auth.json");
        std::fs::write(&path, "{}").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
            let mut auth = AuthStorage::open(&path);
            auth.set_api_key("openai", "k").unwrap();
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o640);
        }
    }

    #[test]
    fn stored_keys_resolve_like_config_values() {
        let auth = AuthStorage::in_memory(
            json!({
                "a": {"type": "api_key", "key": "literal"},
                "b": {"type": "api_key", "key": "$PIRS_AUTH_T", "env": {"PIRS_AUTH_T": "from-env"}},
                "c": {"type": "api_key", "key": "!printf cmd-key"},
                "d": {"type": "api_key", "key": "$PIRS_AUTH_UNSET"},
                "e": {"type": "oauth", "access": "acc", "refresh": "r", "expires": 1},
                "f": {"type": "api_key"},
            })
            .as_object()
            .unwrap()
            .clone(),
        );
        assert_eq!(auth.stored_api_key("a").as_deref(), Some("literal"));
        assert_eq!(auth.stored_api_key("b").as_deref(), Some("from-env"));
        assert_eq!(auth.stored_api_key("c").as_deref(), Some("cmd-key"));
        assert_eq!(auth.stored_api_key("d"), None);
        assert_eq!(auth.stored_api_key("e").as_deref(), Some("acc"));
        assert_eq!(auth.stored_api_key("f"), None);
        assert!(auth.has_stored("d"));
        assert!(!auth.has_stored("zzz"));
        assert_eq!(auth.credential("e").unwrap().kind(), "oauth");
    }

    #[test]
    fn runtime_key_beats_stored() {
        let mut auth = AuthStorage::in_memory(
            json!({"p": {"type": "api_key", "key": "stored"}})
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(auth.api_key("p").as_deref(), Some("stored"));
        auth.set_runtime_api_key("p", "cli");
        assert_eq!(auth.api_key("p").as_deref(), Some("cli"));
        auth.remove_runtime_api_key("p");
        assert_eq!(auth.api_key("p").as_deref(), Some("stored"));
    }

    #[test]
    fn set_and_remove_write_the_file_pretty() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("auth.json");
        let mut auth = AuthStorage::open(&path);
        auth.set_api_key("openai", "sk-1").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"openai\": {\n    \"type\": \"api_key\",\n    \"key\": \"sk-1\"\n  }\n}"
        );
        // Another process adds a provider; our write keeps it.
        std::fs::write(
            &path,
            r#"{"openai":{"type":"api_key","key":"sk-1"},"groq":{"type":"api_key","key":"g"}}"#,
        )
        .unwrap();
        auth.remove("openai").unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v, json!({"groq": {"type": "api_key", "key": "g"}}));
        assert_eq!(auth.stored_api_key("groq").as_deref(), Some("g"));
    }

    #[test]
    fn broken_file_is_reported_with_path_and_line() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("auth.json");
        std::fs::write(&path, "{\n\"a\" 1}").unwrap();
        let auth = AuthStorage::open(&path);
        assert_eq!(
            auth.error().unwrap(),
            format!(
                "Failed to parse auth.json: Expected ':' after property name in JSON at position 6 (line 2 column 5)\n\nFile: {}",
                path.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\n\"a\" 1}");
    }

    #[test]
    fn only_a_json_syntax_error_is_a_store_read_failure() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("auth.json");
        // pi's `parseStorageData`: empty content is `{}`, whitespace goes to `JSON.parse`.
        for (text, syntax) in [
            ("", None),
            ("  \n", Some("Unexpected end of JSON input")),
            (
                "{\n\"a\" 1}",
                Some("Expected ':' after property name in JSON at position 6 (line 2 column 5)"),
            ),
            ("[]", None),
            (r#"{"x": {"type": "api_key", "key": 5}}"#, None),
        ] {
            std::fs::write(&path, text).unwrap();
            let mut auth = AuthStorage::open(&path);
            assert_eq!(auth.syntax_error(), syntax, "{text:?}");
            // Never rewritten, not even by a failed write.
            if syntax.is_some() {
                assert!(auth.set_api_key("p", "k").is_err());
            }
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        }
        // A repaired file clears it on reload.
        std::fs::write(&path, "{}").unwrap();
        let mut auth = AuthStorage::open(&path);
        std::fs::write(&path, "{\"a\":").unwrap();
        auth.reload();
        assert_eq!(auth.syntax_error(), Some("Unexpected end of JSON input"));
        std::fs::write(&path, "{}").unwrap();
        auth.reload();
        assert_eq!(auth.syntax_error(), None);
    }

    #[test]
    fn invalid_shapes() {
        assert_eq!(parse_auth_json("[]"), Err(AuthFileError::NotAnObject));
        assert_eq!(
            parse_auth_json(r#"{"x": {"type": "api_key", "key": 5}}"#),
            Err(AuthFileError::InvalidCredential("x".into()))
        );
        assert_eq!(
            parse_auth_json(r#"{"x": {"type": "oauth", "access": "a"}}"#),
            Err(AuthFileError::InvalidCredential("x".into()))
        );
        assert!(parse_auth_json("\u{feff}{}").unwrap().is_empty());
    }
}
