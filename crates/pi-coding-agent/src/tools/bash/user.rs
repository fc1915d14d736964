//! The user-bash executor: commands the user runs with `!` (interactive) or RPC `bash`.
//!
//! Mirrors pi 0.85.0 `core/bash-executor.ts` (`executeBashWithOperations` over the local
//! operations): the same process handling as the bash tool ([`super::executor`]), but
//!
//! - the environment has no `PI_*` session variables added (only [`super::shell::shell_env`]);
//! - there is no timeout;
//! - output is sanitized per chunk: ANSI escape sequences removed (a sequence split across
//!   chunks is completed by the next chunk), control characters other than TAB and LF and the
//!   characters U+FFF9–U+FFFB removed, CR dropped;
//! - once more than 50 KB of raw output arrived, the sanitized output (from the start) is also
//!   written to `$TMPDIR/pi-bash-<16 hex>.log`;
//! - the result is tail-truncated text without a notice, and a cancelled command still
//!   returns what it printed.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use pi_agent_core::ToolError;
use regex::Regex;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::executor::{ExecOutcome, ExecRequest, run_command};
use super::output::random_hex16;
use super::shell::shell_env;
use crate::tools::truncate::{DEFAULT_MAX_BYTES, TruncationOptions, truncate_tail};

/// Settings the user-bash executor reads.
#[derive(Clone, Debug, Default)]
pub struct UserBashOptions {
    /// Settings `shellPath`.
    pub shell_path: Option<PathBuf>,
    /// Settings `shellCommandPrefix`, prepended as `<prefix>\n<command>`.
    pub command_prefix: Option<String>,
    /// The agent dir; `<agent_dir>/bin` is prefixed to `PATH`.
    pub agent_dir: Option<PathBuf>,
    /// Directory for the full-output file (default: the OS temp dir, `$TMPDIR`).
    pub temp_dir: Option<PathBuf>,
}

/// Result of a user-bash command, serialized as pi's `BashResult`:
/// `{output, exitCode?, cancelled, truncated, fullOutputPath?}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashResult {
    /// Sanitized stdout+stderr, tail-truncated to 2000 lines / 50 KB.
    pub output: String,
    /// Exit code; `None` when cancelled or killed by a signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Whether `cancel` fired.
    pub cancelled: bool,
    /// Whether `output` is not the whole output.
    pub truncated: bool,
    /// The file holding the whole sanitized output, when one was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
}

/// Runs `command` in `cwd` for the user, calling `on_chunk` with each non-empty sanitized
/// chunk (the session turns these into `bash_execution_update` events).
///
/// Errors (shell or working directory missing, spawn failure) are returned only when the
/// command was not cancelled.
pub async fn execute_bash(
    command: &str,
    cwd: &Path,
    options: &UserBashOptions,
    cancel: &CancellationToken,
    mut on_chunk: impl FnMut(&str),
) -> Result<BashResult, ToolError> {
    let command = match options.command_prefix.as_deref().filter(|p| !p.is_empty()) {
        Some(prefix) => format!("{prefix}\n{command}"),
        None => command.to_owned(),
    };
    let req = ExecRequest {
        command,
        cwd: cwd.to_path_buf(),
        shell_path: options.shell_path.clone(),
        env: shell_env(options.agent_dir.as_deref()),
        timeout: None,
    };
    let temp_dir = options.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
    let mut sink = SanitizedSink::new(temp_dir);
    let outcome = run_command(&req, cancel, |data| {
        if let Some(text) = sink.push(data) {
            on_chunk(&text);
        }
    })
    .await;
    let exit_code = match outcome {
        Ok(ExecOutcome::Exited(code)) => code,
        Ok(ExecOutcome::Aborted | ExecOutcome::TimedOut) => None,
        Err(err) if !cancel.is_cancelled() => return Err(err),
        Err(_) => None,
    };
    if let Some(text) = sink.flush() {
        on_chunk(&text);
    }
    let cancelled = cancel.is_cancelled();
    Ok(sink.into_result(if cancelled { None } else { exit_code }, cancelled))
}

/// Sanitizes chunks and keeps a rolling buffer plus the optional full-output file.
struct SanitizedSink {
    decoder_pending: Vec<u8>,
    pending_escape: String,
    chunks: std::collections::VecDeque<String>,
    kept_bytes: usize,
    discarded: bool,
    raw_bytes: usize,
    temp_dir: PathBuf,
    temp_path: Option<PathBuf>,
    temp_file: Option<File>,
}

impl SanitizedSink {
    fn new(temp_dir: PathBuf) -> Self {
        SanitizedSink {
            decoder_pending: Vec::new(),
            pending_escape: String::new(),
            chunks: Default::default(),
            kept_bytes: 0,
            discarded: false,
            raw_bytes: 0,
            temp_dir,
            temp_path: None,
            temp_file: None,
        }
    }

    fn push(&mut self, data: &[u8]) -> Option<String> {
        self.raw_bytes += data.len();
        let mut text = std::mem::take(&mut self.pending_escape);
        decode_utf8(&mut self.decoder_pending, data, &mut text);
        let (complete, pending) = split_incomplete_escape(&text);
        self.pending_escape = pending.to_owned();
        let complete = complete.to_owned();
        self.append(&complete)
    }

    fn flush(&mut self) -> Option<String> {
        let mut rest = std::mem::take(&mut self.pending_escape);
        if !self.decoder_pending.is_empty() {
            self.decoder_pending.clear();
            rest.push('\u{FFFD}');
        }
        self.append(&rest)
    }

    fn append(&mut self, raw: &str) -> Option<String> {
        let text = sanitize(raw);
        if text.is_empty() {
            return None;
        }
        if self.raw_bytes > DEFAULT_MAX_BYTES {
            self.ensure_temp_file();
        }
        self.write_temp(&text);
        self.kept_bytes += text.len();
        self.chunks.push_back(text.clone());
        while self.kept_bytes > DEFAULT_MAX_BYTES * 2 && self.chunks.len() > 1 {
            if let Some(removed) = self.chunks.pop_front() {
                self.kept_bytes -= removed.len();
                self.discarded = true;
            }
        }
        Some(text)
    }

    fn ensure_temp_file(&mut self) {
        if self.temp_path.is_some() {
            return;
        }
        let path = self
            .temp_dir
            .join(format!("pi-bash-{}.log", random_hex16()));
        use std::os::unix::fs::OpenOptionsExt;
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path);
        match opened {
            Ok(mut file) => {
                for chunk in &self.chunks {
                    if file.write_all(chunk.as_bytes()).is_err() {
                        break;
                    }
                }
                self.temp_file = Some(file);
            }
            Err(err) => tracing::warn!("could not create bash output file: {err}"),
        }
        self.temp_path = Some(path);
    }

    fn write_temp(&mut self, text: &str) {
        if let Some(file) = self.temp_file.as_mut()
            && file.write_all(text.as_bytes()).is_err()
        {
            self.temp_file = None;
        }
    }

    fn into_result(mut self, exit_code: Option<i32>, cancelled: bool) -> BashResult {
        let full: String = self.chunks.iter().map(String::as_str).collect();
        let truncation = truncate_tail(&full, TruncationOptions::default());
        if truncation.truncated {
            self.ensure_temp_file();
        }
        if let Some(file) = self.temp_file.as_mut() {
            let _ = file.flush();
        }
        BashResult {
            output: if truncation.truncated {
                truncation.content
            } else {
                full
            },
            exit_code,
            cancelled,
            truncated: self.discarded || truncation.truncated,
            full_output_path: self.temp_path.map(|p| p.display().to_string()),
        }
    }
}

/// Streaming UTF-8 decode: invalid bytes become U+FFFD, an incomplete tail waits in `pending`.
fn decode_utf8(pending: &mut Vec<u8>, chunk: &[u8], out: &mut String) {
    let mut buf = std::mem::take(pending);
    buf.extend_from_slice(chunk);
    let mut rest: &[u8] = &buf;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                out.push_str(valid);
                return;
            }
            Err(err) => {
                let (valid, after) = rest.split_at(err.valid_up_to());
                out.push_str(&String::from_utf8_lossy(valid));
                match err.error_len() {
                    Some(bad) => {
                        out.push('\u{FFFD}');
                        rest = &after[bad..];
                    }
                    None => {
                        *pending = after.to_vec();
                        return;
                    }
                }
            }
        }
    }
}

/// A complete ANSI escape sequence: OSC (ended by BEL or ST), CSI (7-bit or C1), or a
/// two-character escape with optional intermediates.
static ANSI: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)",
        r"|\x1b\[[0-?]*[ -/]*[@-~]",
        r"|\x{9b}[0-?]*[ -/]*[@-~]",
        r"|\x1b[ -/]*[0-Z\\^-~]",
    ))
    .ok()
});

/// A prefix of an escape sequence that the next chunk may complete.
static ANSI_PREFIX: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:\x1b|\x1b\][^\x07\x1b]*\x1b?|\x1b\[[0-?]*[ -/]*",
        r"|\x{9b}[0-?]*[ -/]*|\x1b[ -/]+)$",
    ))
    .ok()
});

/// Longest escape prefix held back for the next chunk.
const MAX_PENDING_ESCAPE: usize = 4096;

/// Splits `text` into the part that can be sanitized now and an unfinished escape sequence
/// at its end.
fn split_incomplete_escape(text: &str) -> (&str, &str) {
    let Some(start) = text.rfind(['\x1b', '\u{9b}']) else {
        return (text, "");
    };
    let suffix = &text[start..];
    let complete = ANSI
        .as_ref()
        .and_then(|re| re.find(suffix))
        .is_some_and(|m| m.start() == 0);
    let prefix = ANSI_PREFIX.as_ref().is_some_and(|re| re.is_match(suffix));
    if !complete && prefix && suffix.len() <= MAX_PENDING_ESCAPE {
        (&text[..start], suffix)
    } else {
        (text, "")
    }
}

/// Removes ANSI sequences, control characters except TAB and LF, U+FFF9–U+FFFB, and CR.
pub fn sanitize(text: &str) -> String {
    let stripped = match ANSI.as_ref() {
        Some(re) => re.replace_all(text, ""),
        None => text.into(),
    };
    stripped
        .chars()
        .filter(|&c| {
            !matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{d}'..='\u{1f}' | '\u{fff9}'..='\u{fffb}')
        })
        .collect()
}

#[cfg(test)]
#[path = "user_tests.rs"]
mod tests;
