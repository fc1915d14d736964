//! The `ls` tool: list one directory.
//!
//! Mirrors pi 0.85.0 `core/tools/ls.ts`: parameters `{path?, limit?}` (default `.` and 500);
//! every entry including dotfiles, directories suffixed `/`, entries that cannot be stat'ed
//! skipped; `(empty directory)` when nothing is listed; 50 KB byte truncation of the listing;
//! notices `<L> entries limit reached. Use limit=<2L> for more` and `50.0KB limit reached`;
//! details `{entryLimitReached?, truncation?}` only when one of them applies.
//!
//! Order: pi sorts with `a.toLowerCase().localeCompare(b.toLowerCase())`, i.e. Unicode (CLDR
//! root) collation of the lowercased names: `_a, -b, .hidden, ~x, a, a_b, a.b, B, é, notes.txt,
//! Z, z`. pi-rs uses ICU4X's root collator for the same order and breaks ties (names equal
//! after lowercasing, such as `Z` and `z`) by byte order, where pi keeps the directory's
//! order — a deterministic improvement.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use futures::FutureExt;
use futures::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::path_args::resolve_to_cwd;
use super::truncate::{DEFAULT_MAX_BYTES, TruncationOptions, format_size, truncate_head};
use super::{aborted, check_aborted, js_number, js_number_value, optional_number};
use crate::platform::fs_error::node_message;

/// Entries listed when the model gives no `limit`.
pub const DEFAULT_LIMIT: f64 = 500.0;

/// JavaScript's `Number.MAX_SAFE_INTEGER`: pi's "no line limit" for the listing.
const MAX_SAFE_INTEGER: usize = 9_007_199_254_740_991;

/// pi's ls order: root collation of the lowercased names, ties broken by byte order.
pub fn compare_entry_names(a: &str, b: &str) -> Ordering {
    let (la, lb) = (a.to_lowercase(), b.to_lowercase());
    crate::config::collate::locale_compare(&la, &lb).then_with(|| a.cmp(b))
}

/// The `ls` tool bound to a working directory.
pub struct LsTool {
    cwd: PathBuf,
    parameters: Value,
}

impl LsTool {
    /// An ls tool resolving relative paths against `cwd`.
    pub fn new(cwd: PathBuf) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Directory to list; the working directory when omitted"
                },
                "limit": {
                    "type": "number",
                    "description": "Most entries to return (500 when omitted)"
                }
            }
        });
        LsTool { cwd, parameters }
    }

    async fn run(&self, args: Value) -> Result<AgentToolResult, ToolError> {
        let path = args
            .get("path")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .unwrap_or(".");
        let limit = optional_number(&args, "limit").unwrap_or(DEFAULT_LIMIT);
        let dir = resolve_to_cwd(path, &self.cwd);

        if !dir.exists() {
            return Err(ToolError::new(format!("Path not found: {}", dir.display())));
        }
        // The directory work is synchronous: it is small and bounded, and it makes `ls` finish
        // on its first poll, so a parallel batch it shares with slower tools ends
        // deterministically (ls first), as the reference's recorded runs show.
        let meta = std::fs::metadata(&dir)
            .map_err(|e| ToolError::new(node_message(&e, "stat", Some(&dir))))?;
        if !meta.is_dir() {
            return Err(ToolError::new(format!(
                "Not a directory: {}",
                dir.display()
            )));
        }
        let mut names = read_names(&dir).map_err(|e| {
            ToolError::new(format!(
                "Cannot read directory: {}",
                node_message(&e, "scandir", Some(&dir))
            ))
        })?;
        names.sort_by(|a, b| compare_entry_names(a, b));

        let mut results: Vec<String> = Vec::new();
        let mut limit_reached = false;
        for name in names {
            if results.len() as f64 >= limit {
                limit_reached = true;
                break;
            }
            match std::fs::metadata(dir.join(&name)) {
                Ok(m) if m.is_dir() => results.push(format!("{name}/")),
                Ok(_) => results.push(name),
                Err(_) => continue,
            }
        }
        if results.is_empty() {
            return Ok(AgentToolResult::text("(empty directory)", None));
        }

        let truncation = truncate_head(
            &results.join("\n"),
            TruncationOptions {
                max_lines: MAX_SAFE_INTEGER,
                max_bytes: DEFAULT_MAX_BYTES,
            },
        );
        let mut output = truncation.content.clone();
        let mut details = Map::new();
        let mut notices: Vec<String> = Vec::new();
        if limit_reached {
            notices.push(format!(
                "{} entries limit reached. Use limit={} for more",
                js_number(limit),
                js_number(limit * 2.0)
            ));
            details.insert("entryLimitReached".into(), js_number_value(limit));
        }
        if truncation.truncated {
            notices.push(format!(
                "{} limit reached",
                format_size(DEFAULT_MAX_BYTES as u64)
            ));
            details.insert(
                "truncation".into(),
                serde_json::to_value(&truncation).map_err(|e| ToolError::new(e.to_string()))?,
            );
        }
        if !notices.is_empty() {
            output.push_str(&format!("\n\n[{}]", notices.join(". ")));
        }
        let details = (!details.is_empty()).then_some(Value::Object(details));
        Ok(AgentToolResult::text(output, details))
    }
}

/// The entry names of `dir` (lossily decoded, as Node does).
fn read_names(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        names.push(entry?.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

impl AgentTool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }

    fn label(&self) -> &str {
        "ls"
    }

    fn description(&self) -> &str {
        "List a directory: every entry including dotfiles, sorted alphabetically, directories \
         marked with a trailing '/'. At most 500 entries or 50KB are returned unless a limit \
         is given."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("List directory contents")
    }
    fn execute<'a>(
        &'a self,
        _tool_call_id: &'a str,
        args: Value,
        cancel: CancellationToken,
        _on_update: Option<pi_agent_core::ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        async move {
            check_aborted(&cancel)?;
            tokio::select! {
                result = self.run(args) => result,
                () = cancel.cancelled() => Err(aborted()),
            }
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_root_collation_of_lowercased_names_with_byte_ties() {
        let mut names = vec![
            "z",
            "notes.txt",
            "a.b",
            "~x",
            "Z",
            "é",
            "a_b",
            ".hidden",
            "B",
            "-b",
            "a",
            "_a",
        ];
        names.sort_by(|a, b| compare_entry_names(a, b));
        assert_eq!(
            names,
            vec![
                "_a",
                "-b",
                ".hidden",
                "~x",
                "a",
                "a_b",
                "a.b",
                "B",
                "é",
                "notes.txt",
                "Z",
                "z"
            ]
        );
    }

    #[test]
    fn digits_sort_numerically_by_character_not_value() {
        let mut names = vec!["file10", "file2", "File1", "10", "9"];
        names.sort_by(|a, b| compare_entry_names(a, b));
        assert_eq!(names, vec!["10", "9", "File1", "file10", "file2"]);
    }
}
