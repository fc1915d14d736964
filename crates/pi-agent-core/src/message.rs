//! Agent messages: pi-ai messages plus app-defined custom messages.
//!
//! Mirrors pi-agent-core 0.85.1 `AgentMessage` (`Message` ∪ custom messages with a `role`).
//! Custom messages reach the model only if `convert_to_llm` maps them.
//!
//! A message is shared, not copied: each variant holds its payload behind an [`Arc`], so the
//! transcript, the loop's context, the run's new messages and every event that carries the
//! message hold one allocation (a finished answer can be megabytes). Changing a message is
//! copy-on-write ([`Arc::make_mut`], or the `*_mut` accessors), as pi's hooks replace messages
//! rather than edit the ones other holders see.

use std::sync::Arc;

use pi_ai::{AssistantMessage, Message, ToolResultMessage, UserMessage};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A message in the agent's transcript. Cloning is O(1): the payload is shared.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentMessage {
    /// `role: "user"`.
    User(Arc<UserMessage>),
    /// `role: "assistant"`.
    Assistant(Arc<AssistantMessage>),
    /// `role: "toolResult"`.
    ToolResult(Arc<ToolResultMessage>),
    /// An app-defined message: a JSON object with a `role` other than `user`, `assistant`,
    /// `toolResult` (e.g. the coding agent's `bashExecution`, `custom`, `branchSummary`).
    Custom(Arc<Map<String, Value>>),
}

impl AgentMessage {
    /// An app-defined message from its JSON object.
    pub fn custom(map: Map<String, Value>) -> Self {
        AgentMessage::Custom(Arc::new(map))
    }

    /// The `role` string.
    pub fn role(&self) -> &str {
        match self {
            AgentMessage::User(_) => "user",
            AgentMessage::Assistant(_) => "assistant",
            AgentMessage::ToolResult(_) => "toolResult",
            AgentMessage::Custom(m) => m.get("role").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// Whether this is a user, assistant or tool-result message (one the model understands).
    pub fn is_llm(&self) -> bool {
        !matches!(self, AgentMessage::Custom(_))
    }

    /// A copy as a pi-ai message, if this is one (what a request sends).
    pub fn to_llm(&self) -> Option<Message> {
        match self {
            AgentMessage::User(m) => Some(Message::User((**m).clone())),
            AgentMessage::Assistant(m) => Some(Message::Assistant((**m).clone())),
            AgentMessage::ToolResult(m) => Some(Message::ToolResult((**m).clone())),
            AgentMessage::Custom(_) => None,
        }
    }

    /// The user message, if this is one.
    pub fn as_user(&self) -> Option<&UserMessage> {
        match self {
            AgentMessage::User(m) => Some(m),
            _ => None,
        }
    }

    /// The assistant message, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            AgentMessage::Assistant(m) => Some(m),
            _ => None,
        }
    }

    /// The tool result, if this is one.
    pub fn as_tool_result(&self) -> Option<&ToolResultMessage> {
        match self {
            AgentMessage::ToolResult(m) => Some(m),
            _ => None,
        }
    }

    /// The custom message's JSON object, if this is one.
    pub fn as_custom(&self) -> Option<&Map<String, Value>> {
        match self {
            AgentMessage::Custom(m) => Some(m),
            _ => None,
        }
    }

    /// The assistant message for changing, copied first if another holder shares it.
    pub fn assistant_mut(&mut self) -> Option<&mut AssistantMessage> {
        match self {
            AgentMessage::Assistant(m) => Some(Arc::make_mut(m)),
            _ => None,
        }
    }

    /// The custom message's object for changing, copied first if another holder shares it.
    pub fn custom_mut(&mut self) -> Option<&mut Map<String, Value>> {
        match self {
            AgentMessage::Custom(m) => Some(Arc::make_mut(m)),
            _ => None,
        }
    }

    /// Whether `self` and `other` are the same allocation (not just equal).
    pub fn ptr_eq(&self, other: &AgentMessage) -> bool {
        match (self, other) {
            (AgentMessage::User(a), AgentMessage::User(b)) => Arc::ptr_eq(a, b),
            (AgentMessage::Assistant(a), AgentMessage::Assistant(b)) => Arc::ptr_eq(a, b),
            (AgentMessage::ToolResult(a), AgentMessage::ToolResult(b)) => Arc::ptr_eq(a, b),
            (AgentMessage::Custom(a), AgentMessage::Custom(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl From<Message> for AgentMessage {
    fn from(m: Message) -> Self {
        match m {
            Message::User(m) => AgentMessage::User(Arc::new(m)),
            Message::Assistant(m) => AgentMessage::Assistant(Arc::new(m)),
            Message::ToolResult(m) => AgentMessage::ToolResult(Arc::new(m)),
        }
    }
}

impl From<UserMessage> for AgentMessage {
    fn from(m: UserMessage) -> Self {
        AgentMessage::User(Arc::new(m))
    }
}

impl From<AssistantMessage> for AgentMessage {
    fn from(m: AssistantMessage) -> Self {
        AgentMessage::Assistant(Arc::new(m))
    }
}

impl From<Arc<AssistantMessage>> for AgentMessage {
    fn from(m: Arc<AssistantMessage>) -> Self {
        AgentMessage::Assistant(m)
    }
}

impl From<ToolResultMessage> for AgentMessage {
    fn from(m: ToolResultMessage) -> Self {
        AgentMessage::ToolResult(Arc::new(m))
    }
}

impl From<Arc<ToolResultMessage>> for AgentMessage {
    fn from(m: Arc<ToolResultMessage>) -> Self {
        AgentMessage::ToolResult(m)
    }
}

/// A borrowed pi-ai message: serializes exactly as [`Message`] does (`role` first, then the
/// message's fields), without copying the message.
#[derive(Serialize)]
#[serde(tag = "role")]
enum LlmRef<'a> {
    #[serde(rename = "user")]
    User(&'a UserMessage),
    #[serde(rename = "assistant")]
    Assistant(&'a AssistantMessage),
    #[serde(rename = "toolResult")]
    ToolResult(&'a ToolResultMessage),
}

/// Serializes an assistant message with its `role`, as the pi-ai `Message` it is.
pub(crate) fn serialize_assistant<S: Serializer>(
    m: &AssistantMessage,
    s: S,
) -> Result<S::Ok, S::Error> {
    LlmRef::Assistant(m).serialize(s)
}

/// Serializes a tool result with its `role`, as the pi-ai `Message` it is.
pub(crate) fn serialize_tool_result<S: Serializer>(
    m: &ToolResultMessage,
    s: S,
) -> Result<S::Ok, S::Error> {
    LlmRef::ToolResult(m).serialize(s)
}

impl Serialize for AgentMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AgentMessage::User(m) => LlmRef::User(m).serialize(s),
            AgentMessage::Assistant(m) => LlmRef::Assistant(m).serialize(s),
            AgentMessage::ToolResult(m) => LlmRef::ToolResult(m).serialize(s),
            AgentMessage::Custom(m) => m.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(d)?;
        match map.get("role").and_then(Value::as_str) {
            Some("user" | "assistant" | "toolResult") => {
                serde_json::from_value::<Message>(Value::Object(map))
                    .map(AgentMessage::from)
                    .map_err(serde::de::Error::custom)
            }
            Some(_) => Ok(AgentMessage::custom(map)),
            None => Err(serde::de::Error::custom("message without a role")),
        }
    }
}
