//! Choosing what a compaction summarizes and what it keeps.
//!
//! Mirrors pi-coding-agent 0.85.0 `prepareCompaction` / `findCutPoint`: the cut
//! never lands on a tool result, keeps about `keepRecentTokens` of recent context, moves back
//! over entries the model never sees, and splits a turn when it falls inside one (the turn's
//! prefix is then summarized separately).

use std::collections::BTreeSet;
use std::sync::Arc;

use pi_agent_core::AgentMessage;
use pi_ai::AssistantContent;
use serde_json::Value;

use super::tokens::{CompactionSettings, estimate_context_tokens, estimate_tokens};
use crate::storage::context::{assemble_context, project_entry};
use crate::storage::entry::{EntryKind, SessionEntry};

/// Files the summarized work touched (`read`, `write`, `edit` tool calls with a `path`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileOps {
    /// Paths read.
    pub read: BTreeSet<String>,
    /// Paths written.
    pub written: BTreeSet<String>,
    /// Paths edited.
    pub edited: BTreeSet<String>,
}

impl FileOps {
    /// Adds the file operations of an assistant message's tool calls.
    pub fn add_from_message(&mut self, m: &AgentMessage) {
        let AgentMessage::Assistant(a) = m else {
            return;
        };
        for c in &a.content {
            let AssistantContent::ToolCall(tc) = c else {
                continue;
            };
            let Some(path) = tc.arguments.get("path").and_then(Value::as_str) else {
                continue;
            };
            if path.is_empty() {
                continue;
            }
            let set = match tc.name.as_str() {
                "read" => &mut self.read,
                "write" => &mut self.written,
                "edit" => &mut self.edited,
                _ => continue,
            };
            set.insert(path.to_owned());
        }
    }

    /// `computeFileLists`: `(readFiles, modifiedFiles)`, each sorted (by UTF-16 code units, as
    /// JavaScript's default sort); read-only files exclude modified ones.
    pub fn file_lists(&self) -> (Vec<String>, Vec<String>) {
        let modified: BTreeSet<&String> = self.edited.iter().chain(&self.written).collect();
        let mut read: Vec<String> = self
            .read
            .iter()
            .filter(|f| !modified.contains(f))
            .cloned()
            .collect();
        let mut modified: Vec<String> = modified.into_iter().cloned().collect();
        let js_order = |a: &String, b: &String| a.encode_utf16().cmp(b.encode_utf16());
        read.sort_by(js_order);
        modified.sort_by(js_order);
        (read, modified)
    }
}

/// `formatFileOperations`: `\n\n<read-files>\n…\n</read-files>` and
/// `\n\n<modified-files>\n…\n</modified-files>`, omitted when empty.
pub fn format_file_operations(read: &[String], modified: &[String]) -> String {
    let mut sections = Vec::new();
    if !read.is_empty() {
        sections.push(format!("<read-files>\n{}\n</read-files>", read.join("\n")));
    }
    if !modified.is_empty() {
        sections.push(format!(
            "<modified-files>\n{}\n</modified-files>",
            modified.join("\n")
        ));
    }
    if sections.is_empty() {
        String::new()
    } else {
        format!("\n\n{}", sections.join("\n\n"))
    }
}

/// What [`prepare_compaction`] decided.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionPreparation {
    /// The first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// History before the kept part (or before the split turn).
    pub messages_to_summarize: Vec<AgentMessage>,
    /// The start of a split turn, summarized separately.
    pub turn_prefix_messages: Vec<AgentMessage>,
    /// Whether the cut falls inside a turn.
    pub is_split_turn: bool,
    /// Estimated context tokens before compaction.
    pub tokens_before: u64,
    /// The previous compaction's summary.
    pub previous_summary: Option<String>,
    /// Files touched by the summarized part.
    pub file_ops: FileOps,
    /// The settings used.
    pub settings: CompactionSettings,
}

/// Why there is nothing to compact (the manual command's error texts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NothingToCompact {
    /// The branch already ends with a compaction: `Already compacted`.
    AlreadyCompacted,
    /// Nothing before the kept part: `Nothing to compact (session too small)`.
    TooSmall,
}

impl std::fmt::Display for NothingToCompact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NothingToCompact::AlreadyCompacted => "Already compacted",
            NothingToCompact::TooSmall => "Nothing to compact (session too small)",
        })
    }
}

impl std::error::Error for NothingToCompact {}

fn projection(e: &SessionEntry) -> Option<AgentMessage> {
    if matches!(e.kind, EntryKind::Compaction { .. }) {
        None
    } else {
        project_entry(e)
    }
}

fn is_cut_point(e: &SessionEntry) -> bool {
    projection(e).is_some_and(|m| {
        matches!(
            m.role(),
            "user"
                | "assistant"
                | "bashExecution"
                | "custom"
                | "branchSummary"
                | "compactionSummary"
        )
    })
}

fn is_turn_start(e: &SessionEntry) -> bool {
    projection(e).is_some_and(|m| {
        matches!(
            m.role(),
            "user" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary"
        )
    })
}

/// `findCutPoint`: `(first kept index, turn start index when the cut splits a turn)`.
pub fn find_cut_point(
    branch: &[Arc<SessionEntry>],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> (usize, Option<usize>) {
    let cut_points: Vec<usize> = (start..end).filter(|&i| is_cut_point(&branch[i])).collect();
    let Some(&first) = cut_points.first() else {
        return (start, None);
    };
    let mut cut = first;
    let mut acc = 0u64;
    for i in (start..end).rev() {
        let tokens = project_entry(&branch[i]).map_or(0, |m| estimate_tokens(&m));
        if tokens == 0 {
            continue;
        }
        acc += tokens;
        if acc >= keep_recent_tokens {
            if let Some(&c) = cut_points.iter().find(|&&c| c >= i) {
                cut = c;
            }
            break;
        }
    }
    while cut > start {
        let prev = &branch[cut - 1];
        if matches!(prev.kind, EntryKind::Compaction { .. }) || project_entry(prev).is_some() {
            break;
        }
        cut -= 1;
    }
    if is_turn_start(&branch[cut]) {
        return (cut, None);
    }
    let turn_start = (start..=cut).rev().find(|&i| is_turn_start(&branch[i]));
    (cut, turn_start)
}

/// `prepareCompaction(branch, settings)` over the root → leaf entries.
pub fn prepare_compaction(
    branch: &[Arc<SessionEntry>],
    settings: CompactionSettings,
) -> Result<CompactionPreparation, NothingToCompact> {
    if branch
        .last()
        .is_some_and(|e| matches!(e.kind, EntryKind::Compaction { .. }))
    {
        return Err(NothingToCompact::AlreadyCompacted);
    }
    let prev = branch
        .iter()
        .rposition(|e| matches!(e.kind, EntryKind::Compaction { .. }));
    let mut previous_summary = None;
    let mut boundary_start = 0;
    let mut file_ops = FileOps::default();
    if let Some(p) = prev
        && let EntryKind::Compaction {
            summary,
            first_kept_entry_id,
            details,
            from_hook,
            ..
        } = &branch[p].kind
    {
        previous_summary = Some(summary.clone());
        boundary_start = branch
            .iter()
            .position(|e| &e.id == first_kept_entry_id)
            .unwrap_or(p + 1);
        if *from_hook != Some(true)
            && let Some(d) = details
        {
            let strings = |k: &str| {
                d.get(k)
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect::<Vec<_>>()
                    })
                    .unwrap_or_default()
            };
            file_ops.read.extend(strings("readFiles"));
            file_ops.edited.extend(strings("modifiedFiles"));
        }
    }
    let tokens_before = estimate_context_tokens(&assemble_context(branch)).tokens;
    let (cut, turn_start) = find_cut_point(
        branch,
        boundary_start,
        branch.len(),
        settings.keep_recent_tokens,
    );
    let Some(first_kept) = branch.get(cut) else {
        return Err(NothingToCompact::TooSmall);
    };
    let history_end = turn_start.unwrap_or(cut);
    let collect = |from: usize, to: usize| -> Vec<AgentMessage> {
        (from..to.max(from))
            .filter_map(|i| projection(&branch[i]))
            .collect()
    };
    let messages_to_summarize = collect(boundary_start, history_end);
    let turn_prefix_messages = turn_start.map(|t| collect(t, cut)).unwrap_or_default();
    if messages_to_summarize.is_empty() && turn_prefix_messages.is_empty() {
        return Err(NothingToCompact::TooSmall);
    }
    for m in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.add_from_message(m);
    }
    Ok(CompactionPreparation {
        first_kept_entry_id: first_kept.id.clone(),
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: turn_start.is_some(),
        tokens_before,
        previous_summary,
        file_ops,
        settings,
    })
}
