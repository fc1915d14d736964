//! The agent loop: turns, tool batches, steering and follow-ups.
//!
//! Mirrors pi-agent-core 0.85.1 `runAgentLoop` / `runAgentLoopContinue` / `runLoop`.
//! Every emit is awaited (the sink decides what that means; [`crate::Agent`]
//! makes it a barrier over its listeners). The loop returns the messages it produced; an
//! `Err` is a hook or listener failure, which [`crate::Agent`] turns into the synthesized
//! failure sequence.

pub mod config;
mod response;
mod tool_call;
mod tools;
mod updates;

use std::sync::Arc;

use pi_ai::{StopReason, ToolCall};
use tokio_util::sync::CancellationToken;

pub use config::*;
pub use response::NO_TERMINAL_EVENT;
pub use tool_call::{
    OPERATION_ABORTED, TOOL_BLOCKED, error_tool_result, invalid_arguments_text,
    tool_not_found_text, truncated_call_text,
};

use crate::error::{AgentError, HookError, guarded};
use crate::event::AgentEvent;
use crate::message::AgentMessage;

/// Runs a prompt: `agent_start`, `turn_start`, `message_start`/`message_end` per prompt, then
/// the loop. Returns the produced messages (prompts first).
pub async fn run_agent_loop(
    prompts: Vec<AgentMessage>,
    context: AgentContext,
    config: AgentLoopConfig,
    sink: Arc<dyn EventSink>,
    signal: CancellationToken,
    stream_fn: StreamFn,
) -> Result<Vec<AgentMessage>, HookError> {
    let mut new_messages = prompts.clone();
    let mut context = context;
    let base = context.messages.len();
    context.messages.extend(prompts.iter().cloned());
    sink.emit(AgentEvent::AgentStart).await?;
    sink.emit(AgentEvent::TurnStart).await?;
    for (i, prompt) in prompts.into_iter().enumerate() {
        let message = emit_message(sink.as_ref(), prompt).await?;
        context.messages[base + i] = message.clone();
        new_messages[i] = message;
    }
    run_loop(
        Arc::new(context),
        &mut new_messages,
        config,
        &sink,
        &signal,
        &stream_fn,
    )
    .await?;
    Ok(new_messages)
}

/// Checks that a context can be continued: non-empty, last message not `assistant`.
pub fn check_continue(context: &AgentContext) -> Result<(), AgentError> {
    match context.messages.last() {
        None => Err(AgentError::NoMessagesInContext),
        Some(m) if m.role() == "assistant" => Err(AgentError::CannotContinueFromAssistant),
        Some(_) => Ok(()),
    }
}

/// Continues from the context without a new message: `agent_start`, `turn_start`, the loop.
///
/// # Errors
/// [`check_continue`]'s errors before any event or request, as pi 0.85.1's
/// `runAgentLoopContinue` throws them (`Cannot continue: no messages in context`,
/// `Cannot continue from message role: assistant`); [`AgentError::Run`] when a hook or
/// listener fails during the run.
pub async fn run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    sink: Arc<dyn EventSink>,
    signal: CancellationToken,
    stream_fn: StreamFn,
) -> Result<Vec<AgentMessage>, AgentError> {
    check_continue(&context)?;
    continue_loop(context, config, sink, signal, stream_fn)
        .await
        .map_err(AgentError::Run)
}

async fn continue_loop(
    context: AgentContext,
    config: AgentLoopConfig,
    sink: Arc<dyn EventSink>,
    signal: CancellationToken,
    stream_fn: StreamFn,
) -> Result<Vec<AgentMessage>, HookError> {
    let mut new_messages = Vec::new();
    sink.emit(AgentEvent::AgentStart).await?;
    sink.emit(AgentEvent::TurnStart).await?;
    run_loop(
        Arc::new(context),
        &mut new_messages,
        config,
        &sink,
        &signal,
        &stream_fn,
    )
    .await?;
    Ok(new_messages)
}

/// Emits `message_start` and `message_end` for `message`; returns it, or the replacement a
/// `message_end` listener installed.
pub(crate) async fn emit_message(
    sink: &dyn EventSink,
    message: AgentMessage,
) -> Result<AgentMessage, HookError> {
    sink.emit(AgentEvent::MessageStart {
        message: message.clone(),
    })
    .await?;
    sink.emit(AgentEvent::MessageEnd {
        message: message.clone(),
    })
    .await?;
    Ok(sink.take_message_end_replacement().unwrap_or(message))
}

fn poll(source: &Option<MessageSourceFn>) -> Result<Vec<AgentMessage>, HookError> {
    match source {
        Some(f) => crate::error::guarded_sync(|| f()),
        None => Ok(Vec::new()),
    }
}

async fn run_loop(
    mut context: Arc<AgentContext>,
    new_messages: &mut Vec<AgentMessage>,
    mut config: AgentLoopConfig,
    sink: &Arc<dyn EventSink>,
    signal: &CancellationToken,
    stream_fn: &StreamFn,
) -> Result<(), HookError> {
    let mut first_turn = true;
    let mut last_turn: Option<TurnContext> = None;
    let mut pending = poll(&config.get_steering_messages)?;
    loop {
        let mut has_more_tool_calls = true;
        while has_more_tool_calls || !pending.is_empty() {
            if !first_turn {
                if let (Some(prepare), Some(turn)) = (&config.prepare_next_turn, last_turn.take()) {
                    let sig = signal.clone();
                    if let Some(update) = guarded(|| prepare(turn, sig)).await? {
                        if let Some(c) = update.context {
                            context = Arc::new(c);
                        }
                        if let Some(m) = update.model {
                            config.model = m;
                        }
                        if let Some(level) = update.thinking_level {
                            config.options.reasoning = level.reasoning();
                        }
                    }
                }
                if pending.is_empty() {
                    pending = poll(&config.get_steering_messages)?;
                }
                sink.emit(AgentEvent::TurnStart).await?;
            }

            for message in std::mem::take(&mut pending) {
                let message = emit_message(sink.as_ref(), message).await?;
                Arc::make_mut(&mut context).messages.push(message.clone());
                new_messages.push(message);
            }

            let message = response::stream_assistant_response(
                &mut context,
                &config,
                signal,
                sink.as_ref(),
                stream_fn,
            )
            .await?;
            new_messages.push(AgentMessage::Assistant(Arc::clone(&message)));

            if matches!(message.stop_reason, StopReason::Error | StopReason::Aborted) {
                sink.emit(AgentEvent::TurnEnd {
                    message,
                    tool_results: Vec::new(),
                })
                .await?;
                sink.emit(AgentEvent::AgentEnd {
                    messages: new_messages.clone(),
                })
                .await?;
                return Ok(());
            }

            let calls: Vec<ToolCall> = message.tool_calls().cloned().collect();
            let mut tool_results = Vec::new();
            has_more_tool_calls = false;
            if !calls.is_empty() {
                let batch = if message.stop_reason == StopReason::Length {
                    tools::fail_truncated(&calls, sink).await?
                } else {
                    tools::execute_tool_calls(&context, &message, &calls, &config, signal, sink)
                        .await?
                };
                has_more_tool_calls = !batch.terminate;
                tool_results = batch.messages;
                let ctx = Arc::make_mut(&mut context);
                for r in &tool_results {
                    let m = AgentMessage::ToolResult(Arc::clone(r));
                    ctx.messages.push(m.clone());
                    new_messages.push(m);
                }
            }

            first_turn = false;
            let needs_turn =
                config.should_stop_after_turn.is_some() || config.prepare_next_turn.is_some();
            // The message and results are shared; only the lists are copied, and only when a
            // hook needs the turn after `turn_end`.
            let turn = if needs_turn {
                sink.emit(AgentEvent::TurnEnd {
                    message: message.clone(),
                    tool_results: tool_results.clone(),
                })
                .await?;
                Some(TurnContext {
                    message,
                    tool_results,
                    context: Arc::clone(&context),
                    new_messages: new_messages.clone(),
                })
            } else {
                sink.emit(AgentEvent::TurnEnd {
                    message,
                    tool_results,
                })
                .await?;
                None
            };
            if let (Some(stop), Some(turn)) = (&config.should_stop_after_turn, &turn) {
                let sig = signal.clone();
                let t = turn.clone();
                if guarded(|| stop(t, sig)).await? {
                    sink.emit(AgentEvent::AgentEnd {
                        messages: new_messages.clone(),
                    })
                    .await?;
                    return Ok(());
                }
            }
            last_turn = turn.filter(|_| config.prepare_next_turn.is_some());
            pending = poll(&config.get_steering_messages)?;
        }

        let follow_ups = poll(&config.get_follow_up_messages)?;
        if follow_ups.is_empty() {
            break;
        }
        pending = follow_ups;
    }
    sink.emit(AgentEvent::AgentEnd {
        messages: new_messages.clone(),
    })
    .await
}
