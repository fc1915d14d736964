//! One assistant response: context → LLM call → `message_*` events.
//!
//! Mirrors pi-agent-core 0.85.1 `streamAssistantResponse`: `transform_context`,
//! `convert_to_llm`, API-key resolution, the stream function call, then `start` →
//! `message_start`, block events → `message_update` (ignored before `start`), `done`/`error`
//! → `message_end` (preceded by `message_start` when there was no `start`: the lone-`error`
//! path). A stream ending without a terminal event finalizes the same way with an error
//! message.

use std::sync::Arc;

use pi_ai::{AssistantMessage, AssistantMessageEvent, Context, PartialMessage, StopReason};
use tokio_util::sync::CancellationToken;

use super::config::{AgentContext, AgentLoopConfig, EventSink, StreamFn};
use crate::error::{HookError, guarded, guarded_sync};
use crate::event::AgentEvent;
use crate::message::AgentMessage;

/// `errorMessage` of a stream that ended without `done`/`error`.
pub const NO_TERMINAL_EVENT: &str = "Stream ended without a terminal event";

/// Streams one assistant response, emitting its message events, and appends the final
/// message to `context`. Errors are hook or listener failures (they fail the run).
pub(crate) async fn stream_assistant_response(
    context: &mut Arc<AgentContext>,
    config: &AgentLoopConfig,
    signal: &CancellationToken,
    sink: &dyn EventSink,
    stream_fn: &StreamFn,
) -> Result<Arc<AssistantMessage>, HookError> {
    let messages = match &config.transform_context {
        Some(transform) => {
            let input = context.messages.clone();
            let sig = signal.clone();
            guarded(|| transform(input, sig)).await?
        }
        None => context.messages.clone(),
    };
    let convert = &config.convert_to_llm;
    let llm_messages = guarded_sync(|| convert(&messages))?;
    drop(messages);

    let llm_context = Context {
        system_prompt: Some(context.system_prompt.clone()),
        messages: llm_messages,
        tools: Some(context.tools.iter().map(|t| t.definition()).collect()),
    };

    let resolved_key = match &config.get_api_key {
        Some(get) => {
            let provider = config.model.provider.clone();
            guarded(|| get(provider)).await?
        }
        None => None,
    };
    let mut options = config.options.clone();
    options.api_key = resolved_key
        .filter(|k| !k.is_empty())
        .or(options.api_key.take());
    options.signal = Some(signal.clone());

    let model = config.model.clone();
    let mut stream = guarded_sync(|| stream_fn(model, llm_context, options))?;

    let mut partial: Option<PartialMessage> = None;
    while let Some(event) = stream.next_event().await {
        // Events are ~450 bytes: inspect them by reference and move each one only into the
        // `AgentEvent` it becomes.
        if event.is_terminal() {
            let message = match event {
                AssistantMessageEvent::Done { message, .. }
                | AssistantMessageEvent::Error { error: message, .. } => message,
                _ => continue,
            };
            return finish(context, sink, *message, partial.is_some()).await;
        }
        if let AssistantMessageEvent::Start { partial: p } = &event {
            let snapshot = p.snapshot();
            partial = Some(p.clone());
            sink.emit(AgentEvent::MessageStart {
                message: snapshot.into(),
            })
            .await?;
            continue;
        }
        let Some(current) = &mut partial else {
            continue; // block events before `start` are ignored, as in pi
        };
        if let Some(p) = event.partial()
            && !p.ptr_eq(current)
        {
            *current = p.clone();
        }
        let message = current.clone();
        sink.emit_shared(Arc::new(AgentEvent::MessageUpdate {
            assistant_message_event: event,
            message,
        }))
        .await?;
    }

    let mut message = match &partial {
        Some(p) => p.snapshot(),
        None => {
            AssistantMessage::empty(&config.model.api, &config.model.provider, &config.model.id)
        }
    };
    message.stop_reason = StopReason::Error;
    message.error_message = Some(NO_TERMINAL_EVENT.to_owned());
    finish(context, sink, message, partial.is_some()).await
}

/// Emits `message_start` (if not yet sent) and `message_end`, then appends the final
/// message (or the assistant replacement a `message_end` listener installed) to the context.
async fn finish(
    context: &mut Arc<AgentContext>,
    sink: &dyn EventSink,
    message: AssistantMessage,
    started: bool,
) -> Result<Arc<AssistantMessage>, HookError> {
    // One allocation for the final message: the events, the state, the context and the run's
    // messages all share it.
    let message = Arc::new(message);
    let agent_message = AgentMessage::Assistant(Arc::clone(&message));
    if !started {
        sink.emit(AgentEvent::MessageStart {
            message: agent_message.clone(),
        })
        .await?;
    }
    sink.emit(AgentEvent::MessageEnd {
        message: agent_message.clone(),
    })
    .await?;
    let (agent_message, message) = match sink.take_message_end_replacement() {
        Some(AgentMessage::Assistant(replaced)) => {
            (AgentMessage::Assistant(Arc::clone(&replaced)), replaced)
        }
        _ => (agent_message, message),
    };
    Arc::make_mut(context).messages.push(agent_message);
    Ok(message)
}
