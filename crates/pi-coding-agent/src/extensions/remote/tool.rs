//! A tool registered by an extension process: `execute` is the `tool/execute` request,
//! streamed (`tool/update`) and cancellable (`$/cancelRequest`, then a grace period).

use std::sync::Arc;

use futures::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ExecutionMode, ToolError, ToolUpdateFn};
use pi_ai::UserContent;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::connection::{CallError, Connection};

/// pi's text for a tool run that was aborted.
pub const TOOL_ABORTED: &str = "Tool execution aborted";

/// A tool as the handshake registers it.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// The name the model calls.
    pub name: String,
    /// The UI label (default: the name).
    #[serde(default)]
    pub label: Option<String>,
    /// The description for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments.
    #[serde(default = "empty_object_schema")]
    pub parameters: Value,
    /// The system prompt's one-line entry.
    #[serde(default)]
    pub prompt_snippet: Option<String>,
    /// The system prompt's guidelines while active.
    #[serde(default)]
    pub prompt_guidelines: Vec<String>,
    /// `parallel` (default) or `sequential`.
    #[serde(default)]
    pub execution_mode: Option<String>,
}

fn empty_object_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

/// The [`AgentTool`] of a [`ToolSpec`].
pub struct RemoteTool {
    spec: ToolSpec,
    conn: Arc<Connection>,
}

impl RemoteTool {
    /// The tool `spec` served by `conn`.
    pub fn new(spec: ToolSpec, conn: Arc<Connection>) -> Self {
        RemoteTool { spec, conn }
    }
}

/// `{content, details?, isError?}` → a tool result (unknown blocks are skipped, a string
/// `content` is one text block).
pub(crate) fn result_from_wire(v: &Value) -> AgentToolResult {
    let content = match v.get("content") {
        Some(Value::String(s)) => vec![UserContent::text(s.clone())],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| serde_json::from_value::<UserContent>(i.clone()).ok())
            .collect(),
        _ => Vec::new(),
    };
    AgentToolResult {
        content,
        details: v.get("details").filter(|d| !d.is_null()).cloned(),
        usage: None,
        added_tool_names: None,
        terminate: v.get("terminate").and_then(Value::as_bool),
    }
}

/// The text of a result's content (for an error result).
fn text_of(result: &AgentToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            UserContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl AgentTool for RemoteTool {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn label(&self) -> &str {
        self.spec.label.as_deref().unwrap_or(&self.spec.name)
    }

    fn description(&self) -> &str {
        &self.spec.description
    }

    fn parameters(&self) -> &Value {
        &self.spec.parameters
    }

    fn execution_mode(&self) -> ExecutionMode {
        match self.spec.execution_mode.as_deref() {
            Some("sequential") => ExecutionMode::Sequential,
            _ => ExecutionMode::Parallel,
        }
    }

    fn prompt_snippet(&self) -> Option<&str> {
        self.spec.prompt_snippet.as_deref()
    }

    fn prompt_guidelines(&self) -> Vec<String> {
        self.spec.prompt_guidelines.clone()
    }

    fn execute<'a>(
        &'a self,
        tool_call_id: &'a str,
        args: Value,
        cancel: CancellationToken,
        on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let id = self.conn.next_id();
            if let Some(f) = on_update {
                self.conn.set_updates(id, f);
            }
            let params = json!({
                "toolCallId": tool_call_id,
                "toolName": self.spec.name,
                "params": args,
            });
            let grace = self.conn.manifest().cancel_grace;
            let answer = self
                .conn
                .call_with_id(id, "tool/execute", params, None, Some(cancel), grace)
                .await;
            self.conn.clear_updates(id);
            match answer {
                Ok(v) => {
                    let result = result_from_wire(&v);
                    if v.get("isError").and_then(Value::as_bool) == Some(true) {
                        Err(ToolError::new(text_of(&result)))
                    } else {
                        Ok(result)
                    }
                }
                Err(CallError::Remote(message)) => Err(ToolError::new(message)),
                Err(CallError::Aborted) => Err(ToolError::new(TOOL_ABORTED)),
                Err(CallError::Timeout(_)) => Err(ToolError::new(TOOL_ABORTED)),
                Err(CallError::Dead(why)) => Err(ToolError::new(format!(
                    "Extension \"{}\" is not running: {why}",
                    self.conn.path()
                ))),
                Err(CallError::TooLarge(len)) => Err(ToolError::new(format!(
                    "Extension \"{}\": tool call not sent: {len} bytes, more than the {}-byte limit of a protocol record",
                    self.conn.path(),
                    super::framing::MAX_RECORD_BYTES
                ))),
            }
        })
    }
}
