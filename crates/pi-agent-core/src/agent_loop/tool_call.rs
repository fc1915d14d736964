//! One tool call: preflight, execution with gated updates, finalization.
//!
//! Mirrors pi-agent-core 0.85.1 `prepareToolCall`, `executePreparedToolCall`,
//! `finalizeExecutedToolCall` and the result helpers. Every failure of a tool or
//! a tool hook (an `Err` or a panic) becomes an error result; only a failed *listener*
//! delivery (a tool update) escapes as `Err` and fails the run.

use std::sync::Arc;

use pi_ai::{AssistantMessage, ToolCall, ToolResultMessage, UserContent, now_ms};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::config::{
    AfterToolCallContext, AgentContext, AgentLoopConfig, BeforeToolCallContext, EventSink,
};
use super::updates::UpdateGate;
use crate::error::{HookError, guarded, guarded_sync};
use crate::event::AgentEvent;
use crate::tool::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};

/// Error text of a call whose tool is not registered: `Tool <name> not found`.
pub fn tool_not_found_text(name: &str) -> String {
    format!("Tool {name} not found")
}

/// Error text of a call prevented by an aborted signal.
pub const OPERATION_ABORTED: &str = "Operation aborted";

/// Error text of a call blocked by `before_tool_call` without a reason.
pub const TOOL_BLOCKED: &str = "Tool execution was blocked";

/// Error text of a call from a response that hit the output token limit.
pub fn truncated_call_text(name: &str) -> String {
    format!(
        "Tool call \"{name}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )
}

/// Error text of a call whose streamed arguments were refused by the wire mapper (not exactly
/// one JSON object, or nested past the limit). pi-rs's own: pi executes such calls with its
/// lenient reading of the arguments.
pub fn invalid_arguments_text(name: &str, error: &pi_ai::partial_json::FinishError) -> String {
    use pi_ai::partial_json::FinishError;
    let fix = match error {
        FinishError::TooDeep { .. } => "Re-issue the tool call with less deeply nested arguments.",
        _ => "Re-issue the tool call with its arguments as one complete JSON object.",
    };
    format!("Tool call \"{name}\" was not executed: {error}. {fix}")
}

/// `{content:[text], details:{}}`: pi's error tool result.
pub fn error_tool_result(message: impl Into<String>) -> AgentToolResult {
    AgentToolResult {
        content: vec![UserContent::text(message)],
        details: Some(Value::Object(Map::new())),
        ..Default::default()
    }
}

/// A call with its final result.
#[derive(Clone, Debug)]
pub(crate) struct Finalized {
    pub tool_call: ToolCall,
    pub result: AgentToolResult,
    pub is_error: bool,
}

/// The outcome of preflight.
pub(crate) enum Preparation {
    /// An error result decided before execution.
    Immediate { result: AgentToolResult },
    /// Ready to execute.
    Prepared(Prepared),
}

/// A call that passed preflight.
pub(crate) struct Prepared {
    pub tool_call: ToolCall,
    pub tool: Arc<dyn AgentTool>,
    pub args: Value,
}

/// The raw arguments of a call as a JSON value.
pub(crate) fn raw_args(call: &ToolCall) -> Value {
    Value::Object(call.arguments.clone())
}

/// Preflight, after `tool_execution_start` was delivered.
pub(crate) async fn prepare_tool_call(
    context: &Arc<AgentContext>,
    assistant: &AssistantMessage,
    call: &ToolCall,
    config: &AgentLoopConfig,
    signal: &CancellationToken,
) -> Preparation {
    let Some(tool) = context.tool(&call.name).cloned() else {
        return Preparation::Immediate {
            result: error_tool_result(tool_not_found_text(&call.name)),
        };
    };
    match preflight(context, assistant, call, &tool, config, signal).await {
        Ok(p) => p,
        Err(e) => Preparation::Immediate {
            result: error_tool_result(e.0),
        },
    }
}

async fn preflight(
    context: &Arc<AgentContext>,
    assistant: &AssistantMessage,
    call: &ToolCall,
    tool: &Arc<dyn AgentTool>,
    config: &AgentLoopConfig,
    signal: &CancellationToken,
) -> Result<Preparation, HookError> {
    if let Some(error) = &call.arguments_error {
        return Err(HookError(invalid_arguments_text(&call.name, error)));
    }
    let raw = raw_args(call);
    let prepared = guarded_sync(|| tool.prepare_arguments(raw))?;
    let mut args = pi_ai::validation::validate_arguments(&call.name, tool.parameters(), &prepared)
        .map_err(|e| HookError(e.message))?;

    if let Some(before) = &config.before_tool_call {
        let ctx = BeforeToolCallContext {
            assistant_message: assistant.clone(),
            tool_call: call.clone(),
            args: args.clone(),
            context: Arc::clone(context),
        };
        let sig = signal.clone();
        let outcome = guarded(|| before(ctx, sig)).await?;
        if signal.is_cancelled() {
            return Ok(Preparation::Immediate {
                result: error_tool_result(OPERATION_ABORTED),
            });
        }
        if let Some(outcome) = outcome {
            if outcome.block {
                let mut result = error_tool_result(
                    outcome
                        .reason
                        .filter(|r| !r.is_empty())
                        .unwrap_or_else(|| TOOL_BLOCKED.to_owned()),
                );
                if outcome.terminate == Some(true) {
                    result.terminate = Some(true);
                }
                return Ok(Preparation::Immediate { result });
            }
            if let Some(replaced) = outcome.args {
                args = replaced;
            }
        }
    }
    if signal.is_cancelled() {
        return Ok(Preparation::Immediate {
            result: error_tool_result(OPERATION_ABORTED),
        });
    }
    Ok(Preparation::Prepared(Prepared {
        tool_call: call.clone(),
        tool: Arc::clone(tool),
        args,
    }))
}

/// Executes a prepared call. Each `on_update` while `execute` runs starts a
/// `tool_execution_update` delivery without waiting (deliveries may overlap); when `execute`
/// settles the gate closes (later updates are dropped) and every started delivery is
/// joined. `Err` = a delivery failed (fails the run); tool failures are error results.
pub(crate) async fn execute_prepared(
    prepared: &Prepared,
    signal: &CancellationToken,
    sink: &Arc<dyn EventSink>,
) -> Result<(AgentToolResult, bool), HookError> {
    let gate = Arc::new(UpdateGate::new());
    let on_update: ToolUpdateFn = {
        let gate = Arc::clone(&gate);
        let sink = Arc::clone(sink);
        let id = prepared.tool_call.id.clone();
        let name = prepared.tool_call.name.clone();
        let args = raw_args(&prepared.tool_call);
        Arc::new(move |partial_result: AgentToolResult| {
            gate.start(|| {
                sink.emit(AgentEvent::ToolExecutionUpdate {
                    tool_call_id: id.clone(),
                    tool_name: name.clone(),
                    args: args.clone(),
                    partial_result,
                })
            });
        })
    };

    let tool = &prepared.tool;
    let id = prepared.tool_call.id.as_str();
    let args = prepared.args.clone();
    let sig = signal.clone();
    let executed =
        guarded(|| async move { Ok(tool.execute(id, args, sig, Some(on_update)).await) }).await;

    gate.close_and_join().await?;

    Ok(match executed {
        Ok(Ok(result)) => (result, false),
        Ok(Err(ToolError(msg))) | Err(HookError(msg)) => (error_tool_result(msg), true),
    })
}

/// Runs `after_tool_call`; a failing hook yields an error result.
pub(crate) async fn finalize_executed(
    context: &Arc<AgentContext>,
    assistant: &AssistantMessage,
    prepared: &Prepared,
    executed: (AgentToolResult, bool),
    config: &AgentLoopConfig,
    signal: &CancellationToken,
) -> Finalized {
    let (mut result, mut is_error) = executed;
    if let Some(after) = &config.after_tool_call {
        let ctx = AfterToolCallContext {
            assistant_message: assistant.clone(),
            tool_call: prepared.tool_call.clone(),
            args: prepared.args.clone(),
            result: result.clone(),
            is_error,
            context: Arc::clone(context),
        };
        let sig = signal.clone();
        match guarded(|| after(ctx, sig)).await {
            Ok(Some(over)) => {
                if let Some(c) = over.content {
                    result.content = c;
                }
                if over.details.is_some() {
                    result.details = over.details;
                }
                if over.usage.is_some() {
                    result.usage = over.usage;
                }
                if over.terminate.is_some() {
                    result.terminate = over.terminate;
                }
                if let Some(e) = over.is_error {
                    is_error = e;
                }
            }
            Ok(None) => {}
            Err(e) => {
                result = error_tool_result(e.0);
                is_error = true;
            }
        }
    }
    Finalized {
        tool_call: prepared.tool_call.clone(),
        result,
        is_error,
    }
}

/// The `toolResult` message of a finalized call (`terminate` is never stored;
/// `addedToolNames` only when non-empty).
pub(crate) fn tool_result_message(f: &Finalized) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: f.tool_call.id.clone(),
        tool_name: f.tool_call.name.clone(),
        content: f.result.content.clone(),
        details: f.result.details.clone(),
        usage: f.result.usage,
        added_tool_names: f.result.added_tool_names.clone().filter(|n| !n.is_empty()),
        is_error: f.is_error,
        timestamp: now_ms(),
    }
}

/// `tool_execution_end` for a finalized call.
pub(crate) fn end_event(f: &Finalized) -> AgentEvent {
    AgentEvent::ToolExecutionEnd {
        tool_call_id: f.tool_call.id.clone(),
        tool_name: f.tool_call.name.clone(),
        result: f.result.clone(),
        is_error: f.is_error,
    }
}
