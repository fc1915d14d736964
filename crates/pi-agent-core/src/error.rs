//! Errors of the agent layer and panic containment for user code.
//!
//! pi's hooks and listeners fail by throwing; the thrown `Error.message` becomes a tool
//! result's text (tool hooks) or the synthesized failure message's `errorMessage` (listeners
//! and loop hooks). Here they return [`HookError`]; a panic
//! inside user code is caught and turned into a [`HookError`] carrying the panic message.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;

/// A failure raised by a hook or a listener (pi: a thrown `Error`); the text is its message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HookError(pub String);

impl HookError {
    /// A failure with this message.
    pub fn new(msg: impl Into<String>) -> Self {
        HookError(msg.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

/// A listener failure (same shape as [`HookError`]).
pub type ListenerError = HookError;

/// Errors returned by [`crate::Agent`]'s entry points, with pi's exact texts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// `prompt()` during a run.
    #[error(
        "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
    )]
    AlreadyProcessingPrompt,
    /// `continue()` during a run.
    #[error("Agent is already processing. Wait for completion before continuing.")]
    AlreadyProcessingContinue,
    /// `reset()` during a run.
    #[error("Agent is already processing. Wait for completion before resetting.")]
    AlreadyProcessingReset,
    /// `continue()` with an empty transcript.
    #[error("No messages to continue from")]
    NoMessagesToContinue,
    /// `continue()` from an assistant tail with empty queues.
    #[error("Cannot continue from message role: assistant")]
    CannotContinueFromAssistant,
    /// The low-level continue entry point with an empty context.
    #[error("Cannot continue: no messages in context")]
    NoMessagesInContext,
    /// A listener failed while the synthesized failure sequence was delivered.
    #[error("{0}")]
    Run(HookError),
}

/// The message of a panic payload (`&str` or `String`), else a generic text.
pub(crate) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_owned()
    }
}

/// Calls `f` (which builds a future) and awaits it, turning a panic in either step into a
/// [`HookError`].
pub(crate) async fn guarded<T, F, Fut>(f: F) -> Result<T, HookError>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, HookError>>,
{
    let fut =
        std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(|p| HookError(panic_message(p)))?;
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(r) => r,
        Err(p) => Err(HookError(panic_message(p))),
    }
}

/// Runs a synchronous hook, turning a panic into a [`HookError`].
pub(crate) fn guarded_sync<T>(f: impl FnOnce() -> T) -> Result<T, HookError> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(|p| HookError(panic_message(p)))
}
