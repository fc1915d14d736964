//! Finding session files: the most recent one of a directory, and lookup by id.
//!
//! Mirrors pi-coding-agent 0.85.0 session listing and CLI selection (spec §4.5, §4.9):
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
        let Ok(map) = serde_json::from_slice::<Map<String, Value>>(&line) else {
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

/// pi's `resolveSessionPath` for an id: an exact, then a prefix match (the most recently
/// modified) in `dir`; then the same in every project directory under `sessions_root` (in
/// name order). `None` when nothing matches.
pub fn resolve_session_id(dir: &Path, sessions_root: &Path, query: &str) -> Option<SessionMatch> {
    let search = |d: &Path| -> Option<SessionFileInfo> {
        let all = list_sessions(d);
        if let Some(s) = all.iter().find(|s| s.header.id == query) {
            return Some(s.clone());
        }
        all.into_iter()
            .filter(|s| s.header.id.starts_with(query))
            .max_by_key(|s| s.modified)
    };
    if let Some(s) = search(dir) {
        return Some(SessionMatch::Local(s.path));
    }
    let rd = std::fs::read_dir(sessions_root).ok()?;
    let mut dirs: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.iter()
        .find_map(|d| search(d))
        .map(|s| SessionMatch::Global {
            path: s.path,
            cwd: s.header.cwd,
        })
}

/// [`resolve_session_id`] without the local/global distinction. Errors: `No session found
/// matching '<query>'`.
pub fn find_by_id(dir: &Path, sessions_root: &Path, query: &str) -> Result<PathBuf, String> {
    resolve_session_id(dir, sessions_root, query)
        .map(|m| m.path().to_path_buf())
        .ok_or_else(|| format!("No session found matching '{query}'"))
}

/// The session in `dir` whose id is exactly `id` (pi's `findLocalSessionByExactId`).
pub fn find_local_exact(dir: &Path, id: &str) -> Option<PathBuf> {
    list_sessions(dir)
        .into_iter()
        .find(|s| s.header.id == id)
        .map(|s| s.path)
}
