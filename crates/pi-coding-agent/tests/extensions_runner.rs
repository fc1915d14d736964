//! The extension runner on synthetic payloads: dispatch order, chaining, cancel results,
//! error and panic isolation, the error channel per mode (spec §2.1–2.6). Ports the
//! reference's `extensions-runner.test.ts` and `extensions-input-event.test.ts` where they
//! apply.

use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_ai::{ImageContent, Message, UserContent, UserMessage, UserMessageContent};
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use serde_json::{Value, json};

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn entries(l: &Log) -> Vec<String> {
    l.lock().unwrap().clone()
}

/// A runner over `(path, factory)` pairs, with an error listener recording
/// `path|event|error`.
fn runner(exts: Vec<(&str, Factory)>) -> (ExtensionRunner, Log) {
    let mut b = ExtensionRunner::builder("/work/project");
    for (path, f) in exts {
        b = b.extension(FnExtension::new(path, f));
    }
    let r = b.build();
    let errors = log();
    let e = errors.clone();
    r.on_error(Arc::new(move |rec: &ExtensionErrorRecord| {
        e.lock().unwrap().push(format!(
            "{}|{}|{}",
            rec.extension_path, rec.event, rec.error
        ));
    }));
    (r, errors)
}

type Factory = Box<dyn Fn(&mut ExtensionApi<'_>) -> Result<(), HandlerError> + Send + Sync>;

fn ext(
    f: impl Fn(&mut ExtensionApi<'_>) -> Result<(), HandlerError> + Send + Sync + 'static,
) -> Factory {
    Box::new(f)
}

fn user(text: &str) -> AgentMessage {
    Message::User(UserMessage::text(text)).into()
}

fn text_of(m: &AgentMessage) -> String {
    match m {
        AgentMessage::Llm(Message::User(u)) => match &u.content {
            UserMessageContent::Text(t) => t.clone(),
            UserMessageContent::Blocks(b) => b
                .iter()
                .filter_map(|c| match c {
                    UserContent::Text(t) => Some(t.text.clone()),
                    _ => None,
                })
                .collect(),
        },
        other => other.role().to_owned(),
    }
}

fn image(data: &str, mime: &str) -> ImageContent {
    serde_json::from_value(json!({"type":"image","data":data,"mimeType":mime})).unwrap()
}

// ----- dispatch order and isolation ----------------------------------------------------------

#[tokio::test]
async fn handlers_run_in_load_order_then_registration_order() {
    let l = log();
    let (a, b) = (l.clone(), l.clone());
    let (r, _) = runner(vec![
        (
            "a.ts",
            ext(move |pi| {
                for i in 1..=2 {
                    let l = a.clone();
                    pi.on::<AgentStartEvent, _>(move |_, _| {
                        let l = l.clone();
                        Box::pin(async move {
                            l.lock().unwrap().push(format!("a{i}"));
                            Ok(None)
                        })
                    });
                }
                Ok(())
            }),
        ),
        (
            "b.ts",
            ext(move |pi| {
                let l = b.clone();
                pi.on::<AgentStartEvent, _>(move |_, _| {
                    let l = l.clone();
                    Box::pin(async move {
                        l.lock().unwrap().push("b1".into());
                        Ok(None)
                    })
                });
                Ok(())
            }),
        ),
    ]);
    r.emit(AgentStartEvent).await;
    assert_eq!(entries(&l), ["a1", "a2", "b1"]);
    assert!(r.has_handlers::<AgentStartEvent>());
    assert!(!r.has_handlers::<AgentEndEvent>());
    assert_eq!(r.extension_paths(), ["a.ts", "b.ts"]);
}

#[tokio::test]
async fn failing_and_panicking_observers_are_reported_and_later_handlers_still_run() {
    let l = log();
    let c = l.clone();
    let (r, errors) = runner(vec![
        (
            "ext/fails.ts",
            ext(|pi| {
                pi.on::<AgentEndEvent, _>(|_, _| Box::pin(async { Err("boom".into()) }));
                Ok(())
            }),
        ),
        (
            "ext/panics.ts",
            ext(|pi| {
                pi.on::<AgentEndEvent, _>(|_, _| Box::pin(async { panic!("kaboom") }));
                // A panic before the future is even built is isolated too.
                pi.on::<AgentEndEvent, _>(|_, _| panic!("eager"));
                Ok(())
            }),
        ),
        (
            "ext/ok.ts",
            ext(move |pi| {
                let l = c.clone();
                pi.on::<AgentEndEvent, _>(move |e, _| {
                    let l = l.clone();
                    Box::pin(async move {
                        l.lock().unwrap().push(format!("ok:{}", e.messages.len()));
                        Ok(None)
                    })
                });
                Ok(())
            }),
        ),
    ]);
    r.emit(AgentEndEvent {
        messages: vec![user("x")],
    })
    .await;
    assert_eq!(entries(&l), ["ok:1"]);
    assert_eq!(
        entries(&errors),
        [
            "ext/fails.ts|agent_end|boom",
            "ext/panics.ts|agent_end|kaboom",
            "ext/panics.ts|agent_end|eager"
        ]
    );
}

/// Port of "calls error listeners when handler throws".
#[tokio::test]
async fn context_handler_error_reaches_the_error_listeners() {
    let (r, errors) = runner(vec![(
        "throws.ts",
        ext(|pi| {
            pi.on::<ContextEvent, _>(|_, _| Box::pin(async { Err("Handler error!".into()) }));
            Ok(())
        }),
    )]);
    let out = r.emit_context(&[]).await;
    assert!(out.is_empty());
    assert_eq!(entries(&errors), ["throws.ts|context|Handler error!"]);
}

// ----- the error channel per mode ------------------------------------------------------------

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buf {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

async fn channel_output(mode: Mode) -> String {
    let r = ExtensionRunner::builder("/p")
        .mode(mode)
        .extension(FnExtension::new(
            "/home/u/.pi/agent/extensions/bad.ts",
            |pi| {
                pi.on::<TurnStartEvent, _>(|_, _| {
                    Box::pin(async { Err("nope \"quoted\"".into()) })
                });
                Ok(())
            },
        ))
        .build();
    let buf = Buf::default();
    r.on_error(mode_error_listener(mode, Box::new(buf.clone())));
    r.emit(TurnStartEvent {
        turn_index: 0,
        timestamp: 1,
    })
    .await;
    buf.text()
}

#[tokio::test]
async fn error_channel_print_and_json_write_the_stderr_line() {
    let line = "Extension error (/home/u/.pi/agent/extensions/bad.ts): nope \"quoted\"\n";
    assert_eq!(channel_output(Mode::Print).await, line);
    assert_eq!(channel_output(Mode::Json).await, line);
}

#[tokio::test]
async fn error_channel_rpc_writes_an_extension_error_record() {
    assert_eq!(
        channel_output(Mode::Rpc).await,
        "{\"type\":\"extension_error\",\"extensionPath\":\"/home/u/.pi/agent/extensions/bad.ts\",\"event\":\"turn_start\",\"error\":\"nope \\\"quoted\\\"\"}\n"
    );
    assert_eq!(channel_output(Mode::Tui).await, "");
}

// ----- input (port of extensions-input-event.test.ts) ----------------------------------------

fn input(text: &str, images: Option<Vec<ImageContent>>) -> InputEvent {
    InputEvent {
        text: text.into(),
        images,
        source: InputSource::Interactive,
        streaming_behavior: None,
    }
}

#[tokio::test]
async fn input_continue_when_no_handlers_none_or_explicit_continue() {
    let (r, _) = runner(vec![]);
    assert_eq!(r.emit_input(input("x", None)).await, InputResult::Continue);
    let (r, _) = runner(vec![(
        "e0.ts",
        ext(|pi| {
            pi.on::<InputEvent, _>(|_, _| Box::pin(async { Ok(None) }));
            Ok(())
        }),
    )]);
    assert_eq!(r.emit_input(input("x", None)).await, InputResult::Continue);
    let (r, _) = runner(vec![(
        "e0.ts",
        ext(|pi| {
            pi.on::<InputEvent, _>(|_, _| Box::pin(async { Ok(Some(InputResult::Continue)) }));
            Ok(())
        }),
    )]);
    assert_eq!(r.emit_input(input("x", None)).await, InputResult::Continue);
    assert!(r.has_handlers::<InputEvent>());
}

#[tokio::test]
async fn input_transform_keeps_images_when_omitted_and_replaces_them_when_given() {
    let (r, _) = runner(vec![(
        "e0.ts",
        ext(|pi| {
            pi.on::<InputEvent, _>(|e, _| {
                Box::pin(async move {
                    Ok(Some(InputResult::Transform {
                        text: format!("T:{}", e.text),
                        images: None,
                    }))
                })
            });
            Ok(())
        }),
    )]);
    let imgs = vec![image("orig", "image/png")];
    assert_eq!(
        r.emit_input(input("hi", Some(imgs.clone()))).await,
        InputResult::Transform {
            text: "T:hi".into(),
            images: Some(imgs)
        }
    );

    let (r, _) = runner(vec![(
        "e0.ts",
        ext(|pi| {
            pi.on::<InputEvent, _>(|_, _| {
                Box::pin(async {
                    Ok(Some(InputResult::Transform {
                        text: "X".into(),
                        images: Some(vec![image("new", "image/jpeg")]),
                    }))
                })
            });
            Ok(())
        }),
    )]);
    assert_eq!(
        r.emit_input(input("hi", Some(vec![image("orig", "image/png")])))
            .await,
        InputResult::Transform {
            text: "X".into(),
            images: Some(vec![image("new", "image/jpeg")])
        }
    );
}

#[tokio::test]
async fn input_transforms_chain_across_handlers() {
    let suffix = |s: &'static str| {
        ext(move |pi| {
            pi.on::<InputEvent, _>(move |e, _| {
                Box::pin(async move {
                    Ok(Some(InputResult::Transform {
                        text: format!("{}{s}", e.text),
                        images: None,
                    }))
                })
            });
            Ok(())
        })
    };
    let (r, _) = runner(vec![("e0.ts", suffix("[1]")), ("e1.ts", suffix("[2]"))]);
    assert_eq!(
        r.emit_input(input("X", None)).await,
        InputResult::Transform {
            text: "X[1][2]".into(),
            images: None
        }
    );
}

#[tokio::test]
async fn input_handled_short_circuits_later_handlers() {
    let l = log();
    let c = l.clone();
    let (r, _) = runner(vec![
        (
            "e0.ts",
            ext(|pi| {
                pi.on::<InputEvent, _>(|_, _| Box::pin(async { Ok(Some(InputResult::Handled)) }));
                Ok(())
            }),
        ),
        (
            "e1.ts",
            ext(move |pi| {
                let l = c.clone();
                pi.on::<InputEvent, _>(move |_, _| {
                    let l = l.clone();
                    Box::pin(async move {
                        l.lock().unwrap().push("ran".into());
                        Ok(None)
                    })
                });
                Ok(())
            }),
        ),
    ]);
    assert_eq!(r.emit_input(input("X", None)).await, InputResult::Handled);
    assert!(entries(&l).is_empty());
}

#[tokio::test]
async fn input_passes_the_source_and_catches_errors() {
    let l = log();
    let c = l.clone();
    let (r, errors) = runner(vec![
        (
            "e0.ts",
            ext(move |pi| {
                let l = c.clone();
                pi.on::<InputEvent, _>(move |e, _| {
                    let l = l.clone();
                    Box::pin(async move {
                        l.lock()
                            .unwrap()
                            .push(serde_json::to_string(&e.source).unwrap());
                        Ok(None)
                    })
                });
                Ok(())
            }),
        ),
        (
            "e1.ts",
            ext(|pi| {
                pi.on::<InputEvent, _>(|_, _| Box::pin(async { Err("boom".into()) }));
                Ok(())
            }),
        ),
    ]);
    for source in [
        InputSource::Interactive,
        InputSource::Rpc,
        InputSource::Extension,
    ] {
        let mut ev = input("x", None);
        ev.source = source;
        assert_eq!(r.emit_input(ev).await, InputResult::Continue);
    }
    assert_eq!(entries(&l), ["\"interactive\"", "\"rpc\"", "\"extension\""]);
    assert_eq!(entries(&errors), ["e1.ts|input|boom"; 3]);
}

// ----- before_agent_start ----------------------------------------------------------------

fn bas(prompt: &str, system: &str) -> BeforeAgentStartEvent {
    BeforeAgentStartEvent {
        prompt: prompt.into(),
        images: None,
        system_prompt: system.into(),
        system_prompt_options: json!({}),
    }
}

#[tokio::test]
async fn before_agent_start_accumulates_messages_and_chains_the_system_prompt() {
    let seen = log();
    let s = seen.clone();
    let (r, errors) = runner(vec![
        (
            "a.ts",
            ext(|pi| {
                pi.on::<BeforeAgentStartEvent, _>(|e, _| {
                    Box::pin(async move {
                        Ok(Some(BeforeAgentStartResult {
                            message: Some(CustomMessageSpec {
                                custom_type: "a".into(),
                                content: json!("from a"),
                                display: true,
                                details: None,
                            }),
                            system_prompt: Some(format!("{} +A", e.system_prompt)),
                        }))
                    })
                });
                Ok(())
            }),
        ),
        (
            "b.ts",
            ext(|pi| {
                pi.on::<BeforeAgentStartEvent, _>(|_, _| Box::pin(async { Err("bad".into()) }));
                Ok(())
            }),
        ),
        (
            "c.ts",
            ext(move |pi| {
                let s = s.clone();
                pi.on::<BeforeAgentStartEvent, _>(move |e, ctx| {
                    let s = s.clone();
                    Box::pin(async move {
                        s.lock().unwrap().push(format!(
                            "{}|{}|{}",
                            e.prompt,
                            e.system_prompt,
                            ctx.system_prompt()
                        ));
                        Ok(Some(BeforeAgentStartResult {
                            message: Some(CustomMessageSpec {
                                custom_type: "c".into(),
                                content: json!([{"type":"text","text":"from c"}]),
                                display: false,
                                details: Some(json!({"k":1})),
                            }),
                            system_prompt: None,
                        }))
                    })
                });
                Ok(())
            }),
        ),
    ]);
    let out = r
        .emit_before_agent_start(bas("hello", "BASE"))
        .await
        .unwrap();
    assert_eq!(entries(&seen), ["hello|BASE +A|BASE +A"]);
    assert_eq!(out.system_prompt.as_deref(), Some("BASE +A"));
    assert_eq!(
        out.messages
            .iter()
            .map(|m| m.custom_type.as_str())
            .collect::<Vec<_>>(),
        ["a", "c"]
    );
    assert_eq!(entries(&errors), ["b.ts|before_agent_start|bad"]);
}

#[tokio::test]
async fn before_agent_start_without_results_is_none() {
    let (r, _) = runner(vec![(
        "a.ts",
        ext(|pi| {
            pi.on::<BeforeAgentStartEvent, _>(|_, _| Box::pin(async { Ok(None) }));
            Ok(())
        }),
    )]);
    assert_eq!(r.emit_before_agent_start(bas("p", "S")).await, None);
}

// ----- context ------------------------------------------------------------------------------

#[tokio::test]
async fn context_gets_a_copy_chained_through_handlers_and_history_is_untouched() {
    let (r, errors) = runner(vec![
        (
            "drop-first.ts",
            ext(|pi| {
                pi.on::<ContextEvent, _>(|e, _| {
                    Box::pin(async move {
                        let mut m = e.messages.clone();
                        m.remove(0);
                        Ok(Some(ContextResult { messages: m }))
                    })
                });
                Ok(())
            }),
        ),
        (
            "mutate-then-fail.ts",
            ext(|pi| {
                pi.on::<ContextEvent, _>(|e, _| {
                    Box::pin(async move {
                        e.messages.clear();
                        Err("late".into())
                    })
                });
                Ok(())
            }),
        ),
        (
            "append.ts",
            ext(|pi| {
                pi.on::<ContextEvent, _>(|e, _| {
                    Box::pin(async move {
                        let mut m = e.messages.clone();
                        m.push(user("added"));
                        Ok(Some(ContextResult { messages: m }))
                    })
                });
                Ok(())
            }),
        ),
    ]);
    let history = vec![user("one"), user("two")];
    let out = r.emit_context(&history).await;
    // pi passes the same (mutated) array on after a throw: the in-place clear sticks.
    assert_eq!(out.iter().map(text_of).collect::<Vec<_>>(), ["added"]);
    assert_eq!(
        history.iter().map(text_of).collect::<Vec<_>>(),
        ["one", "two"]
    );
    assert_eq!(entries(&errors), ["mutate-then-fail.ts|context|late"]);
}

// ----- message_end ------------------------------------------------------------------------------

#[tokio::test]
async fn message_end_replacement_is_chained_and_a_role_change_is_refused() {
    let (r, errors) = runner(vec![
        (
            "upper.ts",
            ext(|pi| {
                pi.on::<MessageEndEvent, _>(|e, _| {
                    Box::pin(async move {
                        Ok(Some(MessageEndResult {
                            message: user(&text_of(&e.message).to_uppercase()),
                        }))
                    })
                });
                Ok(())
            }),
        ),
        (
            "role.ts",
            ext(|pi| {
                pi.on::<MessageEndEvent, _>(|_, _| {
                    Box::pin(async {
                        let custom: serde_json::Map<String, Value> =
                            serde_json::from_value(json!({"role":"custom","customType":"x"}))
                                .unwrap();
                        Ok(Some(MessageEndResult {
                            message: AgentMessage::Custom(custom),
                        }))
                    })
                });
                Ok(())
            }),
        ),
        (
            "suffix.ts",
            ext(|pi| {
                pi.on::<MessageEndEvent, _>(|e, _| {
                    Box::pin(async move {
                        Ok(Some(MessageEndResult {
                            message: user(&format!("{}!", text_of(&e.message))),
                        }))
                    })
                });
                Ok(())
            }),
        ),
    ]);
    let out = r.emit_message_end(user("hi")).await.unwrap();
    assert_eq!(text_of(&out), "HI!");
    assert_eq!(
        entries(&errors),
        ["role.ts|message_end|message_end handlers must return a message with the same role"]
    );
    let (r, _) = runner(vec![(
        "none.ts",
        ext(|pi| {
            pi.on::<MessageEndEvent, _>(|_, _| Box::pin(async { Ok(None) }));
            Ok(())
        }),
    )]);
    assert_eq!(r.emit_message_end(user("hi")).await, None);
}

// ----- tool_call ---------------------------------------------------------------------------------

fn tool_call(cmd: &str) -> ToolCallEvent {
    ToolCallEvent {
        tool_call_id: "call_1".into(),
        tool_name: "bash".into(),
        input: json!({"command": cmd}),
    }
}

#[tokio::test]
async fn tool_call_input_changes_are_seen_by_later_handlers_and_the_first_block_wins() {
    let l = log();
    let (c, d) = (l.clone(), l.clone());
    let (r, errors) = runner(vec![
        (
            "prefix.ts",
            ext(|pi| {
                pi.on::<ToolCallEvent, _>(|e, _| {
                    Box::pin(async move {
                        let cmd = e.input["command"].as_str().unwrap_or_default().to_owned();
                        e.input["command"] = json!(format!("source ~/.profile\n{cmd}"));
                        Ok(None)
                    })
                });
                Ok(())
            }),
        ),
        (
            "guard.ts",
            ext(move |pi| {
                let l = c.clone();
                pi.on::<ToolCallEvent, _>(move |e, _| {
                    let l = l.clone();
                    Box::pin(async move {
                        let cmd = e.input["command"].as_str().unwrap_or_default().to_owned();
                        l.lock().unwrap().push(cmd.clone());
                        Ok(cmd.contains("rm -rf").then(|| ToolCallResult {
                            block: true,
                            reason: Some("Dangerous command has been blocked.".into()),
                            terminate: Some(true),
                        }))
                    })
                });
                Ok(())
            }),
        ),
        (
            "after.ts",
            ext(move |pi| {
                let l = d.clone();
                pi.on::<ToolCallEvent, _>(move |_, _| {
                    let l = l.clone();
                    Box::pin(async move {
                        l.lock().unwrap().push("after".into());
                        Ok(Some(ToolCallResult::default()))
                    })
                });
                Ok(())
            }),
        ),
    ]);
    let out = r.emit_tool_call(tool_call("rm -rf /")).await.unwrap();
    assert_eq!(
        out.result,
        Some(ToolCallResult {
            block: true,
            reason: Some("Dangerous command has been blocked.".into()),
            terminate: Some(true)
        })
    );
    assert_eq!(entries(&l), ["source ~/.profile\nrm -rf /"]);

    let out = r.emit_tool_call(tool_call("ls")).await.unwrap();
    assert_eq!(out.result, Some(ToolCallResult::default()));
    assert_eq!(out.input, json!({"command": "source ~/.profile\nls"}));
    assert!(entries(&errors).is_empty());
}

#[tokio::test]
async fn a_failing_tool_call_handler_blocks_without_an_extension_error() {
    let l = log();
    let c = l.clone();
    let later = move |pi: &mut ExtensionApi<'_>| {
        let l = c.clone();
        pi.on::<ToolCallEvent, _>(move |_, _| {
            let l = l.clone();
            Box::pin(async move {
                l.lock().unwrap().push("later".into());
                Ok(None)
            })
        });
        Ok(())
    };
    let (r, errors) = runner(vec![
        (
            "fails.ts",
            ext(|pi| {
                pi.on::<ToolCallEvent, _>(|_, _| {
                    Box::pin(async { Err("policy service down".into()) })
                });
                Ok(())
            }),
        ),
        ("later.ts", ext(later.clone())),
    ]);
    assert_eq!(
        r.emit_tool_call(tool_call("ls")).await,
        Err("policy service down".to_owned())
    );
    let (r2, errors2) = runner(vec![
        (
            "panics.ts",
            ext(|pi| {
                pi.on::<ToolCallEvent, _>(|_, _| Box::pin(async { panic!("oops") }));
                Ok(())
            }),
        ),
        ("later.ts", ext(later)),
    ]);
    assert_eq!(
        r2.emit_tool_call(tool_call("ls")).await,
        Err("Extension failed, blocking execution: oops".to_owned())
    );
    assert!(entries(&l).is_empty());
    assert!(entries(&errors).is_empty() && entries(&errors2).is_empty());
}

// ----- tool_result -------------------------------------------------------------------------------

fn tool_result_event() -> ToolResultEvent {
    ToolResultEvent {
        tool_call_id: "c1".into(),
        tool_name: "read".into(),
        input: json!({"path":"a.ts"}),
        content: vec![UserContent::text("line a\nline b")],
        details: None,
        is_error: false,
        usage: None,
    }
}

#[tokio::test]
async fn tool_result_patches_chain_and_untouched_results_stay_none() {
    let (r, errors) = runner(vec![
        (
            "numbers.ts",
            ext(|pi| {
                pi.on::<ToolResultEvent, _>(|e, _| {
                    Box::pin(async move {
                        let text: String = e
                            .content
                            .iter()
                            .filter_map(|c| match c {
                                UserContent::Text(t) => Some(t.text.clone()),
                                _ => None,
                            })
                            .collect::<Vec<_>>()
                            .join("\n");
                        let numbered = text
                            .split('\n')
                            .enumerate()
                            .map(|(i, l)| format!("{}: {l}", i + 1))
                            .collect::<Vec<_>>()
                            .join("\n");
                        Ok(Some(ToolResultPatch {
                            content: Some(vec![UserContent::text(numbered)]),
                            ..Default::default()
                        }))
                    })
                });
                Ok(())
            }),
        ),
        (
            "flag.ts",
            ext(|pi| {
                pi.on::<ToolResultEvent, _>(|e, _| {
                    Box::pin(async move {
                        let first = match &e.content[0] {
                            UserContent::Text(t) => t.text.clone(),
                            _ => String::new(),
                        };
                        Ok(Some(ToolResultPatch {
                            details: Some(json!({"saw": first})),
                            is_error: Some(true),
                            ..Default::default()
                        }))
                    })
                });
                Ok(())
            }),
        ),
    ]);
    let patch = r.emit_tool_result(tool_result_event()).await.unwrap();
    assert_eq!(
        patch.content,
        Some(vec![UserContent::text("1: line a\n2: line b")])
    );
    assert_eq!(patch.details, Some(json!({"saw": "1: line a\n2: line b"})));
    assert_eq!(patch.is_error, Some(true));
    assert!(entries(&errors).is_empty());

    let (r, _) = runner(vec![(
        "noop.ts",
        ext(|pi| {
            pi.on::<ToolResultEvent, _>(|_, _| {
                Box::pin(async { Ok(Some(ToolResultPatch::default())) })
            });
            Ok(())
        }),
    )]);
    assert_eq!(r.emit_tool_result(tool_result_event()).await, None);
}

// ----- provider hooks ------------------------------------------------------------------------

#[tokio::test]
async fn before_provider_headers_mutates_in_place_and_before_provider_request_replaces() {
    let (r, errors) = runner(vec![(
        "h.ts",
        ext(|pi| {
            pi.on::<BeforeProviderHeadersEvent, _>(|e, _| {
                Box::pin(async move {
                    e.set("X-Trace", "abc");
                    e.delete("x-remove-me");
                    Ok(None)
                })
            });
            pi.on::<BeforeProviderHeadersEvent, _>(|e, _| {
                Box::pin(async move {
                    let seen = e.get("x-trace").unwrap_or_default().to_owned();
                    e.set("X-Seen", seen);
                    Err("after mutating".into())
                })
            });
            pi.on::<BeforeProviderRequestEvent, _>(|e, _| {
                Box::pin(async move {
                    let mut p = e.payload.clone();
                    p["temperature"] = json!(0);
                    Ok(Some(p))
                })
            });
            pi.on::<BeforeProviderRequestEvent, _>(|_, _| Box::pin(async { Ok(None) }));
            pi.on::<BeforeProviderRequestEvent, _>(|e, _| {
                Box::pin(async move {
                    assert_eq!(e.payload["temperature"], json!(0));
                    Err("observer failed".into())
                })
            });
            Ok(())
        }),
    )]);
    let headers = r
        .emit_before_provider_headers(vec![("x-remove-me".into(), Some("1".into()))])
        .await;
    assert_eq!(
        headers,
        vec![
            ("x-remove-me".to_owned(), None),
            ("X-Trace".to_owned(), Some("abc".to_owned())),
            ("X-Seen".to_owned(), Some("abc".to_owned())),
        ]
    );
    let payload = r.emit_before_provider_request(json!({"model":"m"})).await;
    assert_eq!(payload, json!({"model":"m","temperature":0}));
    assert_eq!(
        entries(&errors),
        [
            "h.ts|before_provider_headers|after mutating",
            "h.ts|before_provider_request|observer failed"
        ]
    );
}

// ----- session_before_* -------------------------------------------------------------------------

#[tokio::test]
async fn session_before_events_return_at_once_on_cancel_and_keep_the_last_result() {
    let l = log();
    let c = l.clone();
    let (r, errors) = runner(vec![
        (
            "a.ts",
            ext(|pi| {
                pi.on::<SessionBeforeForkEvent, _>(|_, _| {
                    Box::pin(async {
                        Ok(Some(ForkResult {
                            cancel: false,
                            skip_conversation_restore: Some(true),
                        }))
                    })
                });
                pi.on::<SessionBeforeSwitchEvent, _>(|_, _| Box::pin(async { Err("x".into()) }));
                pi.on::<SessionBeforeSwitchEvent, _>(|e, _| {
                    Box::pin(async move {
                        Ok(Some(CancelResult {
                            cancel: e.reason == SwitchReason::New,
                        }))
                    })
                });
                Ok(())
            }),
        ),
        (
            "b.ts",
            ext(move |pi| {
                let l = c.clone();
                pi.on::<SessionBeforeSwitchEvent, _>(move |_, _| {
                    let l = l.clone();
                    Box::pin(async move {
                        l.lock().unwrap().push("b ran".into());
                        Ok(None)
                    })
                });
                Ok(())
            }),
        ),
    ]);
    let fork = r
        .emit_before(SessionBeforeForkEvent {
            entry_id: "e1".into(),
            position: ForkPosition::Before,
        })
        .await;
    assert_eq!(
        fork,
        Some(ForkResult {
            cancel: false,
            skip_conversation_restore: Some(true)
        })
    );
    let cancelled = r
        .emit_before(SessionBeforeSwitchEvent {
            reason: SwitchReason::New,
            target_session_file: None,
        })
        .await;
    assert_eq!(cancelled, Some(CancelResult { cancel: true }));
    assert!(entries(&l).is_empty(), "a cancel stops dispatch");
    let kept = r
        .emit_before(SessionBeforeSwitchEvent {
            reason: SwitchReason::Resume,
            target_session_file: Some("/s.jsonl".into()),
        })
        .await;
    assert_eq!(kept, Some(CancelResult { cancel: false }));
    assert_eq!(entries(&l), ["b ran"]);
    assert_eq!(
        entries(&errors),
        [
            "a.ts|session_before_switch|x",
            "a.ts|session_before_switch|x"
        ]
    );
}

#[test]
fn session_compact_failed_and_lifecycle_payloads_use_pis_json_names() {
    let failed = SessionCompactFailedEvent {
        reason: CompactReason::Overflow,
        error_message: Some("Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.".into()),
        aborted: false,
        will_retry: false,
        from_extension: false,
    };
    assert_eq!(
        serde_json::to_value(&failed).unwrap(),
        json!({"reason":"overflow","errorMessage":"Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.","aborted":false,"willRetry":false,"fromExtension":false})
    );
    let aborted = SessionCompactFailedEvent {
        reason: CompactReason::Manual,
        error_message: None,
        aborted: true,
        will_retry: false,
        from_extension: true,
    };
    assert_eq!(
        serde_json::to_value(&aborted).unwrap(),
        json!({"reason":"manual","aborted":true,"willRetry":false,"fromExtension":true})
    );
    assert_eq!(
        serde_json::to_value(TurnStartEvent {
            turn_index: 2,
            timestamp: 1700000000000
        })
        .unwrap(),
        json!({"turnIndex":2,"timestamp":1700000000000i64})
    );
    assert_eq!(
        serde_json::to_value(UiPromptStartEvent {
            reason: "ui_prompt",
            kind: UiPromptKind::Confirm,
            title: None
        })
        .unwrap(),
        json!({"reason":"ui_prompt","kind":"confirm"})
    );
    assert_eq!(
        serde_json::to_value(SessionStartEvent {
            reason: SessionStartReason::Fork,
            previous_session_file: Some("/a.jsonl".into())
        })
        .unwrap(),
        json!({"reason":"fork","previousSessionFile":"/a.jsonl"})
    );
}

#[test]
fn every_event_has_pis_type_name() {
    let names = [
        ProjectTrustEvent::NAME,
        SessionStartEvent::NAME,
        ResourcesDiscoverEvent::NAME,
        SessionInfoChangedEvent::NAME,
        SessionBeforeSwitchEvent::NAME,
        SessionBeforeForkEvent::NAME,
        SessionBeforeCompactEvent::NAME,
        SessionCompactEvent::NAME,
        SessionCompactFailedEvent::NAME,
        SessionShutdownEvent::NAME,
        SessionBeforeTreeEvent::NAME,
        SessionTreeEvent::NAME,
        InputEvent::NAME,
        BeforeAgentStartEvent::NAME,
        AgentStartEvent::NAME,
        AgentEndEvent::NAME,
        AgentSettledEvent::NAME,
        MessageStartEvent::NAME,
        MessageUpdateEvent::NAME,
        ToolExecutionStartEvent::NAME,
        ToolExecutionUpdateEvent::NAME,
        ToolExecutionEndEvent::NAME,
        TurnStartEvent::NAME,
        TurnEndEvent::NAME,
        MessageEndEvent::NAME,
        ContextEvent::NAME,
        BeforeProviderHeadersEvent::NAME,
        BeforeProviderRequestEvent::NAME,
        AfterProviderResponseEvent::NAME,
        ToolCallEvent::NAME,
        ToolResultEvent::NAME,
        UserBashEvent::NAME,
        ModelSelectEvent::NAME,
        ThinkingLevelSelectEvent::NAME,
        UiPromptStartEvent::NAME,
        UiPromptEndEvent::NAME,
    ];
    assert_eq!(
        names.join(","),
        "project_trust,session_start,resources_discover,session_info_changed,session_before_switch,session_before_fork,session_before_compact,session_compact,session_compact_failed,session_shutdown,session_before_tree,session_tree,input,before_agent_start,agent_start,agent_end,agent_settled,message_start,message_update,tool_execution_start,tool_execution_update,tool_execution_end,turn_start,turn_end,message_end,context,before_provider_headers,before_provider_request,after_provider_response,tool_call,tool_result,user_bash,model_select,thinking_level_select,ui_prompt_start,ui_prompt_end"
    );
}
