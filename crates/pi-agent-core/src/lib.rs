//! # pi-agent-core
//!
//! The agent loop — the Rust port of pi-agent-core 0.85.1: turns, tool execution (sequential
//! and parallel), hooks, steering/follow-up queues, abort, and the ten [`AgentEvent`]s
//! delivered to listeners awaited, in subscription order, after the agent state is updated.
//!
//! Layout: [`event`] (the ten events and their JSON), [`listeners`] (awaited in-order
//! delivery), [`agent_loop`] (the low-level loop, its config and hooks), [`agent`] (the
//! stateful [`Agent`]), [`tool`] and [`message`] (the shared contracts), [`error`].
//!
//! Deliberate differences from pi (same observable event order and payloads):
//! - listeners receive `Arc<AgentEvent>` (one allocation per event, whatever the number of
//!   listeners) and return `Result`; a panic counts as a failure;
//! - `message_update.message` and `Agent::streaming_message` share the provider's live
//!   [`pi_ai::PartialMessage`] instead of a shallow copy;
//! - `convert_to_llm` and the steering/follow-up polls are synchronous closures;
//! - tool-update deliveries are started as tokio tasks (pi runs the first listener inside the
//!   callback); they still overlap, are dropped after `execute` returned, and are joined before
//!   `after_tool_call`;
//! - pi's in-place mutation of a message by a `message_end` handler is
//!   [`Agent::replace_ending_message`]; `before_tool_call`'s in-place mutation of `args` is
//!   [`BeforeToolCallResult::args`];
//! - `transport` is not forwarded (pi-ai's `StreamOptions` has no such field).
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod agent;
pub mod agent_loop;
pub mod error;
pub mod event;
pub mod listeners;
pub mod message;
mod sync;
pub mod tool;

pub use agent::{
    Agent, AgentOptions, AgentState, PromptInput, QueueMode, StreamingMessage, WeakAgent,
};
pub use agent_loop::{
    AfterToolCallContext, AfterToolCallResult, AgentContext, AgentLoopConfig,
    BeforeToolCallContext, BeforeToolCallResult, EventSink, StreamFn, TurnContext, TurnUpdate,
};
pub use error::{AgentError, HookError, ListenerError};
pub use event::AgentEvent;
pub use listeners::{Listener, Subscription};
pub use message::AgentMessage;
pub use tool::{AgentTool, AgentToolResult, ExecutionMode, ToolError, ToolUpdateFn};
