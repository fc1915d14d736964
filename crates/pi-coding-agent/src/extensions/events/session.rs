//! Session-level events: trust, start/shutdown, resources, the `session_before_*` family,
//! compaction results, tree navigation, model/thinking selection and user bash.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/extensions/types.ts`.

use pi_ai::{Model, ModelThinkingLevel};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::{ExtensionEvent, observer_events};
use crate::compaction::{CompactionPreparation, CompactionResult};
pub use crate::session::{SessionStartReason, ShutdownReason, SwitchReason};
use crate::storage::entry::SessionEntry;
use crate::tools::bash::user::BashResult;

/// `project_trust {cwd}`: asked before project resources load (only user/CLI extensions
/// receive it; the handler's ctx is limited to `cwd, mode, hasUI` and the dialogs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProjectTrustEvent {
    /// The project directory.
    pub cwd: String,
}

/// `trusted` of a [`ProjectTrustResult`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TrustDecision {
    /// Trust the project.
    Yes,
    /// Do not trust it.
    No,
    /// Let the next handler (or the default policy) decide.
    Undecided,
}

/// `{trusted, remember?}`: the first `yes`/`no` wins; `undecided` falls through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ProjectTrustResult {
    /// The decision.
    pub trusted: TrustDecision,
    /// Whether to store the decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remember: Option<bool>,
}

impl ExtensionEvent for ProjectTrustEvent {
    const NAME: &'static str = "project_trust";
    type Output = ProjectTrustResult;
}

/// `session_start {reason, previousSessionFile?}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStartEvent {
    /// Why the session started.
    pub reason: SessionStartReason,
    /// The session file replaced by this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_session_file: Option<String>,
}

/// `resources_discover.reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourcesDiscoverReason {
    /// Process start.
    Startup,
    /// `/reload`.
    Reload,
}

/// `resources_discover {cwd, reason}`: fired after `session_start`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResourcesDiscoverEvent {
    /// The working directory.
    pub cwd: String,
    /// Startup or reload.
    pub reason: ResourcesDiscoverReason,
}

/// `{skillPaths?, promptPaths?, themePaths?}` returned by one handler.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesDiscoverResult {
    /// Extra skill files or directories.
    pub skill_paths: Vec<String>,
    /// Extra prompt-template files or directories.
    pub prompt_paths: Vec<String>,
    /// Extra theme files or directories.
    pub theme_paths: Vec<String>,
}

impl ExtensionEvent for ResourcesDiscoverEvent {
    const NAME: &'static str = "resources_discover";
    type Output = ResourcesDiscoverResult;
}

/// `session_info_changed {name}` (ext-emitted without awaiting).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionInfoChangedEvent {
    /// The new name; `None` when cleared.
    pub name: Option<String>,
}

/// `session_before_switch {reason, targetSessionFile?}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionBeforeSwitchEvent {
    /// New or resume.
    pub reason: SwitchReason,
    /// The session being switched to (resume).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_session_file: Option<String>,
}

/// `{cancel}` of the `session_before_switch` family.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CancelResult {
    /// Cancel the operation.
    pub cancel: bool,
}

impl ExtensionEvent for SessionBeforeSwitchEvent {
    const NAME: &'static str = "session_before_switch";
    type Output = CancelResult;
}

/// `session_before_fork.position`: the fork position every layer uses.
pub use crate::storage::ForkPosition;

/// `session_before_fork {entryId, position}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionBeforeForkEvent {
    /// The entry forked at.
    pub entry_id: String,
    /// Before or at it.
    pub position: ForkPosition,
}

/// `{cancel, skipConversationRestore?}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkResult {
    /// Cancel the fork.
    pub cancel: bool,
    /// Do not restore the conversation into the new session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_conversation_restore: Option<bool>,
}

impl ExtensionEvent for SessionBeforeForkEvent {
    const NAME: &'static str = "session_before_fork";
    type Output = ForkResult;
}

/// Why a compaction runs (`manual | threshold | overflow`): the session's own type.
pub use crate::session::CompactionReason as CompactReason;

/// `session_before_compact {preparation, branchEntries, customInstructions?, reason,
/// willRetry, signal}`.
#[derive(Clone, Debug)]
pub struct SessionBeforeCompactEvent {
    /// What the default compaction would summarize.
    pub preparation: CompactionPreparation,
    /// The whole current branch.
    pub branch_entries: Vec<SessionEntry>,
    /// `/compact <instructions>`.
    pub custom_instructions: Option<String>,
    /// Why.
    pub reason: CompactReason,
    /// Whether the interrupted turn is retried afterwards (overflow).
    pub will_retry: bool,
    /// Aborts with the compaction.
    pub signal: CancellationToken,
}

/// `{cancel}` or `{compaction}`: an extension may supply the whole result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CompactResult {
    /// Cancel the compaction (`Compaction cancelled`).
    pub cancel: bool,
    /// A compaction result to use instead of the default summary (`fromExtension`).
    pub compaction: Option<CompactionResult>,
}

impl ExtensionEvent for SessionBeforeCompactEvent {
    const NAME: &'static str = "session_before_compact";
    type Output = CompactResult;
}

/// `session_compact {compactionEntry, fromExtension, reason, willRetry}`.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionCompactEvent {
    /// The entry written.
    pub compaction_entry: SessionEntry,
    /// Whether an extension supplied the content.
    pub from_extension: bool,
    /// Why.
    pub reason: CompactReason,
    /// Whether the interrupted turn is retried.
    pub will_retry: bool,
}

/// `session_compact_failed {reason, errorMessage?, aborted, willRetry:false, fromExtension}`:
/// after the synchronous `compaction_end`, awaited; no entry was written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCompactFailedEvent {
    /// Why the compaction ran.
    pub reason: CompactReason,
    /// `Compaction failed: <msg>` etc.; absent when aborted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Cancelled (by an extension or the signal) rather than failed.
    pub aborted: bool,
    /// Always `false` (a terminal event).
    pub will_retry: bool,
    /// Whether extension-supplied content was in use.
    pub from_extension: bool,
}

/// pi's text when an overflow recovery already compacted and retried once.
pub const OVERFLOW_RECOVERY_EXHAUSTED: &str = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";

/// pi's text when a truncated (`length`) response recovery already compacted and retried.
pub const TRUNCATION_RECOVERY_EXHAUSTED: &str =
    "Truncated response recovery failed after one compact-and-retry attempt.";

impl SessionCompactFailedEvent {
    /// A failed manual `compact()`: `aborted` when the error is
    /// `Compaction cancelled` or an abort (`is_abort`); `errorMessage` is
    /// `Compaction failed: <error>` only when not aborted.
    pub fn manual(error: &str, is_abort: bool, from_extension: bool) -> Self {
        let aborted = is_abort || error == "Compaction cancelled";
        SessionCompactFailedEvent {
            reason: CompactReason::Manual,
            error_message: (!aborted).then(|| format!("Compaction failed: {error}")),
            aborted,
            will_retry: false,
            from_extension,
        }
    }

    /// A failed automatic compaction after `compaction_start`: `error: None`
    /// means cancelled or aborted; otherwise `errorMessage` is
    /// `Context overflow recovery failed: <error>` (overflow) or
    /// `Auto-compaction failed: <error>` (threshold).
    pub fn automatic(reason: CompactReason, error: Option<&str>, from_extension: bool) -> Self {
        let error_message = error.map(|e| match reason {
            CompactReason::Overflow => format!("Context overflow recovery failed: {e}"),
            _ => format!("Auto-compaction failed: {e}"),
        });
        SessionCompactFailedEvent {
            reason,
            aborted: error_message.is_none(),
            error_message,
            will_retry: false,
            from_extension,
        }
    }

    /// Exhausted overflow recovery (no new `compaction_start`): reason `overflow`, not
    /// aborted, not from an extension, with [`TRUNCATION_RECOVERY_EXHAUSTED`] for a `length`
    /// stop, else [`OVERFLOW_RECOVERY_EXHAUSTED`].
    pub fn recovery_exhausted(length_stop: bool) -> Self {
        SessionCompactFailedEvent {
            reason: CompactReason::Overflow,
            error_message: Some(
                if length_stop {
                    TRUNCATION_RECOVERY_EXHAUSTED
                } else {
                    OVERFLOW_RECOVERY_EXHAUSTED
                }
                .to_owned(),
            ),
            aborted: false,
            will_retry: false,
            from_extension: false,
        }
    }
}

/// `session_shutdown {reason, targetSessionFile?}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionShutdownEvent {
    /// Why.
    pub reason: ShutdownReason,
    /// The session that replaces this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_session_file: Option<String>,
}

pub use crate::session::tree::{TreePreparation, TreeResult, TreeSummary};

/// `session_before_tree {preparation, signal}`.
#[derive(Clone, Debug)]
pub struct SessionBeforeTreeEvent {
    /// What navigation would do.
    pub preparation: TreePreparation,
    /// Aborts with the navigation.
    pub signal: CancellationToken,
}

impl ExtensionEvent for SessionBeforeTreeEvent {
    const NAME: &'static str = "session_before_tree";
    type Output = TreeResult;
}

/// `session_tree {newLeafId, oldLeafId, summaryEntry?, fromExtension?}`.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionTreeEvent {
    /// The leaf after navigation.
    pub new_leaf_id: Option<String>,
    /// The leaf before.
    pub old_leaf_id: Option<String>,
    /// The branch summary written, if any.
    pub summary_entry: Option<SessionEntry>,
    /// Whether an extension supplied the summary.
    pub from_extension: Option<bool>,
}

/// `model_select.source`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelSelectSource {
    /// `setModel`.
    Set,
    /// `cycleModel`.
    Cycle,
    /// Restored from a session.
    Restore,
}

/// `model_select {model, previousModel, source}` (only when provider/id changed).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSelectEvent {
    /// The new model.
    pub model: Model,
    /// The model before.
    pub previous_model: Option<Model>,
    /// What changed it.
    pub source: ModelSelectSource,
}

/// `thinking_level_select {level, previousLevel}` (ext-emitted without awaiting).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingLevelSelectEvent {
    /// The new effective level.
    pub level: ModelThinkingLevel,
    /// The level before.
    pub previous_level: ModelThinkingLevel,
}

/// `user_bash {command, excludeFromContext, cwd}`: `!cmd`, `!!cmd`, RPC `bash`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserBashEvent {
    /// The command.
    pub command: String,
    /// `!!`: keep the result out of the model's context.
    pub exclude_from_context: bool,
    /// Working directory.
    pub cwd: String,
}

/// A `user_bash` handler's answer: the first one returned wins.
///
/// pi also accepts `{operations}` (a replacement executor); pi-rs has no pluggable user-bash
/// executor yet, so only `{result}` exists (see `docs/extensions.md`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserBashResult {
    /// The command's result, recorded as if the session had run it.
    pub result: BashResult,
}

impl ExtensionEvent for UserBashEvent {
    const NAME: &'static str = "user_bash";
    type Output = UserBashResult;
}

observer_events! {
    SessionStartEvent => "session_start",
    SessionInfoChangedEvent => "session_info_changed",
    SessionCompactEvent => "session_compact",
    SessionCompactFailedEvent => "session_compact_failed",
    SessionShutdownEvent => "session_shutdown",
    SessionTreeEvent => "session_tree",
    ModelSelectEvent => "model_select",
    ThinkingLevelSelectEvent => "thinking_level_select",
}

/// A result of a `session_before_*` event: the runner returns at once on `cancel`.
pub trait Cancellable {
    /// Whether this result cancels the operation.
    fn is_cancel(&self) -> bool;
}

impl Cancellable for CancelResult {
    fn is_cancel(&self) -> bool {
        self.cancel
    }
}

impl Cancellable for ForkResult {
    fn is_cancel(&self) -> bool {
        self.cancel
    }
}

impl Cancellable for CompactResult {
    fn is_cancel(&self) -> bool {
        self.cancel
    }
}

impl Cancellable for TreeResult {
    fn is_cancel(&self) -> bool {
        self.cancel
    }
}
