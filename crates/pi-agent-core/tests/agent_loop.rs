//! The low-level loop without `Agent` (ported from the reference's `agent-loop.test.ts`,
//! adapted to 0.85): produced messages, `convert_to_llm` / `transform_context`, a `done`
//! without `start`, steering after the whole batch, `prepare_next_turn` context swaps, and
//! the continue entry point.

use crate::support;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::agent_loop::{
    AgentContext, AgentLoopConfig, EventSink, check_continue, run_agent_loop,
    run_agent_loop_continue,
};
use pi_agent_core::{AgentError, AgentEvent, AgentMessage, ListenerError, TurnUpdate};
use pi_ai::{AssistantMessageEvent, AssistantMessageEventStream, Message, StopReason};
use serde_json::{Map, json};
use support::*;
use tokio_util::sync::CancellationToken;

/// Records events; never fails.
#[derive(Default)]
struct Collect(Mutex<Vec<AgentEvent>>);

impl EventSink for Collect {
    fn emit(&self, event: AgentEvent) -> BoxFuture<'static, Result<(), ListenerError>> {
        self.0.lock().unwrap().push(event);
        Box::pin(async { Ok(()) })
    }
}

impl Collect {
    fn kinds(&self) -> Vec<String> {
        self.0.lock().unwrap().iter().map(support::label).collect()
    }
}

fn config() -> AgentLoopConfig {
    AgentLoopConfig::new(model())
}

#[tokio::test]
async fn prompt_run_returns_user_and_assistant() {
    let script = Scripted::new(vec![text_reply("Hi there!")]);
    let sink = Arc::new(Collect::default());
    let ctx = AgentContext {
        system_prompt: "You are helpful.".into(),
        ..Default::default()
    };
    let out = run_agent_loop(
        vec![user("Hello")],
        ctx,
        config(),
        sink.clone(),
        CancellationToken::new(),
        script.stream_fn(),
    )
    .await
    .unwrap();
    let roles: Vec<&str> = out.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["user", "assistant"]);
    let k = sink.kinds();
    assert_eq!(k.first().unwrap(), "agent_start");
    assert_eq!(k.last().unwrap(), "agent_end");
    let req = &script.requests.lock().unwrap()[0];
    assert_eq!(
        req.context.system_prompt.as_deref(),
        Some("You are helpful.")
    );
}

#[tokio::test]
async fn done_without_start_still_emits_message_start_and_end() {
    let stream_fn: pi_agent_core::StreamFn = Arc::new(|m, _, _| {
        let mut msg = pi_ai::AssistantMessage::empty(&m.api, &m.provider, &m.id);
        msg.content = vec![pi_ai::AssistantContent::text("Hi")];
        msg.stop_reason = StopReason::Stop;
        AssistantMessageEventStream::from_events(vec![AssistantMessageEvent::Done {
            reason: StopReason::Stop,
            message: Box::new(msg),
        }])
    });
    let sink = Arc::new(Collect::default());
    run_agent_loop(
        vec![user("Hello")],
        AgentContext::default(),
        config(),
        sink.clone(),
        CancellationToken::new(),
        stream_fn,
    )
    .await
    .unwrap();
    assert_eq!(
        sink.kinds(),
        [
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end"
        ]
    );
}

#[tokio::test]
async fn custom_messages_reach_the_model_only_through_convert_to_llm() {
    let script = Scripted::new(vec![text_reply("Response")]);
    let mut notification = Map::new();
    notification.insert("role".into(), json!("notification"));
    notification.insert("text".into(), json!("This is a notification"));
    let ctx = AgentContext {
        messages: vec![AgentMessage::custom(notification)],
        ..Default::default()
    };
    let converted = Arc::new(Mutex::new(0));
    let c = Arc::clone(&converted);
    let mut cfg = config();
    cfg.convert_to_llm = Arc::new(move |msgs| {
        let out = pi_agent_core::agent_loop::default_convert_to_llm(msgs);
        *c.lock().unwrap() = out.len();
        out
    });
    run_agent_loop(
        vec![user("Hello")],
        ctx,
        cfg,
        Arc::new(Collect::default()),
        CancellationToken::new(),
        script.stream_fn(),
    )
    .await
    .unwrap();
    assert_eq!(*converted.lock().unwrap(), 1);
    let req = &script.requests.lock().unwrap()[0];
    assert_eq!(req.context.messages.len(), 1);
    assert_eq!(req.context.messages[0].role(), "user");
}

#[tokio::test]
async fn transform_context_prunes_before_conversion() {
    let script = Scripted::new(vec![text_reply("Response")]);
    let ctx = AgentContext {
        messages: vec![user("old 1"), user("old 2"), user("old 3")],
        ..Default::default()
    };
    let mut cfg = config();
    cfg.transform_context = Some(Arc::new(|msgs, _| {
        let keep = msgs[msgs.len() - 2..].to_vec();
        Box::pin(async move { Ok(keep) })
    }));
    run_agent_loop(
        vec![user("new")],
        ctx,
        cfg,
        Arc::new(Collect::default()),
        CancellationToken::new(),
        script.stream_fn(),
    )
    .await
    .unwrap();
    let req = &script.requests.lock().unwrap()[0];
    assert_eq!(req.context.messages.len(), 2);
}

#[tokio::test]
async fn steering_is_injected_after_all_tool_calls_complete() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let script = Scripted::new(vec![
        tool_reply(&[("tool-1", "echo", json!({})), ("tool-2", "echo", json!({}))]),
        text_reply("done"),
    ]);
    let ctx = AgentContext {
        tools: vec![TestTool::new("echo").log(&log).arc()],
        ..Default::default()
    };
    let delivered = Arc::new(Mutex::new(false));
    let (d, l) = (Arc::clone(&delivered), Arc::clone(&log));
    let mut cfg = config();
    cfg.tool_execution = pi_agent_core::ExecutionMode::Sequential;
    cfg.get_steering_messages = Some(Arc::new(move || {
        let mut d = d.lock().unwrap();
        if !l.lock().unwrap().is_empty() && !*d {
            *d = true;
            return vec![user("interrupt")];
        }
        Vec::new()
    }));
    let sink = Arc::new(Collect::default());
    run_agent_loop(
        vec![user("start")],
        ctx,
        cfg,
        sink.clone(),
        CancellationToken::new(),
        script.stream_fn(),
    )
    .await
    .unwrap();
    assert_eq!(log.lock().unwrap().len(), 4, "both calls executed");
    let starts: Vec<String> = sink
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageStart { message } => match message.to_llm() {
                Some(Message::ToolResult(r)) => Some(format!("tool:{}", r.tool_call_id)),
                Some(Message::User(_)) => user_text(message),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(starts, ["start", "tool:tool-1", "tool:tool-2", "interrupt"]);
    let req = &script.requests.lock().unwrap()[1];
    assert_eq!(req.context.messages.last().unwrap().role(), "user");
}

#[tokio::test]
async fn prepare_next_turn_can_replace_the_context() {
    let script = Scripted::new(vec![
        tool_reply(&[("1", "echo", json!({}))]),
        text_reply("x"),
    ]);
    let ctx = AgentContext {
        system_prompt: "first prompt".into(),
        tools: vec![TestTool::new("echo").arc()],
        ..Default::default()
    };
    let mut cfg = config();
    cfg.prepare_next_turn = Some(Arc::new(|turn, _| {
        let mut next = (*turn.context).clone();
        next.system_prompt = "second prompt".into();
        Box::pin(async move {
            Ok(Some(TurnUpdate {
                context: Some(next),
                ..Default::default()
            }))
        })
    }));
    run_agent_loop(
        vec![user("go")],
        ctx,
        cfg,
        Arc::new(Collect::default()),
        CancellationToken::new(),
        script.stream_fn(),
    )
    .await
    .unwrap();
    let reqs = script.requests.lock().unwrap();
    assert_eq!(
        reqs[1].context.system_prompt.as_deref(),
        Some("second prompt")
    );
    assert_eq!(reqs[1].context.messages.len(), 3);
}

#[tokio::test]
async fn continue_checks_and_runs_without_prompt_events() {
    let empty = AgentContext::default();
    assert_eq!(check_continue(&empty), Err(AgentError::NoMessagesInContext));
    assert_eq!(
        AgentError::NoMessagesInContext.to_string(),
        "Cannot continue: no messages in context"
    );
    let mut a = pi_ai::AssistantMessage::empty("a", "b", "c");
    a.stop_reason = StopReason::Stop;
    let tail = AgentContext {
        messages: vec![user("hi"), Message::Assistant(a).into()],
        ..Default::default()
    };
    assert_eq!(
        check_continue(&tail).unwrap_err().to_string(),
        "Cannot continue from message role: assistant"
    );

    let mut custom = Map::new();
    custom.insert("role".into(), json!("custom"));
    let ctx = AgentContext {
        messages: vec![user("hi"), AgentMessage::custom(custom)],
        ..Default::default()
    };
    check_continue(&ctx).unwrap();
    let script = Scripted::new(vec![text_reply("ok")]);
    let sink = Arc::new(Collect::default());
    let out = run_agent_loop_continue(
        ctx,
        config(),
        sink.clone(),
        CancellationToken::new(),
        script.stream_fn(),
    )
    .await
    .unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(
        &sink.kinds()[..3],
        ["agent_start", "turn_start", "message_start:assistant"]
    );
}

#[tokio::test]
async fn the_continue_entry_point_enforces_its_preconditions_before_any_event() {
    let mut a = pi_ai::AssistantMessage::empty("a", "b", "c");
    a.stop_reason = StopReason::Stop;
    let cases = [
        (
            AgentContext::default(),
            "Cannot continue: no messages in context",
        ),
        (
            AgentContext {
                messages: vec![user("hi"), Message::Assistant(a).into()],
                ..Default::default()
            },
            "Cannot continue from message role: assistant",
        ),
    ];
    for (ctx, text) in cases {
        let script = Scripted::new(vec![text_reply("never")]);
        let sink = Arc::new(Collect::default());
        let err = run_agent_loop_continue(
            ctx,
            config(),
            sink.clone(),
            CancellationToken::new(),
            script.stream_fn(),
        )
        .await
        .unwrap_err();
        assert_eq!(err.to_string(), text);
        assert!(sink.kinds().is_empty(), "{:?}", sink.kinds());
        assert!(script.requests.lock().unwrap().is_empty());
    }
}

#[tokio::test]
async fn a_failing_hook_surfaces_as_the_loop_error() {
    let script = Scripted::new(vec![text_reply("never")]);
    let mut cfg = config();
    cfg.get_api_key = Some(Arc::new(|_| {
        Box::pin(async { Err(pi_agent_core::HookError::new("auth store locked")) })
    }));
    let err = run_agent_loop(
        vec![user("hi")],
        AgentContext::default(),
        cfg,
        Arc::new(Collect::default()),
        CancellationToken::new(),
        script.stream_fn(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.message(), "auth store locked");
    assert_eq!(script.call_count(), 0);
}

#[tokio::test]
async fn block_events_before_start_are_ignored() {
    let stream_fn: pi_agent_core::StreamFn = Arc::new(|m, _, _| {
        let partial =
            pi_ai::PartialMessage::new(pi_ai::AssistantMessage::empty(&m.api, &m.provider, &m.id));
        let mut done = partial.snapshot();
        done.stop_reason = StopReason::Stop;
        AssistantMessageEventStream::from_events(vec![
            AssistantMessageEvent::TextDelta {
                content_index: 0,
                delta: "early".into(),
                partial: partial.clone(),
            },
            AssistantMessageEvent::Start {
                partial: partial.clone(),
            },
            AssistantMessageEvent::TextDelta {
                content_index: 0,
                delta: "late".into(),
                partial,
            },
            AssistantMessageEvent::Done {
                reason: StopReason::Stop,
                message: Box::new(done),
            },
        ])
    });
    let sink = Arc::new(Collect::default());
    run_agent_loop(
        vec![user("Hello")],
        AgentContext::default(),
        config(),
        sink.clone(),
        CancellationToken::new(),
        stream_fn,
    )
    .await
    .unwrap();
    let deltas: Vec<String> = sink
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageUpdate {
                assistant_message_event: AssistantMessageEvent::TextDelta { delta, .. },
                ..
            } => Some(delta.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, ["late"]);
}

#[tokio::test]
async fn the_request_carries_system_prompt_tools_and_the_api_key_fallback() {
    let script = Scripted::new(vec![text_reply("a"), text_reply("b")]);
    let ctx = AgentContext {
        system_prompt: "sys".into(),
        tools: vec![TestTool::new("echo").arc()],
        ..Default::default()
    };
    let mut cfg = config();
    cfg.options.api_key = Some("fallback-key".into());
    // An empty key from get_api_key falls back to options.api_key (pi: `||`).
    cfg.get_api_key = Some(Arc::new(|_| Box::pin(async { Ok(Some(String::new())) })));
    run_agent_loop(
        vec![user("x")],
        ctx.clone(),
        cfg.clone(),
        Arc::new(Collect::default()),
        CancellationToken::new(),
        script.stream_fn(),
    )
    .await
    .unwrap();
    cfg.get_api_key = Some(Arc::new(|p| {
        Box::pin(async move { Ok(Some(format!("k-{p}"))) })
    }));
    run_agent_loop(
        vec![user("y")],
        ctx,
        cfg,
        Arc::new(Collect::default()),
        CancellationToken::new(),
        script.stream_fn(),
    )
    .await
    .unwrap();
    let reqs = script.requests.lock().unwrap();
    assert_eq!(reqs[0].context.system_prompt.as_deref(), Some("sys"));
    let tools = reqs[0].context.tools.as_ref().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "echo");
    assert_eq!(tools[0].description, "test tool");
    assert_eq!(reqs[0].api_key.as_deref(), Some("fallback-key"));
    assert_eq!(reqs[1].api_key.as_deref(), Some("k-test-provider"));
}
