//! Session records: the header line and the entries of a JSONL v3 session file.
//!
//! Mirrors pi-coding-agent 0.85.0 `session-manager` records. Entries are written
//! in pi's key order (`type, id, parentId, timestamp, <fields>`; `custom` and `custom_message`
//! put `type` and their own fields first and `id, parentId, timestamp` last). Unknown entry
//! types and unknown fields are kept and written back unchanged, so files from a newer TS pi
//! survive a round trip.

use pi_agent_core::AgentMessage;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// The current session file version.
pub const SESSION_VERSION: u64 = 3;

/// Line 1 of a session file:
/// `{"type":"session","version":3,"id","timestamp","cwd","parentSession"?}`.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionHeader {
    /// File format version (3).
    pub version: u64,
    /// Session id (UUIDv7 or an explicit id).
    pub id: String,
    /// ISO-8601 creation time.
    pub timestamp: String,
    /// Working directory of the session.
    pub cwd: String,
    /// The file this session was forked from.
    pub parent_session: Option<String>,
    /// Unknown fields, kept in order.
    pub extra: Map<String, Value>,
}

impl Serialize for SessionHeader {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", "session")?;
        m.serialize_entry("version", &self.version)?;
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("timestamp", &self.timestamp)?;
        m.serialize_entry("cwd", &self.cwd)?;
        if let Some(p) = &self.parent_session {
            m.serialize_entry("parentSession", p)?;
        }
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl SessionHeader {
    /// Parses a header object; `None` unless `type == "session"` and `id` is a string.
    pub fn from_map(mut map: Map<String, Value>) -> Option<Self> {
        if map.get("type").and_then(Value::as_str) != Some("session") {
            return None;
        }
        let id = map.get("id")?.as_str()?.to_owned();
        map.shift_remove("type");
        map.shift_remove("id");
        let version = map
            .shift_remove("version")
            .and_then(|v| v.as_u64())
            .unwrap_or(1);
        let timestamp = take_string(&mut map, "timestamp").unwrap_or_default();
        let cwd = take_string(&mut map, "cwd").unwrap_or_default();
        let parent_session = take_string(&mut map, "parentSession");
        Some(SessionHeader {
            version,
            id,
            timestamp,
            cwd,
            parent_session,
            extra: map,
        })
    }
}

/// What an entry records. Field names follow pi's JSON.
// Most entries are messages; boxing them would add an allocation per entry.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum EntryKind {
    /// `message`: a stored agent message (user, assistant, toolResult, bashExecution, custom…).
    Message {
        /// The message.
        message: AgentMessage,
    },
    /// `thinking_level_change`.
    ThinkingLevelChange {
        /// `off`, `minimal`, … .
        thinking_level: String,
    },
    /// `model_change`.
    ModelChange {
        /// Provider id.
        provider: String,
        /// Model id.
        model_id: String,
    },
    /// `compaction`: everything before `first_kept_entry_id` is replaced by `summary`.
    Compaction {
        /// The summary text.
        summary: String,
        /// First entry kept verbatim.
        first_kept_entry_id: String,
        /// Context tokens before compaction.
        tokens_before: u64,
        /// Extra data (file lists, …).
        details: Option<Value>,
        /// Usage of the summarization call.
        usage: Option<Value>,
        /// Whether an extension supplied the summary.
        from_hook: Option<bool>,
    },
    /// `branch_summary`: a summary of the branch the leaf came back from.
    BranchSummary {
        /// The entry the branch left from (`root` for the root).
        from_id: String,
        /// The summary text.
        summary: String,
        /// Extra data.
        details: Option<Value>,
        /// Usage of the summarization call.
        usage: Option<Value>,
        /// Whether an extension supplied the summary.
        from_hook: Option<bool>,
    },
    /// `custom`: extension data, not part of the context.
    Custom {
        /// The extension's type tag.
        custom_type: String,
        /// Payload.
        data: Option<Value>,
    },
    /// `custom_message`: an extension message that is part of the context.
    CustomMessage {
        /// The extension's type tag.
        custom_type: String,
        /// String or content blocks.
        content: Value,
        /// Whether UIs show it.
        display: bool,
        /// Extra data.
        details: Option<Value>,
    },
    /// `label`: sets (or clears, when `None`/empty) the label of `target_id`.
    Label {
        /// The labelled entry.
        target_id: String,
        /// The label.
        label: Option<String>,
    },
    /// `session_info`: sets (or clears) the session name.
    SessionInfo {
        /// The name.
        name: Option<String>,
    },
    /// An entry type this version does not know; kept verbatim.
    Unknown {
        /// Its `type`.
        kind: String,
    },
}

/// An entry's `type` without its data: pi's nine kinds, and [`EntryType::Other`] for a type
/// this version does not know (such entries are kept and written back verbatim, so a file of
/// a newer pi survives). The session index keeps one per entry, so code that only needs the
/// kind (context rebuild, statistics, the tree) compares enums and never reads the record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EntryType {
    /// `message`.
    Message,
    /// `thinking_level_change`.
    ThinkingLevelChange,
    /// `model_change`.
    ModelChange,
    /// `compaction`.
    Compaction,
    /// `branch_summary`.
    BranchSummary,
    /// `custom`.
    Custom,
    /// `custom_message`.
    CustomMessage,
    /// `label`.
    Label,
    /// `session_info`.
    SessionInfo,
    /// Any other `type`, as written.
    Other(Box<str>),
}

impl EntryType {
    /// The kind of a `type` string.
    pub fn parse(name: &str) -> Self {
        match name {
            "message" => EntryType::Message,
            "thinking_level_change" => EntryType::ThinkingLevelChange,
            "model_change" => EntryType::ModelChange,
            "compaction" => EntryType::Compaction,
            "branch_summary" => EntryType::BranchSummary,
            "custom" => EntryType::Custom,
            "custom_message" => EntryType::CustomMessage,
            "label" => EntryType::Label,
            "session_info" => EntryType::SessionInfo,
            other => EntryType::Other(other.into()),
        }
    }

    /// pi's `type` string.
    pub fn as_str(&self) -> &str {
        match self {
            EntryType::Message => "message",
            EntryType::ThinkingLevelChange => "thinking_level_change",
            EntryType::ModelChange => "model_change",
            EntryType::Compaction => "compaction",
            EntryType::BranchSummary => "branch_summary",
            EntryType::Custom => "custom",
            EntryType::CustomMessage => "custom_message",
            EntryType::Label => "label",
            EntryType::SessionInfo => "session_info",
            EntryType::Other(name) => name,
        }
    }
}

impl EntryKind {
    /// The field-less kind of this entry.
    pub fn entry_type(&self) -> EntryType {
        match self {
            EntryKind::Message { .. } => EntryType::Message,
            EntryKind::ThinkingLevelChange { .. } => EntryType::ThinkingLevelChange,
            EntryKind::ModelChange { .. } => EntryType::ModelChange,
            EntryKind::Compaction { .. } => EntryType::Compaction,
            EntryKind::BranchSummary { .. } => EntryType::BranchSummary,
            EntryKind::Custom { .. } => EntryType::Custom,
            EntryKind::CustomMessage { .. } => EntryType::CustomMessage,
            EntryKind::Label { .. } => EntryType::Label,
            EntryKind::SessionInfo { .. } => EntryType::SessionInfo,
            EntryKind::Unknown { kind } => EntryType::Other(kind.as_str().into()),
        }
    }

    /// pi's `type` string.
    pub fn type_name(&self) -> &str {
        match self {
            EntryKind::Message { .. } => "message",
            EntryKind::ThinkingLevelChange { .. } => "thinking_level_change",
            EntryKind::ModelChange { .. } => "model_change",
            EntryKind::Compaction { .. } => "compaction",
            EntryKind::BranchSummary { .. } => "branch_summary",
            EntryKind::Custom { .. } => "custom",
            EntryKind::CustomMessage { .. } => "custom_message",
            EntryKind::Label { .. } => "label",
            EntryKind::SessionInfo { .. } => "session_info",
            EntryKind::Unknown { kind } => kind,
        }
    }
}

/// One entry of the session tree: `{type, id, parentId, timestamp, …}`.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionEntry {
    /// 8-hex-digit id (or a full UUID after 100 collisions).
    pub id: String,
    /// Parent entry; `None` for a root (written as `null`).
    pub parent_id: Option<String>,
    /// ISO-8601 time.
    pub timestamp: String,
    /// The record.
    pub kind: EntryKind,
    /// Unknown fields, kept in order.
    pub extra: Map<String, Value>,
}

fn take_string(map: &mut Map<String, Value>, key: &str) -> Option<String> {
    match map.shift_remove(key) {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// Why a line is not an entry.
#[derive(Debug, PartialEq, Eq)]
pub enum EntryParseError {
    /// Not JSON (torn or corrupt line).
    Json(String),
    /// JSON, but not an entry object (no `type` or `id`, or a bad field).
    Shape(String),
}

impl SessionEntry {
    /// Parses one entry line.
    pub fn parse(line: &str) -> Result<SessionEntry, EntryParseError> {
        // Lines as deep as pi writes them (tool arguments 1,000 levels deep) parse.
        let map: Map<String, Value> =
            pi_ai::json_depth::from_str(line, pi_ai::json_depth::MAX_DOCUMENT_DEPTH)
                .map_err(|e| EntryParseError::Json(e.to_string()))?;
        Self::from_map(map)
    }

    /// Builds an entry from a parsed object.
    pub fn from_map(mut map: Map<String, Value>) -> Result<SessionEntry, EntryParseError> {
        let shape = |m: &str| EntryParseError::Shape(m.to_owned());
        let kind_name = take_string(&mut map, "type").ok_or_else(|| shape("entry without type"))?;
        let id = take_string(&mut map, "id").ok_or_else(|| shape("entry without id"))?;
        let parent_id = take_string(&mut map, "parentId");
        map.shift_remove("parentId");
        let timestamp = take_string(&mut map, "timestamp").unwrap_or_default();
        let opt = |map: &mut Map<String, Value>, k: &str| map.shift_remove(k);
        let kind = match kind_name.as_str() {
            "message" => {
                let mut msg = map
                    .shift_remove("message")
                    .ok_or_else(|| shape("message entry without message"))?;
                if let Some(obj) = msg.as_object_mut()
                    && obj.get("content").is_some_and(Value::is_null)
                {
                    obj.insert("content".into(), Value::Array(Vec::new()));
                }
                let message: AgentMessage = serde_json::from_value(msg)
                    .map_err(|e| EntryParseError::Shape(format!("invalid message: {e}")))?;
                EntryKind::Message { message }
            }
            "thinking_level_change" => EntryKind::ThinkingLevelChange {
                thinking_level: take_string(&mut map, "thinkingLevel")
                    .unwrap_or_else(|| "off".into()),
            },
            "model_change" => EntryKind::ModelChange {
                provider: take_string(&mut map, "provider").unwrap_or_default(),
                model_id: take_string(&mut map, "modelId").unwrap_or_default(),
            },
            "compaction" => EntryKind::Compaction {
                summary: take_string(&mut map, "summary").unwrap_or_default(),
                first_kept_entry_id: take_string(&mut map, "firstKeptEntryId").unwrap_or_default(),
                tokens_before: map
                    .shift_remove("tokensBefore")
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0),
                details: opt(&mut map, "details"),
                usage: opt(&mut map, "usage"),
                from_hook: map.shift_remove("fromHook").and_then(|v| v.as_bool()),
            },
            "branch_summary" => EntryKind::BranchSummary {
                from_id: take_string(&mut map, "fromId").unwrap_or_default(),
                summary: take_string(&mut map, "summary").unwrap_or_default(),
                details: opt(&mut map, "details"),
                usage: opt(&mut map, "usage"),
                from_hook: map.shift_remove("fromHook").and_then(|v| v.as_bool()),
            },
            "custom" => EntryKind::Custom {
                custom_type: take_string(&mut map, "customType").unwrap_or_default(),
                data: opt(&mut map, "data"),
            },
            "custom_message" => EntryKind::CustomMessage {
                custom_type: take_string(&mut map, "customType").unwrap_or_default(),
                content: map
                    .shift_remove("content")
                    .unwrap_or(Value::Array(Vec::new())),
                display: map
                    .shift_remove("display")
                    .and_then(|v| v.as_bool())
                    .unwrap_or(false),
                details: opt(&mut map, "details"),
            },
            "label" => EntryKind::Label {
                target_id: take_string(&mut map, "targetId").unwrap_or_default(),
                label: take_string(&mut map, "label"),
            },
            "session_info" => EntryKind::SessionInfo {
                name: take_string(&mut map, "name"),
            },
            other => EntryKind::Unknown {
                kind: other.to_owned(),
            },
        };
        Ok(SessionEntry {
            id,
            parent_id,
            timestamp,
            kind,
            extra: map,
        })
    }

    /// Keeps a line that is a JSON object with string `type` and `id` but whose fields do not
    /// fit its type (e.g. a `message` entry whose message is invalid) verbatim, as an
    /// [`EntryKind::Unknown`] of the same `type`: it stays in the tree and is written back
    /// unchanged, and the context skips it. `None` when the line is not such an object.
    pub fn verbatim(line: &str) -> Option<SessionEntry> {
        let mut map: Map<String, Value> =
            pi_ai::json_depth::from_str(line, pi_ai::json_depth::MAX_DOCUMENT_DEPTH).ok()?;
        let kind = take_string(&mut map, "type")?;
        let id = take_string(&mut map, "id")?;
        let parent_id = take_string(&mut map, "parentId");
        map.shift_remove("parentId");
        let timestamp = take_string(&mut map, "timestamp").unwrap_or_default();
        Some(SessionEntry {
            id,
            parent_id,
            timestamp,
            kind: EntryKind::Unknown { kind },
            extra: map,
        })
    }

    /// The stored message, for `message` entries.
    pub fn message(&self) -> Option<&AgentMessage> {
        match &self.kind {
            EntryKind::Message { message } => Some(message),
            _ => None,
        }
    }

    /// Serializes to one compact JSON line (no trailing newline), numbers as JavaScript
    /// writes them.
    pub fn to_line(&self) -> String {
        pi_ai::json::to_string(self).unwrap_or_default()
    }
}

impl Serialize for SessionEntry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", self.kind.type_name())?;
        let ids_last = matches!(
            self.kind,
            EntryKind::Custom { .. } | EntryKind::CustomMessage { .. }
        );
        if !ids_last {
            m.serialize_entry("id", &self.id)?;
            m.serialize_entry("parentId", &self.parent_id)?;
            m.serialize_entry("timestamp", &self.timestamp)?;
        }
        match &self.kind {
            EntryKind::Message { message } => m.serialize_entry("message", message)?,
            EntryKind::ThinkingLevelChange { thinking_level } => {
                m.serialize_entry("thinkingLevel", thinking_level)?
            }
            EntryKind::ModelChange { provider, model_id } => {
                m.serialize_entry("provider", provider)?;
                m.serialize_entry("modelId", model_id)?;
            }
            EntryKind::Compaction {
                summary,
                first_kept_entry_id,
                tokens_before,
                details,
                usage,
                from_hook,
            } => {
                m.serialize_entry("summary", summary)?;
                m.serialize_entry("firstKeptEntryId", first_kept_entry_id)?;
                m.serialize_entry("tokensBefore", tokens_before)?;
                if let Some(d) = details {
                    m.serialize_entry("details", d)?;
                }
                if let Some(u) = usage {
                    m.serialize_entry("usage", u)?;
                }
                if let Some(f) = from_hook {
                    m.serialize_entry("fromHook", f)?;
                }
            }
            EntryKind::BranchSummary {
                from_id,
                summary,
                details,
                usage,
                from_hook,
            } => {
                m.serialize_entry("fromId", from_id)?;
                m.serialize_entry("summary", summary)?;
                if let Some(d) = details {
                    m.serialize_entry("details", d)?;
                }
                if let Some(u) = usage {
                    m.serialize_entry("usage", u)?;
                }
                if let Some(f) = from_hook {
                    m.serialize_entry("fromHook", f)?;
                }
            }
            EntryKind::Custom { custom_type, data } => {
                m.serialize_entry("customType", custom_type)?;
                if let Some(d) = data {
                    m.serialize_entry("data", d)?;
                }
            }
            EntryKind::CustomMessage {
                custom_type,
                content,
                display,
                details,
            } => {
                m.serialize_entry("customType", custom_type)?;
                m.serialize_entry("content", content)?;
                m.serialize_entry("display", display)?;
                if let Some(d) = details {
                    m.serialize_entry("details", d)?;
                }
            }
            EntryKind::Label { target_id, label } => {
                m.serialize_entry("targetId", target_id)?;
                if let Some(l) = label {
                    m.serialize_entry("label", l)?;
                }
            }
            EntryKind::SessionInfo { name } => {
                if let Some(n) = name {
                    m.serialize_entry("name", n)?;
                }
            }
            EntryKind::Unknown { .. } => {}
        }
        for (k, v) in &self.extra {
            m.serialize_entry(k, v)?;
        }
        if ids_last {
            m.serialize_entry("id", &self.id)?;
            m.serialize_entry("parentId", &self.parent_id)?;
            m.serialize_entry("timestamp", &self.timestamp)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod depth_tests {
    use super::*;

    /// A `message` line as the TypeScript pi writes it for a tool call whose arguments nest
    /// 1,000 levels: it parses and writes back byte for byte; past the document limit the
    /// line is a parse error (the store skips it with a warning).
    #[test]
    fn lines_with_arguments_1000_levels_deep_load_and_round_trip() {
        let args = format!("{{\"deep\":{}1{}}}", "{\"a\":".repeat(999), "}".repeat(999));
        let line = format!(
            r#"{{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"call_1","name":"read","arguments":{args}}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"toolUse","timestamp":1}}}}"#
        );
        let run = move || {
            let entry = SessionEntry::parse(&line).unwrap();
            assert!(entry.message().is_some());
            assert_eq!(entry.to_line(), line);
            let limit = pi_ai::json_depth::MAX_DOCUMENT_DEPTH;
            let deep = format!(
                r#"{{"type":"custom","id":"x","parentId":null,"data":{}1{}}}"#,
                "[".repeat(limit),
                "]".repeat(limit)
            );
            assert!(matches!(
                SessionEntry::parse(&deep),
                Err(EntryParseError::Json(e)) if e == "JSON nested deeper than 1064 levels"
            ));
        };
        // The test thread's default stack is 2 MiB; the entry is cloned and compared
        // recursively on top of the harness's frames.
        std::thread::Builder::new()
            .stack_size(8 * 1024 * 1024)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
    }
}
