//! An extension that rewrites input before the model sees it (after pi's
//! `quick-input.ts`): `?quick <text>` becomes `Short answer: <text>`, and `ping` is answered
//! by the extension itself without calling the model.
//!
//! `cargo run -p pi-coding-agent --example rewrite_input`

use std::sync::Arc;

use pi_ai::providers::faux::{
    FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text,
};
use pi_coding_agent::extensions::events::{InputEvent, InputResult, InputSource};
use pi_coding_agent::extensions::{ExtensionHooks, ExtensionRunner, FnExtension, NotifyLevel};
use pi_coding_agent::session::{AgentSession, PromptOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runner = ExtensionRunner::builder(".")
        .extension(FnExtension::new("examples/quick-input", |pi| {
            pi.on::<InputEvent, _>(|event, ctx| {
                Box::pin(async move {
                    // Messages injected by extensions pass through untouched.
                    if event.source == InputSource::Extension {
                        return Ok(Some(InputResult::Continue));
                    }
                    if let Some(rest) = event.text.strip_prefix("?quick ") {
                        return Ok(Some(InputResult::Transform {
                            text: format!("Short answer: {rest}"),
                            images: None,
                        }));
                    }
                    if event.text == "ping" {
                        ctx.ui().notify("pong", NotifyLevel::Info);
                        return Ok(Some(InputResult::Handled));
                    }
                    Ok(None)
                })
            });
            Ok(())
        }))
        .build();

    // The scripted model echoes the prompt it received.
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![FauxStep::factory(|ctx, _, _, _| {
        let prompt = ctx
            .messages
            .last()
            .and_then(|m| serde_json::to_value(m).ok())
            .and_then(|v| v["content"][0]["text"].as_str().map(str::to_owned))
            .unwrap_or_default();
        Ok(faux_assistant_message(
            vec![faux_text(format!("model got: {prompt}"))],
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

    session.prompt("ping", PromptOptions::default()).await?;
    println!("after `ping`: {} model call(s)", faux.call_count());
    session
        .prompt("?quick what is a monad", PromptOptions::default())
        .await?;
    let reply = session
        .messages()
        .last()
        .and_then(|m| serde_json::to_value(m).ok())
        .and_then(|v| v["content"][0]["text"].as_str().map(str::to_owned))
        .unwrap_or_default();
    println!("{reply}");
    Ok(())
}
