//! The `bash` tool and the shared shell executor.
//!
//! Mirrors pi 0.85.0 `core/tools/bash.ts`. Parameters `{command, timeout?}` (timeout in
//! seconds, no default). The command runs through [`executor::run_command`] in the tool's cwd;
//! output streams as tool updates (first `{content: []}`, then snapshots at most every 100 ms,
//! each `{content: [text], details: {truncation?, fullOutputPath?}}`); the result is the
//! tail-truncated output (2000 lines / 50 KB) with a notice naming the temp file that holds
//! the full output.
//!
//! Results (verbatim texts):
//! - success: the output, or `(no output)`; details `{truncation, fullOutputPath}` only when
//!   truncated;
//! - non-zero exit: error `<output>\n\nCommand exited with code N`;
//! - timeout: error `[<output>\n\n]Command timed out after <timeout> seconds`;
//! - abort: error `[<output>\n\n]Command aborted`;
//! - `Invalid timeout: must be a finite number of seconds`,
//!   `Invalid timeout: maximum is 2147483.647 seconds`, `Custom shell path not found: <p>`,
//!   `Working directory does not exist: <cwd>\nCannot execute bash commands.`.
//!
//! Command output is user data: it is handed to the model as is and never interpreted.

pub mod executor;
pub mod output;
pub mod shell;
pub mod user;

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::UserContent;
use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::tools::truncate::{DEFAULT_MAX_BYTES, TruncatedBy, TruncationOptions, format_size};
use executor::{ExecOutcome, ExecRequest, run_command};
use output::{OutputAccumulator, OutputSnapshot};
pub use shell::SessionEnv;

/// The system-prompt snippet of the bash tool.
pub const BASH_PROMPT_SNIPPET: &str = "Execute bash commands (ls, grep, find, etc.)";

/// Minimum interval between two streamed output updates.
pub const UPDATE_THROTTLE: Duration = Duration::from_millis(100);

/// Largest accepted timeout in milliseconds (JavaScript's timer limit, 2^31 - 1).
const MAX_TIMEOUT_MS: f64 = 2_147_483_647.0;

/// Supplies the current session metadata for the `PI_*` variables at each call.
pub type SessionEnvFn = Arc<dyn Fn() -> SessionEnv + Send + Sync>;

/// Options of [`BashTool`] (pi `BashToolOptions` plus the settings it reads).
#[derive(Clone, Default)]
pub struct BashToolOptions {
    /// Settings `shellCommandPrefix`, prepended to every command as `<prefix>\n<command>`.
    pub command_prefix: Option<String>,
    /// Settings `shellPath`.
    pub shell_path: Option<PathBuf>,
    /// The agent dir; `<agent_dir>/bin` is prefixed to `PATH`.
    pub agent_dir: Option<PathBuf>,
    /// Session metadata exported as `PI_SESSION_ID`, `PI_SESSION_FILE`, `PI_PROVIDER`,
    /// `PI_MODEL`, `PI_REASONING_LEVEL`; `None` exports none (inherited ones are removed).
    pub session_env: Option<SessionEnvFn>,
    /// Directory for full-output files (default: the OS temp dir, `$TMPDIR`).
    pub temp_dir: Option<PathBuf>,
}

/// The `bash` tool.
pub struct BashTool {
    cwd: PathBuf,
    options: BashToolOptions,
    parameters: Value,
}

impl BashTool {
    /// A bash tool running commands in `cwd`.
    pub fn new(cwd: impl Into<PathBuf>, options: BashToolOptions) -> Self {
        BashTool {
            cwd: cwd.into(),
            options,
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The bash command to run."},
                    "timeout": {
                        "type": "number",
                        "description": "Optional time limit in seconds; the command and everything it started are killed when it elapses."
                    }
                },
                "required": ["command"]
            }),
        }
    }

    async fn run(
        &self,
        args: Value,
        cancel: CancellationToken,
        on_update: Option<ToolUpdateFn>,
    ) -> Result<AgentToolResult, ToolError> {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::new("command must be a string"))?;
        let timeout_arg = args.get("timeout").filter(|v| !v.is_null());
        let command = match self
            .options
            .command_prefix
            .as_deref()
            .filter(|p| !p.is_empty())
        {
            Some(prefix) => format!("{prefix}\n{command}"),
            None => command.to_owned(),
        };
        let session = self.options.session_env.as_ref().map(|f| f());
        let env = shell::tool_env(self.options.agent_dir.as_deref(), session.as_ref());
        let temp_dir = self
            .options
            .temp_dir
            .clone()
            .unwrap_or_else(std::env::temp_dir);
        let state = Arc::new(Mutex::new(Stream {
            acc: OutputAccumulator::new(TruncationOptions::default(), "pi-bash", &temp_dir),
            dirty: false,
            last_emit: None,
        }));

        if let Some(update) = &on_update {
            update(AgentToolResult::default());
        }
        let timeout = parse_timeout(timeout_arg)?;
        let req = ExecRequest {
            command,
            cwd: self.cwd.clone(),
            shell_path: self.options.shell_path.clone(),
            env,
            timeout,
        };

        let notify = Notify::new();
        let run = run_command(&req, &cancel, |data| {
            let mut s = lock(&state);
            s.acc.append(data);
            if on_update.is_some() {
                s.dirty = true;
                notify.notify_one();
            }
        });
        let updater = throttle_updates(&state, &notify, on_update.as_ref());
        let outcome = tokio::select! {
            outcome = run => outcome,
            never = updater => match never {},
        };

        let mut s = lock(&state);
        s.acc.finish();
        if let Some(update) = &on_update {
            s.emit(update);
        }
        let snapshot = s.acc.snapshot(true);
        let last_line = s.acc.last_line_bytes();
        drop(s);

        match outcome? {
            ExecOutcome::Aborted => {
                let (text, _) = format_output(&snapshot, "", last_line);
                Err(ToolError::new(append_status(&text, "Command aborted")))
            }
            ExecOutcome::TimedOut => {
                let (text, _) = format_output(&snapshot, "", last_line);
                let secs = timeout_arg.map(js_number).unwrap_or_default();
                Err(ToolError::new(append_status(
                    &text,
                    &format!("Command timed out after {secs} seconds"),
                )))
            }
            ExecOutcome::Exited(code) => {
                let (text, details) = format_output(&snapshot, "(no output)", last_line);
                match code {
                    Some(code) if code != 0 => Err(ToolError::new(append_status(
                        &text,
                        &format!("Command exited with code {code}"),
                    ))),
                    _ => Ok(AgentToolResult::text(text, details)),
                }
            }
        }
    }
}

impl AgentTool for BashTool {
    fn name(&self) -> &str {
        "bash"
    }
    fn label(&self) -> &str {
        "bash"
    }
    fn description(&self) -> &str {
        "Run a bash command in the working directory and return its combined stdout and stderr. \
         Long output keeps its last 2000 lines or 50KB, whichever is smaller, and the full \
         output is saved to a temporary file. An optional timeout in seconds stops the command."
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some(BASH_PROMPT_SNIPPET)
    }
    /// With the session's `PI_*` variables exposed (pi's `exposeSessionEnvironment`), one
    /// guideline points the model at them.
    fn prompt_guidelines(&self) -> Vec<String> {
        if self.options.session_env.is_some() {
            vec![
                "The PI_* environment variables hold the current model and session details.".into(),
            ]
        } else {
            Vec::new()
        }
    }
    fn execute<'a>(
        &'a self,
        _tool_call_id: &'a str,
        args: Value,
        cancel: CancellationToken,
        on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(self.run(args, cancel, on_update))
    }
}

/// Streaming state shared by the output callback and the update throttle.
struct Stream {
    acc: OutputAccumulator,
    dirty: bool,
    last_emit: Option<Instant>,
}

impl Stream {
    /// Sends a snapshot if output arrived since the last one.
    fn emit(&mut self, update: &ToolUpdateFn) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        self.last_emit = Some(Instant::now());
        let snap = self.acc.snapshot(true);
        let mut details = Map::new();
        if snap.truncation.truncated {
            details.insert("truncation".into(), to_value(&snap.truncation));
        }
        if let Some(path) = &snap.full_output_path {
            details.insert("fullOutputPath".into(), path.display().to_string().into());
        }
        update(AgentToolResult {
            content: vec![UserContent::text(snap.content)],
            details: Some(Value::Object(details)),
            ..Default::default()
        });
    }
}

use crate::sync::lock;

/// Emits an update as soon as output arrives, but at most once per [`UPDATE_THROTTLE`].
async fn throttle_updates(
    state: &Mutex<Stream>,
    notify: &Notify,
    on_update: Option<&ToolUpdateFn>,
) -> Infallible {
    let Some(update) = on_update else {
        return std::future::pending().await;
    };
    loop {
        notify.notified().await;
        let last = lock(state).last_emit;
        if let Some(last) = last {
            tokio::time::sleep_until(last + UPDATE_THROTTLE).await;
        }
        lock(state).emit(update);
    }
}

/// Validates `timeout` (seconds): `None` = no timeout.
fn parse_timeout(arg: Option<&Value>) -> Result<Option<Duration>, ToolError> {
    let Some(arg) = arg else {
        return Ok(None);
    };
    let secs = arg.as_f64().unwrap_or(f64::NAN);
    if !secs.is_finite() || secs <= 0.0 {
        return Err(ToolError::new(
            "Invalid timeout: must be a finite number of seconds",
        ));
    }
    let ms = secs * 1000.0;
    if ms > MAX_TIMEOUT_MS {
        return Err(ToolError::new(format!(
            "Invalid timeout: maximum is {} seconds",
            js_number(&Value::from(MAX_TIMEOUT_MS / 1000.0))
        )));
    }
    Ok(Some(Duration::from_secs_f64(secs)))
}

/// A number as JavaScript's `String(n)` spells it.
fn js_number(v: &Value) -> String {
    pi_ai::json::to_string(v).unwrap_or_default()
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// `<text>\n\n<status>`, or just `<status>` for empty text.
fn append_status(text: &str, status: &str) -> String {
    if text.is_empty() {
        status.to_owned()
    } else {
        format!("{text}\n\n{status}")
    }
}

/// The result text with its truncation notice, and the details when truncated.
fn format_output(
    snapshot: &OutputSnapshot,
    empty_text: &str,
    last_line_bytes: usize,
) -> (String, Option<Value>) {
    let t = &snapshot.truncation;
    let mut text = if snapshot.content.is_empty() {
        empty_text.to_owned()
    } else {
        snapshot.content.clone()
    };
    if !t.truncated {
        return (text, None);
    }
    let path = snapshot
        .full_output_path
        .as_ref()
        .map_or_else(|| "undefined".to_owned(), |p| p.display().to_string());
    let end = t.total_lines;
    let start = (t.total_lines + 1).saturating_sub(t.output_lines);
    if t.last_line_partial {
        text.push_str(&format!(
            "\n\n[Showing last {} of line {end} (line is {}). Full output: {path}]",
            format_size(t.output_bytes as u64),
            format_size(last_line_bytes as u64)
        ));
    } else if t.truncated_by == Some(TruncatedBy::Lines) {
        text.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {}. Full output: {path}]",
            t.total_lines
        ));
    } else {
        text.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {} ({} limit). Full output: {path}]",
            t.total_lines,
            format_size(DEFAULT_MAX_BYTES as u64)
        ));
    }
    let details = json!({"truncation": to_value(t), "fullOutputPath": path});
    (text, Some(details))
}
