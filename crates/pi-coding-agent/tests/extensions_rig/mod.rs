//! A session with extensions on the faux provider, for the end-to-end extension tests
//! (needs the test crate to declare `mod session_support;`).
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text,
};
use pi_ai::{AssistantContent, Message, UserContent, UserMessageContent};
use pi_coding_agent::extensions::*;
use pi_coding_agent::session::{AgentSession, AgentSessionEvent};
use pi_coding_agent::storage::SessionStore;

use crate::session_support::Echo;

pub(crate) type Log = Arc<Mutex<Vec<String>>>;

pub(crate) fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

pub(crate) fn entries(l: &Log) -> Vec<String> {
    l.lock().unwrap().clone()
}

pub(crate) struct Rig {
    pub faux: FauxProvider,
    pub session: AgentSession,
    pub hooks: Arc<ExtensionHooks>,
    pub store: Arc<Mutex<SessionStore>>,
    pub events: Arc<Mutex<Vec<AgentSessionEvent>>>,
}

/// A session with `extensions` on a faux provider answering `steps`; the stream function
/// goes through the provider hooks.
pub(crate) fn rig(steps: Vec<FauxStep>, extensions: Vec<Box<dyn Extension>>) -> Rig {
    rig_with(FauxOptions::default(), steps, extensions)
}

pub(crate) fn rig_with(
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

pub(crate) struct BoxedExtension(pub Box<dyn Extension>);

impl Extension for BoxedExtension {
    fn path(&self) -> &str {
        self.0.path()
    }
    fn register(&self, pi: &mut ExtensionApi<'_>) -> Result<(), HandlerError> {
        self.0.register(pi)
    }
}

pub(crate) fn ext(
    path: &str,
    f: impl Fn(&mut ExtensionApi<'_>) -> Result<(), HandlerError> + Send + Sync + 'static,
) -> Box<dyn Extension> {
    Box::new(FnExtension::new(path, f))
}

pub(crate) fn message_text(m: &Message) -> String {
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
pub(crate) fn seen_by_model(seen: Log, reply: &'static str) -> FauxStep {
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

pub(crate) fn stored(r: &Rig) -> Vec<String> {
    let s = r.store.lock().unwrap();
    s.entries()
        .unwrap()
        .iter()
        .filter_map(|e| match e.message() {
            Some(AgentMessage::Custom(c)) => Some(format!("custom:{}", c["customType"])),
            Some(m) => m
                .to_llm()
                .map(|m| format!("{}:{}", m.role(), message_text(&m))),
            None => match e.kind.type_name() {
                "custom_message" => Some("custom_message".into()),
                "custom" => Some("custom".into()),
                _ => None,
            },
        })
        .collect()
}
