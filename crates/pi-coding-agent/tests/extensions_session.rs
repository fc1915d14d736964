//! End-to-end: extensions registered on an `AgentSession` over the faux provider, through
//! the `SessionHooks` seam — input, before_agent_start, context, tool_call (block and
//! failure), tool_result, message_end, lifecycle order, the error channel, queued `pi`
//! requests and the provider hooks (spec §1.4–1.5, §2.2–2.3).

mod session_support;

use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxModelDefinition, FauxOptions, FauxProvider, FauxStep,
    faux_assistant_message, faux_text,
};
use pi_ai::{AssistantContent, Message, UserContent, UserMessageContent};
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use pi_coding_agent::session::{AgentSession, AgentSessionEvent, PromptOptions};
use pi_coding_agent::storage::SessionStore;
use serde_json::json;
use session_support::{Echo, echo_call, text};

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn entries(l: &Log) -> Vec<String> {
    l.lock().unwrap().clone()
}

struct Rig {
    faux: FauxProvider,
    session: AgentSession,
    hooks: Arc<ExtensionHooks>,
    store: Arc<Mutex<SessionStore>>,
    events: Arc<Mutex<Vec<AgentSessionEvent>>>,
}

/// A session with `extensions` on a faux provider answering `steps`; the stream function
/// goes through the provider hooks.
fn rig(steps: Vec<FauxStep>, extensions: Vec<Box<dyn Extension>>) -> Rig {
    rig_with(FauxOptions::default(), steps, extensions)
}

fn rig_with(
    options: FauxOptions,
    steps: Vec<FauxStep>,
    extensions: Vec<Box<dyn Extension>>,
) -> Rig {
    let faux = FauxProvider::new(options);
    faux.set_responses(steps);
    let mut b = ExtensionRunner::builder("/tmp");
    for e in extensions {
        b = b.extension(BoxedExtension(e));
    }
    let runner = b.build();
    let hooks = ExtensionHooks::new(runner.clone());
    let store = Arc::new(Mutex::new(SessionStore::in_memory("/tmp")));
    let f = faux.clone();
    let session = AgentSession::builder()
        .model(faux.model())
        .store(store.clone())
        .tools(vec![Arc::new(Echo)])
        .system_prompt("base prompt")
        .stream_fn(runner.wrap_stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o))))
        .hooks(hooks.clone())
        .build()
        .unwrap();
    hooks.attach(&session);
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    session.subscribe(move |e| {
        sink.lock().unwrap().push(e.clone());
        Ok(())
    });
    Rig {
        faux,
        session,
        hooks,
        store,
        events,
    }
}

struct BoxedExtension(Box<dyn Extension>);

impl Extension for BoxedExtension {
    fn path(&self) -> &str {
        self.0.path()
    }
    fn register(&self, pi: &mut ExtensionApi<'_>) -> Result<(), HandlerError> {
        self.0.register(pi)
    }
}

fn ext(
    path: &str,
    f: impl Fn(&mut ExtensionApi<'_>) -> Result<(), HandlerError> + Send + Sync + 'static,
) -> Box<dyn Extension> {
    Box::new(FnExtension::new(path, f))
}

fn message_text(m: &Message) -> String {
    match m {
        Message::User(u) => match &u.content {
            UserMessageContent::Text(t) => t.clone(),
            UserMessageContent::Blocks(b) => b
                .iter()
                .filter_map(|c| match c {
                    UserContent::Text(t) => Some(t.text.clone()),
                    _ => None,
                })
                .collect(),
        },
        Message::Assistant(a) => a
            .content
            .iter()
            .filter_map(|c| match c {
                AssistantContent::Text(t) => Some(t.text.clone()),
                _ => None,
            })
            .collect(),
        Message::ToolResult(t) => t
            .content
            .iter()
            .filter_map(|c| match c {
                UserContent::Text(t) => Some(t.text.clone()),
                _ => None,
            })
            .collect(),
    }
}

/// A faux step that records what the model was sent (`system|role:text,…|headers`) and
/// answers `reply`.
fn seen_by_model(seen: Log, reply: &'static str) -> FauxStep {
    FauxStep::factory(move |ctx, opts, _, _| {
        let msgs: Vec<String> = ctx
            .messages
            .iter()
            .map(|m| format!("{}:{}", m.role(), message_text(m)))
            .collect();
        let headers: Vec<String> = opts
            .headers
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or("<deleted>")))
            .collect();
        seen.lock().unwrap().push(format!(
            "{}|{}|{}",
            ctx.system_prompt.clone().unwrap_or_default(),
            msgs.join(","),
            headers.join(",")
        ));
        Ok(faux_assistant_message(
            vec![faux_text(reply)],
            FauxMessageOptions::default(),
        ))
    })
}

fn stored(r: &Rig) -> Vec<String> {
    let s = r.store.lock().unwrap();
    s.entries()
        .unwrap()
        .iter()
        .filter_map(|e| match e.message() {
            Some(AgentMessage::Llm(m)) => Some(format!("{}:{}", m.role(), message_text(m))),
            Some(AgentMessage::Custom(c)) => Some(format!("custom:{}", c["customType"])),
            None => match e.kind.type_name() {
                "custom_message" => Some("custom_message".into()),
                "custom" => Some("custom".into()),
                _ => None,
            },
        })
        .collect()
}

#[tokio::test]
async fn input_rewrites_the_prompt_or_handles_it_without_the_model() {
    let seen = log();
    let r = rig(
        vec![seen_by_model(seen.clone(), "ok")],
        vec![ext("quick-input.ts", |pi| {
            pi.on::<InputEvent, _>(|e, ctx| {
                Box::pin(async move {
                    if let Some(rest) = e.text.strip_prefix("?quick ") {
                        return Ok(Some(InputResult::Transform {
                            text: format!("Kurze Antwort: {rest}"),
                            images: None,
                        }));
                    }
                    if e.text == "ping" {
                        ctx.ui().notify("pong", NotifyLevel::Info);
                        return Ok(Some(InputResult::Handled));
                    }
                    Ok(None)
                })
            });
            Ok(())
        })],
    );
    r.session
        .prompt("ping", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(r.faux.call_count(), 0);
    r.session
        .prompt("?quick hello world", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        entries(&seen),
        ["base prompt|user:Kurze Antwort: hello world|"]
    );
    assert_eq!(
        stored(&r),
        ["user:Kurze Antwort: hello world", "assistant:ok"]
    );
}

#[tokio::test]
async fn before_agent_start_injects_a_message_and_replaces_the_system_prompt_for_the_run() {
    let seen = log();
    let r = rig(
        vec![
            seen_by_model(seen.clone(), "one"),
            seen_by_model(seen.clone(), "two"),
        ],
        vec![ext("inject.ts", |pi| {
            pi.on::<BeforeAgentStartEvent, _>(|e, _| {
                Box::pin(async move {
                    if e.prompt != "first" {
                        return Ok(None);
                    }
                    Ok(Some(BeforeAgentStartResult {
                        message: Some(CustomMessageSpec {
                            custom_type: "my-context".into(),
                            content: json!("Current time is now"),
                            display: true,
                            details: None,
                        }),
                        system_prompt: Some(format!("{}\n\nAnswer in German.", e.system_prompt)),
                    }))
                })
            });
            Ok(())
        })],
    );
    r.session
        .prompt("first", PromptOptions::default())
        .await
        .unwrap();
    r.session
        .prompt("second", PromptOptions::default())
        .await
        .unwrap();
    let seen = entries(&seen);
    assert_eq!(
        seen[0],
        "base prompt\n\nAnswer in German.|user:first,user:Current time is now|"
    );
    assert!(
        seen[1].starts_with("base prompt|"),
        "override lasts one run: {}",
        seen[1]
    );
    assert_eq!(
        stored(&r),
        [
            "user:first",
            "custom_message",
            "assistant:one",
            "user:second",
            "assistant:two"
        ]
    );
}

#[tokio::test]
async fn context_filters_what_the_model_sees_without_touching_the_history() {
    let seen = log();
    let r = rig(
        vec![
            seen_by_model(seen.clone(), "a1"),
            seen_by_model(seen.clone(), "a2"),
        ],
        vec![ext("last-only.ts", |pi| {
            pi.on::<ContextEvent, _>(|e, _| {
                Box::pin(async move {
                    let last = e.messages.last().cloned();
                    Ok(Some(ContextResult {
                        messages: last.into_iter().collect(),
                    }))
                })
            });
            Ok(())
        })],
    );
    r.session
        .prompt("q1", PromptOptions::default())
        .await
        .unwrap();
    r.session
        .prompt("q2", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(entries(&seen)[1], "base prompt|user:q2|");
    assert_eq!(r.session.messages().len(), 4);
    assert_eq!(
        stored(&r),
        ["user:q1", "assistant:a1", "user:q2", "assistant:a2"]
    );
}

fn guard_bash() -> Box<dyn Extension> {
    ext("guard.ts", |pi| {
        pi.on::<ToolCallEvent, _>(|e, _| {
            Box::pin(async move {
                let t = e.input["text"].as_str().unwrap_or_default().to_owned();
                if t.contains("rm -rf") {
                    return Ok(Some(ToolCallResult::block(
                        "Recursive deletion is disabled.",
                    )));
                }
                if t == "explode" {
                    return Err("policy check failed".into());
                }
                e.input["text"] = json!(format!("checked {t}"));
                Ok(None)
            })
        });
        Ok(())
    })
}

#[tokio::test]
async fn tool_call_blocks_fails_closed_and_rewrites_input() {
    let r = rig(
        vec![
            echo_call("c1", "rm -rf /"),
            echo_call("c2", "explode"),
            echo_call("c3", "hi"),
            text("done"),
        ],
        vec![guard_bash()],
    );
    r.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        stored(&r),
        [
            "user:go",
            "assistant:",
            "toolResult:Recursive deletion is disabled.",
            "assistant:",
            "toolResult:policy check failed",
            "assistant:",
            "toolResult:echo:checked hi",
            "assistant:done"
        ]
    );
    let errors: Vec<bool> = r
        .session
        .messages()
        .iter()
        .filter_map(|m| match m {
            AgentMessage::Llm(Message::ToolResult(t)) => Some(t.is_error),
            _ => None,
        })
        .collect();
    assert_eq!(errors, [true, true, false]);
}

#[tokio::test]
async fn tool_result_patches_the_result_and_message_end_replaces_the_assistant() {
    let r = rig(
        vec![echo_call("c1", "x"), text("final answer")],
        vec![ext("rewrite.ts", |pi| {
            pi.on::<ToolResultEvent, _>(|e, _| {
                Box::pin(async move {
                    Ok(Some(ToolResultPatch {
                        content: Some(vec![UserContent::text(format!(
                            "[{}] patched",
                            e.tool_name
                        ))]),
                        details: Some(json!({"patched": true})),
                        ..Default::default()
                    }))
                })
            });
            pi.on::<MessageEndEvent, _>(|e, _| {
                Box::pin(async move {
                    let AgentMessage::Llm(Message::Assistant(a)) = &e.message else {
                        return Ok(None);
                    };
                    if a.content.is_empty()
                        || message_text(&Message::Assistant(a.clone())).is_empty()
                    {
                        return Ok(None);
                    }
                    let mut a = a.clone();
                    a.content = vec![AssistantContent::text("redacted")];
                    Ok(Some(MessageEndResult {
                        message: Message::Assistant(a).into(),
                    }))
                })
            });
            Ok(())
        })],
    );
    r.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        stored(&r),
        [
            "user:go",
            "assistant:",
            "toolResult:[echo] patched",
            "assistant:redacted"
        ]
    );
    let details = r.session.messages().iter().find_map(|m| match m {
        AgentMessage::Llm(Message::ToolResult(t)) => t.details.clone(),
        _ => None,
    });
    assert_eq!(details, Some(json!({"patched": true})));
    let last_end = r.events.lock().unwrap().iter().rev().find_map(|e| match e {
        AgentSessionEvent::Agent(a) => match &**a {
            pi_agent_core::AgentEvent::MessageEnd { message } => Some(message.clone()),
            _ => None,
        },
        _ => None,
    });
    match last_end {
        Some(AgentMessage::Llm(m)) => assert_eq!(message_text(&m), "redacted"),
        other => panic!("no assistant message_end: {other:?}"),
    }
}

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
    r.session.bind_hooks("startup", None).await;
    r.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    r.session.shutdown("quit", None).await;
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
