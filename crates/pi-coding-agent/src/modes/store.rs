//! The session store a run uses.
//!
//! Mirrors pi-coding-agent 0.85.0 `main.js` session selection (spec §4.9): `--no-session` →
//! in memory (a header still exists, with the `--session-id` when given); `--fork X` → a copy of X in this project's directory;
//! `--session X` → that file (X with `/`, `\` or a `.jsonl` suffix is a path, else an id
//! matched here, then in every project); `--continue` → the most recently modified session
//! here, else a new one; `--session-id ID` → that session here, else a new one with that
//! id; otherwise a new session. The directory is `--session-dir`, else settings
//! `sessionDir`, else `<agent dir>/sessions/--<cwd>--`.
//!
//! Before stdin is read, an id given to `--session` that only another project holds is
//! confirmed on the terminal and becomes a fork ([`confirm_cross_project_session`]). A
//! session file whose stored cwd no longer exists ends the run (exit 1, §2.8).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::setup::SetupError;
use crate::cli::ModeRequest;
use crate::cli::args::Args;
use crate::config::paths::{AgentPaths, resolve_path};
use crate::config::settings::SettingsManager;
use crate::runtime::targets::assert_session_cwd_exists;
use crate::storage::SessionStore;
use crate::storage::discovery::{
    SessionMatch, find_by_id, find_local_exact, list_sessions, looks_like_path, most_recent,
    resolve_session_id,
};
use crate::storage::entry::{SESSION_VERSION, SessionHeader};
use crate::storage::fork::fork_from_with_id;
use crate::storage::paths::default_session_dir;
use crate::storage::paths::iso_now;

/// The session directory of this run.
pub fn session_dir(request: &ModeRequest, settings: &SettingsManager) -> PathBuf {
    session_dir_for(&request.args, &request.cwd, &request.agent_dir, settings)
}

/// [`session_dir`] from its parts.
fn session_dir_for(
    args: &Args,
    cwd: &Path,
    agent_dir: &Path,
    settings: &SettingsManager,
) -> PathBuf {
    match &args.session_dir {
        Some(d) => resolve_path(d, cwd),
        None => settings
            .session_dir()
            .map(|d| resolve_path(&d.to_string_lossy(), cwd))
            .unwrap_or_else(|| default_session_dir(agent_dir, &cwd.display().to_string())),
    }
}

/// Reads one line (without its line ending) byte by byte, so nothing after it is consumed;
/// `None` at end of input or on a read error.
fn read_answer(stdin: &mut dyn Read) -> Option<String> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match stdin.read(&mut byte) {
            Ok(0) | Err(_) if line.is_empty() => return None,
            Ok(0) | Err(_) => break,
            Ok(_) if byte[0] == b'\n' => break,
            Ok(_) => line.push(byte[0]),
        }
    }
    let text = String::from_utf8_lossy(&line);
    Some(text.trim_end_matches('\r').to_owned())
}

/// pi's cross-project `--session <id>`: when the id matches no session of this project but
/// one of another project, prints `Session found in different project: <cwd>` and asks
/// `Fork this session into current directory? [y/N] ` on stdout, reading one line of stdin.
/// `y`/`yes` (any case) turns the request into `--fork <file>`; any other answer or end of
/// input prints `Aborted.` and returns `Some(0)` (the exit status). `None`: go on.
///
/// Runs before stdin is read for the prompt (pi selects the session first). The session
/// directory comes from `--session-dir` or the global settings (project settings are
/// trusted only later).
pub fn confirm_cross_project_session(
    args: &mut Args,
    cwd: &Path,
    agent_dir: &Path,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
) -> Option<i32> {
    let query = args.session.as_deref().filter(|s| !looks_like_path(s))?;
    if args.no_session || args.fork.is_some() {
        return None;
    }
    let settings = SettingsManager::load(cwd, agent_dir, false);
    let dir = session_dir_for(args, cwd, agent_dir, &settings);
    let root = AgentPaths::new(agent_dir.to_path_buf()).sessions();
    let Some(SessionMatch::Global { path, cwd: other }) = resolve_session_id(&dir, &root, query)
    else {
        return None;
    };
    let _ = writeln!(stdout, "Session found in different project: {other}");
    let _ = write!(stdout, "Fork this session into current directory? [y/N] ");
    let _ = stdout.flush();
    let answer = read_answer(stdin).unwrap_or_default().to_lowercase();
    if answer == "y" || answer == "yes" {
        args.session = None;
        args.fork = Some(path.display().to_string());
        None
    } else {
        let _ = writeln!(stdout, "Aborted.");
        Some(0)
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

/// `--no-session`: an in-memory session, with the `--session-id` when given (pi's
/// `SessionManager.inMemory(cwd, {id})`).
fn in_memory(cwd: &str, id: Option<String>) -> Result<SessionStore, crate::storage::StoreError> {
    let Some(id) = id else {
        return Ok(SessionStore::in_memory(cwd));
    };
    let header = SessionHeader {
        version: SESSION_VERSION,
        id,
        timestamp: iso_now(),
        cwd: cwd.to_owned(),
        parent_session: None,
        extra: serde_json::Map::new(),
    };
    SessionStore::from_entries(header, None, Vec::new())
}

fn store_error(e: crate::storage::StoreError) -> SetupError {
    SetupError::Error(e.to_string())
}

/// Opens or creates the store (see the module docs).
///
/// `--session-id` naming no session here creates one with that id after pi's warning
/// (`No project session found with id '<id>'; creating a new session with that id.`).
///
/// `--fork X --session-id ID` gives the fork that id; a session of this project already
/// holding it is refused.
///
/// # Errors
/// [`SetupError::Plain`] `No session found matching '<X>'`, `Session already exists with id
/// '<ID>'`, `Stored session working directory does not exist: <cwd>\nSession file:
/// <file>\nCurrent working directory: <cwd>`; [`SetupError::Error`] an unreadable or invalid
/// session file, an invalid fork source (the store's error texts).
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
        in_memory(&cwd, args.session_id.clone()).map_err(store_error)?
    } else if let Some(src) = &args.fork {
        if let Some(id) = &args.session_id
            && find_local_exact(&dir, id).is_some()
        {
            return Err(SetupError::Plain(format!(
                "Session already exists with id '{id}'"
            )));
        }
        let path = locate(src, &dir, paths, &request.cwd)?;
        fork_from_with_id(&path, &dir, &cwd, args.session_id.clone()).map_err(store_error)?
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
    assert_session_cwd_exists(&store, &request.cwd).map_err(SetupError::Plain)?;
    Ok(Arc::new(Mutex::new(store)))
}
