//! `AgentEvent`: the ten lifecycle events of an agent run.
//!
//! Mirrors pi-agent-core 0.85.1 `AgentEvent` (`types.ts`). JSON is pi's: a `type`
//! discriminant first, then the payload fields in the order pi's loop creates them
//! (`message_update` writes `assistantMessageEvent` before `message`).
//!
//! `message_update.message` is the live [`PartialMessage`] shared with the provider's
//! accumulator and with `Agent::streaming_message`, so delivering a delta costs O(1) however
//! long the message already is (pi: a shallow copy sharing the content blocks).

use std::sync::Arc;

use pi_ai::{AssistantMessage, AssistantMessageEvent, PartialMessage, ToolResultMessage};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::message::{AgentMessage, serialize_assistant, serialize_tool_result};
use crate::tool::AgentToolResult;

/// One event of an agent run. Order: `agent_start`, then per turn `turn_start` … `turn_end`,
/// then `agent_end`.
// Messages are the common payload; boxing them would only add indirections.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum AgentEvent {
    /// `{type:"agent_start"}`: the run began.
    AgentStart,
    /// `{type:"agent_end", messages}`: the run produced these messages (prompts, injected
    /// messages, assistant messages and tool results, in order; never pre-existing context).
    AgentEnd {
        /// Messages produced by the run.
        messages: Vec<AgentMessage>,
    },
    /// `{type:"turn_start"}`: one LLM call (plus its tool calls) begins.
    TurnStart,
    /// `{type:"turn_end", message, toolResults}`.
    TurnEnd {
        /// The turn's assistant message (shared with the transcript).
        message: Arc<AssistantMessage>,
        /// The tool results of the turn, in tool-call order (shared with the transcript).
        tool_results: Vec<Arc<ToolResultMessage>>,
    },
    /// `{type:"message_start", message}` for any role (assistant: the partial at `start`).
    MessageStart {
        /// The message.
        message: AgentMessage,
    },
    /// `{type:"message_update", assistantMessageEvent, message}`: one streamed block event.
    MessageUpdate {
        /// The block event (one of the nine `text_*`/`thinking_*`/`toolcall_*` variants).
        assistant_message_event: AssistantMessageEvent,
        /// The live partial assistant message.
        message: PartialMessage,
    },
    /// `{type:"message_end", message}`: the message is final and in the transcript.
    MessageEnd {
        /// The final message.
        message: AgentMessage,
    },
    /// `{type:"tool_execution_start", toolCallId, toolName, args}` (`args`: the raw call
    /// arguments).
    ToolExecutionStart {
        /// Provider tool-call id.
        tool_call_id: String,
        /// Tool name as called.
        tool_name: String,
        /// Raw arguments object of the call.
        args: Value,
    },
    /// `{type:"tool_execution_update", toolCallId, toolName, args, partialResult}`.
    ToolExecutionUpdate {
        /// Provider tool-call id.
        tool_call_id: String,
        /// Tool name as called.
        tool_name: String,
        /// Raw arguments object of the call.
        args: Value,
        /// What the tool passed to `on_update`.
        partial_result: AgentToolResult,
    },
    /// `{type:"tool_execution_end", toolCallId, toolName, result, isError}` (result after
    /// `after_tool_call`).
    ToolExecutionEnd {
        /// Provider tool-call id.
        tool_call_id: String,
        /// Tool name as called.
        tool_name: String,
        /// The final result.
        result: AgentToolResult,
        /// Whether the call failed.
        is_error: bool,
    },
}

impl AgentEvent {
    /// pi's `type` string.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentEvent::AgentStart => "agent_start",
            AgentEvent::AgentEnd { .. } => "agent_end",
            AgentEvent::TurnStart => "turn_start",
            AgentEvent::TurnEnd { .. } => "turn_end",
            AgentEvent::MessageStart { .. } => "message_start",
            AgentEvent::MessageUpdate { .. } => "message_update",
            AgentEvent::MessageEnd { .. } => "message_end",
            AgentEvent::ToolExecutionStart { .. } => "tool_execution_start",
            AgentEvent::ToolExecutionUpdate { .. } => "tool_execution_update",
            AgentEvent::ToolExecutionEnd { .. } => "tool_execution_end",
        }
    }
}

impl Serialize for AgentEvent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", self.kind())?;
        match self {
            AgentEvent::AgentStart | AgentEvent::TurnStart => {}
            AgentEvent::AgentEnd { messages } => m.serialize_entry("messages", messages)?,
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => {
                m.serialize_entry("message", &AssistantAsMessage(message))?;
                m.serialize_entry("toolResults", &ToolResultsAsMessages(tool_results))?;
            }
            AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
                m.serialize_entry("message", message)?
            }
            AgentEvent::MessageUpdate {
                assistant_message_event,
                message,
            } => {
                m.serialize_entry("assistantMessageEvent", assistant_message_event)?;
                m.serialize_entry("message", &PartialAsMessage(message))?;
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                m.serialize_entry("toolCallId", tool_call_id)?;
                m.serialize_entry("toolName", tool_name)?;
                m.serialize_entry("args", args)?;
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial_result,
            } => {
                m.serialize_entry("toolCallId", tool_call_id)?;
                m.serialize_entry("toolName", tool_name)?;
                m.serialize_entry("args", args)?;
                m.serialize_entry("partialResult", partial_result)?;
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
            } => {
                m.serialize_entry("toolCallId", tool_call_id)?;
                m.serialize_entry("toolName", tool_name)?;
                m.serialize_entry("result", result)?;
                m.serialize_entry("isError", is_error)?;
            }
        }
        m.end()
    }
}

/// Serializes an assistant message with its `role` (as a pi-ai `Message`).
struct AssistantAsMessage<'a>(&'a AssistantMessage);

impl Serialize for AssistantAsMessage<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_assistant(self.0, s)
    }
}

/// Serializes the live partial with its `role`.
struct PartialAsMessage<'a>(&'a PartialMessage);

impl Serialize for PartialAsMessage<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_assistant(&self.0.read(), s)
    }
}

/// Serializes tool results with their `role`.
struct ToolResultsAsMessages<'a>(&'a [Arc<ToolResultMessage>]);

impl Serialize for ToolResultsAsMessages<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for r in self.0 {
            seq.serialize_element(&ToolResultAsMessage(r))?;
        }
        seq.end()
    }
}

struct ToolResultAsMessage<'a>(&'a ToolResultMessage);

impl Serialize for ToolResultAsMessage<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_tool_result(self.0, s)
    }
}
