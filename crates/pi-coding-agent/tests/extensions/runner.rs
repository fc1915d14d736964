//! The extension runner on synthetic payloads: dispatch order, error and panic isolation,
//! the error channel per mode, and the chained prompt-side events (input,
//! before_agent_start, context, message_end). Ports the reference's
//! `extensions-runner.test.ts` and `extensions-input-event.test.ts` where they apply.

use crate::extensions_support;

use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_ai::ImageContent;
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use serde_json::{Value, json};

use extensions_support::*;

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
                            message: AgentMessage::custom(custom),
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
