//! What `pi.get_all_tools()` reports of each tool in the session's registry.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession.getAllTools`: `{name, description,
//! parameters, promptGuidelines, sourceInfo}` for every registry tool, in registry order
//! (the base tools, then the extensions' — an extension tool named like a base tool takes its
//! place).

use serde_json::Value;

/// Where a registry tool comes from (pi's `sourceInfo.source`: `builtin`, `sdk`, or the
/// registering extension).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolSource {
    /// One of pi's seven built-in tools (`read`, `bash`, `edit`, `write`, `grep`, `find`,
    /// `ls`), as the session was given it.
    Builtin,
    /// Another tool the session was built with (pi's SDK `customTools`).
    Sdk,
    /// A tool an extension registered.
    Extension {
        /// The extension's path.
        path: String,
    },
}

/// One tool of the registry (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolInfo {
    /// The name the model calls.
    pub name: String,
    /// The description sent to the model.
    pub description: String,
    /// The JSON Schema of the arguments.
    pub parameters: Value,
    /// [`pi_agent_core::AgentTool::prompt_guidelines`].
    pub prompt_guidelines: Vec<String>,
    /// Where it comes from.
    pub source: ToolSource,
}
