//! Aborting a run: `abort()` cancels the run's token. Finished tool calls keep their
//! results, the loop runs one more turn whose stream function receives the already-cancelled
//! token (no request is sent) and the transcript ends with an `aborted` assistant message.
//!
//! Run: `cargo run -p pi-agent-core --example abort`

mod common;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use pi_agent_core::{
    Agent, AgentOptions, AgentTool, AgentToolResult, StreamingMessage, ToolError, ToolUpdateFn,
};
use pi_ai::Message;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Sleeps until done or cancelled.
struct Sleep(Value);

impl AgentTool for Sleep {
    fn name(&self) -> &str {
        "sleep"
    }
    fn label(&self) -> &str {
        "Sleep"
    }
    fn description(&self) -> &str {
        "Wait a while."
    }
    fn parameters(&self) -> &Value {
        &self.0
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        _args: Value,
        cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(60)) => Ok(AgentToolResult::text("rested", None)),
                _ = cancel.cancelled() => Err(ToolError::new("Sleep interrupted")),
            }
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let stream_fn = common::scripted(vec![common::Reply::Call("sleep", json!({}))]);
    let agent = Agent::new(AgentOptions::new(stream_fn));
    agent.set_model(common::model());
    agent.set_tools(vec![Arc::new(Sleep(json!({ "type": "object" })))]);

    let run = tokio::spawn({
        let agent = agent.clone();
        async move { agent.prompt("Take a nap").await }
    });
    // Wait until the tool is running, then abort.
    while agent.pending_tool_calls().is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    agent.abort();
    run.await??;

    for m in agent.messages() {
        match m.to_llm() {
            Some(Message::ToolResult(r)) => println!("toolResult: {:?}", r.content),
            Some(Message::Assistant(a)) => {
                println!(
                    "assistant: stopReason={} error={:?}",
                    a.stop_reason.as_str(),
                    a.error_message
                )
            }
            _ => println!("{}", m.role()),
        }
    }
    assert!(!matches!(
        agent.streaming_message(),
        Some(StreamingMessage::Partial(_))
    ));
    Ok(())
}
