//! Ports of pi's offline agent-session tests that depend on slow or request-shaping hooks
//! (`agent-session-concurrent.test.ts` "persist message_end events in order with slow
//! extension handlers", `agent-session-retry.test.ts` "prompt waits for retry completion even
//! when assistant message_end handling is delayed", `message-mutation-and-ephemeral.test.ts`
//! "context … appends messages to the provider request without persisting them").
//!
//! The slow handlers sleep on Tokio's paused clock (no real socket is involved).

use crate::session_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use pi_agent_core::AgentMessage;
use pi_ai::providers::faux::{FauxStep, faux_assistant_message, faux_text};
use pi_ai::{Message, UserMessage};
use pi_coding_agent::session::{PromptOptions, SessionHooks};
use serde_json::json;
use session_support::*;

/// Delays every assistant `message_end` by 40 ms.
struct SlowAssistantEnd;

impl SessionHooks for SlowAssistantEnd {
    fn message_end(&self, message: AgentMessage) -> BoxFuture<'_, Option<AgentMessage>> {
        Box::pin(async move {
            if message.role() == "assistant" {
                tokio::time::sleep(Duration::from_millis(40)).await;
            }
            None
        })
    }
}

#[tokio::test(start_paused = true)]
async fn message_end_persists_in_order_with_slow_handlers() {
    let h = harness(vec![echo_call("toolu_1", "x"), text("done")], |b| {
        b.hooks(Arc::new(SlowAssistantEnd))
    });
    h.session
        .prompt("hi", PromptOptions::default())
        .await
        .unwrap();
    h.session.wait_for_idle().await;
    let roles: Vec<_> = h
        .entry_kinds()
        .into_iter()
        .filter_map(|k| k.strip_prefix("message:").map(str::to_owned))
        .collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
}

#[tokio::test(start_paused = true)]
async fn prompt_waits_for_retry_completion_with_a_slow_message_end() {
    let h = harness(vec![error("overloaded_error"), text("Success")], |b| {
        b.hooks(Arc::new(SlowAssistantEnd))
            .settings(settings(json!({"baseDelayMs": 1})))
    });
    h.session
        .prompt("Test", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(h.faux.call_count(), 2);
    assert!(!h.session.is_retrying());
    assert!(h.session.is_idle());
}

/// Appends a request-only user message `EPH` in `context`.
struct Ephemeral;

impl SessionHooks for Ephemeral {
    fn context(&self, mut messages: Vec<AgentMessage>) -> BoxFuture<'_, Vec<AgentMessage>> {
        messages.push(Message::User(UserMessage::text("EPH")).into());
        Box::pin(async move { messages })
    }
}

#[tokio::test]
async fn context_hook_shapes_the_request_without_touching_history() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let step = FauxStep::factory(move |ctx, _, _, _| {
        let users: Vec<String> = ctx
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::User(u) => {
                    Some(pi_coding_agent::session::queues::content_text(&u.content))
                }
                _ => None,
            })
            .collect();
        seen2.lock().unwrap().push(users);
        Ok(faux_assistant_message(
            vec![faux_text("ok")],
            Default::default(),
        ))
    });
    let h = harness(vec![step], |b| b.hooks(Arc::new(Ephemeral)));
    h.session
        .prompt("hello", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [vec!["hello".to_owned(), "EPH".to_owned()]]
    );
    let stored_users: Vec<String> = h
        .store
        .lock()
        .unwrap()
        .entries()
        .unwrap()
        .iter()
        .filter_map(|e| match e.message() {
            Some(AgentMessage::User(u)) => {
                Some(pi_coding_agent::session::queues::content_text(&u.content))
            }
            _ => None,
        })
        .collect();
    assert_eq!(stored_users, ["hello"]);
    assert_eq!(h.session.messages().len(), 2);
}
