//! # pi-agent-core
//!
//! The agent loop — the Rust port of pi-agent-core 0.85.1: turns, tool execution (sequential
//! and parallel), hooks, steering/follow-up queues, abort, and the ten [`AgentEvent`]s
//! delivered to listeners awaited, in subscription order, after the agent state is updated.
//!
//! Layout: [`event`] (the ten events and their JSON), [`listeners`] (awaited in-order
//! delivery), [`agent_loop`] (the low-level loop, its config and hooks), [`agent`] (the
//! stateful [`Agent`]), [`tool`] and [`message`] (the shared contracts), [`error`].
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod agent;
pub mod agent_loop;
pub mod error;
pub mod event;
pub mod listeners;
pub mod message;
pub mod tool;

pub use agent::{Agent, AgentOptions, AgentState, PromptInput, QueueMode, StreamingMessage};
pub use agent_loop::{
    AfterToolCallContext, AfterToolCallResult, AgentContext, AgentLoopConfig,
    BeforeToolCallContext, BeforeToolCallResult, EventSink, StreamFn, TurnContext, TurnUpdate,
};
pub use error::{AgentError, HookError, ListenerError};
pub use event::AgentEvent;
pub use listeners::{Listener, Subscription};
pub use message::AgentMessage;
pub use tool::{AgentTool, AgentToolResult, ExecutionMode, ToolError, ToolUpdateFn};
