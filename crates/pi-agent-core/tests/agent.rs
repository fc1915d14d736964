//! The `Agent` API (ported from the reference's `agent.test.ts`, adapted to 0.85) and
//! the steering / follow-up queues and `continue`.

use crate::support;

use std::sync::{Arc, Mutex};

use pi_agent_core::agent::default_model;
use pi_agent_core::{
    AgentError, AgentEvent, AgentMessage, AgentOptions, ListenerError, QueueMode, TurnUpdate,
};
use pi_ai::{Message, ModelThinkingLevel, StopReason, ThinkingLevel};
use serde_json::{Map, json};
use support::*;

fn roles(agent: &pi_agent_core::Agent) -> Vec<String> {
    agent
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect()
}

#[test]
fn default_state_matches_pi() {
    let agent = pi_agent_core::Agent::new(AgentOptions::new(Scripted::default().stream_fn()));
    let s = agent.state();
    assert_eq!(s.system_prompt, "");
    assert_eq!(s.model.id, "unknown");
    assert_eq!(s.model.api, "unknown");
    assert_eq!(s.model.provider, "unknown");
    assert_eq!(s.model, default_model());
    assert_eq!(s.thinking_level, ModelThinkingLevel::Off);
    assert!(s.tools.is_empty() && s.messages.is_empty());
    assert!(!s.is_streaming);
    assert!(s.streaming_message.is_none());
    assert!(s.pending_tool_calls.is_empty());
    assert!(s.error_message.is_none());
    let o = agent.options();
    assert_eq!(o.steering_mode, QueueMode::OneAtATime);
    assert_eq!(o.follow_up_mode, QueueMode::OneAtATime);
    assert_eq!(o.tool_execution, pi_agent_core::ExecutionMode::Parallel);
}

#[test]
fn setters_update_state_without_events() {
    let script = Scripted::default();
    let agent = agent_with(&script, vec![]);
    let rec = Recorder::attach(&agent);
    agent.set_system_prompt("Custom prompt");
    agent.set_thinking_level(ModelThinkingLevel::High);
    agent.set_messages(vec![user("Hello")]);
    assert_eq!(agent.state().system_prompt, "Custom prompt");
    assert_eq!(agent.state().thinking_level, ModelThinkingLevel::High);
    assert_eq!(roles(&agent), ["user"]);
    assert!(rec.events().is_empty());
}

#[test]
fn steer_and_follow_up_do_not_touch_messages() {
    let agent = agent_with(&Scripted::default(), vec![]);
    agent.steer(user("s"));
    agent.follow_up(user("f"));
    assert!(agent.messages().is_empty());
    assert!(agent.has_queued_messages());
    agent.clear_steering_queue();
    assert!(agent.has_queued_messages());
    agent.clear_follow_up_queue();
    assert!(!agent.has_queued_messages());
    agent.steer(user("s"));
    agent.follow_up(user("f"));
    agent.clear_all_queues();
    assert!(!agent.has_queued_messages());
}

#[tokio::test]
async fn a_panicking_stream_function_yields_the_full_failure_lifecycle() {
    let script = Scripted::default();
    let agent = agent_with(&script, vec![]);
    agent.update_options(|o| o.stream_fn = Arc::new(|_, _, _| panic!("provider exploded")));
    let rec = Recorder::attach(&agent);
    agent.prompt("hello").await.unwrap();
    assert_eq!(
        rec.kinds(),
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "turn_end",
            "agent_end"
        ]
    );
    let last = agent.messages().pop().unwrap();
    let Some(a) = last.as_assistant() else {
        panic!()
    };
    assert_eq!(a.stop_reason, StopReason::Error);
    assert_eq!(a.error_message.as_deref(), Some("provider exploded"));
    assert_eq!(agent.error_message().as_deref(), Some("provider exploded"));
}

#[tokio::test]
async fn prompt_continue_and_reset_reject_while_running() {
    let calls = Arc::new(Mutex::new(0));
    let agent = agent_with(&Scripted::default(), vec![]);
    agent.update_options(|o| o.stream_fn = waiting_stream_fn(Arc::clone(&calls)));
    let run = tokio::spawn({
        let a = agent.clone();
        async move { a.prompt("First message").await }
    });
    while agent.streaming_message().is_none() || *calls.lock().unwrap() == 0 {
        tokio::task::yield_now().await;
    }
    assert!(agent.is_streaming());
    let e = agent.prompt("Second message").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
    );
    let e = agent.continue_run().await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "Agent is already processing. Wait for completion before continuing."
    );
    let e = agent.reset().unwrap_err();
    assert_eq!(
        e.to_string(),
        "Agent is already processing. Wait for completion before resetting."
    );
    assert_eq!(
        roles(&agent),
        ["user"],
        "reset did not corrupt the transcript"
    );
    agent.abort();
    run.await.unwrap().unwrap();
    assert!(!agent.is_streaming());
    assert_eq!(roles(&agent), ["user", "assistant"]);
    assert_eq!(
        agent.error_message().as_deref(),
        Some("This operation was aborted")
    );
    agent.reset().unwrap();
    assert!(agent.messages().is_empty());
    assert!(agent.error_message().is_none());
}

#[tokio::test]
async fn continue_errors_on_empty_transcript_and_bare_assistant_tail() {
    let script = Scripted::default();
    let agent = agent_with(&script, vec![]);
    assert_eq!(
        agent.continue_run().await.unwrap_err(),
        AgentError::NoMessagesToContinue
    );
    assert_eq!(
        AgentError::NoMessagesToContinue.to_string(),
        "No messages to continue from"
    );
    let mut a = pi_ai::AssistantMessage::empty("x", "y", "z");
    a.stop_reason = StopReason::Stop;
    agent.set_messages(vec![user("hi"), Message::Assistant(a).into()]);
    let e = agent.continue_run().await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot continue from message role: assistant"
    );
    assert_eq!(script.call_count(), 0);
}

fn assistant(text: &str) -> AgentMessage {
    let mut a = pi_ai::AssistantMessage::empty("test-api", "test-provider", "test-model");
    a.content = vec![pi_ai::AssistantContent::text(text)];
    a.stop_reason = StopReason::Stop;
    Message::Assistant(a).into()
}

#[tokio::test]
async fn continue_from_assistant_tail_runs_a_queued_follow_up() {
    let script = Scripted::new(vec![text_reply("Processed")]);
    let agent = agent_with(&script, vec![]);
    agent.set_messages(vec![user("Initial"), assistant("Initial response")]);
    agent.follow_up(user("Queued follow-up"));
    agent.continue_run().await.unwrap();
    assert!(
        agent
            .messages()
            .iter()
            .any(|m| user_text(m).as_deref() == Some("Queued follow-up"))
    );
    assert_eq!(roles(&agent).last().unwrap(), "assistant");
}

#[tokio::test]
async fn continue_keeps_one_at_a_time_steering_from_assistant_tail() {
    let script = Scripted::new(vec![text_reply("Processed 1"), text_reply("Processed 2")]);
    let agent = agent_with(&script, vec![]);
    agent.set_messages(vec![user("Initial"), assistant("Initial response")]);
    agent.steer(user("Steering 1"));
    agent.steer(user("Steering 2"));
    agent.continue_run().await.unwrap();
    let r = roles(&agent);
    assert_eq!(
        &r[r.len() - 4..],
        ["user", "assistant", "user", "assistant"]
    );
    assert_eq!(script.request_count(), 2);
    let texts: Vec<String> = agent.messages().iter().filter_map(user_text).collect();
    assert_eq!(texts, ["Initial", "Steering 1", "Steering 2"]);
}

#[tokio::test]
async fn continue_from_a_custom_last_message_runs_a_continuation() {
    let script = Scripted::new(vec![text_reply("ok")]);
    let agent = agent_with(&script, vec![]);
    let mut custom = Map::new();
    custom.insert("role".into(), json!("bashExecution"));
    custom.insert("command".into(), json!("ls"));
    agent.set_messages(vec![user("hi"), AgentMessage::custom(custom)]);
    let rec = Recorder::attach(&agent);
    agent.continue_run().await.unwrap();
    assert_eq!(rec.labels()[2], "message_start:assistant");
    // The default convert_to_llm filtered the custom message out.
    let req = &script.requests.lock().unwrap()[0];
    let r: Vec<&str> = req.context.messages.iter().map(Message::role).collect();
    assert_eq!(r, ["user"]);
}

#[tokio::test]
async fn transform_context_runs_before_convert_to_llm() {
    let script = Scripted::new(vec![text_reply("ok")]);
    let agent = agent_with(&script, vec![]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    agent.update_options(|o| {
        o.transform_context = Some(Arc::new(|mut msgs, _| {
            msgs.insert(0, user("injected"));
            Box::pin(async move { Ok(msgs) })
        }));
        o.convert_to_llm = Arc::new(move |msgs| {
            s.lock().unwrap().extend(msgs.iter().filter_map(user_text));
            pi_agent_core::agent_loop::default_convert_to_llm(msgs)
        });
    });
    agent.prompt("hello").await.unwrap();
    assert_eq!(*seen.lock().unwrap(), ["injected", "hello"]);
    assert_eq!(
        roles(&agent),
        ["user", "assistant"],
        "the transcript is untouched"
    );
}

#[tokio::test]
async fn options_are_forwarded_to_the_stream_function() {
    let script = Scripted::new(vec![text_reply("a"), text_reply("b")]);
    let agent = agent_with(&script, vec![]);
    agent.set_thinking_level(ModelThinkingLevel::Medium);
    agent.update_options(|o| {
        o.session_id = Some("session-abc".into());
        o.get_api_key = Some(Arc::new(|provider| {
            Box::pin(async move { Ok(Some(format!("key-for-{provider}"))) })
        }));
    });
    agent.prompt("hello").await.unwrap();
    agent.update_options(|o| o.session_id = Some("session-def".into()));
    agent.set_thinking_level(ModelThinkingLevel::Off);
    agent.prompt("again").await.unwrap();
    let reqs = script.requests.lock().unwrap();
    assert_eq!(reqs[0].session_id.as_deref(), Some("session-abc"));
    assert_eq!(reqs[1].session_id.as_deref(), Some("session-def"));
    assert_eq!(reqs[0].api_key.as_deref(), Some("key-for-test-provider"));
    assert_eq!(reqs[0].reasoning, Some(ThinkingLevel::Medium));
    assert_eq!(reqs[1].reasoning, None);
}

#[tokio::test]
async fn prompt_with_images_builds_one_user_message() {
    let script = Scripted::new(vec![text_reply("ok")]);
    let agent = agent_with(&script, vec![]);
    let img = pi_ai::ImageContent {
        data: "AAAA".into(),
        mime_type: "image/png".into(),
    };
    agent
        .prompt_with_images("look", vec![img.clone()])
        .await
        .unwrap();
    let Some(u) = agent.messages()[0].as_user().cloned() else {
        panic!()
    };
    assert_eq!(
        u.content.to_blocks(),
        vec![
            pi_ai::UserContent::text("look"),
            pi_ai::UserContent::Image(img)
        ]
    );
}

#[tokio::test]
async fn steering_during_tools_runs_every_call_then_injects_after_turn_end() {
    let script = Scripted::new(vec![
        tool_reply(&[("1", "t", json!({})), ("2", "t", json!({}))]),
        text_reply("after steer"),
    ]);
    let agent = agent_with(&script, vec![TestTool::new("t").sequential().arc()]);
    let a = agent.clone();
    agent.subscribe(move |e, _| {
        if matches!(&*e, AgentEvent::ToolExecutionEnd { tool_call_id, .. } if tool_call_id == "1") {
            a.steer(user("steer now"));
        }
        async { Ok::<(), ListenerError>(()) }
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    let l = rec.labels();
    let i = l.iter().position(|s| s == "tool_execution_end:2").unwrap();
    assert_eq!(
        &l[i..i + 7],
        [
            "tool_execution_end:2",
            "message_start:toolResult",
            "message_end:toolResult",
            "turn_end",
            "turn_start",
            "message_start:user",
            "message_end:user",
        ]
    );
    let texts: Vec<String> = agent.messages().iter().filter_map(user_text).collect();
    assert_eq!(texts, ["go", "steer now"]);
    assert_eq!(script.request_count(), 2);
}

#[tokio::test]
async fn follow_ups_run_only_when_the_agent_would_stop() {
    let script = Scripted::new(vec![
        tool_reply(&[("1", "t", json!({}))]),
        text_reply("first done"),
        text_reply("follow-up done"),
    ]);
    let agent = agent_with(&script, vec![TestTool::new("t").arc()]);
    let a = agent.clone();
    agent.subscribe(move |e, _| {
        if matches!(&*e, AgentEvent::ToolExecutionStart { .. }) {
            a.follow_up(user("later"));
        }
        async { Ok::<(), ListenerError>(()) }
    });
    agent.prompt("go").await.unwrap();
    // user, assistant(tool), toolResult, assistant, user(follow-up), assistant
    assert_eq!(
        roles(&agent),
        [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(script.request_count(), 3);
}

#[tokio::test]
async fn queue_modes_all_and_one_at_a_time() {
    for (mode, expected_requests) in [(QueueMode::All, 2), (QueueMode::OneAtATime, 3)] {
        let script = Scripted::new(vec![text_reply("1"), text_reply("2"), text_reply("3")]);
        let agent = agent_with(&script, vec![]);
        agent.update_options(|o| o.follow_up_mode = mode);
        agent.follow_up(user("f1"));
        agent.follow_up(user("f2"));
        agent.prompt("go").await.unwrap();
        assert_eq!(script.request_count(), expected_requests, "{mode:?}");
        let texts: Vec<String> = agent.messages().iter().filter_map(user_text).collect();
        assert_eq!(texts, ["go", "f1", "f2"]);
    }
}

#[tokio::test]
async fn steering_queued_before_the_run_is_injected_in_the_first_turn() {
    let script = Scripted::new(vec![text_reply("ok")]);
    let agent = agent_with(&script, vec![]);
    agent.steer(user("early"));
    agent.prompt("go").await.unwrap();
    let req = &script.requests.lock().unwrap()[0];
    assert_eq!(req.context.messages.len(), 2);
    let texts: Vec<String> = agent.messages().iter().filter_map(user_text).collect();
    assert_eq!(texts, ["go", "early"]);
}

#[tokio::test]
async fn terminate_does_not_win_over_queued_steering() {
    let script = Scripted::new(vec![tool_reply(&[("1", "t", json!({}))]), text_reply("ok")]);
    let agent = agent_with(&script, vec![TestTool::new("t").terminate(true).arc()]);
    let a = agent.clone();
    agent.subscribe(move |e, _| {
        if matches!(&*e, AgentEvent::ToolExecutionStart { .. }) {
            a.steer(user("steer"));
        }
        async { Ok::<(), ListenerError>(()) }
    });
    agent.prompt("go").await.unwrap();
    assert_eq!(script.request_count(), 2);
}

#[tokio::test]
async fn should_stop_after_turn_ends_the_run_and_leaves_queues_untouched() {
    let script = Scripted::new(vec![tool_reply(&[("1", "t", json!({}))]), text_reply("x")]);
    let agent = agent_with(&script, vec![TestTool::new("t").arc()]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = Arc::clone(&seen);
    agent.update_options(|o| {
        o.should_stop_after_turn = Some(Arc::new(move |ctx, _| {
            *s.lock().unwrap() = ctx
                .context
                .messages
                .iter()
                .map(|m| m.role().to_owned())
                .collect();
            Box::pin(async { Ok(true) })
        }));
    });
    agent.follow_up(user("queued"));
    let rec = Recorder::attach(&agent);
    agent.prompt("go").await.unwrap();
    assert_eq!(script.request_count(), 1);
    assert_eq!(*seen.lock().unwrap(), ["user", "assistant", "toolResult"]);
    assert!(agent.has_queued_messages());
    let l = rec.labels();
    assert_eq!(&l[l.len() - 2..], ["turn_end", "agent_end"]);
}

#[tokio::test]
async fn prepare_next_turn_changes_model_and_thinking_between_turns() {
    let script = Scripted::new(vec![tool_reply(&[("1", "t", json!({}))]), text_reply("x")]);
    let agent = agent_with(&script, vec![TestTool::new("t").arc()]);
    agent.set_thinking_level(ModelThinkingLevel::High);
    let calls = Arc::new(Mutex::new(Vec::new()));
    let (c, a) = (Arc::clone(&calls), agent.clone());
    agent.update_options(|o| {
        o.prepare_next_turn_with_context = Some(Arc::new(move |ctx, _| {
            c.lock().unwrap().push(ctx.tool_results.len());
            // Steering queued while preparing is picked up for this turn.
            a.steer(user("queued during prepare"));
            let mut m = model();
            m.id = "next-model".into();
            Box::pin(async move {
                Ok(Some(TurnUpdate {
                    model: Some(m),
                    thinking_level: Some(ModelThinkingLevel::Off),
                    ..Default::default()
                }))
            })
        }));
        // The context-free variant is ignored when the context variant is set.
        o.prepare_next_turn = Some(Arc::new(|_| Box::pin(async { panic!("not called") })));
    });
    agent.prompt("go").await.unwrap();
    assert_eq!(
        *calls.lock().unwrap(),
        [1],
        "called once, between the two turns"
    );
    let reqs = script.requests.lock().unwrap();
    assert_eq!(reqs[0].model.id, "test-model");
    assert_eq!(reqs[0].reasoning, Some(ThinkingLevel::High));
    assert_eq!(reqs[1].model.id, "next-model");
    assert_eq!(reqs[1].reasoning, None);
    let last_user = reqs[1]
        .context
        .messages
        .iter()
        .rev()
        .find(|m| m.role() == "user")
        .unwrap();
    let Message::User(u) = last_user else {
        panic!()
    };
    assert_eq!(
        u.content.to_blocks()[0].as_text(),
        Some("queued during prepare")
    );
}

#[tokio::test]
async fn legacy_prepare_next_turn_gets_the_signal() {
    let script = Scripted::new(vec![tool_reply(&[("1", "t", json!({}))]), text_reply("x")]);
    let agent = agent_with(&script, vec![TestTool::new("t").arc()]);
    let saw = Arc::new(Mutex::new(None));
    let s = Arc::clone(&saw);
    agent.update_options(|o| {
        o.prepare_next_turn = Some(Arc::new(move |sig| {
            *s.lock().unwrap() = Some(sig.is_cancelled());
            Box::pin(async { Ok(None) })
        }));
    });
    agent.prompt("go").await.unwrap();
    assert_eq!(*saw.lock().unwrap(), Some(false));
    assert_eq!(script.request_count(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_settled_parallel_tools_update_is_dropped_while_another_runs() {
    let script = Scripted::new(vec![tool_reply(&[
        ("call-1", "settled", json!({})),
        ("call-2", "slow", json!({})),
    ])]);
    let settled = TestTool::new("settled").terminate(true);
    let kept = Arc::clone(&settled.kept_update);
    let slow = TestTool::new("slow").delay_ms(20).terminate(true);
    let agent = agent_with(&script, vec![settled.arc(), slow.arc()]);
    let k = Arc::clone(&kept);
    agent.subscribe(move |e, _| {
        if matches!(&*e, AgentEvent::ToolExecutionEnd { tool_call_id, .. } if tool_call_id == "call-1")
            && let Some(u) = k.lock().unwrap().as_ref()
        {
            u(pi_agent_core::AgentToolResult::text("late", None));
        }
        async { Ok::<(), ListenerError>(()) }
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("run tools").await.unwrap();
    assert!(kept.lock().unwrap().is_some());
    assert!(!rec.kinds().contains(&"tool_execution_update"));
}

#[tokio::test]
async fn a_message_end_listener_can_replace_the_message_everywhere() {
    let script = Scripted::new(vec![
        tool_reply(&[("1", "t", json!({}))]),
        text_reply("final"),
    ]);
    let agent = agent_with(&script, vec![TestTool::new("t").arc()]);
    let a = agent.clone();
    let refused = Arc::new(Mutex::new(Vec::new()));
    let r = Arc::clone(&refused);
    agent.subscribe(move |e, _| {
        if let AgentEvent::MessageEnd { message } = &*e {
            match message.to_llm() {
                Some(Message::User(_)) => {
                    // A different role is refused.
                    r.lock()
                        .unwrap()
                        .push(a.replace_ending_message(assistant("nope")));
                    assert!(a.replace_ending_message(user("hi (redacted)")));
                }
                Some(Message::ToolResult(t)) => {
                    let mut t = t.clone();
                    t.content = vec![pi_ai::UserContent::text("rewritten by extension")];
                    assert!(a.replace_ending_message(Message::ToolResult(t).into()));
                }
                Some(Message::Assistant(m)) if m.stop_reason == StopReason::Stop => {
                    assert!(a.replace_ending_message(assistant("final (annotated)")));
                }
                _ => {}
            }
        }
        async { Ok::<(), ListenerError>(()) }
    });
    let rec = Recorder::attach(&agent);
    agent.prompt("hi").await.unwrap();
    assert_eq!(*refused.lock().unwrap(), [false]);

    let reqs = script.requests.lock().unwrap();
    let Message::User(u) = &reqs[0].context.messages[0] else {
        panic!()
    };
    assert_eq!(u.content.to_blocks()[0].as_text(), Some("hi (redacted)"));
    let Message::ToolResult(t) = &reqs[1].context.messages[2] else {
        panic!()
    };
    assert_eq!(t.content[0].as_text(), Some("rewritten by extension"));

    let events = rec.events();
    let AgentEvent::AgentEnd { messages } = &**events.last().unwrap() else {
        panic!()
    };
    assert_eq!(
        messages,
        &agent.messages(),
        "agent_end and the transcript agree"
    );
    assert_eq!(user_text(&messages[0]).as_deref(), Some("hi (redacted)"));
    let Some(last) = messages[3].as_assistant() else {
        panic!()
    };
    assert_eq!(last.text(), "final (annotated)");
    let turn_ends: Vec<_> = events
        .iter()
        .filter_map(|e| match &**e {
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => Some((message.text(), tool_results.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        turn_ends[0].1[0].content[0].as_text(),
        Some("rewritten by extension")
    );
    assert_eq!(turn_ends[1].0, "final (annotated)");
    // Outside a run nothing is replaced.
    assert!(!agent.replace_ending_message(user("late")));
}

/// `Agent::downgrade`: a listener holding a `WeakAgent` can steer the agent while it runs and
/// does not keep it alive (with a strong clone the agent and its listener would leak).
#[tokio::test]
async fn a_weak_agent_in_a_listener_steers_and_does_not_keep_the_agent_alive() {
    let script = Scripted::new(vec![text_reply("one"), text_reply("two")]);
    let agent = agent_with(&script, vec![]);
    let weak = agent.downgrade();
    let steered = Arc::new(Mutex::new(false));
    let (w, done) = (weak.clone(), Arc::clone(&steered));
    agent.subscribe(move |e, _| {
        if matches!(&*e, AgentEvent::MessageStart { message } if message.role() == "assistant")
            && !std::mem::replace(&mut *done.lock().unwrap(), true)
        {
            let agent = w.upgrade().expect("alive while it runs");
            agent.steer(user("and also this"));
        }
        async { Ok::<(), ListenerError>(()) }
    });
    agent.prompt("go").await.unwrap();
    assert_eq!(roles(&agent), ["user", "assistant", "user", "assistant"]);
    assert!(format!("{weak:?}").contains("alive: true"));
    drop(agent);
    assert!(
        weak.upgrade().is_none(),
        "the listener's weak handle kept nothing alive"
    );
    assert!(format!("{weak:?}").contains("alive: false"));
}
