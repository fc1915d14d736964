//! # pi-ai
//!
//! One streaming interface over LLM providers — the Rust port of pi-ai 0.85.1.
//!
//! Wire protocols (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses, Google
//! Gemini) arrive as SSE and leave as typed [`AssistantMessageEvent`]s and a final
//! [`AssistantMessage`] (text, thinking, tool calls, usage, cost, stop reason).
//!
//! Layout: [`types`] (the data model), [`event`] and [`stream`] (the event protocol),
//! [`sse`] (our SSE parser), [`json`] (JavaScript number spelling), [`providers`] (wire APIs).
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod env_keys;
pub mod error;
pub mod event;
pub mod json;
pub mod models;
pub mod providers;
pub mod sse;
pub mod stream;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod types;

pub use error::{Error, Result};
pub use event::{AssistantMessageEvent, PartialMessage};
pub use stream::{AssistantMessageEventStream, EventSink, event_channel};
pub use types::*;
