//! A custom tool: JSON-Schema parameters (validated and coerced before `execute`), streamed
//! progress through `on_update`, and a result the model sees on its next turn.
//!
//! Run: `cargo run -p pi-agent-core --example custom_tool`

mod common;

use std::sync::Arc;

use futures::future::BoxFuture;
use pi_agent_core::{
    Agent, AgentEvent, AgentOptions, AgentTool, AgentToolResult, ToolError, ToolUpdateFn,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Adds two numbers.
struct Add {
    schema: Value,
}

impl AgentTool for Add {
    fn name(&self) -> &str {
        "add"
    }
    fn label(&self) -> &str {
        "Add"
    }
    fn description(&self) -> &str {
        "Add two numbers."
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute<'a>(
        &'a self,
        _tool_call_id: &'a str,
        args: Value,
        _cancel: CancellationToken,
        on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            if let Some(update) = &on_update {
                update(AgentToolResult::text("adding…", None));
            }
            let (a, b) = (args["a"].as_f64(), args["b"].as_f64());
            let (Some(a), Some(b)) = (a, b) else {
                return Err(ToolError::new("a and b must be numbers"));
            };
            Ok(AgentToolResult::text(
                format!("{}", a + b),
                Some(json!({ "sum": a + b })),
            ))
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The model passes "b" as a string: validation coerces "2" to 2 as pi does.
    let stream_fn = common::scripted(vec![
        common::Reply::Call("add", json!({ "a": 40, "b": "2" })),
        common::Reply::Text("The sum is 42."),
    ]);
    let agent = Agent::new(AgentOptions::new(stream_fn));
    agent.set_model(common::model());
    agent.set_tools(vec![Arc::new(Add {
        schema: json!({
            "type": "object",
            "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
            "required": ["a", "b"]
        }),
    })]);
    agent.subscribe(|event, _| async move {
        match &*event {
            AgentEvent::ToolExecutionUpdate { partial_result, .. } => {
                println!("progress: {:?}", partial_result.content)
            }
            AgentEvent::ToolExecutionEnd {
                result, is_error, ..
            } => {
                println!("tool result (error: {is_error}): {:?}", result.content)
            }
            AgentEvent::AgentEnd { messages } => {
                println!("run produced {} messages", messages.len())
            }
            _ => {}
        }
        Ok(())
    });
    agent.prompt("What is 40 + 2?").await?;
    Ok(())
}
