//! The session store a run uses.
//!
//! Mirrors pi-coding-agent 0.85.0 `main.js` session selection (spec §4.9): `--no-session` →
//! in memory (a header still exists); `--fork X` → a copy of X in this project's directory;
//! `--session X` → that file (X with `/`, `\` or a `.jsonl` suffix is a path, else an id
//! matched here, then in every project); `--continue` → the most recently modified session
//! here, else a new one; `--session-id ID` → that session here, else a new one with that
//! id; otherwise a new session. The directory is `--session-dir`, else
//! `PI_CODING_AGENT_SESSION_DIR`, else settings `sessionDir`, else
//! `<agent dir>/sessions/--<cwd>--`. A directory other than that default one may hold several
//! projects' sessions: there `--continue` and `--session-id` only consider sessions whose
//! header `cwd` is the current directory (pi's `continueRecent` / `list` cwd filter).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::setup::SetupError;
use crate::cli::ModeRequest;
use crate::config::paths::{AgentPaths, resolve_path};
use crate::config::settings::SettingsManager;
use crate::storage::SessionStore;
use crate::storage::discovery::{SessionFileInfo, find_by_id, list_sessions, looks_like_path};
use crate::storage::fork::fork_from;
use crate::storage::paths::default_session_dir;

/// The environment variable naming the session directory (`--session-dir` wins over it; it
/// wins over settings `sessionDir`).
pub const ENV_SESSION_DIR: &str = "PI_CODING_AGENT_SESSION_DIR";

/// The session directory of this run: `--session-dir`, else a non-empty
/// `PI_CODING_AGENT_SESSION_DIR`, else settings `sessionDir`, else this project's default
/// directory; `~` is expanded and relative paths are taken from the working directory.
pub fn session_dir(request: &ModeRequest, settings: &SettingsManager) -> PathBuf {
    let cwd = request.cwd.display().to_string();
    let env = std::env::var(ENV_SESSION_DIR)
        .ok()
        .filter(|d| !d.is_empty());
    match request.args.session_dir.as_ref().or(env.as_ref()) {
        Some(d) => resolve_path(d, &request.cwd),
        None => settings
            .session_dir()
            .map(|d| resolve_path(&d.to_string_lossy(), &request.cwd))
            .unwrap_or_else(|| default_session_dir(&request.agent_dir, &cwd)),
    }
}

/// The sessions of `dir` that `--continue` and `--session-id` may pick: all of them in this
/// project's default directory, else only those whose header `cwd` is `request.cwd`.
fn project_sessions(request: &ModeRequest, dir: &Path) -> Vec<SessionFileInfo> {
    let cwd = request.cwd.display().to_string();
    let shared = dir != default_session_dir(&request.agent_dir, &cwd);
    let mut sessions = list_sessions(dir);
    if shared {
        sessions.retain(|s| {
            !s.header.cwd.is_empty() && resolve_path(&s.header.cwd, &request.cwd) == request.cwd
        });
    }
    sessions
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
        let recent = project_sessions(request, &dir)
            .into_iter()
            .max_by_key(|s| s.modified);
        match recent {
            Some(info) => SessionStore::open(&info.path, &cwd).map_err(store_error)?,
            None => SessionStore::create(&dir, &cwd, None),
        }
    } else if let Some(id) = &args.session_id {
        match project_sessions(request, &dir)
            .into_iter()
            .find(|s| s.header.id == *id)
        {
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
