//! Listeners: awaited in-order delivery with the run's token, completion
//! semantics of `prompt` / `wait_for_idle` / `is_streaming`, `Set` iteration semantics, and
//! the synthesized failure sequence for a failing listener.

use crate::support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent_core::{AgentError, AgentEvent, HookError, ListenerError};
use pi_ai::StopReason;
use support::*;
use tokio::sync::Notify;

type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, s: impl Into<String>) {
    log.lock().unwrap().push(s.into());
}

#[tokio::test(start_paused = true)]
async fn listeners_are_awaited_one_at_a_time_in_subscription_order() {
    let script = Scripted::new(vec![text_reply("ok")]);
    let agent = agent_with(&script, vec![]);
    let log: Log = Arc::default();
    let l = Arc::clone(&log);
    agent.subscribe(move |e, _| {
        let l = Arc::clone(&l);
        async move {
            push(&l, format!("A<{}", e.kind()));
            tokio::time::sleep(Duration::from_millis(10)).await;
            push(&l, format!("A>{}", e.kind()));
            Ok(())
        }
    });
    let l = Arc::clone(&log);
    agent.subscribe(move |e, _| {
        push(&l, format!("B {}", e.kind()));
        async { Ok::<(), ListenerError>(()) }
    });
    agent.prompt("hi").await.unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(
        &log[..6],
        [
            "A<agent_start",
            "A>agent_start",
            "B agent_start",
            "A<turn_start",
            "A>turn_start",
            "B turn_start"
        ]
    );
    // Every event: A starts, A ends, then B — never interleaved.
    for chunk in log.chunks(3) {
        assert!(
            chunk[0].starts_with("A<") && chunk[1].starts_with("A>") && chunk[2].starts_with("B "),
            "{chunk:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_slow_listener_delays_the_loop() {
    let log: Log = Arc::default();
    let script = Scripted::new(vec![text_reply("ok")]);
    let inner = script.stream_fn();
    let l = Arc::clone(&log);
    let counting: pi_agent_core::StreamFn = Arc::new(move |m, c, o| {
        push(&l, "request");
        inner(m, c, o)
    });
    let agent = agent_with(&script, vec![]);
    agent.update_options(|o| o.stream_fn = counting);
    let l = Arc::clone(&log);
    agent.subscribe(move |e, _| {
        let l = Arc::clone(&l);
        async move {
            if let AgentEvent::MessageEnd { message } = &*e
                && message.role() == "user"
            {
                tokio::time::sleep(Duration::from_secs(5)).await;
                push(&l, "listener finished");
            }
            Ok(())
        }
    });
    agent.prompt("hi").await.unwrap();
    assert_eq!(*log.lock().unwrap(), ["listener finished", "request"]);
}

#[tokio::test]
async fn listeners_receive_the_runs_token() {
    let script = Scripted::new(vec![text_reply("ok")]);
    let agent = agent_with(&script, vec![]);
    let before = Arc::new(AtomicBool::new(true));
    let b = Arc::clone(&before);
    agent.subscribe(move |e, token| {
        if matches!(&*e, AgentEvent::AgentStart) {
            b.store(token.is_cancelled(), Ordering::SeqCst);
        }
        async { Ok::<(), ListenerError>(()) }
    });
    let a = agent.clone();
    let cancelled_seen = Arc::new(AtomicBool::new(false));
    let c = Arc::clone(&cancelled_seen);
    agent.subscribe(move |e, token| {
        if matches!(&*e, AgentEvent::TurnStart) {
            a.abort();
            c.store(token.is_cancelled(), Ordering::SeqCst);
        }
        async { Ok::<(), ListenerError>(()) }
    });
    agent.prompt("hi").await.unwrap();
    assert!(
        cancelled_seen.load(Ordering::SeqCst),
        "abort() cancels the token listeners got"
    );
    assert!(
        !before.load(Ordering::SeqCst),
        "not cancelled before abort()"
    );
}

#[tokio::test]
async fn prompt_and_wait_for_idle_return_after_agent_end_listeners() {
    let script = Scripted::new(vec![text_reply("ok")]);
    let agent = agent_with(&script, vec![]);
    let gate = Arc::new(Notify::new());
    let finished = Arc::new(AtomicBool::new(false));
    let (g, f, a) = (Arc::clone(&gate), Arc::clone(&finished), agent.clone());
    agent.subscribe(move |e, _| {
        let (g, f, a) = (Arc::clone(&g), Arc::clone(&f), a.clone());
        async move {
            if matches!(&*e, AgentEvent::AgentEnd { .. }) {
                assert!(
                    a.is_streaming(),
                    "is_streaming stays true through agent_end listeners"
                );
                g.notified().await;
                f.store(true, Ordering::SeqCst);
            }
            Ok(())
        }
    });
    let run = tokio::spawn({
        let a = agent.clone();
        async move { a.prompt("hi").await }
    });
    while !agent.is_streaming() {
        tokio::task::yield_now().await;
    }
    let idle = tokio::spawn({
        let a = agent.clone();
        let f = Arc::clone(&finished);
        async move {
            a.wait_for_idle().await;
            f.load(Ordering::SeqCst)
        }
    });
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    assert!(!run.is_finished() && !idle.is_finished());
    assert!(agent.is_streaming());
    gate.notify_one();
    run.await.unwrap().unwrap();
    assert!(
        idle.await.unwrap(),
        "wait_for_idle resolved only after the listener finished"
    );
    assert!(!agent.is_streaming());
    // Idle: resolves at once.
    agent.wait_for_idle().await;
}

#[tokio::test]
async fn subscribe_emits_nothing_and_unsubscribe_stops_delivery() {
    let script = Scripted::new(vec![text_reply("a"), text_reply("b")]);
    let agent = agent_with(&script, vec![]);
    let rec = Recorder::default();
    let ev = Arc::clone(&rec.events);
    let sub = agent.subscribe(move |e, _| {
        ev.lock().unwrap().push(e);
        async { Ok::<(), ListenerError>(()) }
    });
    assert!(rec.events().is_empty());
    agent.prompt("1").await.unwrap();
    let n = rec.events().len();
    assert!(n > 0);
    assert!(sub.unsubscribe());
    assert!(!sub.unsubscribe());
    agent.prompt("2").await.unwrap();
    assert_eq!(rec.events().len(), n);
}

#[tokio::test]
async fn set_semantics_removed_before_its_turn_is_skipped_added_during_delivery_receives() {
    let script = Scripted::new(vec![text_reply("a")]);
    let agent = agent_with(&script, vec![]);
    let log: Log = Arc::default();
    let b_sub: Arc<Mutex<Option<pi_agent_core::Subscription>>> = Arc::default();
    let added = Arc::new(AtomicBool::new(false));
    {
        let (bs, a, l, added) = (
            Arc::clone(&b_sub),
            agent.clone(),
            Arc::clone(&log),
            Arc::clone(&added),
        );
        agent.subscribe(move |e, _| {
            if matches!(&*e, AgentEvent::TurnStart) {
                // Remove B before its turn for this event; add C during the delivery.
                if let Some(s) = bs.lock().unwrap().take() {
                    s.unsubscribe();
                }
                if !added.swap(true, Ordering::SeqCst) {
                    let l2 = Arc::clone(&l);
                    a.subscribe(move |e, _| {
                        push(&l2, format!("C {}", e.kind()));
                        async { Ok::<(), ListenerError>(()) }
                    });
                }
            }
            async { Ok::<(), ListenerError>(()) }
        });
    }
    let l = Arc::clone(&log);
    *b_sub.lock().unwrap() = Some(agent.subscribe(move |e, _| {
        push(&l, format!("B {}", e.kind()));
        async { Ok::<(), ListenerError>(()) }
    }));
    agent.prompt("x").await.unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(log[0], "B agent_start");
    assert_eq!(
        log[1], "C turn_start",
        "added during delivery, receives the same event"
    );
    assert!(
        !log.iter().any(|s| s == "B turn_start"),
        "removed before its turn: skipped"
    );
}

fn failing_on_user_end(
    msg: &'static str,
) -> impl Fn(
    Arc<AgentEvent>,
    &tokio_util::sync::CancellationToken,
) -> futures::future::Ready<Result<(), ListenerError>>
+ Send
+ Sync
+ 'static {
    move |e, _| {
        let fail = matches!(&*e, AgentEvent::MessageEnd { message } if message.role() == "user");
        futures::future::ready(if fail {
            Err(HookError::new(msg))
        } else {
            Ok(())
        })
    }
}

#[tokio::test]
async fn a_failing_listener_stops_delivery_and_fails_the_run_into_the_failure_sequence() {
    let script = Scripted::new(vec![text_reply("never")]);
    let agent = agent_with(&script, vec![]);
    agent.subscribe(failing_on_user_end("audit write failed"));
    let rec = Recorder::attach(&agent);
    agent.prompt("hi").await.unwrap();
    assert_eq!(
        rec.labels(),
        [
            "agent_start",
            "turn_start",
            "message_start:user",
            // message_end:user was not delivered to the second listener.
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ]
    );
    assert_eq!(
        script.request_count(),
        0,
        "the loop stopped at the failing delivery"
    );
    let events = rec.events();
    let AgentEvent::AgentEnd { messages } = &**events.last().unwrap() else {
        panic!()
    };
    assert_eq!(messages.len(), 1);
    let Some(f) = messages[0].as_assistant() else {
        panic!()
    };
    assert_eq!(f.stop_reason, StopReason::Error);
    assert_eq!(f.error_message.as_deref(), Some("audit write failed"));
    assert_eq!(f.content, vec![pi_ai::AssistantContent::text("")]);
    assert_eq!(
        (f.api.as_str(), f.provider.as_str(), f.model.as_str()),
        ("test-api", "test-provider", "test-model")
    );
    assert_eq!(f.usage, pi_ai::Usage::default());
    assert_eq!(agent.error_message().as_deref(), Some("audit write failed"));
    assert!(!agent.is_streaming());
    // The transcript holds the user message (reduced before delivery) and the failure.
    let roles: Vec<String> = agent
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
}

#[tokio::test]
async fn a_panicking_listener_is_contained_as_a_failure() {
    let script = Scripted::new(vec![text_reply("never")]);
    let agent = agent_with(&script, vec![]);
    agent.subscribe(|e, _| {
        if matches!(&*e, AgentEvent::TurnStart) {
            panic!("listener exploded");
        }
        async { Ok::<(), ListenerError>(()) }
    });
    agent.prompt("hi").await.unwrap();
    assert_eq!(agent.error_message().as_deref(), Some("listener exploded"));
}

#[tokio::test]
async fn an_aborted_run_failure_is_marked_aborted() {
    let script = Scripted::new(vec![text_reply("never")]);
    let agent = agent_with(&script, vec![]);
    let a = agent.clone();
    agent.subscribe(move |e, _| {
        let fail = matches!(&*e, AgentEvent::TurnStart);
        if fail {
            a.abort();
        }
        futures::future::ready(if fail {
            Err(HookError::new("stop"))
        } else {
            Ok(())
        })
    });
    agent.prompt("hi").await.unwrap();
    let last = agent.messages().pop().unwrap();
    let Some(f) = last.as_assistant() else {
        panic!()
    };
    assert_eq!(f.stop_reason, StopReason::Aborted);
}

#[tokio::test]
async fn a_second_failure_during_the_failure_sequence_is_returned() {
    let script = Scripted::new(vec![text_reply("never")]);
    let agent = agent_with(&script, vec![]);
    agent.subscribe(|e, _| {
        let fail = matches!(&*e, AgentEvent::MessageEnd { .. });
        futures::future::ready(if fail {
            Err(HookError::new("disk full"))
        } else {
            Ok(())
        })
    });
    let err = agent.prompt("hi").await.unwrap_err();
    assert_eq!(err, AgentError::Run(HookError::new("disk full")));
    assert_eq!(err.to_string(), "disk full");
    assert!(
        !agent.is_streaming(),
        "cleanup ran before the error was returned"
    );
    // The agent is usable again.
    agent.wait_for_idle().await;
    assert!(agent.signal().is_none());
}
