//! The extension seam and the compaction seam, with recording implementations: pi's
//! per-event order (hook, then listeners, then persistence), the prompt hooks
//! (`input`, `before_agent_start`), `message_end` replacement, tool hooks, and the
//! compactor's call points.

use crate::session_support;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::{AgentContext, AgentEvent, AgentMessage, BeforeToolCallResult, HookError};
use pi_ai::{AssistantContent, AssistantMessage, Message};
use pi_coding_agent::session::{
    AgentSession, AgentSessionEvent, BeforeAgentStartEvent, BeforeAgentStartResult, CheckPhase,
    Compactor, CustomMessageSpec, InputAction, InputEvent, PromptOptions, SessionHooks,
    ToolCallEvent, ToolResultEvent, TurnInfo,
};
use pi_coding_agent::session::{SessionStartReason, ShutdownReason};
use pi_coding_agent::storage::SessionStore;
use serde_json::json;
use session_support::*;

type Log = Arc<Mutex<Vec<String>>>;

fn role_of(e: &AgentEvent) -> String {
    match e {
        AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
            format!("({})", message.role())
        }
        _ => String::new(),
    }
}

#[derive(Default)]
struct Recording {
    log: Log,
    store: Mutex<Option<Arc<Mutex<SessionStore>>>>,
    input: Mutex<Option<InputAction>>,
    before_start: Mutex<Option<BeforeAgentStartResult>>,
    replace_assistant_text: Mutex<Option<String>>,
    block_tools: bool,
    commands: Vec<String>,
}

impl Recording {
    fn push(&self, s: String) {
        self.log.lock().unwrap().push(s);
    }
    fn stored_roles(&self) -> Vec<String> {
        let Some(store) = self.store.lock().unwrap().clone() else {
            return Vec::new();
        };
        let s = store.lock().unwrap();
        s.entries()
            .unwrap()
            .iter()
            .filter_map(|e| e.message().map(|m| m.role().to_owned()))
            .collect()
    }
}

impl SessionHooks for Recording {
    fn has_command(&self, name: &str) -> bool {
        self.commands.iter().any(|c| c == name)
    }
    fn run_command(
        &self,
        name: &str,
        args: &str,
    ) -> BoxFuture<'_, Result<(), pi_coding_agent::extensions::HandlerError>> {
        self.push(format!("hook:command:{name}:{args}"));
        Box::pin(async { Ok(()) })
    }
    fn input(&self, event: InputEvent) -> BoxFuture<'_, InputAction> {
        self.push(format!(
            "hook:input:{}:{}",
            event.text,
            event.source.as_str()
        ));
        let action = self.input.lock().unwrap().clone().unwrap_or_default();
        Box::pin(async move { action })
    }
    fn before_agent_start(
        &self,
        event: BeforeAgentStartEvent,
    ) -> BoxFuture<'_, Option<BeforeAgentStartResult>> {
        self.push(format!(
            "hook:before_agent_start:{}:{}",
            event.prompt, event.system_prompt
        ));
        let r = self.before_start.lock().unwrap().clone();
        Box::pin(async move { r })
    }
    fn context(&self, messages: Vec<AgentMessage>) -> BoxFuture<'_, Vec<AgentMessage>> {
        self.push(format!("hook:context:{}", messages.len()));
        Box::pin(async move { messages })
    }
    fn tool_call(
        &self,
        event: ToolCallEvent,
    ) -> BoxFuture<'_, Result<Option<BeforeToolCallResult>, HookError>> {
        self.push(format!(
            "hook:tool_call:{}:stored={}",
            event.tool_name,
            self.stored_roles().join(",")
        ));
        let block = self.block_tools;
        Box::pin(async move {
            Ok(block.then(|| BeforeToolCallResult {
                block: true,
                reason: Some("nope".into()),
                ..Default::default()
            }))
        })
    }
    fn tool_result(
        &self,
        event: ToolResultEvent,
    ) -> BoxFuture<'_, Option<pi_agent_core::AfterToolCallResult>> {
        self.push(format!(
            "hook:tool_result:{}:{}",
            event.tool_name, event.is_error
        ));
        Box::pin(async { None })
    }
    fn agent_event(&self, event: Arc<AgentEvent>, turn: TurnInfo) -> BoxFuture<'_, ()> {
        if event.kind() != "message_update" {
            let extra = match &*event {
                AgentEvent::TurnStart | AgentEvent::TurnEnd { .. } => {
                    assert!(turn.timestamp > 0);
                    format!("#{}", turn.turn_index)
                }
                e => role_of(e),
            };
            self.push(format!("hook:{}{extra}", event.kind()));
        }
        Box::pin(async {})
    }
    fn message_end(&self, message: AgentMessage) -> BoxFuture<'_, Option<AgentMessage>> {
        self.push(format!(
            "hook:message_end({}):stored={}",
            message.role(),
            self.stored_roles().len()
        ));
        let replacement = match (
            &message,
            self.replace_assistant_text.lock().unwrap().clone(),
        ) {
            (AgentMessage::Assistant(a), Some(t)) => {
                let mut a: AssistantMessage = (**a).clone();
                a.content = vec![AssistantContent::text(t)];
                Some(Message::Assistant(a).into())
            }
            _ => None,
        };
        Box::pin(async move { replacement })
    }
    fn agent_settled(&self) -> BoxFuture<'_, ()> {
        self.push("hook:agent_settled".into());
        Box::pin(async {})
    }
}

fn listen(session: &AgentSession, log: Log) {
    session.subscribe(move |e| {
        if e.kind() != "message_update" {
            let extra = e.core().map(role_of).unwrap_or_default();
            log.lock()
                .unwrap()
                .push(format!("listener:{}{extra}", e.kind()));
        }
        Ok(())
    });
}

#[derive(Default)]
struct RecordingCompactor {
    log: Log,
    continue_once: Mutex<bool>,
}

impl Compactor for RecordingCompactor {
    fn check(
        &self,
        session: AgentSession,
        message: Arc<AssistantMessage>,
        phase: CheckPhase,
    ) -> BoxFuture<'_, bool> {
        self.log.lock().unwrap().push(format!(
            "compactor:check:{phase:?}:{:?}",
            message.stop_reason
        ));
        let go = phase == CheckPhase::AfterRun
            && std::mem::take(&mut *self.continue_once.lock().unwrap());
        Box::pin(async move {
            if go {
                // As overflow recovery does: drop the trailing assistant, then continue.
                let mut m = session.agent().messages();
                m.pop();
                session.agent().set_messages(m);
            }
            go
        })
    }
    fn before_next_turn(
        &self,
        _session: AgentSession,
        context: Arc<AgentContext>,
    ) -> BoxFuture<'_, Option<Vec<AgentMessage>>> {
        self.log
            .lock()
            .unwrap()
            .push(format!("compactor:next_turn:{}", context.messages.len()));
        Box::pin(async { None })
    }
}

#[tokio::test]
async fn hooks_listeners_and_persistence_follow_pis_per_event_order() {
    let hooks = Arc::new(Recording::default());
    let compactor = Arc::new(RecordingCompactor {
        log: hooks.log.clone(),
        ..Default::default()
    });
    let h = harness(vec![echo_call("c1", "x"), text("done")], |b| {
        b.hooks(hooks.clone()).compactor(compactor.clone())
    });
    *hooks.store.lock().unwrap() = Some(h.store.clone());
    listen(&h.session, hooks.log.clone());
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    let log = hooks.log.lock().unwrap().clone();
    assert_eq!(
        log,
        [
            "hook:input:go:interactive",
            "hook:before_agent_start:go:base prompt",
            "hook:agent_start",
            "listener:agent_start",
            "hook:turn_start#0",
            "listener:turn_start",
            "hook:message_start(user)",
            "listener:message_start(user)",
            "hook:message_end(user):stored=0",
            "listener:message_end(user)",
            "hook:context:1",
            "hook:message_start(assistant)",
            "listener:message_start(assistant)",
            "hook:message_end(assistant):stored=1",
            "listener:message_end(assistant)",
            "hook:tool_execution_start",
            "listener:tool_execution_start",
            // The session file holds user and assistant before the tool hook runs.
            "hook:tool_call:echo:stored=user,assistant",
            "hook:tool_result:echo:false",
            "hook:tool_execution_end",
            "listener:tool_execution_end",
            "hook:message_start(toolResult)",
            "listener:message_start(toolResult)",
            "hook:message_end(toolResult):stored=2",
            "listener:message_end(toolResult)",
            "hook:turn_end#0",
            "listener:turn_end",
            "compactor:next_turn:3",
            "hook:turn_start#1",
            "listener:turn_start",
            "hook:context:3",
            "hook:message_start(assistant)",
            "listener:message_start(assistant)",
            "hook:message_end(assistant):stored=3",
            "listener:message_end(assistant)",
            "hook:turn_end#1",
            "listener:turn_end",
            "hook:agent_end",
            "listener:agent_end",
            "compactor:check:AfterRun:Stop",
            "hook:agent_settled",
            "listener:agent_settled",
        ]
    );
    // The next prompt checks compaction on the last assistant first.
    hooks.log.lock().unwrap().clear();
    h.faux.append_responses(vec![text("again")]);
    h.session
        .prompt("more", PromptOptions::default())
        .await
        .unwrap();
    let log = hooks.log.lock().unwrap().clone();
    assert_eq!(log[0], "hook:input:more:interactive");
    assert_eq!(log[1], "compactor:check:BeforePrompt:Stop");
    assert_eq!(log[2], "hook:before_agent_start:more:base prompt");
}

#[tokio::test]
async fn message_end_replacement_reaches_state_listeners_and_file() {
    let hooks = Arc::new(Recording::default());
    *hooks.replace_assistant_text.lock().unwrap() = Some("replaced".into());
    let h = harness(vec![text("original")], |b| b.hooks(hooks.clone()));
    *hooks.store.lock().unwrap() = Some(h.store.clone());
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    let text_of = |a: &AssistantMessage| a.text();
    assert_eq!(text_of(&h.stored_assistants()[0]), "replaced");
    let AgentMessage::Assistant(a) = h.session.messages().pop().unwrap() else {
        panic!()
    };
    assert_eq!(a.text(), "replaced");
    let ends: Vec<String> = h
        .events()
        .iter()
        .filter_map(|e| match e.core() {
            Some(AgentEvent::MessageEnd {
                message: AgentMessage::Assistant(a),
            }) => Some(a.text()),
            _ => None,
        })
        .collect();
    assert_eq!(ends, ["replaced"]);
    let agent_end = h
        .events()
        .into_iter()
        .find_map(|e| match e {
            AgentSessionEvent::AgentEnd { messages, .. } => Some(messages),
            _ => None,
        })
        .unwrap();
    let AgentMessage::Assistant(a) = &agent_end[1] else {
        panic!()
    };
    assert_eq!(a.text(), "replaced");
}

#[tokio::test]
async fn input_hooks_transform_or_handle_the_prompt() {
    let hooks = Arc::new(Recording::default());
    *hooks.input.lock().unwrap() = Some(InputAction::Handled);
    let h = harness(vec![text("x"), text("y")], |b| b.hooks(hooks.clone()));
    h.session
        .prompt("swallowed", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(h.faux.call_count(), 0);
    assert!(h.events().is_empty());

    *hooks.input.lock().unwrap() = Some(InputAction::Transform {
        text: "rewritten".into(),
        images: None,
    });
    h.session
        .prompt("original", PromptOptions::default())
        .await
        .unwrap();
    let AgentMessage::User(u) = &h.session.messages()[0] else {
        panic!()
    };
    assert_eq!(
        pi_coding_agent::session::queues::content_text(&u.content),
        "rewritten"
    );
}

#[tokio::test]
async fn before_agent_start_adds_messages_and_overrides_the_prompt_for_one_run() {
    let hooks = Arc::new(Recording::default());
    *hooks.before_start.lock().unwrap() = Some(BeforeAgentStartResult {
        messages: vec![CustomMessageSpec {
            custom_type: "ctx".into(),
            content: serde_json::Value::Null,
            display: false,
            details: Some(json!({"a": 1})),
        }],
        system_prompt: Some("override".into()),
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let h = harness(
        vec![pi_ai::providers::faux::FauxStep::factory(
            move |ctx, _, _, _| {
                seen2
                    .lock()
                    .unwrap()
                    .push((ctx.system_prompt.clone(), ctx.messages.len()));
                Ok(pi_ai::providers::faux::faux_assistant_message(
                    vec![pi_ai::providers::faux::faux_text("ok")],
                    Default::default(),
                ))
            },
        )],
        |b| b.hooks(hooks.clone()),
    );
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    // The custom message (null content → []) becomes an empty user message for the model.
    assert_eq!(*seen.lock().unwrap(), [(Some("override".to_owned()), 2)]);
    let roles: Vec<_> = h
        .session
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(roles, ["user", "custom", "assistant"]);
    let AgentMessage::Custom(c) = &h.session.messages()[1] else {
        panic!()
    };
    assert_eq!(c["content"], json!([]));
    // The override lasts one run.
    assert_eq!(h.session.system_prompt(), "override");
    *hooks.before_start.lock().unwrap() = None;
    h.faux.append_responses(vec![text("b")]);
    h.session
        .prompt("again", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(h.session.system_prompt(), "base prompt");
}

#[tokio::test]
async fn a_blocking_tool_call_hook_yields_an_error_result() {
    let hooks = Arc::new(Recording {
        block_tools: true,
        ..Default::default()
    });
    let h = harness(vec![echo_call("c1", "x"), text("ok")], |b| {
        b.hooks(hooks.clone())
    });
    *hooks.store.lock().unwrap() = Some(h.store.clone());
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
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
    assert_eq!(result.content[0].as_text(), Some("nope"));
}

#[tokio::test]
async fn extension_commands_run_at_once_and_cannot_be_queued() {
    let hooks = Arc::new(Recording {
        commands: vec!["deploy".into()],
        ..Default::default()
    });
    let h = harness(vec![text("x")], |b| b.hooks(hooks.clone()));
    h.session
        .prompt("/deploy now please", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(
        hooks.log.lock().unwrap().clone(),
        ["hook:command:deploy:now please"]
    );
    assert_eq!(h.faux.call_count(), 0);
    let err = h.session.steer("/deploy", vec![]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Extension command \"/deploy\" cannot be queued. Use prompt() or execute the command when not streaming."
    );
    // Without expansion the text is sent as is.
    h.session
        .prompt(
            "/deploy",
            PromptOptions {
                expand_prompt_templates: Some(false),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.faux.call_count(), 1);
}

#[tokio::test]
async fn a_compactor_continuation_runs_again_before_settling() {
    let log: Log = Arc::default();
    let compactor = Arc::new(RecordingCompactor {
        log: log.clone(),
        continue_once: Mutex::new(true),
    });
    let h = harness(vec![text("first"), text("second")], |b| {
        b.compactor(compactor.clone())
    });
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    assert_eq!(h.faux.call_count(), 2);
    assert_eq!(
        log.lock().unwrap().clone(),
        [
            "compactor:check:AfterRun:Stop",
            "compactor:check:AfterRun:Stop"
        ]
    );
    let kinds = h.kinds();
    assert_eq!(kinds.iter().filter(|k| **k == "agent_start").count(), 2);
    assert_eq!(kinds.iter().filter(|k| **k == "agent_settled").count(), 1);
    assert_eq!(kinds.last(), Some(&"agent_settled"));
}

#[derive(Default)]
struct Lifecycle(Log);

impl SessionHooks for Lifecycle {
    fn session_start(
        &self,
        reason: SessionStartReason,
        previous: Option<String>,
    ) -> BoxFuture<'_, ()> {
        let reason = reason.as_str();
        self.0
            .lock()
            .unwrap()
            .push(format!("session_start:{reason}:{previous:?}"));
        Box::pin(async {})
    }
    fn session_shutdown(
        &self,
        reason: ShutdownReason,
        target: Option<String>,
    ) -> BoxFuture<'_, ()> {
        let reason = reason.as_str();
        self.0
            .lock()
            .unwrap()
            .push(format!("session_shutdown:{reason}:{target:?}"));
        Box::pin(async {})
    }
    fn agent_event(&self, event: Arc<AgentEvent>, _turn: TurnInfo) -> BoxFuture<'_, ()> {
        if event.kind() == "agent_start" {
            self.0.lock().unwrap().push("agent_start".into());
        }
        Box::pin(async {})
    }
}

#[tokio::test]
async fn bind_and_shutdown_reach_the_hooks_and_detach_the_session() {
    let hooks = Arc::new(Lifecycle::default());
    let h = harness(vec![text("a"), text("b")], |b| b.hooks(hooks.clone()));
    h.session
        .bind_hooks(SessionStartReason::Startup, None)
        .await;
    h.session
        .prompt("go", PromptOptions::default())
        .await
        .unwrap();
    h.session.shutdown(ShutdownReason::Quit, None).await;
    assert_eq!(
        hooks.0.lock().unwrap().clone(),
        [
            "session_start:startup:None",
            "agent_start",
            "session_shutdown:quit:None"
        ]
    );
    // Detached: the agent no longer reaches the session, its hooks or its listeners.
    let before = h.events().len();
    h.session.agent().prompt("direct").await.unwrap();
    assert_eq!(h.events().len(), before);
    assert_eq!(hooks.0.lock().unwrap().len(), 3);
    assert_eq!(h.store.lock().unwrap().len(), 4);
}
