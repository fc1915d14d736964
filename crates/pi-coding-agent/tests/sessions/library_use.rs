//! pi-coding-agent used as a library: an `AgentSession` from the builder on a file-backed
//! store, two extensions (one blocks a tool call, one transforms the input), a custom tool
//! with a prompt snippet and guidelines, then the session resumed from its file.

use std::path::Path;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::{AgentMessage, AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text,
    faux_tool_call,
};
use pi_ai::{Context, Message, StopReason, UserContent};
use pi_coding_agent::extensions::events::{InputEvent, InputResult, ToolCallEvent, ToolCallResult};
use pi_coding_agent::extensions::{ExtensionHooks, ExtensionRunner, FnExtension};
use pi_coding_agent::session::{AgentSession, AgentSessionEvent, PromptOptions};
use pi_coding_agent::session::{SessionStartReason, ShutdownReason};
use pi_coding_agent::storage::SessionStore;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Echoes its `cmd` argument; counts its executions.
struct Echo {
    runs: Arc<Mutex<Vec<String>>>,
}

impl AgentTool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn label(&self) -> &str {
        "Echo"
    }
    fn description(&self) -> &str {
        "Echo a command."
    }
    fn parameters(&self) -> &Value {
        static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        S.get_or_init(|| {
            json!({"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]})
        })
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Echo a command back\n  verbatim")
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        vec!["  Use echo to test things.  ".into()]
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        args: Value,
        _cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let cmd = args["cmd"].as_str().unwrap_or_default().to_owned();
            self.runs.lock().unwrap().push(cmd.clone());
            Ok(AgentToolResult::text(format!("echo: {cmd}"), None))
        })
    }
}

fn runner(cwd: &Path) -> ExtensionRunner {
    ExtensionRunner::builder(cwd)
        .extension(FnExtension::new("guard", |pi| {
            pi.on::<ToolCallEvent, _>(|event, _ctx| {
                Box::pin(async move {
                    let cmd = event.input["cmd"].as_str().unwrap_or_default();
                    if event.tool_name == "echo" && cmd.contains("danger") {
                        return Ok(Some(ToolCallResult::block("Dangerous echo blocked.")));
                    }
                    Ok(None)
                })
            });
            Ok(())
        }))
        .extension(FnExtension::new("rewrite", |pi| {
            pi.on::<InputEvent, _>(|event, _ctx| {
                Box::pin(async move {
                    Ok(event
                        .text
                        .strip_prefix("?q ")
                        .map(|rest| InputResult::Transform {
                            text: format!("Short answer: {rest}"),
                            images: None,
                        }))
                })
            });
            Ok(())
        }))
        .build()
}

/// What the model was sent on each call: system prompt and the messages' roles/texts.
type Seen = Arc<Mutex<Vec<(String, Vec<String>)>>>;

fn describe_context(context: &Context) -> (String, Vec<String>) {
    let lines = context
        .messages
        .iter()
        .map(|m| match m {
            Message::User(u) => {
                let text: String = u
                    .content
                    .to_blocks()
                    .iter()
                    .filter_map(|b| match b {
                        UserContent::Text(t) => Some(t.text.clone()),
                        _ => None,
                    })
                    .collect();
                format!("user {text}")
            }
            Message::Assistant(a) => format!("assistant {}", a.text()),
            Message::ToolResult(r) => format!("toolResult {} error={}", r.tool_call_id, r.is_error),
        })
        .collect();
    (context.system_prompt.clone().unwrap_or_default(), lines)
}

fn step(
    seen: &Seen,
    reply: impl Fn() -> pi_ai::AssistantMessage + Send + Sync + 'static,
) -> FauxStep {
    let seen = seen.clone();
    FauxStep::factory(move |context, _, _, _| {
        seen.lock().unwrap().push(describe_context(context));
        Ok(reply())
    })
}

fn session(
    faux: &FauxProvider,
    store: Arc<Mutex<SessionStore>>,
    hooks: Arc<ExtensionHooks>,
    runs: &Arc<Mutex<Vec<String>>>,
) -> AgentSession {
    let f = faux.clone();
    AgentSession::builder()
        .model(faux.model())
        .store(store)
        .tools(vec![Arc::new(Echo { runs: runs.clone() })])
        .system_prompt_for_tools(crate::session_support::default_prompt_fn())
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .hooks(hooks)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_file_backed_session_with_extensions_and_a_custom_tool_resumes_from_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().display().to_string();
    let seen: Seen = Arc::default();
    let runs: Arc<Mutex<Vec<String>>> = Arc::default();
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![
        step(&seen, || {
            faux_assistant_message(
                vec![
                    faux_tool_call(
                        "echo",
                        json!({"cmd": "danger zone"}).as_object().unwrap().clone(),
                        Some("c1"),
                    ),
                    faux_tool_call(
                        "echo",
                        json!({"cmd": "hi"}).as_object().unwrap().clone(),
                        Some("c2"),
                    ),
                ],
                FauxMessageOptions {
                    stop_reason: Some(StopReason::ToolUse),
                    ..Default::default()
                },
            )
        }),
        step(&seen, || {
            faux_assistant_message(vec![faux_text("first answer")], Default::default())
        }),
    ]);

    let store = Arc::new(Mutex::new(
        SessionStore::create(dir.path(), &cwd, None).unwrap(),
    ));
    let hooks = ExtensionHooks::new(runner(dir.path()));
    let first = session(&faux, store.clone(), hooks.clone(), &runs);
    hooks.bind(&first, SessionStartReason::Startup, None).await;
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let e = events.clone();
    first.subscribe(move |event| {
        if let AgentSessionEvent::Agent(inner) = event
            && let pi_agent_core::AgentEvent::ToolExecutionEnd {
                tool_call_id,
                is_error,
                result,
                ..
            } = &**inner
        {
            let text = match result.content.first() {
                Some(UserContent::Text(t)) => t.text.clone(),
                _ => String::new(),
            };
            e.lock()
                .unwrap()
                .push(format!("{tool_call_id} {is_error} {text}"));
        }
        Ok(())
    });
    first
        .prompt("?q hello", PromptOptions::default())
        .await
        .unwrap();

    // The input extension rewrote the prompt; the guard blocked c1 only.
    let calls = seen.lock().unwrap().clone();
    assert_eq!(calls[0].1, ["user Short answer: hello"]);
    assert_eq!(*runs.lock().unwrap(), ["hi"]);
    assert_eq!(
        *events.lock().unwrap(),
        ["c1 true Dangerous echo blocked.", "c2 false echo: hi"]
    );
    // The custom tool's snippet (one line) and trimmed guideline are in the system prompt.
    let system = &calls[0].0;
    assert!(
        system.contains("- echo: Echo a command back verbatim"),
        "{system}"
    );
    assert!(system.contains("- Use echo to test things."), "{system}");

    // Resume from the file: a new store opened from the path, a new session, a new prompt.
    let path = store.lock().unwrap().path().unwrap().to_path_buf();
    first.shutdown(ShutdownReason::Quit, None).await;
    drop(first);
    let reopened = SessionStore::open(&path, &cwd).unwrap();
    let faux2 = FauxProvider::new(FauxOptions::default());
    faux2.set_responses(vec![step(&seen, || {
        faux_assistant_message(vec![faux_text("second answer")], Default::default())
    })]);
    let hooks2 = ExtensionHooks::new(runner(dir.path()));
    let second = session(
        &faux2,
        Arc::new(Mutex::new(reopened)),
        hooks2.clone(),
        &runs,
    );
    hooks2.bind(&second, SessionStartReason::Resume, None).await;
    let messages = second.messages();
    let restored: Vec<&str> = messages.iter().map(AgentMessage::role).collect();
    assert_eq!(
        restored,
        ["user", "assistant", "toolResult", "toolResult", "assistant"]
    );
    second
        .prompt("again", PromptOptions::default())
        .await
        .unwrap();
    let calls = seen.lock().unwrap().clone();
    assert_eq!(
        calls[2].1,
        [
            "user Short answer: hello",
            "assistant ",
            "toolResult c1 error=true",
            "toolResult c2 error=false",
            "assistant first answer",
            "user again",
        ]
    );
    let reread = SessionStore::open(&path, &cwd).unwrap();
    assert!(reread.len() > 7, "entries: {}", reread.len());
}

#[tokio::test]
async fn failing_extension_handlers_block_the_tool_or_are_reported_and_prompt_waits_for_settled() {
    let dir = tempfile::tempdir().unwrap();
    let runs: Arc<Mutex<Vec<String>>> = Arc::default();
    let runner = ExtensionRunner::builder(dir.path())
        .extension(FnExtension::new("panicky", |pi| {
            pi.on::<ToolCallEvent, _>(|event, _ctx| {
                Box::pin(async move {
                    if event.input["cmd"] == "boom" {
                        panic!("guard crashed");
                    }
                    Ok(None)
                })
            });
            pi.on::<InputEvent, _>(|_event, _ctx| {
                Box::pin(async move {
                    Err(pi_coding_agent::extensions::HandlerError::new(
                        "bad input hook",
                    ))
                })
            });
            Ok(())
        }))
        .build();
    let reported: Arc<Mutex<Vec<String>>> = Arc::default();
    let r = reported.clone();
    runner.on_error(Arc::new(move |e| {
        r.lock()
            .unwrap()
            .push(format!("{} {} {}", e.extension_path, e.event, e.error));
    }));
    let hooks = ExtensionHooks::new(runner);
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![
        faux_assistant_message(
            vec![faux_tool_call(
                "echo",
                json!({"cmd": "boom"}).as_object().unwrap().clone(),
                Some("c1"),
            )],
            FauxMessageOptions {
                stop_reason: Some(StopReason::ToolUse),
                ..Default::default()
            },
        )
        .into(),
        faux_assistant_message(vec![faux_text("done")], Default::default()).into(),
    ]);
    let s = session(
        &faux,
        Arc::new(Mutex::new(SessionStore::in_memory("/tmp"))),
        hooks.clone(),
        &runs,
    );
    hooks.bind(&s, SessionStartReason::Startup, None).await;
    let kinds: Arc<Mutex<Vec<String>>> = Arc::default();
    let k = kinds.clone();
    s.subscribe(move |event| {
        let json = event.to_json_mode();
        let kind = json["type"].as_str().unwrap_or_default().to_owned();
        if kind == "tool_execution_end" {
            let text = json["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            k.lock().unwrap().push(format!("tool_execution_end {text}"));
        } else if kind == "agent_settled" {
            k.lock().unwrap().push(kind);
        }
        Ok(())
    });
    s.prompt("hi", PromptOptions::default()).await.unwrap();
    // A panicking tool_call handler blocks the call with pi's text and is not reported.
    assert!(runs.lock().unwrap().is_empty());
    assert_eq!(
        *kinds.lock().unwrap(),
        [
            "tool_execution_end Extension failed, blocking execution: guard crashed",
            "agent_settled",
        ]
    );
    // A failing input handler is reported; the input goes on unchanged.
    assert_eq!(*reported.lock().unwrap(), ["panicky input bad input hook"]);
}

#[tokio::test]
async fn a_session_without_a_model_refuses_prompts_with_pis_text() {
    let s = AgentSession::builder().build().unwrap();
    let err = s.prompt("hi", PromptOptions::default()).await.unwrap_err();
    // The first line is pi's; the help after it names the docs (`docs_dir`).
    let text = err.to_string();
    assert_eq!(
        text.lines().next(),
        Some("No API key found for the selected model.")
    );
}
