//! `Agent`: the stateful wrapper around the loop — transcript, listeners, queues, runs.
//!
//! Mirrors pi-agent-core 0.85.1 `agent.ts`. An [`Agent`] is a cheap handle
//! (`Clone` shares it), so listeners and other tasks can `steer`, `abort` or read the state
//! while a run is in progress. Every event is reduced into the state and then awaited over
//! the listeners in subscription order; `prompt()` / `continue_run()` / `wait_for_idle()`
//! return only after the `agent_end` listeners finished, and `is_streaming` stays `true`
//! until then. A failure escaping the loop (a listener or hook error, or a panic) is turned
//! into the synthesized failure sequence; a second failure there is returned.

mod options;
mod state;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::future::BoxFuture;
use pi_ai::{ImageContent, Message, Model, ModelThinkingLevel, StreamOptions, UserContent};
use pi_ai::{UserMessage, UserMessageContent, now_ms};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub use options::{AgentOptions, PrepareNextTurnNoContextFn, QueueMode};
pub use state::{AgentState, StreamingMessage, default_model};

use self::options::PendingQueue;
use crate::agent_loop::{
    AgentContext, AgentLoopConfig, EventSink, MessageSourceFn, PrepareNextTurnFn, check_continue,
    run_agent_loop, run_agent_loop_continue,
};
use crate::error::{AgentError, HookError, ListenerError, panic_message};
use crate::event::AgentEvent;
use crate::listeners::{Listener, ListenerSet, Subscription};
use crate::message::AgentMessage;
use crate::tool::AgentTool;

/// What `prompt` accepts: text (plus images), one message, or several.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum PromptInput {
    /// One user message `[text, ...images]`.
    Text(String, Vec<ImageContent>),
    /// One message.
    Message(AgentMessage),
    /// Several messages.
    Messages(Vec<AgentMessage>),
}

impl From<&str> for PromptInput {
    fn from(s: &str) -> Self {
        PromptInput::Text(s.to_owned(), Vec::new())
    }
}
impl From<String> for PromptInput {
    fn from(s: String) -> Self {
        PromptInput::Text(s, Vec::new())
    }
}
impl From<AgentMessage> for PromptInput {
    fn from(m: AgentMessage) -> Self {
        PromptInput::Message(m)
    }
}
impl From<Vec<AgentMessage>> for PromptInput {
    fn from(m: Vec<AgentMessage>) -> Self {
        PromptInput::Messages(m)
    }
}

impl PromptInput {
    fn into_messages(self) -> Vec<AgentMessage> {
        match self {
            PromptInput::Messages(m) => m,
            PromptInput::Message(m) => vec![m],
            PromptInput::Text(text, images) => {
                let mut blocks = vec![UserContent::text(text)];
                blocks.extend(images.into_iter().map(UserContent::Image));
                vec![
                    Message::User(UserMessage {
                        content: UserMessageContent::Blocks(blocks),
                        timestamp: now_ms(),
                    })
                    .into(),
                ]
            }
        }
    }
}

/// Run bookkeeping: the active run's token and an idle signal (generation, active).
struct RunSlot {
    token: Option<CancellationToken>,
}

struct Inner {
    options: Mutex<AgentOptions>,
    state: Mutex<AgentState>,
    listeners: Arc<ListenerSet>,
    steering: Mutex<PendingQueue>,
    follow_up: Mutex<PendingQueue>,
    run: Mutex<RunSlot>,
    idle: watch::Sender<(u64, bool)>,
    /// The replacement installed by a `message_end` listener for the message being ended.
    ending_replacement: Mutex<Option<AgentMessage>>,
}

use crate::sync::lock;

/// The stateful agent (a shared handle; `Clone` is cheap and shares everything).
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("state", &*lock(&self.inner.state))
            .finish_non_exhaustive()
    }
}

/// Clears the run when dropped (pi: `finishRun`), also when the run's future is dropped.
struct RunGuard {
    inner: Arc<Inner>,
    token: CancellationToken,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        {
            let mut s = lock(&self.inner.state);
            s.is_streaming = false;
            s.streaming_message = None;
            s.pending_tool_calls.clear();
        }
        lock(&self.inner.run).token = None;
        self.inner.idle.send_modify(|(generation, active)| {
            *generation += 1;
            *active = false;
        });
    }
}

/// The agent's event sink: reduce the state, then await every listener in order.
struct AgentSink {
    inner: Arc<Inner>,
    /// The run's signal, shared by the deliveries (a reference-count increment per event
    /// instead of a `CancellationToken` clone, which locks the token's tree).
    signal: Arc<CancellationToken>,
}

/// A delivery that already finished successfully (zero-sized: boxing it does not allocate).
struct Delivered;

impl Future for Delivered {
    type Output = Result<(), ListenerError>;

    fn poll(self: std::pin::Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(Ok(()))
    }
}

impl EventSink for AgentSink {
    fn emit(&self, event: AgentEvent) -> BoxFuture<'static, Result<(), ListenerError>> {
        self.emit_shared(Arc::new(event))
    }

    /// Reduces the state, then starts the delivery at once: listeners run up to their first
    /// pending `await` before `emit` returns (as a JS `async` call runs synchronously up to
    /// its first `await`, pi's `emit` included); the returned future finishes the rest. When
    /// every listener finished synchronously (the common case) nothing is allocated for it.
    fn emit_shared(&self, event: Arc<AgentEvent>) -> BoxFuture<'static, Result<(), ListenerError>> {
        if matches!(*event, AgentEvent::MessageEnd { .. }) {
            *lock(&self.inner.ending_replacement) = None;
        }
        lock(&self.inner.state).reduce(&event);
        let mut delivery = self
            .inner
            .listeners
            .deliver(event, Arc::clone(&self.signal));
        // A listener still pending here registered this no-op waker; the caller's first poll
        // of the returned future polls it again with the real one.
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        match std::pin::Pin::new(&mut delivery).poll(&mut cx) {
            Poll::Ready(Ok(())) => Box::pin(Delivered),
            Poll::Ready(Err(e)) => Box::pin(std::future::ready(Err(e))),
            Poll::Pending => Box::pin(delivery),
        }
    }

    fn take_message_end_replacement(&self) -> Option<AgentMessage> {
        lock(&self.inner.ending_replacement).take()
    }
}

/// A weak handle to an [`Agent`] ([`Agent::downgrade`]). A listener is owned by its agent, so
/// a listener that captured an `Agent` clone (to steer or abort it) would keep the agent alive
/// forever; capture this instead and [`WeakAgent::upgrade`] it when the listener runs.
#[derive(Clone, Default)]
pub struct WeakAgent(Weak<Inner>);

impl WeakAgent {
    /// The agent, if a strong handle still exists.
    pub fn upgrade(&self) -> Option<Agent> {
        self.0.upgrade().map(|inner| Agent { inner })
    }
}

impl std::fmt::Debug for WeakAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeakAgent")
            .field("alive", &(self.0.strong_count() > 0))
            .finish()
    }
}

impl Agent {
    /// A handle that does not keep the agent alive (see [`WeakAgent`]).
    pub fn downgrade(&self) -> WeakAgent {
        WeakAgent(Arc::downgrade(&self.inner))
    }

    /// An idle agent with pi's default state (empty prompt, placeholder model, `off`).
    pub fn new(options: AgentOptions) -> Self {
        let (idle, _) = watch::channel((0, false));
        Agent {
            inner: Arc::new(Inner {
                options: Mutex::new(options),
                state: Mutex::new(AgentState::default()),
                listeners: Arc::new(ListenerSet::default()),
                steering: Mutex::new(PendingQueue::default()),
                follow_up: Mutex::new(PendingQueue::default()),
                run: Mutex::new(RunSlot { token: None }),
                idle,
                ending_replacement: Mutex::new(None),
            }),
        }
    }

    // ----- options and state -------------------------------------------------------------

    /// A copy of the options.
    pub fn options(&self) -> AgentOptions {
        lock(&self.inner.options).clone()
    }

    /// Changes options (takes effect at the next run).
    pub fn update_options(&self, f: impl FnOnce(&mut AgentOptions)) {
        f(&mut lock(&self.inner.options));
    }

    /// A copy of the whole state (O(transcript)); prefer [`Agent::with_state`] for reads.
    pub fn state(&self) -> AgentState {
        lock(&self.inner.state).clone()
    }

    /// Reads the live state without copying it.
    pub fn with_state<R>(&self, f: impl FnOnce(&AgentState) -> R) -> R {
        f(&lock(&self.inner.state))
    }

    /// A copy of the transcript.
    pub fn messages(&self) -> Vec<AgentMessage> {
        self.with_state(|s| s.messages.clone())
    }

    /// Replaces the transcript.
    pub fn set_messages(&self, messages: Vec<AgentMessage>) {
        lock(&self.inner.state).messages = messages;
    }

    /// Replaces the tools.
    pub fn set_tools(&self, tools: Vec<Arc<dyn AgentTool>>) {
        lock(&self.inner.state).tools = tools;
    }

    /// Sets the system prompt.
    pub fn set_system_prompt(&self, prompt: impl Into<String>) {
        lock(&self.inner.state).system_prompt = prompt.into();
    }

    /// Sets the model.
    pub fn set_model(&self, model: Model) {
        lock(&self.inner.state).model = model;
    }

    /// Sets the thinking level.
    pub fn set_thinking_level(&self, level: ModelThinkingLevel) {
        lock(&self.inner.state).thinking_level = level;
    }

    /// Whether a run is active (true until its `agent_end` listeners finished).
    pub fn is_streaming(&self) -> bool {
        self.with_state(|s| s.is_streaming)
    }

    /// The message being streamed, if any.
    pub fn streaming_message(&self) -> Option<StreamingMessage> {
        self.with_state(|s| s.streaming_message.clone())
    }

    /// Ids of the calls currently executing.
    pub fn pending_tool_calls(&self) -> Vec<String> {
        self.with_state(|s| s.pending_tool_calls.clone())
    }

    /// The last run's assistant `errorMessage`, if any.
    pub fn error_message(&self) -> Option<String> {
        self.with_state(|s| s.error_message.clone())
    }

    /// Replaces the message whose `message_end` is being delivered; call it from a
    /// `message_end` listener (the coding agent's extension `message_end` handler). The
    /// transcript entry is replaced at once; the loop uses the replacement for its context,
    /// `turn_end`, `agent_end` and later LLM calls (pi: the handler mutates the shared message
    /// object in place). Returns `false` (and changes nothing) outside a run, with an empty
    /// transcript, or when the role differs from the transcript's last message.
    pub fn replace_ending_message(&self, message: AgentMessage) -> bool {
        if self.signal().is_none() {
            return false;
        }
        {
            let mut s = lock(&self.inner.state);
            match s.messages.last_mut() {
                Some(last) if last.role() == message.role() => *last = message.clone(),
                _ => return false,
            }
        }
        *lock(&self.inner.ending_replacement) = Some(message);
        true
    }

    // ----- listeners -----------------------------------------------------------------------

    /// Adds a listener (awaited, in subscription order, with the run's signal). Subscribing
    /// emits nothing. Returns the unsubscribe handle.
    pub fn subscribe_listener(&self, listener: Listener) -> Subscription {
        let id = self.inner.listeners.add(listener);
        Subscription::new(&self.inner.listeners, id)
    }

    /// [`Agent::subscribe_listener`] for an async closure.
    pub fn subscribe<F, Fut>(&self, f: F) -> Subscription
    where
        F: Fn(Arc<AgentEvent>, &CancellationToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), ListenerError>> + Send + 'static,
    {
        self.subscribe_listener(Arc::new(move |e, s| Box::pin(f(e, s))))
    }

    // ----- queues --------------------------------------------------------------------------

    /// Queues a message injected at the next turn's start.
    pub fn steer(&self, message: impl Into<AgentMessage>) {
        lock(&self.inner.steering).push(message.into());
    }

    /// Queues a message run only when the agent would otherwise stop.
    pub fn follow_up(&self, message: impl Into<AgentMessage>) {
        lock(&self.inner.follow_up).push(message.into());
    }

    /// Removes all queued steering messages.
    pub fn clear_steering_queue(&self) {
        lock(&self.inner.steering).clear();
    }

    /// Removes all queued follow-up messages.
    pub fn clear_follow_up_queue(&self) {
        lock(&self.inner.follow_up).clear();
    }

    /// Removes both queues' messages.
    pub fn clear_all_queues(&self) {
        self.clear_steering_queue();
        self.clear_follow_up_queue();
    }

    /// Whether either queue holds messages.
    pub fn has_queued_messages(&self) -> bool {
        lock(&self.inner.steering).has_items() || lock(&self.inner.follow_up).has_items()
    }

    fn drain_steering(&self) -> Vec<AgentMessage> {
        let mode = lock(&self.inner.options).steering_mode;
        lock(&self.inner.steering).drain(mode)
    }

    fn drain_follow_up(&self) -> Vec<AgentMessage> {
        let mode = lock(&self.inner.options).follow_up_mode;
        lock(&self.inner.follow_up).drain(mode)
    }

    // ----- runs ----------------------------------------------------------------------------

    /// The active run's signal, if any.
    pub fn signal(&self) -> Option<CancellationToken> {
        lock(&self.inner.run).token.clone()
    }

    /// Aborts the active run (no-op when idle).
    pub fn abort(&self) {
        if let Some(t) = &lock(&self.inner.run).token {
            t.cancel();
        }
    }

    /// Resolves when the current run (and its `agent_end` listeners) finished; at once when
    /// idle.
    pub async fn wait_for_idle(&self) {
        let mut rx = self.inner.idle.subscribe();
        let (generation, active) = *rx.borrow_and_update();
        if !active {
            return;
        }
        let _ = rx.wait_for(|(g, a)| !*a || *g != generation).await;
    }

    /// Clears transcript, runtime state, error and both queues.
    ///
    /// # Errors
    /// [`AgentError::AlreadyProcessingReset`] during a run.
    pub fn reset(&self) -> Result<(), AgentError> {
        let run = lock(&self.inner.run);
        if run.token.is_some() {
            return Err(AgentError::AlreadyProcessingReset);
        }
        {
            let mut s = lock(&self.inner.state);
            s.messages.clear();
            s.is_streaming = false;
            s.streaming_message = None;
            s.pending_tool_calls.clear();
            s.error_message = None;
        }
        drop(run);
        self.clear_all_queues();
        Ok(())
    }

    /// Runs a prompt to completion (text, a message, or messages).
    ///
    /// # Errors
    /// [`AgentError::AlreadyProcessingPrompt`] during a run; [`AgentError::Run`] when a
    /// listener fails while the failure sequence is delivered.
    pub async fn prompt(&self, input: impl Into<PromptInput>) -> Result<(), AgentError> {
        let guard = self.begin_run(AgentError::AlreadyProcessingPrompt)?;
        self.run_prompt(guard, input.into().into_messages(), false)
            .await
    }

    /// [`Agent::prompt`] with images after the text.
    ///
    /// # Errors
    /// As [`Agent::prompt`].
    pub async fn prompt_with_images(
        &self,
        text: impl Into<String>,
        images: Vec<ImageContent>,
    ) -> Result<(), AgentError> {
        self.prompt(PromptInput::Text(text.into(), images)).await
    }

    /// Continues from the transcript (pi: `continue()`).
    ///
    /// # Errors
    /// `AlreadyProcessingContinue`, `NoMessagesToContinue`, `CannotContinueFromAssistant`
    /// (assistant tail and empty queues), or `Run` as [`Agent::prompt`].
    pub async fn continue_run(&self) -> Result<(), AgentError> {
        if self.signal().is_some() {
            return Err(AgentError::AlreadyProcessingContinue);
        }
        let last_role = self.with_state(|s| s.messages.last().map(|m| m.role().to_owned()));
        match last_role.as_deref() {
            None => Err(AgentError::NoMessagesToContinue),
            Some("assistant") => {
                let steering = self.drain_steering();
                if !steering.is_empty() {
                    let guard = self.begin_run(AgentError::AlreadyProcessingContinue)?;
                    return self.run_prompt(guard, steering, true).await;
                }
                let follow_ups = self.drain_follow_up();
                if !follow_ups.is_empty() {
                    let guard = self.begin_run(AgentError::AlreadyProcessingContinue)?;
                    return self.run_prompt(guard, follow_ups, false).await;
                }
                Err(AgentError::CannotContinueFromAssistant)
            }
            Some(_) => {
                let guard = self.begin_run(AgentError::AlreadyProcessingContinue)?;
                let token = guard.token.clone();
                let (context, config, sink, stream_fn) = self.prepare_run(&token, false);
                check_continue(&context)?;
                let run = run_agent_loop_continue(
                    context,
                    config,
                    sink.clone(),
                    token.clone(),
                    stream_fn,
                );
                // The preconditions were checked above, so only a run failure remains.
                let fut = async move {
                    run.await.map_err(|e| match e {
                        AgentError::Run(hook) => hook,
                        other => HookError::new(other.to_string()),
                    })
                };
                self.run_with_lifecycle(guard, token, sink, fut).await
            }
        }
    }

    fn begin_run(&self, busy: AgentError) -> Result<RunGuard, AgentError> {
        let mut run = lock(&self.inner.run);
        if run.token.is_some() {
            return Err(busy);
        }
        let token = CancellationToken::new();
        run.token = Some(token.clone());
        drop(run);
        {
            let mut s = lock(&self.inner.state);
            s.is_streaming = true;
            s.streaming_message = None;
            s.error_message = None;
        }
        self.inner.idle.send_modify(|(_, active)| *active = true);
        Ok(RunGuard {
            inner: Arc::clone(&self.inner),
            token,
        })
    }

    async fn run_prompt(
        &self,
        guard: RunGuard,
        messages: Vec<AgentMessage>,
        skip_initial_steering_poll: bool,
    ) -> Result<(), AgentError> {
        let token = guard.token.clone();
        let (context, config, sink, stream_fn) =
            self.prepare_run(&token, skip_initial_steering_poll);
        let fut = run_agent_loop(
            messages,
            context,
            config,
            sink.clone(),
            token.clone(),
            stream_fn,
        );
        self.run_with_lifecycle(guard, token, sink, fut).await
    }

    /// Snapshot of the context, the loop config, the sink and the stream function.
    fn prepare_run(
        &self,
        token: &CancellationToken,
        skip_initial_steering_poll: bool,
    ) -> (
        AgentContext,
        AgentLoopConfig,
        Arc<dyn EventSink>,
        crate::agent_loop::StreamFn,
    ) {
        let o = self.options();
        let (context, model, thinking) = self.with_state(|s| {
            (
                AgentContext {
                    system_prompt: s.system_prompt.clone(),
                    messages: s.messages.clone(),
                    tools: s.tools.clone(),
                },
                s.model.clone(),
                s.thinking_level,
            )
        });
        let options = StreamOptions {
            session_id: o.session_id.clone(),
            on_payload: o.on_payload.clone(),
            on_response: o.on_response.clone(),
            thinking_budgets: o.thinking_budgets,
            max_retry_delay_ms: o.max_retry_delay_ms,
            reasoning: thinking.reasoning(),
            ..Default::default()
        };
        let skip = Arc::new(AtomicBool::new(skip_initial_steering_poll));
        let steering: MessageSourceFn = {
            let agent = self.clone();
            Arc::new(move || {
                if skip.swap(false, Ordering::SeqCst) {
                    return Vec::new();
                }
                agent.drain_steering()
            })
        };
        let follow_up: MessageSourceFn = {
            let agent = self.clone();
            Arc::new(move || agent.drain_follow_up())
        };
        let prepare_next_turn: Option<PrepareNextTurnFn> = match (
            o.prepare_next_turn_with_context.clone(),
            o.prepare_next_turn.clone(),
        ) {
            (Some(with_ctx), _) => Some(with_ctx),
            (None, Some(plain)) => Some(Arc::new(move |_, sig| plain(sig))),
            (None, None) => None,
        };
        let config = AgentLoopConfig {
            model,
            options,
            convert_to_llm: o.convert_to_llm.clone(),
            transform_context: o.transform_context.clone(),
            get_api_key: o.get_api_key.clone(),
            should_stop_after_turn: o.should_stop_after_turn.clone(),
            prepare_next_turn,
            get_steering_messages: Some(steering),
            get_follow_up_messages: Some(follow_up),
            tool_execution: o.tool_execution,
            before_tool_call: o.before_tool_call.clone(),
            after_tool_call: o.after_tool_call.clone(),
        };
        let sink: Arc<dyn EventSink> = Arc::new(AgentSink {
            inner: Arc::clone(&self.inner),
            signal: Arc::new(token.clone()),
        });
        (context, config, sink, o.stream_fn)
    }

    /// Awaits the loop; on failure delivers the synthesized failure sequence. The guard
    /// (dropped last) clears the run.
    async fn run_with_lifecycle(
        &self,
        guard: RunGuard,
        token: CancellationToken,
        sink: Arc<dyn EventSink>,
        run: impl Future<Output = Result<Vec<AgentMessage>, HookError>>,
    ) -> Result<(), AgentError> {
        let failure = match AssertUnwindSafe(run).catch_unwind().await {
            Ok(Ok(_)) => None,
            Ok(Err(e)) => Some(e.0),
            Err(panic) => Some(panic_message(panic)),
        };
        let outcome = match failure {
            None => Ok(()),
            Some(error) => self
                .deliver_failure(&token, sink.as_ref(), error)
                .await
                .map_err(AgentError::Run),
        };
        drop(guard);
        outcome
    }

    async fn deliver_failure(
        &self,
        token: &CancellationToken,
        sink: &dyn EventSink,
        error: String,
    ) -> Result<(), HookError> {
        let model = self.with_state(|s| s.model.clone());
        let failure = Arc::new(state::failure_message(&model, token.is_cancelled(), error));
        let as_agent = AgentMessage::Assistant(Arc::clone(&failure));
        let deliver = async {
            sink.emit(AgentEvent::MessageStart {
                message: as_agent.clone(),
            })
            .await?;
            sink.emit(AgentEvent::MessageEnd {
                message: as_agent.clone(),
            })
            .await?;
            sink.emit(AgentEvent::TurnEnd {
                message: failure,
                tool_results: Vec::new(),
            })
            .await?;
            sink.emit(AgentEvent::AgentEnd {
                messages: vec![as_agent],
            })
            .await
        };
        match AssertUnwindSafe(deliver).catch_unwind().await {
            Ok(r) => r,
            Err(p) => Err(HookError(panic_message(p))),
        }
    }
}
