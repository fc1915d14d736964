//! The seams for the extension runner and for compaction.
//!
//! [`SessionHooks`] is where the extension runner plugs in: the session calls it at pi's
//! points and in pi's per-event order and awaits every call. Each
//! method has a no-op default ("continue"), so a session without extensions passes
//! [`NoHooks`]. Catching and reporting handler failures (`Extension error (<path>): …`) is the
//! runner's job: apart from `tool_call`, which "throws" by returning `Err`, the methods return
//! plain values.
//!
//! [`Compactor`] is where automatic compaction plugs in: checked before each
//! prompt, after each low-level run and between turns. [`NoCompaction`] never compacts.

use futures::future::BoxFuture;
use pi_agent_core::{
    AfterToolCallResult, AgentContext, AgentEvent, AgentMessage, AgentToolResult,
    BeforeToolCallResult, HookError,
};
use pi_ai::{AssistantMessage, ImageContent, Model, ModelThinkingLevel, Usage};
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::AgentSession;
use crate::storage::ForkPosition;

/// Where a prompt came from (`input` event `source`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InputSource {
    /// The interactive editor, print and json modes (default).
    #[default]
    Interactive,
    /// An RPC `prompt` command.
    Rpc,
    /// `pi.sendUserMessage` / [`AgentSession::send_user_message`].
    Extension,
}

impl InputSource {
    /// pi's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            InputSource::Interactive => "interactive",
            InputSource::Rpc => "rpc",
            InputSource::Extension => "extension",
        }
    }
}

/// Why a session starts (`session_start.reason`; JSON lowercase).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionStartReason {
    /// Process start.
    Startup,
    /// `/reload`.
    Reload,
    /// `/new`.
    New,
    /// `/resume`.
    Resume,
    /// `/fork`, `/clone`.
    Fork,
}

/// Why a session ends (`session_shutdown.reason`; JSON lowercase).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ShutdownReason {
    /// Process exit.
    Quit,
    /// `/reload`.
    Reload,
    /// `/new`.
    New,
    /// `/resume`.
    Resume,
    /// `/fork`, `/clone`.
    Fork,
}

/// What a `session_before_switch` is about to do (`reason`; JSON lowercase).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SwitchReason {
    /// `/new`.
    New,
    /// `/resume`.
    Resume,
}

/// Why the running session is replaced by another: the old one ends and the new one starts
/// with the same reason (pi passes one string to both events).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplaceReason {
    /// `/reload`.
    Reload,
    /// `/new`.
    New,
    /// `/resume`.
    Resume,
    /// `/fork`, `/clone`.
    Fork,
}

impl SessionStartReason {
    /// pi's spelling (`startup`, `reload`, `new`, `resume`, `fork`).
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStartReason::Startup => "startup",
            SessionStartReason::Reload => "reload",
            SessionStartReason::New => "new",
            SessionStartReason::Resume => "resume",
            SessionStartReason::Fork => "fork",
        }
    }
}

impl ShutdownReason {
    /// pi's spelling (`quit`, `reload`, `new`, `resume`, `fork`).
    pub fn as_str(self) -> &'static str {
        match self {
            ShutdownReason::Quit => "quit",
            ShutdownReason::Reload => "reload",
            ShutdownReason::New => "new",
            ShutdownReason::Resume => "resume",
            ShutdownReason::Fork => "fork",
        }
    }
}

impl From<ReplaceReason> for SessionStartReason {
    fn from(r: ReplaceReason) -> Self {
        match r {
            ReplaceReason::Reload => SessionStartReason::Reload,
            ReplaceReason::New => SessionStartReason::New,
            ReplaceReason::Resume => SessionStartReason::Resume,
            ReplaceReason::Fork => SessionStartReason::Fork,
        }
    }
}

impl From<ReplaceReason> for ShutdownReason {
    fn from(r: ReplaceReason) -> Self {
        match r {
            ReplaceReason::Reload => ShutdownReason::Reload,
            ReplaceReason::New => ShutdownReason::New,
            ReplaceReason::Resume => ShutdownReason::Resume,
            ReplaceReason::Fork => ShutdownReason::Fork,
        }
    }
}

/// How a message sent while the session streams is queued (`streamingBehavior` of RPC
/// `prompt`, `deliverAs` of an extension's `sendMessage`, the `input` event's field; JSON
/// `"steer"` / `"followUp"`). One type for the session, the extension events and RPC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamingBehavior {
    /// Delivered after the current turn's tools finish.
    Steer,
    /// Delivered when the agent would otherwise stop.
    FollowUp,
}

/// `input {text, images?, source, streamingBehavior?}`.
#[derive(Clone, Debug, PartialEq)]
pub struct InputEvent {
    /// The raw prompt text (before skill/template expansion).
    pub text: String,
    /// Attached images.
    pub images: Vec<ImageContent>,
    /// Origin.
    pub source: InputSource,
    /// Only set while the session streams.
    pub streaming_behavior: Option<StreamingBehavior>,
}

/// What `input` handlers decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum InputAction {
    /// Go on with the text unchanged.
    #[default]
    Continue,
    /// Go on with this text (and these images, when `Some`).
    Transform {
        /// Replacement text.
        text: String,
        /// Replacement images.
        images: Option<Vec<ImageContent>>,
    },
    /// The handler consumed the input; the prompt ends.
    Handled,
}

/// `before_agent_start {prompt, images?, systemPrompt}`.
#[derive(Clone, Debug, PartialEq)]
pub struct BeforeAgentStartEvent {
    /// The expanded prompt text.
    pub prompt: String,
    /// Attached images.
    pub images: Vec<ImageContent>,
    /// The base system prompt.
    pub system_prompt: String,
}

/// A custom message an extension asks to add (`{customType, content, display, details?}`).
#[derive(Clone, Debug, PartialEq)]
pub struct CustomMessageSpec {
    /// The extension's type tag.
    pub custom_type: String,
    /// String or content blocks (`null` is normalized to `[]`).
    pub content: Value,
    /// Whether UIs show it.
    pub display: bool,
    /// Extra data.
    pub details: Option<Value>,
}

/// `{message?, systemPrompt?}` accumulated over `before_agent_start` handlers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BeforeAgentStartResult {
    /// One custom message per handler that returned one, in handler order.
    pub messages: Vec<CustomMessageSpec>,
    /// The chained system prompt override for this run.
    pub system_prompt: Option<String>,
}

/// `tool_call {toolCallId, toolName, input}`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCallEvent {
    /// Provider call id.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// Validated arguments (handlers may return replacements in
    /// [`BeforeToolCallResult::args`]).
    pub input: Value,
}

/// `tool_result {toolCallId, toolName, input, content, details, isError, usage?}`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResultEvent {
    /// Provider call id.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// The arguments the tool ran with.
    pub input: Value,
    /// The tool's result.
    pub result: AgentToolResult,
    /// Whether it failed.
    pub is_error: bool,
    /// Usage the tool incurred.
    pub usage: Option<Usage>,
}

/// Turn bookkeeping passed with lifecycle events: `turn_start {turnIndex, timestamp}` and
/// `turn_end {turnIndex}` (the index restarts at 0 on every `agent_start`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TurnInfo {
    /// 0-based turn index within the low-level run.
    pub turn_index: usize,
    /// ms since the epoch (meaningful for `turn_start`).
    pub timestamp: i64,
}

/// `{extensionPath, event, error}` reported to the error listeners.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionErrorInfo {
    /// `command:<name>`, a skill file path, or an extension path.
    pub extension_path: String,
    /// The event being handled (`command`, `skill_expansion`, …).
    pub event: String,
    /// The error text.
    pub error: String,
}

/// The extension seam. Every method is awaited by the session at pi's point; the defaults
/// do nothing. Mirrors the `ExtensionRunner` calls of pi-coding-agent 0.85.0
/// `core/agent-session.ts`.
pub trait SessionHooks: Send + Sync {
    /// Whether an extension command `name` is registered (prompt step 1; steer/follow-up
    /// refuse to queue commands).
    fn has_command(&self, _name: &str) -> bool {
        false
    }

    /// Runs extension command `name` with `args` (text after the first space). `Err` is
    /// reported as `{extensionPath:"command:<name>", event:"command"}`.
    fn run_command(
        &self,
        _name: &str,
        _args: &str,
    ) -> BoxFuture<'_, Result<(), super::HandlerError>> {
        Box::pin(async { Ok(()) })
    }

    /// `input` handlers (only the transform/handled contract; prompt step 3).
    fn input(&self, _event: InputEvent) -> BoxFuture<'_, InputAction> {
        Box::pin(async { InputAction::Continue })
    }

    /// `before_agent_start` handlers (prompt step 9).
    fn before_agent_start(
        &self,
        _event: BeforeAgentStartEvent,
    ) -> BoxFuture<'_, Option<BeforeAgentStartResult>> {
        Box::pin(async { None })
    }

    /// `context {messages}` before every LLM call: returns the (chained) messages to send;
    /// the history is untouched.
    fn context(&self, messages: Vec<AgentMessage>) -> BoxFuture<'_, Vec<AgentMessage>> {
        Box::pin(async move { messages })
    }

    /// `tool_call`: may block the call. `Err(text)` blocks it with `text` as the result (pi:
    /// a throwing handler).
    fn tool_call(
        &self,
        _event: ToolCallEvent,
    ) -> BoxFuture<'_, Result<Option<BeforeToolCallResult>, HookError>> {
        Box::pin(async { Ok(None) })
    }

    /// `tool_result`: a partial patch of the result.
    fn tool_result(&self, _event: ToolResultEvent) -> BoxFuture<'_, Option<AfterToolCallResult>> {
        Box::pin(async { None })
    }

    /// The mirrored lifecycle events `agent_start`, `agent_end` (without `willRetry`),
    /// `turn_start`, `turn_end`, `message_start`, `message_update`, `tool_execution_*`
    /// (`message_end` goes to [`SessionHooks::message_end`]).
    fn agent_event(&self, _event: Arc<AgentEvent>, _turn: TurnInfo) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// `message_end {message}`: a replacement message (same role; a different role is
    /// ignored), copied into the transcript, later events and the session file.
    fn message_end(&self, _message: AgentMessage) -> BoxFuture<'_, Option<AgentMessage>> {
        Box::pin(async { None })
    }

    /// `agent_settled`, awaited before the session's own `agent_settled` event.
    fn agent_settled(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// `session_start {reason, previousSessionFile?}` ([`AgentSession::bind_hooks`]).
    fn session_start(
        &self,
        _reason: SessionStartReason,
        _previous_session_file: Option<String>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// `session_shutdown {reason, targetSessionFile?}` ([`AgentSession::shutdown`]).
    fn session_shutdown(
        &self,
        _reason: ShutdownReason,
        _target_session_file: Option<String>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// `session_before_switch {reason, targetSessionFile?}` before a session replacement
    /// (the target is the file being resumed): `true`
    /// cancels the replacement (pi: a handler returned `{cancel: true}`). Awaited by
    /// [`crate::runtime::RuntimeHost`].
    fn session_before_switch(
        &self,
        _reason: SwitchReason,
        _target_session_file: Option<String>,
    ) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }

    /// `session_before_fork {entryId, position}` before a fork (`position`
    /// [`ForkPosition::Before`]: at the parent of a user message, or [`ForkPosition::At`]:
    /// keeping the entry, i.e. clone): `true` cancels it. Awaited by
    /// [`crate::runtime::RuntimeHost`].
    fn session_before_fork(&self, _entry_id: &str, _position: ForkPosition) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }

    /// `session_before_compact {preparation, branchEntries, customInstructions?, reason,
    /// willRetry, signal}`: before a compaction summarizes; may cancel it
    /// (`Compaction cancelled`) or supply the result (then written with `fromHook: true`).
    #[allow(clippy::too_many_arguments)]
    fn session_before_compact(
        &self,
        _preparation: crate::compaction::CompactionPreparation,
        _branch_entries: Vec<crate::storage::SessionEntry>,
        _custom_instructions: Option<String>,
        _reason: super::CompactionReason,
        _will_retry: bool,
        _signal: CancellationToken,
    ) -> BoxFuture<'_, Option<BeforeCompactDecision>> {
        Box::pin(async { None })
    }

    /// `session_compact {compactionEntry, fromExtension, reason, willRetry}`: after a
    /// compaction entry was written and the context rebuilt, before `compaction_end`.
    fn session_compact(
        &self,
        _entry: crate::storage::SessionEntry,
        _reason: super::CompactionReason,
        _will_retry: bool,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// `session_compact_failed {reason, errorMessage?, aborted, willRetry:false,
    /// fromExtension}`: after the failed `compaction_end`, awaited.
    /// `from_extension` is true when a `session_before_compact` handler had supplied the
    /// compaction content before the failure (or abort).
    fn session_compact_failed(
        &self,
        _reason: super::CompactionReason,
        _error_message: Option<String>,
        _aborted: bool,
        _from_extension: bool,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// `session_before_tree {preparation, signal}`: before a tree navigation
    /// summarizes or moves the leaf; may cancel it, supply the summary, or override the
    /// instructions and the label. `signal` is cancelled by `abort_branch_summary`.
    fn session_before_tree(
        &self,
        _preparation: super::tree::TreePreparation,
        _signal: CancellationToken,
    ) -> BoxFuture<'_, Option<super::tree::TreeResult>> {
        Box::pin(async { None })
    }

    /// `session_tree {newLeafId, oldLeafId, summaryEntry?, fromExtension?}`: after a tree
    /// navigation moved the leaf and rebuilt the messages (`fromExtension` only with a
    /// summary entry).
    fn session_tree(
        &self,
        _new_leaf_id: Option<String>,
        _old_leaf_id: Option<String>,
        _summary_entry: Option<crate::storage::SessionEntry>,
        _from_extension: Option<bool>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// `before_provider_request {payload}`: a replacement request body (chained), or `None`
    /// to send it unchanged.
    fn before_provider_request(&self, _payload: Value) -> BoxFuture<'_, Option<Value>> {
        Box::pin(async { None })
    }

    /// `after_provider_response {status, headers}`: after the response headers, before the
    /// body is read.
    fn after_provider_response(
        &self,
        _status: u16,
        _headers: Vec<(String, String)>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// `model_select {model, previousModel, source}` (`set`, `cycle`, `restore`), awaited
    /// after a model change.
    fn model_select(
        &self,
        _model: Model,
        _previous: Option<Model>,
        _source: &str,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// `thinking_level_select {level, previousLevel}`; pi does not await it.
    fn thinking_level_select(&self, _level: ModelThinkingLevel, _previous: ModelThinkingLevel) {}

    /// Reports an extension error (skill expansion, command failure) to the error listeners.
    fn report_error(&self, _error: ExtensionErrorInfo) {}
}

/// Hooks that do nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHooks;

impl SessionHooks for NoHooks {}

/// When [`Compactor::check`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckPhase {
    /// Before a prompt (aborted messages are checked; the result never continues the run).
    BeforePrompt,
    /// After a low-level run (aborted messages are skipped; `true` continues the run).
    AfterRun,
}

/// What `session_before_compact` handlers decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BeforeCompactDecision {
    /// Cancel the compaction.
    pub cancel: bool,
    /// Use this result instead of the default summary.
    pub compaction: Option<crate::compaction::CompactionResult>,
}

/// The compaction seam. The session passes itself (a cheap handle) so the
/// compactor can read the agent state and store, emit `compaction_*` events and replace the
/// transcript. Defaults never compact.
pub trait Compactor: Send + Sync {
    /// `checkCompaction(msg)`: returns whether the post-run loop should `continue()` the
    /// agent (overflow recovery, or queued messages after threshold compaction).
    fn check(
        &self,
        _session: AgentSession,
        _message: Arc<AssistantMessage>,
        _phase: CheckPhase,
    ) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }

    /// Between turns (before every non-first assistant response of a run): returns the
    /// rebuilt context messages when it compacted, else `None`.
    fn before_next_turn(
        &self,
        _session: AgentSession,
        _context: Arc<AgentContext>,
    ) -> BoxFuture<'_, Option<Vec<AgentMessage>>> {
        Box::pin(async { None })
    }

    /// Sees every core event after the session handled it (overflow-flag bookkeeping: reset on
    /// a user `message_start` and on an assistant `message_end` that is not error/length).
    fn observe(&self, _event: &AgentEvent) {}

    /// Whether any compaction (or branch summary) is running (`isCompacting`).
    fn is_compacting(&self) -> bool {
        false
    }

    /// Whether a manual compaction is running (prompts are refused meanwhile).
    fn is_manual_compacting(&self) -> bool {
        false
    }

    /// Aborts a running compaction (part of [`AgentSession::abort`]).
    fn abort(&self) {}

    /// A manual compaction (`compact(instructions?)`); the default compactor has none.
    fn compact_manual(
        &self,
        _session: AgentSession,
        _custom_instructions: Option<String>,
    ) -> BoxFuture<'_, Result<super::CompactionResult, crate::compaction::CompactionError>> {
        Box::pin(async { Err(crate::compaction::CompactionError::Unavailable) })
    }
}

/// A compactor that never compacts.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCompaction;

impl Compactor for NoCompaction {}
