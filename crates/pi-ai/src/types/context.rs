//! The request context: system prompt, messages and tools.
//!
//! Mirrors pi-ai 0.85.1 `Context` and `Tool`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::message::Message;

/// A tool the model may call: `{name, description, parameters}` (JSON Schema parameters).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Tool name.
    pub name: String,
    /// Description for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
    /// Constrained-sampling request (`{type:"json_schema", strict}` or grammar).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constrained_sampling: Option<Value>,
}

/// `{systemPrompt?, messages, tools?}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    /// System prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Conversation so far.
    pub messages: Vec<Message>,
    /// Tools offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
}
