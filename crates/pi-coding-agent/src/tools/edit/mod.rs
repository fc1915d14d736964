//! The `edit` tool: exact-text replacements in one file.
//!
//! Mirrors pi 0.85.0 `core/tools/edit.ts`. Parameters `{path, edits: [{oldText, newText}]}`;
//! [`AgentTool::prepare_arguments`] also accepts the legacy `{path, oldText, newText}` shape,
//! `edits` as a JSON string, and a single edit object. The file's BOM is split off, its line
//! ending (CRLF when the first line break is CRLF) remembered, the text normalized to LF, the
//! edits applied ([`matching`]), and the BOM and line endings restored on write. The result is
//! `Successfully replaced N block(s) in <path>.` with details `{diff, patch, firstChangedLine}`
//! ([`diff`]). Edits of one file are serialized with writes (`super::file_mutex`).

pub mod diff;
pub mod line_diff;
pub mod matching;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use futures::FutureExt;
use futures::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use self::matching::{
    Edit, apply_edits, detect_line_ending, normalize_to_lf, restore_line_endings,
};
use super::file_mutex::with_file_mutation;
use super::path_args::resolve_to_cwd;
use super::{check_aborted, required_str};
use crate::platform::fs_error::{error_code, read_file_message, write_file};

/// Context lines around changes in the display diff and the patch.
const CONTEXT_LINES: usize = 4;

/// The `edit` tool bound to a working directory.
pub struct EditTool {
    cwd: PathBuf,
    parameters: Value,
}

impl EditTool {
    /// An edit tool resolving relative paths against `cwd`.
    pub fn new(cwd: PathBuf) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "File to edit, relative to the working directory or absolute"
                },
                "edits": {
                    "type": "array",
                    "description": "Replacements, each matched against the original file; \
                                    they must not overlap (merge neighbouring changes into one)",
                    "items": {
                        "type": "object",
                        "properties": {
                            "oldText": {
                                "type": "string",
                                "description": "Exact text to replace; must occur exactly once"
                            },
                            "newText": {
                                "type": "string",
                                "description": "Text to put in its place"
                            }
                        },
                        "required": ["oldText", "newText"]
                    }
                }
            },
            "required": ["path", "edits"]
        });
        EditTool { cwd, parameters }
    }

    async fn run(
        &self,
        args: Value,
        cancel: CancellationToken,
    ) -> Result<AgentToolResult, ToolError> {
        let path = required_str(&args, "path")?;
        let edits = parse_edits(&args)?;
        let absolute = resolve_to_cwd(path, &self.cwd);
        with_file_mutation(&absolute, async {
            check_aborted(&cancel)?;
            if let Err(err) = check_read_write_access(&absolute) {
                check_aborted(&cancel)?;
                let reason = match error_code(&err) {
                    Some(code) => format!("Error code: {code}"),
                    None => format!("Error: {err}"),
                };
                return Err(ToolError::new(format!(
                    "Could not edit file: {path}. {reason}."
                )));
            }
            check_aborted(&cancel)?;
            let bytes = crate::platform::fs_error::read_file_async(&absolute)
                .await
                .map_err(|e| ToolError::new(read_file_message(&e, &absolute)))?;
            let raw = String::from_utf8_lossy(&bytes);
            check_aborted(&cancel)?;

            let (bom, content) = match raw.strip_prefix('\u{FEFF}') {
                Some(rest) => ("\u{FEFF}", rest),
                None => ("", raw.as_ref()),
            };
            let ending = detect_line_ending(content);
            let normalized = normalize_to_lf(content);
            let applied = apply_edits(&normalized, &edits, path)?;
            check_aborted(&cancel)?;

            let final_content = format!(
                "{bom}{}",
                restore_line_endings(&applied.new_content, ending)
            );
            write_file(&absolute, final_content.as_bytes())
                .await
                .map_err(|e| ToolError::new(e.to_string()))?;
            check_aborted(&cancel)?;

            let display =
                diff::display_diff(&applied.base_content, &applied.new_content, CONTEXT_LINES);
            let patch = diff::unified_patch(
                path,
                &applied.base_content,
                &applied.new_content,
                CONTEXT_LINES,
            );
            let mut details = Map::new();
            details.insert("diff".into(), Value::String(display.diff));
            details.insert("patch".into(), Value::String(patch));
            if let Some(line) = display.first_changed_line {
                details.insert("firstChangedLine".into(), json!(line));
            }
            Ok(AgentToolResult::text(
                format!("Successfully replaced {} block(s) in {path}.", edits.len()),
                Some(Value::Object(details)),
            ))
        })
        .await
    }
}

/// `access(path, R_OK | W_OK)`, as pi checks before editing.
fn check_read_write_access(path: &Path) -> std::io::Result<()> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call; `access` only
    // reads it.
    let rc = unsafe { libc::access(c_path.as_ptr(), libc::R_OK | libc::W_OK) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `edits` as a non-empty list (pi `validateEditInput`): otherwise `Edit tool input is invalid.
/// edits must contain at least one replacement.`
fn parse_edits(args: &Value) -> Result<Vec<Edit>, ToolError> {
    let list = args
        .get("edits")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
        .ok_or_else(|| {
            ToolError::new(
                "Edit tool input is invalid. edits must contain at least one replacement.",
            )
        })?;
    list.iter()
        .map(|e| {
            Ok(Edit {
                old_text: required_str(e, "oldText")?.to_owned(),
                new_text: required_str(e, "newText")?.to_owned(),
            })
        })
        .collect()
}

/// `{oldText, newText}` with both strings.
fn is_single_edit(value: &Value) -> bool {
    value.get("oldText").is_some_and(Value::is_string)
        && value.get("newText").is_some_and(Value::is_string)
}

/// pi `prepareEditArguments`: `edits` given as a JSON string is parsed (an array, or one edit
/// object); a single edit object becomes a one-element list; top-level `oldText`/`newText`
/// (the legacy shape) are appended to `edits` and removed.
pub fn prepare_edit_arguments(raw: Value) -> Value {
    let Value::Object(mut args) = raw else {
        return raw;
    };
    match args.get("edits") {
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(parsed @ Value::Array(_)) => {
                args.insert("edits".into(), parsed);
            }
            Ok(parsed) if is_single_edit(&parsed) => {
                args.insert("edits".into(), Value::Array(vec![parsed]));
            }
            _ => {}
        },
        Some(single) if is_single_edit(single) => {
            let single = single.clone();
            args.insert("edits".into(), Value::Array(vec![single]));
        }
        _ => {}
    }
    let (Some(Value::String(old)), Some(Value::String(new))) =
        (args.get("oldText").cloned(), args.get("newText").cloned())
    else {
        return Value::Object(args);
    };
    let mut edits = match args.get("edits") {
        Some(Value::Array(list)) => list.clone(),
        _ => Vec::new(),
    };
    edits.push(json!({ "oldText": old, "newText": new }));
    args.remove("oldText");
    args.remove("newText");
    args.insert("edits".into(), Value::Array(edits));
    Value::Object(args)
}

impl AgentTool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn label(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        "Edit one file by exact text replacement. Each edits[].oldText must match exactly one \
         place in the original file, and the edits must not overlap; combine changes to \
         neighbouring lines into a single edit, and keep oldText short."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn prepare_arguments(&self, raw: Value) -> Value {
        prepare_edit_arguments(raw)
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Make exact text replacements in a file, several separate ones in one call")
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        [
            "Use edit for targeted changes: every edits[].oldText must match the file exactly",
            "Change several separate places of one file with one edit call and one edits[] entry per place, not with several calls",
            "Every edits[].oldText is matched against the original file, not against the result of earlier entries: entries must not overlap or nest, so merge changes that sit close together",
            "Keep each edits[].oldText as short as it can be while staying unique in the file; leave out unchanged surroundings",
        ]
        .map(String::from)
        .to_vec()
    }
    fn execute<'a>(
        &'a self,
        _tool_call_id: &'a str,
        args: Value,
        cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        self.run(args, cancel).boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_shape_becomes_edits() {
        let out = prepare_edit_arguments(json!({"path": "a", "oldText": "x", "newText": "y"}));
        assert_eq!(
            out,
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        );
        let out = prepare_edit_arguments(
            json!({"path": "a", "edits": [{"oldText": "1", "newText": "2"}], "oldText": "x", "newText": "y"}),
        );
        assert_eq!(
            out,
            json!({"path": "a", "edits": [{"oldText": "1", "newText": "2"}, {"oldText": "x", "newText": "y"}]})
        );
    }

    #[test]
    fn string_and_single_object_edits_are_accepted() {
        let out = prepare_edit_arguments(
            json!({"path": "a", "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]"}),
        );
        assert_eq!(
            out,
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        );
        let out = prepare_edit_arguments(
            json!({"path": "a", "edits": "{\"oldText\":\"x\",\"newText\":\"y\"}"}),
        );
        assert_eq!(
            out,
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        );
        let out =
            prepare_edit_arguments(json!({"path": "a", "edits": {"oldText": "x", "newText": "y"}}));
        assert_eq!(
            out,
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        );
        // Unparseable strings and non-objects pass through unchanged.
        let out = prepare_edit_arguments(json!({"path": "a", "edits": "nope"}));
        assert_eq!(out, json!({"path": "a", "edits": "nope"}));
        assert_eq!(prepare_edit_arguments(json!("x")), json!("x"));
    }

    #[test]
    fn empty_or_missing_edits_are_rejected() {
        let msg = "Edit tool input is invalid. edits must contain at least one replacement.";
        assert_eq!(
            parse_edits(&json!({"path": "a", "edits": []}))
                .unwrap_err()
                .0,
            msg
        );
        assert_eq!(parse_edits(&json!({"path": "a"})).unwrap_err().0, msg);
    }
}
