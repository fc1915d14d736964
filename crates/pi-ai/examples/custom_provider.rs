//! A custom provider registered at run time: an [`ApiProvider`] for a new api id
//! (`echo-api`) that answers every request by echoing the last user message, built on
//! pi-ai's event channel. Once registered, models with `api: "echo-api"` stream through
//! `stream_simple` like any built-in wire API; unregistering it makes the same call fail with
//! pi's `No API provider registered for api: echo-api`.
//!
//! Run: `cargo run -p pi-ai --example custom_provider` (offline).

use std::sync::Arc;

use pi_ai::providers::registry::{
    ApiProvider, register_api_provider, stream_simple, unregister_api,
};
use pi_ai::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream,
    Context, Message, Model, PartialMessage, StopReason, StreamOptions, TextContent, UserContent,
    UserMessage, event_channel,
};

/// Echoes the last user message back, one word per `text_delta`.
struct Echo;

impl ApiProvider for Echo {
    fn api(&self) -> &str {
        "echo-api"
    }

    fn stream(
        &self,
        model: &Model,
        context: &Context,
        _options: StreamOptions,
    ) -> AssistantMessageEventStream {
        let said = context
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::User(u) => Some(
                    u.content
                        .to_blocks()
                        .iter()
                        .filter_map(|c| match c {
                            UserContent::Text(t) => Some(t.text.clone()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                _ => None,
            })
            .unwrap_or_default();
        let partial = PartialMessage::new(AssistantMessage::empty(
            &model.api,
            &model.provider,
            &model.id,
        ));
        let (mut sink, stream) = event_channel(None);
        tokio::spawn(async move {
            // The event protocol: start, the block's start/deltas/end, then done.
            sink.push(AssistantMessageEvent::Start {
                partial: PartialMessage::new(partial.snapshot()),
            })
            .await;
            partial.update(|m| {
                m.content
                    .push(AssistantContent::Text(TextContent::new(String::new())))
            });
            sink.push(AssistantMessageEvent::TextStart {
                content_index: 0,
                partial: partial.clone(),
            })
            .await;
            for (i, word) in format!("You said: {said}").split(' ').enumerate() {
                let delta = if i == 0 {
                    word.to_owned()
                } else {
                    format!(" {word}")
                };
                partial.update(|m| {
                    if let Some(AssistantContent::Text(t)) = m.content.first_mut() {
                        t.text.push_str(&delta);
                    }
                });
                sink.push(AssistantMessageEvent::TextDelta {
                    content_index: 0,
                    delta,
                    partial: partial.clone(),
                })
                .await;
            }
            let content = partial.read().text();
            sink.push(AssistantMessageEvent::TextEnd {
                content_index: 0,
                content,
                partial: partial.clone(),
            })
            .await;
            let message = partial.update(|m| {
                m.stop_reason = StopReason::Stop;
                m.clone()
            });
            sink.push(AssistantMessageEvent::Done {
                reason: StopReason::Stop,
                message: Box::new(message),
            })
            .await;
        });
        stream
    }

    fn requires_api_key(&self) -> bool {
        false
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = Model {
        id: "echo-1".into(),
        name: "Echo".into(),
        api: "echo-api".into(),
        provider: "echo".into(),
        context_window: 8_192,
        max_tokens: 1_024,
        ..Default::default()
    };
    let context = Context {
        system_prompt: None,
        messages: vec![Message::User(UserMessage::text("hello custom provider"))],
        tools: None,
    };

    register_api_provider(Arc::new(Echo));
    let mut stream = stream_simple(&model, &context, StreamOptions::default())?;
    while let Some(event) = stream.next_event().await {
        if let AssistantMessageEvent::TextDelta { delta, .. } = &event {
            println!("text_delta {delta:?}");
        }
        if let AssistantMessageEvent::Done { message, .. } = &event {
            println!("done: {}", message.text());
        }
    }

    unregister_api("echo-api");
    match stream_simple(&model, &context, StreamOptions::default()) {
        Err(e) => println!("after unregister_api: {e}"),
        Ok(_) => println!("after unregister_api: still registered"),
    }
    Ok(())
}
