//! The target stores of session replacement: a new session beside the current one, an opened
//! file, a fork or clone of the current branch.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/agent-session-runtime.ts` (`newSession`,
//! `switchSession`, `fork`) and `core/session-cwd.ts` (`assertSessionCwdExists`).
//! Every function here only reads the current store; nothing is torn down yet.

use std::path::{Path, PathBuf};

use pi_agent_core::AgentMessage;
use serde_json::Map;

use crate::session::queues::content_text;
use crate::storage::entry::{SESSION_VERSION, SessionHeader};
use crate::storage::fork::{ForkPosition, create_branched_session};
use crate::storage::session_paths::{iso_now, new_session_id, session_file_name};
use crate::storage::{SessionStore, StoreError};

/// `Invalid entry ID for forking`: an unknown entry, or (`before`) not a user message.
pub const INVALID_FORK_ENTRY: &str = "Invalid entry ID for forking";

/// Forking or cloning a session whose file was not written yet (no assistant message).
pub const SESSION_NOT_SAVED: &str = "This session has not been saved yet. Wait for the first assistant response before cloning or forking it.";

/// The session directory of `store` (the directory of its file); `None` in memory.
pub fn session_dir_of(store: &SessionStore) -> Option<PathBuf> {
    store.path().and_then(Path::parent).map(Path::to_path_buf)
}

/// A new empty session: in `dir` (written at its first assistant message) with
/// `parentSession` in its header when given, or in memory when `dir` is `None` (the current
/// session is in memory, `--no-session`).
///
/// # Errors
/// None in practice (an empty session is never written here); the store's error type is
/// kept for uniformity.
pub fn new_session_store(
    dir: Option<&Path>,
    cwd: &str,
    parent_session: Option<String>,
) -> Result<SessionStore, StoreError> {
    let header = SessionHeader {
        version: SESSION_VERSION,
        id: new_session_id(),
        timestamp: iso_now(),
        cwd: cwd.to_owned(),
        parent_session,
        extra: Map::new(),
    };
    let path = dir.map(|d| d.join(session_file_name(&header.timestamp, &header.id)));
    SessionStore::from_entries(header, path, Vec::new())
}

/// A session file whose stored cwd no longer exists (pi's `assertSessionCwdExists`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Stored session working directory does not exist: {cwd}\nSession file: {}\nCurrent working directory: {}",
    file.display(),
    fallback_cwd.display()
)]
pub struct MissingSessionCwd {
    /// The cwd stored in the session header.
    pub cwd: String,
    /// The session file.
    pub file: PathBuf,
    /// The directory the session would have run in instead.
    pub fallback_cwd: PathBuf,
}

/// pi's `assertSessionCwdExists`: a session file whose stored cwd no longer exists is
/// refused. In-memory sessions and an empty stored cwd pass.
///
/// # Errors
/// [`MissingSessionCwd`].
pub fn assert_session_cwd_exists(
    store: &SessionStore,
    fallback_cwd: &Path,
) -> Result<(), MissingSessionCwd> {
    let Some(file) = store.path() else {
        return Ok(());
    };
    let cwd = &store.header().cwd;
    if cwd.is_empty() || Path::new(cwd).exists() {
        return Ok(());
    }
    Err(MissingSessionCwd {
        cwd: cwd.clone(),
        file: file.to_path_buf(),
        fallback_cwd: fallback_cwd.to_path_buf(),
    })
}

/// Why [`fork_store`] made no fork.
#[derive(Debug, thiserror::Error)]
pub enum ForkError {
    /// [`INVALID_FORK_ENTRY`]: an unknown entry, or (`before`) not a user message.
    #[error("{INVALID_FORK_ENTRY}")]
    InvalidEntry,
    /// [`SESSION_NOT_SAVED`]: the current file is not on disk yet.
    #[error("{SESSION_NOT_SAVED}")]
    NotSaved,
    /// Creating the new store failed (its text is the store's).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A fork of `store` at `entry_id`, and (for [`ForkPosition::Before`]) the forked user
/// message's text (its text blocks joined).
///
/// - `before` needs a user message and branches at its parent; `at` keeps the entry.
/// - A store with a file: forking before a root user message makes a new empty session with
///   `parentSession` = the current file; otherwise the file must exist on disk
///   ([`SESSION_NOT_SAVED`]) and the branch is copied into a new file beside it
///   ([`create_branched_session`]: `parentSession` = the current file).
/// - A store in memory: the same, in memory (without `parentSession`).
///
/// # Errors
/// [`ForkError`].
pub fn fork_store(
    store: &SessionStore,
    entry_id: &str,
    position: ForkPosition,
) -> Result<(SessionStore, Option<String>), ForkError> {
    let entry = store.get(entry_id).map_err(|_| ForkError::InvalidEntry)?;
    let (target, text) = match position {
        ForkPosition::At => (Some(entry.id.clone()), None),
        ForkPosition::Before => match entry.message() {
            Some(AgentMessage::User(u)) => {
                (entry.parent_id.clone(), Some(content_text(&u.content)))
            }
            _ => return Err(ForkError::InvalidEntry),
        },
    };
    let cwd = store.header().cwd.clone();
    let next = match (store.path(), target) {
        (Some(file), None) => new_session_store(
            session_dir_of(store).as_deref(),
            &cwd,
            Some(file.display().to_string()),
        ),
        (Some(_), Some(_)) if !store.is_persisted() => return Err(ForkError::NotSaved),
        (None, None) => new_session_store(None, &cwd, None),
        (_, Some(leaf)) => create_branched_session(store, &leaf),
    };
    Ok((next?, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_stored_cwd_names_the_file_and_the_fallback() {
        let dir = tempfile::tempdir().unwrap();
        let header = SessionHeader {
            version: SESSION_VERSION,
            id: "s".into(),
            timestamp: iso_now(),
            cwd: "/no/such/dir".into(),
            parent_session: None,
            extra: Map::new(),
        };
        let file = dir.path().join("s.jsonl");
        let store = SessionStore::from_entries(header, Some(file.clone()), Vec::new()).unwrap();
        assert_eq!(
            assert_session_cwd_exists(&store, Path::new("/here"))
                .unwrap_err()
                .to_string(),
            format!(
                "Stored session working directory does not exist: /no/such/dir\nSession file: {}\nCurrent working directory: /here",
                file.display()
            )
        );
        assert!(
            assert_session_cwd_exists(&SessionStore::in_memory("/no/such"), Path::new("/")).is_ok()
        );
    }

    #[test]
    fn a_new_store_carries_the_parent_and_lives_in_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let s = new_session_store(Some(dir.path()), "/w", Some("/p.jsonl".into())).unwrap();
        assert_eq!(s.header().parent_session.as_deref(), Some("/p.jsonl"));
        assert_eq!(s.path().unwrap().parent(), Some(dir.path()));
        assert!(!s.is_persisted());
        assert!(
            new_session_store(None, "/w", None)
                .unwrap()
                .path()
                .is_none()
        );
    }

    #[test]
    fn forking_an_unknown_entry_is_refused() {
        let store = SessionStore::in_memory("/w");
        for position in [ForkPosition::Before, ForkPosition::At] {
            assert_eq!(
                fork_store(&store, "nope", position)
                    .unwrap_err()
                    .to_string(),
                INVALID_FORK_ENTRY
            );
        }
    }
}
