//! A batch of tool calls: sequential, parallel, or failed for a `length` stop.
//!
//! Mirrors pi-agent-core 0.85.1 `executeToolCalls*` and `failToolCallsFromTruncatedMessage`
//! (ordering, the length stop, abort):
//! - sequential: per call in source order `tool_execution_start` → preflight → execute →
//!   `tool_execution_end` → result `message_start`/`message_end`; an aborted signal stops
//!   the remaining calls (they get no result);
//! - parallel: a sweep in source order emits each start and runs preflight (immediate
//!   outcomes emit their end at once; an aborted signal ends the sweep), then the prepared
//!   calls run concurrently, each emitting its end when its pipeline completes, then the
//!   result messages follow in source order;
//! - `terminate` = at least one result and every result `terminate == Some(true)`.

use std::sync::Arc;

use futures::future::{BoxFuture, FutureExt, try_join_all};
use pi_ai::{AssistantMessage, ToolCall, ToolResultMessage};
use tokio_util::sync::CancellationToken;

use super::config::{AgentContext, AgentLoopConfig, EventSink};
use super::tool_call::{
    Finalized, OPERATION_ABORTED, Preparation, end_event, error_tool_result, execute_prepared,
    finalize_executed, prepare_tool_call, raw_args, tool_result_message, truncated_call_text,
};
use crate::error::HookError;
use crate::event::AgentEvent;
use crate::tool::ExecutionMode;

/// The results of a batch and whether it asks the loop to stop.
pub(crate) struct Batch {
    pub messages: Vec<Arc<ToolResultMessage>>,
    pub terminate: bool,
}

fn should_terminate(finalized: &[Finalized]) -> bool {
    !finalized.is_empty() && finalized.iter().all(|f| f.result.terminate == Some(true))
}

async fn emit_start(sink: &Arc<dyn EventSink>, call: &ToolCall) -> Result<(), HookError> {
    sink.emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: raw_args(call),
    })
    .await
}

/// Emits the result message's start/end; returns it or a `toolResult` replacement installed
/// by a `message_end` listener.
async fn emit_result_message(
    sink: &Arc<dyn EventSink>,
    message: ToolResultMessage,
) -> Result<Arc<ToolResultMessage>, HookError> {
    let message = Arc::new(message);
    let emitted = super::emit_message(
        sink.as_ref(),
        crate::AgentMessage::ToolResult(Arc::clone(&message)),
    )
    .await?;
    Ok(match emitted {
        crate::AgentMessage::ToolResult(r) => r,
        _ => message,
    })
}

/// Fails every call of a response that hit the output token limit (nothing executes).
pub(crate) async fn fail_truncated(
    calls: &[ToolCall],
    sink: &Arc<dyn EventSink>,
) -> Result<Batch, HookError> {
    let mut messages = Vec::with_capacity(calls.len());
    for call in calls {
        emit_start(sink, call).await?;
        let f = Finalized {
            tool_call: call.clone(),
            result: error_tool_result(truncated_call_text(&call.name)),
            is_error: true,
        };
        sink.emit(end_event(&f)).await?;
        let message = emit_result_message(sink, tool_result_message(&f)).await?;
        messages.push(message);
    }
    Ok(Batch {
        messages,
        terminate: false,
    })
}

/// Executes the calls of `assistant` in the batch's mode.
pub(crate) async fn execute_tool_calls(
    context: &Arc<AgentContext>,
    assistant: &AssistantMessage,
    calls: &[ToolCall],
    config: &AgentLoopConfig,
    signal: &CancellationToken,
    sink: &Arc<dyn EventSink>,
) -> Result<Batch, HookError> {
    let sequential = config.tool_execution == ExecutionMode::Sequential
        || calls.iter().any(|c| {
            context
                .tool(&c.name)
                .is_some_and(|t| t.execution_mode() == ExecutionMode::Sequential)
        });
    if sequential {
        sequential_batch(context, assistant, calls, config, signal, sink).await
    } else {
        parallel_batch(context, assistant, calls, config, signal, sink).await
    }
}

async fn sequential_batch(
    context: &Arc<AgentContext>,
    assistant: &AssistantMessage,
    calls: &[ToolCall],
    config: &AgentLoopConfig,
    signal: &CancellationToken,
    sink: &Arc<dyn EventSink>,
) -> Result<Batch, HookError> {
    let mut finalized = Vec::with_capacity(calls.len());
    let mut messages = Vec::with_capacity(calls.len());
    for call in calls {
        emit_start(sink, call).await?;
        let f = match prepare_tool_call(context, assistant, call, config, signal).await {
            Preparation::Immediate { result } => Finalized {
                tool_call: call.clone(),
                result,
                is_error: true,
            },
            Preparation::Prepared(p) => {
                let executed = execute_prepared(&p, signal, sink).await?;
                finalize_executed(context, assistant, &p, executed, config, signal).await
            }
        };
        sink.emit(end_event(&f)).await?;
        let message = emit_result_message(sink, tool_result_message(&f)).await?;
        finalized.push(f);
        messages.push(message);
        if signal.is_cancelled() {
            break;
        }
    }
    Ok(Batch {
        terminate: should_terminate(&finalized),
        messages,
    })
}

async fn parallel_batch(
    context: &Arc<AgentContext>,
    assistant: &AssistantMessage,
    calls: &[ToolCall],
    config: &AgentLoopConfig,
    signal: &CancellationToken,
    sink: &Arc<dyn EventSink>,
) -> Result<Batch, HookError> {
    // (1) The sweep: starts and preflight in source order.
    let mut entries: Vec<BoxFuture<'_, Result<Finalized, HookError>>> = Vec::new();
    for call in calls {
        emit_start(sink, call).await?;
        match prepare_tool_call(context, assistant, call, config, signal).await {
            Preparation::Immediate { result } => {
                let f = Finalized {
                    tool_call: call.clone(),
                    result,
                    is_error: true,
                };
                sink.emit(end_event(&f)).await?;
                entries.push(futures::future::ready(Ok(f)).boxed());
            }
            Preparation::Prepared(p) => {
                entries.push(
                    async move {
                        let f = if signal.is_cancelled() {
                            Finalized {
                                tool_call: p.tool_call.clone(),
                                result: error_tool_result(OPERATION_ABORTED),
                                is_error: true,
                            }
                        } else {
                            let executed = execute_prepared(&p, signal, sink).await?;
                            finalize_executed(context, assistant, &p, executed, config, signal)
                                .await
                        };
                        sink.emit(end_event(&f)).await?;
                        Ok(f)
                    }
                    .boxed(),
                );
            }
        }
        if signal.is_cancelled() {
            break;
        }
    }

    // (2) Prepared pipelines run concurrently (first polled in source order); each emits
    // its end on completion. A failed delivery fails the batch at once.
    let finalized = try_join_all(entries).await?;

    // (3) Result messages in source order.
    let mut messages = Vec::with_capacity(finalized.len());
    for f in &finalized {
        let message = emit_result_message(sink, tool_result_message(f)).await?;
        messages.push(message);
    }
    Ok(Batch {
        terminate: should_terminate(&finalized),
        messages,
    })
}
