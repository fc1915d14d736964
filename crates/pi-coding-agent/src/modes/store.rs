//! The session store a run uses.
//!
//! Mirrors pi-coding-agent 0.85.0 `main.js` session selection (spec §4.9): `--no-session` →
//! in memory (a header still exists); `--fork X` → a copy of X in this project's directory;
//! `--session X` → that file (X with `/`, `\` or a `.jsonl` suffix is a path, else an id
//! matched here, then in every project); `--continue` → the most recently modified session
//! here, else a new one; `--session-id ID` → that session here, else a new one with that
//! id; otherwise a new session. The directory is `--session-dir`, else settings
//! `sessionDir`, else `<agent dir>/sessions/--<cwd>--`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::setup::SetupError;
use crate::cli::ModeRequest;
use crate::config::paths::{AgentPaths, resolve_path};
use crate::config::settings::SettingsManager;
use crate::storage::SessionStore;
use crate::storage::discovery::{find_by_id, list_sessions, looks_like_path, most_recent};
use crate::storage::fork::fork_from;
use crate::storage::paths::default_session_dir;

/// The session directory of this run.
pub fn session_dir(request: &ModeRequest, settings: &SettingsManager) -> PathBuf {
    let cwd = request.cwd.display().to_string();
    match &request.args.session_dir {
        Some(d) => resolve_path(d, &request.cwd),
        None => settings
            .session_dir()
            .map(|d| resolve_path(&d.to_string_lossy(), &request.cwd))
            .unwrap_or_else(|| default_session_dir(&request.agent_dir, &cwd)),
    }
}

fn locate(arg: &str, dir: &Path, paths: &AgentPaths, cwd: &Path) -> Result<PathBuf, SetupError> {
    if looks_like_path(arg) {
        Ok(resolve_path(arg, cwd))
    } else {
        // pi prints this one without the `Error: ` prefix.
        find_by_id(dir, &paths.sessions(), arg).map_err(SetupError::Plain)
    }
}

fn store_error(e: crate::storage::StoreError) -> SetupError {
    SetupError::Error(e.to_string())
}

/// Opens or creates the store (see the module docs).
///
/// `--session-id` naming no session here creates one with that id after pi's warning
/// (`No project session found with id '<id>'; creating a new session with that id.`).
///
/// # Errors
/// [`SetupError::Plain`] `No session found matching '<X>'`; [`SetupError::Error`] an
/// unreadable or invalid session file, an invalid fork source (the store's error texts).
pub fn open_store(
    request: &ModeRequest,
    settings: &SettingsManager,
    paths: &AgentPaths,
    stderr: &mut dyn Write,
) -> Result<Arc<Mutex<SessionStore>>, SetupError> {
    let args = &request.args;
    let cwd = request.cwd.display().to_string();
    let dir = session_dir(request, settings);
    let store = if args.no_session {
        SessionStore::in_memory(&cwd)
    } else if let Some(src) = &args.fork {
        let path = locate(src, &dir, paths, &request.cwd)?;
        fork_from(&path, &dir, &cwd).map_err(store_error)?
    } else if let Some(s) = &args.session {
        let path = locate(s, &dir, paths, &request.cwd)?;
        SessionStore::open(&path, &cwd).map_err(store_error)?
    } else if args.continue_session {
        match most_recent(&dir) {
            Some(path) => SessionStore::open(&path, &cwd).map_err(store_error)?,
            None => SessionStore::create(&dir, &cwd, None),
        }
    } else if let Some(id) = &args.session_id {
        match list_sessions(&dir).into_iter().find(|s| s.header.id == *id) {
            Some(info) => SessionStore::open(&info.path, &cwd).map_err(store_error)?,
            None => {
                let _ = writeln!(
                    stderr,
                    "Warning: No project session found with id '{id}'; creating a new session with that id."
                );
                SessionStore::create(&dir, &cwd, Some(id.clone()))
            }
        }
    } else {
        SessionStore::create(&dir, &cwd, None)
    };
    Ok(Arc::new(Mutex::new(store)))
}
