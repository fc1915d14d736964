//! RPC commands: parsing one input record, and the response records.
//!
//! Mirrors pi-coding-agent 0.85.0 `modes/rpc/rpc-mode.js` (`handleInputLine`, `success`,
//! `error`) and `rpc-types.d.ts`:
//! - a record that is not JSON → `{"type":"response","command":"parse","success":false,
//!   "error":"Failed to parse command: <parser message>"}` (no `id`; an empty line too). The
//!   parser message is serde_json's, not V8's.
//! - JSON that is not an object, or an object without `type` → `Unknown command: undefined`
//!   without a `command` key (`id` echoed when the object has one);
//! - a `type` that names no command → `Unknown command: <String(type)>`, `command` = the raw
//!   `type` value (a number, object or `null` is echoed as is, as pi does).
//! - a `null` record is treated like any non-object. (The reference crashes on it: reading
//!   `null.id` throws inside its error handler and Node exits with status 1.)
//! - a known command whose fields do not fit its shape → an error response with serde's
//!   message (the reference passes the bad values on and fails, or not, somewhere later).
//!
//! `id` is echoed verbatim (any JSON value); JSON with `"id"` omitted has no `id` key.

use pi_agent_core::QueueMode;
use pi_ai::ImageContent;

use crate::session::StreamingBehavior;
use serde::Deserialize;
use serde_json::{Map, Value};

/// One command of `rpc-types.d.ts` (`id` and `type` removed).
#[allow(missing_docs)] // the fields are pi's, named in the variant docs
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub(crate) enum RpcCommand {
    /// `{message, images?, streamingBehavior?}`
    Prompt {
        message: String,
        #[serde(default)]
        images: Vec<ImageContent>,
        streaming_behavior: Option<StreamingBehavior>,
    },
    /// `{message, images?}`
    Steer {
        message: String,
        #[serde(default)]
        images: Vec<ImageContent>,
    },
    /// `{message, images?}`
    FollowUp {
        message: String,
        #[serde(default)]
        images: Vec<ImageContent>,
    },
    /// `{}`
    Abort,
    /// `{}`
    ClearQueue,
    /// `{parentSession?}`
    NewSession { parent_session: Option<String> },
    /// `{}`
    GetState,
    /// `{provider, modelId}`
    SetModel { provider: String, model_id: String },
    /// `{}`
    CycleModel,
    /// `{}`
    GetAvailableModels,
    /// `{level}`
    SetThinkingLevel { level: String },
    /// `{}`
    CycleThinkingLevel,
    /// `{}`
    GetAvailableThinkingLevels,
    /// `{mode}`
    SetSteeringMode { mode: QueueMode },
    /// `{mode}`
    SetFollowUpMode { mode: QueueMode },
    /// `{customInstructions?}`
    Compact { custom_instructions: Option<String> },
    /// `{enabled}`
    SetAutoCompaction { enabled: bool },
    /// `{enabled}`
    SetAutoRetry { enabled: bool },
    /// `{}`
    AbortRetry,
    /// `{command, excludeFromContext?}`
    Bash {
        command: String,
        exclude_from_context: Option<bool>,
    },
    /// `{}`
    AbortBash,
    /// `{}`
    GetSessionStats,
    /// `{outputPath?}`
    ExportHtml { output_path: Option<String> },
    /// `{sessionPath}`
    SwitchSession { session_path: String },
    /// `{entryId}`
    Fork { entry_id: String },
    /// `{}`
    Clone,
    /// `{}`
    GetForkMessages,
    /// `{since?}`
    GetEntries { since: Option<String> },
    /// `{}`
    GetTree,
    /// `{}`
    GetLastAssistantText,
    /// `{name}`
    SetSessionName { name: String },
    /// `{}`
    GetMessages,
    /// `{}`
    GetCommands,
}

impl RpcCommand {
    /// Whether the command completes without waiting on anything (queries and setters).
    /// The server runs these in input order as they arrive, so they are answered even when
    /// the input ends right after them; every other command runs as its own task.
    pub(crate) fn is_immediate(&self) -> bool {
        !matches!(
            self,
            RpcCommand::Prompt { .. }
                | RpcCommand::Abort
                | RpcCommand::NewSession { .. }
                | RpcCommand::SwitchSession { .. }
                | RpcCommand::Fork { .. }
                | RpcCommand::Clone
                | RpcCommand::SetModel { .. }
                | RpcCommand::CycleModel
                | RpcCommand::Compact { .. }
                | RpcCommand::Bash { .. }
        )
    }
}

/// Every command name, in `rpc-types.d.ts` order.
pub(crate) const COMMAND_NAMES: &[&str] = &[
    "prompt",
    "steer",
    "follow_up",
    "abort",
    "clear_queue",
    "new_session",
    "get_state",
    "set_model",
    "cycle_model",
    "get_available_models",
    "set_thinking_level",
    "cycle_thinking_level",
    "get_available_thinking_levels",
    "set_steering_mode",
    "set_follow_up_mode",
    "compact",
    "set_auto_compaction",
    "set_auto_retry",
    "abort_retry",
    "bash",
    "abort_bash",
    "get_session_stats",
    "export_html",
    "switch_session",
    "fork",
    "clone",
    "get_fork_messages",
    "get_entries",
    "get_tree",
    "get_last_assistant_text",
    "set_session_name",
    "get_messages",
    "get_commands",
];

/// What one input record is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Incoming {
    /// A command to run; `id` is echoed in its response.
    Command {
        /// The request id (any JSON value), when given.
        id: Option<Value>,
        /// The command name (`type`).
        name: String,
        /// The parsed command.
        command: RpcCommand,
    },
    /// `{"type":"extension_ui_response", id, value|confirmed|cancelled}`.
    UiResponse {
        /// The request id.
        id: Value,
        /// The whole record.
        response: Map<String, Value>,
    },
    /// A bad record: answer it with this response line.
    Invalid(String),
}

/// Parses one input record (see the module docs for every outcome).
pub(crate) fn parse_line(line: &str) -> Incoming {
    let value: Value =
        match pi_ai::json_depth::from_str(line, pi_ai::json_depth::MAX_DOCUMENT_DEPTH) {
            Ok(v) => v,
            Err(e) => {
                return Incoming::Invalid(error_response(
                    None,
                    Some(&Value::from("parse")),
                    &format!("Failed to parse command: {e}"),
                ));
            }
        };
    let Value::Object(mut map) = value else {
        return Incoming::Invalid(error_response(None, None, "Unknown command: undefined"));
    };
    let id = map.get("id").cloned();
    let Some(kind) = map.get("type").cloned() else {
        return Incoming::Invalid(error_response(
            id.as_ref(),
            None,
            "Unknown command: undefined",
        ));
    };
    if kind == "extension_ui_response" {
        return Incoming::UiResponse {
            id: id.unwrap_or(Value::Null),
            response: map,
        };
    }
    let name = match &kind {
        Value::String(s) if COMMAND_NAMES.contains(&s.as_str()) => s.clone(),
        other => {
            return Incoming::Invalid(error_response(
                id.as_ref(),
                Some(other),
                &format!("Unknown command: {}", js_string(other)),
            ));
        }
    };
    map.remove("id");
    match serde_json::from_value::<RpcCommand>(Value::Object(map)) {
        Ok(command) => Incoming::Command { id, name, command },
        Err(e) => Incoming::Invalid(error_response(
            id.as_ref(),
            Some(&kind),
            &format!("Invalid {name} command: {e}"),
        )),
    }
}

/// JavaScript's `String(value)` for a JSON value: numbers as JavaScript spells them, arrays
/// joined with `,`, objects `[object Object]`, `null` → `null`.
pub(crate) fn js_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(_) => pi_ai::json::to_string(v).unwrap_or_default(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|x| match x {
                Value::Null => String::new(),
                x => js_string(x),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}

fn head(id: Option<&Value>, command: Option<&Value>, success: bool) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(id) = id {
        m.insert("id".into(), id.clone());
    }
    m.insert("type".into(), "response".into());
    if let Some(c) = command {
        m.insert("command".into(), c.clone());
    }
    m.insert("success".into(), success.into());
    m
}

/// `{id?, type:"response", command?, success:false, error}` as one JSON line (no LF).
pub(crate) fn error_response(id: Option<&Value>, command: Option<&Value>, error: &str) -> String {
    let mut m = head(id, command, false);
    m.insert("error".into(), error.into());
    pi_ai::json::to_string(&Value::Object(m)).unwrap_or_default()
}

/// `{id?, type:"response", command, success:true, data?}` as one JSON line (no LF); `data`
/// is already JSON text (so deep trees never become nested `Value`s).
pub(crate) fn success_response(id: Option<&Value>, command: &str, data: Option<&str>) -> String {
    let m = head(id, Some(&Value::from(command)), true);
    let mut line = pi_ai::json::to_string(&Value::Object(m)).unwrap_or_default();
    if let Some(data) = data {
        line.pop(); // the closing brace
        line.push_str(",\"data\":");
        line.push_str(data);
        line.push('}');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn invalid(line: &str) -> Value {
        match parse_line(line) {
            Incoming::Invalid(s) => serde_json::from_str(&s).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    /// A command line nested up to the document limit parses (a prompt's images or an
    /// extension payload may be deep); past it the answer names the limit, after one linear
    /// scan whatever the depth.
    #[test]
    fn command_lines_parse_up_to_the_document_depth_limit() {
        let limit = pi_ai::json_depth::MAX_DOCUMENT_DEPTH;
        let line = |levels: usize| {
            format!(
                r#"{{"type":"prompt","message":"hi","x":{}1{}}}"#,
                "[".repeat(levels - 1),
                "]".repeat(levels - 1)
            )
        };
        assert!(matches!(parse_line(&line(limit)), Incoming::Command { .. }));
        let v = invalid(&line(limit + 1));
        assert_eq!(
            v["error"],
            "Failed to parse command: JSON nested deeper than 1064 levels"
        );
        let v = invalid(&"[".repeat(1_000_000));
        assert_eq!(v["command"], "parse");
    }

    #[test]
    fn bad_json_and_empty_lines_are_parse_errors_without_id() {
        let v = invalid("");
        assert_eq!(v["command"], "parse");
        assert_eq!(v["success"], false);
        assert!(v.get("id").is_none());
        assert!(
            v["error"]
                .as_str()
                .unwrap()
                .starts_with("Failed to parse command: ")
        );
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["type", "command", "success", "error"]);
        assert_eq!(invalid("{bad")["command"], "parse");
        assert_eq!(invalid("{\"id\":\"1\",")["command"], "parse");
    }

    #[test]
    fn non_objects_and_missing_type_are_unknown_undefined() {
        // Values as the reference answers them (pi 0.85.0, observed).
        for line in ["5", "[1]", "\"x\"", "null", "true"] {
            assert_eq!(
                invalid(line),
                json!({"type":"response","success":false,"error":"Unknown command: undefined"}),
                "{line}"
            );
        }
        assert_eq!(
            invalid("{\"id\":7}"),
            json!({"id":7,"type":"response","success":false,"error":"Unknown command: undefined"})
        );
    }

    #[test]
    fn unknown_types_echo_the_raw_type() {
        assert_eq!(
            invalid("{\"id\":\"u\",\"type\":\"nope\"}"),
            json!({"id":"u","type":"response","command":"nope","success":false,"error":"Unknown command: nope"})
        );
        assert_eq!(
            invalid("{\"type\":5}"),
            json!({"type":"response","command":5,"success":false,"error":"Unknown command: 5"})
        );
        assert_eq!(
            invalid("{\"type\":{\"a\":1},\"id\":{\"z\":1}}"),
            json!({"id":{"z":1},"type":"response","command":{"a":1},"success":false,"error":"Unknown command: [object Object]"})
        );
        assert_eq!(
            invalid("{\"type\":null}"),
            json!({"type":"response","command":null,"success":false,"error":"Unknown command: null"})
        );
        assert_eq!(
            invalid("{\"type\":[1,null,[2,3]]}")["error"],
            "Unknown command: 1,,2,3"
        );
    }

    #[test]
    fn known_commands_parse_with_pi_field_names() {
        let Incoming::Command { id, name, command } = parse_line(
            r#"{"id":"a","type":"prompt","message":"hi","streamingBehavior":"followUp"}"#,
        ) else {
            panic!()
        };
        assert_eq!(id, Some(json!("a")));
        assert_eq!(name, "prompt");
        assert_eq!(
            command,
            RpcCommand::Prompt {
                message: "hi".into(),
                images: vec![],
                streaming_behavior: Some(StreamingBehavior::FollowUp)
            }
        );
        let Incoming::Command { command, .. } =
            parse_line(r#"{"type":"set_model","provider":"p","modelId":"m"}"#)
        else {
            panic!()
        };
        assert_eq!(
            command,
            RpcCommand::SetModel {
                provider: "p".into(),
                model_id: "m".into()
            }
        );
        let Incoming::Command { id, .. } = parse_line(r#"{"type":"get_state"}"#) else {
            panic!()
        };
        assert_eq!(id, None);
        for name in COMMAND_NAMES {
            // Every name is a variant (required fields aside).
            let r = parse_line(&format!("{{\"type\":\"{name}\"}}"));
            match r {
                Incoming::Command { name: n, .. } => assert_eq!(n, *name),
                Incoming::Invalid(s) => assert!(s.contains("Invalid"), "{name}: {s}"),
                Incoming::UiResponse { .. } => panic!(),
            }
        }
    }

    #[test]
    fn a_known_command_with_bad_fields_is_an_error_naming_it() {
        let v = invalid(r#"{"id":1,"type":"steer"}"#);
        assert_eq!(v["id"], 1);
        assert_eq!(v["command"], "steer");
        assert!(v["error"].as_str().unwrap().contains("message"), "{v}");
    }

    #[test]
    fn ui_responses_are_recognized() {
        let Incoming::UiResponse { id, response } =
            parse_line(r#"{"type":"extension_ui_response","id":"x","value":"v"}"#)
        else {
            panic!()
        };
        assert_eq!(id, "x");
        assert_eq!(response["value"], "v");
    }

    #[test]
    fn success_responses_splice_raw_data() {
        assert_eq!(
            success_response(Some(&json!("1")), "get_tree", Some("{\"tree\":[]}")),
            r#"{"id":"1","type":"response","command":"get_tree","success":true,"data":{"tree":[]}}"#
        );
        assert_eq!(
            success_response(None, "abort", None),
            r#"{"type":"response","command":"abort","success":true}"#
        );
    }
}
