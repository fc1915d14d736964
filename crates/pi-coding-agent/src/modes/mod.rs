//! The non-interactive modes of `pi`: print (text) and json, on the session layer.
//!
//! Mirrors pi-coding-agent 0.85.0 `main.js` (after argument handling) and
//! `modes/print-mode.js`:
//!
//! | module | job |
//! |---|---|
//! | [`setup`] | parsed arguments → a built `AgentSession` (settings, trust, auth, model, tools, prompt) |
//! | [`store`] | which session file a run uses (`--no-session`, `--session`, `--continue`, `--fork`, …) |
//! | [`print`](mod@print) | text mode's final output |
//! | [`json`] | json mode's header line and event lines |
//! | [`signals`] | SIGTERM / SIGHUP / SIGINT |
//! | [`output`] | the line channel from session listeners to stdout |
//!
//! The run: build the session (start-up errors → `Error: …`, exit 1); json mode writes the
//! header; the first prompt (stdin + `@file`s + first message, with the images) and every
//! further message are sent one after another, each awaited to `agent_settled`; a refused or
//! failed prompt writes its message (no prefix) to stderr, exit 1. Text mode then writes
//! [`print::text_outcome`]. A terminating signal stops everything ([`signals`]).

pub mod json;
pub mod output;
pub mod print;
pub mod setup;
pub mod signals;
pub mod store;

use std::io::Write;

use crate::cli::{AppMode, ModeRequest};
use crate::session::{AgentSession, PromptOptions, SessionError};
use output::{drain, line_channel, write_after, write_line};
use print::{TextOutcome, text_outcome};
use signals::{Signals, Terminate};

/// Runs print or json mode for `request` and returns the exit status (0, 1, 129, 143; on
/// SIGINT the process dies of the signal instead of returning).
pub fn run_print_or_json(
    request: ModeRequest,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let Some(runtime) = mode_runtime(stderr) else {
        return 1;
    };
    let code = runtime.block_on(drive(request, stdout, stderr));
    // Tools may still be blocked after a signal: do not wait for them.
    runtime.shutdown_background();
    code
}

/// Sends the initial prompt and the further messages, each awaited to `agent_settled`. An
/// empty initial prompt (`pi -p ""`, empty stdin) is not sent (pi 0.85.0 print mode:
/// `if (initialMessage)`); the further messages are sent as they are.
async fn send_prompts(
    session: AgentSession,
    initial: crate::cli::input::InitialMessage,
) -> Result<(), SessionError> {
    if let Some(text) = initial.text.filter(|t| !t.is_empty()) {
        let options = PromptOptions {
            images: initial.images,
            ..Default::default()
        };
        session.prompt(&text, options).await?;
    }
    for message in initial.rest {
        session.prompt(&message, PromptOptions::default()).await?;
    }
    Ok(())
}

async fn drive(request: ModeRequest, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    let mut signals = match Signals::install() {
        Ok(s) => Some(s),
        Err(e) => {
            let _ = writeln!(stderr, "Warning: cannot install signal handlers: {e}");
            None
        }
    };
    let json = request.mode == AppMode::Json;
    let setup = match setup::build_session(&request, stderr) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(stderr, "{}", e.line());
            return 1;
        }
    };
    let session = setup.session;
    let (tx, mut rx) = line_channel();
    if json {
        write_line(stdout, &json::header_line(&session));
        json::forward_events(&session, tx);
    } else {
        drop(tx);
    }
    let mut prompts = tokio::spawn(send_prompts(session.clone(), request.initial.clone()));
    let result = loop {
        tokio::select! {
            biased;
            sig = next_signal(&mut signals) => {
                // Events emitted before the signal are out, as pi's synchronous writes are.
                drain(&mut rx, stdout).await;
                return on_signal(sig, &session);
            }
            Some(line) = rx.recv() => write_after(stdout, line).await,
            done = &mut prompts => break done,
        }
    };
    drain(&mut rx, stdout).await;
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            let _ = writeln!(stderr, "{e}");
            return 1;
        }
        Err(e) => {
            let _ = writeln!(stderr, "{e}");
            return 1;
        }
    }
    if json {
        return 0;
    }
    match text_outcome(&session.messages()) {
        TextOutcome::Text(lines) => {
            for line in lines {
                write_line(stdout, &line);
            }
            0
        }
        TextOutcome::Failed(message) => {
            let _ = writeln!(stderr, "{message}");
            1
        }
    }
}

async fn next_signal(signals: &mut Option<Signals>) -> Terminate {
    match signals {
        Some(s) => s.recv().await,
        None => std::future::pending().await,
    }
}

/// Lets a session append in progress finish and keeps later ones out, kills the tools'
/// process groups, then exits (SIGINT: dies of the signal). Nothing more is written.
///
/// The store's lock is taken before the kill: a killed tool's result could otherwise be
/// appended between the kill and the exit.
fn on_signal(sig: Terminate, session: &AgentSession) -> i32 {
    let store = session.store().clone();
    let guard = signals::settle_store(&store);
    signals::kill_children();
    if sig == Terminate::Int {
        signals::die_of_sigint();
    }
    // The exit happens before the guard is released: no append starts after the signal.
    std::process::exit({
        let _keep = &guard;
        sig.exit_code()
    })
}

/// Stack of the runtime's threads. Tool arguments may nest
/// [`pi_ai::json_depth::MAX_ARGUMENT_DEPTH`] levels, and `serde_json::Value` is cloned and
/// serialized recursively: in a debug build one level of a clone takes about 1.4 KiB of stack,
/// which with the agent's async call stack on top overflows tokio's default 2 MiB.
const RUNTIME_STACK_BYTES: usize = 8 * 1024 * 1024;

/// The tokio runtime of the binary's modes (two workers, I/O and time, 8 MiB stacks); a
/// failure to build it is printed as `Error: …` on `stderr` and gives `None` (the caller exits
/// 1).
pub(crate) fn mode_runtime(stderr: &mut dyn Write) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(RUNTIME_STACK_BYTES)
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            let _ = writeln!(stderr, "Error: {e}");
            None
        }
    }
}
