//! Auto-retry and abort on the faux provider (ports of pi's `agent-session-retry.test.ts`).

use crate::session_support;

use pi_agent_core::AgentMessage;
use pi_ai::StopReason;
use pi_coding_agent::session::{AgentSessionEvent, PromptOptions};
use serde_json::json;
use session_support::*;
use std::sync::{Arc, Mutex};

fn retry_events(h: &Harness) -> Vec<String> {
    h.events()
        .iter()
        .filter_map(|e| match e {
            AgentSessionEvent::AutoRetryStart {
                attempt, delay_ms, ..
            } => Some(format!("start:{attempt}:{delay_ms}")),
            AgentSessionEvent::AutoRetryEnd {
                success,
                attempt,
                final_error,
            } => Some(format!(
                "end:{success}:{attempt}:{}",
                final_error.clone().unwrap_or_default()
            )),
            AgentSessionEvent::AgentEnd { will_retry, .. } => {
                Some(format!("agent_end:{will_retry}"))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn retries_after_a_transient_error_and_succeeds() {
    let h = harness(vec![error("overloaded_error"), text("Success")], |b| {
        b.settings(settings(
            json!({"enabled": true, "maxRetries": 3, "baseDelayMs": 1}),
        ))
    });
    h.session
        .prompt("Test", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(h.faux.call_count(), 2);
    assert_eq!(
        retry_events(&h),
        [
            "agent_end:true",
            "start:1:1",
            "end:true:1:",
            "agent_end:false"
        ]
    );
    assert!(!h.session.is_retrying());
    assert_eq!(h.session.retry_attempt(), 0);
    // The failed assistant left the agent state but stays in the file.
    let roles: Vec<_> = h
        .session
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    let stored: Vec<_> = h
        .stored_assistants()
        .iter()
        .map(|a| a.stop_reason)
        .collect();
    assert_eq!(stored, [StopReason::Error, StopReason::Stop]);
    // auto_retry_end lands before the retried run's turn_end; agent_settled is last and once.
    let kinds = h.kinds();
    let end = kinds.iter().position(|k| *k == "auto_retry_end").unwrap();
    assert_eq!(kinds[end + 1], "turn_end");
    assert_eq!(kinds.last(), Some(&"agent_settled"));
    assert_eq!(kinds.iter().filter(|k| **k == "agent_settled").count(), 1);
}

#[tokio::test]
async fn exhausts_max_retries_and_emits_failure() {
    let h = harness(vec![error("503 service unavailable"); 4], |b| {
        b.settings(settings(json!({"maxRetries": 2, "baseDelayMs": 1})))
    });
    h.session
        .prompt("Test", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(h.faux.call_count(), 3);
    assert_eq!(
        retry_events(&h),
        [
            "agent_end:true",
            "start:1:1",
            "agent_end:true",
            "start:2:2",
            "agent_end:false",
            "end:false:2:503 service unavailable"
        ]
    );
    assert!(!h.session.is_retrying());
    assert_eq!(h.session.retry_attempt(), 0);
}

#[tokio::test]
async fn retry_delays_double_from_the_base_delay() {
    let h = harness(
        vec![error("overloaded"), error("overloaded"), text("ok")],
        |b| b.settings(settings(json!({"baseDelayMs": 3}))),
    );
    h.session
        .prompt("Test", PromptOptions::default())
        .await
        .unwrap();
    let starts: Vec<_> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentSessionEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => Some((attempt, max_attempts, delay_ms, error_message)),
            _ => None,
        })
        .collect();
    assert_eq!(
        starts,
        [
            (1, 3, 3, "overloaded".to_owned()),
            (2, 3, 6, "overloaded".to_owned())
        ]
    );
}

#[tokio::test]
async fn non_retryable_errors_and_disabled_retry_do_not_retry() {
    let h = harness(vec![error("invalid request: bad field"), text("x")], |b| {
        b.settings(settings(json!({"baseDelayMs": 1})))
    });
    h.session
        .prompt("Test", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(h.faux.call_count(), 1);
    assert_eq!(retry_events(&h), ["agent_end:false"]);

    let h = harness(vec![error("overloaded"), text("x")], |b| {
        b.settings(settings(json!({"enabled": false, "baseDelayMs": 1})))
    });
    h.session
        .prompt("Test", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(h.faux.call_count(), 1);
    assert_eq!(retry_events(&h), ["agent_end:false"]);
}

#[tokio::test]
async fn abort_during_the_retry_sleep_cancels_the_retry() {
    let h = harness(vec![error("overloaded"), text("never")], |b| {
        b.settings(settings(json!({"baseDelayMs": 600000})))
    });
    let (tx, rx) = tokio::sync::oneshot::channel();
    let tx = Mutex::new(Some(tx));
    h.session.subscribe(move |e| {
        if let AgentSessionEvent::AutoRetryStart { .. } = e
            && let Some(tx) = tx.lock().unwrap().take()
        {
            let _ = tx.send(());
        }
        Ok(())
    });
    let session = h.session.clone();
    let run = tokio::spawn(async move { session.prompt("Test", PromptOptions::default()).await });
    rx.await.unwrap();
    assert!(h.session.is_retrying());
    h.session.abort().await;
    run.await.unwrap().unwrap();
    assert_eq!(h.faux.call_count(), 1);
    assert_eq!(
        retry_events(&h),
        [
            "agent_end:true",
            "start:1:600000",
            "end:false:1:Retry cancelled"
        ]
    );
    assert!(h.session.is_idle());
    assert_eq!(h.kinds().last(), Some(&"agent_settled"));
}

#[tokio::test]
async fn abort_during_a_tool_waits_for_idle_and_keeps_queued_messages() {
    let entered = Arc::new(tokio::sync::Notify::new());
    let tool = Arc::new(UntilCancelled(entered.clone()));
    let h = harness(vec![gate_call(), text("follow-up answer")], |b| {
        b.tools(vec![tool])
    });
    let session = h.session.clone();
    let run = tokio::spawn(async move { session.prompt("go", PromptOptions::default()).await });
    entered.notified().await;
    h.session.follow_up("later", vec![]).unwrap();
    h.session.abort().await;
    assert!(h.session.is_idle());
    run.await.unwrap().unwrap();
    let kinds = h.kinds();
    assert_eq!(kinds.last(), Some(&"agent_settled"));
    assert_eq!(kinds.iter().filter(|k| **k == "agent_settled").count(), 1);
    let result = h
        .session
        .messages()
        .into_iter()
        .find_map(|m| match m {
            AgentMessage::ToolResult(r) => Some(r),
            _ => None,
        })
        .unwrap();
    assert!(result.is_error);
    // The aborted run's assistant is `aborted`, not retried.
    let aborted = h
        .stored_assistants()
        .into_iter()
        .filter(|a| a.stop_reason == StopReason::Aborted)
        .count();
    assert_eq!(aborted, 1);
    assert!(retry_events(&h).iter().all(|e| e.starts_with("agent_end")));
    // The queue survived the abort: the follow-up ran afterwards, in the same product run.
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
            "user:go",
            "assistant",
            "toolResult",
            "assistant",
            "user:later",
            "assistant"
        ]
    );
    assert_eq!(h.session.pending_message_count(), 0);
}
