//! pi-agent-core used as a library: an `Agent` on the faux provider with a custom tool,
//! checked against the event contract: tool batches (parallel and sequential),
//! listeners awaited in subscription order after the state update, a failing listener,
//! steering and follow-up, abort.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::{
    Agent, AgentEvent, AgentMessage, AgentOptions, AgentTool, AgentToolResult, ExecutionMode,
    ListenerError, ToolError, ToolUpdateFn,
};
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text, faux_tool_call,
};
use pi_ai::{Message, StopReason, UserMessage};
use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

type Log = Arc<Mutex<Vec<String>>>;

/// A tool whose behaviour depends on its `mode` argument: `fast` (one update, then done),
/// `wait` (waits for `gate`), `hang` (waits for the cancel token).
struct Probe {
    schema: Value,
    mode: ExecutionMode,
    gate: Arc<Notify>,
    log: Log,
}

impl Probe {
    fn new(mode: ExecutionMode, log: &Log) -> Arc<Self> {
        Arc::new(Probe {
            schema: json!({"type": "object", "properties": {"mode": {"type": "string"}}, "required": ["mode"]}),
            mode,
            gate: Arc::new(Notify::new()),
            log: log.clone(),
        })
    }
}

impl AgentTool for Probe {
    fn name(&self) -> &str {
        "probe"
    }
    fn label(&self) -> &str {
        "Probe"
    }
    fn description(&self) -> &str {
        "Test probe."
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }
    fn execute<'a>(
        &'a self,
        id: &'a str,
        args: Value,
        cancel: CancellationToken,
        on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let mode = args["mode"].as_str().unwrap_or_default().to_owned();
            self.log.lock().unwrap().push(format!("execute {id}"));
            match mode.as_str() {
                "fast" => {
                    if let Some(update) = on_update {
                        update(AgentToolResult::text("halfway", None));
                    }
                }
                "wait" => self.gate.notified().await,
                "hang" => {
                    if let Some(update) = on_update {
                        update(AgentToolResult::text("waiting", None));
                    }
                    cancel.cancelled().await
                }
                _ => return Err(ToolError::new(format!("bad mode {mode}"))),
            }
            self.log.lock().unwrap().push(format!("returned {id}"));
            Ok(AgentToolResult::text(format!("{id} done"), None))
        })
    }
}

fn user_text(u: &UserMessage) -> String {
    u.content
        .to_blocks()
        .iter()
        .filter_map(|b| match b {
            pi_ai::UserContent::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

fn args(mode: &str) -> Map<String, Value> {
    json!({ "mode": mode }).as_object().unwrap().clone()
}

fn calls(list: &[(&str, &str, &str)]) -> FauxStep {
    faux_assistant_message(
        list.iter()
            .map(|(name, id, mode)| faux_tool_call(*name, args(mode), Some(id)))
            .collect(),
        FauxMessageOptions {
            stop_reason: Some(StopReason::ToolUse),
            ..Default::default()
        },
    )
    .into()
}

fn text(t: &str) -> FauxStep {
    faux_assistant_message(vec![faux_text(t)], FauxMessageOptions::default()).into()
}

fn agent(faux: &FauxProvider, tools: Vec<Arc<dyn AgentTool>>) -> Agent {
    let f = faux.clone();
    let agent = Agent::new(AgentOptions::new(Arc::new(
        move |model, context, options| f.stream(&model, &context, options),
    )));
    agent.set_model(faux.model());
    agent.set_tools(tools);
    agent
}

/// A compact line per event: `tool_execution_end c2 error`, `message_end toolResult c1`, ….
fn describe(event: &AgentEvent) -> String {
    match event {
        AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
            format!("tool_execution_start {tool_call_id}")
        }
        AgentEvent::ToolExecutionUpdate { tool_call_id, .. } => {
            format!("tool_execution_update {tool_call_id}")
        }
        AgentEvent::ToolExecutionEnd {
            tool_call_id,
            is_error,
            ..
        } => format!(
            "tool_execution_end {tool_call_id}{}",
            if *is_error { " error" } else { "" }
        ),
        AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
            let id = match message {
                AgentMessage::ToolResult(r) => format!(" {}", r.tool_call_id),
                AgentMessage::User(u) => format!(" {:?}", Some(user_text(u))),
                _ => String::new(),
            };
            format!("{} {}{id}", event.kind(), message.role())
        }
        AgentEvent::TurnEnd { tool_results, .. } => format!(
            "turn_end [{}]",
            tool_results
                .iter()
                .map(|r| r.tool_call_id.as_str())
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.kind().to_owned(),
    }
}

fn record(agent: &Agent, log: &Log) {
    let log = log.clone();
    agent.subscribe(move |event, _| {
        let log = log.clone();
        async move {
            if !matches!(&*event, AgentEvent::MessageUpdate { .. }) {
                log.lock().unwrap().push(describe(&event));
            }
            Ok(())
        }
    });
}

/// pi delivers an update's first listener inside `on_update`; pi-rs starts the delivery as a
/// task (a documented difference), so the update may be logged after `execute` returned. The
/// guarantee — every update is delivered before `tool_execution_end` — is what counts:
/// this moves an update logged right after `returned <id>` back before it.
fn updates_before_return(mut log: Vec<String>) -> Vec<String> {
    for i in 1..log.len() {
        if let (Some(id), Some(ret)) = (
            log[i].strip_prefix("tool_execution_update "),
            log[i - 1].strip_prefix("returned "),
        ) && id == ret
        {
            log.swap(i - 1, i);
        }
    }
    log
}

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

#[tokio::test]
async fn a_parallel_batch_follows_the_contract_order() {
    // A fails preflight (unknown tool), B and C run concurrently; C ends first;
    // tool-result messages and turn_end.toolResults keep the assistant's order A, B, C.
    let log: Log = Arc::default();
    let probe = Probe::new(ExecutionMode::Parallel, &log);
    let faux = FauxProvider::default();
    faux.set_responses(vec![
        calls(&[
            ("nope", "a", "fast"),
            ("probe", "b", "wait"),
            ("probe", "c", "fast"),
        ]),
        text("done"),
    ]);
    let agent = agent(&faux, vec![probe.clone()]);
    // Releases B once C's end has been delivered.
    let gate = probe.gate.clone();
    agent.subscribe(move |event, _| {
        let gate = gate.clone();
        async move {
            if let AgentEvent::ToolExecutionEnd { tool_call_id, .. } = &*event
                && tool_call_id == "c"
            {
                gate.notify_one();
            }
            Ok(())
        }
    });
    record(&agent, &log);
    agent.prompt("go").await.unwrap();
    let got = updates_before_return(take(&log));
    let got: Vec<&str> = got.iter().map(String::as_str).collect();
    assert_eq!(
        got,
        [
            "agent_start",
            "turn_start",
            "message_start user Some(\"go\")",
            "message_end user Some(\"go\")",
            "message_start assistant",
            "message_end assistant",
            "tool_execution_start a",
            "tool_execution_end a error",
            "tool_execution_start b",
            "tool_execution_start c",
            "execute b",
            "execute c",
            "tool_execution_update c",
            "returned c",
            "tool_execution_end c",
            "returned b",
            "tool_execution_end b",
            "message_start toolResult a",
            "message_end toolResult a",
            "message_start toolResult b",
            "message_end toolResult b",
            "message_start toolResult c",
            "message_end toolResult c",
            "turn_end [a,b,c]",
            "turn_start",
            "message_start assistant",
            "message_end assistant",
            "turn_end []",
            "agent_end",
        ]
    );
}

#[tokio::test]
async fn a_sequential_tool_makes_the_batch_sequential() {
    let log: Log = Arc::default();
    let probe = Probe::new(ExecutionMode::Sequential, &log);
    let faux = FauxProvider::default();
    faux.set_responses(vec![
        calls(&[("probe", "a", "fast"), ("probe", "b", "fast")]),
        text("done"),
    ]);
    let agent = agent(&faux, vec![probe]);
    record(&agent, &log);
    agent.prompt("go").await.unwrap();
    let got = updates_before_return(take(&log));
    let start = got
        .iter()
        .position(|l| l == "tool_execution_start a")
        .unwrap();
    assert_eq!(
        got[start..start + 12],
        [
            "tool_execution_start a",
            "execute a",
            "tool_execution_update a",
            "returned a",
            "tool_execution_end a",
            "message_start toolResult a",
            "message_end toolResult a",
            "tool_execution_start b",
            "execute b",
            "tool_execution_update b",
            "returned b",
            "tool_execution_end b",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn listeners_are_awaited_in_order_after_the_state_update() {
    let log: Log = Arc::default();
    let faux = FauxProvider::default();
    faux.set_responses(vec![calls(&[("probe", "a", "fast")]), text("done")]);
    let agent = agent(&faux, vec![Probe::new(ExecutionMode::Parallel, &log)]);
    // Listener 1 is slow and checks the state; listener 2 logs after it.
    let (l1, a1) = (log.clone(), agent.clone());
    agent.subscribe(move |event, _| {
        let (log, agent) = (l1.clone(), a1.clone());
        async move {
            match &*event {
                AgentEvent::MessageEnd { message } => {
                    assert_eq!(agent.messages().last(), Some(message));
                    assert!(agent.streaming_message().is_none());
                }
                AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                    assert!(agent.pending_tool_calls().contains(tool_call_id));
                }
                AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                    assert!(!agent.pending_tool_calls().contains(tool_call_id));
                }
                AgentEvent::MessageUpdate { .. } => assert!(agent.streaming_message().is_some()),
                _ => {}
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            log.lock().unwrap().push(format!("1 {}", event.kind()));
            Ok(())
        }
    });
    let l2 = log.clone();
    agent.subscribe(move |event, _| {
        let log = l2.clone();
        async move {
            log.lock().unwrap().push(format!("2 {}", event.kind()));
            Ok(())
        }
    });
    agent.prompt("go").await.unwrap();
    // prompt() returns after agent_end's listeners finished.
    let got: Vec<String> = take(&log)
        .into_iter()
        .filter(|l| !l.starts_with("execute") && !l.starts_with("returned"))
        .collect();
    assert_eq!(got.last().map(String::as_str), Some("2 agent_end"));
    for pair in got.chunks(2) {
        assert_eq!(
            pair[0].strip_prefix("1 "),
            pair[1].strip_prefix("2 "),
            "{got:?}"
        );
    }
}

#[tokio::test]
async fn a_failing_listener_stops_that_delivery_and_fails_the_run_not_the_process() {
    let log: Log = Arc::default();
    let faux = FauxProvider::default();
    faux.set_responses(vec![text("hello")]);
    let agent = agent(&faux, vec![]);
    let failed = Arc::new(Mutex::new(false));
    let f = failed.clone();
    agent.subscribe(move |event, _| {
        let f = f.clone();
        async move {
            let assistant_end = matches!(&*event, AgentEvent::MessageEnd { message } if message.role() == "assistant");
            let mut failed = f.lock().unwrap();
            if assistant_end && !*failed {
                *failed = true;
                return Err(ListenerError::new("audit store unavailable"));
            }
            Ok(())
        }
    });
    record(&agent, &log);
    agent.prompt("go").await.unwrap();
    let got = take(&log);
    // The second listener never saw the failed delivery; the run synthesized an error
    // message carrying the listener's text, then ended normally.
    assert_eq!(
        got,
        [
            "agent_start",
            "turn_start",
            "message_start user Some(\"go\")",
            "message_end user Some(\"go\")",
            "message_start assistant",
            "message_start assistant",
            "message_end assistant",
            "turn_end []",
            "agent_end",
        ]
    );
    let messages = agent.messages();
    let Some(AgentMessage::Assistant(last)) = messages.last() else {
        panic!("{messages:?}");
    };
    assert_eq!(last.stop_reason, StopReason::Error);
    assert_eq!(
        last.error_message.as_deref(),
        Some("audit store unavailable")
    );
    assert_eq!(
        agent.error_message().as_deref(),
        Some("audit store unavailable")
    );
}

#[tokio::test]
async fn steering_comes_before_the_next_turn_and_follow_up_after_the_run_would_stop() {
    let log: Log = Arc::default();
    let probe = Probe::new(ExecutionMode::Parallel, &log);
    let faux = FauxProvider::default();
    faux.set_responses(vec![
        calls(&[("probe", "a", "fast")]),
        text("after steer"),
        text("after follow-up"),
    ]);
    let agent = agent(&faux, vec![probe]);
    let a = agent.clone();
    agent.subscribe(move |event, _| {
        let a = a.clone();
        async move {
            if let AgentEvent::ToolExecutionStart { .. } = &*event {
                a.steer(Message::User(UserMessage::text("steer")));
                a.follow_up(Message::User(UserMessage::text("follow")));
            }
            Ok(())
        }
    });
    record(&agent, &log);
    agent.prompt("go").await.unwrap();
    let got: Vec<String> = take(&log)
        .into_iter()
        .filter(|l| {
            l.starts_with("message_end") || l.starts_with("turn_") || l.starts_with("agent_")
        })
        .collect();
    assert_eq!(
        got,
        [
            "agent_start",
            "turn_start",
            "message_end user Some(\"go\")",
            "message_end assistant",
            "message_end toolResult a",
            "turn_end [a]",
            "turn_start",
            "message_end user Some(\"steer\")",
            "message_end assistant",
            "turn_end []",
            "turn_start",
            "message_end user Some(\"follow\")",
            "message_end assistant",
            "turn_end []",
            "agent_end",
        ]
    );
    assert!(!agent.has_queued_messages());
}

#[tokio::test]
async fn abort_during_a_tool_cancels_it_and_ends_the_run_aborted() {
    let log: Log = Arc::default();
    let probe = Probe::new(ExecutionMode::Parallel, &log);
    let faux = FauxProvider::default();
    faux.set_responses(vec![calls(&[("probe", "a", "hang")]), text("never")]);
    let agent = agent(&faux, vec![probe]);
    let a = agent.clone();
    agent.subscribe(move |event, _| {
        let a = a.clone();
        async move {
            if let AgentEvent::ToolExecutionUpdate { .. } = &*event {
                a.abort();
            }
            Ok(())
        }
    });
    record(&agent, &log);
    agent.prompt("go").await.unwrap();
    assert!(!agent.is_streaming());
    let got = take(&log);
    // The cancelled tool keeps its result; one more turn runs with the aborted signal and
    // ends the transcript with an aborted assistant message.
    let tail: Vec<&str> = got[got.len() - 7..].iter().map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "message_start toolResult a",
            "message_end toolResult a",
            "turn_end [a]",
            "turn_start",
            "message_start assistant",
            "message_end assistant",
            "turn_end []",
            "agent_end",
        ][1..]
    );
    assert!(got.contains(&"returned a".to_owned()), "{got:?}");
    let messages = agent.messages();
    let Some(AgentMessage::Assistant(last)) = messages.last() else {
        panic!("{messages:?}");
    };
    assert_eq!(last.stop_reason, StopReason::Aborted, "{got:?}");
    assert_eq!(agent.error_message(), last.error_message);
}

#[tokio::test]
async fn abort_before_preflight_gives_operation_aborted() {
    let log: Log = Arc::default();
    let probe = Probe::new(ExecutionMode::Parallel, &log);
    let faux = FauxProvider::default();
    faux.set_responses(vec![calls(&[("probe", "a", "fast")]), text("never")]);
    let agent = agent(&faux, vec![probe]);
    let a = agent.clone();
    let texts: Log = Arc::default();
    let t = texts.clone();
    agent.subscribe(move |event, _| {
        let (a, t) = (a.clone(), t.clone());
        async move {
            match &*event {
                AgentEvent::ToolExecutionStart { .. } => a.abort(),
                AgentEvent::ToolExecutionEnd { result, .. } => {
                    if let Some(pi_ai::UserContent::Text(x)) = result.content.first() {
                        t.lock().unwrap().push(x.text.clone());
                    }
                }
                _ => {}
            }
            Ok(())
        }
    });
    record(&agent, &log);
    agent.prompt("go").await.unwrap();
    assert_eq!(*texts.lock().unwrap(), ["Operation aborted"]);
    assert!(!take(&log).contains(&"execute a".to_owned()));
}

#[tokio::test]
async fn a_panicking_listener_is_a_failure_of_the_run_not_of_the_process() {
    let faux = FauxProvider::default();
    faux.set_responses(vec![text("hello")]);
    let agent = agent(&faux, vec![]);
    let fired = Arc::new(Mutex::new(false));
    let f = fired.clone();
    agent.subscribe(move |event, _| {
        let f = f.clone();
        async move {
            if matches!(&*event, AgentEvent::MessageEnd { message } if message.role() == "assistant")
                && !std::mem::replace(&mut *f.lock().unwrap(), true)
            {
                panic!("listener bug");
            }
            Ok(())
        }
    });
    agent.prompt("go").await.unwrap();
    assert_eq!(agent.error_message().as_deref(), Some("listener bug"));
    assert!(!agent.is_streaming());
}

#[tokio::test]
async fn a_listener_failing_again_in_the_failure_sequence_makes_prompt_return_the_error() {
    let faux = FauxProvider::default();
    faux.set_responses(vec![text("hello")]);
    let agent = agent(&faux, vec![]);
    agent.subscribe(|event, _| async move {
        match &*event {
            AgentEvent::MessageEnd { message } if message.role() == "assistant" => {
                Err(ListenerError::new("disk full"))
            }
            _ => Ok(()),
        }
    });
    let err = agent.prompt("go").await.unwrap_err();
    assert_eq!(err.to_string(), "disk full");
    assert!(!agent.is_streaming());
    // The agent is not left busy: the next prompt runs (and meets the same listener).
    faux.set_responses(vec![text("again")]);
    let err = agent.prompt("go").await.unwrap_err();
    assert_eq!(err.to_string(), "disk full");
    assert_eq!(faux.call_count(), 2);
}

#[tokio::test]
async fn a_second_prompt_during_a_run_is_refused_with_pis_text() {
    let log: Log = Arc::default();
    let probe = Probe::new(ExecutionMode::Parallel, &log);
    let faux = FauxProvider::default();
    faux.set_responses(vec![calls(&[("probe", "a", "wait")]), text("done")]);
    let agent = agent(&faux, vec![probe.clone()]);
    let refused: Log = Arc::default();
    let (a, r, gate) = (agent.clone(), refused.clone(), probe.gate.clone());
    agent.subscribe(move |event, _| {
        let (a, r, gate) = (a.clone(), r.clone(), gate.clone());
        async move {
            if let AgentEvent::ToolExecutionStart { .. } = &*event {
                let err = a.prompt("second").await.unwrap_err();
                r.lock().unwrap().push(err.to_string());
                gate.notify_one();
            }
            Ok(())
        }
    });
    agent.prompt("go").await.unwrap();
    assert_eq!(
        *refused.lock().unwrap(),
        [
            "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
        ]
    );
    assert_eq!(faux.call_count(), 2);
}
