//! Which mode a run uses.
//!
//! Mirrors pi-coding-agent 0.85.0 `main.js` (`resolveAppMode`): `--mode rpc` →
//! rpc; `--mode json` → json (terminal or not); `-p`, or stdin or stdout not a terminal →
//! print; otherwise the interactive TUI.

use super::args::{Args, OutputMode};

/// The mode a run ends up in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AppMode {
    /// The TUI ([`crate::modes::interactive`]).
    Interactive,
    /// Print mode with text output.
    Print,
    /// Print mode with JSONL event output.
    Json,
    /// JSONL commands on stdin, responses and events on stdout.
    Rpc,
}

/// pi's `resolveAppMode(parsed, stdin.isTTY, stdout.isTTY)`.
pub(crate) fn resolve_app_mode(args: &Args, stdin_is_tty: bool, stdout_is_tty: bool) -> AppMode {
    match args.mode {
        Some(OutputMode::Rpc) => AppMode::Rpc,
        Some(OutputMode::Json) => AppMode::Json,
        _ if args.print || !stdin_is_tty || !stdout_is_tty => AppMode::Print,
        _ => AppMode::Interactive,
    }
}

/// Printed (stderr, exit 1) for `-r/--resume` outside the interactive mode: pi-rs opens the
/// session picker in the interactive mode only.
pub(crate) const SESSION_PICKER_NOT_AVAILABLE: &str = "Error: the session picker (--resume) needs the \
     interactive mode (a terminal); use --continue or --session <path|id> instead";

#[cfg(test)]
mod tests {
    use super::*;

    fn args(print: bool, mode: Option<OutputMode>) -> Args {
        Args {
            print,
            mode,
            ..Args::default()
        }
    }

    #[test]
    fn mode_table() {
        use AppMode::*;
        let cases = [
            // (print, --mode, stdin tty, stdout tty) -> mode
            ((false, None, true, true), Interactive),
            ((false, Some(OutputMode::Text), true, true), Interactive),
            ((true, None, true, true), Print),
            ((true, Some(OutputMode::Text), true, true), Print),
            ((false, None, false, true), Print),
            ((false, None, true, false), Print),
            ((false, None, false, false), Print),
            ((false, Some(OutputMode::Json), true, true), Json),
            ((true, Some(OutputMode::Json), false, false), Json),
            ((false, Some(OutputMode::Rpc), true, true), Rpc),
            ((true, Some(OutputMode::Rpc), false, true), Rpc),
        ];
        for ((print, mode, i, o), want) in cases {
            assert_eq!(
                resolve_app_mode(&args(print, mode), i, o),
                want,
                "{print} {mode:?} {i} {o}"
            );
        }
    }
}
