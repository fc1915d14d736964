//! Handler failures and the extension error channel per mode.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/extensions/runner.ts` (`onError`/`emitError`) and the
//! modes' error listeners: print/json write `Extension error (<path>): <error>` to stderr
//! (`modes/print-mode.ts`); rpc writes an `extension_error` record (`modes/rpc/rpc-mode.ts`).

use serde::Serialize;
use std::any::Any;
use std::io::Write;
use std::sync::{Arc, Mutex};

pub use crate::session::HandlerError;

/// What a handler returns: `Ok(None)` = no result (pi: `undefined`).
pub type HandlerResult<T> = Result<Option<T>, HandlerError>;

/// The text of a panic payload (`&str` or `String`), else `panic`.
pub(crate) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_owned()
    }
}

/// `{extensionPath, event, error}` given to the error listeners.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionErrorRecord {
    /// The extension's path (or `command:<name>` for a failed command).
    pub extension_path: String,
    /// The event being handled (`context`, `send_message`, `command`, …).
    pub event: String,
    /// The error message.
    pub error: String,
}

impl ExtensionErrorRecord {
    /// The print/json-mode stderr line (without the newline):
    /// `Extension error (<path>): <error>`.
    pub fn print_line(&self) -> String {
        format!("Extension error ({}): {}", self.extension_path, self.error)
    }

    /// The rpc-mode record (one JSON line without the newline):
    /// `{"type":"extension_error","extensionPath":…,"event":…,"error":…}`.
    pub fn rpc_record(&self) -> String {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Record<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            extension_path: &'a str,
            event: &'a str,
            error: &'a str,
        }
        let record = Record {
            kind: "extension_error",
            extension_path: &self.extension_path,
            event: &self.event,
            error: &self.error,
        };
        // Serializing plain strings cannot fail; keep a correct fallback anyway.
        pi_ai::json::to_string(&record).unwrap_or_else(|_| {
            format!(
                "{{\"type\":\"extension_error\",\"extensionPath\":{:?},\"event\":{:?},\"error\":{:?}}}",
                self.extension_path, self.event, self.error
            )
        })
    }
}

/// An error listener (pi: `runner.onError(listener)`); called synchronously, in
/// subscription order.
pub type ErrorListener = Arc<dyn Fn(&ExtensionErrorRecord) + Send + Sync>;

/// The run mode, as extensions see it (`ctx.mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Interactive terminal UI.
    Tui,
    /// `--mode rpc`.
    Rpc,
    /// `--mode json`.
    Json,
    /// `-p` (text).
    #[default]
    Print,
}

/// The error listener a mode installs.
///
/// print/json: `Extension error (<path>): <error>` + LF written to `out` (stderr in the
/// binary); rpc: the `extension_error` JSON record + LF written to `out` (the rpc output);
/// tui: shown inline by the UI, so nothing is written here.
pub fn mode_error_listener(mode: Mode, out: Box<dyn Write + Send>) -> ErrorListener {
    let out = Mutex::new(out);
    Arc::new(move |record: &ExtensionErrorRecord| {
        let line = match mode {
            Mode::Print | Mode::Json => record.print_line(),
            Mode::Rpc => record.rpc_record(),
            Mode::Tui => return,
        };
        if let Ok(mut w) = out.lock() {
            // A broken stderr/stdout must not take pi down.
            let _ = writeln!(w, "{line}");
            let _ = w.flush();
        }
    })
}
