//! `pi --help`: our own wording, listing every option pi 0.85.0 accepts.

/// The help text (ends with a newline).
pub(crate) fn help_text() -> String {
    format!(
        "pi {version} (pi-rs) - a coding agent for the terminal, compatible with pi {reference}

Usage:
  pi [options] [--] [@files...] [messages...]

The first message is sent after the text piped on stdin and the contents of the @files;
every further message is sent as its own prompt once the previous one is done.

Commands:
  pi install <source> [-l]     Install a package (npm:, git: or a path) and add it to settings
  pi remove <source> [-l]      Remove a package and its settings entry
  pi uninstall <source> [-l]   Alias for remove
  pi update [source|self|pi]   Update packages (pi-rs itself is updated by reinstalling it)
  pi list                      List the packages of the user and project settings
  pi config [-l]               Enable or disable resources (Tab switches scope)
  pi auth <command>            Print credentials or check provider readiness
  pi <command> --help          Show help for install/remove/uninstall/update/list/config/auth

Options:
  --provider <name>              Provider of the model
  --model <pattern>              Model id or pattern (\"provider/id\", optional \":<thinking>\")
  --api-key <key>                API key for the selected model's provider (overrides env vars)
  --system-prompt <text|file>    Replace the default system prompt
  --append-system-prompt <text|file>
                                 Add to the system prompt (repeatable)
  --mode <mode>                  Output: text (default), json (session events as JSONL) or rpc
  --print, -p                    Answer the prompt and exit (non-interactive)
  --continue, -c                 Continue the most recent session of this directory
  --resume, -r                   Pick a session to resume (needs the interactive mode)
  --session <path|id>            Use a session file, or a session id or id prefix
  --session-id <id>              Use this exact session id, creating the session if needed
  --fork <path|id>               Start a new session as a copy of another one
  --session-dir <dir>            Where sessions are stored and looked up
  --no-session                   Keep the session in memory only
  --name, -n <name>              Name the session
  --models <patterns>            Comma-separated model patterns to cycle through
  --no-tools, -nt                Start with no tools enabled
  --no-builtin-tools, -nbt       Start without the built-in tools
  --tools, -t <tools>            Comma-separated tools to enable
  --exclude-tools, -xt <tools>   Comma-separated tools to disable
  --thinking <level>             Thinking level: off, minimal, low, medium, high, xhigh, max
  --extension, -e <path>         Load an extension file (can be used multiple times)
  --no-extensions, -ne           Do not discover extensions
  --skill <path>                 Load a skill file or directory (repeatable)
  --no-skills, -ns               Do not load skills
  --prompt-template <path>       Load a prompt template file or directory (repeatable)
  --no-prompt-templates, -np     Do not load prompt templates
  --no-context-files, -nc        Do not load AGENTS.md / CLAUDE.md files
  --theme <path>                 Load a theme file or directory (can be used multiple times)
  --use-theme <name[/name]>      Set the initial interactive theme for this run
  --no-themes                    Disable theme discovery and loading
  --tui-mode <mode>              TUI mode: regular (default) or fullscreen
  --export <file> [output]       Write a session file as HTML and exit
  --list-models [search]         List the models you have credentials for, optionally filtered
  --verbose                      Verbose startup
  --approve, -a                  Trust this project's .pi files for this run
  --no-approve, -na              Ignore this project's .pi files for this run
  --offline                      No network access at startup (also PI_OFFLINE=1)
  --help, -h                     Show this help
  --version, -v                  Show the version
  --                             Stop reading options; the rest are messages and @files

Examples:
  pi -p \"Summarize README.md\"
  pi -p @src/main.rs \"Explain this file\"
  git diff | pi -p \"Review this change\"
  pi --mode json -p \"List the files here\"
  pi --model openai/gpt-4o-mini --thinking high -p \"Plan the refactor\"
  pi -p -- \"- a prompt starting with a dash\"

Environment:
  PI_CODING_AGENT_DIR            Configuration directory (default ~/.pi/agent)
  PI_CODING_AGENT_SESSION_DIR    Session directory (--session-dir wins)
  PI_OFFLINE                     1, true or yes: no network access at startup
  <PROVIDER>_API_KEY             Provider keys, e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY,
                                 GEMINI_API_KEY; custom providers go in models.json

Built-in tools: read, bash, edit, write (on by default); grep, find, ls (off by default).
",
        version = crate::VERSION,
        reference = crate::REFERENCE_VERSION,
    )
}
