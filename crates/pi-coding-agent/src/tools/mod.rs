//! The built-in tools (pi 0.85.0 `core/tools/`), each an [`pi_agent_core::AgentTool`].

pub mod bash;
pub mod find;
pub mod grep;
pub(crate) mod search;
pub mod truncate;
