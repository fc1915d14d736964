//! Everything between the launch configuration and a running session.
//!
//! The command line ([`crate::cli`]) only parses; this module reads files, asks the
//! cross-project question, reads stdin, decides trust, loads the settings and the model
//! registry, resolves the model, selects the session store, builds the tools, the system
//! prompt and the compaction, and the runtime host that replaces sessions. The modes
//! ([`crate::modes`], [`crate::rpc`]) receive what it built and drive it; the binary's `main`
//! dispatches.
//!
//! | module | job |
//! |---|---|
//! | [`launch`] | the launch configuration → a [`Launch`]: the session question, stdin, `@file`s, start-up errors |
//! | [`input`] | the initial prompt: piped stdin, `@file` arguments, the first message |
//! | [`session_select`] | which session file a run uses (`--no-session`, `--session`, `--continue`, `--fork`, …) |
//! | [`setup`] | a [`Launch`] → a built `AgentSession` (trust, settings, registry, model, tools, prompt), and its runtime host |
//! | [`extensions`] | which extensions load (`-e`, settings, directories, trust) and starting them |
//! | [`export`] | `--export` |
//!
//! Warnings go to stderr as `Warning: …`; errors as `Error: …` with exit status 1.

pub(crate) mod export;
pub(crate) mod extensions;
pub(crate) mod input;
pub(crate) mod launch;
pub(crate) mod session_select;
pub(crate) mod setup;

use std::io::Write;
use std::path::{Path, PathBuf};

pub(crate) use input::InitialMessage;
pub(crate) use launch::{Launch, LaunchIo, Prepared, prepare};
pub(crate) use setup::{Running, build_running, build_running_asking, build_session};

use crate::config::agent_paths::AgentPaths;
use crate::config::list_models::list_models as model_listing;
use crate::config::registry::ModelRegistry;
use crate::platform::lexical_path::lexical_normalize;

/// The directory holding pi-rs's documentation (`$PI_PACKAGE_DIR/docs`, else the `docs`
/// folder of the source tree this binary was built from).
pub(crate) fn docs_dir() -> PathBuf {
    match std::env::var_os("PI_PACKAGE_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("docs"),
        None => lexical_normalize(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")),
    }
}

/// `--list-models [search]`: the available models, on stdout (stderr when `to_stderr`); the
/// exit status.
pub(crate) fn list_models(
    agent_dir: &Path,
    search: Option<&str>,
    to_stderr: bool,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let registry = ModelRegistry::load(&AgentPaths::new(agent_dir.to_path_buf()));
    if let Some(message) = registry.auth().syntax_error() {
        // pi 0.85.0 warns about the failed availability refresh, then dies on the same
        // `JSON.parse` error (an uncaught `SyntaxError`, exit 1) without listing anything.
        let _ = write!(
            stderr,
            "Warning: errors loading models.json:\nAvailability refresh: {message}\n\nSyntaxError: {message}\n"
        );
        return 1;
    }
    let out = model_listing(&registry, search, &docs_dir());
    let _ = write!(stderr, "{}", out.stderr);
    let listing: &mut dyn Write = if to_stderr { stderr } else { stdout };
    let _ = write!(listing, "{}", out.stdout);
    0
}

/// Stack of the runtime's threads. Tool arguments may nest
/// [`pi_ai::json_depth::MAX_ARGUMENT_DEPTH`] levels, and `serde_json::Value` is cloned and
/// serialized recursively: in a debug build one level of a clone takes about 1.4 KiB of stack,
/// which with the agent's async call stack on top overflows tokio's default 2 MiB.
const RUNTIME_STACK_BYTES: usize = 8 * 1024 * 1024;

/// The tokio runtime of a run (two workers, I/O and time, 8 MiB stacks); a failure to build it
/// is printed as `Error: …` on `stderr` and gives `None` (the caller exits 1).
pub(crate) fn tokio_runtime(stderr: &mut dyn Write) -> Option<tokio::runtime::Runtime> {
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
