//! The `pi` start-up sequence, from the raw arguments to a mode.
//!
//! Mirrors the order of pi-coding-agent 0.85.0 `main.js` (`main`):
//! 1. `auth` as the first argument → [`crate::auth_command`]; another reference subcommand
//!    (`install`, `remove`, `uninstall`, `update`, `list`, `config`) →
//!    `Error: pi-rs does not support '<cmd>' yet`;
//! 2. parse; print every diagnostic (`Warning: …`/`Error: …`); any error → exit 1;
//! 3. `--version`; 4. `--export`;
//! 5. the mode ([`resolve_app_mode`]); `@file` with rpc → error;
//! 6. `--fork` / `--session-id` conflicts and the session id syntax;
//! 7. `--resume` (pi's TUI picker) → [`INTERACTIVE_NOT_AVAILABLE`]; an empty `--name`;
//! 8. `--help`, `--list-models`;
//! 9. piped stdin (not in rpc mode; it turns an interactive run into print mode), `@file`s;
//! 10. start-up diagnostics: unknown long options (pi reports them only here, because an
//!     extension might have registered them) and `-e` extensions, which pi-rs cannot load
//!     (`Failed to load extension "<abs>": …` + the `pi -ne` hint); errors → exit 1;
//! 11. interactive → [`INTERACTIVE_NOT_AVAILABLE`]; otherwise [`run_mode`].
//!
//! Every error goes to stderr as `Error: …` with exit status 1.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::args::{Args, Severity, parse_args, trim_js, unknown_options_message};
use super::export::export_from_file;
use super::help::help_text;
use super::input::{InitialMessage, build_initial_message, process_file_args, read_piped_stdin};
use super::mode::{AppMode, INTERACTIVE_NOT_AVAILABLE, ModeRequest, resolve_app_mode, run_mode};
use crate::config::list_models::list_models;
use crate::config::paths::{AgentPaths, resolve_path};
use crate::config::registry::ModelRegistry;
use crate::config::settings::SettingsManager;
use crate::storage::paths::is_valid_session_id;
use crate::tools::path::lexical_normalize;

/// The first arguments pi treats as its package commands (pi-rs has none yet).
pub const REFERENCE_SUBCOMMANDS: [&str; 6] =
    ["install", "remove", "uninstall", "update", "list", "config"];

/// Printed after an extension load failure.
pub const EXTENSION_LOAD_FAILURE_HINT: &str = "Hint: Start without extensions using \"pi -ne\".";

/// Why pi-rs fails every `-e` path.
pub const EXTENSIONS_NOT_SUPPORTED: &str = "extensions are not supported by pi-rs yet";

/// The process surroundings the start-up sequence reads.
pub struct Host<'a> {
    /// Whether fd 0 is a terminal.
    pub stdin_is_tty: bool,
    /// Whether fd 1 is a terminal.
    pub stdout_is_tty: bool,
    /// The working directory.
    pub cwd: PathBuf,
    /// The agent directory.
    pub agent_dir: PathBuf,
    /// `PI_OFFLINE` is `1`, `true` or `yes` (case-insensitive for the words).
    pub offline_env: bool,
    /// Standard input (read only when piped).
    pub stdin: &'a mut dyn Read,
    /// Standard output.
    pub stdout: &'a mut dyn Write,
    /// Standard error.
    pub stderr: &'a mut dyn Write,
}

/// pi's `isTruthyEnvFlag`: `1`, or `true`/`yes` in any case.
pub fn is_truthy_env_flag(value: Option<&str>) -> bool {
    match value {
        Some(v) => v == "1" || v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("yes"),
        None => false,
    }
}

/// The directory holding pi-rs's documentation (`$PI_PACKAGE_DIR/docs`, else the `docs`
/// folder of the source tree this binary was built from).
pub fn docs_dir() -> PathBuf {
    match std::env::var_os("PI_PACKAGE_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("docs"),
        None => lexical_normalize(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")),
    }
}

fn fail(err: &mut dyn Write, message: &str) -> i32 {
    let _ = writeln!(err, "Error: {message}");
    1
}

fn conflicts(args: &Args) -> Option<String> {
    if args.fork.is_some() {
        let mut with = Vec::new();
        if args.session.is_some() {
            with.push("--session");
        }
        if args.continue_session {
            with.push("--continue");
        }
        if args.resume {
            with.push("--resume");
        }
        if args.no_session {
            with.push("--no-session");
        }
        if !with.is_empty() {
            return Some(format!(
                "--fork cannot be combined with {}",
                with.join(", ")
            ));
        }
    }
    if let Some(id) = &args.session_id {
        let mut with = Vec::new();
        if args.session.is_some() {
            with.push("--session");
        }
        if args.continue_session {
            with.push("--continue");
        }
        if args.resume {
            with.push("--resume");
        }
        if !with.is_empty() {
            return Some(format!(
                "--session-id cannot be combined with {}",
                with.join(", ")
            ));
        }
        if !is_valid_session_id(id) {
            return Some(
                "Session id must be non-empty, contain only alphanumeric characters, '-', '_', \
                 and '.', and start and end with an alphanumeric character"
                    .into(),
            );
        }
    }
    None
}

/// The start-up diagnostics pi reports once its runtime exists: unknown long options, then
/// one error per `-e` path. Each is the text after `Error: `.
pub fn startup_errors(args: &Args, cwd: &Path) -> Vec<String> {
    let mut errors: Vec<String> = unknown_options_message(&args.unknown_flags)
        .into_iter()
        .collect();
    for ext in &args.extensions {
        let abs = lexical_normalize(&resolve_path(ext, cwd));
        errors.push(format!(
            "Failed to load extension \"{}\": {EXTENSIONS_NOT_SUPPORTED}",
            abs.display()
        ));
    }
    errors
}

/// Runs `pi` with `argv` (without the program name) and returns the exit status.
pub fn run(argv: &[String], host: Host<'_>) -> i32 {
    let Host {
        stdin_is_tty,
        stdout_is_tty,
        cwd,
        agent_dir,
        offline_env,
        stdin,
        stdout,
        stderr,
    } = host;
    if argv.first().is_some_and(|a| a == "auth") {
        return crate::auth_command::run(argv, &agent_dir, stdout, stderr);
    }
    if let Some(cmd) = argv
        .first()
        .filter(|a| REFERENCE_SUBCOMMANDS.contains(&a.as_str()))
    {
        return fail(stderr, &format!("pi-rs does not support '{cmd}' yet"));
    }
    let offline = offline_env || argv.iter().any(|a| a == "--offline");
    let args = parse_args(argv);
    for d in &args.diagnostics {
        let _ = writeln!(stderr, "{}", d.render());
    }
    if args
        .diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error)
    {
        return 1;
    }
    if args.version {
        let _ = writeln!(stdout, "{}", crate::VERSION);
        return 0;
    }
    if let Some(input) = &args.export {
        return match export_from_file(input, args.messages.first().map(String::as_str), &cwd) {
            Ok(path) => {
                let _ = writeln!(stdout, "Exported to: {}", path.display());
                0
            }
            Err(e) => fail(stderr, &e),
        };
    }
    let mut mode = resolve_app_mode(&args, stdin_is_tty, stdout_is_tty);
    if mode == AppMode::Rpc && !args.file_args.is_empty() {
        return fail(stderr, "@file arguments are not supported in RPC mode");
    }
    if let Some(message) = conflicts(&args) {
        return fail(stderr, &message);
    }
    if args.resume {
        let _ = writeln!(stderr, "{INTERACTIVE_NOT_AVAILABLE}");
        return 1;
    }
    if args.name.as_deref().is_some_and(|n| trim_js(n).is_empty()) {
        return fail(stderr, "--name requires a non-empty value");
    }
    // pi takes stdout over (its writes go to stderr) in every non-interactive mode; only a
    // bare `--help` / `--list-models` (no `-p`, no `--mode`) is exempt.
    let metadata_to_stderr = args.print || args.mode.is_some();
    if args.help {
        let out: &mut dyn Write = if metadata_to_stderr { stderr } else { stdout };
        let _ = write!(out, "{}", help_text());
        return 0;
    }
    if let Some(list) = &args.list_models {
        let registry = ModelRegistry::load(&AgentPaths::new(agent_dir.clone()));
        let search = match list {
            super::args::ListModels::All => None,
            super::args::ListModels::Search(s) => Some(s.as_str()),
        };
        if let Some(message) = registry.auth().syntax_error() {
            // pi 0.85.0 warns about the failed availability refresh, then dies on the same
            // `JSON.parse` error (an uncaught `SyntaxError`, exit 1) without listing anything.
            let _ = write!(
                stderr,
                "Warning: errors loading models.json:\nAvailability refresh: {message}\n\nSyntaxError: {message}\n"
            );
            return 1;
        }
        let out = list_models(&registry, search, &docs_dir());
        let _ = write!(stderr, "{}", out.stderr);
        let listing: &mut dyn Write = if metadata_to_stderr { stderr } else { stdout };
        let _ = write!(listing, "{}", out.stdout);
        return 0;
    }
    // pi selects the session (and asks about another project's) before reading stdin. Its
    // question goes through `console.log`, which lands on stderr once pi has taken stdout
    // over (every mode but the interactive one).
    let mut args = args;
    let question_out: &mut dyn Write = if mode == AppMode::Interactive {
        stdout
    } else {
        stderr
    };
    if let Some(code) = crate::modes::store::confirm_cross_project_session(
        &mut args,
        &cwd,
        &agent_dir,
        stdin,
        question_out,
    ) {
        return code;
    }
    let mut stdin_text = None;
    if mode != AppMode::Rpc && !stdin_is_tty {
        stdin_text = match read_piped_stdin(stdin) {
            Ok(text) => text,
            Err(e) => return fail(stderr, &format!("Could not read stdin: {e}")),
        };
        if stdin_text.is_some() && mode == AppMode::Interactive {
            mode = AppMode::Print;
        }
    }
    let initial = if mode == AppMode::Rpc {
        InitialMessage::default()
    } else {
        // Project settings count only for trusted projects; trust is decided with the
        // session, so the image setting is read from the global settings here.
        let auto_resize = SettingsManager::load(&cwd, &agent_dir, false).image_auto_resize();
        match process_file_args(&args.file_args, &cwd, auto_resize) {
            Ok(files) => build_initial_message(stdin_text, files, &args.messages),
            Err(e) => return fail(stderr, &e),
        }
    };
    let errors = startup_errors(&args, &cwd);
    if !errors.is_empty() {
        for e in &errors {
            let _ = writeln!(stderr, "Error: {e}");
        }
        if !args.extensions.is_empty() {
            let _ = writeln!(stderr, "{EXTENSION_LOAD_FAILURE_HINT}");
        }
        return 1;
    }
    if mode == AppMode::Interactive {
        let _ = writeln!(stderr, "{INTERACTIVE_NOT_AVAILABLE}");
        return 1;
    }
    let request = ModeRequest {
        args,
        mode,
        cwd,
        agent_dir,
        offline,
        initial,
    };
    run_mode(request, stdout, stderr)
}
