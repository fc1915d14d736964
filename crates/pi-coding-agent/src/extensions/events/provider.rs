//! Request-level events: the provider hooks and the tool hooks.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/extensions/types.ts` and the hook wiring of
//! `core/agent-session.ts` / `core/sdk.ts`.

use pi_ai::{Usage, UserContent};
use serde::Serialize;
use serde_json::Value;

use super::{ExtensionEvent, observer_events};

/// `before_provider_headers {headers}`: once per request; handlers mutate `headers` in place.
///
/// A `None` value deletes the header (pi: assigning `null`); the runner returns the mutated
/// list, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BeforeProviderHeadersEvent {
    /// Header names with values; `None` deletes a default header.
    pub headers: Vec<(String, Option<String>)>,
}

impl BeforeProviderHeadersEvent {
    /// Sets (or replaces, case-insensitively) header `name`.
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        self.put(name, Some(value.into()));
    }

    /// Marks header `name` deleted (pi: `headers[name] = null`).
    pub fn delete(&mut self, name: &str) {
        self.put(name, None);
    }

    /// The current value of `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| v.as_deref())
    }

    fn put(&mut self, name: &str, value: Option<String>) {
        match self
            .headers
            .iter_mut()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
        {
            Some(slot) => slot.1 = value,
            None => self.headers.push((name.to_owned(), value)),
        }
    }
}

/// `before_provider_request {payload}`: the serialized request body.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BeforeProviderRequestEvent {
    /// The (chained) payload.
    pub payload: Value,
}

impl ExtensionEvent for BeforeProviderRequestEvent {
    const NAME: &'static str = "before_provider_request";
    /// Any returned value replaces the payload (chained).
    type Output = Value;
}

/// `after_provider_response {status, headers}`: before the body is read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AfterProviderResponseEvent {
    /// HTTP status.
    pub status: u16,
    /// Lower-cased header names and values, in arrival order.
    pub headers: Vec<(String, String)>,
}

/// `tool_call {toolCallId, toolName, input}`: after `tool_execution_start` and validation.
///
/// `input` is mutable: a handler's change is seen by later handlers and by the tool, and it
/// is not revalidated.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallEvent {
    /// Provider call id.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// The validated arguments.
    pub input: Value,
}

/// `{block, reason?, terminate?}`: the first `block` wins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolCallResult {
    /// Do not run the tool; its result is the error text `reason` (default
    /// `Tool execution was blocked`).
    pub block: bool,
    /// The error text.
    pub reason: Option<String>,
    /// Stop the agent after the batch (only when every result of it terminates).
    pub terminate: Option<bool>,
}

impl ToolCallResult {
    /// `{block: true, reason}`.
    pub fn block(reason: impl Into<String>) -> Self {
        ToolCallResult {
            block: true,
            reason: Some(reason.into()),
            terminate: None,
        }
    }
}

impl ExtensionEvent for ToolCallEvent {
    const NAME: &'static str = "tool_call";
    type Output = ToolCallResult;
}

/// `tool_result {toolCallId, toolName, input, content, details, isError, usage?}`: before
/// `tool_execution_end`; the fields are the chained values.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultEvent {
    /// Provider call id.
    pub tool_call_id: String,
    /// Tool name.
    pub tool_name: String,
    /// The arguments the tool ran with.
    pub input: Value,
    /// The result content.
    pub content: Vec<UserContent>,
    /// The result details.
    pub details: Option<Value>,
    /// Whether it failed.
    pub is_error: bool,
    /// Usage the tool incurred.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// A partial patch `{content?, details?, isError?, usage?}` (chained; `None` keeps a field).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolResultPatch {
    /// Replacement content.
    pub content: Option<Vec<UserContent>>,
    /// Replacement details.
    pub details: Option<Value>,
    /// Replacement error flag.
    pub is_error: Option<bool>,
    /// Replacement usage.
    pub usage: Option<Usage>,
}

impl ExtensionEvent for ToolResultEvent {
    const NAME: &'static str = "tool_result";
    type Output = ToolResultPatch;
}

observer_events! {
    BeforeProviderHeadersEvent => "before_provider_headers",
    AfterProviderResponseEvent => "after_provider_response",
}
