//! # pi-agent-core
//!
//! The agent loop — the Rust port of pi-agent-core 0.85.1: turns, tool execution (sequential
//! and parallel), hooks, steering/follow-up queues, abort, and the ten `AgentEvent`s delivered
//! to listeners awaited, in subscription order, after the agent state is updated.
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod message;
pub mod tool;

pub use message::AgentMessage;
pub use tool::{AgentTool, AgentToolResult, ExecutionMode, ToolError, ToolUpdateFn};
