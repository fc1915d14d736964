//! The session's agent listener and the hooks it installs on the agent.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession._handleAgentEvent`, whose order is
//! contractual, per core event:
//! 1. a user `message_start` removes its text from the display queues (`queue_update`);
//! 2. the mirrored hook event is awaited (`turn_start`/`turn_end` carry the turn index;
//!    `message_end` may return a replacement, installed into the agent's transcript and
//!    seen by every later consumer);
//! 3. the session listeners run synchronously (`agent_end` gains `willRetry`); a failure
//!    propagates and fails the run;
//! 4. `message_end` persists the message; an assistant message is remembered for `postRun`
//!    and, after a successful retry, `auto_retry_end {success:true}` is emitted;
//! 5. `turn_end` appends the deferred context-only custom messages.
//!
//! Because the agent awaits this listener, the assistant message is on disk before tool
//! preflight starts, and the file order is user → assistant → toolResult. While step 3 runs
//! for a message step 4 persists, that write is pending in the session's
//! [`super::durability`] record, so the modes print its `message_end` only once it is
//! written.

use std::sync::Arc;

use futures::FutureExt;
use pi_agent_core::{
    AfterToolCallContext, AgentEvent, AgentMessage, AgentOptions, BeforeToolCallContext, HookError,
    ListenerError, TurnContext, TurnUpdate,
};
use pi_ai::{StopReason, now_ms};
use serde_json::Value;

use super::agent_session::{AgentSession, lock};
use super::events::AgentSessionEvent;
use super::hooks::{ToolCallEvent, ToolResultEvent, TurnInfo};
use super::queues::content_text;
use crate::storage::EntryKind;

impl AgentSession {
    /// Subscribes the session's handler to its agent (once, at build time).
    pub(super) fn attach_to_agent(&self) {
        let weak = self.weak();
        let sub = self.inner.agent.subscribe(move |event, _signal| {
            let weak = weak.clone();
            async move {
                match weak.upgrade() {
                    Some(inner) => {
                        AgentSession::from_inner(inner)
                            .handle_agent_event(event)
                            .await
                    }
                    None => Ok(()),
                }
            }
        });
        *lock(&self.inner.agent_subscription) = Some(sub);
    }

    async fn handle_agent_event(&self, event: Arc<AgentEvent>) -> Result<(), ListenerError> {
        // 1. Queue bookkeeping on a delivered user message.
        if let AgentEvent::MessageStart {
            message: AgentMessage::User(u),
        } = &*event
        {
            let text = content_text(&u.content);
            let removed = self.state().queues.remove_delivered(&text);
            if removed {
                self.emit_queue_update()?;
            }
        }

        // 2. The hook event.
        let hooks = Arc::clone(&self.inner.hooks);
        let mut published = Arc::clone(&event);
        match &*event {
            AgentEvent::AgentStart => {
                self.state().turn_index = 0;
                hooks.agent_event(event.clone(), TurnInfo::default()).await;
            }
            AgentEvent::TurnStart => {
                let turn = TurnInfo {
                    turn_index: self.state().turn_index,
                    timestamp: now_ms(),
                };
                hooks.agent_event(event.clone(), turn).await;
            }
            AgentEvent::TurnEnd { .. } => {
                let turn = TurnInfo {
                    turn_index: self.state().turn_index,
                    timestamp: now_ms(),
                };
                hooks.agent_event(event.clone(), turn).await;
                self.state().turn_index += 1;
            }
            AgentEvent::MessageEnd { message } => {
                if let Some(replacement) = hooks.message_end(message.clone()).await {
                    let replacement = normalize_null_content(replacement);
                    if replacement.role() == message.role()
                        && self.inner.agent.replace_ending_message(replacement.clone())
                    {
                        published = Arc::new(AgentEvent::MessageEnd {
                            message: replacement,
                        });
                    }
                }
            }
            _ => hooks.agent_event(event.clone(), TurnInfo::default()).await,
        }

        // 3. Session listeners. A message about to be persisted is a pending write while
        // they run, so that whoever publishes its `message_end` can wait for the append
        // (`durability`); the guard is released on every path, failures included.
        let pending_write = match &*published {
            AgentEvent::MessageEnd { message } if persists(message) => {
                Some(self.inner.durability.begin())
            }
            _ => None,
        };
        match &*published {
            AgentEvent::AgentEnd { messages } => {
                let will_retry = self.will_retry_after(messages);
                self.emit_event(&AgentSessionEvent::AgentEnd {
                    messages: messages.clone(),
                    will_retry,
                })?;
            }
            _ => self.emit_event(&AgentSessionEvent::Agent(Arc::clone(&published)))?,
        }

        // 4. Persistence.
        if let AgentEvent::MessageEnd { message } = &*published {
            let persisted = self.persist_message(message);
            drop(pending_write);
            persisted?;
            if let AgentMessage::Assistant(a) = message {
                let retry_done = {
                    let mut st = self.state();
                    st.last_assistant = Some(a.clone());
                    let attempt = st.retry_attempt;
                    if a.stop_reason != StopReason::Error && attempt > 0 {
                        st.retry_attempt = 0;
                        Some(attempt)
                    } else {
                        None
                    }
                };
                if let Some(attempt) = retry_done {
                    self.emit_event(&AgentSessionEvent::AutoRetryEnd {
                        success: true,
                        attempt,
                        final_error: None,
                    })?;
                }
            }
        }
        self.inner.compactor.observe(&published);

        // 5. Deferred custom messages join after the turn's tool results.
        if matches!(&*published, AgentEvent::TurnEnd { .. }) {
            self.flush_pending_custom_messages()?;
        }
        Ok(())
    }

    /// Appends a finished message to the store: `custom` as a `custom_message` entry, `user`,
    /// `assistant` and `toolResult` as `message` entries (other roles are persisted by whoever
    /// adds them).
    fn persist_message(&self, message: &AgentMessage) -> Result<(), ListenerError> {
        let kind = match message {
            AgentMessage::Custom(m) if persists(message) => custom_entry(m),
            AgentMessage::Custom(_) => return Ok(()),
            _ => EntryKind::Message {
                message: message.clone(),
            },
        };
        lock(&self.inner.store)
            .append(kind)
            .map(|_| ())
            .map_err(|e| HookError::new(e.to_string()))
    }

    /// Appends the custom messages deferred during the run: agent state, `custom_message`
    /// entry, `message_start` + `message_end` to the listeners only (no hook event).
    pub(super) fn flush_pending_custom_messages(&self) -> Result<(), ListenerError> {
        let pending = std::mem::take(&mut self.state().pending_custom);
        for m in pending {
            self.append_custom_message(m)?;
        }
        Ok(())
    }

    pub(super) fn append_custom_message(&self, message: AgentMessage) -> Result<(), ListenerError> {
        let mut messages = self.inner.agent.messages();
        messages.push(message.clone());
        self.inner.agent.set_messages(messages);
        if let AgentMessage::Custom(m) = &message {
            lock(&self.inner.store)
                .append(custom_entry(m))
                .map_err(|e| HookError::new(e.to_string()))?;
        }
        self.emit_event(&AgentSessionEvent::Agent(Arc::new(
            AgentEvent::MessageStart {
                message: message.clone(),
            },
        )))?;
        self.emit_event(&AgentSessionEvent::Agent(Arc::new(
            AgentEvent::MessageEnd { message },
        )))
    }

    /// Installs the tool hooks, the context hook, the per-request API key ([`super::request_auth`])
    /// and the between-turn refresh (compaction seam, then the current prompt, tools, model and
    /// level).
    pub(super) fn install_agent_hooks(&self, options: &mut AgentOptions) {
        let weak = self.weak();
        options.transform_context = Some(Arc::new(move |messages, _signal| {
            let weak = weak.clone();
            async move {
                match weak.upgrade() {
                    Some(inner) => Ok(inner.hooks.context(messages).await),
                    None => Ok(messages),
                }
            }
            .boxed()
        }));

        let weak = self.weak();
        options.before_tool_call = Some(Arc::new(move |ctx: BeforeToolCallContext, _signal| {
            let weak = weak.clone();
            async move {
                let Some(inner) = weak.upgrade() else {
                    return Ok(None);
                };
                inner
                    .hooks
                    .tool_call(ToolCallEvent {
                        tool_call_id: ctx.tool_call.id.clone(),
                        tool_name: ctx.tool_call.name.clone(),
                        input: ctx.args,
                    })
                    .await
            }
            .boxed()
        }));

        let weak = self.weak();
        options.after_tool_call = Some(Arc::new(move |ctx: AfterToolCallContext, _signal| {
            let weak = weak.clone();
            async move {
                let Some(inner) = weak.upgrade() else {
                    return Ok(None);
                };
                let usage = ctx.result.usage;
                Ok(inner
                    .hooks
                    .tool_result(ToolResultEvent {
                        tool_call_id: ctx.tool_call.id.clone(),
                        tool_name: ctx.tool_call.name.clone(),
                        input: ctx.args,
                        result: ctx.result,
                        is_error: ctx.is_error,
                        usage,
                    })
                    .await)
            }
            .boxed()
        }));

        let weak = self.weak();
        options.on_payload = Some(Arc::new(move |payload: Value, _model| {
            let weak = weak.clone();
            async move {
                match weak.upgrade() {
                    Some(inner) => Ok(inner.hooks.before_provider_request(payload).await),
                    None => Ok(None),
                }
            }
            .boxed()
        }));

        let weak = self.weak();
        options.on_response = Some(Arc::new(move |response: pi_ai::ResponseInfo, _model| {
            let weak = weak.clone();
            async move {
                if let Some(inner) = weak.upgrade() {
                    inner
                        .hooks
                        .after_provider_response(response.status, response.headers)
                        .await;
                }
                Ok(())
            }
            .boxed()
        }));

        options.stream_fn = super::request_auth::with_request_auth(
            Arc::clone(&self.inner.auth),
            Arc::clone(&options.stream_fn),
        );

        let weak = self.weak();
        options.prepare_next_turn_with_context =
            Some(Arc::new(move |turn: TurnContext, _signal| {
                let weak = weak.clone();
                async move {
                    match weak.upgrade() {
                        Some(inner) => Ok(AgentSession::from_inner(inner).next_turn(turn).await),
                        None => Ok(None),
                    }
                }
                .boxed()
            }));
    }

    /// The between-turn refresh: the compactor may rebuild the messages; the context then
    /// takes the current system prompt and tools, and the turn the current model and level.
    async fn next_turn(&self, turn: TurnContext) -> Option<TurnUpdate> {
        let compacted = self
            .inner
            .compactor
            .before_next_turn(self.clone(), Arc::clone(&turn.context))
            .await;
        let prompt = {
            let st = self.state();
            st.system_prompt_override
                .clone()
                .unwrap_or_else(|| st.base_system_prompt.clone())
        };
        let (tools, model, level) = self
            .inner
            .agent
            .with_state(|s| (s.tools.clone(), s.model.clone(), s.thinking_level));
        let same_tools = tools.len() == turn.context.tools.len()
            && tools
                .iter()
                .zip(&turn.context.tools)
                .all(|(a, b)| Arc::ptr_eq(a, b));
        let context = if compacted.is_none() && same_tools && prompt == turn.context.system_prompt {
            None
        } else {
            let mut c = (*turn.context).clone();
            if let Some(messages) = compacted {
                c.messages = messages;
            }
            c.system_prompt = prompt;
            c.tools = tools;
            Some(c)
        };
        Some(TurnUpdate {
            context,
            model: Some(model),
            thinking_level: Some(level),
        })
    }
}

/// Whether the session appends `message` at its `message_end` (`persist_message`).
fn persists(message: &AgentMessage) -> bool {
    match message {
        AgentMessage::Custom(_) => message.role() == "custom",
        _ => true,
    }
}

/// A `custom_message` entry for a `custom` message object.
fn custom_entry(m: &serde_json::Map<String, Value>) -> EntryKind {
    EntryKind::CustomMessage {
        custom_type: m
            .get("customType")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        content: match m.get("content") {
            None | Some(Value::Null) => Value::Array(Vec::new()),
            Some(v) => v.clone(),
        },
        display: m.get("display").and_then(Value::as_bool).unwrap_or(false),
        details: m.get("details").filter(|v| !v.is_null()).cloned(),
    }
}

/// A replacement whose `content` is `null` or missing gets `[]` (user, assistant, toolResult
/// and custom roles), as pi normalizes untyped handler results.
fn normalize_null_content(message: AgentMessage) -> AgentMessage {
    match message {
        AgentMessage::Custom(mut m) if m.get("role").and_then(Value::as_str) == Some("custom") => {
            if m.get("content").is_none_or(Value::is_null) {
                Arc::make_mut(&mut m).insert("content".into(), Value::Array(Vec::new()));
            }
            AgentMessage::Custom(m)
        }
        other => other,
    }
}
