//! An `AgentSession` on the scripted (faux) provider, printing its events as `pi --mode json`
//! writes them: one JSON line per event, until `agent_settled`.
//!
//! The script: a transient failure (auto-retried after 10 ms), then a tool call to a tiny
//! `upper` tool, then the final answer.
//!
//! Run: `cargo run -p pi-coding-agent --example session_events`

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::StopReason;
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxOptions, FauxProvider, faux_assistant_message, faux_text,
    faux_tool_call,
};
use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::session::{AgentSession, PromptOptions};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// Upper-cases its `text` argument.
struct Upper;

impl AgentTool for Upper {
    fn name(&self) -> &str {
        "upper"
    }
    fn label(&self) -> &str {
        "Upper"
    }
    fn description(&self) -> &str {
        "Upper-cases text"
    }
    fn parameters(&self) -> &Value {
        static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type":"object","properties":{"text":{"type":"string"}}}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        args: Value,
        _cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let text = args["text"].as_str().unwrap_or_default().to_uppercase();
            Ok(AgentToolResult::text(text, None))
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let faux = FauxProvider::new(FauxOptions::default());
    let mut args = Map::new();
    args.insert("text".into(), "hello".into());
    faux.set_responses(vec![
        faux_assistant_message(
            vec![],
            FauxMessageOptions {
                stop_reason: Some(StopReason::Error),
                error_message: Some("503 service unavailable".into()),
                ..Default::default()
            },
        )
        .into(),
        faux_assistant_message(
            vec![faux_tool_call("upper", args, Some("call_1"))],
            FauxMessageOptions {
                stop_reason: Some(StopReason::ToolUse),
                ..Default::default()
            },
        )
        .into(),
        faux_assistant_message(vec![faux_text("It says HELLO.")], Default::default()).into(),
    ]);

    let mut settings = Map::new();
    settings.insert("retry".into(), json!({"baseDelayMs": 10}));
    let stream = faux.clone();
    let session = AgentSession::builder()
        .model(faux.model())
        .settings(Arc::new(Mutex::new(SettingsManager::in_memory(settings))))
        .tools(vec![Arc::new(Upper)])
        .system_prompt("You are a demo.")
        .stream_fn(Arc::new(move |m, c, o| stream.stream(&m, &c, o)))
        .build()?;
    session.subscribe(|event| {
        println!("{}", event.to_json_line());
        Ok(())
    });
    session
        .prompt(
            "Upper-case 'hello' with the tool.",
            PromptOptions::default(),
        )
        .await?;
    Ok(())
}
