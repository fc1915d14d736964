//! The rest of the extension surface on synthetic payloads: user_bash, project_trust,
//! resources_discover, ui_prompt_*, loading, flags, commands, the `pi` request queue,
//! staleness and the event bus.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use pi_coding_agent::tools::bash::user::BashResult;
use serde_json::json;

type Log = Arc<Mutex<Vec<String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn entries(l: &Log) -> Vec<String> {
    l.lock().unwrap().clone()
}

fn recording(r: &ExtensionRunner) -> Log {
    let errors = log();
    let e = errors.clone();
    r.on_error(Arc::new(move |rec: &ExtensionErrorRecord| {
        e.lock().unwrap().push(format!(
            "{}|{}|{}",
            rec.extension_path, rec.event, rec.error
        ));
    }));
    errors
}

#[tokio::test]
async fn user_bash_first_result_wins() {
    let r = ExtensionRunner::builder("/p")
        .extension(FnExtension::new("a.ts", |pi| {
            pi.on::<UserBashEvent, _>(|_, _| Box::pin(async { Err("a failed".into()) }));
            pi.on::<UserBashEvent, _>(|_, _| Box::pin(async { Ok(None) }));
            Ok(())
        }))
        .extension(FnExtension::new("b.ts", |pi| {
            pi.on::<UserBashEvent, _>(|e, _| {
                Box::pin(async move {
                    Ok(Some(UserBashResult {
                        result: BashResult {
                            output: format!("ran {} in {}", e.command, e.cwd),
                            exit_code: Some(0),
                            ..Default::default()
                        },
                    }))
                })
            });
            Ok(())
        }))
        .extension(FnExtension::new("c.ts", |pi| {
            pi.on::<UserBashEvent, _>(|_, _| Box::pin(async { panic!("never reached") }));
            Ok(())
        }))
        .build();
    let errors = recording(&r);
    let out = r
        .emit_user_bash(UserBashEvent {
            command: "ls".into(),
            exclude_from_context: true,
            cwd: "/p".into(),
        })
        .await
        .unwrap();
    assert_eq!(out.result.output, "ran ls in /p");
    assert_eq!(entries(&errors), ["a.ts|user_bash|a failed"]);
}

#[tokio::test]
async fn project_trust_first_yes_or_no_wins_and_errors_are_collected_not_reported() {
    let answer = |t: TrustDecision, remember: Option<bool>| {
        move |pi: &mut ExtensionApi<'_>| {
            pi.on::<ProjectTrustEvent, _>(move |_, _| {
                Box::pin(async move {
                    Ok(Some(ProjectTrustResult {
                        trusted: t,
                        remember,
                    }))
                })
            });
            Ok(())
        }
    };
    let r = ExtensionRunner::builder("/p")
        .extension(FnExtension::new(
            "undecided.ts",
            answer(TrustDecision::Undecided, None),
        ))
        .extension(FnExtension::new("fails.ts", |pi| {
            pi.on::<ProjectTrustEvent, _>(|_, _| Box::pin(async { Err("no network".into()) }));
            Ok(())
        }))
        .extension(FnExtension::new(
            "no.ts",
            answer(TrustDecision::No, Some(true)),
        ))
        .extension(FnExtension::new("yes.ts", answer(TrustDecision::Yes, None)))
        .build();
    let errors = recording(&r);
    let (result, collected) = r
        .emit_project_trust(ProjectTrustEvent { cwd: "/p".into() })
        .await;
    assert_eq!(
        result,
        Some(ProjectTrustResult {
            trusted: TrustDecision::No,
            remember: Some(true)
        })
    );
    assert_eq!(
        collected,
        vec![ExtensionErrorRecord {
            extension_path: "fails.ts".into(),
            event: "project_trust".into(),
            error: "no network".into()
        }]
    );
    assert!(entries(&errors).is_empty());
}

#[tokio::test]
async fn resources_discover_accumulates_paths_with_their_extension() {
    let paths = |skills: &'static [&'static str], prompts: &'static [&'static str]| {
        move |pi: &mut ExtensionApi<'_>| {
            pi.on::<ResourcesDiscoverEvent, _>(move |e, _| {
                Box::pin(async move {
                    assert_eq!(e.reason, ResourcesDiscoverReason::Startup);
                    Ok(Some(ResourcesDiscoverResult {
                        skill_paths: skills.iter().map(|s| s.to_string()).collect(),
                        prompt_paths: prompts.iter().map(|s| s.to_string()).collect(),
                        theme_paths: vec![],
                    }))
                })
            });
            Ok(())
        }
    };
    let r = ExtensionRunner::builder("/p")
        .extension(FnExtension::new("a.ts", paths(&["/s/a"], &[])))
        .extension(FnExtension::new(
            "b.ts",
            paths(&["/s/b1", "/s/b2"], &["/t/b"]),
        ))
        .build();
    let out = r
        .emit_resources_discover(ResourcesDiscoverEvent {
            cwd: "/p".into(),
            reason: ResourcesDiscoverReason::Startup,
        })
        .await;
    assert_eq!(
        out.skill_paths
            .iter()
            .map(|p| format!("{}@{}", p.path, p.extension_path))
            .collect::<Vec<_>>(),
        ["/s/a@a.ts", "/s/b1@b.ts", "/s/b2@b.ts"]
    );
    assert_eq!(out.prompt_path_strings(), ["/t/b"]);
    assert!(out.theme_paths.is_empty());
}

// ----- ui_prompt ----------------------------------------------------------------------------

/// A UI whose `confirm` stays open for a few scheduler turns (so other prompts can open
/// meanwhile) and whose `select` picks the first option.
struct SlowUi;

impl Ui for SlowUi {
    fn confirm<'a>(&'a self, _title: &'a str, _message: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async {
            for _ in 0..3 {
                tokio::task::yield_now().await;
            }
            true
        })
    }
    fn select<'a>(&'a self, _t: &'a str, options: &'a [String]) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move { options.first().cloned() })
    }
}

fn prompt_recorder(l: Log) -> impl Fn(&mut ExtensionApi<'_>) -> Result<(), HandlerError> {
    move |pi| {
        let s = l.clone();
        pi.on::<UiPromptStartEvent, _>(move |e, _| {
            let s = s.clone();
            Box::pin(async move {
                s.lock()
                    .unwrap()
                    .push(format!("start {}", serde_json::to_string(e).unwrap()));
                Ok(None)
            })
        });
        let s = l.clone();
        pi.on::<UiPromptEndEvent, _>(move |e, _| {
            let s = s.clone();
            Box::pin(async move {
                s.lock()
                    .unwrap()
                    .push(format!("end {}", serde_json::to_string(e).unwrap()));
                Ok(None)
            })
        });
        Ok(())
    }
}

#[tokio::test]
async fn nested_ui_prompts_merge_into_one_outer_span() {
    let l = log();
    let r = ExtensionRunner::builder("/p")
        .mode(Mode::Rpc)
        .extension(FnExtension::new("p.ts", prompt_recorder(l.clone())))
        .build();
    r.set_ui(Arc::new(SlowUi));
    let ctx = r.context();
    assert!(ctx.has_ui());
    let ui = ctx.ui().clone();
    let inner = ui.clone();
    let outer = async {
        let picked = inner.select("Pick", &["x".into()]).await;
        let again = inner.input("Name", None).await;
        (picked, again, ui.confirm("Proceed?", "really").await)
    };
    let (picked, again, confirmed) = outer.await;
    assert_eq!(picked.as_deref(), Some("x"));
    assert_eq!(again, None);
    assert!(confirmed);
    r.flush_detached().await;
    // Three sequential outer prompts: one span each.
    assert_eq!(
        entries(&l),
        [
            r#"start {"reason":"ui_prompt","kind":"select","title":"Pick"}"#,
            r#"end {"reason":"ui_prompt","kind":"select","title":"Pick"}"#,
            r#"start {"reason":"ui_prompt","kind":"input","title":"Name"}"#,
            r#"end {"reason":"ui_prompt","kind":"input","title":"Name"}"#,
            r#"start {"reason":"ui_prompt","kind":"confirm","title":"Proceed?"}"#,
            r#"end {"reason":"ui_prompt","kind":"confirm","title":"Proceed?"}"#,
        ]
    );

    // Overlapping prompts (an editor opened while a confirm is still pending): one span
    // with the outer prompt's kind and title.
    l.lock().unwrap().clear();
    let ui = r.context().ui().clone();
    let (a, b) = tokio::join!(ui.confirm("Outer", "m"), ui.editor("", Some("text")));
    assert!(a);
    assert_eq!(b, None);
    r.flush_detached().await;
    assert_eq!(
        entries(&l),
        [
            r#"start {"reason":"ui_prompt","kind":"confirm","title":"Outer"}"#,
            r#"end {"reason":"ui_prompt","kind":"confirm","title":"Outer"}"#,
        ]
    );
}

/// A UI whose editor crashes.
struct CrashingUi;

impl Ui for CrashingUi {
    fn editor<'a>(&'a self, _t: &'a str, _p: Option<&'a str>) -> BoxFuture<'a, Option<String>> {
        Box::pin(async { panic!("editor crashed") })
    }
}

#[tokio::test]
async fn a_prompt_that_fails_still_ends_its_span() {
    let l = log();
    let r = ExtensionRunner::builder("/p")
        .mode(Mode::Tui)
        .extension(FnExtension::new("p.ts", prompt_recorder(l.clone())))
        .build();
    r.set_ui(Arc::new(CrashingUi));
    let ui = r.context().ui().clone();
    let crashed = tokio::spawn(async move { ui.editor("Edit", None).await }).await;
    assert!(crashed.is_err());
    r.flush_detached().await;
    assert_eq!(
        entries(&l),
        [
            r#"start {"reason":"ui_prompt","kind":"editor","title":"Edit"}"#,
            r#"end {"reason":"ui_prompt","kind":"editor","title":"Edit"}"#,
        ]
    );
}

#[tokio::test]
async fn without_a_ui_dialogs_resolve_at_once_and_fire_no_prompt_events() {
    let l = log();
    let r = ExtensionRunner::builder("/p")
        .extension(FnExtension::new("p.ts", prompt_recorder(l.clone())))
        .build();
    let ctx = r.context();
    assert!(!ctx.has_ui());
    assert_eq!(ctx.mode(), Mode::Print);
    assert!(!ctx.ui().confirm("t", "m").await);
    assert_eq!(ctx.ui().select("t", &["a".into()]).await, None);
    assert_eq!(ctx.ui().input("t", None).await, None);
    assert_eq!(ctx.ui().editor("t", None).await, None);
    ctx.ui().notify("hi", NotifyLevel::Info);
    ctx.ui().set_status("k", Some("v"));
    r.flush_detached().await;
    assert!(entries(&l).is_empty());
    assert!(ctx.is_idle());
    assert_eq!(ctx.system_prompt(), "");
    assert_eq!(ctx.cwd(), std::path::Path::new("/p"));
}

// ----- loading, flags, commands ----------------------------------------------------------------

#[tokio::test]
async fn a_failing_factory_contributes_nothing() {
    let r = ExtensionRunner::builder("/p")
        .extension(FnExtension::new("bad.ts", |pi| {
            pi.on::<AgentStartEvent, _>(|_, _| Box::pin(async { Ok(None) }));
            pi.register_command("x", None, |_, _| Box::pin(async { Ok(()) }));
            Err("syntax error".into())
        }))
        .extension(FnExtension::new("panics.ts", |_| panic!("factory panic")))
        .extension(FnExtension::new("good.ts", |_| Ok(())))
        .build();
    assert_eq!(
        r.load_errors()
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>(),
        [
            "Failed to load extension \"bad.ts\": syntax error",
            "Failed to load extension \"panics.ts\": factory panic"
        ]
    );
    assert_eq!(r.extension_paths(), ["good.ts"]);
    assert!(!r.has_handlers::<AgentStartEvent>());
    assert!(r.commands().is_empty());
}

#[tokio::test]
async fn flags_validate_defaults_and_cli_values_beat_them() {
    let seen: Arc<Mutex<Option<Pi>>> = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let r = ExtensionRunner::builder("/p")
        .flag_value("verbose", FlagValue::Bool(true))
        .extension(FnExtension::new("flags.ts", move |pi| {
            let err = pi
                .register_flag(
                    "bad",
                    FlagType::Boolean,
                    Some(FlagValue::String("x".into())),
                    None,
                )
                .unwrap_err();
            assert_eq!(
                err.to_string(),
                "Invalid default for flag \"bad\": expected boolean, got string"
            );
            pi.register_flag(
                "verbose",
                FlagType::Boolean,
                Some(FlagValue::Bool(false)),
                None,
            )?;
            pi.register_flag(
                "plan",
                FlagType::String,
                Some(FlagValue::String("fast".into())),
                Some("The plan".into()),
            )?;
            *s.lock().unwrap() = Some(pi.pi());
            Ok(())
        }))
        .extension(FnExtension::new("other.ts", |pi| {
            pi.register_flag(
                "theirs",
                FlagType::Boolean,
                Some(FlagValue::Bool(true)),
                None,
            )
        }))
        .build();
    let pi = seen.lock().unwrap().clone().unwrap();
    assert_eq!(pi.get_flag("verbose").unwrap(), Some(FlagValue::Bool(true)));
    assert_eq!(
        pi.get_flag("plan").unwrap(),
        Some(FlagValue::String("fast".into()))
    );
    assert_eq!(pi.get_flag("theirs").unwrap(), None, "own flags only");
    r.set_flag_value("plan", FlagValue::String("slow".into()));
    assert_eq!(
        pi.get_flag("plan").unwrap(),
        Some(FlagValue::String("slow".into()))
    );
    assert_eq!(
        r.flags()
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>(),
        ["verbose", "plan", "theirs"]
    );
}

#[tokio::test]
async fn duplicate_commands_get_numbered_invocation_names_and_failures_come_back() {
    let l = log();
    let cmd = |tag: &'static str, l: Log| {
        move |pi: &mut ExtensionApi<'_>| {
            let l = l.clone();
            pi.register_command("deploy", Some(format!("by {tag}")), move |args, _ctx| {
                let l = l.clone();
                Box::pin(async move {
                    l.lock().unwrap().push(format!("{tag}:{args}"));
                    if args == "fail" {
                        return Err("deploy failed".into());
                    }
                    Ok(())
                })
            });
            pi.register_command(format!("only-{tag}"), None, |_, _| {
                Box::pin(async { panic!("cmd panic") })
            });
            Ok(())
        }
    };
    let r = ExtensionRunner::builder("/p")
        .extension(FnExtension::new("a.ts", cmd("a", l.clone())))
        .extension(FnExtension::new("b.ts", cmd("b", l.clone())))
        .build();
    assert_eq!(
        r.commands()
            .iter()
            .map(|c| c.invocation_name.as_str())
            .collect::<Vec<_>>(),
        ["deploy:1", "only-a", "deploy:2", "only-b"]
    );
    assert!(r.has_command("deploy:2") && !r.has_command("deploy"));
    assert_eq!(r.run_command("deploy:2", "now").await, Ok(()));
    assert_eq!(
        r.run_command("deploy:1", "fail").await,
        Err("deploy failed".into())
    );
    assert_eq!(r.run_command("only-a", "").await, Err("cmd panic".into()));
    assert_eq!(entries(&l), ["b:now", "a:fail"]);
}

// ----- the pi request queue, staleness, the event bus -----------------------------------------

#[tokio::test]
async fn pi_calls_queue_requests_in_order_and_fail_once_stale() {
    let seen: Arc<Mutex<Option<Pi>>> = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let r = ExtensionRunner::builder("/p")
        .extension(FnExtension::new("ext.ts", move |pi| {
            *s.lock().unwrap() = Some(pi.pi());
            pi.on::<AgentEndEvent, _>(|_, ctx| {
                Box::pin(async move {
                    ctx.compact(Some("keep it short".into()));
                    ctx.abort();
                    Ok(None)
                })
            });
            Ok(())
        }))
        .build();
    let pi = seen.lock().unwrap().clone().unwrap();
    pi.append_entry("note", Some(json!({"n":1}))).unwrap();
    pi.set_session_name("Refactor").unwrap();
    pi.send_message(
        CustomMessageSpec {
            custom_type: "status".into(),
            content: json!("hi"),
            display: true,
            details: None,
        },
        SendMessageOptions {
            trigger_turn: Some(false),
            deliver_as: Some(DeliverAs::NextTurn),
        },
    )
    .unwrap();
    pi.send_user_message("go on", vec![], Some(StreamingBehavior::FollowUp))
        .unwrap();
    pi.set_active_tools(vec!["read".into()]).unwrap();
    r.emit(AgentEndEvent { messages: vec![] }).await;
    let got: Vec<String> = r.take_requests().iter().map(|q| format!("{q:?}")).collect();
    assert_eq!(
        got,
        [
            "AppendEntry(note)",
            "SetSessionName(\"Refactor\")",
            "SendMessage(status)",
            "SendUserMessage(\"go on\")",
            "SetActiveTools([\"read\"])",
            "Compact(Some(\"keep it short\"))",
            "Abort"
        ]
    );
    assert!(r.take_requests().is_empty());
    r.invalidate();
    let err = pi.set_session_name("late").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("This extension ctx is stale after session replacement or reload.")
    );
    assert_eq!(err.to_string(), STALE_MESSAGE);
    assert!(r.take_requests().is_empty());
}

#[test]
fn the_event_bus_delivers_synchronously_and_isolates_failing_subscribers() {
    let r = ExtensionRunner::builder("/p").build();
    let bus = r.events().clone();
    let l = log();
    let errs = log();
    let e = errs.clone();
    bus.set_error_sink(move |line| e.lock().unwrap().push(line));
    let a = l.clone();
    let sub = bus.on("jobs", move |d| {
        a.lock().unwrap().push(format!("a:{d}"));
        Ok(())
    });
    bus.on("jobs", |_| Err("bad payload".into()));
    bus.on("jobs", |_| panic!("sub panic"));
    let c = l.clone();
    bus.on("jobs", move |d| {
        c.lock().unwrap().push(format!("c:{d}"));
        Ok(())
    });
    bus.on("other", |_| panic!("not this channel"));
    bus.emit("jobs", &json!({"id":1}));
    assert_eq!(entries(&l), ["a:{\"id\":1}", "c:{\"id\":1}"]);
    assert_eq!(
        entries(&errs),
        [
            "Event handler error (jobs): bad payload",
            "Event handler error (jobs): sub panic"
        ]
    );
    sub.unsubscribe();
    bus.emit("jobs", &json!(2));
    assert_eq!(entries(&l).last().map(String::as_str), Some("c:2"));
    assert_eq!(entries(&l).len(), 3);
}

#[test]
fn re_registering_a_command_or_flag_in_one_extension_replaces_it_in_place() {
    let r = ExtensionRunner::builder("/p")
        .extension(FnExtension::new("a.ts", |pi| {
            pi.register_command("one", Some("first".into()), |_, _| {
                Box::pin(async { Ok(()) })
            });
            pi.register_command("two", None, |_, _| Box::pin(async { Ok(()) }));
            pi.register_command("one", Some("second".into()), |_, _| {
                Box::pin(async { Ok(()) })
            });
            pi.register_flag("f", FlagType::Boolean, None, Some("first".into()))?;
            pi.register_flag("f", FlagType::String, None, Some("second".into()))
        }))
        .build();
    let cmds: Vec<String> = r
        .commands()
        .iter()
        .map(|c| format!("{}={:?}", c.invocation_name, c.spec.description))
        .collect();
    assert_eq!(cmds, ["one=Some(\"second\")", "two=None"]);
    let flags = r.flags();
    assert_eq!(flags.len(), 1);
    assert_eq!(flags[0].kind, FlagType::String);
}
