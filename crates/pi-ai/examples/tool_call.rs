//! A tool-call round trip: the model asks for a tool, the caller validates the arguments
//! against the tool's JSON schema, runs it, appends the `toolResult` to the context and asks
//! again; the second reply uses the result. The replies come from the scripted faux provider,
//! whose second reply is computed from the context it receives.
//!
//! Run: `cargo run -p pi-ai --example tool_call` (offline; no key needed).

use std::sync::Arc;

use pi_ai::providers::faux::{
    FauxMessageOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text, faux_tool_call,
};
use pi_ai::providers::registry::{register_api_provider, stream_simple};
use pi_ai::validation::validate_tool_call;
use pi_ai::{
    Context, Message, StopReason, StreamOptions, TextContent, Tool, ToolResultMessage, UserContent,
    UserMessage,
};
use serde_json::{Value, json};

/// The tool the example offers: adds two numbers.
fn add_tool() -> Tool {
    Tool {
        name: "add".into(),
        description: "Adds two numbers.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"]
        }),
        constrained_sampling: None,
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let faux = Arc::new(FauxProvider::default());
    let Value::Object(args) = json!({"a": 2, "b": "40"}) else {
        unreachable!("a JSON object literal")
    };
    faux.set_responses(vec![
        // Turn 1: the model calls `add` (with a string the schema coerces to a number).
        faux_assistant_message(
            vec![faux_tool_call("add", args, Some("call_1"))],
            FauxMessageOptions {
                stop_reason: Some(StopReason::ToolUse),
                ..Default::default()
            },
        )
        .into(),
        // Turn 2: the reply quotes the tool result it was sent.
        FauxStep::factory(|context, _options, _state, _model| {
            let result = context
                .messages
                .iter()
                .rev()
                .find_map(|m| match m {
                    Message::ToolResult(r) => Some(r.content.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            let text = match result.first() {
                Some(UserContent::Text(t)) => format!("The sum is {}.", t.text),
                _ => "I got no result.".to_owned(),
            };
            Ok(faux_assistant_message(
                vec![faux_text(text)],
                FauxMessageOptions::default(),
            ))
        }),
    ]);
    register_api_provider(faux.clone());

    let mut context = Context {
        system_prompt: None,
        messages: vec![Message::User(UserMessage::text("What is 2 + 40?"))],
        tools: Some(vec![add_tool()]),
    };
    loop {
        let reply = stream_simple(&faux.model(), &context, StreamOptions::default())?
            .result()
            .await;
        println!("assistant ({:?}): {}", reply.stop_reason, reply.text());
        let calls: Vec<_> = reply.tool_calls().cloned().collect();
        context.messages.push(Message::Assistant(reply));
        if calls.is_empty() {
            break;
        }
        for call in calls {
            // pi's validation: unknown tools and schema mismatches become error results.
            let (text, is_error) = match validate_tool_call(&add_tool_list(), &call) {
                Ok(args) => {
                    let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                    (sum.to_string(), false)
                }
                Err(e) => (e.to_string(), true),
            };
            println!("tool {} {:?} -> {text}", call.name, call.arguments);
            context
                .messages
                .push(Message::ToolResult(ToolResultMessage {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    content: vec![UserContent::Text(TextContent::new(text))],
                    is_error,
                    timestamp: pi_ai::now_ms(),
                    ..Default::default()
                }));
        }
    }
    Ok(())
}

fn add_tool_list() -> Vec<Tool> {
    vec![add_tool()]
}
