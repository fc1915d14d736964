//! The session tree as UIs and RPC see it: nodes, children, labels, the session name.
//!
//! Mirrors pi-coding-agent 0.85.0 `getTree`, labels and `session_info`: roots
//! are entries with a `null`, self or missing parent; children are sorted by timestamp; each
//! node carries the latest label set for it (an absent or empty label clears it).

use std::collections::HashMap;
use std::sync::Arc;

use super::context::readable;
use super::entry::{EntryKind, SessionEntry};
use super::store::{SessionStore, StoreError};

/// One node of the tree. (No derived `Clone`/`PartialEq`: those would recurse as deep as the
/// session is long.)
pub struct TreeNode {
    /// The entry.
    pub entry: Arc<SessionEntry>,
    /// Children, oldest first.
    pub children: Vec<TreeNode>,
    /// The entry's current label.
    pub label: Option<String>,
}

impl std::fmt::Debug for TreeNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeNode")
            .field("id", &self.entry.id)
            .field("label", &self.label)
            .field("children", &self.children.len())
            .finish()
    }
}

impl Drop for TreeNode {
    /// Drops descendants iteratively: a session chain can be far deeper than the stack.
    fn drop(&mut self) {
        let mut stack = std::mem::take(&mut self.children);
        while let Some(mut node) = stack.pop() {
            stack.append(&mut node.children);
        }
    }
}

/// The current label of every labelled entry.
pub fn labels(store: &SessionStore) -> Result<HashMap<String, String>, StoreError> {
    let mut out = HashMap::new();
    for (i, (_, _, kind)) in store.index().enumerate() {
        if kind != "label" {
            continue;
        }
        let Some(entry) = readable(store, i)? else {
            continue;
        };
        if let EntryKind::Label { target_id, label } = &entry.kind {
            match label.as_deref() {
                Some(l) if !l.is_empty() => {
                    out.insert(target_id.clone(), l.to_owned());
                }
                _ => {
                    out.remove(target_id);
                }
            }
        }
    }
    Ok(out)
}

/// The session name: the latest `session_info` entry's name (`None` when unset or cleared).
pub fn session_name(store: &SessionStore) -> Result<Option<String>, StoreError> {
    // A resumed window: its `session_info` entries, newest first, then the prefix's last one
    // (pinned); the whole index only when that one cannot be read.
    if store.prefix_unloaded() {
        let window = (store.window_base()..store.len()).rev();
        let pinned = store.prefix_session_info();
        for i in window.chain(pinned) {
            if *store.kind_at(i) == super::entry::EntryType::SessionInfo
                && let Some(entry) = readable(store, i)?
                && let EntryKind::SessionInfo { name: n } = &entry.kind
            {
                return Ok(n.clone().filter(|s| !s.is_empty()));
            }
        }
        if pinned.is_none() {
            return Ok(None);
        }
    }
    let mut name = None;
    for (i, (_, _, kind)) in store.index().enumerate() {
        if kind == "session_info"
            && let Some(entry) = readable(store, i)?
            && let EntryKind::SessionInfo { name: n } = &entry.kind
        {
            name = n.clone().filter(|s| !s.is_empty());
        }
    }
    Ok(name)
}

/// Normalizes a session name as pi stores it: runs of CR/LF become one space, then trimmed.
pub fn normalize_session_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_break = false;
    for c in name.chars() {
        if c == '\r' || c == '\n' {
            if !in_break {
                out.push(' ');
            }
            in_break = true;
        } else {
            out.push(c);
            in_break = false;
        }
    }
    out.trim().to_owned()
}

/// Builds the whole tree (reads every entry).
pub fn get_tree(store: &SessionStore) -> Result<Vec<TreeNode>, StoreError> {
    let labels = labels(store)?;
    let n = store.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for i in 0..n {
        match store.parent_position(i) {
            Some(p) if p != i => children[p].push(i),
            _ => roots.push(i),
        }
    }
    // A line the index accepted but that is not JSON is shown as a bare entry of its type.
    let entries: Vec<Arc<SessionEntry>> = (0..n)
        .map(|i| {
            Ok(readable(store, i)?.unwrap_or_else(|| {
                Arc::new(SessionEntry {
                    id: store.id_at(i).to_owned(),
                    parent_id: store.parent_position(i).map(|p| store.id_at(p).to_owned()),
                    timestamp: String::new(),
                    kind: EntryKind::Unknown {
                        kind: store.kind_at(i).as_str().to_owned(),
                    },
                    extra: serde_json::Map::new(),
                })
            }))
        })
        .collect::<Result<_, StoreError>>()?;
    let by_time = |a: &usize, b: &usize| entries[*a].timestamp.cmp(&entries[*b].timestamp);
    for kids in children.iter_mut() {
        kids.sort_by(by_time);
    }
    roots.sort_by(by_time);
    // Iterative post-order build: session chains can be far deeper than the call stack.
    let mut built: Vec<Option<TreeNode>> = (0..n).map(|_| None).collect();
    let mut stack: Vec<(usize, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
    while let Some((i, expanded)) = stack.pop() {
        if expanded {
            let kids = children[i]
                .iter()
                .filter_map(|&k| built[k].take())
                .collect();
            built[i] = Some(TreeNode {
                entry: entries[i].clone(),
                children: kids,
                label: labels.get(&entries[i].id).cloned(),
            });
        } else {
            stack.push((i, true));
            stack.extend(children[i].iter().rev().map(|&k| (k, false)));
        }
    }
    Ok(roots.into_iter().filter_map(|r| built[r].take()).collect())
}

/// `branchWithSummary(branchFromId, summary, details?, fromHook?, usage?)`: moves the leaf to
/// `branch_from_id` (`None`: before the first entry) and appends a `branch_summary` entry
/// there, whose `fromId` is `branch_from_id` or `"root"`. Returns the new entry's id (the new
/// leaf).
///
/// Mirrors pi-coding-agent 0.85.0 `SessionManager.branchWithSummary`; note that `fromId` is
/// the branch point, not the old leaf.
///
/// # Errors
/// `Entry <id> not found` for an unknown `branch_from_id` (the leaf is then unchanged); store
/// write failures.
pub fn branch_with_summary(
    store: &mut SessionStore,
    branch_from_id: Option<&str>,
    summary: String,
    details: Option<serde_json::Value>,
    from_hook: Option<bool>,
    usage: Option<serde_json::Value>,
) -> Result<String, StoreError> {
    match branch_from_id {
        Some(id) => store.branch(id)?,
        None => store.reset_leaf(),
    }
    store.append(EntryKind::BranchSummary {
        from_id: branch_from_id.unwrap_or("root").to_owned(),
        summary,
        details,
        usage,
        from_hook,
    })
}

/// `appendLabelChange(targetId, label)`: appends a `label` entry (a child of the leaf, and the
/// new leaf) that sets `target_id`'s label, or clears it when `label` is `None` or empty.
///
/// # Errors
/// `Entry <id> not found` for an unknown target; store write failures.
pub fn append_label_change(
    store: &mut SessionStore,
    target_id: &str,
    label: Option<String>,
) -> Result<String, StoreError> {
    if !store.contains(target_id) {
        return Err(StoreError::EntryNotFound(target_id.to_owned()));
    }
    store.append(EntryKind::Label {
        target_id: target_id.to_owned(),
        label,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalized() {
        assert_eq!(normalize_session_name("  a\r\n\nb\rc  "), "a b c");
        assert_eq!(normalize_session_name("\n"), "");
    }
}
