//! Streaming a reply and watching its events: the scripted faux provider is registered in the
//! api registry, a request goes through `stream_simple` as it would to a real provider, and
//! every `AssistantMessageEvent` is printed as it arrives (text deltas as they stream), then
//! the final message as pi's JSON.
//!
//! Run: `cargo run -p pi-ai --example stream_events` (offline; no key needed).

use std::sync::Arc;

use pi_ai::providers::faux::{
    FauxMessageOptions, FauxProvider, faux_assistant_message, faux_text, faux_thinking,
};
use pi_ai::providers::registry::{register_api_provider, stream_simple};
use pi_ai::{AssistantMessageEvent, Context, Message, StreamOptions, UserMessage};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A provider that answers with scripted messages, streamed in small chunks.
    let faux = Arc::new(FauxProvider::default());
    faux.set_responses(vec![
        faux_assistant_message(
            vec![
                faux_thinking("The user greets me; answer briefly."),
                faux_text("Hello! I am a scripted reply, streamed a few characters at a time."),
            ],
            FauxMessageOptions::default(),
        )
        .into(),
    ]);
    register_api_provider(faux.clone());

    let context = Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![Message::User(UserMessage::text("Hi there"))],
        tools: None,
    };
    let mut stream = stream_simple(&faux.model(), &context, StreamOptions::default())?;

    while let Some(event) = stream.next_event().await {
        match &event {
            AssistantMessageEvent::TextDelta { delta, .. } => println!("text_delta     {delta:?}"),
            AssistantMessageEvent::ThinkingDelta { delta, .. } => {
                println!("thinking_delta {delta:?}")
            }
            AssistantMessageEvent::Done { reason, message } => {
                println!("done           stopReason {reason:?}");
                println!("{}", pi_ai::json::to_string(message)?);
            }
            AssistantMessageEvent::Error { error, .. } => {
                println!("error          {:?}", error.error_message);
            }
            other => println!("{}", other.kind()),
        }
    }
    Ok(())
}
