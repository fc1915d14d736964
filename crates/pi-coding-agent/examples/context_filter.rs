//! An extension that filters the model's context (after pi's `context-filter.ts` example): custom
//! messages of type `debug` stay in the session but are never sent to the model.
//!
//! `cargo run -p pi-coding-agent --example context_filter`

use std::sync::{Arc, Mutex};

use pi_ai::providers::faux::{
    FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text,
};
use pi_coding_agent::extensions::events::{ContextEvent, ContextResult};
use pi_coding_agent::extensions::{ExtensionHooks, ExtensionRunner, FnExtension};
use pi_coding_agent::session::{
    AgentSession, CustomMessageOptions, CustomMessageSpec, PromptOptions,
};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runner = ExtensionRunner::builder(".")
        .extension(FnExtension::new("examples/context-filter", |pi| {
            pi.on::<ContextEvent, _>(|event, _ctx| {
                Box::pin(async move {
                    let messages = event
                        .messages
                        .iter()
                        .filter(|m| {
                            let pi_agent_core::AgentMessage::Custom(c) = m else {
                                return true;
                            };
                            c.get("customType").and_then(|t| t.as_str()) != Some("debug")
                        })
                        .cloned()
                        .collect();
                    Ok(Some(ContextResult { messages }))
                })
            });
            Ok(())
        }))
        .build();

    // The scripted model reports how many messages it was sent.
    let sent = Arc::new(Mutex::new(Vec::new()));
    let s = sent.clone();
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![FauxStep::factory(move |ctx, _, _, _| {
        if let Ok(mut s) = s.lock() {
            s.push(ctx.messages.len());
        }
        Ok(faux_assistant_message(
            vec![faux_text("ok")],
            Default::default(),
        ))
    })]);

    let hooks = ExtensionHooks::new(runner);
    let f = faux.clone();
    let session = AgentSession::builder()
        .model(faux.model())
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .hooks(hooks.clone())
        .build()?;
    hooks.attach(&session);

    session
        .send_custom_message(
            CustomMessageSpec {
                custom_type: "debug".into(),
                content: json!("verbose internal state"),
                display: false,
                details: None,
            },
            CustomMessageOptions::default(),
        )
        .await?;
    session.prompt("hello", PromptOptions::default()).await?;

    println!("messages in the session: {}", session.messages().len());
    println!(
        "messages sent to the model: {:?}",
        sent.lock().map(|s| s.clone()).unwrap_or_default()
    );
    Ok(())
}
