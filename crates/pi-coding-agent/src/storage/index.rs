//! Cheap indexing of session lines: just enough of each entry to build the tree.
//!
//! Resuming a large session must not materialize every message. Each line is checked as JSON
//! and only `type`, `id` and `parentId` are kept; full entries are read back from the file by
//! offset when the context or a caller needs them.

use std::borrow::Cow;

use serde::Deserialize;

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(rename = "parentId", borrow, default)]
    parent_id: Option<Cow<'a, str>>,
}

/// What one line is.
#[derive(Debug, PartialEq, Eq)]
pub enum ProbedLine {
    /// Blank (only whitespace).
    Blank,
    /// Not a JSON object (torn, corrupt) — the parser's message.
    Corrupt(String),
    /// The session header (`type: "session"` with a string `id`).
    Header,
    /// An entry.
    Entry {
        /// `type`.
        kind: String,
        /// `id`.
        id: String,
        /// `parentId` (`None` for `null` or absent).
        parent_id: Option<String>,
    },
    /// A JSON object without the fields an entry needs.
    NotAnEntry,
}

/// Classifies one line (without its trailing newline).
pub fn probe_line(line: &[u8]) -> ProbedLine {
    if line.iter().all(u8::is_ascii_whitespace) {
        return ProbedLine::Blank;
    }
    match serde_json::from_slice::<Probe<'_>>(line) {
        Err(e) => ProbedLine::Corrupt(e.to_string()),
        Ok(p) => match (p.kind, p.id) {
            (Some(k), Some(_)) if k == "session" => ProbedLine::Header,
            (Some(k), Some(id)) => ProbedLine::Entry {
                kind: k.into_owned(),
                id: id.into_owned(),
                parent_id: p.parent_id.map(Cow::into_owned),
            },
            _ => ProbedLine::NotAnEntry,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_lines() {
        assert_eq!(probe_line(b"  "), ProbedLine::Blank);
        assert!(matches!(
            probe_line(b"{\"type\":\"mess"),
            ProbedLine::Corrupt(_)
        ));
        assert_eq!(
            probe_line(br#"{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}"#),
            ProbedLine::Header
        );
        assert_eq!(
            probe_line(br#"{"type":"message","id":"a1","parentId":null,"message":{"role":"user","content":"hi\"x","timestamp":1}}"#),
            ProbedLine::Entry { kind: "message".into(), id: "a1".into(), parent_id: None }
        );
        assert_eq!(
            probe_line(br#"{"type":"label","id":"a2","parentId":"a\u0031","targetId":"a1"}"#),
            ProbedLine::Entry {
                kind: "label".into(),
                id: "a2".into(),
                parent_id: Some("a1".into())
            }
        );
        assert_eq!(
            probe_line(b"[1,2]"),
            ProbedLine::Corrupt(probe_err(b"[1,2]"))
        );
        assert_eq!(probe_line(b"{\"x\":1}"), ProbedLine::NotAnEntry);
    }

    fn probe_err(b: &[u8]) -> String {
        serde_json::from_slice::<Probe<'_>>(b)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }
}
