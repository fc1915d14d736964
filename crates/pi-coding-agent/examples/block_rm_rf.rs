//! An extension that blocks recursive deletions in `bash` (after pi's `guard-bash.ts` example),
//! run on a scripted session: the model asks for `rm -rf`, the tool never runs, its result
//! is the block reason as an error, and `terminate: true` ends the run after that batch.
//!
//! `cargo run -p pi-coding-agent --example block_rm_rf`

use std::sync::Arc;

use pi_agent_core::AgentMessage;
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxOptions, FauxProvider, faux_assistant_message, faux_tool_call,
};
use pi_ai::{StopReason, UserContent};
use pi_coding_agent::extensions::events::{ToolCallEvent, ToolCallResult};
use pi_coding_agent::extensions::{
    Extension, ExtensionApi, ExtensionHooks, ExtensionRunner, HandlerError,
};
use pi_coding_agent::session::{AgentSession, PromptOptions};
use pi_coding_agent::tools::bash::{BashTool, BashToolOptions};
use serde_json::json;

/// Commands this guard refuses (substring match, as pi's example does).
const DANGEROUS: [&str; 4] = ["rm -rf", "mkfs.", "dd if=", "> /dev/sda"];

/// Blocks dangerous `bash` commands and stops the run after the batch.
struct GuardBash;

impl Extension for GuardBash {
    fn path(&self) -> &str {
        "examples/guard-bash"
    }

    fn register(&self, pi: &mut ExtensionApi<'_>) -> Result<(), HandlerError> {
        pi.on::<ToolCallEvent, _>(|event, _ctx| {
            Box::pin(async move {
                if event.tool_name != "bash" {
                    return Ok(None);
                }
                let command = event.input["command"].as_str().unwrap_or_default();
                if DANGEROUS.iter().any(|d| command.contains(d)) {
                    return Ok(Some(ToolCallResult {
                        block: true,
                        reason: Some("Dangerous command has been blocked.".into()),
                        terminate: Some(true),
                    }));
                }
                Ok(None)
            })
        });
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile_dir()?;
    let faux = FauxProvider::new(FauxOptions::default());
    let args = json!({"command": "rm -rf ./build"});
    faux.set_responses(vec![
        faux_assistant_message(
            vec![faux_tool_call(
                "bash",
                args.as_object().cloned().unwrap_or_default(),
                Some("call_1"),
            )],
            FauxMessageOptions {
                stop_reason: Some(StopReason::ToolUse),
                ..Default::default()
            },
        )
        .into(),
    ]);

    let runner = ExtensionRunner::builder(&scratch)
        .extension(GuardBash)
        .build();
    let hooks = ExtensionHooks::new(runner.clone());
    let f = faux.clone();
    let session = AgentSession::builder()
        .model(faux.model())
        .tools(vec![Arc::new(BashTool::new(
            &scratch,
            BashToolOptions::default(),
        ))])
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .hooks(hooks.clone())
        .build()?;
    hooks.attach(&session);
    session
        .prompt("clean the build directory", PromptOptions::default())
        .await?;

    for m in session.messages() {
        if let AgentMessage::ToolResult(t) = m {
            for c in &t.content {
                if let UserContent::Text(text) = c {
                    println!("bash → {} (isError: {})", text.text, t.is_error);
                }
            }
        }
    }
    println!(
        "model calls: {} (the run ended after the blocked batch)",
        faux.call_count()
    );
    std::fs::remove_dir_all(&scratch)?;
    Ok(())
}

/// A fresh scratch directory for the bash tool's working directory.
fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("pi-example-guard-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
