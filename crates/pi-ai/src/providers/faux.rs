//! The faux provider: a scripted, in-memory stream function for tests of every layer.
//!
//! Mirrors pi-ai 0.85.1 `providers/faux.ts`:
//! - each call shifts the next [`FauxStep`] (a message or a factory) off a FIFO queue and
//!   counts the call; then, on a task, runs `on_response({status: 200, headers: {}})`;
//!   an empty queue yields an error-only stream `No more faux responses queued` (with the
//!   usage estimate); a failing factory yields an error-only stream with its message;
//! - the message is re-stamped with the provider's api/provider and the request's model id
//!   and given usage `ceil(chars/4)` of a context serialization (input) and of the content
//!   (output); with a session id and a cache retention other than `none`, the common
//!   prefix with the session's previous prompt becomes `cacheRead`, the rest `cacheWrite`;
//! - streaming: `start`, then per block `*_start`, deltas of 3–5 "tokens" (×4 chars; tool
//!   calls stream their arguments JSON while the partial's arguments stay `{}`), `*_end`;
//!   one scheduler yield per chunk, or real-time pacing with `tokens_per_second`;
//! - the caller's token is checked before `start`, before each block and after each chunk
//!   → `error{aborted}` with the partial and `Request was aborted`; a scripted
//!   `error`/`aborted` message ends with `error`, `pending` with
//!   `Faux response ended without a stop reason`, anything else with `done`.
//!
//! As a stream function: `move |model, context, options| faux.stream(&model, &context,
//! options)`; or register it with [`super::registry::register_api_provider`] (it needs no
//! API key).
//!
//! Character counts are JavaScript's (UTF-16 code units). Chunks never split a character
//! (pi may split a surrogate pair; Rust strings cannot). Deferred requests
//! (`fetchDeferred`) are not modelled: a scripted `deferred` message simply ends with
//! `done{deferred}`.

#[cfg(test)]
mod tests;
mod usage;

use usage::{js_len, tokens};

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::registry::ApiProvider;
use crate::event::{AssistantMessageEvent, PartialMessage};
use crate::stream::{AssistantMessageEventStream, EventSink, event_channel};
use crate::types::{
    AssistantContent, AssistantMessage, Context, InputKind, Model, ModelCost, ResponseInfo,
    StopReason, StreamHookError, StreamOptions, TextContent, ThinkingContent, ToolCall, Usage,
    now_ms,
};

/// Default api id prefix, provider and model.
pub const DEFAULT_API: &str = "faux";
/// Default provider id.
pub const DEFAULT_PROVIDER: &str = "faux";
/// Default model id.
pub const DEFAULT_MODEL_ID: &str = "faux-1";
/// Default model name.
pub const DEFAULT_MODEL_NAME: &str = "Faux Model";
/// Base URL of faux models.
pub const DEFAULT_BASE_URL: &str = "http://localhost:0";
/// `errorMessage` when the queue is empty.
pub const NO_MORE_RESPONSES: &str = "No more faux responses queued";
/// `errorMessage` of an aborted faux stream.
pub const ABORTED_TEXT: &str = "Request was aborted";
/// `errorMessage` for a scripted message still `pending`.
pub const PENDING_TEXT: &str = "Faux response ended without a stop reason";

/// A text block.
pub fn faux_text(text: impl Into<String>) -> AssistantContent {
    AssistantContent::Text(TextContent::new(text))
}

/// A thinking block.
pub fn faux_thinking(thinking: impl Into<String>) -> AssistantContent {
    AssistantContent::Thinking(ThinkingContent {
        thinking: thinking.into(),
        ..Default::default()
    })
}

/// A tool call; `id` defaults to a random `tool:<ms>:<base36>`.
pub fn faux_tool_call(
    name: impl Into<String>,
    arguments: Map<String, Value>,
    id: Option<&str>,
) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall {
        id: id.map_or_else(|| random_id("tool"), str::to_owned),
        name: name.into(),
        arguments,
        ..Default::default()
    })
}

/// Optional fields of [`faux_assistant_message`].
#[derive(Clone, Debug, Default)]
pub struct FauxMessageOptions {
    /// Default `stop`.
    pub stop_reason: Option<StopReason>,
    /// Deferred handle.
    pub deferred: Option<Value>,
    /// Error text for `error`/`aborted`.
    pub error_message: Option<String>,
    /// Provider response id.
    pub response_id: Option<String>,
    /// Default now.
    pub timestamp: Option<i64>,
}

/// A scripted assistant message (api `faux`, provider `faux`, model `faux-1`, zero usage).
/// Its keys are in pi's order: `…, stopReason, deferred?, errorMessage?, responseId?,
/// timestamp` ([`AssistantMessage::ids_before_timestamp`],
/// [`AssistantMessage::error_before_timestamp`]).
pub fn faux_assistant_message(
    content: Vec<AssistantContent>,
    options: FauxMessageOptions,
) -> AssistantMessage {
    // pi's literal: `…, stopReason, deferred?, errorMessage?, responseId?, timestamp`.
    let ids_before_timestamp = options.deferred.is_some() || options.response_id.is_some();
    AssistantMessage {
        content,
        ids_before_timestamp,
        api: DEFAULT_API.into(),
        provider: DEFAULT_PROVIDER.into(),
        model: DEFAULT_MODEL_ID.into(),
        usage: Usage::default(),
        stop_reason: options.stop_reason.unwrap_or(StopReason::Stop),
        deferred: options.deferred,
        error_before_timestamp: options.error_message.is_some(),
        error_message: options.error_message,
        response_id: options.response_id,
        timestamp: options.timestamp.unwrap_or_else(now_ms),
        ..Default::default()
    }
}

/// Counters a factory can read: `callCount` (1 for the first request).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FauxState {
    /// Requests received so far, including the current one.
    pub call_count: usize,
}

/// A response computed per request from `(context, options, state, model)`; `Err(error)`
/// (pi's factory threw) makes the request an error-only stream with `error`'s message.
pub type FauxFactory = Arc<
    dyn Fn(
            &Context,
            &StreamOptions,
            &FauxState,
            &Model,
        ) -> Result<AssistantMessage, StreamHookError>
        + Send
        + Sync,
>;

/// One queued response.
#[derive(Clone)]
pub enum FauxStep {
    /// A fixed message.
    Message(Box<AssistantMessage>),
    /// A per-request factory.
    Factory(FauxFactory),
}

impl FauxStep {
    /// Wraps a factory closure.
    pub fn factory(
        f: impl Fn(
            &Context,
            &StreamOptions,
            &FauxState,
            &Model,
        ) -> Result<AssistantMessage, StreamHookError>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        FauxStep::Factory(Arc::new(f))
    }
}

impl From<AssistantMessage> for FauxStep {
    fn from(m: AssistantMessage) -> Self {
        FauxStep::Message(Box::new(m))
    }
}

/// A model of the faux provider; unset fields take the defaults (name = id, text+image,
/// zero cost, 128 000 context, 16 384 output).
#[derive(Clone, Debug, Default)]
pub struct FauxModelDefinition {
    /// Model id.
    pub id: String,
    /// Display name.
    pub name: Option<String>,
    /// Whether it reasons.
    pub reasoning: bool,
    /// Input kinds.
    pub input: Option<Vec<InputKind>>,
    /// Prices.
    pub cost: Option<ModelCost>,
    /// Context window.
    pub context_window: Option<u64>,
    /// Output cap.
    pub max_tokens: Option<u64>,
}

/// Construction options of [`FauxProvider`].
#[derive(Clone, Debug, Default)]
pub struct FauxOptions {
    /// Api id (default a random `faux:<ms>:<base36>`).
    pub api: Option<String>,
    /// Provider id (default `faux`).
    pub provider: Option<String>,
    /// Models (default one `faux-1`).
    pub models: Vec<FauxModelDefinition>,
    /// Real-time pacing; `None` = one scheduler yield per chunk.
    pub tokens_per_second: Option<f64>,
    /// Chunk size range in tokens `(min, max)` (default `(3, 5)`).
    pub token_size: Option<(usize, usize)>,
}

struct Core {
    api: String,
    provider: String,
    models: Vec<Model>,
    min_tokens: usize,
    max_tokens: usize,
    tokens_per_second: Option<f64>,
    queue: Mutex<VecDeque<FauxStep>>,
    call_count: AtomicUsize,
    prompt_cache: Mutex<HashMap<String, String>>,
    rng: Mutex<u64>,
}

/// The scripted provider. Cheap to clone (shared state).
#[derive(Clone)]
pub struct FauxProvider {
    core: Arc<Core>,
}

use crate::sync::lock;

impl Default for FauxProvider {
    fn default() -> Self {
        Self::new(FauxOptions::default())
    }
}

impl FauxProvider {
    /// A provider with an empty queue.
    pub fn new(options: FauxOptions) -> Self {
        let api = options.api.unwrap_or_else(|| random_id(DEFAULT_API));
        let provider = options
            .provider
            .unwrap_or_else(|| DEFAULT_PROVIDER.to_owned());
        let (min, max) = options.token_size.unwrap_or((3, 5));
        let min_tokens = min.min(max).max(1);
        let max_tokens = max.max(min_tokens);
        let definitions = if options.models.is_empty() {
            vec![FauxModelDefinition {
                id: DEFAULT_MODEL_ID.into(),
                name: Some(DEFAULT_MODEL_NAME.into()),
                ..Default::default()
            }]
        } else {
            options.models
        };
        let models = definitions
            .into_iter()
            .map(|d| Model {
                name: d.name.unwrap_or_else(|| d.id.clone()),
                id: d.id,
                api: api.clone(),
                provider: provider.clone(),
                base_url: DEFAULT_BASE_URL.into(),
                reasoning: d.reasoning,
                input: d
                    .input
                    .unwrap_or_else(|| vec![InputKind::Text, InputKind::Image]),
                cost: d.cost.unwrap_or_default(),
                context_window: d.context_window.unwrap_or(128_000),
                max_tokens: d.max_tokens.unwrap_or(16_384),
                ..Default::default()
            })
            .collect();
        FauxProvider {
            core: Arc::new(Core {
                api,
                provider,
                models,
                min_tokens,
                max_tokens,
                tokens_per_second: options.tokens_per_second,
                queue: Mutex::new(VecDeque::new()),
                call_count: AtomicUsize::new(0),
                prompt_cache: Mutex::new(HashMap::new()),
                rng: Mutex::new(random_seed()),
            }),
        }
    }

    /// The api id.
    pub fn api(&self) -> &str {
        &self.core.api
    }

    /// The provider id.
    pub fn provider(&self) -> &str {
        &self.core.provider
    }

    /// All models (at least one).
    pub fn models(&self) -> &[Model] {
        &self.core.models
    }

    /// The first model.
    pub fn model(&self) -> Model {
        self.core.models.first().cloned().unwrap_or_default()
    }

    /// The model with `id`.
    pub fn get_model(&self, id: &str) -> Option<Model> {
        self.core.models.iter().find(|m| m.id == id).cloned()
    }

    /// Replaces the queue.
    pub fn set_responses(&self, steps: Vec<FauxStep>) {
        *lock(&self.core.queue) = steps.into();
    }

    /// Appends to the queue.
    pub fn append_responses(&self, steps: Vec<FauxStep>) {
        lock(&self.core.queue).extend(steps);
    }

    /// Responses still queued.
    pub fn pending_response_count(&self) -> usize {
        lock(&self.core.queue).len()
    }

    /// Requests received so far.
    pub fn call_count(&self) -> usize {
        self.core.call_count.load(Ordering::SeqCst)
    }

    /// Streams the next scripted response for this request (must run inside a Tokio
    /// runtime; otherwise the stream holds an error).
    pub fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        let step = lock(&self.core.queue).pop_front();
        let call_count = self.core.call_count.fetch_add(1, Ordering::SeqCst) + 1;
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            let message = self.core.error_message(
                "pi-ai streams must be started inside a Tokio runtime",
                &model.id,
            );
            return AssistantMessageEventStream::error_only(message);
        };
        let token = options
            .signal
            .as_ref()
            .map(CancellationToken::child_token)
            .unwrap_or_default();
        let (sink, stream) = event_channel(Some(token));
        let request = Request {
            core: self.core.clone(),
            model: model.clone(),
            context: context.clone(),
            options,
            state: FauxState { call_count },
            sink,
        };
        runtime.spawn(request.run(step));
        stream
    }
}

impl ApiProvider for FauxProvider {
    fn api(&self) -> &str {
        &self.core.api
    }

    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        FauxProvider::stream(self, model, context, options)
    }

    fn requires_api_key(&self) -> bool {
        false
    }
}

impl Core {
    fn with_usage(
        &self,
        message: AssistantMessage,
        context: &Context,
        options: &StreamOptions,
    ) -> AssistantMessage {
        usage::with_usage_estimate(message, context, options, &mut lock(&self.prompt_cache))
    }

    /// pi's `createErrorMessage`: empty content, zero usage, `error`, `errorMessage` before
    /// `timestamp`.
    fn error_message(&self, text: &str, model_id: &str) -> AssistantMessage {
        AssistantMessage::setup_error(&self.api, &self.provider, model_id, text.to_owned())
    }

    /// Splits `text` into chunks of `min..=max` tokens × 4 UTF-16 units (`[""]` for empty
    /// text), never inside a character.
    fn chunks(&self, text: &str) -> Vec<String> {
        let mut chunks = Vec::new();
        let mut current = String::new();
        let mut size = self.chunk_units();
        let mut units = 0;
        for c in text.chars() {
            current.push(c);
            units += c.len_utf16();
            if units >= size {
                chunks.push(std::mem::take(&mut current));
                units = 0;
                size = self.chunk_units();
            }
        }
        if !current.is_empty() || chunks.is_empty() {
            chunks.push(current);
        }
        chunks
    }

    fn chunk_units(&self) -> usize {
        let span = (self.max_tokens - self.min_tokens + 1) as u64;
        let mut state = lock(&self.rng);
        // xorshift64*
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (self.min_tokens + (r % span) as usize) * 4
    }

    /// Waits between chunks.
    async fn pace(&self, chunk: &str) {
        match self.tokens_per_second {
            Some(tps) if tps > 0.0 => {
                let secs = tokens(js_len(chunk)) as f64 / tps;
                tokio::time::sleep(Duration::from_secs_f64(secs.max(0.0))).await;
            }
            _ => tokio::task::yield_now().await,
        }
    }
}

/// One request in flight.
struct Request {
    core: Arc<Core>,
    model: Model,
    context: Context,
    options: StreamOptions,
    state: FauxState,
    sink: EventSink,
}

impl Request {
    async fn run(mut self, step: Option<FauxStep>) {
        if let Some(on_response) = self.options.on_response.clone() {
            let info = ResponseInfo {
                status: 200,
                headers: Vec::new(),
            };
            if let Err(error) = on_response(info, self.model.clone()).await {
                return self.fail_early(&error.message).await;
            }
        }
        let resolved = match step {
            None => {
                let message = self.core.error_message(NO_MORE_RESPONSES, &self.model.id);
                let message = self.core.with_usage(message, &self.context, &self.options);
                return self.push_error(StopReason::Error, message).await;
            }
            Some(FauxStep::Message(m)) => *m,
            Some(FauxStep::Factory(f)) => {
                match f(&self.context, &self.options, &self.state, &self.model) {
                    Ok(m) => m,
                    Err(error) => return self.fail_early(&error.message).await,
                }
            }
        };
        let mut message = resolved;
        message.api = self.core.api.clone();
        message.provider = self.core.provider.clone();
        message.model = self.model.id.clone();
        let message = self.core.with_usage(message, &self.context, &self.options);
        if let Err(text) = self.stream_deltas(message).await {
            self.fail_early(text).await;
        }
    }

    async fn fail_early(&mut self, text: &str) {
        let message = self.core.error_message(text, &self.model.id);
        self.push_error(StopReason::Error, message).await;
    }

    async fn push_error(&mut self, reason: StopReason, error: AssistantMessage) {
        self.sink
            .push(AssistantMessageEvent::Error {
                reason,
                error: Box::new(error),
            })
            .await;
    }

    fn aborted(&self) -> bool {
        self.options
            .signal
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Ends with `error{aborted}` carrying the partial.
    async fn abort(&mut self, partial: &PartialMessage) {
        let error = partial.update(|m| {
            m.stop_reason = StopReason::Aborted;
            m.error_message = Some(ABORTED_TEXT.to_owned());
            m.timestamp = now_ms();
            m.clone()
        });
        self.push_error(StopReason::Aborted, error).await;
    }

    /// pi's `streamWithDeltas`; `Err(text)` = thrown (`pending`).
    async fn stream_deltas(&mut self, message: AssistantMessage) -> Result<(), &'static str> {
        let partial = PartialMessage::new(AssistantMessage {
            content: Vec::new(),
            stop_reason: StopReason::Pending,
            ..message.clone()
        });
        if self.aborted() {
            self.abort(&partial).await;
            return Ok(());
        }
        if !self
            .push(AssistantMessageEvent::Start {
                partial: partial.clone(),
            })
            .await
        {
            return Ok(());
        }
        for (index, block) in message.content.iter().enumerate() {
            if self.aborted() {
                self.abort(&partial).await;
                return Ok(());
            }
            let finished = match block {
                AssistantContent::Thinking(t) => self.stream_thinking(&partial, index, t).await,
                AssistantContent::Text(t) => self.stream_text(&partial, index, t).await,
                AssistantContent::ToolCall(c) => self.stream_tool_call(&partial, index, c).await,
            };
            if !finished {
                return Ok(());
            }
        }
        match message.stop_reason {
            StopReason::Pending => Err(PENDING_TEXT),
            reason @ (StopReason::Error | StopReason::Aborted) => {
                self.push_error(reason, message).await;
                Ok(())
            }
            reason => {
                self.push(AssistantMessageEvent::Done {
                    reason,
                    message: Box::new(message),
                })
                .await;
                Ok(())
            }
        }
    }

    /// Delivers one event; `false` when the consumer is gone.
    async fn push(&mut self, event: AssistantMessageEvent) -> bool {
        self.sink.push(event).await
    }

    /// After a chunk's pause: `false` (stream over) when aborted or the consumer left.
    async fn after_pause(&mut self, partial: &PartialMessage, chunk: &str) -> bool {
        self.core.pace(chunk).await;
        if self.aborted() {
            self.abort(partial).await;
            return false;
        }
        !self.sink.is_closed()
    }

    async fn stream_thinking(
        &mut self,
        partial: &PartialMessage,
        index: usize,
        block: &ThinkingContent,
    ) -> bool {
        partial.update(|m| m.content.push(faux_thinking("")));
        let start = AssistantMessageEvent::ThinkingStart {
            content_index: index,
            partial: partial.clone(),
        };
        if !self.push(start).await {
            return false;
        }
        for chunk in self.core.chunks(&block.thinking) {
            if !self.after_pause(partial, &chunk).await {
                return false;
            }
            partial.update(|m| {
                if let Some(AssistantContent::Thinking(t)) = m.content.get_mut(index) {
                    t.thinking.push_str(&chunk);
                }
            });
            let delta = AssistantMessageEvent::ThinkingDelta {
                content_index: index,
                delta: chunk,
                partial: partial.clone(),
            };
            if !self.push(delta).await {
                return false;
            }
        }
        self.push(AssistantMessageEvent::ThinkingEnd {
            content_index: index,
            content: block.thinking.clone(),
            partial: partial.clone(),
        })
        .await
    }

    async fn stream_text(
        &mut self,
        partial: &PartialMessage,
        index: usize,
        block: &TextContent,
    ) -> bool {
        partial.update(|m| m.content.push(faux_text("")));
        let start = AssistantMessageEvent::TextStart {
            content_index: index,
            partial: partial.clone(),
        };
        if !self.push(start).await {
            return false;
        }
        for chunk in self.core.chunks(&block.text) {
            if !self.after_pause(partial, &chunk).await {
                return false;
            }
            partial.update(|m| {
                if let Some(AssistantContent::Text(t)) = m.content.get_mut(index) {
                    t.text.push_str(&chunk);
                }
            });
            let delta = AssistantMessageEvent::TextDelta {
                content_index: index,
                delta: chunk,
                partial: partial.clone(),
            };
            if !self.push(delta).await {
                return false;
            }
        }
        self.push(AssistantMessageEvent::TextEnd {
            content_index: index,
            content: block.text.clone(),
            partial: partial.clone(),
        })
        .await
    }

    async fn stream_tool_call(
        &mut self,
        partial: &PartialMessage,
        index: usize,
        call: &ToolCall,
    ) -> bool {
        partial.update(|m| {
            m.content.push(AssistantContent::ToolCall(ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                ..Default::default()
            }))
        });
        let start = AssistantMessageEvent::ToolcallStart {
            content_index: index,
            partial: partial.clone(),
        };
        if !self.push(start).await {
            return false;
        }
        let json = crate::json::to_string(&call.arguments).unwrap_or_else(|_| "{}".into());
        for chunk in self.core.chunks(&json) {
            if !self.after_pause(partial, &chunk).await {
                return false;
            }
            let delta = AssistantMessageEvent::ToolcallDelta {
                content_index: index,
                delta: chunk,
                partial: partial.clone(),
            };
            if !self.push(delta).await {
                return false;
            }
        }
        partial.update(|m| {
            if let Some(AssistantContent::ToolCall(t)) = m.content.get_mut(index) {
                t.arguments = call.arguments.clone();
            }
        });
        self.push(AssistantMessageEvent::ToolcallEnd {
            content_index: index,
            tool_call: Box::new(call.clone()),
            partial: partial.clone(),
        })
        .await
    }
}

fn random_seed() -> u64 {
    std::collections::hash_map::RandomState::new().hash_one(now_ms()) | 1
}

/// `<prefix>:<ms>:<base36>`, as pi's `randomId`.
fn random_id(prefix: &str) -> String {
    let mut n = random_seed();
    let mut digits = Vec::new();
    while n > 0 && digits.len() < 11 {
        let d = (n % 36) as u8;
        digits.push(if d < 10 { b'0' + d } else { b'a' + d - 10 });
        n /= 36;
    }
    format!("{prefix}:{}:{}", now_ms(), String::from_utf8_lossy(&digits))
}
