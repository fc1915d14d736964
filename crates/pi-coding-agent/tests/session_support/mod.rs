//! Shared helpers of the in-process session tests: a session on the faux provider, an echo
//! tool, and an event recorder.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text,
    faux_tool_call,
};
use pi_ai::{AssistantMessage, StopReason};
use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::session::{AgentSession, AgentSessionBuilder, AgentSessionEvent};
use pi_coding_agent::storage::SessionStore;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// A tool returning `echo:<text>`.
pub(crate) struct Echo;

impl AgentTool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn label(&self) -> &str {
        "Echo"
    }
    fn description(&self) -> &str {
        "Echoes its text"
    }
    fn parameters(&self) -> &Value {
        static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type":"object","properties":{"text":{"type":"string"}}}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        args: Value,
        _cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let text = args["text"].as_str().unwrap_or("").to_owned();
            Ok(AgentToolResult::text(format!("echo:{text}"), None))
        })
    }
}

pub(crate) fn text(t: &str) -> FauxStep {
    faux_assistant_message(vec![faux_text(t)], FauxMessageOptions::default()).into()
}

pub(crate) fn error(msg: &str) -> FauxStep {
    faux_assistant_message(
        vec![],
        FauxMessageOptions {
            stop_reason: Some(StopReason::Error),
            error_message: Some(msg.into()),
            ..Default::default()
        },
    )
    .into()
}

pub(crate) fn echo_call(id: &str, t: &str) -> FauxStep {
    let mut args = Map::new();
    args.insert("text".into(), t.into());
    faux_assistant_message(
        vec![faux_tool_call("echo", args, Some(id))],
        FauxMessageOptions {
            stop_reason: Some(StopReason::ToolUse),
            ..Default::default()
        },
    )
    .into()
}

/// Settings with `retry.*` overrides.
pub(crate) fn settings(retry: Value) -> Arc<Mutex<SettingsManager>> {
    let mut m = Map::new();
    m.insert("retry".into(), retry);
    Arc::new(Mutex::new(SettingsManager::in_memory(m)))
}

pub(crate) struct Harness {
    pub faux: FauxProvider,
    pub session: AgentSession,
    pub store: Arc<Mutex<SessionStore>>,
    pub events: Arc<Mutex<Vec<AgentSessionEvent>>>,
}

/// A builder on a fresh faux provider (responses `steps`), an in-memory store and the echo
/// tool; `configure` adjusts it.
pub(crate) fn harness(
    steps: Vec<FauxStep>,
    configure: impl FnOnce(AgentSessionBuilder) -> AgentSessionBuilder,
) -> Harness {
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(steps);
    let store = Arc::new(Mutex::new(SessionStore::in_memory("/tmp")));
    let f = faux.clone();
    let builder = AgentSession::builder()
        .model(faux.model())
        .store(store.clone())
        .tools(vec![Arc::new(Echo)])
        .system_prompt("base prompt")
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)));
    let session = configure(builder).build().unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    session.subscribe(move |e| {
        sink.lock().unwrap().push(e.clone());
        Ok(())
    });
    Harness {
        faux,
        session,
        store,
        events,
    }
}

impl Harness {
    pub(crate) fn kinds(&self) -> Vec<&'static str> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .map(|e| e.kind())
            .collect()
    }

    pub(crate) fn events(&self) -> Vec<AgentSessionEvent> {
        self.events.lock().unwrap().clone()
    }

    /// `(type, role)` of the stored entries.
    pub(crate) fn entry_kinds(&self) -> Vec<String> {
        let s = self.store.lock().unwrap();
        s.entries()
            .unwrap()
            .iter()
            .map(|e| match e.message() {
                Some(m) => format!("message:{}", m.role()),
                None => e.kind.type_name().to_owned(),
            })
            .collect()
    }

    pub(crate) fn stored_assistants(&self) -> Vec<AssistantMessage> {
        let s = self.store.lock().unwrap();
        s.entries()
            .unwrap()
            .iter()
            .filter_map(|e| match e.message() {
                Some(pi_agent_core::AgentMessage::Assistant(a)) => Some((**a).clone()),
                _ => None,
            })
            .collect()
    }
}

/// A tool that blocks until released.
pub(crate) struct Gate(
    pub Arc<tokio::sync::Semaphore>,
    pub Arc<tokio::sync::Notify>,
);

impl pi_agent_core::AgentTool for Gate {
    fn name(&self) -> &str {
        "gate"
    }
    fn label(&self) -> &str {
        "Gate"
    }
    fn description(&self) -> &str {
        "Waits"
    }
    fn parameters(&self) -> &serde_json::Value {
        static S: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type":"object"}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        _args: serde_json::Value,
        _cancel: tokio_util::sync::CancellationToken,
        _on_update: Option<pi_agent_core::ToolUpdateFn>,
    ) -> futures::future::BoxFuture<
        'a,
        Result<pi_agent_core::AgentToolResult, pi_agent_core::ToolError>,
    > {
        Box::pin(async move {
            self.1.notify_one();
            let _permit = self.0.acquire().await;
            Ok(pi_agent_core::AgentToolResult::text("opened", None))
        })
    }
}

pub(crate) fn gate_call() -> pi_ai::providers::faux::FauxStep {
    use pi_ai::providers::faux::*;
    faux_assistant_message(
        vec![faux_tool_call("gate", serde_json::Map::new(), Some("g1"))],
        FauxMessageOptions {
            stop_reason: Some(StopReason::ToolUse),
            ..Default::default()
        },
    )
    .into()
}

/// Waits for its cancellation.
pub(crate) struct UntilCancelled(pub Arc<tokio::sync::Notify>);

impl pi_agent_core::AgentTool for UntilCancelled {
    fn name(&self) -> &str {
        "gate"
    }
    fn label(&self) -> &str {
        "Wait"
    }
    fn description(&self) -> &str {
        "Waits until cancelled"
    }
    fn parameters(&self) -> &serde_json::Value {
        static S: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type":"object"}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        _args: serde_json::Value,
        cancel: tokio_util::sync::CancellationToken,
        _on_update: Option<pi_agent_core::ToolUpdateFn>,
    ) -> futures::future::BoxFuture<
        'a,
        Result<pi_agent_core::AgentToolResult, pi_agent_core::ToolError>,
    > {
        Box::pin(async move {
            self.0.notify_one();
            cancel.cancelled().await;
            Err(pi_agent_core::ToolError::new("Operation aborted"))
        })
    }
}

/// Auth that has no provider.
pub(crate) struct NoKey;
impl pi_coding_agent::session::AuthSource for NoKey {
    fn has_auth(&self, _provider: &str) -> bool {
        false
    }
}

/// Auth whose configured key is resolved per request (a `!command`): `fails` makes the
/// resolution fail as pi-ai's `auth/resolve.ts` does; otherwise the key is `resolved-key`.
#[derive(Default)]
pub(crate) struct CommandKey {
    pub fails: std::sync::atomic::AtomicBool,
}

impl CommandKey {
    /// A key command that always fails.
    pub(crate) fn failing() -> Self {
        CommandKey {
            fails: std::sync::atomic::AtomicBool::new(true),
        }
    }
}

impl pi_coding_agent::session::AuthSource for CommandKey {
    fn has_auth(&self, _provider: &str) -> bool {
        true
    }
    fn resolve_api_key(
        &self,
        provider: &str,
    ) -> Result<Option<String>, pi_coding_agent::config::registry::RequestAuthError> {
        if self.fails.load(std::sync::atomic::Ordering::SeqCst) {
            Err(pi_coding_agent::config::registry::RequestAuthError::Source(
                format!("API key auth failed for provider {provider}: Command failed: exit 3")
                    .into(),
            ))
        } else {
            Ok(Some("resolved-key".into()))
        }
    }
}

/// A tool that answers with its own name.
pub(crate) struct Named(pub &'static str);

impl AgentTool for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn label(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        ""
    }
    fn parameters(&self) -> &Value {
        static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type":"object"}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        _args: Value,
        _cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move { Ok(AgentToolResult::text(self.0, None)) })
    }
}

/// pi's default prompt as a session prompt function, with a fixed cwd (`/work`) and docs
/// paths (`/pi/…`), no context files and no skills.
pub(crate) fn default_prompt_fn() -> pi_coding_agent::session::SystemPromptFn {
    use pi_coding_agent::config::system_prompt::{DocsPaths, SystemPromptBase};
    SystemPromptBase {
        custom_prompt: None,
        append_system_prompt: None,
        cwd: "/work".into(),
        context_files: Vec::new(),
        skills: Vec::new(),
        docs: DocsPaths {
            readme: "/pi/README.md".into(),
            docs: "/pi/docs".into(),
            examples: "/pi/examples".into(),
        },
    }
    .into_prompt_fn()
}
