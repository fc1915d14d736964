//! Content blocks: text, thinking, image and tool call.
//!
//! Mirrors pi-ai 0.85.1 `types.ts` (`TextContent`, `ThinkingContent`, `ImageContent`, `ToolCall`).
//! JSON uses pi's exact field names and key order (`type` first).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A text block: `{"type":"text","text":…,"textSignature"?:…}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Opaque replay data (OpenAI Responses item JSON, Google thought signature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<String>,
}

impl TextContent {
    /// A text block without a signature.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            text_signature: None,
        }
    }
}

/// A thinking block: `{"type":"thinking","thinking":…,"thinkingSignature"?:…,"redacted"?:…}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    /// The visible reasoning text (`[Reasoning redacted]` for redacted blocks).
    pub thinking: String,
    /// Per-API replay signature (Anthropic signature, Responses item JSON, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    /// `true` when the payload is encrypted in the signature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<bool>,
}

/// An image block: `{"type":"image","data":<base64>,"mimeType":…}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64-encoded bytes.
    pub data: String,
    /// MIME type such as `image/png`.
    pub mime_type: String,
}

/// A tool call requested by the model:
/// `{"type":"toolCall","id":…,"name":…,"arguments":{…},"thoughtSignature"?,"namespace"?}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Provider tool-call id (Responses: `<call_id>|<item_id>`).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Parsed arguments; always an object (`{}` when nothing parsed).
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// Google thought signature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
    /// OpenAI Responses namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Why the call must not be executed although it names a tool: its streamed arguments were
    /// not exactly one JSON object, or nested deeper than the limit (`arguments` then holds
    /// pi's lenient reading, or `{}` past the depth limit). The agent loop answers such a call
    /// with an error tool result. Set by the wire mappers; not part of pi's JSON, never
    /// written or read.
    #[serde(skip)]
    pub arguments_error: Option<crate::partial_json::FinishError>,
}

/// A block of a user message or a tool result: text or image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum UserContent {
    /// `type: "text"`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `type: "image"`.
    #[serde(rename = "image")]
    Image(ImageContent),
}

impl UserContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        UserContent::Text(TextContent::new(text))
    }
    /// The text when this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            UserContent::Text(t) => Some(&t.text),
            UserContent::Image(_) => None,
        }
    }
}

/// A block of an assistant message: text, thinking or tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum AssistantContent {
    /// `type: "text"`.
    #[serde(rename = "text")]
    Text(TextContent),
    /// `type: "thinking"`.
    #[serde(rename = "thinking")]
    Thinking(ThinkingContent),
    /// `type: "toolCall"`.
    #[serde(rename = "toolCall")]
    ToolCall(ToolCall),
}

impl AssistantContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        AssistantContent::Text(TextContent::new(text))
    }
    /// The tool call when this is one.
    pub fn as_tool_call(&self) -> Option<&ToolCall> {
        match self {
            AssistantContent::ToolCall(t) => Some(t),
            _ => None,
        }
    }
}

/// User message content: a plain string or a list of blocks (pi accepts both).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserMessageContent {
    /// A bare string.
    Text(String),
    /// A list of text/image blocks.
    Blocks(Vec<UserContent>),
}

impl Default for UserMessageContent {
    fn default() -> Self {
        UserMessageContent::Blocks(Vec::new())
    }
}

impl UserMessageContent {
    /// The content as blocks (a bare string becomes one text block).
    pub fn to_blocks(&self) -> Vec<UserContent> {
        match self {
            UserMessageContent::Text(s) => vec![UserContent::text(s.clone())],
            UserMessageContent::Blocks(b) => b.clone(),
        }
    }
}
