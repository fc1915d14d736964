//! End-to-end: extensions registered on an `AgentSession` over the faux provider, through
//! the `SessionHooks` seam — input, before_agent_start, context, tool_call (block and
//! failure), tool_result, message_end.

use crate::extensions_rig;
use crate::session_support;

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantContent, Message, UserContent};
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use pi_coding_agent::session::{AgentSessionEvent, PromptOptions};
use serde_json::json;

use extensions_rig::*;
use session_support::{Named, echo_call, text};

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
            AgentMessage::ToolResult(t) => Some(t.is_error),
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
                    let AgentMessage::Assistant(a) = &e.message else {
                        return Ok(None);
                    };
                    if a.content.is_empty()
                        || message_text(&Message::Assistant((**a).clone())).is_empty()
                    {
                        return Ok(None);
                    }
                    let mut a = (**a).clone();
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
        AgentMessage::ToolResult(t) => t.details.clone(),
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
    match last_end.as_ref().and_then(AgentMessage::to_llm) {
        Some(m) => assert_eq!(message_text(&m), "redacted"),
        other => panic!("no assistant message_end: {other:?}"),
    }
}

// ----- the tool registry ----------------------------------------------------------------------

fn active_tools(r: &Rig) -> Vec<String> {
    r.session
        .agent()
        .with_state(|st| st.tools.iter().map(|t| t.name().to_owned()).collect())
}

/// A tool registered at run time stays in the registry for later requests: the first
/// prompt's `agent_end` registers `late` (activated: a new name), the second's activates only
/// it; an available built-in that was never active can be activated too.
#[tokio::test]
async fn a_tool_registered_at_run_time_can_be_activated_by_a_later_request() {
    let ends = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let r = rig(
        vec![text("one"), text("two")],
        vec![ext("tools.ts", move |pi| {
            let handle = pi.pi();
            let ends = ends.clone();
            pi.on::<AgentEndEvent, _>(move |_, _| {
                let n = ends.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let handle = handle.clone();
                Box::pin(async move {
                    if n == 0 {
                        handle
                            .register_tool(std::sync::Arc::new(Named("late")))
                            .unwrap();
                    } else {
                        handle
                            .set_active_tools(vec!["late".into(), "grep".into()])
                            .unwrap();
                    }
                    Ok(None)
                })
            });
            Ok(())
        })],
    );
    r.hooks
        .set_available_tools(vec![std::sync::Arc::new(Named("grep"))]);
    r.hooks.attach(&r.session);
    assert_eq!(active_tools(&r), ["echo"]);
    r.session
        .prompt("a", PromptOptions::default())
        .await
        .unwrap();
    r.hooks.flush_requests().await;
    assert_eq!(active_tools(&r), ["echo", "late"]);
    // Binding again (pi: a new session, a reload) keeps the run-time tool in the registry.
    r.hooks.attach(&r.session);
    assert_eq!(active_tools(&r), ["echo", "late"]);
    r.session
        .prompt("b", PromptOptions::default())
        .await
        .unwrap();
    r.hooks.flush_requests().await;
    assert_eq!(active_tools(&r), ["late", "grep"]);
}

/// `pi.get_active_tools()` / `pi.get_all_tools()` (pi 0.85.0 `getActiveTools`, `getAllTools`):
/// the active names and every registry tool with its source — the session's own tool is
/// `Sdk`, an available built-in `Builtin`, extension tools carry the registering extension's
/// path (also when registered at run time); nothing before a session is bound.
#[tokio::test]
async fn get_active_tools_and_get_all_tools_read_the_registry() {
    type Seen = std::sync::Arc<std::sync::Mutex<Vec<(Vec<String>, Vec<(String, ToolSource)>)>>>;
    let seen: Seen = Default::default();
    let record = seen.clone();
    let r = rig(
        vec![text("one"), text("two")],
        vec![
            ext("deploy.ts", move |pi| {
                pi.register_tool(std::sync::Arc::new(Named("deploy")));
                let handle = pi.pi();
                let record = record.clone();
                pi.on::<AgentEndEvent, _>(move |_, _| {
                    let handle = handle.clone();
                    let record = record.clone();
                    Box::pin(async move {
                        let active = handle.get_active_tools().unwrap();
                        let all = handle
                            .get_all_tools()
                            .unwrap()
                            .into_iter()
                            .map(|t| (t.name, t.source))
                            .collect();
                        record.lock().unwrap().push((active, all));
                        if record.lock().unwrap().len() == 1 {
                            handle
                                .register_tool(std::sync::Arc::new(Named("late")))
                                .unwrap();
                            handle.set_active_tools(vec!["grep".into()]).unwrap();
                        }
                        Ok(None)
                    })
                });
                Ok(())
            }),
            ext("lint.ts", |pi| {
                pi.register_tool(std::sync::Arc::new(Named("lint")));
                Ok(())
            }),
        ],
    );
    r.hooks
        .set_available_tools(vec![std::sync::Arc::new(Named("grep"))]);
    r.hooks.attach(&r.session);
    for prompt in ["a", "b"] {
        r.session
            .prompt(prompt, PromptOptions::default())
            .await
            .unwrap();
        r.hooks.flush_requests().await;
    }
    let from = |p: &str| ToolSource::Extension { path: p.into() };
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen[0],
        (
            vec!["echo".into(), "deploy".into(), "lint".into()],
            vec![
                ("grep".into(), ToolSource::Builtin),
                ("echo".into(), ToolSource::Sdk),
                ("deploy".into(), from("deploy.ts")),
                ("lint".into(), from("lint.ts")),
            ]
        )
    );
    assert_eq!(seen[1].0, ["grep"]);
    assert_eq!(seen[1].1.last(), Some(&("late".into(), from("deploy.ts"))));
    assert_eq!(seen[1].1.len(), 5);
    assert_eq!(active_tools(&r), ["grep"]);

    // A runner no session is bound to: nothing to report.
    let kept: std::sync::Arc<std::sync::Mutex<Option<Pi>>> = Default::default();
    let keep = kept.clone();
    let _runner = ExtensionRunner::builder("/tmp")
        .extension(BoxedExtension(ext("alone.ts", move |pi| {
            pi.register_tool(std::sync::Arc::new(Named("alone")));
            *keep.lock().unwrap() = Some(pi.pi());
            Ok(())
        })))
        .build();
    let pi = kept.lock().unwrap().clone().unwrap();
    assert!(pi.get_all_tools().unwrap().is_empty());
    assert!(pi.get_active_tools().unwrap().is_empty());
}

/// `--exclude-tools echo` and `--tools` as the hooks' filter: the session's own tool and
/// extension tools are filtered alike, and an allowlist activates every allowed tool.
#[tokio::test]
async fn the_tool_filter_applies_to_session_and_extension_tools() {
    let r = rig(
        vec![],
        vec![ext("tools.ts", |pi| {
            pi.register_tool(std::sync::Arc::new(Named("deploy")));
            pi.register_tool(std::sync::Arc::new(Named("lint")));
            Ok(())
        })],
    );
    assert_eq!(active_tools(&r), ["echo", "deploy", "lint"]);
    r.hooks
        .set_tool_filter(pi_coding_agent::tools::ToolFilter::new(
            None::<Vec<String>>,
            ["echo", "lint"],
        ));
    r.hooks.attach(&r.session);
    assert_eq!(active_tools(&r), ["deploy"]);
    r.hooks
        .set_tool_filter(pi_coding_agent::tools::ToolFilter::new(
            Some(["lint", "grep"]),
            Vec::<String>::new(),
        ));
    r.hooks
        .set_available_tools(vec![std::sync::Arc::new(Named("grep"))]);
    r.hooks.attach(&r.session);
    assert_eq!(active_tools(&r), ["grep", "lint"]);
}

/// `pi.get_commands()` (pi 0.85.0 `getCommands`): the extensions' commands by invocation name
/// (a duplicate numbered), then the session's prompt templates, then its skills as
/// `skill:<name>`, each with its source and path; only the extensions' before a session is
/// bound. The same list, as JSON, is RPC `get_commands`.
#[tokio::test]
async fn get_commands_lists_extension_commands_templates_and_skills() {
    use pi_coding_agent::config::skills::Skill;
    use pi_coding_agent::config::templates::PromptTemplate;
    use pi_coding_agent::session::AgentSession;
    use pi_coding_agent::storage::SessionStore;
    use std::sync::{Arc, Mutex};

    let kept: Arc<Mutex<Option<Pi>>> = Arc::default();
    let keep = kept.clone();
    let noop = |_: String,
                _: ExtensionContext|
     -> futures::future::BoxFuture<'static, Result<(), HandlerError>> {
        Box::pin(async { Ok(()) })
    };
    let runner = ExtensionRunner::builder("/tmp")
        .extension(BoxedExtension(ext("a.ts", move |pi| {
            pi.register_command("deploy", Some("ships it".into()), noop);
            *keep.lock().unwrap() = Some(pi.pi());
            Ok(())
        })))
        .extension(BoxedExtension(ext("b.ts", move |pi| {
            pi.register_command("deploy", None, noop);
            Ok(())
        })))
        .build();
    let pi = kept.lock().unwrap().clone().unwrap();
    let names = |cmds: Vec<CommandInfo>| -> Vec<(String, CommandSource, String)> {
        cmds.into_iter()
            .map(|c| (c.name, c.source, c.path.display().to_string()))
            .collect()
    };
    let ext_only = vec![
        (
            "deploy:1".to_owned(),
            CommandSource::Extension,
            "a.ts".to_owned(),
        ),
        (
            "deploy:2".to_owned(),
            CommandSource::Extension,
            "b.ts".to_owned(),
        ),
    ];
    assert_eq!(names(pi.get_commands().unwrap()), ext_only);

    let hooks = ExtensionHooks::new(runner.clone());
    let session = AgentSession::builder()
        .store(Arc::new(Mutex::new(SessionStore::in_memory("/tmp"))))
        .prompt_templates(vec![PromptTemplate {
            name: "review".into(),
            description: "Review a file".into(),
            argument_hint: None,
            content: "Review $1".into(),
            file_path: "/p/review.md".into(),
        }])
        .skills(vec![Skill {
            name: "greet".into(),
            description: "Say hi".into(),
            file_path: "/s/greet/SKILL.md".into(),
            base_dir: "/s/greet".into(),
            disable_model_invocation: false,
        }])
        .hooks(hooks.clone())
        .build()
        .unwrap();
    hooks.attach(&session);
    let all = pi.get_commands().unwrap();
    let mut expected = ext_only.clone();
    expected.push((
        "review".into(),
        CommandSource::Prompt,
        "/p/review.md".into(),
    ));
    expected.push((
        "skill:greet".into(),
        CommandSource::Skill,
        "/s/greet/SKILL.md".into(),
    ));
    assert_eq!(names(all.clone()), expected);
    // pi's key order: name, description?, source, sourceInfo.
    let json: Vec<String> = all
        .iter()
        .map(|c| serde_json::to_string(&c.to_json()).unwrap())
        .collect();
    assert_eq!(
        json,
        [
            r#"{"name":"deploy:1","description":"ships it","source":"extension","sourceInfo":{"path":"a.ts"}}"#,
            r#"{"name":"deploy:2","source":"extension","sourceInfo":{"path":"b.ts"}}"#,
            r#"{"name":"review","description":"Review a file","source":"prompt","sourceInfo":{"path":"/p/review.md"}}"#,
            r#"{"name":"skill:greet","description":"Say hi","source":"skill","sourceInfo":{"path":"/s/greet/SKILL.md"}}"#,
        ]
    );
}

/// `pi.set_model(model)` (pi 0.85.0: `false` without configured auth, else the session's
/// `setModel` and `true`): the switch is queued and executed by the session (`model_select`
/// with source `set`, a `model_change` entry); a provider without auth changes nothing.
#[tokio::test]
async fn set_model_switches_when_the_provider_has_auth() {
    let answers = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let selected = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (record, seen) = (answers.clone(), selected.clone());
    let r = rig(
        vec![text("one")],
        vec![ext("models.ts", move |pi| {
            let handle = pi.pi();
            let record = record.clone();
            pi.on::<AgentEndEvent, _>(move |_, _| {
                let handle = handle.clone();
                let record = record.clone();
                Box::pin(async move {
                    let base = pi_ai::Model {
                        id: "faux-2".into(),
                        api: "faux".into(),
                        provider: "faux".into(),
                        ..Default::default()
                    };
                    let nobody = pi_ai::Model {
                        provider: "unknown".into(),
                        ..base.clone()
                    };
                    let mut r = record.lock().unwrap();
                    r.push(handle.set_model(nobody).unwrap());
                    r.push(handle.set_model(base).unwrap());
                    Ok(None)
                })
            });
            let seen = seen.clone();
            pi.on::<ModelSelectEvent, _>(move |e, _| {
                seen.lock()
                    .unwrap()
                    .push((e.model.id.clone(), format!("{:?}", e.source)));
                Box::pin(async { Ok(None) })
            });
            Ok(())
        })],
    );
    let before = r.session.model().unwrap().id;
    r.session
        .prompt("a", PromptOptions::default())
        .await
        .unwrap();
    r.hooks.flush_requests().await;
    assert_eq!(*answers.lock().unwrap(), [false, true]);
    assert_ne!(before, "faux-2");
    assert_eq!(r.session.model().unwrap().id, "faux-2");
    assert_eq!(
        *selected.lock().unwrap(),
        [("faux-2".to_owned(), "Set".to_owned())]
    );
    let store = r.store.lock().unwrap();
    let changes: Vec<String> = store
        .entries()
        .unwrap()
        .iter()
        .filter_map(|e| match &e.kind {
            pi_coding_agent::storage::entry::EntryKind::ModelChange { model_id, .. } => {
                Some(model_id.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(changes.last().map(String::as_str), Some("faux-2"));
}
