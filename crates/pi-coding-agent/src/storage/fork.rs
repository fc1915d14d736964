//! New sessions made from existing ones: a branch extracted into its own file, and forks.
//!
//! Mirrors pi-coding-agent 0.85.0 `createBranchedSession` and `forkFrom`.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Map;

use super::entry::{EntryKind, SESSION_VERSION, SessionEntry, SessionHeader};
use super::session_paths::{iso_now, new_session_id, session_file_name};
use super::store::{SessionStore, StoreError};

/// Where a fork starts (pi's `position`; JSON `"before"` / `"at"`): the one type the runtime,
/// the session hooks, the extension events and RPC share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForkPosition {
    /// At the parent of a user message (`/fork`, RPC `fork`): the message's text is returned
    /// so a client can put it back in the editor.
    Before,
    /// Keeping the entry itself (`/clone`, RPC `clone`).
    At,
}

impl ForkPosition {
    /// pi's spelling (`before` / `at`).
    pub fn as_str(self) -> &'static str {
        match self {
            ForkPosition::Before => "before",
            ForkPosition::At => "at",
        }
    }
}

/// A new session holding the root → `leaf_id` path of `store`: label entries are left out and
/// parents re-chained (a compaction whose `firstKeptEntryId` named a removed label points at the
/// next kept entry), the labels of path entries are re-added at the end with their original
/// timestamps; new header (new id, `parentSession` = the old file when it exists on disk). The
/// new file lives beside the old one and is written once it holds an assistant message.
pub fn create_branched_session(
    store: &SessionStore,
    leaf_id: &str,
) -> Result<SessionStore, StoreError> {
    let leaf = store
        .position(leaf_id)
        .ok_or_else(|| StoreError::EntryNotFound(leaf_id.to_owned()))?;
    let mut branch_path = Vec::new();
    {
        // path_to_leaf works from the store's current leaf; walk from `leaf` instead.
        let mut cur = Some(leaf);
        let mut seen = HashSet::new();
        while let Some(i) = cur {
            if !seen.insert(i) {
                break;
            }
            branch_path.push(i);
            cur = store.parent_position(i);
        }
        branch_path.reverse();
    }
    let path_entries: Vec<SessionEntry> = branch_path
        .iter()
        .map(|&i| store.entry_at(i).map(|e| (*e).clone()))
        .collect::<Result<_, _>>()?;
    let on_path: HashSet<&str> = path_entries.iter().map(|e| e.id.as_str()).collect();
    let mut labels: Vec<SessionEntry> = Vec::new();
    for (i, (_, _, kind)) in store.index().enumerate() {
        if kind == "label" {
            let e = store.entry_at(i)?;
            if let EntryKind::Label { target_id, .. } = &e.kind
                && on_path.contains(target_id.as_str())
                && !on_path.contains(e.id.as_str())
            {
                labels.push((*e).clone());
            }
        }
    }
    let mut kept: Vec<SessionEntry> = Vec::new();
    let mut removed_labels: Vec<(String, usize)> = Vec::new();
    for e in path_entries {
        if matches!(e.kind, EntryKind::Label { .. }) {
            removed_labels.push((e.id.clone(), kept.len()));
            labels.push(e);
        } else {
            kept.push(e);
        }
    }
    // Re-point compactions at the next kept entry when their first kept entry was a label.
    for i in 0..kept.len() {
        if let EntryKind::Compaction {
            first_kept_entry_id,
            ..
        } = &kept[i].kind
            && let Some((_, next)) = removed_labels
                .iter()
                .find(|(id, _)| id == first_kept_entry_id)
            && let Some(target) = kept.get(*next).map(|e| e.id.clone())
            && let EntryKind::Compaction {
                first_kept_entry_id,
                ..
            } = &mut kept[i].kind
        {
            *first_kept_entry_id = target;
        }
    }
    let mut parent: Option<String> = None;
    for e in kept.iter_mut().chain(labels.iter_mut()) {
        e.parent_id = parent.take();
        parent = Some(e.id.clone());
    }
    kept.extend(labels);
    let header = SessionHeader {
        version: SESSION_VERSION,
        id: new_session_id(),
        timestamp: iso_now(),
        cwd: store.header().cwd.clone(),
        parent_session: store
            .is_persisted()
            .then(|| store.path().map(|p| p.display().to_string()))
            .flatten(),
        extra: Map::new(),
    };
    let path = store
        .path()
        .and_then(Path::parent)
        .map(|d| d.join(session_file_name(&header.timestamp, &header.id)));
    SessionStore::from_entries(header, path, kept)
}

/// Forks the session file `src` into `target_dir` for `cwd` (`--fork`, a cross-project
/// `--session`): header `cwd` = `cwd`, `parentSession` = `src`, every entry copied.
///
/// Errors: `Cannot fork: source session file is empty or invalid: <src>`; a directory
/// `EISDIR: illegal operation on a directory, read` ([`StoreError::Fs`]).
pub fn fork_from(src: &Path, target_dir: &Path, cwd: &str) -> Result<SessionStore, StoreError> {
    fork_from_with_id(src, target_dir, cwd, None)
}

/// [`fork_from`] with the new session's id (`--fork X --session-id ID`); `None` draws one.
///
/// Errors: as [`fork_from`]; [`StoreError::InvalidSessionId`] for an id pi refuses (checked
/// once the source has loaded, as pi's `forkFrom` does).
pub fn fork_from_with_id(
    src: &Path,
    target_dir: &Path,
    cwd: &str,
    id: Option<String>,
) -> Result<SessionStore, StoreError> {
    let invalid = || StoreError::InvalidFork(src.display().to_string());
    match std::fs::metadata(src) {
        Ok(m) if m.len() > 0 => {}
        _ => return Err(invalid()),
    }
    // A directory fails in pi's readFileSync (`EISDIR: … read`); other failures read as an
    // invalid source.
    let source = SessionStore::open(src, cwd).map_err(|e| match e {
        StoreError::Fs(_) => e,
        _ => invalid(),
    })?;
    super::store::check_session_id(id.as_deref())?;
    let entries: Vec<SessionEntry> = source.entries()?.iter().map(|e| (**e).clone()).collect();
    let header = SessionHeader {
        version: SESSION_VERSION,
        id: id.unwrap_or_else(new_session_id),
        timestamp: iso_now(),
        cwd: cwd.to_owned(),
        parent_session: Some(src.display().to_string()),
        extra: Map::new(),
    };
    let path = target_dir.join(session_file_name(&header.timestamp, &header.id));
    SessionStore::from_entries(header, Some(path), entries)
}
