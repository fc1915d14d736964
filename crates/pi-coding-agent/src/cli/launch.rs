//! The command line, validated once: argv → a [`Command`] (a [`LaunchConfig`] for a run).
//!
//! Mirrors the argument half of pi-coding-agent 0.85.0 `main.js` (`main`), in its order of
//! checks, so which error wins matches the reference:
//! 1. a subcommand as the first argument (`install`, `remove`, `uninstall`, `update`,
//!    `list`, `config`, `auth`) → its own command with the whole argv;
//! 2. parse; every diagnostic (`Warning: …`/`Error: …`) is returned for printing; any error
//!    → exit 1;
//! 3. `--version`; 4. `--export`;
//! 5. the mode ([`resolve_app_mode`]); `@file` with rpc → error;
//! 6. `--fork` / `--session-id` conflicts and the session id syntax;
//! 7. `--resume` outside the interactive mode → [`SESSION_PICKER_NOT_AVAILABLE`]; an empty `--name`;
//! 8. `--help`, `--list-models`;
//! 9. otherwise a run ([`Command::Launch`]).
//!
//! The start-up diagnostics pi reports only once its extensions are loaded (unknown long
//! options, which an extension might have registered, and the extensions that fail to load)
//! are left to the launch: [`LaunchConfig::extensions`] and [`LaunchConfig::unknown_flags`]
//! carry what it needs, and it reports them after the session question and the piped stdin,
//! where pi does.
//!
//! Nothing here reads a file or the environment: the caller passes what it needs
//! ([`CliEnv`]).

use super::args::{Args, Diagnostic, FlagValue, ListModels, Severity, parse_args, trim_js};
use super::mode::{AppMode, SESSION_PICKER_NOT_AVAILABLE, resolve_app_mode};
use crate::storage::session_paths::is_valid_session_id;

/// The first arguments pi treats as its package commands.
pub(crate) const REFERENCE_SUBCOMMANDS: [&str; 5] =
    ["install", "remove", "uninstall", "update", "list"];

/// Printed after an extension load failure.
pub(crate) const EXTENSION_LOAD_FAILURE_HINT: &str =
    "Hint: Start without extensions using \"pi -ne\".";

/// What the command line reads from its surroundings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CliEnv {
    /// Whether fd 0 is a terminal.
    pub stdin_is_tty: bool,
    /// Whether fd 1 is a terminal.
    pub stdout_is_tty: bool,
}

/// pi's `isTruthyEnvFlag`: `1`, or `true`/`yes` in any case.
pub(crate) fn is_truthy_env_flag(value: Option<&str>) -> bool {
    match value {
        Some(v) => v == "1" || v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("yes"),
        None => false,
    }
}

/// The outcome of [`parse`]: the parse diagnostics (printed first, in order, one line each)
/// and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Parsed {
    /// Warnings and errors of the scanner.
    pub diagnostics: Vec<Diagnostic>,
    /// The command, or why there is none (exit 1).
    pub command: Result<Command, CliError>,
}

/// Why the command line ends the process with status 1.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CliError {
    /// A parse diagnostic was an error; the diagnostics say it all.
    #[error("")]
    Diagnostics,
    /// `Error: <message>` (a reference subcommand, a conflict, an invalid value).
    #[error("Error: {0}")]
    Invalid(String),
    /// `--resume`: pi's session picker.
    #[error("{SESSION_PICKER_NOT_AVAILABLE}")]
    SessionPickerNotAvailable,
}

impl CliError {
    /// The stderr line after the diagnostics (`None` for [`CliError::Diagnostics`]).
    pub(crate) fn line(&self) -> Option<String> {
        match self {
            CliError::Diagnostics => None,
            e => Some(e.to_string()),
        }
    }
}

/// What `pi` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Command {
    /// `--version`: the version on stdout.
    Version,
    /// `--export <file> [output]`: the session as HTML.
    Export {
        /// The session file.
        input: String,
        /// The first message, the output file.
        output: Option<String>,
    },
    /// `--help`.
    Help {
        /// `-p` or `--mode` given: pi has taken stdout over, the text goes to stderr.
        to_stderr: bool,
    },
    /// `--list-models [search]`.
    ListModels {
        /// The fuzzy search.
        search: Option<String>,
        /// The listing goes to stderr (as [`Command::Help`]).
        to_stderr: bool,
    },
    /// `pi auth …`: the credentials subcommand ([`crate::auth_command`]), with its own
    /// arguments (the whole argv, `auth` first).
    Auth(Vec<String>),
    /// `pi config …`: the resource configuration screen
    /// ([`crate::modes::interactive::config_view`]), the whole argv, `config` first.
    Config(Vec<String>),
    /// `pi install|remove|uninstall|update|list …` ([`crate::packages::command`]), the whole
    /// argv, the subcommand first.
    Package(Vec<String>),
    /// A session run.
    Launch(Box<LaunchConfig>),
}

/// Which session a run uses (`--no-session`, `--session`, `--continue`, `--fork`,
/// `--session-id`, `--session-dir`); the conflicts between them are already refused.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SessionFlags {
    /// `--no-session`: in memory.
    pub no_session: bool,
    /// `--session <path|id>`.
    pub session: Option<String>,
    /// `--continue`, `-c`.
    pub continue_session: bool,
    /// `--fork <path|id>`.
    pub fork: Option<String>,
    /// `--session-id <id>` (a valid id).
    pub session_id: Option<String>,
    /// `--session-dir <dir>`.
    pub session_dir: Option<String>,
    /// `-r/--resume` (interactive mode only): the run starts with the session picker.
    pub resume: bool,
}

/// The model options: `--provider`, `--model`, `--api-key`, `--thinking`, `--models`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ModelFlags {
    /// `--provider <name>`.
    pub provider: Option<String>,
    /// `--model <pattern>`.
    pub model: Option<String>,
    /// `--api-key <key>`.
    pub api_key: Option<String>,
    /// `--thinking <level>` (one of [`super::args::THINKING_LEVELS`]).
    pub thinking: Option<String>,
    /// `--models <patterns>`: the model scope.
    pub models: Option<Vec<String>>,
}

/// The built-in tool options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ToolFlags {
    /// `--tools`, `-t <list>`.
    pub tools: Option<Vec<String>>,
    /// `--no-tools`, `-nt`.
    pub no_tools: bool,
    /// `--no-builtin-tools`, `-nbt`.
    pub no_builtin_tools: bool,
    /// `--exclude-tools`, `-xt <list>`.
    pub exclude_tools: Option<Vec<String>>,
}

/// Skills, prompt templates, context files and the system prompt.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ResourceFlags {
    /// `--skill <path>`, in order.
    pub skills: Vec<String>,
    /// `--prompt-template <path>`, in order.
    pub prompt_templates: Vec<String>,
    /// `--no-skills`, `-ns`.
    pub no_skills: bool,
    /// `--no-prompt-templates`, `-np`.
    pub no_prompt_templates: bool,
    /// `--no-context-files`, `-nc`.
    pub no_context_files: bool,
    /// `--system-prompt <text>`.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt <text>`, in order.
    pub append_system_prompt: Vec<String>,
    /// `--theme <path>`, in order (files or directories; the interactive mode reads them).
    pub themes: Vec<String>,
    /// `--no-themes`: no theme discovery, only the `--theme` paths.
    pub no_themes: bool,
    /// `--use-theme <name[/name]>`: the theme setting for this run (not saved).
    pub use_theme: Option<String>,
}

/// A validated command line for a session run: what everything after the command line
/// reads (no raw flags).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LaunchConfig {
    /// The mode from the flags and terminals; piped stdin later turns
    /// [`AppMode::Interactive`] into [`AppMode::Print`].
    pub mode: AppMode,
    /// The session selection.
    pub session: SessionFlags,
    /// The model.
    pub model: ModelFlags,
    /// The built-in tools.
    pub tools: ToolFlags,
    /// The resources and the system prompt.
    pub resources: ResourceFlags,
    /// `--approve` → `Some(true)`, `--no-approve` → `Some(false)`.
    pub project_trust_override: Option<bool>,
    /// `--name`, trimmed (never empty).
    pub name: Option<String>,
    /// The messages, in order (the first joins stdin and the files).
    pub messages: Vec<String>,
    /// `@file` arguments without the `@`, in order (never in rpc mode).
    pub file_args: Vec<String>,
    /// `-e`/`--extension` paths, in order (relative to the working directory).
    pub extensions: Vec<String>,
    /// `-ne`: only the `-e` extensions load.
    pub no_extensions: bool,
    /// Unknown long options, in first-seen order: the flags of the loaded extensions, or the
    /// start-up error `Unknown option(s): …`.
    pub unknown_flags: Vec<(String, FlagValue)>,
    /// `--tui-mode fullscreen`: the interactive mode on the alternate screen (else the
    /// main screen, pi's `regular`).
    pub fullscreen: bool,
}

fn invalid(message: impl Into<String>) -> CliError {
    CliError::Invalid(message.into())
}

/// The session-choosing flags given, in pi's order (`--no-session` only when `no_session`
/// counts as a conflict).
fn session_flags_given(args: &Args, no_session: bool) -> Vec<&'static str> {
    [
        (args.session.is_some(), "--session"),
        (args.continue_session, "--continue"),
        (args.resume, "--resume"),
        (no_session && args.no_session, "--no-session"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect()
}

fn conflicts(args: &Args) -> Option<String> {
    if args.fork.is_some() {
        let with = session_flags_given(args, true);
        if !with.is_empty() {
            return Some(format!(
                "--fork cannot be combined with {}",
                with.join(", ")
            ));
        }
    }
    if let Some(id) = &args.session_id {
        let with = session_flags_given(args, false);
        if !with.is_empty() {
            return Some(format!(
                "--session-id cannot be combined with {}",
                with.join(", ")
            ));
        }
        if !is_valid_session_id(id) {
            return Some(crate::storage::StoreError::InvalidSessionId.to_string());
        }
    }
    None
}

/// Parses `argv` (without the program name); see the module docs for the order of checks.
pub(crate) fn parse(argv: &[String], env: &CliEnv) -> Parsed {
    if argv.first().is_some_and(|a| a == "auth") {
        return Parsed {
            diagnostics: Vec::new(),
            command: Ok(Command::Auth(argv.to_vec())),
        };
    }
    if argv.first().is_some_and(|a| a == "config") {
        return Parsed {
            diagnostics: Vec::new(),
            command: Ok(Command::Config(argv.to_vec())),
        };
    }
    if argv
        .first()
        .is_some_and(|a| REFERENCE_SUBCOMMANDS.contains(&a.as_str()))
    {
        return Parsed {
            diagnostics: Vec::new(),
            command: Ok(Command::Package(argv.to_vec())),
        };
    }
    let mut args = parse_args(argv);
    let diagnostics = std::mem::take(&mut args.diagnostics);
    let command = if diagnostics.iter().any(|d| d.severity == Severity::Error) {
        Err(CliError::Diagnostics)
    } else {
        command(args, env)
    };
    Parsed {
        diagnostics,
        command,
    }
}

fn command(args: Args, env: &CliEnv) -> Result<Command, CliError> {
    if args.version {
        return Ok(Command::Version);
    }
    if let Some(input) = args.export {
        return Ok(Command::Export {
            input,
            output: args.messages.into_iter().next(),
        });
    }
    let mode = resolve_app_mode(&args, env.stdin_is_tty, env.stdout_is_tty);
    if mode == AppMode::Rpc && !args.file_args.is_empty() {
        return Err(invalid("@file arguments are not supported in RPC mode"));
    }
    if let Some(message) = conflicts(&args) {
        return Err(invalid(message));
    }
    if args.resume && mode != AppMode::Interactive {
        return Err(CliError::SessionPickerNotAvailable);
    }
    let name = match args.name.as_deref().map(trim_js) {
        Some("") => return Err(invalid("--name requires a non-empty value")),
        name => name.map(str::to_owned),
    };
    // pi takes stdout over (its writes go to stderr) in every non-interactive mode; only a
    // bare `--help` / `--list-models` (no `-p`, no `--mode`) is exempt.
    let to_stderr = args.print || args.mode.is_some();
    if args.help {
        return Ok(Command::Help { to_stderr });
    }
    if let Some(list) = args.list_models {
        let search = match list {
            ListModels::All => None,
            ListModels::Search(s) => Some(s),
        };
        return Ok(Command::ListModels { search, to_stderr });
    }
    Ok(Command::Launch(Box::new(LaunchConfig {
        mode,
        session: SessionFlags {
            no_session: args.no_session,
            session: args.session,
            continue_session: args.continue_session,
            fork: args.fork,
            session_id: args.session_id,
            session_dir: args.session_dir,
            resume: args.resume,
        },
        model: ModelFlags {
            provider: args.provider,
            model: args.model,
            api_key: args.api_key,
            thinking: args.thinking,
            models: args.models,
        },
        tools: ToolFlags {
            tools: args.tools,
            no_tools: args.no_tools,
            no_builtin_tools: args.no_builtin_tools,
            exclude_tools: args.exclude_tools,
        },
        resources: ResourceFlags {
            skills: args.skills,
            prompt_templates: args.prompt_templates,
            no_skills: args.no_skills,
            no_prompt_templates: args.no_prompt_templates,
            no_context_files: args.no_context_files,
            system_prompt: args.system_prompt,
            append_system_prompt: args.append_system_prompt,
            themes: args.themes,
            no_themes: args.no_themes,
            use_theme: args.use_theme,
        },
        project_trust_override: args.project_trust_override,
        name,
        messages: args.messages,
        file_args: args.file_args,
        extensions: args.extensions,
        no_extensions: args.no_extensions,
        unknown_flags: args.unknown_flags,
        fullscreen: args.tui_mode.as_deref() == Some("fullscreen"),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in(argv: &[&str], stdin_is_tty: bool) -> Parsed {
        let argv: Vec<String> = argv.iter().map(|s| (*s).to_owned()).collect();
        parse(
            &argv,
            &CliEnv {
                stdin_is_tty,
                stdout_is_tty: true,
            },
        )
    }

    fn launch(argv: &[&str]) -> LaunchConfig {
        match parse_in(argv, true).command {
            Ok(Command::Launch(config)) => *config,
            other => panic!("not a launch: {other:?}"),
        }
    }

    #[test]
    fn checks_run_in_pis_order() {
        // A parse error wins over --version; --version over --export; conflicts over --help.
        let p = parse_in(&["--version", "-x"], true);
        assert_eq!(p.command, Err(CliError::Diagnostics));
        assert_eq!(p.diagnostics.len(), 1);
        assert_eq!(
            parse_in(&["--export", "a.jsonl", "--version"], true).command,
            Ok(Command::Version)
        );
        assert_eq!(
            parse_in(&["--help", "--fork", "x", "-c"], true).command,
            Err(invalid("--fork cannot be combined with --continue"))
        );
        // `-r` needs the interactive mode: refused with `-p`, and before `--help` (as pi
        // validates the flags first).
        assert_eq!(
            parse_in(&["--help", "-r", "-p"], true).command,
            Err(CliError::SessionPickerNotAvailable)
        );
        assert_eq!(
            parse_in(&["--help", "-r"], true).command,
            Ok(Command::Help { to_stderr: false })
        );
        assert_eq!(
            parse_in(&["-p", "--help"], true).command,
            Ok(Command::Help { to_stderr: true })
        );
        assert_eq!(
            parse_in(&["install", "--version"], true).command,
            Ok(Command::Package(vec!["install".into(), "--version".into()]))
        );
    }

    #[test]
    fn a_launch_groups_the_flags_and_defers_the_extension_diagnostics() {
        let c = launch(&[
            "-p",
            "--model",
            "m",
            "--no-session",
            "-t",
            "read",
            "--name",
            "  x ",
            "--bogus",
            "-e",
            "ext.ts",
            "hi",
        ]);
        assert_eq!(c.mode, AppMode::Print);
        assert_eq!(c.model.model.as_deref(), Some("m"));
        assert!(c.session.no_session);
        assert_eq!(c.tools.tools, Some(vec!["read".to_owned()]));
        assert_eq!(c.name.as_deref(), Some("x"));
        assert_eq!(c.messages, vec!["hi".to_owned()]);
        assert_eq!(c.extensions, ["ext.ts"]);
        assert!(!c.no_extensions);
        assert_eq!(c.unknown_flags, [("bogus".to_owned(), FlagValue::Present)]);
    }
}
