//! The manifest that describes an extension process: `{command, args, env, eventTimeoutMs,
//! cancelGraceMs}` (see `docs/extension-protocol.md`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// The deadline of every call but tool `execute` and commands, unless the manifest says.
pub const DEFAULT_EVENT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long an aborted tool `execute` may take to answer, unless the manifest says.
pub const DEFAULT_CANCEL_GRACE: Duration = Duration::from_secs(5);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Raw {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: std::collections::BTreeMap<String, String>,
    event_timeout_ms: Option<u64>,
    cancel_grace_ms: Option<u64>,
}

/// A parsed manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The manifest file (the extension's path in error records).
    pub path: PathBuf,
    /// The program: a bare name is looked up on `PATH`; a relative path with a `/` is
    /// resolved against the manifest's directory.
    pub command: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables added to the environment, in name order.
    pub env: Vec<(String, String)>,
    /// The deadline of events and other calls.
    pub event_timeout: Duration,
    /// The grace period of an aborted tool `execute`.
    pub cancel_grace: Duration,
}

/// Why a manifest cannot be used; the text is the `error` of the extension's load error.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file cannot be read.
    #[error("{0}")]
    Read(std::io::Error),
    /// Not JSON of the manifest's shape.
    #[error("invalid manifest: {0}")]
    Json(serde_json::Error),
    /// `command` is the empty string.
    #[error("invalid manifest: \"command\" is empty")]
    EmptyCommand,
}

impl Manifest {
    /// Reads and checks the manifest at `path` (absolute).
    ///
    /// # Errors
    /// The read error, or the JSON error of a malformed manifest (`command` missing, an
    /// unknown field, a wrong type).
    pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(ManifestError::Read)?;
        Manifest::parse(path, &text)
    }

    /// [`Manifest::load`] on text already read.
    ///
    /// # Errors
    /// As [`Manifest::load`].
    pub fn parse(path: &Path, text: &str) -> Result<Manifest, ManifestError> {
        let raw: Raw = serde_json::from_str(text).map_err(ManifestError::Json)?;
        if raw.command.is_empty() {
            return Err(ManifestError::EmptyCommand);
        }
        let dir = path.parent().unwrap_or(Path::new("/"));
        let command = if raw.command.contains('/') {
            dir.join(&raw.command)
        } else {
            PathBuf::from(&raw.command)
        };
        Ok(Manifest {
            path: path.to_path_buf(),
            command,
            args: raw.args,
            env: raw.env.into_iter().collect(),
            event_timeout: raw
                .event_timeout_ms
                .map_or(DEFAULT_EVENT_TIMEOUT, Duration::from_millis),
            cancel_grace: raw
                .cancel_grace_ms
                .map_or(DEFAULT_CANCEL_GRACE, Duration::from_millis),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_commands_resolve_against_the_manifest() {
        let p = Path::new("/ext/guard.json");
        let m =
            Manifest::parse(p, r#"{"command":"./run.sh","args":["a"],"env":{"K":"v"}}"#).unwrap();
        assert_eq!(m.command, PathBuf::from("/ext/./run.sh"));
        assert_eq!(m.args, ["a"]);
        assert_eq!(m.env, [("K".to_owned(), "v".to_owned())]);
        assert_eq!(m.event_timeout, DEFAULT_EVENT_TIMEOUT);
        let bare = Manifest::parse(p, r#"{"command":"python3","eventTimeoutMs":250}"#).unwrap();
        assert_eq!(bare.command, PathBuf::from("python3"));
        assert_eq!(bare.event_timeout, Duration::from_millis(250));
    }

    #[test]
    fn malformed_manifests_are_errors() {
        let p = Path::new("/x.json");
        for bad in [
            "{}",
            "[]",
            r#"{"command":""}"#,
            r#"{"command":"a","bogus":1}"#,
            "not json",
        ] {
            if bad == r#"{"command":""}"# {
                assert_eq!(
                    Manifest::parse(p, bad).unwrap_err().to_string(),
                    r#"invalid manifest: "command" is empty"#
                );
            }
            let e = Manifest::parse(p, bad).unwrap_err();
            assert!(e.to_string().starts_with("invalid manifest"), "{bad}: {e}");
        }
    }
}
