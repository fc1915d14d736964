//! Listener failure under load: a run of
//! more than 10,000 events (long streamed texts and thinking, tool calls over three turns)
//! with a listener that fails, by `Err` or by panicking, at one seeded random event.
//!
//! Checked per seed, against a clean run of the same script: the failing delivery stops
//! there (a later listener never sees that event), the run continues with exactly the
//! synthesized failure sequence `message_start`, `message_end` (assistant, `error`, the
//! listener's text), `turn_end`, `agent_end`, `prompt` resolves, no task outlives the run,
//! and the agent runs a next prompt normally.
//!
//! 12 seeds by default; `PI_LISTENER_LOAD_SEEDS=<n>` runs more.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pi_agent_core::{
    Agent, AgentEvent, AgentOptions, AgentTool, AgentToolResult, ExecutionMode, HookError,
    ListenerError, ToolError, ToolUpdateFn,
};
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text,
    faux_thinking, faux_tool_call,
};
use pi_ai::{AssistantContent, Message, StopReason};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// The events the run must at least have.
const LOAD: usize = 10_000;

/// A tool answering at once.
struct Quick;

impl AgentTool for Quick {
    fn name(&self) -> &str {
        "quick"
    }
    fn label(&self) -> &str {
        "quick"
    }
    fn description(&self) -> &str {
        "answers at once"
    }
    fn parameters(&self) -> &Value {
        static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type": "object"}))
    }
    fn execution_mode(&self) -> ExecutionMode {
        ExecutionMode::Sequential
    }
    fn execute<'a>(
        &'a self,
        tool_call_id: &'a str,
        _args: Value,
        _cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> futures::future::BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move { Ok(AgentToolResult::text(format!("{tool_call_id} ok"), None)) })
    }
}

fn reply(content: Vec<AssistantContent>, stop: StopReason) -> FauxStep {
    faux_assistant_message(
        content,
        FauxMessageOptions {
            stop_reason: Some(stop),
            ..Default::default()
        },
    )
    .into()
}

/// Three turns: 4-character chunks of long texts and thinking, and tool calls.
fn script() -> Vec<FauxStep> {
    let calls = |turn: usize| -> Vec<AssistantContent> {
        (0..5)
            .map(|c| faux_tool_call("quick", Map::new(), Some(&format!("t{turn}c{c}"))))
            .collect()
    };
    let mut first = vec![faux_text("abcd".repeat(3_000))];
    first.extend(calls(1));
    let mut second = vec![
        faux_thinking("hmm ".repeat(2_000)),
        faux_text("efgh".repeat(1_000)),
    ];
    second.extend(calls(2));
    vec![
        reply(first, StopReason::ToolUse),
        reply(second, StopReason::ToolUse),
        reply(vec![faux_text("done".repeat(4_000))], StopReason::Stop),
    ]
}

fn label(e: &AgentEvent) -> String {
    match e {
        AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
            format!("{}:{}", e.kind(), message.role())
        }
        AgentEvent::ToolExecutionStart { tool_call_id, .. }
        | AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
            format!("{}:{}", e.kind(), tool_call_id)
        }
        _ => e.kind().to_owned(),
    }
}

type Labels = Arc<Mutex<Vec<String>>>;

fn recorder(agent: &Agent) -> Labels {
    let labels: Labels = Arc::default();
    let l = Arc::clone(&labels);
    agent.subscribe(move |e, _| {
        l.lock().unwrap().push(label(&e));
        async { Ok::<(), ListenerError>(()) }
    });
    labels
}

fn agent_on(faux: &FauxProvider) -> Agent {
    let f = faux.clone();
    let agent = Agent::new(AgentOptions::new(Arc::new(move |m, c, o| {
        f.stream(&m, &c, o)
    })));
    agent.set_model(faux.model());
    agent.set_tools(vec![Arc::new(Quick)]);
    agent
}

fn faux() -> FauxProvider {
    FauxProvider::new(FauxOptions {
        token_size: Some((1, 1)),
        ..Default::default()
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

/// The labels of a clean run of the script.
fn clean_run() -> Vec<String> {
    runtime().block_on(async {
        let faux = faux();
        faux.set_responses(script());
        let agent = agent_on(&faux);
        let labels = recorder(&agent);
        agent.prompt("go").await.unwrap();
        labels.lock().unwrap().clone()
    })
}

async fn failing_run(seed: u64, clean: &[String]) -> Result<(), String> {
    // splitmix64 of the seed picks the event and the way of failing.
    let mut z = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    let at = (z >> 1) as usize % clean.len();
    let panics = z & 1 == 1;
    let text = format!("listener failed at event {at}");

    let faux = faux();
    faux.set_responses(script());
    let agent = agent_on(&faux);
    let before = recorder(&agent);
    let seen = AtomicUsize::new(0);
    let failed = Arc::new(AtomicBool::new(false));
    let (f, t) = (Arc::clone(&failed), text.clone());
    agent.subscribe(move |_, _| {
        let fail = seen.fetch_add(1, Ordering::SeqCst) == at && !f.swap(true, Ordering::SeqCst);
        if fail && panics {
            panic!("{t}");
        }
        futures::future::ready(if fail {
            Err(HookError::new(t.clone()))
        } else {
            Ok(())
        })
    });
    let after = recorder(&agent);
    let how = if panics { "panic" } else { "Err" };
    agent
        .prompt("go")
        .await
        .map_err(|e| format!("{how} at {at} ({}): prompt failed: {e}", clean[at]))?;

    let failure = [
        "message_start:assistant",
        "message_end:assistant",
        "turn_end",
        "agent_end",
    ];
    let expect_after: Vec<&str> = clean[..at]
        .iter()
        .map(String::as_str)
        .chain(failure)
        .collect();
    let expect_before: Vec<&str> = clean[..=at]
        .iter()
        .map(String::as_str)
        .chain(failure)
        .collect();
    let (before, after) = (
        before.lock().unwrap().clone(),
        after.lock().unwrap().clone(),
    );
    if after != expect_after || before != expect_before {
        let tail = |v: &[String]| v[v.len().saturating_sub(6)..].to_vec();
        return Err(format!(
            "{how} at {at} ({}): later listener saw {} events ending {:?}, earlier {} ending {:?}",
            clean[at],
            after.len(),
            tail(&after),
            before.len(),
            tail(&before)
        ));
    }
    let Some(last) = agent
        .messages()
        .last()
        .and_then(|m| m.as_assistant())
        .cloned()
    else {
        return Err(format!("{how} at {at}: no failure message"));
    };
    if last.stop_reason != StopReason::Error
        || last.error_message.as_deref() != Some(text.as_str())
        || last.content != vec![AssistantContent::text("")]
        || agent.error_message().as_deref() != Some(text.as_str())
    {
        return Err(format!("{how} at {at}: failure message {last:?}"));
    }
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let alive = tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks();
    if alive != 0 {
        return Err(format!("{how} at {at}: {alive} tasks outlived the run"));
    }
    // The agent is usable again.
    faux.set_responses(vec![reply(vec![faux_text("again")], StopReason::Stop)]);
    agent
        .prompt("again")
        .await
        .map_err(|e| format!("{how} at {at}: next prompt: {e}"))?;
    match agent.messages().last().and_then(|m| m.to_llm()) {
        Some(Message::Assistant(a)) if a.stop_reason == StopReason::Stop => Ok(()),
        other => Err(format!("{how} at {at}: next run ended {other:?}")),
    }
}

#[test]
fn a_listener_failing_at_a_random_event_of_a_long_run_fails_the_run_there() {
    let clean = clean_run();
    assert!(clean.len() > LOAD, "only {} events", clean.len());
    assert_eq!(clean.last().map(String::as_str), Some("agent_end"));
    let seeds = std::env::var("PI_LISTENER_LOAD_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12u64);
    for seed in 1..=seeds {
        if let Err(e) = runtime().block_on(failing_run(seed, &clean)) {
            panic!("seed {seed}: {e}");
        }
    }
}
