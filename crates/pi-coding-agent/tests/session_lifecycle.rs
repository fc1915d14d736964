//! In-process `AgentSession` behaviour on the faux provider: retry (ports of pi's
//! `agent-session-retry.test.ts`), concurrency and queues (`agent-session-concurrent.test.ts`),
//! injected messages, preflight refusals, listener failures and `agent_settled`.

mod session_support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pi_agent_core::{AgentMessage, HookError};
use pi_ai::{Message, StopReason, UserContent};
use pi_coding_agent::session::{
    AgentSession, AgentSessionEvent, AuthSource, CustomMessageOptions, CustomMessageSpec,
    DeliverAs, PromptOptions, SessionError, StreamingBehavior, UserMessageOptions,
};
use serde_json::json;
use session_support::*;

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

/// A tool that blocks until released.
struct Gate(Arc<tokio::sync::Semaphore>, Arc<tokio::sync::Notify>);

impl pi_agent_core::AgentTool for Gate {
    fn name(&self) -> &str {
        "gate"
    }
    fn label(&self) -> &str {
        "Gate"
    }
    fn description(&self) -> &str {
        "Waits"
    }
    fn parameters(&self) -> &serde_json::Value {
        static S: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type":"object"}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        _args: serde_json::Value,
        _cancel: tokio_util::sync::CancellationToken,
        _on_update: Option<pi_agent_core::ToolUpdateFn>,
    ) -> futures::future::BoxFuture<
        'a,
        Result<pi_agent_core::AgentToolResult, pi_agent_core::ToolError>,
    > {
        Box::pin(async move {
            self.1.notify_one();
            let _permit = self.0.acquire().await;
            Ok(pi_agent_core::AgentToolResult::text("opened", None))
        })
    }
}

fn gate_call() -> pi_ai::providers::faux::FauxStep {
    use pi_ai::providers::faux::*;
    faux_assistant_message(
        vec![faux_tool_call("gate", serde_json::Map::new(), Some("g1"))],
        FauxMessageOptions {
            stop_reason: Some(StopReason::ToolUse),
            ..Default::default()
        },
    )
    .into()
}

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
            AgentMessage::Llm(Message::User(u)) => {
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
            AgentMessage::Llm(Message::User(u)) => {
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

struct NoKey;
impl AuthSource for NoKey {
    fn has_auth(&self, _provider: &str) -> bool {
        false
    }
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
            "No API key found for {provider}.\n\nUse /login to log into a provider via OAuth or API key. See:\n  /docs/providers.md\n  /docs/models.md"
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
            .starts_with("No API key found for the selected model.\n\nUse /login")
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
                message: AgentMessage::Llm(Message::Assistant(_)),
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
    let AgentMessage::Llm(Message::Assistant(a)) = last else {
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
    let AgentMessage::Llm(Message::User(u)) = &h.session.messages()[0] else {
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

#[tokio::test]
async fn thinking_level_and_session_name_events() {
    let h = harness(vec![], |b| b);
    // The faux model does not reason: every level clamps to off (no change, no event).
    h.session
        .set_thinking_level(pi_ai::ModelThinkingLevel::High)
        .unwrap();
    assert!(h.kinds().is_empty());
    h.session.set_session_name("My\r\nsession ").unwrap();
    assert_eq!(
        serde_json::to_value(h.events().last().unwrap()).unwrap(),
        json!({"type":"session_info_changed","name":"My session"})
    );
    h.session
        .append_custom_entry("ext", Some(json!({"k": 1})))
        .unwrap();
    let last = serde_json::to_value(h.events().last().unwrap()).unwrap();
    assert_eq!(last["type"], "entry_appended");
    assert_eq!(last["entry"]["customType"], "ext");
    assert_eq!(last["entry"]["data"], json!({"k": 1}));
}

#[tokio::test]
async fn user_bash_streams_updates_and_records_its_result() {
    let h = harness(vec![text("ok")], |b| b);
    let mut chunks = String::new();
    let result = h
        .session
        .execute_bash(
            "printf 'one\\ntwo\\n'",
            pi_coding_agent::session::ExecuteBashOptions {
                exclude_from_context: None,
                id: Some("req-1".into()),
            },
            |d| chunks.push_str(d),
        )
        .await
        .unwrap();
    assert_eq!(result.output, "one\ntwo\n");
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(chunks, "one\ntwo\n");
    let updates: String = h
        .events()
        .iter()
        .map(|e| match e {
            AgentSessionEvent::BashExecutionUpdate { id, delta } => {
                assert_eq!(id.as_deref(), Some("req-1"));
                delta.clone()
            }
            other => panic!("unexpected {}", other.kind()),
        })
        .collect();
    assert_eq!(updates, "one\ntwo\n");
    // Idle: in the state and the file at once; never a run.
    let AgentMessage::Custom(m) = &h.session.messages()[0] else {
        panic!("bashExecution expected")
    };
    assert_eq!(m["role"], "bashExecution");
    assert_eq!(m["command"], "printf 'one\\ntwo\\n'");
    assert_eq!(m["exitCode"], 0);
    assert!(m.get("excludeFromContext").is_none());
    assert_eq!(h.entry_kinds().last().unwrap(), "message:bashExecution");
    assert_eq!(h.faux.call_count(), 0);
    // The next prompt sends it to the model as user text.
    h.session
        .prompt("next", PromptOptions::default())
        .await
        .unwrap();
    let llm = pi_coding_agent::messages::convert_to_llm(&h.session.messages());
    let Message::User(u) = &llm[0] else { panic!() };
    assert_eq!(
        pi_coding_agent::session::queues::content_text(&u.content),
        "Ran `printf 'one\\ntwo\\n'`\n```\none\ntwo\n\n```"
    );
}

#[tokio::test]
async fn user_bash_while_streaming_is_deferred_to_the_end_of_the_run() {
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let entered = Arc::new(tokio::sync::Notify::new());
    let gate = Arc::new(Gate(release.clone(), entered.clone()));
    let h = harness(vec![gate_call(), text("done")], |b| b.tools(vec![gate]));
    let session = h.session.clone();
    let run = tokio::spawn(async move { session.prompt("go", PromptOptions::default()).await });
    entered.notified().await;
    h.session
        .execute_bash(
            "echo side",
            pi_coding_agent::session::ExecuteBashOptions {
                exclude_from_context: Some(true),
                id: None,
            },
            |_| {},
        )
        .await
        .unwrap();
    assert!(h.session.has_pending_bash_messages());
    release.add_permits(1);
    run.await.unwrap().unwrap();
    let roles: Vec<_> = h
        .session
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "bashExecution"
        ]
    );
    assert_eq!(h.entry_kinds().last().unwrap(), "message:bashExecution");
    let AgentMessage::Custom(m) = h.session.messages().pop().unwrap() else {
        panic!()
    };
    assert_eq!(m["excludeFromContext"], true);
}

#[derive(Default)]
struct ModelHooks(Mutex<Vec<String>>);

impl pi_coding_agent::session::SessionHooks for ModelHooks {
    fn model_select(
        &self,
        model: pi_ai::Model,
        previous: Option<pi_ai::Model>,
        source: &str,
    ) -> futures::future::BoxFuture<'_, ()> {
        self.0.lock().unwrap().push(format!(
            "model_select:{}:{}:{source}",
            model.id,
            previous.map(|p| p.id).unwrap_or_default()
        ));
        Box::pin(async {})
    }
    fn thinking_level_select(
        &self,
        level: pi_ai::ModelThinkingLevel,
        previous: pi_ai::ModelThinkingLevel,
    ) {
        self.0.lock().unwrap().push(format!(
            "thinking_level_select:{}:{}",
            level.as_str(),
            previous.as_str()
        ));
    }
}

#[tokio::test]
async fn set_model_records_the_change_and_applies_the_level_for_the_switch() {
    let hooks = Arc::new(ModelHooks::default());
    let mut settings_map = serde_json::Map::new();
    settings_map.insert("defaultThinkingLevel".into(), json!("high"));
    let settings = Arc::new(Mutex::new(
        pi_coding_agent::config::settings::SettingsManager::in_memory(settings_map),
    ));
    let h = harness(vec![], |b| b.hooks(hooks.clone()).settings(settings));
    // The faux model does not reason: the default `high` clamps to off.
    assert_eq!(h.session.thinking_level(), pi_ai::ModelThinkingLevel::Off);
    let mut thinker = h.faux.model();
    thinker.id = "thinker".into();
    thinker.reasoning = true;
    h.session.set_model(thinker, false).await.unwrap();
    assert_eq!(h.session.model().unwrap().id, "thinker");
    assert_eq!(h.session.thinking_level(), pi_ai::ModelThinkingLevel::High);
    assert_eq!(
        serde_json::to_value(h.events().last().unwrap()).unwrap(),
        json!({"type":"thinking_level_changed","level":"high"})
    );
    assert_eq!(
        &h.entry_kinds()[2..],
        ["model_change", "thinking_level_change"]
    );
    assert_eq!(
        hooks.0.lock().unwrap().clone(),
        [
            "thinking_level_select:high:off",
            "model_select:thinker:faux-1:set"
        ]
    );

    let h = harness(vec![], |b| b.auth(Arc::new(NoKey)));
    let mut m = h.faux.model();
    m.provider = "elsewhere".into();
    m.id = "m1".into();
    let err = h.session.set_model(m, false).await.unwrap_err();
    assert_eq!(err.to_string(), "No API key for elsewhere/m1");
}

/// Waits for its cancellation.
struct UntilCancelled(Arc<tokio::sync::Notify>);

impl pi_agent_core::AgentTool for UntilCancelled {
    fn name(&self) -> &str {
        "gate"
    }
    fn label(&self) -> &str {
        "Wait"
    }
    fn description(&self) -> &str {
        "Waits until cancelled"
    }
    fn parameters(&self) -> &serde_json::Value {
        static S: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type":"object"}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        _args: serde_json::Value,
        cancel: tokio_util::sync::CancellationToken,
        _on_update: Option<pi_agent_core::ToolUpdateFn>,
    ) -> futures::future::BoxFuture<
        'a,
        Result<pi_agent_core::AgentToolResult, pi_agent_core::ToolError>,
    > {
        Box::pin(async move {
            self.0.notify_one();
            cancel.cancelled().await;
            Err(pi_agent_core::ToolError::new("Operation aborted"))
        })
    }
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
            AgentMessage::Llm(Message::ToolResult(r)) => Some(r),
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
            AgentMessage::Llm(Message::User(u)) => {
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

#[tokio::test]
async fn last_assistant_text_skips_empty_aborted_messages_and_trims() {
    let h = harness(vec![text("  first answer \n")], |b| b);
    assert_eq!(h.session.last_assistant_text(), None);
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        h.session.last_assistant_text().as_deref(),
        Some("first answer")
    );
    let mut messages = h.session.messages();
    let mut aborted = pi_ai::AssistantMessage::empty("a", "p", "m");
    aborted.stop_reason = StopReason::Aborted;
    messages.push(Message::Assistant(aborted).into());
    h.session.agent().set_messages(messages);
    assert_eq!(
        h.session.last_assistant_text().as_deref(),
        Some("first answer")
    );
}

#[tokio::test]
async fn session_stats_count_entries_and_sum_usage() {
    let h = harness(vec![echo_call("c1", "x"), text("done")], |b| b);
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    let stats = h.session.session_stats().unwrap();
    assert_eq!(
        (
            stats.user_messages,
            stats.assistant_messages,
            stats.tool_calls,
            stats.tool_results,
            stats.total_messages
        ),
        (1, 2, 1, 1, 4)
    );
    let assistants = h.stored_assistants();
    let input: u64 = assistants.iter().map(|a| a.usage.input).sum();
    let output: u64 = assistants.iter().map(|a| a.usage.output).sum();
    let cache: u64 = assistants
        .iter()
        .map(|a| a.usage.cache_read + a.usage.cache_write)
        .sum();
    assert!(output > 0);
    assert_eq!(stats.tokens.input, input);
    assert_eq!(stats.tokens.output, output);
    assert_eq!(stats.tokens.total, input + output + cache);
    let usage = stats.context_usage.clone().unwrap();
    assert_eq!(usage.context_window, 128_000);
    let tokens = usage.tokens.unwrap();
    assert!(tokens > 0);
    assert_eq!(usage.percent, Some(tokens as f64 / 128_000.0 * 100.0));
    let v = serde_json::to_value(&stats).unwrap();
    assert!(v.get("sessionFile").is_none());
    assert_eq!(v["totalMessages"], 4);

    // After a compaction, the context size is unknown until the next real answer.
    let first_id = h.store.lock().unwrap().entries().unwrap()[2].id.clone();
    h.store
        .lock()
        .unwrap()
        .append(pi_coding_agent::storage::EntryKind::Compaction {
            summary: "s".into(),
            first_kept_entry_id: first_id,
            tokens_before: 10,
            details: None,
            usage: Some(
                json!({"input": 5, "output": 2, "cacheRead": 0, "cacheWrite": 0,
                "cost": {"total": 0.5}}),
            ),
            from_hook: Some(false),
        })
        .unwrap();
    let stats = h.session.session_stats().unwrap();
    assert_eq!(stats.tokens.input, input + 5);
    assert_eq!(stats.cost, 0.5);
    assert_eq!(
        serde_json::to_value(stats.context_usage.unwrap()).unwrap(),
        json!({"tokens": null, "contextWindow": 128000, "percent": null})
    );
}
