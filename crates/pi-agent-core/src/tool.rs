//! The tool trait the agent loop executes.
//!
//! Mirrors pi-agent-core 0.85.1 `AgentTool` and `AgentToolResult`.

use std::sync::Arc;

use futures::future::BoxFuture;
use pi_ai::{Tool, Usage, UserContent};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// How a tool's calls may run within one batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionMode {
    /// May run concurrently with the batch's other calls (pi's default).
    #[default]
    Parallel,
    /// Makes the whole batch sequential.
    Sequential,
}

/// What a tool returns: `{content, details, usage?, addedToolNames?, terminate?}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentToolResult {
    /// Text/image blocks for the model.
    pub content: Vec<UserContent>,
    /// Structured data for UIs (`None` = absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Usage the tool incurred.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Tools this result made available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_tool_names: Option<Vec<String>>,
    /// Ask the loop to stop after this batch (only when every result of the batch says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminate: Option<bool>,
}

impl AgentToolResult {
    /// A result with one text block and the given details.
    pub fn text(text: impl Into<String>, details: Option<Value>) -> Self {
        AgentToolResult {
            content: vec![UserContent::text(text)],
            details,
            ..Default::default()
        }
    }
}

/// A tool failure; its text becomes the error result's content (pi: a thrown `Error`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    /// A failure with this message.
    pub fn new(msg: impl Into<String>) -> Self {
        ToolError(msg.into())
    }
}

/// `onUpdate(partialResult)`: streams a partial result while the tool runs. Calls after
/// `execute` returned are dropped by the loop.
pub type ToolUpdateFn = Arc<dyn Fn(AgentToolResult) + Send + Sync>;

/// A tool the agent can execute.
///
/// `execute` failures (an `Err` or a panic) become error results; they never take the
/// process down.
pub trait AgentTool: Send + Sync {
    /// Tool name as the model calls it.
    fn name(&self) -> &str;
    /// Human-readable label for UIs.
    fn label(&self) -> &str;
    /// Description for the model.
    fn description(&self) -> &str;
    /// JSON Schema of the arguments object.
    fn parameters(&self) -> &Value;
    /// Parallel (default) or sequential.
    fn execution_mode(&self) -> ExecutionMode {
        ExecutionMode::Parallel
    }
    /// Rewrites raw arguments before validation (e.g. a legacy argument shape).
    fn prepare_arguments(&self, raw: Value) -> Value {
        raw
    }
    /// The one line a coding agent's default system prompt lists for this tool
    /// (`- <name>: <snippet>`); `None` (the default) leaves the tool out of that list. The loop
    /// never reads it. Mirrors pi-coding-agent 0.85.0 `ToolDefinition.promptSnippet`.
    fn prompt_snippet(&self) -> Option<&str> {
        None
    }
    /// Guidelines a coding agent's default system prompt adds (one bullet each, in tool order,
    /// duplicates dropped) while this tool is active; empty by default. The loop never reads
    /// them. Mirrors pi-coding-agent 0.85.0 `ToolDefinition.promptGuidelines`.
    fn prompt_guidelines(&self) -> Vec<String> {
        Vec::new()
    }
    /// Runs the tool with validated `args`.
    fn execute<'a>(
        &'a self,
        tool_call_id: &'a str,
        args: Value,
        cancel: CancellationToken,
        on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>>;

    /// The pi-ai tool definition sent to the model.
    fn definition(&self) -> Tool {
        Tool {
            name: self.name().to_owned(),
            description: self.description().to_owned(),
            parameters: self.parameters().clone(),
            constrained_sampling: None,
        }
    }
}
