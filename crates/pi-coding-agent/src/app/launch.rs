//! From the launch configuration to a run ready to build its session.
//!
//! Mirrors the steps of pi-coding-agent 0.85.0 `main.js` between the argument checks and the
//! session, in pi's order:
//! 1. pi selects the session (and asks about another project's, [`confirm_cross_project_session`])
//!    before it reads stdin;
//! 2. piped stdin (not in rpc mode, where it carries the commands) is read; it turns an
//!    interactive run into print mode;
//! 3. the `@file` arguments are read and joined with stdin and the first message into the
//!    initial prompt ([`super::input`]);
//! 4. the extensions that load before project trust ([`super::extensions`]) are started; a
//!    failure ends the run (after the unknown options) with the `pi -ne` hint. Unknown
//!    options alone are reported once the project's extensions are loaded too
//!    ([`super::setup`]), since those may register them as flags.
//!
//! Every error goes to stderr as `Error: …` with exit status 1.

use std::io::{Read, Write};
use std::path::PathBuf;

use super::extensions::{LoadedExtensions, apply_flags, load, pre_trust_sources};
use super::input::{InitialMessage, build_initial_message, process_file_args, read_piped_stdin};
use super::session_select::confirm_cross_project_session;
use crate::cli::LaunchConfig;
use crate::cli::launch::EXTENSION_LOAD_FAILURE_HINT;
use crate::cli::mode::AppMode;
use crate::config::settings::SettingsManager;

/// A run ready to build its session: interactive, print, json or rpc mode.
#[derive(Clone, Debug)]
pub(crate) struct Launch {
    /// The command line (after the cross-project question, which may turn `--session` into
    /// `--fork`).
    pub config: LaunchConfig,
    /// The process's working directory.
    pub cwd: PathBuf,
    /// The agent directory (`PI_CODING_AGENT_DIR` or `~/.pi/agent`).
    pub agent_dir: PathBuf,
    /// The first prompt (stdin + files + first message) and the prompts after it; empty in
    /// rpc mode.
    pub initial: InitialMessage,
    /// The extensions started so far (those loading before project trust).
    pub extensions: LoadedExtensions,
}

impl Launch {
    /// The mode of the run.
    pub(crate) fn mode(&self) -> AppMode {
        self.config.mode
    }
}

/// The process surroundings the launch reads.
pub(crate) struct LaunchIo<'a> {
    /// Whether fd 0 is a terminal (then it is not read).
    pub stdin_is_tty: bool,
    /// Standard input.
    pub stdin: &'a mut dyn Read,
    /// Standard output (the cross-project question in interactive mode).
    pub stdout: &'a mut dyn Write,
    /// Standard error.
    pub stderr: &'a mut dyn Write,
}

/// The outcome of [`prepare`].
#[derive(Debug)]
pub(crate) enum Prepared {
    /// Build the session and run.
    Run(Box<Launch>),
    /// The process ends with this status (everything is written).
    Exit(i32),
}

/// How long an extension process may take to exit at the end of a run.
pub(crate) const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

fn fail(err: &mut dyn Write, message: &str) -> Prepared {
    let _ = writeln!(err, "Error: {message}");
    Prepared::Exit(1)
}

/// Steps 1–4 of the module docs.
pub(crate) fn prepare(
    mut config: LaunchConfig,
    cwd: PathBuf,
    agent_dir: PathBuf,
    io: LaunchIo<'_>,
) -> Prepared {
    let LaunchIo {
        stdin_is_tty,
        stdin,
        stdout,
        stderr,
    } = io;
    // pi's question goes through `console.log`, which lands on stderr once pi has taken
    // stdout over (every mode but the interactive one).
    let question_out: &mut dyn Write = if config.mode == AppMode::Interactive {
        stdout
    } else {
        stderr
    };
    if let Some(code) =
        confirm_cross_project_session(&mut config.session, &cwd, &agent_dir, stdin, question_out)
    {
        return Prepared::Exit(code);
    }
    let mut stdin_text = None;
    if config.mode != AppMode::Rpc && !stdin_is_tty {
        stdin_text = match read_piped_stdin(stdin) {
            Ok(text) => text,
            Err(e) => return fail(stderr, &format!("Could not read stdin: {e}")),
        };
        if stdin_text.is_some() && config.mode == AppMode::Interactive {
            config.mode = AppMode::Print;
        }
    }
    let initial = if config.mode == AppMode::Rpc {
        InitialMessage::default()
    } else {
        // Project settings count only for trusted projects; trust is decided with the
        // session, so the image setting is read from the global settings here.
        let auto_resize = SettingsManager::load(&cwd, &agent_dir, false).image_auto_resize();
        match process_file_args(&config.file_args, &cwd, auto_resize) {
            Ok(files) => build_initial_message(stdin_text, files, &config.messages),
            Err(e) => return fail(stderr, &e.to_string()),
        }
    };
    let mut extensions = LoadedExtensions::default();
    let mut warnings = Vec::new();
    let sources = pre_trust_sources(&config.extensions, config.no_extensions, &cwd, &agent_dir);
    let load_errors = load(
        &sources,
        &mut extensions,
        &cwd,
        &agent_dir,
        config.mode,
        &mut warnings,
    );
    for w in &warnings {
        let _ = writeln!(stderr, "Warning: {w}");
    }
    if !load_errors.is_empty() {
        if let Some(unknown) = apply_flags(&config.unknown_flags, &mut extensions) {
            let _ = writeln!(stderr, "Error: {unknown}");
        }
        for e in &load_errors {
            let _ = writeln!(stderr, "Error: {e}");
        }
        let _ = writeln!(stderr, "{EXTENSION_LOAD_FAILURE_HINT}");
        extensions.shutdown(SHUTDOWN_WAIT);
        return Prepared::Exit(1);
    }
    Prepared::Run(Box::new(Launch {
        config,
        cwd,
        agent_dir,
        initial,
        extensions,
    }))
}
