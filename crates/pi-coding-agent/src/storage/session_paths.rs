//! Where session files live and how they and their entries are named.
//!
//! Mirrors pi-coding-agent 0.85.0 `session-manager`: the per-cwd directory
//! `--<cwd>--`, file names `<ISO time with : and . as ->_<sessionId>.jsonl`, UUIDv7 session
//! ids, and 8-hex-digit entry ids.

use std::path::{Path, PathBuf};

use chrono::{SecondsFormat, Utc};

/// The directory name pi uses for a working directory: the absolute cwd minus one leading
/// `/` or `\`, with `/`, `\` and `:` replaced by `-`, wrapped in `--…--`
/// (`/home/user/proj` → `--home-user-proj--`).
pub(crate) fn cwd_dir_name(cwd: &str) -> String {
    let trimmed = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    let mapped: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{mapped}--")
}

/// The default session directory of `cwd`: `<agent_dir>/sessions/--<cwd>--`.
pub(crate) fn default_session_dir(agent_dir: &Path, cwd: &str) -> PathBuf {
    agent_dir.join("sessions").join(cwd_dir_name(cwd))
}

/// The current time as pi writes it: `2026-06-01T10:00:00.000Z`.
pub(crate) fn iso_now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A session file name: `<timestamp with : and . replaced by ->_<session_id>.jsonl`.
pub(crate) fn session_file_name(timestamp: &str, session_id: &str) -> String {
    let ts: String = timestamp
        .chars()
        .map(|c| if matches!(c, ':' | '.') { '-' } else { c })
        .collect();
    format!("{ts}_{session_id}.jsonl")
}

/// A new session id (UUIDv7).
pub(crate) fn new_session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Whether `id` is acceptable as an explicit session id:
/// `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`.
pub(crate) fn is_valid_session_id(id: &str) -> bool {
    let b = id.as_bytes();
    let alnum = |c: &u8| c.is_ascii_alphanumeric();
    match b {
        [] => false,
        [only] => alnum(only),
        [first, middle @ .., last] => {
            alnum(first)
                && alnum(last)
                && middle
                    .iter()
                    .all(|c| alnum(c) || matches!(c, b'.' | b'_' | b'-'))
        }
    }
}

/// A new entry id: the first 8 characters of a random v4 UUID, regenerated while `taken`
/// says it is in use (100 tries, then a full UUID).
pub(crate) fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let u = uuid::Uuid::new_v4().simple().to_string();
        let id = &u[..8];
        if !taken(id) {
            return id.to_owned();
        }
    }
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_dir_names_match_pi() {
        assert_eq!(cwd_dir_name("/home/user/proj"), "--home-user-proj--");
        assert_eq!(cwd_dir_name("C:\\Users\\me"), "--C--Users-me--");
        assert_eq!(cwd_dir_name("\\\\srv\\share"), "---srv-share--");
        assert_eq!(cwd_dir_name("/"), "----");
    }

    #[test]
    fn file_names_replace_colons_and_dots() {
        assert_eq!(
            session_file_name("2026-01-02T03:04:05.678Z", "abc"),
            "2026-01-02T03-04-05-678Z_abc.jsonl"
        );
    }

    #[test]
    fn explicit_session_ids_are_checked() {
        for ok in [
            "a",
            "abc",
            "a.b-c_d",
            "019e0000-0000-7000-8000-000000000001",
        ] {
            assert!(is_valid_session_id(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", ".", "a b", "a/b"] {
            assert!(!is_valid_session_id(bad), "{bad}");
        }
    }

    #[test]
    fn entry_ids_are_eight_hex_digits_and_avoid_collisions() {
        let id = new_entry_id(|_| false);
        assert_eq!(id.len(), 8);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        let full = new_entry_id(|_| true);
        assert_eq!(full.len(), 36);
    }

    #[test]
    fn iso_now_has_millis_and_z() {
        let t = iso_now();
        assert_eq!(t.len(), 24, "{t}");
        assert!(t.ends_with('Z'));
    }
}
