//! The built-in tools (pi 0.85.0 `core/tools/`), each an [`pi_agent_core::AgentTool`].

pub mod bash;
pub mod truncate;
