//! Subscribing to an agent: every event is delivered to the listeners in subscription order,
//! each awaited, after the agent's state was updated. Prints the events as pi's JSON lines.
//!
//! Run: `cargo run -p pi-agent-core --example subscribe`

mod common;

use pi_agent_core::{Agent, AgentEvent, AgentOptions, ListenerError};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent = Agent::new(AgentOptions::new(common::scripted(vec![
        common::Reply::Text("Hello! How can I help?"),
    ])));
    agent.set_model(common::model());

    // Listener 1: print each event as JSON (numbers spelled as JavaScript does).
    agent.subscribe(|event, _signal| async move {
        let line =
            pi_ai::json::to_string(&*event).map_err(|e| ListenerError::new(e.to_string()))?;
        println!("{line}");
        Ok(())
    });

    // Listener 2: runs after listener 1 finished with the same event; the state already
    // contains the message of a `message_end`.
    let handle = agent.clone();
    let sub = agent.subscribe(move |event, _signal| {
        if let AgentEvent::MessageEnd { message } = &*event {
            let n = handle.with_state(|s| s.messages.len());
            eprintln!("[{} message stored; transcript has {n}]", message.role());
        }
        async { Ok(()) }
    });

    agent.prompt("Hi").await?;
    sub.unsubscribe();
    Ok(())
}
