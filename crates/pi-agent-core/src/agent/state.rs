//! The agent's public state and its reduction by events.
//!
//! Mirrors pi-agent-core 0.85.1 `AgentState` and `Agent.processEvents`' reducer: the
//! state is updated *before* listeners see the event, so a
//! `message_end` listener finds the message in the transcript and a `tool_execution_start`
//! listener finds the call pending.

use std::sync::Arc;

use pi_ai::{AssistantMessage, Message, Model, ModelThinkingLevel, PartialMessage};

use crate::event::AgentEvent;
use crate::message::AgentMessage;
use crate::tool::AgentTool;

/// The message currently streaming: the live assistant partial (shared with the provider's
/// accumulator, O(1) per delta) or a whole message (user, tool result, assistant at start).
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum StreamingMessage {
    /// A complete message (from `message_start`).
    Message(AgentMessage),
    /// The live assistant partial (from `message_update`).
    Partial(PartialMessage),
}

impl StreamingMessage {
    /// A copy of the current content as an agent message.
    pub fn to_message(&self) -> AgentMessage {
        match self {
            StreamingMessage::Message(m) => m.clone(),
            StreamingMessage::Partial(p) => Message::Assistant(p.snapshot()).into(),
        }
    }
}

/// The agent's state (`agent.state` in pi).
#[derive(Clone)]
pub struct AgentState {
    /// System prompt (default `""`).
    pub system_prompt: String,
    /// Model (default: the placeholder with id/name/api/provider `unknown`).
    pub model: Model,
    /// Thinking level (default `off`).
    pub thinking_level: ModelThinkingLevel,
    /// Tools.
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// Transcript.
    pub messages: Vec<AgentMessage>,
    /// `true` from run start until the `agent_end` listeners finished.
    pub is_streaming: bool,
    /// The message being streamed, if any.
    pub streaming_message: Option<StreamingMessage>,
    /// Ids of calls between `tool_execution_start` and `tool_execution_end`, in start order.
    pub pending_tool_calls: Vec<String>,
    /// The last turn's assistant `errorMessage`, if any.
    pub error_message: Option<String>,
}

impl std::fmt::Debug for AgentState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentState")
            .field("system_prompt", &self.system_prompt)
            .field("model", &self.model.id)
            .field("thinking_level", &self.thinking_level)
            .field("tools", &self.tools.len())
            .field("messages", &self.messages.len())
            .field("is_streaming", &self.is_streaming)
            .field("pending_tool_calls", &self.pending_tool_calls)
            .field("error_message", &self.error_message)
            .finish()
    }
}

/// pi's placeholder model: id, name, api and provider `unknown`, everything else empty.
pub fn default_model() -> Model {
    Model {
        id: "unknown".into(),
        name: "unknown".into(),
        api: "unknown".into(),
        provider: "unknown".into(),
        input: Vec::new(),
        ..Default::default()
    }
}

impl Default for AgentState {
    fn default() -> Self {
        AgentState {
            system_prompt: String::new(),
            model: default_model(),
            thinking_level: ModelThinkingLevel::Off,
            tools: Vec::new(),
            messages: Vec::new(),
            is_streaming: false,
            streaming_message: None,
            pending_tool_calls: Vec::new(),
            error_message: None,
        }
    }
}

impl AgentState {
    /// Applies an event before delivery (pi's `processEvents` switch).
    pub(crate) fn reduce(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::MessageStart { message } => {
                self.streaming_message = Some(StreamingMessage::Message(message.clone()));
            }
            AgentEvent::MessageUpdate { message, .. } => match &self.streaming_message {
                Some(StreamingMessage::Partial(p)) if p.ptr_eq(message) => {}
                _ => self.streaming_message = Some(StreamingMessage::Partial(message.clone())),
            },
            AgentEvent::MessageEnd { message } => {
                self.streaming_message = None;
                self.messages.push(message.clone());
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                if !self.pending_tool_calls.contains(tool_call_id) {
                    self.pending_tool_calls.push(tool_call_id.clone());
                }
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                self.pending_tool_calls.retain(|id| id != tool_call_id);
            }
            AgentEvent::TurnEnd { message, .. } => {
                if let Some(e) = &message.error_message {
                    self.error_message = Some(e.clone());
                }
            }
            AgentEvent::AgentEnd { .. } => self.streaming_message = None,
            AgentEvent::AgentStart
            | AgentEvent::TurnStart
            | AgentEvent::ToolExecutionUpdate { .. } => {}
        }
    }
}

/// The synthesized failure message: one empty text block, the model's
/// api/provider/id, zero usage, `aborted` if the run's signal was cancelled else `error`,
/// `errorMessage` before `timestamp` (pi-agent-core 0.85.1 `handleRunFailure` builds it whole).
pub(crate) fn failure_message(model: &Model, aborted: bool, error: String) -> AssistantMessage {
    let mut m = AssistantMessage::empty(&model.api, &model.provider, &model.id);
    m.content = vec![pi_ai::AssistantContent::text("")];
    m.stop_reason = if aborted {
        pi_ai::StopReason::Aborted
    } else {
        pi_ai::StopReason::Error
    };
    m.error_message = Some(error);
    m.error_before_timestamp = true;
    m
}
