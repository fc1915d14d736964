//! Each event as it crosses the pipe: the event object pi gives handlers, and the handler's
//! answer read back into the runner's result type (see the table in
//! `docs/extension-protocol.md`).

use pi_agent_core::AgentMessage;
use pi_ai::{ImageContent, UserContent};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

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

    /// Aborts the operation the event asks about (`session_before_compact`,
    /// `session_before_tree`): the call is then cancelled (`$/cancelRequest`) and the
    /// extension's `event.signal` aborts.
    fn signal(&self) -> Option<CancellationToken> {
        None
    }
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
    ev::AgentSettledEvent,
    ev::UiPromptStartEvent,
    ev::UiPromptEndEvent,
    ev::AfterProviderResponseEvent,
    ev::SessionCompactFailedEvent,
);

/// The live partial as pi's assistant message object (`role` first), serialized from the
/// read guard: a delta's event must not copy the whole message it has grown to.
fn partial_message(partial: &pi_ai::PartialMessage) -> Value {
    let fields = match to_value(&*partial.read()) {
        Value::Object(fields) => fields,
        other => return other,
    };
    let mut message = Map::with_capacity(fields.len() + 1);
    message.insert("role".into(), json!("assistant"));
    message.extend(fields);
    Value::Object(message)
}

/// Observers whose event object is built by hand (no `Serialize` of their own).
macro_rules! remote_observers_with {
    ($($ty:ty => |$e:ident| $wire:expr),* $(,)?) => {
        $(impl RemoteEvent for $ty {
            fn to_wire(&self) -> Value {
                let $e = self;
                $wire
            }
            fn read_answer(&mut self, _answer: &Value) -> Result<Option<()>, AnswerShapeError> {
                Ok(None)
            }
        })*
    };
}

remote_observers_with!(
    ev::MessageUpdateEvent => |e| json!({
        "message": partial_message(&e.message),
        "assistantMessageEvent": to_value(&e.assistant_message_event.json_projection()),
    }),
    ev::SessionCompactEvent => |e| json!({
        "compactionEntry": to_value(&e.compaction_entry),
        "fromExtension": e.from_extension,
        "reason": e.reason,
        "willRetry": e.will_retry,
    }),
    ev::SessionTreeEvent => |e| {
        let mut m = Map::new();
        m.insert("newLeafId".into(), json!(e.new_leaf_id));
        m.insert("oldLeafId".into(), json!(e.old_leaf_id));
        if let Some(entry) = &e.summary_entry {
            m.insert("summaryEntry".into(), to_value(entry));
        }
        if let Some(from) = e.from_extension {
            m.insert("fromExtension".into(), json!(from));
        }
        Value::Object(m)
    },
    ev::ModelSelectEvent => |e| json!({
        "model": super::mirror::model_wire(&e.model),
        "previousModel": e.previous_model.as_ref().map(super::mirror::model_wire),
        "source": e.source,
    }),
);

impl RemoteEvent for ev::ProjectTrustEvent {
    fn to_wire(&self) -> Value {
        to_value(self)
    }
    fn read_answer(
        &mut self,
        answer: &Value,
    ) -> Result<Option<ev::ProjectTrustResult>, AnswerShapeError> {
        let Some(r) = result(answer) else {
            return Ok(None);
        };
        let trusted = match r.get("trusted").and_then(Value::as_str) {
            Some("yes") => ev::TrustDecision::Yes,
            Some("no") => ev::TrustDecision::No,
            Some("undecided") | None => ev::TrustDecision::Undecided,
            Some(other) => {
                return Err(shape(
                    "project_trust",
                    format!("unknown decision {other:?}"),
                ));
            }
        };
        Ok(Some(ev::ProjectTrustResult {
            trusted,
            remember: bool_field(r, "remember"),
        }))
    }
}

impl RemoteEvent for ev::SessionBeforeCompactEvent {
    fn to_wire(&self) -> Value {
        let p = &self.preparation;
        let settings = json!({
            "enabled": p.settings.enabled,
            "reserveTokens": p.settings.reserve_tokens,
            "keepRecentTokens": p.settings.keep_recent_tokens,
        });
        // pi's `fileOps` holds three `Set`s; the Node host turns these arrays back into sets.
        let file_ops = json!({
            "read": p.file_ops.read, "written": p.file_ops.written, "edited": p.file_ops.edited,
        });
        let mut preparation = Map::new();
        preparation.insert("firstKeptEntryId".into(), json!(p.first_kept_entry_id));
        preparation.insert(
            "messagesToSummarize".into(),
            to_value(&p.messages_to_summarize),
        );
        preparation.insert(
            "turnPrefixMessages".into(),
            to_value(&p.turn_prefix_messages),
        );
        preparation.insert("isSplitTurn".into(), json!(p.is_split_turn));
        preparation.insert("tokensBefore".into(), json!(p.tokens_before));
        if let Some(previous) = &p.previous_summary {
            preparation.insert("previousSummary".into(), json!(previous));
        }
        preparation.insert("fileOps".into(), file_ops);
        preparation.insert("settings".into(), settings);
        let mut m = Map::new();
        m.insert("preparation".into(), Value::Object(preparation));
        m.insert("branchEntries".into(), to_value(&self.branch_entries));
        if let Some(ci) = &self.custom_instructions {
            m.insert("customInstructions".into(), json!(ci));
        }
        m.insert("reason".into(), json!(self.reason));
        m.insert("willRetry".into(), json!(self.will_retry));
        Value::Object(m)
    }
    fn read_answer(
        &mut self,
        answer: &Value,
    ) -> Result<Option<ev::CompactResult>, AnswerShapeError> {
        let Some(r) = result(answer) else {
            return Ok(None);
        };
        let compaction = match r.get("compaction") {
            Some(c) if !c.is_null() => {
                let field = |name: &str| shape("session_before_compact", format!("no {name}"));
                Some(crate::compaction::CompactionResult {
                    summary: string_field(c, "summary").ok_or_else(|| field("summary"))?,
                    first_kept_entry_id: string_field(c, "firstKeptEntryId")
                        .ok_or_else(|| field("firstKeptEntryId"))?,
                    tokens_before: c
                        .get("tokensBefore")
                        .and_then(Value::as_f64)
                        .filter(|t| t.is_finite() && *t >= 0.0)
                        // JavaScript numbers: a fraction is cut as the count it stands for.
                        .map(|t| t as u64)
                        .ok_or_else(|| field("tokensBefore"))?,
                    usage: None,
                    details: c.get("details").cloned().unwrap_or(Value::Null),
                })
            }
            _ => None,
        };
        Ok(Some(ev::CompactResult {
            cancel: bool_field(r, "cancel").unwrap_or(false),
            compaction,
        }))
    }
    fn signal(&self) -> Option<CancellationToken> {
        Some(self.signal.clone())
    }
}

impl RemoteEvent for ev::SessionBeforeTreeEvent {
    fn to_wire(&self) -> Value {
        let p = &self.preparation;
        let mut preparation = Map::new();
        preparation.insert("targetId".into(), json!(p.target_id));
        preparation.insert("oldLeafId".into(), json!(p.old_leaf_id));
        preparation.insert("commonAncestorId".into(), json!(p.common_ancestor_id));
        preparation.insert(
            "entriesToSummarize".into(),
            to_value(&p.entries_to_summarize),
        );
        preparation.insert("userWantsSummary".into(), json!(p.user_wants_summary));
        if let Some(ci) = &p.custom_instructions {
            preparation.insert("customInstructions".into(), json!(ci));
        }
        if let Some(ri) = p.replace_instructions {
            preparation.insert("replaceInstructions".into(), json!(ri));
        }
        if let Some(label) = &p.label {
            preparation.insert("label".into(), json!(label));
        }
        json!({"preparation": preparation})
    }
    fn read_answer(&mut self, answer: &Value) -> Result<Option<ev::TreeResult>, AnswerShapeError> {
        let Some(r) = result(answer) else {
            return Ok(None);
        };
        let summary = match r.get("summary") {
            Some(s) if !s.is_null() => Some(ev::TreeSummary {
                summary: string_field(s, "summary")
                    .ok_or_else(|| shape("session_before_tree", "no summary text"))?,
                details: s.get("details").filter(|d| !d.is_null()).cloned(),
                usage: match s.get("usage") {
                    Some(u) if !u.is_null() => Some(parse("session_before_tree", u)?),
                    _ => None,
                },
            }),
            _ => None,
        };
        Ok(Some(ev::TreeResult {
            cancel: bool_field(r, "cancel").unwrap_or(false),
            summary,
            custom_instructions: string_field(r, "customInstructions"),
            replace_instructions: bool_field(r, "replaceInstructions"),
            label: string_field(r, "label"),
        }))
    }
    fn signal(&self) -> Option<CancellationToken> {
        Some(self.signal.clone())
    }
}

impl RemoteEvent for ev::UserBashEvent {
    fn to_wire(&self) -> Value {
        to_value(self)
    }
    fn read_answer(
        &mut self,
        answer: &Value,
    ) -> Result<Option<ev::UserBashResult>, AnswerShapeError> {
        match result(answer).and_then(|r| r.get("result")) {
            Some(b) if !b.is_null() => Ok(Some(ev::UserBashResult {
                result: parse("user_bash", b)?,
            })),
            // `{operations}` cannot cross the pipe (functions); pi-rs has no pluggable
            // executor either, so the command runs as usual.
            _ => Ok(None),
        }
    }
}

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

    #[test]
    fn project_trust_reads_pis_three_decisions() {
        let mut e = ev::ProjectTrustEvent { cwd: "/p".into() };
        assert_eq!(e.to_wire(), json!({"cwd": "/p"}));
        let yes = e
            .read_answer(&json!({"result": {"trusted": "yes", "remember": true}}))
            .unwrap()
            .unwrap();
        assert_eq!(yes.trusted, ev::TrustDecision::Yes);
        assert_eq!(yes.remember, Some(true));
        let undecided = e
            .read_answer(&json!({"result": {"trusted": "undecided"}}))
            .unwrap()
            .unwrap();
        assert_eq!(undecided.trusted, ev::TrustDecision::Undecided);
        assert!(
            e.read_answer(&json!({"result": {"trusted": "maybe"}}))
                .is_err()
        );
        assert!(e.read_answer(&json!({"result": null})).unwrap().is_none());
    }

    #[test]
    fn session_before_tree_crosses_with_pis_fields_and_reads_the_summary() {
        let signal = CancellationToken::new();
        let mut e = ev::SessionBeforeTreeEvent {
            preparation: ev::TreePreparation {
                target_id: "t".into(),
                old_leaf_id: Some("o".into()),
                common_ancestor_id: None,
                entries_to_summarize: Vec::new(),
                user_wants_summary: true,
                custom_instructions: None,
                replace_instructions: Some(false),
                label: None,
            },
            signal: signal.clone(),
        };
        assert_eq!(
            e.to_wire(),
            json!({"preparation": {"targetId": "t", "oldLeafId": "o", "commonAncestorId": null,
                "entriesToSummarize": [], "userWantsSummary": true, "replaceInstructions": false}})
        );
        let r = e
            .read_answer(
                &json!({"result": {"summary": {"summary": "s", "details": {"k": 1}},
                "label": "L", "replaceInstructions": true}}),
            )
            .unwrap()
            .unwrap();
        assert!(!r.cancel);
        assert_eq!(r.summary.as_ref().map(|s| s.summary.as_str()), Some("s"));
        assert_eq!(r.summary.unwrap().details, Some(json!({"k": 1})));
        assert_eq!(r.label.as_deref(), Some("L"));
        assert_eq!(r.replace_instructions, Some(true));
        assert!(
            e.read_answer(&json!({"result": {"summary": {"details": 1}}}))
                .is_err()
        );
        // The call is cancelled with the navigation.
        assert!(e.signal().is_some_and(|s| !s.is_cancelled()));
        signal.cancel();
        assert!(e.signal().is_some_and(|s| s.is_cancelled()));
    }

    #[test]
    fn user_bash_takes_a_result_and_ignores_operations() {
        let mut e = ev::UserBashEvent {
            command: "ls".into(),
            exclude_from_context: true,
            cwd: "/w".into(),
        };
        assert_eq!(
            e.to_wire(),
            json!({"command": "ls", "excludeFromContext": true, "cwd": "/w"})
        );
        assert!(
            e.read_answer(&json!({"result": {"operations": {}}}))
                .unwrap()
                .is_none()
        );
        let r = e
            .read_answer(&json!({"result": {"result": {"output": "x", "exitCode": 3,
                "cancelled": false, "truncated": false}}}))
            .unwrap()
            .unwrap();
        assert_eq!(r.result.output, "x");
    }

    #[test]
    fn a_partial_crosses_as_the_assistant_message_pi_sends() {
        let mut message = pi_ai::AssistantMessage::default();
        message
            .content
            .push(pi_ai::AssistantContent::text("so far"));
        let partial = pi_ai::PartialMessage::new(message.clone());
        let wire = partial_message(&partial);
        let expected =
            serde_json::to_value(AgentMessage::Assistant(std::sync::Arc::new(message))).unwrap();
        assert_eq!(wire, expected);
        assert_eq!(
            wire.as_object().unwrap().keys().next().map(String::as_str),
            Some("role")
        );
    }
}
