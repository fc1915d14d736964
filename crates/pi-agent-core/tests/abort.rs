//! Abort while streaming and while tools run.

use crate::support;

use std::sync::{Arc, Mutex};

use pi_agent_core::agent_loop::OPERATION_ABORTED;
use pi_agent_core::{AgentEvent, BeforeToolCallResult, ExecutionMode, ListenerError, StreamFn};
use pi_ai::{
    AssistantMessage, AssistantMessageEvent, Message, PartialMessage, StopReason, event_channel,
};
use serde_json::json;
use support::*;

type Log = Arc<Mutex<Vec<String>>>;

fn last_assistant(agent: &pi_agent_core::Agent) -> AssistantMessage {
    agent
        .messages()
        .into_iter()
        .rev()
        .find_map(|m| match m.to_llm() {
            Some(Message::Assistant(a)) => Some(a.clone()),
            _ => None,
        })
        .unwrap()
}

#[tokio::test]
async fn idle_abort_is_a_no_op() {
    let script = Scripted::new(vec![]);
    let agent = agent_with(&script, vec![]);
    agent.abort();
    assert!(agent.signal().is_none());
    assert!(!agent.is_streaming());
}

#[tokio::test]
async fn abort_while_streaming_ends_with_an_aborted_message() {
    // A stream that starts, then waits for the signal and reports `aborted` as a provider
    // adapter does.
    let stream_fn: StreamFn = Arc::new(|model, _ctx, options| {
        let (mut sink, stream) = event_channel(None);
        let signal = options.signal.unwrap();
        tokio::spawn(async move {
            let partial = PartialMessage::new(AssistantMessage::empty(
                &model.api,
                &model.provider,
                &model.id,
            ));
            sink.push(AssistantMessageEvent::Start {
                partial: partial.clone(),
            })
            .await;
            signal.cancelled().await;
            let mut m = partial.snapshot();
            m.stop_reason = StopReason::Aborted;
            m.error_message = Some("This operation was aborted".into());
            sink.push(AssistantMessageEvent::Error {
                reason: StopReason::Aborted,
                error: Box::new(m),
            })
            .await;
        });
        stream
    });
    let script = Scripted::new(vec![]);
    let agent = agent_with(&script, vec![]);
    agent.update_options(|o| o.stream_fn = stream_fn);
    let a = agent.clone();
    agent.subscribe(move |e, _| {
        if matches!(&*e, AgentEvent::MessageStart { message } if message.role() == "assistant") {
            a.abort();
        }
        async { Ok::<(), ListenerError>(()) }
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("hi").await.unwrap();
    let l = rec.labels();
    assert_eq!(
        &l[l.len() - 4..],
        [
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end"
        ]
    );
    let a = last_assistant(&agent);
    assert_eq!(a.stop_reason, StopReason::Aborted);
    assert_eq!(
        agent.error_message().as_deref(),
        Some("This operation was aborted")
    );
}

#[tokio::test(start_paused = true)]
async fn abort_during_tools_keeps_finished_results_and_runs_one_aborted_turn() {
    let log: Log = Arc::default();
    let script = Scripted::new(vec![
        tool_reply(&[
            ("A", "fast", json!({})),
            ("B", "slow", json!({})),
            ("C", "fast", json!({})),
        ]),
        text_reply("never sent"),
    ]);
    let agent = agent_with(
        &script,
        vec![
            TestTool::new("fast").delay_ms(5).log(&log).arc(),
            TestTool::new("slow").delay_ms(10_000).log(&log).arc(),
        ],
    );
    agent.update_options(|o| o.tool_execution = ExecutionMode::Sequential);
    let a = agent.clone();
    agent.subscribe(move |e, _| {
        if matches!(&*e, AgentEvent::ToolExecutionStart { tool_call_id, .. } if tool_call_id == "B")
        {
            let a = a.clone();
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                a.abort();
            });
        }
        async { Ok::<(), ListenerError>(()) }
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();

    // C never started.
    assert!(!log.lock().unwrap().iter().any(|s| s.contains(" C")));
    assert!(!rec.labels().iter().any(|l| l.ends_with(":C")));
    let events = rec.events();
    let first_turn_results = events
        .iter()
        .find_map(|e| match &**e {
            AgentEvent::TurnEnd { tool_results, .. } if !tool_results.is_empty() => {
                Some(tool_results.clone())
            }
            _ => None,
        })
        .unwrap();
    let ids: Vec<&str> = first_turn_results
        .iter()
        .map(|r| r.tool_call_id.as_str())
        .collect();
    assert_eq!(ids, ["A", "B"]);
    assert!(!first_turn_results[0].is_error);
    // One more turn: its stream function got the cancelled token and sent no request.
    let l = rec.labels();
    assert_eq!(
        &l[l.len() - 5..],
        [
            "turn_start",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end"
        ]
    );
    assert_eq!(script.call_count(), 2);
    assert_eq!(script.request_count(), 1, "no request for the aborted turn");
    let a = last_assistant(&agent);
    assert_eq!(a.stop_reason, StopReason::Aborted);
    assert_eq!(a.error_message.as_deref(), Some("Request aborted"));
    assert_eq!(agent.messages().last().unwrap().role(), "assistant");
}

#[tokio::test]
async fn abort_during_the_parallel_sweep_stops_later_calls() {
    let log: Log = Arc::default();
    let script = Scripted::new(vec![
        tool_reply(&[
            ("1", "t", json!({})),
            ("2", "t", json!({})),
            ("3", "t", json!({})),
        ]),
        text_reply("never sent"),
    ]);
    let agent = agent_with(&script, vec![TestTool::new("t").log(&log).arc()]);
    let a = agent.clone();
    agent.update_options(|o| {
        o.before_tool_call = Some(Arc::new(move |ctx, _| {
            if ctx.tool_call.id == "2" {
                a.abort();
            }
            Box::pin(async { Ok(None::<BeforeToolCallResult>) })
        }));
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert!(
        log.lock().unwrap().is_empty(),
        "no tool executes after abort"
    );
    let ends: Vec<(String, String)> = rec
        .events()
        .iter()
        .filter_map(|e| match &**e {
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                ..
            } => Some((tool_call_id.clone(), result_text(result))),
            _ => None,
        })
        .collect();
    assert_eq!(
        ends,
        [
            ("2".to_owned(), OPERATION_ABORTED.to_owned()),
            ("1".to_owned(), OPERATION_ABORTED.to_owned()),
        ]
    );
    assert!(!rec.labels().iter().any(|l| l.ends_with(":3")));
    assert_eq!(script.request_count(), 1);
    assert_eq!(last_assistant(&agent).stop_reason, StopReason::Aborted);
}

#[tokio::test]
async fn should_stop_after_turn_prevents_the_aborted_extra_turn() {
    let script = Scripted::new(vec![tool_reply(&[("1", "t", json!({}))])]);
    let agent = agent_with(&script, vec![TestTool::new("t").arc()]);
    let a = agent.clone();
    agent.update_options(|o| {
        o.before_tool_call = Some(Arc::new(move |_, _| {
            a.abort();
            Box::pin(async { Ok(None) })
        }));
        o.should_stop_after_turn = Some(Arc::new(|_, sig| {
            let stop = sig.is_cancelled();
            Box::pin(async move { Ok(stop) })
        }));
    });
    agent.prompt("go").await.unwrap();
    assert_eq!(script.call_count(), 1);
    assert_eq!(agent.messages().last().unwrap().role(), "toolResult");
}
