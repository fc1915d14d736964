//! Test support: a counting scripted stream function, test tools and event recorders.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use pi_agent_core::{
    Agent, AgentEvent, AgentOptions, AgentTool, AgentToolResult, ExecutionMode, ListenerError,
    StreamFn, ToolError, ToolUpdateFn,
};
use pi_ai::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream,
    Context, Model, PartialMessage, StopReason, StreamOptions, TextContent, ToolCall,
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// One scripted reply.
#[derive(Clone, Debug)]
pub(crate) enum Reply {
    /// `start`, one text block, `done(stop)`.
    Text(String),
    /// `start`, tool-call blocks, `done(toolUse)` (or the given stop reason).
    Tools(Vec<(String, String, Value)>, StopReason),
    /// `start`, text, then `error` with this message.
    Error(String),
    /// A lone `error` event (setup failure before `start`).
    LoneError(String),
    /// `start`, text, and no terminal event.
    Unterminated(String),
}

/// What one request looked like.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub context: Context,
    pub api_key: Option<String>,
    pub session_id: Option<String>,
    pub reasoning: Option<pi_ai::ThinkingLevel>,
    pub model: Model,
}

/// A stream function replaying replies in order; counts only requests actually "sent"
/// (a call with an already-cancelled signal sends nothing and yields `Request aborted`).
#[derive(Clone, Default)]
pub(crate) struct Scripted {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    pub requests: Arc<Mutex<Vec<Request>>>,
    pub calls: Arc<Mutex<usize>>,
}

pub(crate) fn model() -> Model {
    Model {
        id: "test-model".into(),
        name: "Test".into(),
        api: "test-api".into(),
        provider: "test-provider".into(),
        ..Default::default()
    }
}

pub(crate) fn text_reply(s: &str) -> Reply {
    Reply::Text(s.into())
}

pub(crate) fn tool_reply(calls: &[(&str, &str, Value)]) -> Reply {
    Reply::Tools(
        calls
            .iter()
            .map(|(i, n, a)| ((*i).into(), (*n).into(), a.clone()))
            .collect(),
        StopReason::ToolUse,
    )
}

impl Scripted {
    pub(crate) fn new(replies: Vec<Reply>) -> Self {
        Scripted {
            replies: Arc::new(Mutex::new(replies.into())),
            ..Default::default()
        }
    }

    pub(crate) fn push(&self, r: Reply) {
        self.replies.lock().unwrap().push_back(r);
    }

    pub(crate) fn request_count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    pub(crate) fn call_count(&self) -> usize {
        *self.calls.lock().unwrap()
    }

    pub(crate) fn stream_fn(&self) -> StreamFn {
        let this = self.clone();
        Arc::new(
            move |model: Model, context: Context, options: StreamOptions| {
                *this.calls.lock().unwrap() += 1;
                if options.signal.as_ref().is_some_and(|s| s.is_cancelled()) {
                    let mut m = AssistantMessage::empty(&model.api, &model.provider, &model.id);
                    m.stop_reason = StopReason::Aborted;
                    m.error_message = Some("Request aborted".into());
                    return AssistantMessageEventStream::error_only(m);
                }
                this.requests.lock().unwrap().push(Request {
                    context,
                    api_key: options.api_key.clone(),
                    session_id: options.session_id.clone(),
                    reasoning: options.reasoning,
                    model: model.clone(),
                });
                let reply = this
                    .replies
                    .lock()
                    .unwrap()
                    .pop_front()
                    .unwrap_or(Reply::Text("(no more replies)".into()));
                AssistantMessageEventStream::from_events(events_for(&model, reply))
            },
        )
    }
}

/// The events of one reply, built on a shared partial as a provider would.
pub(crate) fn events_for(model: &Model, reply: Reply) -> Vec<AssistantMessageEvent> {
    let partial = PartialMessage::new(AssistantMessage::empty(
        &model.api,
        &model.provider,
        &model.id,
    ));
    let mut ev = Vec::new();
    let text_events = |ev: &mut Vec<AssistantMessageEvent>, text: &str| {
        let i = partial.update(|m| {
            m.content.push(AssistantContent::Text(TextContent::new("")));
            m.content.len() - 1
        });
        ev.push(AssistantMessageEvent::TextStart {
            content_index: i,
            partial: partial.clone(),
        });
        partial.update(|m| {
            if let AssistantContent::Text(t) = &mut m.content[i] {
                t.text.push_str(text);
            }
        });
        ev.push(AssistantMessageEvent::TextDelta {
            content_index: i,
            delta: text.into(),
            partial: partial.clone(),
        });
        ev.push(AssistantMessageEvent::TextEnd {
            content_index: i,
            content: text.into(),
            partial: partial.clone(),
        });
    };
    match reply {
        Reply::LoneError(msg) => {
            let mut m = partial.snapshot();
            m.stop_reason = StopReason::Error;
            m.error_message = Some(msg);
            return vec![AssistantMessageEvent::Error {
                reason: StopReason::Error,
                error: Box::new(m),
            }];
        }
        Reply::Text(t) => {
            ev.push(AssistantMessageEvent::Start {
                partial: partial.clone(),
            });
            text_events(&mut ev, &t);
            partial.update(|m| m.stop_reason = StopReason::Stop);
            ev.push(AssistantMessageEvent::Done {
                reason: StopReason::Stop,
                message: Box::new(partial.snapshot()),
            });
        }
        Reply::Unterminated(t) => {
            ev.push(AssistantMessageEvent::Start {
                partial: partial.clone(),
            });
            text_events(&mut ev, &t);
        }
        Reply::Error(msg) => {
            ev.push(AssistantMessageEvent::Start {
                partial: partial.clone(),
            });
            text_events(&mut ev, "partial");
            partial.update(|m| {
                m.stop_reason = StopReason::Error;
                m.error_message = Some(msg.clone());
            });
            ev.push(AssistantMessageEvent::Error {
                reason: StopReason::Error,
                error: Box::new(partial.snapshot()),
            });
        }
        Reply::Tools(calls, stop) => {
            ev.push(AssistantMessageEvent::Start {
                partial: partial.clone(),
            });
            for (id, name, args) in calls {
                let mut arguments = args.as_object().cloned().unwrap_or_else(Map::new);
                // `"$refused": true` marks a call whose arguments the mapper refused.
                let refused = arguments.remove("$refused").is_some();
                let call = ToolCall {
                    id,
                    name,
                    arguments,
                    arguments_error: refused.then_some(pi_ai::partial_json::FinishError::Invalid),
                    ..Default::default()
                };
                let i = partial.update(|m| {
                    m.content.push(AssistantContent::ToolCall(call.clone()));
                    m.content.len() - 1
                });
                ev.push(AssistantMessageEvent::ToolcallStart {
                    content_index: i,
                    partial: partial.clone(),
                });
                ev.push(AssistantMessageEvent::ToolcallEnd {
                    content_index: i,
                    tool_call: Box::new(call),
                    partial: partial.clone(),
                });
            }
            partial.update(|m| m.stop_reason = stop);
            ev.push(AssistantMessageEvent::Done {
                reason: stop,
                message: Box::new(partial.snapshot()),
            });
        }
    }
    ev
}

/// A configurable test tool.
pub(crate) struct TestTool {
    pub name: String,
    pub schema: Value,
    pub mode: ExecutionMode,
    /// Delay before returning (paused-clock time).
    pub delay: Duration,
    /// Updates sent before returning.
    pub updates: Vec<String>,
    /// Result text (`{args}` is replaced by the JSON of the arguments).
    pub result: String,
    pub fail: Option<String>,
    pub panic: bool,
    pub terminate: Option<bool>,
    /// Records (name, args) of each execution in order of start.
    pub log: Arc<Mutex<Vec<String>>>,
    /// Keeps the `on_update` callback to call after `execute` returned.
    pub kept_update: Arc<Mutex<Option<ToolUpdateFn>>>,
}

impl TestTool {
    pub(crate) fn new(name: &str) -> Self {
        TestTool {
            name: name.into(),
            schema: json!({"type":"object","properties":{"value":{"type":"string"}}}),
            mode: ExecutionMode::Parallel,
            delay: Duration::ZERO,
            updates: Vec::new(),
            result: format!("{name} done"),
            fail: None,
            panic: false,
            terminate: None,
            log: Arc::default(),
            kept_update: Arc::default(),
        }
    }
    pub(crate) fn delay_ms(mut self, ms: u64) -> Self {
        self.delay = Duration::from_millis(ms);
        self
    }
    pub(crate) fn schema(mut self, s: Value) -> Self {
        self.schema = s;
        self
    }
    pub(crate) fn sequential(mut self) -> Self {
        self.mode = ExecutionMode::Sequential;
        self
    }
    pub(crate) fn updates(mut self, u: &[&str]) -> Self {
        self.updates = u.iter().map(|s| (*s).to_owned()).collect();
        self
    }
    pub(crate) fn fail(mut self, msg: &str) -> Self {
        self.fail = Some(msg.into());
        self
    }
    pub(crate) fn panics(mut self) -> Self {
        self.panic = true;
        self
    }
    pub(crate) fn terminate(mut self, t: bool) -> Self {
        self.terminate = Some(t);
        self
    }
    pub(crate) fn log(mut self, log: &Arc<Mutex<Vec<String>>>) -> Self {
        self.log = Arc::clone(log);
        self
    }
    pub(crate) fn arc(self) -> Arc<dyn AgentTool> {
        Arc::new(self)
    }
}

impl AgentTool for TestTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn label(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "test tool"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }
    fn execute<'a>(
        &'a self,
        tool_call_id: &'a str,
        args: Value,
        cancel: CancellationToken,
        on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            self.log
                .lock()
                .unwrap()
                .push(format!("exec {} {}", tool_call_id, args));
            if self.panic {
                panic!("tool exploded");
            }
            if let Some(u) = &on_update {
                for text in &self.updates {
                    u(AgentToolResult::text(text.clone(), None));
                }
                *self.kept_update.lock().unwrap() = Some(u.clone());
            }
            if !self.delay.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep(self.delay) => {}
                    _ = cancel.cancelled() => {
                        return Err(ToolError::new("cancelled"));
                    }
                }
            }
            self.log
                .lock()
                .unwrap()
                .push(format!("done {}", tool_call_id));
            if let Some(f) = &self.fail {
                return Err(ToolError::new(f.clone()));
            }
            let mut r = AgentToolResult::text(
                self.result.replace("{args}", &args.to_string()),
                Some(json!({"id": tool_call_id})),
            );
            r.terminate = self.terminate;
            Ok(r)
        })
    }
}

/// Records every event delivered to a listener.
#[derive(Clone, Default)]
pub(crate) struct Recorder {
    pub events: Arc<Mutex<Vec<Arc<AgentEvent>>>>,
}

impl Recorder {
    pub(crate) fn attach(agent: &Agent) -> Self {
        let r = Recorder::default();
        let events = Arc::clone(&r.events);
        agent.subscribe(move |e, _| {
            events.lock().unwrap().push(e);
            async { Ok::<(), ListenerError>(()) }
        });
        r
    }

    pub(crate) fn events(&self) -> Vec<Arc<AgentEvent>> {
        self.events.lock().unwrap().clone()
    }

    /// Event kinds, with a suffix naming the message role / tool call where useful.
    pub(crate) fn labels(&self) -> Vec<String> {
        self.events().iter().map(|e| label(e)).collect()
    }

    pub(crate) fn kinds(&self) -> Vec<&'static str> {
        self.events().iter().map(|e| e.kind()).collect()
    }
}

/// `kind` or `kind:role` / `kind:toolCallId`.
pub(crate) fn label(e: &AgentEvent) -> String {
    match e {
        AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
            format!("{}:{}", e.kind(), message.role())
        }
        AgentEvent::ToolExecutionStart { tool_call_id, .. }
        | AgentEvent::ToolExecutionUpdate { tool_call_id, .. }
        | AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
            format!("{}:{}", e.kind(), tool_call_id)
        }
        _ => e.kind().to_owned(),
    }
}

/// An agent on the scripted stream with the test model and the given tools.
pub(crate) fn agent_with(script: &Scripted, tools: Vec<Arc<dyn AgentTool>>) -> Agent {
    let agent = Agent::new(AgentOptions::new(script.stream_fn()));
    agent.set_model(model());
    agent.set_tools(tools);
    agent
}

/// The text of a tool result's first block.
pub(crate) fn result_text(r: &AgentToolResult) -> String {
    r.content
        .first()
        .and_then(|c| c.as_text())
        .unwrap_or_default()
        .to_owned()
}

/// A stream function whose response starts, then waits for the signal and ends `aborted`
/// with `This operation was aborted` (as the Anthropic adapter does). Counts calls in `calls`.
pub(crate) fn waiting_stream_fn(calls: Arc<Mutex<usize>>) -> StreamFn {
    Arc::new(move |model: Model, _ctx: Context, options: StreamOptions| {
        *calls.lock().unwrap() += 1;
        let (mut sink, stream) = pi_ai::event_channel(None);
        let signal = options.signal.unwrap_or_default();
        tokio::spawn(async move {
            let partial = PartialMessage::new(AssistantMessage::empty(
                &model.api,
                &model.provider,
                &model.id,
            ));
            sink.push(AssistantMessageEvent::Start {
                partial: partial.clone(),
            })
            .await;
            signal.cancelled().await;
            let mut m = partial.snapshot();
            m.stop_reason = StopReason::Aborted;
            m.error_message = Some("This operation was aborted".into());
            sink.push(AssistantMessageEvent::Error {
                reason: StopReason::Aborted,
                error: Box::new(m),
            })
            .await;
        });
        stream
    })
}

/// A user message with one text block.
pub(crate) fn user(text: &str) -> pi_agent_core::AgentMessage {
    pi_ai::Message::User(pi_ai::UserMessage::text(text)).into()
}

/// The text of a user message (first text block).
pub(crate) fn user_text(m: &pi_agent_core::AgentMessage) -> Option<String> {
    match m.to_llm() {
        Some(pi_ai::Message::User(u)) => u
            .content
            .to_blocks()
            .first()
            .and_then(|b| b.as_text().map(str::to_owned)),
        _ => None,
    }
}
