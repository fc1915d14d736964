//! The non-interactive modes of `pi`: print (text) and json, driving a built session.
//!
//! Mirrors pi-coding-agent 0.85.0 `modes/print-mode.js`. The session
//! comes built ([`crate::app`]); this module only drives it:
//!
//! | module | job |
//! |---|---|
//! | [`print`](mod@print) | text mode's final output |
//! | [`json`] | json mode's header line and event lines |
//! | [`signals`] | SIGTERM / SIGHUP / SIGINT |
//! | [`output`] | the line channel from session listeners to stdout |
//!
//! The run: json mode writes the header; the first prompt (stdin + `@file`s + first message,
//! with the images) and every further message are sent one after another, each awaited to
//! `agent_settled`; a refused or failed prompt writes its message (no prefix) to stderr,
//! exit 1. Text mode then writes [`print::text_outcome`]. A terminating signal stops
//! everything ([`signals`]).

pub(crate) mod interactive;
pub(crate) mod json;
pub(crate) mod output;
pub(crate) mod print;
pub(crate) mod signals;

use std::io::Write;

use crate::app::InitialMessage;
use crate::session::{AgentSession, PromptOptions, SessionError};
use output::{drain, line_channel, write_batch, write_line};
use print::{TextOutcome, text_outcome};
use signals::{Signals, Terminate};

/// Installs the terminating-signal handlers before the session is built, so a signal during
/// the start-up is handled as one during the run; a failure is a warning on `stderr` and
/// leaves the signals their default actions.
pub(crate) fn install_signals(stderr: &mut dyn Write) -> Option<Signals> {
    match Signals::install() {
        Ok(s) => Some(s),
        Err(e) => {
            let _ = writeln!(stderr, "Warning: cannot install signal handlers: {e}");
            None
        }
    }
}

/// Sends the initial prompt and the further messages, each awaited to `agent_settled`. An
/// empty initial prompt (`pi -p ""`, empty stdin) is not sent (pi 0.85.0 print mode:
/// `if (initialMessage)`); the further messages are sent as they are.
async fn send_prompts(session: AgentSession, initial: InitialMessage) -> Result<(), SessionError> {
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

/// Runs print mode (`json == false`: text output) or json mode on `session` and returns the
/// exit status (0, 1, 129, 143; on SIGINT the process dies of the signal instead of
/// returning). Must run inside a tokio runtime; the caller does not wait for blocked tools
/// afterwards (`shutdown_background`).
pub(crate) async fn run_print_or_json(
    session: AgentSession,
    initial: InitialMessage,
    json: bool,
    mut signals: Option<Signals>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let (tx, mut rx) = line_channel();
    if json {
        write_line(stdout, &json::header_line(&session));
        json::forward_events(&session, tx);
    } else {
        drop(tx);
    }
    let mut prompts = tokio::spawn(send_prompts(session.clone(), initial));
    let result = loop {
        tokio::select! {
            biased;
            sig = next_signal(&mut signals) => {
                // Events emitted before the signal are out, as pi's synchronous writes are.
                drain(&mut rx, stdout).await;
                return on_signal(sig, &session);
            }
            Some(line) = rx.recv() => write_batch(stdout, line, &mut rx).await,
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
