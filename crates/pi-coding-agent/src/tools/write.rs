//! The `write` tool: create or overwrite a file.
//!
//! Mirrors pi 0.85.0 `core/tools/write.ts`: parameters `{path, content}`; parent directories are
//! created (`mkdir -p`), the content is written as UTF-8, and the result is
//! `Successfully wrote to <path>` with `<path>` as the model gave it and no details. Writes to
//! one file are serialized with edits (`super::file_mutex`); an abort is observed between the
//! steps, never in the middle of one.

use std::path::PathBuf;

use futures::FutureExt;
use futures::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::file_mutex::with_file_mutation;
use super::path_args::resolve_to_cwd;
use super::{check_aborted, required_str};
use crate::platform::fs_error::{node_message, write_file};

/// The `write` tool bound to a working directory.
pub struct WriteTool {
    cwd: PathBuf,
    parameters: Value,
}

impl WriteTool {
    /// A write tool resolving relative paths against `cwd`.
    pub fn new(cwd: PathBuf) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "File to write, relative to the working directory or absolute"
                },
                "content": {
                    "type": "string",
                    "description": "The complete new content of the file"
                }
            },
            "required": ["path", "content"]
        });
        WriteTool { cwd, parameters }
    }

    async fn run(
        &self,
        args: Value,
        cancel: CancellationToken,
    ) -> Result<AgentToolResult, ToolError> {
        let path = required_str(&args, "path")?;
        let content = required_str(&args, "content")?;
        let absolute = resolve_to_cwd(path, &self.cwd);
        with_file_mutation(&absolute, async {
            check_aborted(&cancel)?;
            if let Some(dir) = absolute.parent() {
                tokio::fs::create_dir_all(dir)
                    .await
                    .map_err(|e| ToolError::new(node_message(&e, "mkdir", Some(dir))))?;
            }
            check_aborted(&cancel)?;
            write_file(&absolute, content.as_bytes())
                .await
                .map_err(|e| ToolError::new(e.to_string()))?;
            check_aborted(&cancel)?;
            Ok(AgentToolResult::text(
                format!("Successfully wrote to {path}"),
                None,
            ))
        })
        .await
    }
}

impl AgentTool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }

    fn label(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        "Write a file, replacing it if it exists and creating it and any missing parent \
         directories if it does not."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Create or overwrite a file")
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        ["Use write for new files and whole-file rewrites only; use edit for changes."]
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
