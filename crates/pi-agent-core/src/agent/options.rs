//! The agent's options (pi: public mutable fields read when a run starts) and queues.
//!
//! Mirrors pi-agent-core 0.85.1 `AgentOptions` and `PendingMessageQueue`.

use std::collections::VecDeque;
use std::sync::Arc;

use futures::future::BoxFuture;
use pi_ai::{OnPayload, OnResponse, ThinkingBudgets};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::agent_loop::{
    AfterToolCallFn, BeforeToolCallFn, ConvertToLlmFn, GetApiKeyFn, PrepareNextTurnFn,
    ShouldStopAfterTurnFn, StreamFn, TransformContextFn, TurnUpdate, default_convert_to_llm,
};
use crate::error::HookError;
use crate::message::AgentMessage;
use crate::tool::ExecutionMode;

/// `prepareNextTurn(signal)`: the context-free variant of
/// [`AgentOptions::prepare_next_turn_with_context`].
pub type PrepareNextTurnNoContextFn = Arc<
    dyn Fn(CancellationToken) -> BoxFuture<'static, Result<Option<TurnUpdate>, HookError>>
        + Send
        + Sync,
>;

/// How a queue is drained per poll.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum QueueMode {
    /// `all`: the whole queue.
    #[serde(rename = "all")]
    All,
    /// `one-at-a-time` (default): only the oldest message.
    #[default]
    #[serde(rename = "one-at-a-time")]
    OneAtATime,
}

impl QueueMode {
    /// pi's spelling (`all`, `one-at-a-time`), as settings and RPC `get_state` write it.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueMode::All => "all",
            QueueMode::OneAtATime => "one-at-a-time",
        }
    }
}

/// Everything configurable on an [`crate::Agent`] besides its state. Read when a run starts.
#[derive(Clone)]
pub struct AgentOptions {
    /// The stream function (pi: `streamFn`, required).
    pub stream_fn: StreamFn,
    /// Agent messages → LLM messages (default: role filter).
    pub convert_to_llm: ConvertToLlmFn,
    /// Context transform before `convert_to_llm`.
    pub transform_context: Option<TransformContextFn>,
    /// Per-call API key resolution.
    pub get_api_key: Option<GetApiKeyFn>,
    /// Request-body hook forwarded to the stream function.
    pub on_payload: Option<OnPayload>,
    /// Response-headers hook forwarded to the stream function.
    pub on_response: Option<OnResponse>,
    /// Tool preflight hook.
    pub before_tool_call: Option<BeforeToolCallFn>,
    /// Tool finalization hook.
    pub after_tool_call: Option<AfterToolCallFn>,
    /// Stop after a turn.
    pub should_stop_after_turn: Option<ShouldStopAfterTurnFn>,
    /// Prepare the next turn (signal only); used when the context variant is absent.
    pub prepare_next_turn: Option<PrepareNextTurnNoContextFn>,
    /// Prepare the next turn with the finished turn's context (preferred).
    pub prepare_next_turn_with_context: Option<PrepareNextTurnFn>,
    /// Steering queue mode (default one-at-a-time).
    pub steering_mode: QueueMode,
    /// Follow-up queue mode (default one-at-a-time).
    pub follow_up_mode: QueueMode,
    /// Session id forwarded to the stream function.
    pub session_id: Option<String>,
    /// Thinking budgets forwarded to the stream function.
    pub thinking_budgets: Option<ThinkingBudgets>,
    /// Cap on server-requested retry delays (ms), forwarded.
    pub max_retry_delay_ms: Option<u64>,
    /// Batch mode (default parallel).
    pub tool_execution: ExecutionMode,
}

impl std::fmt::Debug for AgentOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentOptions")
            .field("steering_mode", &self.steering_mode)
            .field("follow_up_mode", &self.follow_up_mode)
            .field("session_id", &self.session_id)
            .field("tool_execution", &self.tool_execution)
            .finish_non_exhaustive()
    }
}

impl AgentOptions {
    /// Options with pi's defaults around a stream function.
    pub fn new(stream_fn: StreamFn) -> Self {
        AgentOptions {
            stream_fn,
            convert_to_llm: Arc::new(default_convert_to_llm),
            transform_context: None,
            get_api_key: None,
            on_payload: None,
            on_response: None,
            before_tool_call: None,
            after_tool_call: None,
            should_stop_after_turn: None,
            prepare_next_turn: None,
            prepare_next_turn_with_context: None,
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            session_id: None,
            thinking_budgets: None,
            max_retry_delay_ms: None,
            tool_execution: ExecutionMode::Parallel,
        }
    }
}

/// A steering or follow-up queue.
#[derive(Debug, Default)]
pub(crate) struct PendingQueue {
    messages: VecDeque<AgentMessage>,
}

impl PendingQueue {
    pub(super) fn push(&mut self, m: AgentMessage) {
        self.messages.push_back(m);
    }

    pub(super) fn has_items(&self) -> bool {
        !self.messages.is_empty()
    }

    /// `all` drains everything, `one-at-a-time` the oldest message.
    pub(super) fn drain(&mut self, mode: QueueMode) -> Vec<AgentMessage> {
        match mode {
            QueueMode::All => self.messages.drain(..).collect(),
            QueueMode::OneAtATime => self.messages.pop_front().into_iter().collect(),
        }
    }

    pub(super) fn clear(&mut self) {
        self.messages.clear();
    }
}
