//! The session store a run uses.
//!
//! Mirrors pi-coding-agent 0.85.0 `main.js` session selection: `--no-session` → in memory (a header
//! still exists, with the `--session-id` when given); `--fork X` → a copy of X in this project's
//! directory; `--session X` → that file (X with `/`, `\` or a `.jsonl` suffix is a path, else an id
//! matched here, then in every project); `--continue` → the most recently modified session here,
//! else a new one; `--session-id ID` → that session here, else a new one with that id; otherwise a
//! new session. The directory is `--session-dir`, else `PI_CODING_AGENT_SESSION_DIR`, else settings
//! `sessionDir`, else `<agent dir>/sessions/--<cwd>--`; a configured directory other than that
//! default is shared by projects, so "this project" there means the sessions whose header cwd is
//! this one, and "every project" means that directory ([`SessionScope`]).
//!
//! Before stdin is read, an id given to `--session` that only another project holds is confirmed on
//! the terminal and becomes a fork ([`confirm_cross_project_session`]). A session file whose stored
//! cwd no longer exists ends the run (exit 1, as pi's `assertSessionCwdExists`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::launch::Launch;
use super::setup::SetupError;
use crate::cli::SessionFlags;
use crate::config::agent_paths::{AgentPaths, resolve_path};
use crate::config::settings::SettingsManager;
use crate::platform::fs_error::node_message;
use crate::platform::lexical_path::lexical_normalize;
use crate::runtime::targets::assert_session_cwd_exists;
use crate::storage::SessionStore;
use crate::storage::discovery::{SessionMatch, SessionScope, looks_like_path};
use crate::storage::entry::{SESSION_VERSION, SessionHeader};
use crate::storage::fork::fork_from_with_id;
use crate::storage::session_paths::default_session_dir;
use crate::storage::session_paths::iso_now;

/// pi's session directory choice: `--session-dir`, else `PI_CODING_AGENT_SESSION_DIR`, else
/// settings `sessionDir` (each resolved against `cwd`), else the project's default directory.
/// A configured directory other than the default one holds several projects: this
/// project's sessions are those whose header cwd is `cwd`.
fn session_scope(
    args: &SessionFlags,
    cwd: &Path,
    agent_dir: &Path,
    sessions_root: PathBuf,
    settings: &SettingsManager,
) -> SessionScope {
    // An empty `--session-dir ""` is no directory (pi tests the flag's truthiness).
    let configured = args
        .session_dir
        .clone()
        .filter(|d| !d.is_empty())
        .or_else(|| {
            std::env::var(SESSION_DIR_ENV)
                .ok()
                .filter(|v| !v.is_empty())
        })
        .or_else(|| {
            settings
                .session_dir()
                .map(|d| d.to_string_lossy().into_owned())
        })
        .map(|d| lexical_normalize(&resolve_path(&d, cwd)));
    let default = default_session_dir(agent_dir, &cwd.display().to_string());
    match configured {
        None => SessionScope::default_dir(default, sessions_root),
        Some(dir) => SessionScope {
            cwd_filter: (dir != lexical_normalize(&default)).then(|| cwd.to_path_buf()),
            dir,
            custom: true,
            sessions_root,
        },
    }
}

/// The environment variable naming the session directory (pi's `ENV_SESSION_DIR`).
const SESSION_DIR_ENV: &str = "PI_CODING_AGENT_SESSION_DIR";

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
/// `Fork this session into current directory? [y/N] ` on `stdout` (the caller passes stderr
/// in the non-interactive modes, as pi does), reading one line of stdin.
/// `y`/`yes` (any case) turns the request into `--fork <file>`; any other answer or end of
/// input prints `Aborted.` and returns `Some(0)` (the exit status). `None`: go on.
///
/// Runs before stdin is read for the prompt (pi selects the session first). The session
/// directory comes from `--session-dir` or the global settings (project settings are
/// trusted only later).
pub(crate) fn confirm_cross_project_session(
    args: &mut SessionFlags,
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
    let root = AgentPaths::new(agent_dir.to_path_buf()).sessions();
    let scope = session_scope(args, cwd, agent_dir, root, &settings);
    let Some(SessionMatch::Global { path, cwd: other }) = scope.resolve_id(query) else {
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

fn locate(arg: &str, scope: &SessionScope, cwd: &Path) -> Result<PathBuf, SetupError> {
    if looks_like_path(arg) {
        // pi uses path.resolve: `.`, `..` and a trailing slash are folded.
        Ok(lexical_normalize(&resolve_path(arg, cwd)))
    } else {
        // pi prints this one without the `Error: ` prefix.
        scope
            .resolve_id(arg)
            .map(|m| m.path().to_path_buf())
            .ok_or_else(|| SetupError::Plain(format!("No session found matching '{arg}'")))
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
/// <file>\nCurrent working directory: <cwd>`; [`SetupError::Error`] a session directory that
/// cannot be made (`ENOTDIR: not a directory, mkdir '<dir>'`), an unreadable or invalid
/// session file, an invalid fork source (the store's error texts).
pub(crate) fn open_store(
    launch: &Launch,
    settings: &SettingsManager,
    paths: &AgentPaths,
    stderr: &mut dyn Write,
) -> Result<Arc<Mutex<SessionStore>>, SetupError> {
    let args = &launch.config.session;
    let cwd = launch.cwd.display().to_string();
    let scope = session_scope(
        args,
        &launch.cwd,
        &launch.agent_dir,
        paths.sessions(),
        settings,
    );
    let dir = scope.dir.clone();
    // pi's session manager makes a missing session directory when it is built, so a
    // directory that cannot be made stops the run before the model is called (pi 0.85.0
    // crashes there with Node's uncaught error; the same text, as an error, here).
    if !args.no_session && !dir.exists() {
        std::fs::create_dir_all(&dir)
            .map_err(|e| SetupError::Error(node_message(&e, "mkdir", Some(&dir))))?;
    }
    let store = if args.no_session {
        in_memory(&cwd, args.session_id.clone()).map_err(store_error)?
    } else if let Some(src) = &args.fork {
        if let Some(id) = &args.session_id
            && scope.find_exact(id).is_some()
        {
            return Err(SetupError::Plain(format!(
                "Session already exists with id '{id}'"
            )));
        }
        let path = locate(src, &scope, &launch.cwd)?;
        fork_from_with_id(&path, &dir, &cwd, args.session_id.clone()).map_err(store_error)?
    } else if let Some(s) = &args.session {
        let path = locate(s, &scope, &launch.cwd)?;
        SessionStore::open(&path, &cwd).map_err(store_error)?
    } else if args.continue_session {
        match scope.most_recent() {
            Some(path) => SessionStore::open(&path, &cwd).map_err(store_error)?,
            None => SessionStore::create(&dir, &cwd, None).map_err(store_error)?,
        }
    } else if let Some(id) = &args.session_id {
        match scope.find_exact(id) {
            Some(path) => SessionStore::open(&path, &cwd).map_err(store_error)?,
            None => {
                let _ = writeln!(
                    stderr,
                    "Warning: No project session found with id '{id}'; creating a new session with that id."
                );
                SessionStore::create(&dir, &cwd, Some(id.clone())).map_err(store_error)?
            }
        }
    } else {
        SessionStore::create(&dir, &cwd, None).map_err(store_error)?
    };
    // Observed on pi 0.85.0: `--continue` (`SessionManager.continueRecent`) runs the session
    // in the current cwd, so a stored cwd that is gone is not refused there.
    if !args.continue_session {
        assert_session_cwd_exists(&store, &launch.cwd)
            .map_err(|e| SetupError::Plain(e.to_string()))?;
    }
    Ok(Arc::new(Mutex::new(store)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_one_line_and_nothing_after_it_is_consumed() {
        let mut input: &[u8] = b"Yes\r\nrest of stdin";
        assert_eq!(read_answer(&mut input).as_deref(), Some("Yes"));
        assert_eq!(input, b"rest of stdin");
        let mut last: &[u8] = b"y";
        assert_eq!(read_answer(&mut last).as_deref(), Some("y"));
        let mut empty: &[u8] = b"";
        assert_eq!(read_answer(&mut empty), None);
    }

    #[test]
    fn a_configured_dir_other_than_the_default_filters_by_cwd() {
        let agent = Path::new("/agent");
        let cwd = Path::new("/work/p");
        let settings = SettingsManager::in_memory(serde_json::Map::new());
        let root = PathBuf::from("/agent/sessions");
        let scope = |dir: Option<&str>| {
            let args = SessionFlags {
                session_dir: dir.map(str::to_owned),
                ..SessionFlags::default()
            };
            session_scope(&args, cwd, agent, root.clone(), &settings)
        };
        let default = default_session_dir(agent, "/work/p");
        assert_eq!(
            scope(None),
            SessionScope::default_dir(default.clone(), root.clone())
        );
        let same = scope(Some(&format!("{}/", default.display())));
        assert_eq!((same.custom, same.cwd_filter), (true, None));
        let shared = scope(Some("../shared"));
        assert_eq!(shared.dir, PathBuf::from("/work/shared"));
        assert_eq!(shared.cwd_filter.as_deref(), Some(cwd));
    }
}
