//! Branch summaries: what the user leaves behind when moving the leaf to another branch.
//!
//! Mirrors pi-coding-agent 0.85.0 `branch-summarization`:
//! `collectEntriesForBranchSummary`, `prepareBranchEntries` and `generateBranchSummary`.

use std::collections::HashSet;
use std::sync::Arc;

use pi_agent_core::AgentMessage;
use pi_ai::Usage;
use serde_json::Value;

use super::error::SummaryError;
use super::prepare::{FileOps, format_file_operations};
use super::prompts::{BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT};
use super::serialize::serialize_conversation;
use super::summarize::{Summarizer, summarization_failure};
use super::tokens::estimate_tokens;
use crate::messages::{
    branch_summary_message, compaction_summary_message, convert_to_llm, custom_message,
};
use crate::storage::context::iso_to_ms;
use crate::storage::entry::{EntryKind, SessionEntry};
use crate::storage::store::{SessionStore, StoreError};

/// `branchSummary.reserveTokens` default.
pub const BRANCH_SUMMARY_RESERVE_TOKENS: u64 = 16384;

/// The root → `id` path of entries.
pub fn branch_of(store: &SessionStore, id: &str) -> Result<Vec<Arc<SessionEntry>>, StoreError> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut cur = Some(
        store
            .position(id)
            .ok_or_else(|| StoreError::EntryNotFound(id.to_owned()))?,
    );
    while let Some(i) = cur {
        if !seen.insert(i) {
            break;
        }
        out.push(store.entry_at(i)?);
        cur = store.parent_position(i);
    }
    out.reverse();
    Ok(out)
}

/// `collectEntriesForBranchSummary`: the entries from the old leaf up to (excluding) the
/// deepest ancestor it shares with `target_id`'s path, oldest first, and that ancestor.
pub fn collect_entries_for_branch_summary(
    store: &SessionStore,
    old_leaf_id: Option<&str>,
    target_id: &str,
) -> Result<(Vec<Arc<SessionEntry>>, Option<String>), StoreError> {
    let Some(old) = old_leaf_id else {
        return Ok((Vec::new(), None));
    };
    let old_path = branch_of(store, old)?;
    let old_ids: HashSet<&str> = old_path.iter().map(|e| e.id.as_str()).collect();
    let target_path = branch_of(store, target_id)?;
    let common = target_path
        .iter()
        .rev()
        .find(|e| old_ids.contains(e.id.as_str()))
        .map(|e| e.id.clone());
    let start = match &common {
        Some(c) => old_path
            .iter()
            .position(|e| &e.id == c)
            .map_or(0, |p| p + 1),
        None => 0,
    };
    Ok((old_path[start..].to_vec(), common))
}

fn message_for_branch(e: &SessionEntry) -> Option<AgentMessage> {
    let ts = iso_to_ms(&e.timestamp);
    match &e.kind {
        EntryKind::Message { message } => match message {
            AgentMessage::ToolResult(_) => None,
            m => Some(m.clone()),
        },
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
            ts,
        )),
        EntryKind::BranchSummary {
            summary, from_id, ..
        } => Some(branch_summary_message(summary, from_id, ts)),
        EntryKind::Compaction {
            summary,
            tokens_before,
            ..
        } => Some(compaction_summary_message(summary, *tokens_before, ts)),
        _ => None,
    }
}

/// `prepareBranchEntries`: the newest messages that fit `token_budget` (0 = no limit), file
/// operations, and their estimated tokens.
pub fn prepare_branch_entries(
    entries: &[Arc<SessionEntry>],
    token_budget: u64,
) -> (Vec<AgentMessage>, FileOps, u64) {
    let mut ops = FileOps::default();
    for e in entries {
        if let EntryKind::BranchSummary {
            details: Some(d),
            from_hook,
            ..
        } = &e.kind
            && *from_hook != Some(true)
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
            ops.read.extend(strings("readFiles"));
            ops.edited.extend(strings("modifiedFiles"));
        }
    }
    let mut messages = std::collections::VecDeque::new();
    let mut total = 0u64;
    for e in entries.iter().rev() {
        let Some(m) = message_for_branch(e) else {
            continue;
        };
        ops.add_from_message(&m);
        let tokens = estimate_tokens(&m);
        if token_budget > 0 && total + tokens > token_budget {
            if matches!(
                e.kind,
                EntryKind::Compaction { .. } | EntryKind::BranchSummary { .. }
            ) && (total as f64) < token_budget as f64 * 0.9
            {
                messages.push_front(m);
                total += tokens;
            }
            break;
        }
        messages.push_front(m);
        total += tokens;
    }
    (messages.into(), ops, total)
}

/// What [`generate_branch_summary`] produced.
#[derive(Clone, Debug, PartialEq)]
pub enum BranchSummaryOutcome {
    /// A summary (`No content to summarize` without a call when nothing qualified).
    Summary {
        /// Preamble + text + file lists.
        summary: String,
        /// Usage of the call.
        usage: Option<Usage>,
        /// Files only read.
        read_files: Vec<String>,
        /// Files modified.
        modified_files: Vec<String>,
    },
    /// The call was aborted.
    Aborted,
    /// The call failed (`Branch summarization failed: …`).
    Error(String),
}

/// `generateBranchSummary`: summarizes `entries` with the branch prompt (instructions appended
/// as `Additional focus:`, or used alone when `replace_instructions`), `maxTokens = min(4096,
/// model max)`, no reasoning, a fresh routing id.
pub async fn generate_branch_summary(
    summarizer: &Summarizer,
    entries: &[Arc<SessionEntry>],
    custom_instructions: Option<&str>,
    replace_instructions: bool,
    reserve_tokens: u64,
) -> BranchSummaryOutcome {
    let window = if summarizer.model.context_window > 0 {
        summarizer.model.context_window
    } else {
        128_000
    };
    let budget = window.saturating_sub(reserve_tokens);
    let (messages, ops, _) = prepare_branch_entries(entries, budget);
    if messages.is_empty() {
        return BranchSummaryOutcome::Summary {
            summary: "No content to summarize".into(),
            usage: None,
            read_files: Vec::new(),
            modified_files: Vec::new(),
        };
    }
    let instructions = match custom_instructions.filter(|s| !s.is_empty()) {
        Some(c) if replace_instructions => c.to_owned(),
        Some(c) => format!("{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {c}"),
        None => BRANCH_SUMMARY_PROMPT.to_owned(),
    };
    let prompt = format!(
        "<conversation>\n{}\n</conversation>\n\n{instructions}",
        serialize_conversation(&convert_to_llm(&messages))
    );
    let max_tokens = if summarizer.model.max_tokens > 0 {
        summarizer.model.max_tokens.min(4096)
    } else {
        4096
    };
    let response = summarizer
        .complete_with(prompt, max_tokens, false, None)
        .await;
    if response.stop_reason == pi_ai::StopReason::Aborted {
        return BranchSummaryOutcome::Aborted;
    }
    if let Some(f) = summarization_failure(&response, "Branch summarization") {
        return BranchSummaryOutcome::Error(f.to_string());
    }
    if response.tool_calls().next().is_some() {
        let e = SummaryError::ToolCall {
            label: "Branch summarization",
        };
        return BranchSummaryOutcome::Error(e.to_string());
    }
    let text: String = response
        .content
        .iter()
        .filter_map(|c| match c {
            pi_ai::AssistantContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let (read, modified) = ops.file_lists();
    let summary = format!(
        "{BRANCH_SUMMARY_PREAMBLE}{text}{}",
        format_file_operations(&read, &modified)
    );
    BranchSummaryOutcome::Summary {
        summary,
        usage: Some(response.usage),
        read_files: read,
        modified_files: modified,
    }
}
