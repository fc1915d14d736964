//! The built-in slash commands of the interactive mode, recognised as pi recognises them
//! (`modes/interactive/interactive-mode.js`: the exact word, or the word and a space before
//! its argument), and the `/` menu's list in pi's order (`core/slash-commands.js`). Any
//! other `/text` goes to the session as a prompt, where extension commands, `/skill:name`
//! and prompt templates are expanded, as in pi.

/// A built-in command of the `/` menu: its name, what it does (our words) and the argument
/// hint pi shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Builtin {
    /// The name without `/`.
    pub name: &'static str,
    /// The menu's description.
    pub description: &'static str,
    /// pi's argument hint, if the command takes one it completes.
    pub argument_hint: Option<&'static str>,
}

const fn b(name: &'static str, description: &'static str) -> Builtin {
    Builtin {
        name,
        description,
        argument_hint: None,
    }
}

/// pi's built-in commands in pi's menu order.
pub(crate) const BUILTINS: &[Builtin] = &[
    b("settings", "Open the settings"),
    Builtin {
        argument_hint: Some("<provider/model>"),
        ..b("model", "Pick the model (opens the selector)")
    },
    b("tree", "Navigate the session tree (switch branches)"),
    Builtin {
        argument_hint: Some("<level>"),
        ..b("thinking", "Set the thinking level")
    },
    b("scoped-models", "Choose the models Ctrl+P cycles through"),
    b(
        "export",
        "Export the session (HTML, or .jsonl by the file name)",
    ),
    b("import", "Import a JSONL session file and resume it"),
    b("share", "Share the session as a secret GitHub gist"),
    b("copy", "Copy the last agent message to the clipboard"),
    b("name", "Set the session's display name"),
    b("session", "Show session info and stats"),
    b("changelog", "Show the changelog"),
    b("hotkeys", "Show the keyboard shortcuts"),
    b("fork", "Fork a new session from an earlier user message"),
    b("clone", "Duplicate the session at the current position"),
    b("trust", "Save the project trust decision"),
    Builtin {
        argument_hint: Some("<provider>"),
        ..b("login", "Set up provider authentication")
    },
    b("logout", "Remove provider authentication"),
    b("new", "Start a new session"),
    b("compact", "Compact the session context now"),
    b("resume", "Resume another session"),
    b(
        "reload",
        "Reload keybindings, extensions, skills, prompts, themes and context files",
    ),
    b("quit", "Quit pi"),
];

/// A recognised command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Slash {
    /// `/quit`.
    Quit,
    /// `/name [name]` (the trimmed argument; empty shows the current name).
    Name(String),
    /// `/session`.
    Session,
    /// `/compact [instructions]`.
    Compact(Option<String>),
    /// `/copy`.
    Copy,
    /// `/model [search]`.
    Model(Option<String>),
    /// `/thinking [level]`.
    Thinking(Option<String>),
    /// `/export [path]` (pi's path argument: quoted, or up to the first blank).
    Export(Option<String>),
    /// `/import [path]`.
    Import(Option<String>),
    /// `/hotkeys`.
    Hotkeys,
    /// `/fork`.
    Fork,
    /// `/clone`.
    Clone,
    /// `/new`.
    New,
    /// `/resume`.
    Resume,
    /// `/tree`.
    Tree,
    /// `/settings`.
    Settings,
    /// `/trust`.
    Trust,
    /// `/debug`.
    Debug,
    /// `/scoped-models`.
    ScopedModels,
    /// `/changelog`.
    Changelog,
    /// `/share`.
    Share,
    /// `/reload`.
    Reload,
    /// `/login [provider]`.
    Login(Option<String>),
    /// `/logout`.
    Logout,
}

/// `text` as a built-in command, if it is one.
pub(crate) fn parse(text: &str) -> Option<Slash> {
    let arg = |word: &str| -> Option<Option<String>> {
        if text == word {
            Some(None)
        } else {
            text.strip_prefix(word)
                .and_then(|rest| rest.strip_prefix(char::is_whitespace))
                .map(|rest| Some(rest.trim().to_owned()))
        }
    };
    let nonempty = |a: Option<String>| a.filter(|s| !s.is_empty());
    let exact = [
        ("/quit", Slash::Quit),
        ("/session", Slash::Session),
        ("/copy", Slash::Copy),
        ("/hotkeys", Slash::Hotkeys),
        ("/fork", Slash::Fork),
        ("/clone", Slash::Clone),
        ("/new", Slash::New),
        ("/resume", Slash::Resume),
        ("/tree", Slash::Tree),
        ("/settings", Slash::Settings),
        ("/trust", Slash::Trust),
        ("/debug", Slash::Debug),
        ("/scoped-models", Slash::ScopedModels),
        ("/changelog", Slash::Changelog),
        ("/share", Slash::Share),
        ("/reload", Slash::Reload),
        ("/logout", Slash::Logout),
    ];
    if let Some((_, cmd)) = exact.into_iter().find(|(w, _)| *w == text) {
        return Some(cmd);
    }
    if let Some(a) = arg("/login") {
        return Some(Slash::Login(nonempty(a)));
    }
    if let Some(a) = arg("/compact") {
        return Some(Slash::Compact(nonempty(a)));
    }
    if let Some(a) = arg("/model") {
        return Some(Slash::Model(nonempty(a)));
    }
    if let Some(a) = arg("/thinking") {
        return Some(Slash::Thinking(nonempty(a)));
    }
    if text == "/export" || text.starts_with("/export ") {
        return Some(Slash::Export(path_argument(text, "/export")));
    }
    if text == "/import" || text.starts_with("/import ") {
        return Some(Slash::Import(path_argument(text, "/import")));
    }
    // pi matches `/name` as a prefix (`/name\s*`), so `/namex` is not it.
    if let Some(a) = arg("/name") {
        return Some(Slash::Name(a.unwrap_or_default()));
    }
    None
}

/// pi's `getPathCommandArgument`: the text after `command `, quoted (`"a b"` or `'a b'`, an
/// unclosed quote gives nothing) or up to the first blank.
fn path_argument(text: &str, command: &str) -> Option<String> {
    let rest = text.strip_prefix(command)?.strip_prefix(' ')?.trim_start();
    let first = rest.chars().next()?;
    if first == '"' || first == '\'' {
        let body = &rest[1..];
        return body.find(first).map(|end| body[..end].to_owned());
    }
    Some(
        rest.split(char::is_whitespace)
            .next()
            .unwrap_or(rest)
            .to_owned(),
    )
}

/// A count as JavaScript's `toLocaleString()` writes it in the `en-US` locale: `1,234,567`.
pub(crate) fn locale_count(n: f64) -> String {
    let n = if n.is_finite() {
        n.max(0.0).round()
    } else {
        0.0
    };
    let digits = format!("{n:.0}");
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_as_pi_recognises_them() {
        assert_eq!(parse("/quit"), Some(Slash::Quit));
        assert_eq!(parse("/quit now"), None);
        assert_eq!(parse("/session"), Some(Slash::Session));
        assert_eq!(parse("/compact"), Some(Slash::Compact(None)));
        assert_eq!(
            parse("/compact keep the API notes"),
            Some(Slash::Compact(Some("keep the API notes".into())))
        );
        assert_eq!(parse("/compacted"), None);
        assert_eq!(parse("/name"), Some(Slash::Name(String::new())));
        assert_eq!(
            parse("/name  my work "),
            Some(Slash::Name("my work".into()))
        );
        assert_eq!(parse("/copy"), Some(Slash::Copy));
        assert_eq!(parse("/skill:review"), None);
        assert_eq!(parse("/model"), Some(Slash::Model(None)));
        assert_eq!(
            parse("/model  openai/gpt-4o "),
            Some(Slash::Model(Some("openai/gpt-4o".into())))
        );
        assert_eq!(
            parse("/thinking high"),
            Some(Slash::Thinking(Some("high".into())))
        );
        assert_eq!(parse("/new"), Some(Slash::New));
        assert_eq!(parse("/new thing"), None);
        assert_eq!(parse("/tree"), Some(Slash::Tree));
        assert_eq!(parse("/settings"), Some(Slash::Settings));
        assert_eq!(parse("/reload"), Some(Slash::Reload));
        assert_eq!(
            parse("/login anthropic"),
            Some(Slash::Login(Some("anthropic".into())))
        );
        assert_eq!(parse("/login"), Some(Slash::Login(None)));
        assert_eq!(parse("/logout"), Some(Slash::Logout));
        assert_eq!(parse("/export"), Some(Slash::Export(None)));
        assert_eq!(
            parse("/export out.jsonl more"),
            Some(Slash::Export(Some("out.jsonl".into())))
        );
        assert_eq!(
            parse("/export \"my file.html\""),
            Some(Slash::Export(Some("my file.html".into())))
        );
        assert_eq!(parse("/export 'open"), Some(Slash::Export(None)));
        assert_eq!(parse("/import"), Some(Slash::Import(None)));
        assert_eq!(parse("hello"), None);
    }

    #[test]
    fn the_menu_has_every_pi_builtin_once_in_pi_order() {
        let names: Vec<_> = BUILTINS.iter().map(|b| b.name).collect();
        assert_eq!(names.len(), 23);
        assert_eq!(names[0], "settings");
        assert_eq!(names[22], "quit");
        // Every menu entry is handled: built or saying it is not built yet.
        for n in &names {
            assert!(parse(&format!("/{n}")).is_some(), "/{n}");
        }
    }

    #[test]
    fn counts_with_thousands_separators() {
        assert_eq!(locale_count(0.0), "0");
        assert_eq!(locale_count(999.0), "999");
        assert_eq!(locale_count(1000.0), "1,000");
        assert_eq!(locale_count(1_234_567.0), "1,234,567");
        assert_eq!(locale_count(f64::NAN), "0");
    }
}
