//! Run-level events: `input`, `before_agent_start`, the lifecycle events mirrored from the
//! agent (`agent_*`, `turn_*`, `message_*`, `tool_execution_*`), `context` and `ui_prompt_*`.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/extensions/types.ts`.

use pi_agent_core::{AgentMessage, AgentToolResult};
use pi_ai::{
    AssistantMessage, AssistantMessageEvent, ImageContent, PartialMessage, ToolResultMessage,
};
use serde::Serialize;
use serde_json::Value;

use super::{ExtensionEvent, observer_events};

/// Where a prompt came from (`input.source`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputSource {
    /// The editor, print and json modes.
    #[default]
    Interactive,
    /// An RPC `prompt` command.
    Rpc,
    /// `pi.sendUserMessage`.
    Extension,
}

pub use crate::session::StreamingBehavior;

/// `input {text, images?, source, streamingBehavior?}`: before skill/template expansion.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InputEvent {
    /// The raw text (the chained value: a transform is seen by later handlers).
    pub text: String,
    /// Attached images (chained like `text`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<ImageContent>>,
    /// Origin.
    pub source: InputSource,
    /// Set while the session streams.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming_behavior: Option<StreamingBehavior>,
}

/// An `input` handler's answer (`{action: "continue" | "transform" | "handled"}`).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum InputResult {
    /// Leave the input unchanged (also what returning `None` means).
    #[default]
    Continue,
    /// Go on with this text; `images: None` keeps the current images. Chained.
    Transform {
        /// The new text.
        text: String,
        /// The new images, or `None` to keep them.
        images: Option<Vec<ImageContent>>,
    },
    /// The handler consumed the input: the first `handled` wins and later handlers do not
    /// run; the prompt ends.
    Handled,
}

impl ExtensionEvent for InputEvent {
    const NAME: &'static str = "input";
    type Output = InputResult;
}

/// A custom message to inject: `{customType, content, display, details?}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessageSpec {
    /// The extension's type tag.
    pub custom_type: String,
    /// A string or content blocks.
    pub content: Value,
    /// Whether UIs show it.
    pub display: bool,
    /// Extra data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

/// `before_agent_start {prompt, images?, systemPrompt, systemPromptOptions}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeAgentStartEvent {
    /// The expanded prompt text.
    pub prompt: String,
    /// Attached images.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<ImageContent>>,
    /// The system prompt so far (chained: a replacement is seen by later handlers).
    pub system_prompt: String,
    /// The options the base prompt was built from (JSON, as pi passes them).
    pub system_prompt_options: Value,
}

/// One handler's `{message?, systemPrompt?}`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BeforeAgentStartResult {
    /// A message to inject after the prompt (they accumulate in handler order).
    pub message: Option<CustomMessageSpec>,
    /// A replacement system prompt for this run (chained).
    pub system_prompt: Option<String>,
}

/// The combined `before_agent_start` outcome (`None` from the runner when nothing changed).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BeforeAgentStartOutcome {
    /// Every returned message, in handler order.
    pub messages: Vec<CustomMessageSpec>,
    /// The chained system prompt, when any handler replaced it.
    pub system_prompt: Option<String>,
}

impl ExtensionEvent for BeforeAgentStartEvent {
    const NAME: &'static str = "before_agent_start";
    type Output = BeforeAgentStartResult;
}

/// `agent_start`: a low-level run began.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AgentStartEvent;

/// `agent_end {messages}` (no `willRetry`, unlike the session event).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgentEndEvent {
    /// The messages the run produced.
    pub messages: Vec<AgentMessage>,
}

/// `agent_settled`: the whole product-level run is over (awaited before the session event).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AgentSettledEvent;

/// `turn_start {turnIndex, timestamp}` (the index restarts at 0 per low-level run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartEvent {
    /// 0-based turn index within the run.
    pub turn_index: u64,
    /// ms since the epoch.
    pub timestamp: i64,
}

/// `turn_end {turnIndex, message, toolResults}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnEndEvent {
    /// 0-based turn index within the run.
    pub turn_index: u64,
    /// The turn's assistant message.
    pub message: AssistantMessage,
    /// Its tool results, in call order.
    pub tool_results: Vec<ToolResultMessage>,
}

/// `message_start {message}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MessageStartEvent {
    /// The message (assistant: the partial at `start`).
    pub message: AgentMessage,
}

/// `message_update {message, assistantMessageEvent}`: one streamed delta.
#[derive(Clone, Debug)]
pub struct MessageUpdateEvent {
    /// The live partial assistant message.
    pub message: PartialMessage,
    /// The delta event.
    pub assistant_message_event: AssistantMessageEvent,
}

/// `message_end {message}`: handlers may return a replacement of the same role.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MessageEndEvent {
    /// The final message (the chained replacement, for later handlers).
    pub message: AgentMessage,
}

/// `{message}` returned by a `message_end` handler.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageEndResult {
    /// The replacement; a different role is refused with
    /// `message_end handlers must return a message with the same role`.
    pub message: AgentMessage,
}

impl ExtensionEvent for MessageEndEvent {
    const NAME: &'static str = "message_end";
    type Output = MessageEndResult;
}

/// `context {messages}`: a deep copy of what goes to the model, before every LLM call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ContextEvent {
    /// The (chained) messages; changing them never touches the history.
    pub messages: Vec<AgentMessage>,
}

/// `{messages}` returned by a `context` handler (chained).
#[derive(Clone, Debug, PartialEq)]
pub struct ContextResult {
    /// The messages to send instead.
    pub messages: Vec<AgentMessage>,
}

impl ExtensionEvent for ContextEvent {
    const NAME: &'static str = "context";
    type Output = ContextResult;
}

/// `tool_execution_start {toolCallId, toolName, args}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionStartEvent {
    /// Provider call id.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// The call's original arguments.
    pub args: Value,
}

/// `tool_execution_update {toolCallId, toolName, args, partialResult}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionUpdateEvent {
    /// Provider call id.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// The call's arguments.
    pub args: Value,
    /// What the tool reported.
    pub partial_result: AgentToolResult,
}

/// `tool_execution_end {toolCallId, toolName, result, isError}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionEndEvent {
    /// Provider call id.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// The final result (after `tool_result` handlers).
    pub result: AgentToolResult,
    /// Whether it failed.
    pub is_error: bool,
}

/// `kind` of a UI prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UiPromptKind {
    /// `ui.select`.
    Select,
    /// `ui.confirm`.
    Confirm,
    /// `ui.input`.
    Input,
    /// `ui.editor`.
    Editor,
    /// `ui.custom` (no title).
    Custom,
}

/// `ui_prompt_start {reason:"ui_prompt", kind, title?}`: the outermost blocking prompt began.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UiPromptStartEvent {
    /// Always `"ui_prompt"`.
    pub reason: &'static str,
    /// The outermost prompt's kind.
    pub kind: UiPromptKind,
    /// Its title (absent when empty or `custom`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// `ui_prompt_end {reason:"ui_prompt", kind, title?}`: the same kind/title as the start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UiPromptEndEvent {
    /// Always `"ui_prompt"`.
    pub reason: &'static str,
    /// The outermost prompt's kind.
    pub kind: UiPromptKind,
    /// Its title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

observer_events! {
    AgentStartEvent => "agent_start",
    AgentEndEvent => "agent_end",
    AgentSettledEvent => "agent_settled",
    TurnStartEvent => "turn_start",
    TurnEndEvent => "turn_end",
    MessageStartEvent => "message_start",
    MessageUpdateEvent => "message_update",
    ToolExecutionStartEvent => "tool_execution_start",
    ToolExecutionUpdateEvent => "tool_execution_update",
    ToolExecutionEndEvent => "tool_execution_end",
    UiPromptStartEvent => "ui_prompt_start",
    UiPromptEndEvent => "ui_prompt_end",
}
