//! The runner as the session's [`SessionHooks`]: every session hook translated into the
//! extension event of the same name, and the agent's lifecycle events mirrored to the
//! extensions.
//!
//! Mirrors how pi-coding-agent 0.85.0 `core/agent-session.ts` calls its `ExtensionRunner`
//! (`_handleAgentEvent`, `_installAgentToolHooks`, `prompt`, `_emitSessionEvent`). Queued
//! `pi`/`ctx` requests are handed to the executor ([`ExtensionHooks`]'s pump) after each
//! hook.

use crate::storage::SessionEntry;
use futures::future::BoxFuture;
use pi_agent_core::{
    AfterToolCallResult, AgentEvent, AgentMessage, BeforeToolCallResult, HookError,
};
use pi_ai::{Model, ModelThinkingLevel};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::errors::{ExtensionErrorRecord, HandlerError};
use super::events as ev;
use super::session_hooks::ExtensionHooks;
use crate::session::{self as s, SessionHooks, TurnInfo};

fn input_source(src: s::InputSource) -> ev::InputSource {
    match src {
        s::InputSource::Interactive => ev::InputSource::Interactive,
        s::InputSource::Rpc => ev::InputSource::Rpc,
        s::InputSource::Extension => ev::InputSource::Extension,
    }
}

impl ExtensionHooks {
    /// Ext-emits the mirrored lifecycle event of `event`.
    async fn emit_agent_event(&self, event: &AgentEvent, turn: TurnInfo) {
        let r = &self.runner;
        match event {
            AgentEvent::AgentStart => r.emit(ev::AgentStartEvent).await,
            AgentEvent::AgentEnd { messages } => {
                r.emit(ev::AgentEndEvent {
                    messages: messages.clone(),
                })
                .await
            }
            AgentEvent::TurnStart => {
                r.emit(ev::TurnStartEvent {
                    turn_index: turn.turn_index as u64,
                    timestamp: turn.timestamp,
                })
                .await
            }
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => {
                r.emit(ev::TurnEndEvent {
                    turn_index: turn.turn_index as u64,
                    message: (**message).clone(),
                    tool_results: tool_results.iter().map(|r| (**r).clone()).collect(),
                })
                .await
            }
            AgentEvent::MessageStart { message } => {
                r.emit(ev::MessageStartEvent {
                    message: message.clone(),
                })
                .await
            }
            AgentEvent::MessageUpdate {
                assistant_message_event,
                message,
            } => {
                r.emit(ev::MessageUpdateEvent {
                    message: message.clone(),
                    assistant_message_event: assistant_message_event.clone(),
                })
                .await
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
            } => {
                r.emit(ev::ToolExecutionStartEvent {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    args: args.clone(),
                })
                .await
            }
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial_result,
            } => {
                r.emit(ev::ToolExecutionUpdateEvent {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    args: args.clone(),
                    partial_result: partial_result.clone(),
                })
                .await
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
            } => {
                r.emit(ev::ToolExecutionEndEvent {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    result: result.clone(),
                    is_error: *is_error,
                })
                .await
            }
            // `message_end` has its own hook.
            AgentEvent::MessageEnd { .. } => {}
        }
    }
}

impl SessionHooks for ExtensionHooks {
    fn has_command(&self, name: &str) -> bool {
        self.runner.has_command(name)
    }

    fn run_command(&self, name: &str, args: &str) -> BoxFuture<'_, Result<(), HandlerError>> {
        let (name, args) = (name.to_owned(), args.to_owned());
        Box::pin(async move {
            let r = self.runner.run_command(&name, &args).await;
            self.pump();
            r
        })
    }

    fn input(&self, event: s::InputEvent) -> BoxFuture<'_, s::InputAction> {
        Box::pin(async move {
            let images = (!event.images.is_empty()).then_some(event.images);
            let result = self
                .runner
                .emit_input(ev::InputEvent {
                    text: event.text,
                    images,
                    source: input_source(event.source),
                    streaming_behavior: event.streaming_behavior,
                })
                .await;
            self.pump();
            match result {
                ev::InputResult::Continue => s::InputAction::Continue,
                ev::InputResult::Handled => s::InputAction::Handled,
                ev::InputResult::Transform { text, images } => {
                    s::InputAction::Transform { text, images }
                }
            }
        })
    }

    fn before_agent_start(
        &self,
        event: s::BeforeAgentStartEvent,
    ) -> BoxFuture<'_, Option<s::BeforeAgentStartResult>> {
        Box::pin(async move {
            let images = (!event.images.is_empty()).then_some(event.images);
            let outcome = self
                .runner
                .emit_before_agent_start(ev::BeforeAgentStartEvent {
                    prompt: event.prompt,
                    images,
                    system_prompt: event.system_prompt,
                    system_prompt_options: serde_json::Value::Object(Default::default()),
                })
                .await;
            self.pump();
            outcome.map(|o| s::BeforeAgentStartResult {
                messages: o
                    .messages
                    .into_iter()
                    .map(|m| s::CustomMessageSpec {
                        custom_type: m.custom_type,
                        content: m.content,
                        display: m.display,
                        details: m.details,
                    })
                    .collect(),
                system_prompt: o.system_prompt,
            })
        })
    }

    fn context(&self, messages: Vec<AgentMessage>) -> BoxFuture<'_, Vec<AgentMessage>> {
        Box::pin(async move {
            if !self.runner.has_handlers::<ev::ContextEvent>() {
                return messages;
            }
            let out = self.runner.emit_context(&messages).await;
            self.pump();
            out
        })
    }

    fn tool_call(
        &self,
        event: s::ToolCallEvent,
    ) -> BoxFuture<'_, Result<Option<BeforeToolCallResult>, HookError>> {
        Box::pin(async move {
            if !self.runner.has_handlers::<ev::ToolCallEvent>() {
                return Ok(None);
            }
            let original = event.input.clone();
            let outcome = self
                .runner
                .emit_tool_call(ev::ToolCallEvent {
                    tool_call_id: event.tool_call_id,
                    tool_name: event.tool_name,
                    input: event.input,
                })
                .await;
            self.pump();
            let outcome = outcome.map_err(|e| HookError::new(e.to_string()))?;
            let args = (outcome.input != original).then_some(outcome.input);
            if outcome.result.is_none() && args.is_none() {
                return Ok(None);
            }
            let r = outcome.result.unwrap_or_default();
            Ok(Some(BeforeToolCallResult {
                block: r.block,
                reason: r.reason,
                terminate: r.terminate,
                args,
            }))
        })
    }

    fn tool_result(&self, event: s::ToolResultEvent) -> BoxFuture<'_, Option<AfterToolCallResult>> {
        Box::pin(async move {
            if !self.runner.has_handlers::<ev::ToolResultEvent>() {
                return None;
            }
            let patch = self
                .runner
                .emit_tool_result(ev::ToolResultEvent {
                    tool_call_id: event.tool_call_id,
                    tool_name: event.tool_name,
                    input: event.input,
                    content: event.result.content,
                    details: event.result.details,
                    is_error: event.is_error,
                    usage: event.usage,
                })
                .await;
            self.pump();
            patch.map(|p| AfterToolCallResult {
                content: p.content,
                details: p.details,
                usage: p.usage,
                terminate: None,
                is_error: p.is_error,
            })
        })
    }

    fn agent_event(&self, event: Arc<AgentEvent>, turn: TurnInfo) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.emit_agent_event(&event, turn).await;
            self.pump();
        })
    }

    fn message_end(&self, message: AgentMessage) -> BoxFuture<'_, Option<AgentMessage>> {
        Box::pin(async move {
            let out = self.runner.emit_message_end(message).await;
            self.pump();
            out
        })
    }

    fn agent_settled(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.runner.emit(ev::AgentSettledEvent).await;
            self.pump();
        })
    }

    fn session_start(
        &self,
        reason: ev::SessionStartReason,
        previous_session_file: Option<String>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.runner
                .emit(ev::SessionStartEvent {
                    reason,
                    previous_session_file,
                })
                .await;
            self.pump();
        })
    }

    fn session_shutdown(
        &self,
        reason: ev::ShutdownReason,
        target_session_file: Option<String>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.runner.has_handlers::<ev::SessionShutdownEvent>() {
                self.runner
                    .emit(ev::SessionShutdownEvent {
                        reason,
                        target_session_file,
                    })
                    .await;
            }
            self.detach();
        })
    }

    fn session_before_switch(
        &self,
        reason: ev::SwitchReason,
        target_session_file: Option<String>,
    ) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            if !self.runner.has_handlers::<ev::SessionBeforeSwitchEvent>() {
                return false;
            }
            let result = self
                .runner
                .emit_before(ev::SessionBeforeSwitchEvent {
                    reason,
                    target_session_file,
                })
                .await;
            self.pump();
            result.is_some_and(|r| r.cancel)
        })
    }

    fn session_before_fork(
        &self,
        entry_id: &str,
        position: ev::ForkPosition,
    ) -> BoxFuture<'_, bool> {
        let event = ev::SessionBeforeForkEvent {
            entry_id: entry_id.to_owned(),
            position,
        };
        Box::pin(async move {
            if !self.runner.has_handlers::<ev::SessionBeforeForkEvent>() {
                return false;
            }
            let result = self.runner.emit_before(event).await;
            self.pump();
            result.is_some_and(|r| r.cancel)
        })
    }

    fn before_provider_request(
        &self,
        payload: serde_json::Value,
    ) -> BoxFuture<'_, Option<serde_json::Value>> {
        Box::pin(async move {
            if !self.runner.has_handlers::<ev::BeforeProviderRequestEvent>() {
                return None;
            }
            let out = self.runner.emit_before_provider_request(payload).await;
            self.pump();
            Some(out)
        })
    }

    fn after_provider_response(
        &self,
        status: u16,
        headers: Vec<(String, String)>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.runner.has_handlers::<ev::AfterProviderResponseEvent>() {
                self.runner
                    .emit(ev::AfterProviderResponseEvent { status, headers })
                    .await;
                self.pump();
            }
        })
    }

    fn session_before_compact(
        &self,
        preparation: crate::compaction::CompactionPreparation,
        branch_entries: Vec<SessionEntry>,
        custom_instructions: Option<String>,
        reason: crate::session::CompactionReason,
        will_retry: bool,
        signal: tokio_util::sync::CancellationToken,
    ) -> BoxFuture<'_, Option<crate::session::hooks::BeforeCompactDecision>> {
        Box::pin(async move {
            let decision = self
                .runner
                .emit_before(ev::SessionBeforeCompactEvent {
                    preparation,
                    branch_entries,
                    custom_instructions,
                    reason,
                    will_retry,
                    signal,
                })
                .await;
            self.pump();
            decision.map(|d| crate::session::hooks::BeforeCompactDecision {
                cancel: d.cancel,
                compaction: d.compaction,
            })
        })
    }

    fn session_compact(
        &self,
        entry: SessionEntry,
        reason: crate::session::CompactionReason,
        will_retry: bool,
    ) -> BoxFuture<'_, ()> {
        // An extension-supplied compaction is written with `fromHook: true`.
        let from_extension = matches!(
            entry.kind,
            crate::storage::EntryKind::Compaction {
                from_hook: Some(true),
                ..
            }
        );
        Box::pin(async move {
            self.runner
                .emit(ev::SessionCompactEvent {
                    compaction_entry: entry,
                    from_extension,
                    reason,
                    will_retry,
                })
                .await;
            self.pump();
        })
    }

    fn session_compact_failed(
        &self,
        reason: crate::session::CompactionReason,
        error_message: Option<String>,
        aborted: bool,
        from_extension: bool,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.runner
                .emit(ev::SessionCompactFailedEvent {
                    reason,
                    error_message,
                    aborted,
                    will_retry: false,
                    from_extension,
                })
                .await;
            self.pump();
        })
    }

    fn session_before_tree(
        &self,
        preparation: s::tree::TreePreparation,
        signal: CancellationToken,
    ) -> BoxFuture<'_, Option<s::tree::TreeResult>> {
        Box::pin(async move {
            let decision = self
                .runner
                .emit_before(ev::SessionBeforeTreeEvent {
                    preparation,
                    signal,
                })
                .await;
            self.pump();
            decision
        })
    }

    fn session_tree(
        &self,
        new_leaf_id: Option<String>,
        old_leaf_id: Option<String>,
        summary_entry: Option<SessionEntry>,
        from_extension: Option<bool>,
    ) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.runner
                .emit(ev::SessionTreeEvent {
                    new_leaf_id,
                    old_leaf_id,
                    summary_entry,
                    from_extension,
                })
                .await;
            self.pump();
        })
    }

    fn model_select(
        &self,
        model: Model,
        previous: Option<Model>,
        source: &str,
    ) -> BoxFuture<'_, ()> {
        let source = match source {
            "cycle" => ev::ModelSelectSource::Cycle,
            "restore" => ev::ModelSelectSource::Restore,
            _ => ev::ModelSelectSource::Set,
        };
        Box::pin(async move {
            // pi emits `thinking_level_select` (not awaited) before it awaits `model_select`:
            // its handlers run first. Ours are detached, so let them finish before.
            self.runner.flush_detached().await;
            self.runner
                .emit(ev::ModelSelectEvent {
                    model,
                    previous_model: previous,
                    source,
                })
                .await;
            self.pump();
        })
    }

    fn thinking_level_select(&self, level: ModelThinkingLevel, previous: ModelThinkingLevel) {
        self.runner.emit_detached(ev::ThinkingLevelSelectEvent {
            level,
            previous_level: previous,
        });
    }

    fn report_error(&self, error: s::ExtensionErrorInfo) {
        self.runner.report_error(ExtensionErrorRecord {
            extension_path: error.extension_path,
            event: error.event,
            error: error.error,
        });
    }
}
