//! `pi` argument parsing: a small hand-written scanner.
//!
//! Mirrors pi-coding-agent 0.85.0 `cli/args.js` (`parseArgs`). clap is not used: pi's rules
//! fight it at every turn — multi-letter single-dash flags (`-nt`, `-nbt`, `-xt`), no bundled
//! short flags, no `--opt=value` form, a value option at the end of the line silently
//! becoming an *unknown long option*, `-p` swallowing the next word, unknown long options
//! that take a value and are only reported later (they may belong to an extension). A
//! scanner mirroring pi's `if … else if` chain reproduces all of that by construction.
//!
//! Rules, in the order pi applies them to each argument:
//! - `--` ends options: every later argument is a message, or a file when it starts with `@`.
//! - A known option is recognised by its exact spelling. A value option takes the next
//!   argument only if there is one (whatever it looks like: `--model -x` sets the model to
//!   `-x`); without one the argument falls through to the unknown-option rules below.
//!   Exceptions: `--name`/`-n` without a value is the error `--name requires a value`;
//!   `--use-theme` and `--tui-mode` validate their value; `--list-models` takes the next
//!   argument as a search only if it starts with neither `-` nor `@`.
//! - `-p`/`--print` takes the next argument as a message unless it starts with `@`, or with
//!   `-` but not `---`.
//! - `--mode` accepts `text`, `json`, `rpc`; any other value is consumed and ignored.
//! - `--thinking` with a level outside [`THINKING_LEVELS`] is only a warning.
//! - `@path` is a file argument.
//! - Any other `--name[=value]` is an unknown long option, collected in [`Args::unknown_flags`]
//!   (`--name=value` splits at the first `=`; else the next argument is its value unless it
//!   starts with `-` or `@`). They are reported later, together (see
//!   [`unknown_options_message`]).
//! - Any other `-x` is the error `Unknown option: -x`, recorded at once.
//! - Anything else is a message.

/// The thinking levels `--thinking` accepts, in pi's order.
pub(crate) const THINKING_LEVELS: [&str; 7] =
    ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// `--mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutputMode {
    /// `--mode text` (print mode's default output).
    Text,
    /// `--mode json`: JSONL session events.
    Json,
    /// `--mode rpc`: JSONL commands on stdin.
    Rpc,
}

/// `--list-models` with or without a search pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ListModels {
    /// `--list-models`: every available model.
    All,
    /// `--list-models <search>`: fuzzy-filtered.
    Search(String),
}

/// The value an unknown long option carried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FlagValue {
    /// No value (`--x` followed by nothing, an option or a file argument).
    Present,
    /// `--x=value` or `--x value`.
    Value(String),
}

/// Severity of a parse [`Diagnostic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Severity {
    /// Printed as `Warning: …`; parsing goes on.
    Warning,
    /// Printed as `Error: …`; the process exits with status 1 after printing all diagnostics.
    Error,
}

/// A message produced while parsing (printed to stderr in order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Diagnostic {
    /// Warning or error.
    pub severity: Severity,
    /// The text after the `Error: ` / `Warning: ` prefix.
    pub message: String,
}

impl Diagnostic {
    fn error(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
        }
    }

    fn warning(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            message: message.into(),
        }
    }

    /// The line pi prints: `Error: <message>` or `Warning: <message>`.
    pub(crate) fn render(&self) -> String {
        match self.severity {
            Severity::Error => format!("Error: {}", self.message),
            Severity::Warning => format!("Warning: {}", self.message),
        }
    }
}

/// The parsed command line (pi's `Args`). Absent options are `None`/`false`/empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Args {
    /// `--help`, `-h`.
    pub help: bool,
    /// `--version`, `-v`.
    pub version: bool,
    /// `--mode text|json|rpc` (an invalid value leaves it unset).
    pub mode: Option<OutputMode>,
    /// `--print`, `-p`.
    pub print: bool,
    /// `--continue`, `-c`.
    pub continue_session: bool,
    /// `--resume`, `-r` (the TUI session picker).
    pub resume: bool,
    /// `--provider <name>`.
    pub provider: Option<String>,
    /// `--model <pattern>`.
    pub model: Option<String>,
    /// `--api-key <key>`.
    pub api_key: Option<String>,
    /// `--system-prompt <text>`.
    pub system_prompt: Option<String>,
    /// `--append-system-prompt <text>`, repeatable, in order.
    pub append_system_prompt: Vec<String>,
    /// `--name`, `-n <name>` (verbatim; trimmed later).
    pub name: Option<String>,
    /// `--no-session`.
    pub no_session: bool,
    /// `--session <path|id>`.
    pub session: Option<String>,
    /// `--session-id <id>`.
    pub session_id: Option<String>,
    /// `--fork <path|id>`.
    pub fork: Option<String>,
    /// `--session-dir <dir>`.
    pub session_dir: Option<String>,
    /// `--models <patterns>`: split on `,`, each trimmed (empty items kept, as pi).
    pub models: Option<Vec<String>>,
    /// `--no-tools`, `-nt`.
    pub no_tools: bool,
    /// `--no-builtin-tools`, `-nbt`.
    pub no_builtin_tools: bool,
    /// `--tools`, `-t <list>`: split on `,`, trimmed, empty items dropped.
    pub tools: Option<Vec<String>>,
    /// `--exclude-tools`, `-xt <list>`: split on `,`, trimmed, empty items dropped.
    pub exclude_tools: Option<Vec<String>>,
    /// `--thinking <level>`, only when valid (one of [`THINKING_LEVELS`]).
    pub thinking: Option<String>,
    /// `--export <file>`.
    pub export: Option<String>,
    /// `--extension`, `-e <path>`, repeatable.
    pub extensions: Vec<String>,
    /// `--no-extensions`, `-ne`.
    pub no_extensions: bool,
    /// `--skill <path>`, repeatable.
    pub skills: Vec<String>,
    /// `--no-skills`, `-ns`.
    pub no_skills: bool,
    /// `--prompt-template <path>`, repeatable.
    pub prompt_templates: Vec<String>,
    /// `--no-prompt-templates`, `-np`.
    pub no_prompt_templates: bool,
    /// `--theme <path>`, repeatable (TUI only: accepted and ignored).
    pub themes: Vec<String>,
    /// `--use-theme <name>` (TUI only: accepted and ignored).
    pub use_theme: Option<String>,
    /// `--no-themes` (TUI only: accepted and ignored).
    pub no_themes: bool,
    /// `--no-context-files`, `-nc`.
    pub no_context_files: bool,
    /// `--list-models [search]`.
    pub list_models: Option<ListModels>,
    /// `--tui-mode regular|fullscreen` (TUI only: accepted and ignored).
    pub tui_mode: Option<String>,
    /// `--verbose`.
    pub verbose: bool,
    /// `--approve`/`-a` → `Some(true)`, `--no-approve`/`-na` → `Some(false)` (last wins).
    pub project_trust_override: Option<bool>,
    /// `--offline`.
    pub offline: bool,
    /// Messages, in order.
    pub messages: Vec<String>,
    /// `@file` arguments without the `@`, in order.
    pub file_args: Vec<String>,
    /// Unknown long options by name (without `--`), in first-seen order; a repeated name
    /// keeps its first position and its last value (a JavaScript `Map`).
    pub unknown_flags: Vec<(String, FlagValue)>,
    /// Warnings and errors, in order.
    pub diagnostics: Vec<Diagnostic>,
}

impl Args {
    /// Whether any diagnostic is an error (the process then exits with status 1).
    #[cfg(test)]
    pub(crate) fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }

    fn set_unknown_flag(&mut self, name: &str, value: FlagValue) {
        match self.unknown_flags.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.unknown_flags.push((name.to_owned(), value)),
        }
    }
}

/// `Unknown option: --a` / `Unknown options: --a, --b` for unknown long options no extension
/// registered (pi's `agent-session-services.js`); `None` when there are none.
pub(crate) fn unknown_options_message(flags: &[(String, FlagValue)]) -> Option<String> {
    if flags.is_empty() {
        return None;
    }
    let names: Vec<String> = flags.iter().map(|(n, _)| format!("--{n}")).collect();
    let plural = if names.len() == 1 { "" } else { "s" };
    Some(format!("Unknown option{plural}: {}", names.join(", ")))
}

fn split_list(value: &str, keep_empty: bool) -> Vec<String> {
    value
        .split(',')
        .map(|s| trim_js(s).to_owned())
        .filter(|s| keep_empty || !s.is_empty())
        .collect()
}

/// Whether `c` is white space for JavaScript's `String.prototype.trim`: the `Zs` spaces,
/// TAB, VT, FF, U+FEFF and the line terminators LF, CR, U+2028, U+2029 (not U+0085).
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// JavaScript `String.prototype.trim` (see [`is_js_whitespace`]).
pub(crate) fn trim_js(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

fn file_or_message(args: &mut Args, arg: &str) {
    match arg.strip_prefix('@') {
        Some(path) => args.file_args.push(path.to_owned()),
        None => args.messages.push(arg.to_owned()),
    }
}

/// Parses the arguments after the program name. Never fails: problems become
/// [`Args::diagnostics`] and [`Args::unknown_flags`].
pub(crate) fn parse_args(argv: &[String]) -> Args {
    let mut a = Args::default();
    let mut i = 0;
    while i < argv.len() {
        let arg = argv[i].as_str();
        let next = argv.get(i + 1).map(String::as_str);
        // Takes the next argument as this option's value, when there is one.
        let take = |i: &mut usize| -> Option<String> {
            next.map(|v| {
                *i += 1;
                v.to_owned()
            })
        };
        match arg {
            "--" => {
                for rest in &argv[i + 1..] {
                    file_or_message(&mut a, rest);
                }
                break;
            }
            "--help" | "-h" => a.help = true,
            "--version" | "-v" => a.version = true,
            "--mode" if next.is_some() => {
                a.mode = match take(&mut i).as_deref() {
                    Some("text") => Some(OutputMode::Text),
                    Some("json") => Some(OutputMode::Json),
                    Some("rpc") => Some(OutputMode::Rpc),
                    _ => a.mode,
                }
            }
            "--continue" | "-c" => a.continue_session = true,
            "--resume" | "-r" => a.resume = true,
            "--provider" if next.is_some() => a.provider = take(&mut i),
            "--model" if next.is_some() => a.model = take(&mut i),
            "--api-key" if next.is_some() => a.api_key = take(&mut i),
            "--system-prompt" if next.is_some() => a.system_prompt = take(&mut i),
            "--append-system-prompt" if next.is_some() => {
                a.append_system_prompt.extend(take(&mut i));
            }
            "--name" | "-n" => match take(&mut i) {
                Some(name) => a.name = Some(name),
                None => a
                    .diagnostics
                    .push(Diagnostic::error("--name requires a value")),
            },
            "--no-session" => a.no_session = true,
            "--session" if next.is_some() => a.session = take(&mut i),
            "--session-id" if next.is_some() => a.session_id = take(&mut i),
            "--fork" if next.is_some() => a.fork = take(&mut i),
            "--session-dir" if next.is_some() => a.session_dir = take(&mut i),
            "--models" if next.is_some() => {
                a.models = take(&mut i).map(|v| split_list(&v, true));
            }
            "--no-tools" | "-nt" => a.no_tools = true,
            "--no-builtin-tools" | "-nbt" => a.no_builtin_tools = true,
            "--tools" | "-t" if next.is_some() => {
                a.tools = take(&mut i).map(|v| split_list(&v, false));
            }
            "--exclude-tools" | "-xt" if next.is_some() => {
                a.exclude_tools = take(&mut i).map(|v| split_list(&v, false));
            }
            "--thinking" if next.is_some() => {
                let level = take(&mut i).unwrap_or_default();
                if THINKING_LEVELS.contains(&level.as_str()) {
                    a.thinking = Some(level);
                } else {
                    a.diagnostics.push(Diagnostic::warning(format!(
                        "Invalid thinking level \"{level}\". Valid values: {}",
                        THINKING_LEVELS.join(", ")
                    )));
                }
            }
            "--print" | "-p" => {
                a.print = true;
                if let Some(n) = next
                    && !n.starts_with('@')
                    && (!n.starts_with('-') || n.starts_with("---"))
                {
                    a.messages.push(n.to_owned());
                    i += 1;
                }
            }
            "--export" if next.is_some() => a.export = take(&mut i),
            "--extension" | "-e" if next.is_some() => a.extensions.extend(take(&mut i)),
            "--no-extensions" | "-ne" => a.no_extensions = true,
            "--skill" if next.is_some() => a.skills.extend(take(&mut i)),
            "--prompt-template" if next.is_some() => a.prompt_templates.extend(take(&mut i)),
            "--theme" if next.is_some() => a.themes.extend(take(&mut i)),
            "--use-theme" => match next {
                Some(theme) if !theme.starts_with('-') => {
                    a.use_theme = Some(theme.to_owned());
                    i += 1;
                }
                _ => a
                    .diagnostics
                    .push(Diagnostic::error("--use-theme requires a theme name")),
            },
            "--no-skills" | "-ns" => a.no_skills = true,
            "--no-prompt-templates" | "-np" => a.no_prompt_templates = true,
            "--no-themes" => a.no_themes = true,
            "--no-context-files" | "-nc" => a.no_context_files = true,
            "--list-models" => {
                a.list_models = Some(match next {
                    Some(s) if !s.starts_with('-') && !s.starts_with('@') => {
                        i += 1;
                        ListModels::Search(s.to_owned())
                    }
                    _ => ListModels::All,
                });
            }
            "--tui-mode" => match next {
                Some(m @ ("regular" | "fullscreen")) => {
                    a.tui_mode = Some(m.to_owned());
                    i += 1;
                }
                None => a.diagnostics.push(Diagnostic::error(
                    "--tui-mode requires regular or fullscreen",
                )),
                Some(m) if m.starts_with('-') => a.diagnostics.push(Diagnostic::error(
                    "--tui-mode requires regular or fullscreen",
                )),
                Some(m) => {
                    i += 1;
                    a.diagnostics.push(Diagnostic::error(format!(
                        "Invalid TUI mode \"{m}\". Valid values: regular, fullscreen"
                    )));
                }
            },
            "--verbose" => a.verbose = true,
            "--approve" | "-a" => a.project_trust_override = Some(true),
            "--no-approve" | "-na" => a.project_trust_override = Some(false),
            "--offline" => a.offline = true,
            _ if arg.starts_with('@') => a.file_args.push(arg[1..].to_owned()),
            _ if arg.starts_with("--") => match arg.find('=') {
                Some(eq) => a.set_unknown_flag(&arg[2..eq], FlagValue::Value(arg[eq + 1..].into())),
                None => match next {
                    Some(v) if !v.starts_with('-') && !v.starts_with('@') => {
                        a.set_unknown_flag(&arg[2..], FlagValue::Value(v.to_owned()));
                        i += 1;
                    }
                    _ => a.set_unknown_flag(&arg[2..], FlagValue::Present),
                },
            },
            _ if arg.starts_with('-') => a
                .diagnostics
                .push(Diagnostic::error(format!("Unknown option: {arg}"))),
            _ => a.messages.push(arg.to_owned()),
        }
        i += 1;
    }
    a
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
