//! # pi-ai
//!
//! One streaming interface over LLM providers — the Rust port of pi-ai 0.85.1.
//!
//! Wire protocols (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses, Google
//! Gemini) arrive as SSE and leave as typed [`AssistantMessageEvent`]s and a final
//! [`AssistantMessage`] (text, thinking, tool calls, usage, cost, stop reason).
//!
//! Layout: [`types`] (the data model), [`event`] and [`stream`] (the event protocol),
//! [`sse`] (our SSE parser), [`json`] (JavaScript number spelling), [`providers`] (wire APIs);
//! shared by the wire APIs: [`partial_json`] (streamed tool arguments), [`transform`]
//! (request-side message normalization), [`overflow`] and [`retryable`] (error classification).
//!
//! Examples that run offline (`cargo run -p pi-ai --example …`): `stream_events` (a reply
//! streamed from the faux provider, event by event), `tool_call` (a tool-call round trip with
//! schema validation), `custom_provider` (an [`providers::registry::ApiProvider`] registered at
//! run time).
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod auth;
pub mod error;
pub mod event;
mod event_queue;
pub mod js_json_error;
mod js_regex;
pub mod json;
pub mod json_depth;
pub mod models;
pub mod overflow;
pub mod partial_json;
pub mod providers;
pub mod retryable;
pub mod sse;
pub mod stream;
mod sync;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod transform;
pub mod types;
pub mod validation;

pub use error::{Error, Result};
pub use event::{AssistantMessageEvent, JsonProjection, PartialMessage};
pub use stream::{AssistantMessageEventStream, EventSink, event_channel};
pub use types::*;
