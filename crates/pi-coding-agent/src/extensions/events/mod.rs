//! Every extension event of pi 0.85.0: payloads and result types.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/extensions/types.ts`. Each payload is a plain struct
//! implementing [`ExtensionEvent`], which names pi's `type` string ([`ExtensionEvent::NAME`])
//! and what a handler may return ([`ExtensionEvent::Output`]; `()` for observers, whose
//! return values pi ignores). Field names serialize with pi's camelCase JSON names.
//!
//! | module | events |
//! |---|---|
//! | [`session`] | `project_trust`, `session_start`, `resources_discover`, `session_info_changed`, `session_before_*`, `session_compact`, `session_compact_failed`, `session_shutdown`, `session_tree`, `model_select`, `thinking_level_select`, `user_bash` |
//! | [`agent`] | `input`, `before_agent_start`, the mirrored lifecycle events, `turn_*`, `message_*`, `context`, `tool_execution_*`, `ui_prompt_*` |
//! | [`provider`] | `before_provider_headers`, `before_provider_request`, `after_provider_response`, `tool_call`, `tool_result` |

pub mod agent;
pub mod provider;
pub mod session;

pub use agent::*;
pub use provider::*;
pub use session::*;

/// An extension event: pi's `type` string and the handler result type.
///
/// Handlers are registered per event type with
/// [`ExtensionApi::on`](crate::extensions::ExtensionApi::on); the runner dispatches them in
/// extension load order, then registration order.
pub trait ExtensionEvent: Send + Sync + 'static {
    /// pi's event `type` (`"tool_call"`, …), also the `event` of an error record.
    const NAME: &'static str;
    /// What a handler may return; `()` for observers (pi ignores their return values).
    type Output: Send + 'static;
}

/// Declares observer events (`Output = ()`).
macro_rules! observer_events {
    ($($ty:ty => $name:literal),* $(,)?) => {
        $(impl $crate::extensions::events::ExtensionEvent for $ty {
            const NAME: &'static str = $name;
            type Output = ();
        })*
    };
}
pub(crate) use observer_events;
