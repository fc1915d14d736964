//! The loop's configuration: model, stream options, hooks and message sources.
//!
//! Mirrors pi-agent-core 0.85.1 `AgentContext`, `AgentLoopConfig`, `StreamFn` and the hook
//! context/result types (`types.ts`). Hooks are `Arc`'d closures returning
//! boxed futures; a hook "throws" by returning [`HookError`] (or panicking).

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use pi_ai::{
    AssistantMessage, AssistantMessageEventStream, Context, Message, Model, ModelThinkingLevel,
    StreamOptions, ToolCall, ToolResultMessage, Usage, UserContent,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{HookError, ListenerError};
use crate::event::AgentEvent;
use crate::message::AgentMessage;
use crate::tool::{AgentTool, AgentToolResult, ExecutionMode};

/// `streamFn(model, context, options)`: one assistant response as an event stream. Failures
/// must be encoded in the stream as an `error` event.
pub type StreamFn =
    Arc<dyn Fn(Model, Context, StreamOptions) -> AssistantMessageEventStream + Send + Sync>;

/// `convertToLlm(messages)`: maps agent messages to LLM messages (synchronous here).
pub type ConvertToLlmFn = Arc<dyn Fn(&[AgentMessage]) -> Vec<Message> + Send + Sync>;

/// `transformContext(messages, signal)`: runs before `convert_to_llm` on every LLM call.
pub type TransformContextFn = Arc<
    dyn Fn(
            Vec<AgentMessage>,
            CancellationToken,
        ) -> BoxFuture<'static, Result<Vec<AgentMessage>, HookError>>
        + Send
        + Sync,
>;

/// `getApiKey(provider)`: resolves a (possibly expiring) key per LLM call.
pub type GetApiKeyFn =
    Arc<dyn Fn(String) -> BoxFuture<'static, Result<Option<String>, HookError>> + Send + Sync>;

/// `beforeToolCall(ctx, signal)`: may block a call.
pub type BeforeToolCallFn = Arc<
    dyn Fn(
            BeforeToolCallContext,
            CancellationToken,
        ) -> BoxFuture<'static, Result<Option<BeforeToolCallResult>, HookError>>
        + Send
        + Sync,
>;

/// `afterToolCall(ctx, signal)`: may override parts of a result.
pub type AfterToolCallFn = Arc<
    dyn Fn(
            AfterToolCallContext,
            CancellationToken,
        ) -> BoxFuture<'static, Result<Option<AfterToolCallResult>, HookError>>
        + Send
        + Sync,
>;

/// `shouldStopAfterTurn(ctx, signal)`: `true` ends the run after `turn_end` (queues untouched).
pub type ShouldStopAfterTurnFn = Arc<
    dyn Fn(TurnContext, CancellationToken) -> BoxFuture<'static, Result<bool, HookError>>
        + Send
        + Sync,
>;

/// `prepareNextTurn(ctx, signal)`: replaces context, model or thinking level before the next
/// turn (the session's between-turn compaction uses it).
pub type PrepareNextTurnFn = Arc<
    dyn Fn(
            TurnContext,
            CancellationToken,
        ) -> BoxFuture<'static, Result<Option<TurnUpdate>, HookError>>
        + Send
        + Sync,
>;

/// A poll of queued messages (steering or follow-up); empty when nothing is queued.
pub type MessageSourceFn = Arc<dyn Fn() -> Vec<AgentMessage> + Send + Sync>;

/// Where the loop sends its events. `emit` applies any state change synchronously when it is
/// called and returns the (awaited) delivery; the loop awaits every delivery except tool
/// updates, which it joins before `tool_execution_end`.
pub trait EventSink: Send + Sync {
    /// Emits one event.
    fn emit(&self, event: AgentEvent) -> BoxFuture<'static, Result<(), ListenerError>>;

    /// [`EventSink::emit`] for an event the caller already put in an `Arc`: the loop builds
    /// each `message_update` in its final allocation (events are ~460 bytes; every move is a
    /// copy). The default unwraps it (a clone only if the `Arc` is shared) and calls `emit`.
    fn emit_shared(&self, event: Arc<AgentEvent>) -> BoxFuture<'static, Result<(), ListenerError>> {
        self.emit(Arc::unwrap_or_clone(event))
    }

    /// After a `message_end` was delivered: the replacement a listener installed for that
    /// message, if any (pi: a `message_end` handler mutating the message object in place, so
    /// the loop's context, `turn_end`, `agent_end` and later LLM calls see the change).
    fn take_message_end_replacement(&self) -> Option<AgentMessage> {
        None
    }
}

/// `{systemPrompt, messages, tools}`: the loop's working context.
#[derive(Clone, Default)]
pub struct AgentContext {
    /// System prompt.
    pub system_prompt: String,
    /// Transcript (agent messages).
    pub messages: Vec<AgentMessage>,
    /// Tools the model may call.
    pub tools: Vec<Arc<dyn AgentTool>>,
}

impl fmt::Debug for AgentContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentContext")
            .field("system_prompt", &self.system_prompt)
            .field("messages", &self.messages.len())
            .field(
                "tools",
                &self
                    .tools
                    .iter()
                    .map(|t| t.name().to_owned())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl AgentContext {
    /// The tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn AgentTool>> {
        self.tools.iter().find(|t| t.name() == name)
    }
}

/// `{assistantMessage, toolCall, args, context}` given to `before_tool_call`.
#[derive(Clone, Debug)]
pub struct BeforeToolCallContext {
    /// The assistant message requesting the call.
    pub assistant_message: AssistantMessage,
    /// The original call (raw arguments).
    pub tool_call: ToolCall,
    /// Validated (coerced) arguments.
    pub args: Value,
    /// The loop's context at this point.
    pub context: Arc<AgentContext>,
}

/// `{block?, reason?, terminate?}` returned by `before_tool_call`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BeforeToolCallResult {
    /// Block the call: it gets an error result (`reason`, else `Tool execution was blocked`).
    pub block: bool,
    /// The error text of a blocked call.
    pub reason: Option<String>,
    /// With `block`, mark the error result `terminate` (only when exactly `Some(true)`).
    pub terminate: Option<bool>,
    /// Replacement arguments (pi: in-place mutation of `args`); run unvalidated.
    pub args: Option<Value>,
}

/// `{assistantMessage, toolCall, args, result, isError, context}` given to `after_tool_call`.
#[derive(Clone, Debug)]
pub struct AfterToolCallContext {
    /// The assistant message requesting the call.
    pub assistant_message: AssistantMessage,
    /// The original call.
    pub tool_call: ToolCall,
    /// The arguments the tool ran with.
    pub args: Value,
    /// The tool's result.
    pub result: AgentToolResult,
    /// Whether the tool failed.
    pub is_error: bool,
    /// The loop's context at this point.
    pub context: Arc<AgentContext>,
}

/// Overrides returned by `after_tool_call`: each `Some` replaces the field; other result
/// fields (e.g. `added_tool_names`) are kept (no deep merge).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AfterToolCallResult {
    /// Replacement content.
    pub content: Option<Vec<UserContent>>,
    /// Replacement details.
    pub details: Option<Value>,
    /// Replacement usage.
    pub usage: Option<Usage>,
    /// Replacement terminate flag.
    pub terminate: Option<bool>,
    /// Replacement error flag.
    pub is_error: Option<bool>,
}

/// `{message, toolResults, context, newMessages}`: the turn that just ended.
#[derive(Clone, Debug)]
pub struct TurnContext {
    /// The turn's assistant message (shared with the transcript).
    pub message: Arc<AssistantMessage>,
    /// The turn's tool results (shared with the transcript).
    pub tool_results: Vec<Arc<ToolResultMessage>>,
    /// The loop's context after the turn.
    pub context: Arc<AgentContext>,
    /// Messages produced by the run so far.
    pub new_messages: Vec<AgentMessage>,
}

/// `{context?, model?, thinkingLevel?}` returned by `prepare_next_turn`.
#[derive(Clone, Debug, Default)]
pub struct TurnUpdate {
    /// Replacement context.
    pub context: Option<AgentContext>,
    /// Replacement model.
    pub model: Option<Model>,
    /// Replacement thinking level (`off` = no reasoning).
    pub thinking_level: Option<ModelThinkingLevel>,
}

/// `AgentLoopConfig`: everything one run needs besides the context.
#[derive(Clone)]
pub struct AgentLoopConfig {
    /// The model of the next LLM call.
    pub model: Model,
    /// Options forwarded to the stream function (`reasoning`, `session_id`, `on_payload`,
    /// `on_response`, `thinking_budgets`, `max_retry_delay_ms`, …). `api_key` is the fallback
    /// when `get_api_key` yields nothing; `signal` is replaced by the run's token.
    pub options: StreamOptions,
    /// Agent messages → LLM messages.
    pub convert_to_llm: ConvertToLlmFn,
    /// Context transform before `convert_to_llm`.
    pub transform_context: Option<TransformContextFn>,
    /// Per-call API key resolution.
    pub get_api_key: Option<GetApiKeyFn>,
    /// Stop after a turn.
    pub should_stop_after_turn: Option<ShouldStopAfterTurnFn>,
    /// Prepare the next turn.
    pub prepare_next_turn: Option<PrepareNextTurnFn>,
    /// Steering poll.
    pub get_steering_messages: Option<MessageSourceFn>,
    /// Follow-up poll.
    pub get_follow_up_messages: Option<MessageSourceFn>,
    /// Batch mode (default parallel; a sequential tool makes its batch sequential).
    pub tool_execution: ExecutionMode,
    /// Preflight hook.
    pub before_tool_call: Option<BeforeToolCallFn>,
    /// Finalization hook.
    pub after_tool_call: Option<AfterToolCallFn>,
}

impl fmt::Debug for AgentLoopConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentLoopConfig")
            .field("model", &self.model.id)
            .field("options", &self.options)
            .field("tool_execution", &self.tool_execution)
            .finish_non_exhaustive()
    }
}

impl AgentLoopConfig {
    /// A config with the default role filter and no hooks.
    pub fn new(model: Model) -> Self {
        AgentLoopConfig {
            model,
            options: StreamOptions::default(),
            convert_to_llm: Arc::new(default_convert_to_llm),
            transform_context: None,
            get_api_key: None,
            should_stop_after_turn: None,
            prepare_next_turn: None,
            get_steering_messages: None,
            get_follow_up_messages: None,
            tool_execution: ExecutionMode::Parallel,
            before_tool_call: None,
            after_tool_call: None,
        }
    }
}

/// pi's default `convertToLlm`: keeps roles `user`, `assistant`, `toolResult`.
pub fn default_convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages.iter().filter_map(AgentMessage::to_llm).collect()
}
