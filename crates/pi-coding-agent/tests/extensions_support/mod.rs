//! Shared helpers of the extension-runner tests: a runner over closures with a recording
//! error listener, and message helpers.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_ai::{ImageContent, Message, UserContent, UserMessage, UserMessageContent};
use pi_coding_agent::extensions::*;
use serde_json::json;

pub(crate) type Log = Arc<Mutex<Vec<String>>>;

pub(crate) fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

pub(crate) fn entries(l: &Log) -> Vec<String> {
    l.lock().unwrap().clone()
}

/// A runner over `(path, factory)` pairs, with an error listener recording
/// `path|event|error`.
pub(crate) fn runner(exts: Vec<(&str, Factory)>) -> (ExtensionRunner, Log) {
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

pub(crate) type Factory =
    Box<dyn Fn(&mut ExtensionApi<'_>) -> Result<(), HandlerError> + Send + Sync>;

pub(crate) fn ext(
    f: impl Fn(&mut ExtensionApi<'_>) -> Result<(), HandlerError> + Send + Sync + 'static,
) -> Factory {
    Box::new(f)
}

pub(crate) fn user(text: &str) -> AgentMessage {
    Message::User(UserMessage::text(text)).into()
}

pub(crate) fn text_of(m: &AgentMessage) -> String {
    match m {
        AgentMessage::User(u) => match &u.content {
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

pub(crate) fn image(data: &str, mime: &str) -> ImageContent {
    serde_json::from_value(json!({"type":"image","data":data,"mimeType":mime})).unwrap()
}
