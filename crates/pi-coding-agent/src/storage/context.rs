//! Rebuilding the agent's context from a leaf of the session tree.
//!
//! Mirrors pi-coding-agent 0.85.0 `buildSessionContext`: the path from the leaf to
//! the root; the thinking level (last `thinking_level_change`, default `off`) and model (last
//! `model_change` or assistant provider/model) on it; with a compaction on the path, the
//! summary, then the kept entries from its `firstKeptEntryId` up to it, then everything after.
//!
//! One deliberate difference: a tool result whose tool call is not in the rebuilt context (a
//! compaction boundary on a tool result, as older files or other implementations write) is
//! dropped. The reference sends it, and providers reject the request (the
//! class of anthropics/claude-code#8484; see `docs/reference-differences.md`).

use std::collections::HashSet;

use pi_agent_core::AgentMessage;

use super::entry::{EntryKind, EntryType, SessionEntry};
use super::store::{SessionStore, StoreError};
use crate::messages::{branch_summary_message, compaction_summary_message, custom_message};

/// What a leaf's path gives the agent.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionContext {
    /// The transcript (custom messages included; `convert_to_llm` maps them).
    pub messages: Vec<AgentMessage>,
    /// Thinking level on the path (`off` by default).
    pub thinking_level: String,
    /// `(provider, modelId)` on the path, if any.
    pub model: Option<(String, String)>,
}

/// Parses an ISO time to ms since the epoch (0 when unparseable).
pub(crate) fn iso_to_ms(iso: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(iso)
        .map(|d| d.timestamp_millis())
        .unwrap_or(0)
}

/// The entry positions from the root to the leaf (empty when the leaf is unset).
///
/// Cannot loop: a parent's position is always smaller than its child's (the store resolves
/// parents among earlier entries only).
pub(crate) fn path_to_leaf(store: &SessionStore) -> Vec<usize> {
    let mut path = Vec::new();
    let mut cur = store.leaf_position();
    while let Some(i) = cur {
        path.push(i);
        cur = store.parent_position(i);
    }
    path.reverse();
    path
}

/// The leaf's path as the context reads it, and whether it is condensed: in a store resumed
/// through its index, where the path leaves the window the pinned entries that stand for the
/// rest (its last model change, thinking-level change and compaction, in file order) replace
/// the entries before it, so the prefix is not loaded. The condensed path is used only when
/// the context it gives is the whole path's: its last compaction is in the window and the
/// entry that compaction keeps from cannot be in the prefix. Otherwise the whole path, as
/// [`path_to_leaf`].
pub(crate) fn context_path(store: &SessionStore) -> (Vec<usize>, bool) {
    let (path, condensed) = walk_to_root(store);
    if !condensed {
        return (path, false);
    }
    let base = store.window_base();
    let holds = match path
        .iter()
        .rposition(|&i| *store.kind_at(i) == EntryType::Compaction)
    {
        // Without a compaction in the window the context starts at the root.
        None => false,
        Some(c) if path[c] < base => false,
        Some(c) => match store.entry_at(path[c]).map(|e| e.kind.clone()) {
            Ok(EntryKind::Compaction {
                first_kept_entry_id,
                ..
            }) => !store.prefix_may_hold(&first_kept_entry_id),
            _ => false,
        },
    };
    if holds {
        (path, true)
    } else {
        (path_to_leaf(store), false)
    }
}

/// The path from the root to the leaf, condensed where it leaves the window at the known
/// crossing.
fn walk_to_root(store: &SessionStore) -> (Vec<usize>, bool) {
    let mut path = Vec::new();
    let mut cur = store.leaf_position();
    while let Some(i) = cur {
        path.push(i);
        cur = match store.window_parent(i) {
            Some(Some(p)) if p < store.window_base() => {
                if let Some(ancestors) = store.crossing_ancestors(p) {
                    path.extend(ancestors.iter().rev());
                    path.reverse();
                    return (path, true);
                }
                Some(p)
            }
            Some(p) => p,
            None => store.parent_position(i),
        };
    }
    path.reverse();
    (path, false)
}

/// The positions of `path` the context is built from, given the position in `path` of its
/// latest (readable) compaction: everything without one; else the compaction entry itself
/// (returned) and, after it, the entries from its first kept entry up to it and those after
/// it. A kept entry that is not on the path keeps nothing before the compaction.
fn context_selection(
    store: &SessionStore,
    path: &[usize],
    last_compaction: Option<usize>,
) -> Result<(Option<std::sync::Arc<SessionEntry>>, Vec<usize>), StoreError> {
    let Some(cpos) = last_compaction else {
        return Ok((None, path.to_vec()));
    };
    let c = store.entry_at(path[cpos])?;
    let EntryKind::Compaction {
        first_kept_entry_id,
        ..
    } = &c.kind
    else {
        return Ok((None, path.to_vec()));
    };
    let kept_start = path[..cpos]
        .iter()
        .position(|&i| store.id_at(i) == first_kept_entry_id.as_str());
    let mut sel: Vec<usize> = kept_start
        .map(|s| path[s..cpos].to_vec())
        .unwrap_or_default();
    sel.extend_from_slice(&path[cpos + 1..]);
    Ok((Some(c), sel))
}

/// Rebuilds the context of the current leaf.
pub fn build_session_context(store: &SessionStore) -> Result<SessionContext, StoreError> {
    let (path, _) = context_path(store);
    let mut thinking_level = "off".to_owned();
    let mut model = None;
    let mut last_compaction = None;
    for (pos, &i) in path.iter().enumerate() {
        match store.kind_at(i) {
            EntryType::ThinkingLevelChange | EntryType::ModelChange | EntryType::Compaction => {
                let Some(e) = readable(store, i)? else {
                    continue;
                };
                match &e.kind {
                    EntryKind::ThinkingLevelChange { thinking_level: l } => {
                        thinking_level = l.clone()
                    }
                    EntryKind::ModelChange { provider, model_id } => {
                        model = Some((provider.clone(), model_id.clone()))
                    }
                    EntryKind::Compaction { .. } => last_compaction = Some(pos),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    let mut messages = Vec::new();
    let (compaction, selected) = context_selection(store, &path, last_compaction)?;
    if let Some(c) = &compaction
        && let EntryKind::Compaction {
            summary,
            tokens_before,
            ..
        } = &c.kind
    {
        messages.push(compaction_summary_message(
            summary,
            *tokens_before,
            iso_to_ms(&c.timestamp),
        ));
    }

    for i in selected {
        let kind = store.kind_at(i);
        if !matches!(
            kind,
            EntryType::Message | EntryType::BranchSummary | EntryType::CustomMessage
        ) {
            continue;
        }
        let Some(e) = readable(store, i)? else {
            continue;
        };
        match &e.kind {
            EntryKind::Message { message } => {
                if let AgentMessage::Assistant(a) = message {
                    model = Some((a.provider.clone(), a.model.clone()));
                }
                messages.push(message.clone());
            }
            EntryKind::BranchSummary {
                summary, from_id, ..
            } if !summary.is_empty() => messages.push(branch_summary_message(
                summary,
                from_id,
                iso_to_ms(&e.timestamp),
            )),
            EntryKind::CustomMessage {
                custom_type,
                content,
                display,
                details,
            } => messages.push(custom_message(
                custom_type,
                content.clone(),
                *display,
                details.clone(),
                iso_to_ms(&e.timestamp),
            )),
            _ => {}
        }
    }
    drop_orphan_tool_results(&mut messages);
    Ok(SessionContext {
        messages,
        thinking_level,
        model,
    })
}

/// The stored `usage` of each summary message of the current leaf's context, in context
/// order: the latest compaction's (its `compactionSummary` comes first) and then each
/// non-empty branch summary's; `None` where the entry has none. pi derives its
/// "`Compaction: 12k tokens billed`" notices from these when it renders a session (they are
/// not entries of their own). Reads only the summary entries.
pub(crate) fn summary_usages(
    store: &SessionStore,
) -> Result<Vec<Option<serde_json::Value>>, StoreError> {
    let (path, _) = context_path(store);
    // The latest compaction the context uses: the last one that reads back.
    let mut last_compaction = None;
    for (pos, &i) in path.iter().enumerate().rev() {
        if *store.kind_at(i) == EntryType::Compaction && readable(store, i)?.is_some() {
            last_compaction = Some(pos);
            break;
        }
    }
    let (compaction, selected) = context_selection(store, &path, last_compaction)?;
    let mut out = Vec::new();
    if let Some(c) = &compaction
        && let EntryKind::Compaction { usage, .. } = &c.kind
    {
        out.push(usage.clone());
    }
    for i in selected {
        if *store.kind_at(i) != EntryType::BranchSummary {
            continue;
        }
        if let Some(e) = readable(store, i)?
            && let EntryKind::BranchSummary { summary, usage, .. } = &e.kind
            && !summary.is_empty()
        {
            out.push(usage.clone());
        }
    }
    Ok(out)
}

/// The messages an entry contributes to the context:
/// a `message` its message (a `null` content is read as `[]`), a `compaction` its
/// `compactionSummary`, a non-empty `branch_summary` its `branchSummary`, a `custom_message`
/// its `custom` message; every other entry nothing.
pub(crate) fn project_entry(e: &SessionEntry) -> Option<AgentMessage> {
    match &e.kind {
        EntryKind::Message { message } => Some(message.clone()),
        EntryKind::Compaction {
            summary,
            tokens_before,
            ..
        } => Some(compaction_summary_message(
            summary,
            *tokens_before,
            iso_to_ms(&e.timestamp),
        )),
        EntryKind::BranchSummary {
            summary, from_id, ..
        } if !summary.is_empty() => Some(branch_summary_message(
            summary,
            from_id,
            iso_to_ms(&e.timestamp),
        )),
        EntryKind::CustomMessage {
            custom_type,
            content,
            display,
            details,
        } => Some(custom_message(
            custom_type,
            content.clone(),
            *display,
            details.clone(),
            iso_to_ms(&e.timestamp),
        )),
        _ => None,
    }
}

/// The context of an in-memory branch (root → leaf entries): like [`build_session_context`]
/// for the messages, without reading a store.
pub(crate) fn assemble_context(branch: &[std::sync::Arc<SessionEntry>]) -> Vec<AgentMessage> {
    let last_compaction = branch
        .iter()
        .rposition(|e| matches!(e.kind, EntryKind::Compaction { .. }));
    let mut messages = Vec::new();
    let selected: Vec<&std::sync::Arc<SessionEntry>> = match last_compaction {
        None => branch.iter().collect(),
        Some(c) => {
            if let Some(m) = project_entry(&branch[c]) {
                messages.push(m);
            }
            let first_kept = match &branch[c].kind {
                EntryKind::Compaction {
                    first_kept_entry_id,
                    ..
                } => branch[..c]
                    .iter()
                    .position(|e| &e.id == first_kept_entry_id),
                _ => None,
            };
            let mut sel: Vec<_> = first_kept
                .map(|k| branch[k..c].iter().collect())
                .unwrap_or_default();
            sel.extend(branch[c + 1..].iter());
            sel
        }
    };
    for e in selected {
        if matches!(e.kind, EntryKind::Compaction { .. }) {
            continue;
        }
        if let Some(m) = project_entry(e) {
            messages.push(m);
        }
    }
    drop_orphan_tool_results(&mut messages);
    messages
}

/// Reads an entry for the context; a line that passed the index's structural check but is
/// not a valid entry is skipped with a warning, like any corrupt line.
pub(crate) fn readable(
    store: &SessionStore,
    i: usize,
) -> Result<Option<std::sync::Arc<super::entry::SessionEntry>>, StoreError> {
    match store.entry_at(i) {
        Ok(e) => Ok(Some(e)),
        Err(StoreError::Corrupt {
            path,
            offset,
            message,
        }) => {
            tracing::warn!("{path}: skipped corrupt entry at byte {offset}: {message}");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Removes tool results whose tool call is not in an earlier assistant message.
fn drop_orphan_tool_results(messages: &mut Vec<AgentMessage>) {
    let mut calls: HashSet<String> = HashSet::new();
    messages.retain(|m| match m {
        AgentMessage::Assistant(a) => {
            calls.extend(a.tool_calls().map(|c| c.id.clone()));
            true
        }
        AgentMessage::ToolResult(r) => {
            let keep = calls.contains(&r.tool_call_id);
            if !keep {
                tracing::warn!(
                    "dropped a tool result without its tool call from the context: {}",
                    r.tool_call_id
                );
            }
            keep
        }
        _ => true,
    });
}
