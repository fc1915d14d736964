//! Agent messages: pi-ai messages plus app-defined custom messages.
//!
//! Mirrors pi-agent-core 0.85.1 `AgentMessage` (`Message` ∪ custom messages with a `role`).
//! Custom messages reach the model only if `convert_to_llm` maps them.

use pi_ai::Message;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A message in the agent's transcript.
// Most messages are LLM messages; boxing them would add an indirection on the hot path.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum AgentMessage {
    /// A user, assistant or tool-result message.
    Llm(Message),
    /// An app-defined message: a JSON object with a `role` other than `user`, `assistant`,
    /// `toolResult` (e.g. the coding agent's `bashExecution`, `custom`, `branchSummary`).
    Custom(Map<String, Value>),
}

impl AgentMessage {
    /// The `role` string.
    pub fn role(&self) -> &str {
        match self {
            AgentMessage::Llm(m) => m.role(),
            AgentMessage::Custom(m) => m.get("role").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The pi-ai message, if this is one.
    pub fn as_llm(&self) -> Option<&Message> {
        match self {
            AgentMessage::Llm(m) => Some(m),
            AgentMessage::Custom(_) => None,
        }
    }
}

impl From<Message> for AgentMessage {
    fn from(m: Message) -> Self {
        AgentMessage::Llm(m)
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AgentMessage::Llm(m) => m.serialize(s),
            AgentMessage::Custom(m) => m.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(d)?;
        match map.get("role").and_then(Value::as_str) {
            Some("user" | "assistant" | "toolResult") => serde_json::from_value(Value::Object(map))
                .map(AgentMessage::Llm)
                .map_err(serde::de::Error::custom),
            Some(_) => Ok(AgentMessage::Custom(map)),
            None => Err(serde::de::Error::custom("message without a role")),
        }
    }
}
