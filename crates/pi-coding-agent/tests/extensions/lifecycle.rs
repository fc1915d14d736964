//! End-to-end: extensions on an `AgentSession` over the faux provider — lifecycle order, the
//! error channel, queued `pi` requests, provider hooks, model/thinking/name events, binding,
//! commands, and panic isolation.

use crate::extensions_rig;
use crate::session_support;

use std::sync::{Arc, Mutex};

use pi_ai::providers::faux::{FauxModelDefinition, FauxOptions};
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use pi_coding_agent::session::PromptOptions;
use pi_coding_agent::session::{SessionStartReason, ShutdownReason};
use serde_json::json;

use extensions_rig::*;
use session_support::{echo_call, text};

#[tokio::test]
async fn lifecycle_events_reach_extensions_in_order_and_errors_go_to_the_mode_channel() {
    let l = log();
    let rec = |l: Log| {
        move |pi: &mut ExtensionApi<'_>| {
            macro_rules! on {
                ($ty:ty, $fmt:expr) => {{
                    let l = l.clone();
                    pi.on::<$ty, _>(move |e, _| {
                        let l = l.clone();
                        #[allow(clippy::redundant_closure_call)]
                        let line = ($fmt)(&*e);
                        Box::pin(async move {
                            l.lock().unwrap().push(line);
                            Ok(None)
                        })
                    });
                }};
            }
            on!(AgentStartEvent, |_: &AgentStartEvent| "agent_start"
                .to_string());
            on!(TurnStartEvent, |e: &TurnStartEvent| format!(
                "turn_start#{}",
                e.turn_index
            ));
            on!(MessageStartEvent, |e: &MessageStartEvent| format!(
                "message_start({})",
                e.message.role()
            ));
            on!(
                ToolExecutionStartEvent,
                |e: &ToolExecutionStartEvent| format!("tool_execution_start({})", e.tool_name)
            );
            on!(ToolExecutionEndEvent, |e: &ToolExecutionEndEvent| format!(
                "tool_execution_end({})",
                e.is_error
            ));
            on!(TurnEndEvent, |e: &TurnEndEvent| format!(
                "turn_end#{}:{}",
                e.turn_index,
                e.tool_results.len()
            ));
            on!(AgentEndEvent, |e: &AgentEndEvent| format!(
                "agent_end:{}",
                e.messages.len()
            ));
            on!(AgentSettledEvent, |_: &AgentSettledEvent| "agent_settled"
                .to_string());
            on!(SessionStartEvent, |e: &SessionStartEvent| format!(
                "session_start:{}",
                serde_json::to_string(&e.reason).unwrap()
            ));
            on!(SessionShutdownEvent, |e: &SessionShutdownEvent| format!(
                "session_shutdown:{}",
                serde_json::to_string(&e.reason).unwrap()
            ));
            Ok(())
        }
    };
    let r = rig(
        vec![echo_call("c1", "x"), text("done")],
        vec![
            ext("broken.ts", |pi| {
                pi.on::<TurnEndEvent, _>(|_, _| Box::pin(async { Err("turn_end failed".into()) }));
                Ok(())
            }),
            ext("recorder.ts", rec(l.clone())),
        ],
    );
    let stderr = Arc::new(Mutex::new(Vec::<u8>::new()));
    struct W(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for W {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    r.hooks.runner().on_error(mode_error_listener(
        Mode::Print,
        Box::new(W(stderr.clone())),
    ));
    r.session
        .bind_hooks(SessionStartReason::Startup, None)
        .await;
    r.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    r.session.shutdown(ShutdownReason::Quit, None).await;
    assert_eq!(
        entries(&l),
        [
            "session_start:\"startup\"",
            "agent_start",
            "turn_start#0",
            "message_start(user)",
            "message_start(assistant)",
            "tool_execution_start(echo)",
            "tool_execution_end(false)",
            "message_start(toolResult)",
            "turn_end#0:1",
            "turn_start#1",
            "message_start(assistant)",
            "turn_end#1:0",
            "agent_end:4",
            "agent_settled",
            "session_shutdown:\"quit\"",
        ]
    );
    assert_eq!(
        String::from_utf8(stderr.lock().unwrap().clone()).unwrap(),
        "Extension error (broken.ts): turn_end failed\nExtension error (broken.ts): turn_end failed\n"
    );
}

#[tokio::test]
async fn queued_pi_requests_run_against_the_session() {
    let r = rig(
        vec![text("done")],
        vec![ext("notes.ts", |pi| {
            let handle = pi.pi();
            pi.on::<AgentEndEvent, _>(move |_, _| {
                let handle = handle.clone();
                Box::pin(async move {
                    handle.append_entry("note", Some(json!({"seen": true})))?;
                    handle.set_session_name("Named by extension")?;
                    Ok(None)
                })
            });
            Ok(())
        })],
    );
    r.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    r.hooks.flush_requests().await;
    let kinds: Vec<&str> = r.events.lock().unwrap().iter().map(|e| e.kind()).collect();
    let tail: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| *k == "entry_appended" || *k == "session_info_changed")
        .collect();
    assert_eq!(tail, ["entry_appended", "session_info_changed"]);
    assert_eq!(stored(&r), ["user:go", "assistant:done", "custom"]);
}

#[tokio::test]
async fn provider_hooks_edit_headers_and_observe_the_response() {
    let seen = log();
    let responses = log();
    let rs = responses.clone();
    let r = rig(
        vec![seen_by_model(seen.clone(), "ok")],
        vec![ext("provider.ts", move |pi| {
            pi.on::<BeforeProviderHeadersEvent, _>(|e, _| {
                Box::pin(async move {
                    e.set("x-extension", "1");
                    Ok(None)
                })
            });
            let rs = rs.clone();
            pi.on::<AfterProviderResponseEvent, _>(move |e, _| {
                let rs = rs.clone();
                Box::pin(async move {
                    rs.lock().unwrap().push(format!("status {}", e.status));
                    Ok(None)
                })
            });
            Ok(())
        })],
    );
    r.session
        .prompt("hi", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(entries(&seen), ["base prompt|user:hi|x-extension=1"]);
    assert_eq!(entries(&responses), ["status 200"]);
    assert_eq!(stored(&r), ["user:hi", "assistant:ok"]);
}

#[tokio::test]
async fn session_name_and_thinking_level_changes_are_emitted_without_awaiting() {
    let l = log();
    let (a, b) = (l.clone(), l.clone());
    let r = rig_with(
        FauxOptions {
            models: vec![FauxModelDefinition {
                id: "thinker".into(),
                reasoning: true,
                ..Default::default()
            }],
            ..Default::default()
        },
        vec![],
        vec![ext("watch.ts", move |pi| {
            let a = a.clone();
            pi.on::<SessionInfoChangedEvent, _>(move |e, _| {
                let a = a.clone();
                let line = format!("name:{:?}", e.name);
                Box::pin(async move {
                    a.lock().unwrap().push(line);
                    Ok(None)
                })
            });
            let b = b.clone();
            pi.on::<ThinkingLevelSelectEvent, _>(move |e, _| {
                let b = b.clone();
                let line = serde_json::to_string(e).unwrap();
                Box::pin(async move {
                    b.lock().unwrap().push(line);
                    Ok(None)
                })
            });
            Ok(())
        })],
    );
    let before = r.session.thinking_level();
    r.session.set_session_name("Alpha").unwrap();
    r.session
        .set_thinking_level(pi_ai::ModelThinkingLevel::High)
        .unwrap();
    r.session
        .set_thinking_level(pi_ai::ModelThinkingLevel::Low)
        .unwrap();
    r.hooks.runner().flush_detached().await;
    assert_eq!(
        entries(&l),
        [
            "name:Some(\"Alpha\")".to_owned(),
            format!(
                "{{\"level\":\"high\",\"previousLevel\":{}}}",
                serde_json::to_string(&before).unwrap()
            ),
            "{\"level\":\"low\",\"previousLevel\":\"high\"}".to_owned(),
        ]
    );
}

#[tokio::test]
async fn model_select_fires_when_the_model_changes() {
    let l = log();
    let a = l.clone();
    let r = rig_with(
        FauxOptions {
            models: vec![
                FauxModelDefinition {
                    id: "first".into(),
                    ..Default::default()
                },
                FauxModelDefinition {
                    id: "second".into(),
                    ..Default::default()
                },
            ],
            ..Default::default()
        },
        vec![],
        vec![ext("models.ts", move |pi| {
            let a = a.clone();
            pi.on::<ModelSelectEvent, _>(move |e, _| {
                let line = format!(
                    "{}<-{}:{:?}",
                    e.model.id,
                    e.previous_model.as_ref().map_or("none", |m| m.id.as_str()),
                    e.source
                );
                let a = a.clone();
                Box::pin(async move {
                    a.lock().unwrap().push(line);
                    Ok(None)
                })
            });
            Ok(())
        })],
    );
    let second = r.faux.get_model("second").unwrap();
    r.session.set_model(second.clone(), false).await.unwrap();
    r.session.set_model(second, false).await.unwrap();
    assert_eq!(entries(&l), ["second<-first:Set"]);
}

#[tokio::test]
async fn bind_starts_the_session_then_discovers_resources_and_ctx_reads_the_session() {
    let l = log();
    let (a, b, c) = (l.clone(), l.clone(), l.clone());
    let r = rig(
        vec![text("ok")],
        vec![ext("reader.ts", move |pi| {
            let a = a.clone();
            pi.on::<SessionStartEvent, _>(move |_, ctx| {
                let line = format!("session_start idle={}", ctx.is_idle());
                let a = a.clone();
                Box::pin(async move {
                    a.lock().unwrap().push(line);
                    Ok(None)
                })
            });
            let b = b.clone();
            pi.on::<ResourcesDiscoverEvent, _>(move |e, _| {
                let line = format!("resources_discover {} {:?}", e.cwd, e.reason);
                let b = b.clone();
                Box::pin(async move {
                    b.lock().unwrap().push(line);
                    Ok(Some(ResourcesDiscoverResult {
                        skill_paths: vec!["/skills/x".into()],
                        ..Default::default()
                    }))
                })
            });
            let c = c.clone();
            pi.on::<TurnStartEvent, _>(move |_, ctx| {
                let s = ctx.session().expect("bound session");
                let line = format!(
                    "turn idle={} signal={} model={} messages={} tools={:?} prompt={}",
                    ctx.is_idle(),
                    ctx.signal().is_some(),
                    ctx.model().map(|m| m.id).unwrap_or_default(),
                    s.messages().len(),
                    s.active_tools(),
                    ctx.system_prompt(),
                );
                assert!(!s.session_id().is_empty());
                let c = c.clone();
                Box::pin(async move {
                    c.lock().unwrap().push(line);
                    Ok(None)
                })
            });
            Ok(())
        })],
    );
    let found = r
        .hooks
        .bind(&r.session, SessionStartReason::Startup, None)
        .await;
    // At turn_start the prompt is not in the transcript yet (it lands at its message_end).
    assert_eq!(found.skill_path_strings(), ["/skills/x"]);
    r.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        entries(&l),
        [
            "session_start idle=true",
            "resources_discover /tmp Startup",
            "turn idle=false signal=true model=faux-1 messages=0 tools=[\"echo\"] prompt=base prompt",
        ]
    );
}

#[tokio::test]
async fn commands_run_from_prompts_and_send_user_message_starts_a_run() {
    let l = log();
    let a = l.clone();
    let r = rig(
        vec![text("hello back")],
        vec![ext("cmds.ts", move |pi| {
            let handle = pi.pi();
            pi.register_command("greet", Some("Say hello".into()), move |args, _ctx| {
                let handle = handle.clone();
                Box::pin(async move {
                    handle.send_user_message(format!("hello {args}"), vec![], None)?;
                    Ok(())
                })
            });
            pi.register_command("broken", None, |_, _| {
                Box::pin(async { Err("command exploded".into()) })
            });
            let a = a.clone();
            pi.on::<InputEvent, _>(move |e, _| {
                let line = format!("input {} from {:?}", e.text, e.source);
                let a = a.clone();
                Box::pin(async move {
                    a.lock().unwrap().push(line);
                    Ok(None)
                })
            });
            Ok(())
        })],
    );
    let errors = log();
    let e = errors.clone();
    r.hooks
        .runner()
        .on_error(Arc::new(move |rec: &ExtensionErrorRecord| {
            e.lock().unwrap().push(format!(
                "{}|{}|{}",
                rec.extension_path, rec.event, rec.error
            ));
        }));
    r.session
        .prompt("/broken", PromptOptions::default())
        .await
        .unwrap();
    r.session
        .prompt("/greet world", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        r.faux.call_count(),
        0,
        "the command itself never reaches the model"
    );
    r.hooks.flush_requests().await;
    assert_eq!(entries(&l), ["input hello world from Extension"]);
    assert_eq!(stored(&r), ["user:hello world", "assistant:hello back"]);
    assert_eq!(
        entries(&errors),
        ["command:broken|command|command exploded"]
    );
}

#[tokio::test]
async fn panicking_handlers_never_take_the_session_down() {
    let r = rig(
        vec![echo_call("c1", "x"), text("done")],
        vec![ext("panics.ts", |pi| {
            pi.on::<MessageEndEvent, _>(|_, _| Box::pin(async { panic!("message_end blew up") }));
            pi.on::<ContextEvent, _>(|_, _| panic!("context blew up"));
            pi.on::<ToolResultEvent, _>(|_, _| Box::pin(async { panic!("tool_result blew up") }));
            Ok(())
        })],
    );
    let errors = log();
    let e = errors.clone();
    r.hooks
        .runner()
        .on_error(Arc::new(move |rec: &ExtensionErrorRecord| {
            e.lock()
                .unwrap()
                .push(format!("{}|{}", rec.event, rec.error));
        }));
    r.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        stored(&r),
        [
            "user:go",
            "assistant:",
            "toolResult:echo:x",
            "assistant:done"
        ]
    );
    let errors = entries(&errors);
    assert_eq!(
        errors
            .iter()
            .filter(|e| *e == "message_end|message_end blew up")
            .count(),
        4
    );
    assert_eq!(
        errors
            .iter()
            .filter(|e| *e == "context|context blew up")
            .count(),
        2
    );
    assert_eq!(
        errors
            .iter()
            .filter(|e| *e == "tool_result|tool_result blew up")
            .count(),
        1
    );
}

#[tokio::test]
async fn user_bash_answers_from_an_extension_or_falls_back_to_the_shell() {
    let r = rig(
        vec![],
        vec![ext("remote.ts", |pi| {
            pi.on::<UserBashEvent, _>(|e, _| {
                Box::pin(async move {
                    let Some(rest) = e.command.strip_prefix("remote ") else {
                        return Ok(None);
                    };
                    Ok(Some(UserBashResult {
                        result: pi_coding_agent::tools::bash::user::BashResult {
                            output: format!("ran {rest} remotely from {}", e.cwd),
                            exit_code: Some(0),
                            ..Default::default()
                        },
                    }))
                })
            });
            Ok(())
        })],
    );
    let opts = || pi_coding_agent::session::ExecuteBashOptions {
        exclude_from_context: Some(true),
        id: None,
    };
    let remote = r
        .hooks
        .user_bash(&r.session, "remote ls", opts(), |_| {})
        .await
        .unwrap();
    assert_eq!(remote.output, "ran ls remotely from /tmp");
    let mut chunks = String::new();
    let local = r
        .hooks
        .user_bash(&r.session, "echo local", opts(), |c| chunks.push_str(c))
        .await
        .unwrap();
    assert_eq!(local.output.trim_end(), "local");
    assert_eq!(chunks.trim_end(), "local");
    let recorded: Vec<String> = r
        .session
        .messages()
        .iter()
        .filter_map(|m| match m {
            pi_agent_core::AgentMessage::Custom(c) if c["role"] == "bashExecution" => {
                Some(format!(
                    "{}|{}|{}",
                    c["command"].as_str().unwrap_or_default(),
                    c["output"].as_str().unwrap_or_default().trim_end(),
                    c["excludeFromContext"]
                ))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        recorded,
        [
            "remote ls|ran ls remotely from /tmp|true",
            "echo local|local|true"
        ]
    );
}
