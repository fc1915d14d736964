//! In-process `AgentSession` behaviour on the faux provider: concurrency and queues (ports of
//! pi's `agent-session-concurrent.test.ts`), injected messages, preflight refusals, listener
//! failures and `agent_settled`.

use crate::session_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use pi_agent_core::{AgentMessage, HookError};
use pi_ai::{StopReason, UserContent};
use pi_coding_agent::session::{
    AgentSession, AgentSessionEvent, CustomMessageOptions, CustomMessageSpec, DeliverAs,
    PromptOptions, SessionError, StreamingBehavior, UserMessageOptions,
};
use serde_json::json;
use session_support::*;

#[tokio::test]
async fn prompt_while_streaming_is_refused_and_queued_with_a_streaming_behavior() {
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let entered = Arc::new(tokio::sync::Notify::new());
    let gate = Arc::new(Gate(release.clone(), entered.clone()));
    let h = harness(
        vec![gate_call(), text("after steer"), text("after follow-up")],
        |b| b.tools(vec![gate]),
    );
    let session = h.session.clone();
    let run = tokio::spawn(async move { session.prompt("First", PromptOptions::default()).await });
    entered.notified().await;
    assert!(h.session.is_streaming());
    assert!(!h.session.is_idle());
    let err = h
        .session
        .prompt("Second", PromptOptions::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
    );
    h.session
        .prompt(
            "Steered",
            PromptOptions {
                streaming_behavior: Some(StreamingBehavior::Steer),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    h.session.follow_up("Later", vec![]).unwrap();
    assert_eq!(h.session.pending_message_count(), 2);
    release.add_permits(1);
    run.await.unwrap().unwrap();
    assert_eq!(h.session.pending_message_count(), 0);
    // Steering lands after the tool result, the follow-up after the next answer.
    let roles: Vec<String> = h
        .session
        .messages()
        .iter()
        .map(|m| match m {
            AgentMessage::User(u) => {
                format!(
                    "user:{}",
                    pi_coding_agent::session::queues::content_text(&u.content)
                )
            }
            m => m.role().to_owned(),
        })
        .collect();
    assert_eq!(
        roles,
        [
            "user:First",
            "assistant",
            "toolResult",
            "user:Steered",
            "assistant",
            "user:Later",
            "assistant"
        ]
    );
    assert_eq!(h.faux.call_count(), 3);
    assert_eq!(
        h.kinds().iter().filter(|k| **k == "agent_settled").count(),
        1
    );
}

#[tokio::test]
async fn steering_and_follow_up_are_delivered_and_leave_the_display_queues() {
    let h = harness(vec![text("first"), text("second"), text("third")], |b| b);
    // Queued while idle: steering is drained at the start of the next run, the follow-up
    // when the agent would stop.
    h.session.steer("steer me", vec![]).unwrap();
    h.session.follow_up("then this", vec![]).unwrap();
    assert_eq!(h.session.pending_message_count(), 2);
    assert_eq!(h.session.steering_messages(), ["steer me"]);
    assert_eq!(h.session.follow_up_messages(), ["then this"]);
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(h.session.pending_message_count(), 0);
    let queues: Vec<_> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentSessionEvent::QueueUpdate {
                steering,
                follow_up,
            } => Some((steering, follow_up)),
            _ => None,
        })
        .collect();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        queues,
        [
            (s(&["steer me"]), s(&[])),
            (s(&["steer me"]), s(&["then this"])),
            (s(&[]), s(&["then this"])),
            (s(&[]), s(&[])),
        ]
    );
    let users: Vec<String> = h
        .session
        .messages()
        .iter()
        .filter_map(|m| match m {
            AgentMessage::User(u) => {
                Some(pi_coding_agent::session::queues::content_text(&u.content))
            }
            _ => None,
        })
        .collect();
    assert_eq!(users, ["go", "steer me", "then this"]);
    assert_eq!(h.faux.call_count(), 2);
}

#[tokio::test]
async fn clear_queue_returns_and_empties_both_queues() {
    let h = harness(vec![text("only")], |b| b);
    h.session.steer("s", vec![]).unwrap();
    h.session.follow_up("f", vec![]).unwrap();
    let (steering, follow_up) = h.session.clear_queue().unwrap();
    assert_eq!((steering, follow_up), (vec!["s".into()], vec!["f".into()]));
    assert!(!h.session.agent().has_queued_messages());
    assert_eq!(h.kinds().last(), Some(&"queue_update"));
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(h.faux.call_count(), 1);
}

#[tokio::test]
async fn no_key_refusals_name_the_provider_or_the_selected_model() {
    let h = harness(vec![text("x")], |b| {
        b.auth(Arc::new(NoKey)).docs_dir("/docs")
    });
    let provider = h.faux.provider().to_owned();
    let ok = Arc::new(AtomicBool::new(true));
    let ok2 = ok.clone();
    let err = h
        .session
        .prompt(
            "hi",
            PromptOptions {
                preflight_result: Some(Box::new(move |r| ok2.store(r, Ordering::SeqCst))),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::Refused(_)));
    assert_eq!(
        err.to_string(),
        format!(
            "No API key found for {provider}.\n\nSet the provider's API key in the environment (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY) or pass --api-key, or add a local OpenAI-compatible server (Ollama, llama.cpp, vLLM) to models.json. See:\n  /README.md\n  /docs/providers.md"
        )
    );
    assert!(!ok.load(Ordering::SeqCst));
    assert_eq!(h.faux.call_count(), 0);

    // No model at all: pi's placeholder provider `unknown`.
    let session = AgentSession::builder().docs_dir("/docs").build().unwrap();
    let err = session
        .prompt("hi", PromptOptions::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("No API key found for the selected model.\n\nSet the provider's API key")
    );
    assert!(!session.is_streaming());
}

#[tokio::test]
async fn a_failing_session_listener_fails_the_run() {
    let h = harness(vec![text("never seen"), text("second")], |b| b);
    let failed = Arc::new(AtomicBool::new(false));
    let f = failed.clone();
    h.session.subscribe(move |e| {
        if let AgentSessionEvent::Agent(ev) = e
            && let pi_agent_core::AgentEvent::MessageStart {
                message: AgentMessage::Assistant(_),
            } = &**ev
            && !f.swap(true, Ordering::SeqCst)
        {
            return Err(HookError::new("listener broke"));
        }
        Ok(())
    });
    h.session
        .prompt("hi", PromptOptions::default())
        .await
        .unwrap();
    let last = h.session.messages().pop().unwrap();
    let AgentMessage::Assistant(a) = last else {
        panic!("assistant expected")
    };
    assert_eq!(a.stop_reason, StopReason::Error);
    assert_eq!(a.error_message.as_deref(), Some("listener broke"));
    // The synthesized failure is persisted and the run still settles.
    let stored = h.stored_assistants();
    assert_eq!(
        stored.last().unwrap().error_message.as_deref(),
        Some("listener broke")
    );
    assert_eq!(h.kinds().last(), Some(&"agent_settled"));
}

#[tokio::test]
async fn custom_messages_by_delivery_mode() {
    let h = harness(vec![text("one"), text("two")], |b| b);
    let spec = |t: &str| CustomMessageSpec {
        custom_type: "note".into(),
        content: json!(t),
        display: true,
        details: None,
    };
    // Idle, no trigger: appended now (state, entry, start/end to listeners).
    h.session
        .send_custom_message(spec("aside"), CustomMessageOptions::default())
        .await
        .unwrap();
    assert_eq!(h.kinds(), ["message_start", "message_end"]);
    assert_eq!(h.session.messages().len(), 1);
    assert_eq!(h.entry_kinds().last().unwrap(), "custom_message");
    // nextTurn: held, then sent after the next prompt's user message.
    h.session
        .send_custom_message(
            spec("held"),
            CustomMessageOptions {
                deliver_as: Some(DeliverAs::NextTurn),
                trigger_turn: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(h.session.messages().len(), 1);
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    let roles: Vec<_> = h
        .session
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(roles, ["custom", "user", "custom", "assistant"]);
    // Idle with triggerTurn: a run with it as the prompt.
    h.session
        .send_custom_message(
            spec("trigger"),
            CustomMessageOptions {
                trigger_turn: Some(true),
                deliver_as: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(h.faux.call_count(), 2);
    let roles: Vec<_> = h.entry_kinds();
    assert_eq!(
        roles,
        [
            "model_change",
            "thinking_level_change",
            "custom_message",
            "message:user",
            "custom_message",
            "message:assistant",
            "custom_message",
            "message:assistant"
        ]
    );
}

#[tokio::test]
async fn send_user_message_joins_text_blocks_and_runs() {
    let h = harness(vec![text("ok")], |b| b);
    h.session
        .send_user_message(
            vec![UserContent::text("a"), UserContent::text("b")],
            UserMessageOptions::default(),
        )
        .await
        .unwrap();
    let AgentMessage::User(u) = &h.session.messages()[0] else {
        panic!("user expected")
    };
    assert_eq!(
        pi_coding_agent::session::queues::content_text(&u.content),
        "a\nb"
    );
}

#[tokio::test]
async fn tool_round_trip_persists_in_order_and_settles_once() {
    let h = harness(vec![echo_call("c1", "hi"), text("done")], |b| b);
    h.session
        .prompt("use the tool", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        h.entry_kinds(),
        [
            "model_change",
            "thinking_level_change",
            "message:user",
            "message:assistant",
            "message:toolResult",
            "message:assistant"
        ]
    );
    let kinds = h.kinds();
    assert_eq!(kinds.first(), Some(&"agent_start"));
    assert_eq!(kinds.iter().filter(|k| **k == "turn_start").count(), 2);
    assert_eq!(&kinds[kinds.len() - 2..], ["agent_end", "agent_settled"]);
    assert!(h.session.is_idle());
}
