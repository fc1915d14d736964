//! Each event as it crosses the pipe: the event object pi gives handlers, and the handler's
//! answer read back into the runner's result type (see the table in
//! `docs/extension-protocol.md`).

use pi_agent_core::AgentMessage;
use pi_ai::{ImageContent, UserContent};
use serde_json::{Map, Value, json};

use crate::extensions::events::{self as ev, ExtensionEvent};

/// An event a remote extension can handle.
pub trait RemoteEvent: ExtensionEvent {
    /// pi's event object.
    fn to_wire(&self) -> Value;

    /// Reads the answer `{result, …}`: applies the in-place changes pi allows to `self`
    /// and returns the handler result.
    ///
    /// # Errors
    /// An answer of the wrong shape.
    fn read_answer(&mut self, answer: &Value) -> Result<Option<Self::Output>, AnswerShapeError>;
}

fn to_value(v: &impl serde::Serialize) -> Value {
    match serde_json::to_value(v) {
        Ok(Value::Null) => json!({}),
        Ok(v) => v,
        Err(e) => json!({"serializationError": e.to_string()}),
    }
}

/// The `result` member, `None` when absent or `null`.
fn result(answer: &Value) -> Option<&Value> {
    answer.get("result").filter(|r| !r.is_null())
}

/// An answer whose `result` is not of the shape its event allows; the runner reports the
/// text as the handler's error (`HandlerError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {event} result: {detail}")]
pub struct AnswerShapeError {
    event: String,
    detail: String,
}

fn shape(event: &str, e: impl std::fmt::Display) -> AnswerShapeError {
    AnswerShapeError {
        event: event.to_owned(),
        detail: e.to_string(),
    }
}

fn parse<T: serde::de::DeserializeOwned>(event: &str, v: &Value) -> Result<T, AnswerShapeError> {
    serde_json::from_value(v.clone()).map_err(|e| shape(event, e))
}

fn bool_field(v: &Value, name: &str) -> Option<bool> {
    v.get(name).and_then(Value::as_bool)
}

fn string_field(v: &Value, name: &str) -> Option<String> {
    v.get(name).and_then(Value::as_str).map(str::to_owned)
}

fn string_list(v: &Value, name: &str) -> Vec<String> {
    v.get(name)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Observers: pi ignores what they return.
macro_rules! remote_observers {
    ($($ty:ty),* $(,)?) => {
        $(impl RemoteEvent for $ty {
            fn to_wire(&self) -> Value {
                to_value(self)
            }
            fn read_answer(&mut self, _answer: &Value) -> Result<Option<()>, AnswerShapeError> {
                Ok(None)
            }
        })*
    };
}

remote_observers!(
    ev::SessionStartEvent,
    ev::SessionShutdownEvent,
    ev::SessionInfoChangedEvent,
    ev::ThinkingLevelSelectEvent,
    ev::AgentStartEvent,
    ev::AgentEndEvent,
    ev::TurnStartEvent,
    ev::TurnEndEvent,
    ev::MessageStartEvent,
    ev::ToolExecutionStartEvent,
    ev::ToolExecutionUpdateEvent,
    ev::ToolExecutionEndEvent,
);

impl RemoteEvent for ev::ToolCallEvent {
    fn to_wire(&self) -> Value {
        to_value(self)
    }
    fn read_answer(
        &mut self,
        answer: &Value,
    ) -> Result<Option<ev::ToolCallResult>, AnswerShapeError> {
        if let Some(input) = answer.get("input").filter(|i| !i.is_null()) {
            self.input = input.clone();
        }
        Ok(result(answer).map(|r| ev::ToolCallResult {
            block: bool_field(r, "block").unwrap_or(false),
            reason: string_field(r, "reason"),
            terminate: bool_field(r, "terminate"),
        }))
    }
}

impl RemoteEvent for ev::ToolResultEvent {
    fn to_wire(&self) -> Value {
        to_value(self)
    }
    fn read_answer(
        &mut self,
        answer: &Value,
    ) -> Result<Option<ev::ToolResultPatch>, AnswerShapeError> {
        let Some(r) = result(answer) else {
            return Ok(None);
        };
        let content = match r.get("content") {
            Some(c) if !c.is_null() => Some(parse::<Vec<UserContent>>("tool_result", c)?),
            _ => None,
        };
        Ok(Some(ev::ToolResultPatch {
            content,
            details: r.get("details").filter(|d| !d.is_null()).cloned(),
            is_error: bool_field(r, "isError"),
            usage: None,
        }))
    }
}

impl RemoteEvent for ev::InputEvent {
    fn to_wire(&self) -> Value {
        to_value(self)
    }
    fn read_answer(&mut self, answer: &Value) -> Result<Option<ev::InputResult>, AnswerShapeError> {
        let Some(r) = result(answer) else {
            return Ok(None);
        };
        match r.get("action").and_then(Value::as_str) {
            Some("handled") => Ok(Some(ev::InputResult::Handled)),
            Some("transform") => {
                let text = string_field(r, "text").ok_or_else(|| shape("input", "no text"))?;
                let images = match r.get("images") {
                    Some(i) if !i.is_null() => Some(parse::<Vec<ImageContent>>("input", i)?),
                    _ => None,
                };
                Ok(Some(ev::InputResult::Transform { text, images }))
            }
            Some("continue") | None => Ok(Some(ev::InputResult::Continue)),
            Some(other) => Err(shape("input", format!("unknown action {other:?}"))),
        }
    }
}

fn custom_message(event: &str, m: &Value) -> Result<ev::CustomMessageSpec, AnswerShapeError> {
    Ok(ev::CustomMessageSpec {
        custom_type: string_field(m, "customType").ok_or_else(|| shape(event, "no customType"))?,
        content: m
            .get("content")
            .cloned()
            .unwrap_or(Value::String(String::new())),
        display: bool_field(m, "display").unwrap_or(true),
        details: m.get("details").filter(|d| !d.is_null()).cloned(),
    })
}

impl RemoteEvent for ev::BeforeAgentStartEvent {
    fn to_wire(&self) -> Value {
        to_value(self)
    }
    fn read_answer(
        &mut self,
        answer: &Value,
    ) -> Result<Option<ev::BeforeAgentStartResult>, AnswerShapeError> {
        let Some(r) = result(answer) else {
            return Ok(None);
        };
        let message = match r.get("message") {
            Some(m) if !m.is_null() => Some(custom_message("before_agent_start", m)?),
            _ => None,
        };
        Ok(Some(ev::BeforeAgentStartResult {
            message,
            system_prompt: string_field(r, "systemPrompt"),
        }))
    }
}

impl RemoteEvent for ev::ContextEvent {
    fn to_wire(&self) -> Value {
        to_value(self)
    }
    fn read_answer(
        &mut self,
        answer: &Value,
    ) -> Result<Option<ev::ContextResult>, AnswerShapeError> {
        let Some(r) = result(answer) else {
            return Ok(None);
        };
        match r.get("messages") {
            Some(m) => Ok(Some(ev::ContextResult {
                messages: parse::<Vec<AgentMessage>>("context", m)?,
            })),
            None => Ok(None),
        }
    }
}

impl RemoteEvent for ev::MessageEndEvent {
    fn to_wire(&self) -> Value {
        to_value(self)
    }
    fn read_answer(
        &mut self,
        answer: &Value,
    ) -> Result<Option<ev::MessageEndResult>, AnswerShapeError> {
        let Some(m) = result(answer).and_then(|r| r.get("message")) else {
            return Ok(None);
        };
        Ok(Some(ev::MessageEndResult {
            message: parse::<AgentMessage>("message_end", m)?,
        }))
    }
}

impl RemoteEvent for ev::BeforeProviderRequestEvent {
    fn to_wire(&self) -> Value {
        to_value(self)
    }
    fn read_answer(&mut self, answer: &Value) -> Result<Option<Value>, AnswerShapeError> {
        Ok(result(answer).cloned())
    }
}

impl RemoteEvent for ev::BeforeProviderHeadersEvent {
    fn to_wire(&self) -> Value {
        let headers: Map<String, Value> = self
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().map_or(Value::Null, Value::String)))
            .collect();
        json!({"headers": headers})
    }
    fn read_answer(&mut self, answer: &Value) -> Result<Option<()>, AnswerShapeError> {
        let Some(after) = answer.get("headers").and_then(Value::as_object) else {
            return Ok(None);
        };
        // A header the extension deleted is gone from its object: pi's `delete` and
        // `= null` both drop the default header.
        for (name, value) in &mut self.headers {
            *value = after
                .get(name.as_str())
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        for (name, value) in after {
            if !self.headers.iter().any(|(k, _)| k == name) {
                self.headers
                    .push((name.clone(), value.as_str().map(str::to_owned)));
            }
        }
        Ok(None)
    }
}

impl RemoteEvent for ev::SessionBeforeSwitchEvent {
    fn to_wire(&self) -> Value {
        to_value(self)
    }
    fn read_answer(
        &mut self,
        answer: &Value,
    ) -> Result<Option<ev::CancelResult>, AnswerShapeError> {
        Ok(result(answer).map(|r| ev::CancelResult {
            cancel: bool_field(r, "cancel").unwrap_or(false),
        }))
    }
}

impl RemoteEvent for ev::SessionBeforeForkEvent {
    fn to_wire(&self) -> Value {
        to_value(self)
    }
    fn read_answer(&mut self, answer: &Value) -> Result<Option<ev::ForkResult>, AnswerShapeError> {
        Ok(result(answer).map(|r| ev::ForkResult {
            cancel: bool_field(r, "cancel").unwrap_or(false),
            skip_conversation_restore: bool_field(r, "skipConversationRestore"),
        }))
    }
}

impl RemoteEvent for ev::ResourcesDiscoverEvent {
    fn to_wire(&self) -> Value {
        to_value(self)
    }
    fn read_answer(
        &mut self,
        answer: &Value,
    ) -> Result<Option<ev::ResourcesDiscoverResult>, AnswerShapeError> {
        Ok(result(answer).map(|r| ev::ResourcesDiscoverResult {
            skill_paths: string_list(r, "skillPaths"),
            prompt_paths: string_list(r, "promptPaths"),
            theme_paths: string_list(r, "themePaths"),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_reads_the_block_and_the_changed_input() {
        let mut e = ev::ToolCallEvent {
            tool_call_id: "c1".into(),
            tool_name: "bash".into(),
            input: json!({"command": "ls"}),
        };
        assert_eq!(e.to_wire()["toolCallId"], "c1");
        let r = e
            .read_answer(
                &json!({"result": {"block": true, "reason": "no"}, "input": {"command": "ls -a"}}),
            )
            .unwrap()
            .unwrap();
        assert!(r.block);
        assert_eq!(r.reason.as_deref(), Some("no"));
        assert_eq!(e.input, json!({"command": "ls -a"}));
        assert!(e.read_answer(&json!({"result": null})).unwrap().is_none());
    }

    #[test]
    fn headers_follow_the_extensions_object() {
        let mut e = ev::BeforeProviderHeadersEvent {
            headers: vec![
                ("a".into(), Some("1".into())),
                ("b".into(), Some("2".into())),
            ],
        };
        assert_eq!(e.to_wire(), json!({"headers": {"a": "1", "b": "2"}}));
        e.read_answer(&json!({"headers": {"a": "x", "c": "3"}}))
            .unwrap();
        assert_eq!(
            e.headers,
            vec![
                ("a".to_owned(), Some("x".to_owned())),
                ("b".to_owned(), None),
                ("c".to_owned(), Some("3".to_owned()))
            ]
        );
    }

    #[test]
    fn input_actions_and_bad_shapes() {
        let mut e = ev::InputEvent {
            text: "hi".into(),
            images: None,
            source: ev::InputSource::Interactive,
            streaming_behavior: None,
        };
        let t = e
            .read_answer(&json!({"result": {"action": "transform", "text": "yo"}}))
            .unwrap();
        assert_eq!(
            t,
            Some(ev::InputResult::Transform {
                text: "yo".into(),
                images: None
            })
        );
        assert_eq!(
            e.read_answer(&json!({"result": {"action": "explode"}}))
                .unwrap_err()
                .to_string(),
            r#"invalid input result: unknown action "explode""#
        );
        assert_eq!(
            e.read_answer(&json!({"result": {"action": "handled"}}))
                .unwrap(),
            Some(ev::InputResult::Handled)
        );
    }
}
