//! A tiny in-memory "model" for the examples: replays scripted replies, one per LLM call.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use pi_agent_core::StreamFn;
use pi_ai::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, AssistantMessageEventStream, Model,
    PartialMessage, StopReason, TextContent, ToolCall,
};
use serde_json::Value;

/// One reply of the scripted model.
pub(crate) enum Reply {
    /// Answer with text.
    Text(&'static str),
    /// Call one tool with these arguments.
    Call(&'static str, Value),
}

/// A model id for the examples.
pub(crate) fn model() -> Model {
    Model {
        id: "scripted".into(),
        name: "Scripted".into(),
        api: "scripted".into(),
        provider: "example".into(),
        ..Default::default()
    }
}

/// A stream function replaying `replies`; an already-cancelled signal yields `aborted`.
pub(crate) fn scripted(replies: Vec<Reply>) -> StreamFn {
    let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
    Arc::new(move |model, _context, options| {
        let mut msg = AssistantMessage::empty(&model.api, &model.provider, &model.id);
        if options.signal.as_ref().is_some_and(|s| s.is_cancelled()) {
            msg.stop_reason = StopReason::Aborted;
            msg.error_message = Some("Request aborted".into());
            return AssistantMessageEventStream::error_only(msg);
        }
        let reply = replies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front()
            .unwrap_or(Reply::Text("(nothing more to say)"));
        let partial = PartialMessage::new(msg);
        let mut events = vec![AssistantMessageEvent::Start {
            partial: partial.clone(),
        }];
        let stop = match reply {
            Reply::Text(text) => {
                partial.update(|m| {
                    m.content
                        .push(AssistantContent::Text(TextContent::new(text)))
                });
                events.push(AssistantMessageEvent::TextDelta {
                    content_index: 0,
                    delta: text.into(),
                    partial: partial.clone(),
                });
                StopReason::Stop
            }
            Reply::Call(name, args) => {
                let call = ToolCall {
                    id: format!("call_{name}"),
                    name: name.into(),
                    arguments: args.as_object().cloned().unwrap_or_default(),
                    ..Default::default()
                };
                partial.update(|m| m.content.push(AssistantContent::ToolCall(call.clone())));
                events.push(AssistantMessageEvent::ToolcallEnd {
                    content_index: 0,
                    tool_call: Box::new(call),
                    partial: partial.clone(),
                });
                StopReason::ToolUse
            }
        };
        partial.update(|m| m.stop_reason = stop);
        events.push(AssistantMessageEvent::Done {
            reason: stop,
            message: Box::new(partial.snapshot()),
        });
        AssistantMessageEventStream::from_events(events)
    })
}
