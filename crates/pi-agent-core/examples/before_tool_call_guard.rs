//! A `before_tool_call` guard: block dangerous calls before they run. The blocked call gets
//! an error result (the reason, or `Tool execution was blocked`) that the model reads.
//!
//! Run: `cargo run -p pi-agent-core --example before_tool_call_guard`

mod common;

use std::sync::Arc;

use futures::future::BoxFuture;
use pi_agent_core::{
    Agent, AgentEvent, AgentOptions, AgentTool, AgentToolResult, BeforeToolCallResult, ToolError,
    ToolUpdateFn,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Pretends to run a shell command.
struct Shell(Value);

impl AgentTool for Shell {
    fn name(&self) -> &str {
        "bash"
    }
    fn label(&self) -> &str {
        "Shell"
    }
    fn description(&self) -> &str {
        "Run a shell command."
    }
    fn parameters(&self) -> &Value {
        &self.0
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        args: Value,
        _cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            Ok(AgentToolResult::text(
                format!("ran {}", args["command"]),
                None,
            ))
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let stream_fn = common::scripted(vec![
        common::Reply::Call("bash", json!({ "command": "rm -rf /" })),
        common::Reply::Text("Understood, I will not delete anything."),
    ]);
    let agent = Agent::new(AgentOptions::new(stream_fn));
    agent.set_model(common::model());
    agent.set_tools(vec![Arc::new(Shell(json!({
        "type": "object",
        "properties": { "command": { "type": "string" } },
        "required": ["command"]
    })))]);
    agent.update_options(|o| {
        o.before_tool_call = Some(Arc::new(|ctx, _signal| {
            Box::pin(async move {
                let command = ctx.args["command"].as_str().unwrap_or_default();
                if command.contains("rm -rf") {
                    return Ok(Some(BeforeToolCallResult {
                        block: true,
                        reason: Some("Recursive deletion is disabled by this guard.".into()),
                        ..Default::default()
                    }));
                }
                Ok(None)
            })
        }));
    });
    agent.subscribe(|event, _| async move {
        if let AgentEvent::ToolExecutionEnd {
            result, is_error, ..
        } = &*event
        {
            println!("blocked: {is_error}; the model reads: {:?}", result.content);
        }
        Ok(())
    });
    agent.prompt("Clean up the disk").await?;
    Ok(())
}
