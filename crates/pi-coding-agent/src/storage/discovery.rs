//! Finding session files: the most recent one of a directory, and lookup by id.
//!
//! Mirrors pi-coding-agent 0.85.0 session listing and CLI selection:
//! discovery reads only up to the first parsed line of each file (at most 1 MiB) and skips
//! unreadable or invalid files.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Map, Value};

use super::entry::SessionHeader;

/// A session file found on disk.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionFileInfo {
    /// The file.
    pub path: PathBuf,
    /// Its header.
    pub header: SessionHeader,
    /// Last modification time.
    pub modified: SystemTime,
}

/// Reads the header of a session file (the first parsed line within the first MiB).
pub fn read_header(path: &Path) -> Option<SessionHeader> {
    let file = File::open(path).ok()?;
    let reader = BufReader::new(file.take(1 << 20));
    for line in reader.split(b'\n') {
        let line = line.ok()?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(map) = pi_ai::json_depth::from_slice::<Map<String, Value>>(
            &line,
            pi_ai::json_depth::MAX_DOCUMENT_DEPTH,
        ) else {
            continue;
        };
        return SessionHeader::from_map(map);
    }
    None
}

/// Every valid session file (`*.jsonl` with a session header) directly in `dir`.
pub fn list_sessions(dir: &Path) -> Vec<SessionFileInfo> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in rd.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        if let Some(header) = read_header(&path) {
            out.push(SessionFileInfo {
                path,
                header,
                modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            });
        }
    }
    out
}

/// The most recently modified valid session in `dir` (`--continue`).
pub fn most_recent(dir: &Path) -> Option<PathBuf> {
    list_sessions(dir)
        .into_iter()
        .max_by_key(|s| s.modified)
        .map(|s| s.path)
}

/// Whether a `--session`/`--fork` argument names a path rather than an id.
pub fn looks_like_path(arg: &str) -> bool {
    arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl")
}

/// Where a session id was found ([`resolve_session_id`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionMatch {
    /// In this project's session directory.
    Local(PathBuf),
    /// In another project's directory: the file and its header `cwd`.
    Global {
        /// The session file.
        path: PathBuf,
        /// The project it belongs to (its header `cwd`).
        cwd: String,
    },
}

impl SessionMatch {
    /// The session file.
    pub fn path(&self) -> &Path {
        match self {
            SessionMatch::Local(p) | SessionMatch::Global { path: p, .. } => p,
        }
    }
}

/// Where the command line looks for sessions: pi's `SessionManager.list(cwd, sessionDir)`
/// (this project) and `listAll(sessionDir)` (every project).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionScope {
    /// The session directory of this run.
    pub dir: PathBuf,
    /// A session directory was configured (`--session-dir`, `PI_CODING_AGENT_SESSION_DIR`,
    /// settings `sessionDir`): "every project" is that directory alone.
    pub custom: bool,
    /// Set when the configured directory is not this project's default one: only sessions
    /// whose header cwd resolves to this path count as this project's.
    pub cwd_filter: Option<PathBuf>,
    /// The root of the per-project directories (`<agent dir>/sessions`).
    pub sessions_root: PathBuf,
}

impl SessionScope {
    /// A scope without a configured directory (`dir` is the project's default one).
    pub fn default_dir(dir: PathBuf, sessions_root: PathBuf) -> Self {
        SessionScope {
            dir,
            custom: false,
            cwd_filter: None,
            sessions_root,
        }
    }

    fn is_local(&self, info: &SessionFileInfo) -> bool {
        match &self.cwd_filter {
            None => true,
            Some(cwd) => {
                let stored = &info.header.cwd;
                !stored.is_empty()
                    && lexical(&crate::config::agent_paths::resolve_path(stored, cwd))
                        == lexical(cwd)
            }
        }
    }

    /// This project's sessions (pi's `list`).
    pub fn local_sessions(&self) -> Vec<SessionFileInfo> {
        list_sessions(&self.dir)
            .into_iter()
            .filter(|s| self.is_local(s))
            .collect()
    }

    /// The sessions of every project (pi's `listAll`): the configured directory, else every
    /// directory under the sessions root (in name order).
    fn all_sessions(&self) -> Vec<SessionFileInfo> {
        if self.custom {
            return list_sessions(&self.dir);
        }
        let Ok(rd) = std::fs::read_dir(&self.sessions_root) else {
            return Vec::new();
        };
        let mut dirs: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        dirs.iter().flat_map(|d| list_sessions(d)).collect()
    }

    /// The most recently modified session of this project (`--continue`).
    pub fn most_recent(&self) -> Option<PathBuf> {
        self.local_sessions()
            .into_iter()
            .max_by_key(|s| s.modified)
            .map(|s| s.path)
    }

    /// The session of this project whose id is exactly `id` (pi's
    /// `findLocalSessionByExactId`).
    pub fn find_exact(&self, id: &str) -> Option<PathBuf> {
        self.local_sessions()
            .into_iter()
            .find(|s| s.header.id == id)
            .map(|s| s.path)
    }

    /// pi's `resolveSessionPath` for an id: an exact, then a prefix match (the most recently
    /// modified) among this project's sessions, then the same among every project's.
    /// `None` when nothing matches.
    pub fn resolve_id(&self, query: &str) -> Option<SessionMatch> {
        if let Some(s) = pick(self.local_sessions(), query) {
            return Some(SessionMatch::Local(s.path));
        }
        pick(self.all_sessions(), query).map(|s| SessionMatch::Global {
            path: s.path,
            cwd: s.header.cwd,
        })
    }
}

fn lexical(p: &Path) -> PathBuf {
    crate::platform::lexical_path::lexical_normalize(p)
}

/// Exact id first, else the most recently modified id with `query` as prefix.
fn pick(all: Vec<SessionFileInfo>, query: &str) -> Option<SessionFileInfo> {
    if let Some(s) = all.iter().find(|s| s.header.id == query) {
        return Some(s.clone());
    }
    all.into_iter()
        .filter(|s| s.header.id.starts_with(query))
        .max_by_key(|s| s.modified)
}

/// [`SessionScope::resolve_id`] for the default directory `dir` under `sessions_root`.
pub fn resolve_session_id(dir: &Path, sessions_root: &Path, query: &str) -> Option<SessionMatch> {
    SessionScope::default_dir(dir.to_path_buf(), sessions_root.to_path_buf()).resolve_id(query)
}

/// No session's id starts with the query; carries the query.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("No session found matching '{0}'")]
pub struct NoSessionMatch(pub String);

/// [`resolve_session_id`] without the local/global distinction.
pub fn find_by_id(
    dir: &Path,
    sessions_root: &Path,
    query: &str,
) -> Result<PathBuf, NoSessionMatch> {
    resolve_session_id(dir, sessions_root, query)
        .map(|m| m.path().to_path_buf())
        .ok_or_else(|| NoSessionMatch(query.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, id: &str, cwd: &str) -> PathBuf {
        let path = dir.join(format!("{id}.jsonl"));
        let header = serde_json::json!({"type":"session","version":3,"id":id,
            "timestamp":"2026-01-01T00:00:00.000Z","cwd":cwd});
        std::fs::write(&path, format!("{header}\n")).unwrap();
        path
    }

    #[test]
    fn a_filtered_scope_keeps_this_cwd_and_finds_the_rest_as_another_project() {
        let dir = tempfile::tempdir().unwrap();
        let mine = write(dir.path(), "aaa-mine", "/work/p/");
        let theirs = write(dir.path(), "aaa-theirs", "/work/q");
        write(dir.path(), "no-cwd", "");
        let scope = SessionScope {
            dir: dir.path().to_path_buf(),
            custom: true,
            cwd_filter: Some(PathBuf::from("/work/p")),
            sessions_root: PathBuf::from("/nowhere"),
        };
        let local: Vec<PathBuf> = scope.local_sessions().into_iter().map(|s| s.path).collect();
        assert_eq!(local, std::slice::from_ref(&mine));
        assert_eq!(scope.resolve_id("aaa"), Some(SessionMatch::Local(mine)));
        assert_eq!(
            scope.resolve_id("aaa-th"),
            Some(SessionMatch::Global {
                path: theirs,
                cwd: "/work/q".into()
            })
        );
        assert_eq!(scope.find_exact("aaa-theirs"), None);
        assert_eq!(scope.resolve_id("zzz"), None);
    }
}
