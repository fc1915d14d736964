//! Tree navigation: moving the session's leaf to another entry of the same file, optionally
//! leaving a summary of the abandoned branch behind.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession.navigateTree` and `abortBranchSummary`:
//! 1. refused while a run streams (`Wait for the current response to finish before navigating
//!    the session tree.`); the current leaf as target is a no-op; `summarize` without a model
//!    → `No model available for summarization`; an unknown target → `Entry <id> not found`;
//! 2. the entries between the old leaf and the deepest common ancestor are collected, and the
//!    `session_before_tree` hook may cancel, supply the summary (used only when summarizing)
//!    or override the instructions and the label;
//! 3. otherwise, when summarizing a non-empty branch, the default branch summary is generated
//!    with the session's model (abort → `{cancelled, aborted}`, failure → an error);
//! 4. the new leaf is the target, or — for a user message or `custom_message` target — its
//!    parent, the target's text going back to the editor; with a summary a `branch_summary`
//!    entry is appended there (labelled), else the leaf moves (and the target is labelled);
//! 5. the agent's messages are rebuilt from the new leaf and `session_tree` is awaited.
//!
//! While navigation runs, [`AgentSession::is_compacting`] is true and
//! [`AgentSession::abort_branch_summary`] (or [`AgentSession::abort`]) cancels it.

use pi_agent_core::AgentMessage;
use pi_ai::{Model, Usage};
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::agent_session::lock;
use super::prompt::{SessionError, no_api_key};
use super::{AgentSession, SummarizationSource};
use crate::compaction::Summarizer;
use crate::compaction::branch::{
    BranchSummaryOutcome, collect_entries_for_branch_summary, generate_branch_summary,
};
use crate::storage::tree::{append_label_change, branch_with_summary};
use crate::storage::{EntryKind, SessionEntry, build_session_context};

/// pi's refusal while a run streams.
pub const NAVIGATE_WHILE_STREAMING: &str =
    "Wait for the current response to finish before navigating the session tree.";
/// pi's refusal of `summarize` without a model.
pub const NO_MODEL_FOR_SUMMARY: &str = "No model available for summarization";

/// Options of [`AgentSession::navigate_tree`]: `{summarize?, customInstructions?,
/// replaceInstructions?, label?}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NavigateTreeOptions {
    /// Summarize the branch being left.
    pub summarize: bool,
    /// Extra instructions for the summary (appended as `Additional focus:`).
    pub custom_instructions: Option<String>,
    /// Use `custom_instructions` instead of the default summary prompt.
    pub replace_instructions: Option<bool>,
    /// A label for the summary entry (or, without a summary, for the target).
    pub label: Option<String>,
}

/// What [`AgentSession::navigate_tree`] did: `{editorText?, cancelled, aborted?,
/// summaryEntry?}` (pi's JSON with [`serde::Serialize`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateTreeResult {
    /// The text of a user or custom message target, for the editor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub editor_text: Option<String>,
    /// Nothing changed: a hook cancelled, or the summary was aborted.
    pub cancelled: bool,
    /// The summary was aborted (`cancelled` is then true as well).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub aborted: bool,
    /// The `branch_summary` entry written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_entry: Option<SessionEntry>,
}

/// `session_before_tree.preparation`: what navigation is about to do.
#[derive(Clone, Debug, PartialEq)]
pub struct TreePreparation {
    /// The entry navigated to.
    pub target_id: String,
    /// The current leaf.
    pub old_leaf_id: Option<String>,
    /// Their deepest common ancestor.
    pub common_ancestor_id: Option<String>,
    /// The entries a branch summary would cover, oldest first.
    pub entries_to_summarize: Vec<SessionEntry>,
    /// Whether the user asked for a summary.
    pub user_wants_summary: bool,
    /// Instructions for the summary.
    pub custom_instructions: Option<String>,
    /// Whether they replace the default prompt.
    pub replace_instructions: Option<bool>,
    /// Label for the new branch point.
    pub label: Option<String>,
}

/// `summary` of a [`TreeResult`]: `{summary, details?, usage?}`.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeSummary {
    /// The branch summary text (written verbatim; empty means "no summary").
    pub summary: String,
    /// Extra data stored with it.
    pub details: Option<Value>,
    /// Usage of producing it.
    pub usage: Option<Usage>,
}

/// What `session_before_tree` handlers decided: `{cancel, summary?, customInstructions?,
/// replaceInstructions?, label?}` (the last handler's result; a cancelling one wins at once).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeResult {
    /// Cancel the navigation.
    pub cancel: bool,
    /// A summary to use instead of the default one (only when summarizing).
    pub summary: Option<TreeSummary>,
    /// Overrides the instructions.
    pub custom_instructions: Option<String>,
    /// Overrides `replaceInstructions`.
    pub replace_instructions: Option<bool>,
    /// Overrides the label.
    pub label: Option<String>,
}

/// Clears the branch-summary token (pi's `finally`) however navigation ends.
struct SummaryGuard<'a>(&'a AgentSession);

impl Drop for SummaryGuard<'_> {
    fn drop(&mut self) {
        self.0.state().branch_summary_cancel = None;
        self.0.notify_idle_changed();
    }
}

/// A summary ready to be written.
struct ChosenSummary {
    text: String,
    details: Option<Value>,
    usage: Option<Usage>,
}

impl AgentSession {
    /// `navigateTree(targetId, options)`: moves the leaf to `target_id` within this session
    /// file (see the module docs for the steps and texts).
    ///
    /// # Errors
    /// [`SessionError::Refused`] with pi's text: [`NAVIGATE_WHILE_STREAMING`],
    /// [`NO_MODEL_FOR_SUMMARY`], `Entry <id> not found`, the no-API-key text, or the summary
    /// failure (`Branch summarization failed: …`); store and listener failures.
    pub async fn navigate_tree(
        &self,
        target_id: &str,
        options: NavigateTreeOptions,
    ) -> Result<NavigateTreeResult, SessionError> {
        if self.is_streaming() {
            return Err(SessionError::Refused(NAVIGATE_WHILE_STREAMING.into()));
        }
        let old_leaf_id = self.leaf_id();
        if old_leaf_id.as_deref() == Some(target_id) {
            return Ok(NavigateTreeResult::default());
        }
        let model = self.model();
        if options.summarize && model.is_none() {
            return Err(SessionError::Refused(NO_MODEL_FOR_SUMMARY.into()));
        }
        let (target, entries, common_ancestor_id) = {
            let store = lock(&self.inner.store);
            let target = store
                .get(target_id)
                .map_err(|_| SessionError::Refused(format!("Entry {target_id} not found")))?;
            let (entries, common) =
                collect_entries_for_branch_summary(&store, old_leaf_id.as_deref(), target_id)?;
            (target, entries, common)
        };

        let cancel = CancellationToken::new();
        self.state().branch_summary_cancel = Some(cancel.clone());
        let _guard = SummaryGuard(self);

        let mut custom_instructions = options.custom_instructions.clone();
        let mut replace_instructions = options.replace_instructions;
        let mut label = options.label.clone();
        let preparation = TreePreparation {
            target_id: target_id.to_owned(),
            old_leaf_id: old_leaf_id.clone(),
            common_ancestor_id,
            entries_to_summarize: entries.iter().map(|e| (**e).clone()).collect(),
            user_wants_summary: options.summarize,
            custom_instructions: custom_instructions.clone(),
            replace_instructions,
            label: label.clone(),
        };
        let decision = self
            .hooks()
            .session_before_tree(preparation, cancel.clone())
            .await;
        let mut supplied = None;
        if let Some(d) = decision {
            if d.cancel {
                return Ok(NavigateTreeResult {
                    cancelled: true,
                    ..Default::default()
                });
            }
            if options.summarize {
                supplied = d.summary;
            }
            if d.custom_instructions.is_some() {
                custom_instructions = d.custom_instructions;
            }
            if d.replace_instructions.is_some() {
                replace_instructions = d.replace_instructions;
            }
            if d.label.is_some() {
                label = d.label;
            }
        }
        let from_extension = supplied.is_some();

        let chosen = match (supplied, model) {
            (Some(s), _) => Some(ChosenSummary {
                text: s.summary,
                details: s.details,
                usage: s.usage,
            }),
            (None, Some(model)) if options.summarize && !entries.is_empty() => {
                let summarizer = self.branch_summarizer(model, &cancel).await?;
                let reserve = lock(self.settings()).branch_summary().reserve_tokens;
                match generate_branch_summary(
                    &summarizer,
                    &entries,
                    custom_instructions.as_deref(),
                    replace_instructions.unwrap_or(false),
                    reserve,
                )
                .await
                {
                    BranchSummaryOutcome::Aborted => {
                        return Ok(NavigateTreeResult {
                            cancelled: true,
                            aborted: true,
                            ..Default::default()
                        });
                    }
                    BranchSummaryOutcome::Error(e) => return Err(SessionError::Refused(e)),
                    BranchSummaryOutcome::Summary {
                        summary,
                        usage,
                        read_files,
                        modified_files,
                    } => Some(ChosenSummary {
                        text: summary,
                        details: Some(serde_json::json!({
                            "readFiles": read_files,
                            "modifiedFiles": modified_files,
                        })),
                        usage,
                    }),
                }
            }
            _ => None,
        };
        // An empty summary counts as none (pi tests the text's truthiness).
        let chosen = chosen.filter(|c| !c.text.is_empty());

        let (new_leaf_id, editor_text) = new_leaf_for(&target);
        let label = label.filter(|l| !l.is_empty());
        let summary_entry = {
            let mut store = lock(&self.inner.store);
            let summary_entry = match chosen {
                Some(c) => {
                    let usage = c.usage.and_then(|u| serde_json::to_value(u).ok());
                    let id = branch_with_summary(
                        &mut store,
                        new_leaf_id.as_deref(),
                        c.text,
                        c.details,
                        Some(from_extension),
                        usage,
                    )?;
                    let entry = store.get(&id)?;
                    if let Some(l) = &label {
                        append_label_change(&mut store, &id, Some(l.clone()))?;
                    }
                    Some((*entry).clone())
                }
                None => {
                    match &new_leaf_id {
                        Some(id) => store.branch(id)?,
                        None => store.reset_leaf(),
                    }
                    if let Some(l) = &label {
                        append_label_change(&mut store, target_id, Some(l.clone()))?;
                    }
                    None
                }
            };
            let context = build_session_context(&store)?;
            self.agent().set_messages(context.messages);
            summary_entry
        };

        self.hooks()
            .session_tree(
                self.leaf_id(),
                old_leaf_id,
                summary_entry.clone(),
                summary_entry.as_ref().map(|_| from_extension),
            )
            .await;
        Ok(NavigateTreeResult {
            editor_text,
            cancelled: false,
            aborted: false,
            summary_entry,
        })
    }

    /// `abortBranchSummary()`: cancels a running navigation's summary (it then returns
    /// `{cancelled: true, aborted: true}`); no-op otherwise.
    pub fn abort_branch_summary(&self) {
        if let Some(t) = &self.state().branch_summary_cancel {
            t.cancel();
        }
    }

    /// The summarizer for a branch summary: the session's model, key, stream function and
    /// retry settings; retries are reported as `summarization_retry_*` events with source
    /// `branchSummary`.
    ///
    /// Errors: pi's no-key text without auth; a failed OAuth refresh's text;
    /// `API key auth failed for provider <p>: <cause>` when the configured key cannot be
    /// resolved (e.g. a failing `!command`).
    async fn branch_summarizer(
        &self,
        model: Model,
        cancel: &CancellationToken,
    ) -> Result<Summarizer, SessionError> {
        if !self.auth().has_auth(&model.provider) {
            return Err(SessionError::Refused(no_api_key(
                &model.provider,
                &self.inner.docs_dir,
            )));
        }
        let api_key = self
            .summary_api_key(&model)
            .await
            .map_err(|e| SessionError::Refused(e.to_string()))?;
        Ok(self.summarizer(model, api_key, cancel, SummarizationSource::BranchSummary))
    }
}

/// The leaf after navigating to `target` and the editor text: a user message or a
/// `custom_message` is re-edited (leaf = its parent, its text to the editor); any other entry
/// becomes the leaf itself.
fn new_leaf_for(target: &SessionEntry) -> (Option<String>, Option<String>) {
    match &target.kind {
        EntryKind::Message {
            message: AgentMessage::User(u),
        } => (
            target.parent_id.clone(),
            Some(super::queues::content_text(&u.content)),
        ),
        EntryKind::CustomMessage { content, .. } => {
            (target.parent_id.clone(), Some(value_text(content)))
        }
        _ => (Some(target.id.clone()), None),
    }
}

/// The same for a custom message's JSON content (a string or content blocks).
fn value_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(kind: EntryKind, parent: Option<&str>) -> SessionEntry {
        SessionEntry {
            id: "t1".into(),
            parent_id: parent.map(str::to_owned),
            timestamp: "2026-01-01T00:00:00.000Z".into(),
            kind,
            extra: serde_json::Map::new(),
        }
    }

    #[test]
    fn user_and_custom_targets_are_re_edited_from_their_parent() {
        let user = entry(
            EntryKind::Message {
                message: pi_ai::UserMessage::text("hello").into(),
            },
            Some("p0"),
        );
        assert_eq!(
            new_leaf_for(&user),
            (Some("p0".into()), Some("hello".into()))
        );
        let custom = entry(
            EntryKind::CustomMessage {
                custom_type: "note".into(),
                content: json!([{"type":"text","text":"a"},{"type":"image","data":"x","mimeType":"image/png"},{"type":"text","text":"b"}]),
                display: true,
                details: None,
            },
            None,
        );
        assert_eq!(new_leaf_for(&custom), (None, Some("ab".into())));
        let label = entry(
            EntryKind::Label {
                target_id: "x".into(),
                label: None,
            },
            Some("p0"),
        );
        assert_eq!(new_leaf_for(&label), (Some("t1".into()), None));
    }

    #[test]
    fn the_result_serializes_as_pi_does() {
        let r = NavigateTreeResult {
            cancelled: true,
            aborted: true,
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"cancelled": true, "aborted": true})
        );
        let r = NavigateTreeResult {
            editor_text: Some("x".into()),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"editorText": "x", "cancelled": false})
        );
    }
}
