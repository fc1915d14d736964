//! The keybinding table: pi's action ids with their default keys, key specs such as
//! `ctrl+shift+p`, user overrides from pi's `keybindings.json`, and matching a decoded key
//! against an action.
//!
//! The ids and defaults are pi's (pi-tui's `TUI_KEYBINDINGS` in `dist/keybindings.js` and
//! pi-coding-agent's `KEYBINDINGS` in `dist/core/keybindings.js`, listed in its
//! `docs/keybindings.md`), including the platform variants for Windows, WSL and macOS.

use std::collections::HashMap;
use std::fmt;

use crate::input::{KeyCode, KeyEvent, KeyEventKind, Modifiers};

/// A key a spec names. It is [`KeyCode`] plus `clear`, which pi accepts in specs but no
/// decoder here produces (so a `clear` binding never fires).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecKey {
    /// A decodable key.
    Code(KeyCode),
    /// The keypad Clear key (`clear`).
    Clear,
}

/// One key with modifiers, as written in pi's keybinding strings: `modifier+…+key`, the
/// modifiers `ctrl`, `shift`, `alt`, `super` in any order, names case-insensitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeySpec {
    /// The key.
    pub key: SpecKey,
    /// The modifiers that must be held (exactly these).
    pub modifiers: Modifiers,
}

/// Why a key spec did not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeySpecError {
    /// The spec was empty or had an empty part (`ctrl+`).
    #[error("empty key in key spec {0:?}")]
    Empty(String),
    /// A part before the key is not a modifier.
    #[error("unknown modifier {modifier:?} in key spec {spec:?}")]
    UnknownModifier {
        /// The spec.
        spec: String,
        /// The part that is not `ctrl`, `shift`, `alt` or `super`.
        modifier: String,
    },
    /// The key name is not one pi knows.
    #[error("unknown key {key:?} in key spec {spec:?}")]
    UnknownKey {
        /// The spec.
        spec: String,
        /// The key part.
        key: String,
    },
}

/// The symbol keys pi's key format lists.
const SYMBOL_KEYS: &str = "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?";

impl KeySpec {
    /// Parses a spec like `ctrl+shift+p`, `alt+enter`, `pageUp`, `f5`, `ctrl+]`, `+`.
    pub fn parse(spec: &str) -> Result<Self, KeySpecError> {
        let trimmed = spec.trim();
        if trimmed.is_empty() {
            return Err(KeySpecError::Empty(spec.to_owned()));
        }
        // The key itself may be `+`: `ctrl++` or a bare `+`.
        let (mods_part, key_part) = if trimmed == "+" {
            ("", "+")
        } else if let Some(prefix) = trimmed.strip_suffix("++") {
            (prefix, "+")
        } else {
            match trimmed.rsplit_once('+') {
                Some((m, k)) => (m, k),
                None => ("", trimmed),
            }
        };
        if key_part.is_empty() {
            return Err(KeySpecError::Empty(spec.to_owned()));
        }
        let mut modifiers = Modifiers::NONE;
        if !mods_part.is_empty() {
            for part in mods_part.split('+') {
                modifiers = modifiers
                    | match part.to_ascii_lowercase().as_str() {
                        "ctrl" => Modifiers::CTRL,
                        "shift" => Modifiers::SHIFT,
                        "alt" => Modifiers::ALT,
                        "super" => Modifiers::SUPER,
                        "" => return Err(KeySpecError::Empty(spec.to_owned())),
                        _ => {
                            return Err(KeySpecError::UnknownModifier {
                                spec: spec.to_owned(),
                                modifier: part.to_owned(),
                            });
                        }
                    };
            }
        }
        let key = parse_key_name(key_part).ok_or_else(|| KeySpecError::UnknownKey {
            spec: spec.to_owned(),
            key: key_part.to_owned(),
        })?;
        Ok(Self { key, modifiers })
    }

    /// Whether a decoded key event is this key. Releases never match (components that
    /// want releases look at them directly); presses and repeats do. A letter typed
    /// upper-case counts as Shift+letter; `ctrl+_` and `ctrl+-` are the same control byte.
    pub fn matches(&self, event: &KeyEvent) -> bool {
        if event.kind == KeyEventKind::Release {
            return false;
        }
        let SpecKey::Code(spec_code) = self.key else {
            return false;
        };
        match (spec_code, event.code) {
            (KeyCode::Char(want), KeyCode::Char(got)) => {
                let mut got_mods = event.modifiers;
                let mut got = got;
                if got.is_uppercase() && got.to_lowercase().eq(std::iter::once(want)) {
                    got = want;
                    got_mods = got_mods | Modifiers::SHIFT;
                }
                let same_key = got == want
                    || (self.modifiers.contains(Modifiers::CTRL)
                        && matches!((want, got), ('_', '-') | ('-', '_')));
                same_key && got_mods == self.modifiers
            }
            (want, got) => want == got && event.modifiers == self.modifiers,
        }
    }
}

fn parse_key_name(name: &str) -> Option<SpecKey> {
    let lower = name.to_ascii_lowercase();
    let code = match lower.as_str() {
        "escape" | "esc" => KeyCode::Escape,
        "enter" | "return" => KeyCode::Enter,
        "tab" => KeyCode::Tab,
        "space" => KeyCode::Char(' '),
        "backspace" => KeyCode::Backspace,
        "delete" => KeyCode::Delete,
        "insert" => KeyCode::Insert,
        "clear" => return Some(SpecKey::Clear),
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "pageup" => KeyCode::PageUp,
        "pagedown" => KeyCode::PageDown,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        _ => {
            if let Some(n) = lower.strip_prefix('f')
                && let Ok(n) = n.parse::<u8>()
                && (1..=12).contains(&n)
            {
                return Some(SpecKey::Code(KeyCode::F(n)));
            }
            let mut chars = lower.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return None;
            }
            if c.is_ascii_lowercase() || c.is_ascii_digit() || SYMBOL_KEYS.contains(c) {
                KeyCode::Char(c)
            } else {
                return None;
            }
        }
    };
    Some(SpecKey::Code(code))
}

impl fmt::Display for KeySpec {
    /// pi's canonical spelling: modifiers in the order shift, ctrl, alt, super.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (m, name) in [
            (Modifiers::SHIFT, "shift"),
            (Modifiers::CTRL, "ctrl"),
            (Modifiers::ALT, "alt"),
            (Modifiers::SUPER, "super"),
        ] {
            if self.modifiers.contains(m) {
                write!(f, "{name}+")?;
            }
        }
        match self.key {
            SpecKey::Clear => f.write_str("clear"),
            SpecKey::Code(code) => match code {
                KeyCode::Char(' ') => f.write_str("space"),
                KeyCode::Char(c) => write!(f, "{c}"),
                KeyCode::Enter => f.write_str("enter"),
                KeyCode::Tab => f.write_str("tab"),
                KeyCode::Backspace => f.write_str("backspace"),
                KeyCode::Escape => f.write_str("escape"),
                KeyCode::Up => f.write_str("up"),
                KeyCode::Down => f.write_str("down"),
                KeyCode::Left => f.write_str("left"),
                KeyCode::Right => f.write_str("right"),
                KeyCode::Home => f.write_str("home"),
                KeyCode::End => f.write_str("end"),
                KeyCode::PageUp => f.write_str("pageUp"),
                KeyCode::PageDown => f.write_str("pageDown"),
                KeyCode::Insert => f.write_str("insert"),
                KeyCode::Delete => f.write_str("delete"),
                KeyCode::F(n) => write!(f, "f{n}"),
            },
        }
    }
}

/// The platform, for the defaults pi varies by it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Platform {
    /// Linux and other Unix.
    #[default]
    Unix,
    /// macOS (tree folding prefers `alt+left`/`alt+right`).
    MacOs,
    /// Native Windows (`ctrl+z` undo, no suspend).
    Windows,
    /// Linux under WSL (`WSL_DISTRO_NAME` or `WSL_INTEROP` set): Windows-style defaults for
    /// keys Windows terminals intercept, `alt+z` undo, Unix suspend.
    Wsl,
}

impl Platform {
    /// The platform this process runs on (WSL from its environment variables).
    pub fn current() -> Self {
        if cfg!(windows) {
            Self::Windows
        } else if cfg!(target_os = "macos") {
            Self::MacOs
        } else if std::env::var_os("WSL_DISTRO_NAME").is_some_and(|v| !v.is_empty())
            || std::env::var_os("WSL_INTEROP").is_some_and(|v| !v.is_empty())
        {
            Self::Wsl
        } else {
            Self::Unix
        }
    }

    fn windows_keys(self) -> bool {
        matches!(self, Self::Windows | Self::Wsl)
    }
}

/// One action: its id, default keys and a short description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionDef {
    /// pi's id, e.g. `tui.editor.cursorUp`.
    pub id: &'static str,
    /// Default key specs, in pi's order.
    pub default_keys: Vec<&'static str>,
    /// What it does, for help screens.
    pub description: &'static str,
}

/// Every action pi defines, with its defaults for `platform`, in pi's order.
pub fn action_defs(platform: Platform) -> Vec<ActionDef> {
    let win = platform.windows_keys();
    let def = |id, keys: &[&'static str], description| ActionDef {
        id,
        default_keys: keys.to_vec(),
        description,
    };
    vec![
        def(
            "tui.editor.cursorUp",
            &["up"],
            "Move cursor up (older history at the top)",
        ),
        def(
            "tui.editor.cursorDown",
            &["down"],
            "Move cursor down (newer history at the bottom)",
        ),
        def(
            "tui.editor.historyPrevious",
            &[],
            "Previous prompt from history",
        ),
        def("tui.editor.historyNext", &[], "Next prompt from history"),
        def(
            "tui.editor.cursorLeft",
            &["left", "ctrl+b"],
            "Move cursor left",
        ),
        def(
            "tui.editor.cursorRight",
            &["right", "ctrl+f"],
            "Move cursor right",
        ),
        def(
            "tui.editor.cursorWordLeft",
            &["alt+left", "ctrl+left", "alt+b"],
            "Move one word left",
        ),
        def(
            "tui.editor.cursorWordRight",
            &["alt+right", "ctrl+right", "alt+f"],
            "Move one word right",
        ),
        def(
            "tui.editor.cursorLineStart",
            &["home", "ctrl+home", "ctrl+a"],
            "Go to the start of the line",
        ),
        def(
            "tui.editor.cursorLineEnd",
            &["end", "ctrl+end", "ctrl+e"],
            "Go to the end of the line",
        ),
        def(
            "tui.editor.jumpForward",
            &["ctrl+]"],
            "Jump forward to a character",
        ),
        def(
            "tui.editor.jumpBackward",
            &["ctrl+alt+]"],
            "Jump backward to a character",
        ),
        def(
            "tui.editor.pageUp",
            &["pageUp", "ctrl+pageUp"],
            "Scroll the editor up a page",
        ),
        def(
            "tui.editor.pageDown",
            &["pageDown", "ctrl+pageDown"],
            "Scroll the editor down a page",
        ),
        def(
            "tui.editor.deleteCharBackward",
            &["backspace"],
            "Delete the character before the cursor",
        ),
        def(
            "tui.editor.deleteCharForward",
            &["delete", "ctrl+d"],
            "Delete the character under the cursor",
        ),
        def(
            "tui.editor.deleteWordBackward",
            &["ctrl+w", "alt+backspace"],
            "Delete the word before the cursor",
        ),
        def(
            "tui.editor.deleteWordForward",
            &["alt+d", "alt+delete"],
            "Delete the word after the cursor",
        ),
        def(
            "tui.editor.deleteToLineStart",
            &["ctrl+u"],
            "Delete to the start of the line",
        ),
        def(
            "tui.editor.deleteToLineEnd",
            &["ctrl+k"],
            "Delete to the end of the line",
        ),
        def(
            "tui.editor.yank",
            &["ctrl+y"],
            "Paste the last deleted text",
        ),
        def(
            "tui.editor.yankPop",
            &["alt+y"],
            "Cycle through deleted text after a yank",
        ),
        def(
            "tui.editor.undo",
            match platform {
                Platform::Windows => &["ctrl+z"],
                Platform::Wsl => &["alt+z"],
                _ => &["ctrl+-"],
            },
            "Undo the last edit",
        ),
        def(
            "tui.input.newLine",
            &["shift+enter", "ctrl+j"],
            "Insert a new line",
        ),
        def("tui.input.submit", &["enter"], "Submit"),
        def("tui.input.tab", &["tab"], "Tab / complete"),
        def("tui.input.copy", &["ctrl+c"], "Copy the selection"),
        def("tui.select.up", &["up"], "Selection up"),
        def("tui.select.down", &["down"], "Selection down"),
        def("tui.select.pageUp", &["pageUp"], "Selection up a page"),
        def(
            "tui.select.pageDown",
            &["pageDown"],
            "Selection down a page",
        ),
        def("tui.select.confirm", &["enter"], "Confirm the selection"),
        def("tui.select.cancel", &["escape", "ctrl+c"], "Cancel"),
        def(
            "tui.altScreen.pageUp",
            &["pageUp"],
            "Scroll the transcript up a page",
        ),
        def(
            "tui.altScreen.pageDown",
            &["pageDown"],
            "Scroll the transcript down a page",
        ),
        def(
            "tui.altScreen.halfPageUp",
            &[],
            "Scroll the transcript up half a page",
        ),
        def(
            "tui.altScreen.halfPageDown",
            &[],
            "Scroll the transcript down half a page",
        ),
        def(
            "tui.altScreen.lineUp",
            &[],
            "Scroll the transcript up a line",
        ),
        def(
            "tui.altScreen.lineDown",
            &[],
            "Scroll the transcript down a line",
        ),
        def(
            "tui.altScreen.previousPrompt",
            if win {
                &["ctrl+up"]
            } else {
                &["ctrl+shift+up", "ctrl+up"]
            },
            "Jump to the previous prompt",
        ),
        def(
            "tui.altScreen.nextPrompt",
            if win {
                &["ctrl+down"]
            } else {
                &["ctrl+shift+down", "ctrl+down"]
            },
            "Jump to the next prompt",
        ),
        def(
            "tui.altScreen.search",
            if win { &["ctrl+f"] } else { &["ctrl+shift+f"] },
            "Search the transcript",
        ),
        def(
            "tui.altScreen.searchNext",
            &["enter", "ctrl+g"],
            "Next search match",
        ),
        def(
            "tui.altScreen.searchPrevious",
            &["shift+enter", "ctrl+shift+g"],
            "Previous search match",
        ),
        def("tui.altScreen.searchClose", &["escape"], "Close the search"),
        def(
            "tui.altScreen.top",
            &["home"],
            "Scroll to the top of the transcript",
        ),
        def(
            "tui.altScreen.bottom",
            &["end"],
            "Scroll to the end and follow",
        ),
        def("app.interrupt", &["escape"], "Cancel / abort"),
        def("app.clear", &["ctrl+c"], "Clear the editor (twice: exit)"),
        def("app.exit", &["ctrl+d"], "Exit when the editor is empty"),
        def(
            "app.suspend",
            if platform == Platform::Windows {
                &[]
            } else {
                &["ctrl+z"]
            },
            "Suspend to the background",
        ),
        def(
            "app.thinking.cycle",
            &["shift+tab"],
            "Cycle the thinking level",
        ),
        def("app.model.cycleForward", &["ctrl+p"], "Next model"),
        def(
            "app.model.cycleBackward",
            if win { &["alt+p"] } else { &["shift+ctrl+p"] },
            "Previous model",
        ),
        def("app.model.select", &["ctrl+l"], "Open the model selector"),
        def(
            "app.tools.expand",
            &["ctrl+o"],
            "Collapse or expand tool output",
        ),
        def(
            "app.thinking.toggle",
            &["ctrl+t"],
            "Collapse or expand thinking blocks",
        ),
        def(
            "app.session.toggleNamedFilter",
            &["ctrl+n"],
            "Toggle the named-sessions filter",
        ),
        def(
            "app.editor.external",
            &["ctrl+g"],
            "Edit in the external editor",
        ),
        def("app.message.copy", &["ctrl+x"], "Copy a message"),
        def(
            "app.message.followUp",
            if win { &["ctrl+q"] } else { &["alt+enter"] },
            "Queue a follow-up message",
        ),
        def(
            "app.message.dequeue",
            if win { &["alt+q"] } else { &["alt+up"] },
            "Restore queued messages to the editor",
        ),
        def(
            "app.clipboard.pasteImage",
            if win { &["alt+v"] } else { &["ctrl+v"] },
            "Paste an image (or text) from the clipboard",
        ),
        def("app.session.new", &[], "Start a new session"),
        def("app.session.tree", &[], "Open the session tree"),
        def("app.session.fork", &[], "Fork the session"),
        def("app.session.resume", &[], "Resume a session"),
        def(
            "app.tree.foldOrUp",
            if platform == Platform::MacOs {
                &["alt+left", "ctrl+left"]
            } else {
                &["ctrl+left", "alt+left"]
            },
            "Fold the branch or go up",
        ),
        def(
            "app.tree.unfoldOrDown",
            if platform == Platform::MacOs {
                &["alt+right", "ctrl+right"]
            } else {
                &["ctrl+right", "alt+right"]
            },
            "Unfold the branch or go down",
        ),
        def("app.tree.editLabel", &["shift+l"], "Edit the node's label"),
        def(
            "app.tree.toggleLabelTimestamp",
            &["shift+t"],
            "Toggle label timestamps",
        ),
        def(
            "app.session.togglePath",
            &["ctrl+p"],
            "Toggle the session path",
        ),
        def(
            "app.session.toggleSort",
            &["ctrl+s"],
            "Toggle the sort order",
        ),
        def("app.session.rename", &["ctrl+r"], "Rename the session"),
        def("app.session.delete", &["ctrl+d"], "Delete the session"),
        def(
            "app.session.deleteNoninvasive",
            &["ctrl+backspace"],
            "Delete the session when the query is empty",
        ),
        def("app.models.save", &["ctrl+s"], "Save the model selection"),
        def("app.models.enableAll", &["ctrl+a"], "Enable all models"),
        def("app.models.clearAll", &["ctrl+x"], "Clear all models"),
        def(
            "app.models.toggleProvider",
            &["ctrl+p"],
            "Toggle the provider's models",
        ),
        def("app.models.reorderUp", &["alt+up"], "Move the model up"),
        def(
            "app.models.reorderDown",
            &["alt+down"],
            "Move the model down",
        ),
        def(
            "app.tree.filter.default",
            &["ctrl+d"],
            "Tree filter: default",
        ),
        def(
            "app.tree.filter.noTools",
            &["ctrl+t"],
            "Tree filter: hide tool results",
        ),
        def(
            "app.tree.filter.userOnly",
            &["ctrl+u"],
            "Tree filter: user messages only",
        ),
        def(
            "app.tree.filter.labeledOnly",
            &["ctrl+l"],
            "Tree filter: labelled entries only",
        ),
        def(
            "app.tree.filter.all",
            &["ctrl+a"],
            "Tree filter: everything",
        ),
        def(
            "app.tree.filter.cycleForward",
            &["ctrl+o"],
            "Next tree filter",
        ),
        def(
            "app.tree.filter.cycleBackward",
            &["shift+ctrl+o"],
            "Previous tree filter",
        ),
    ]
}

/// Pre-namespaced ids of older `keybindings.json` files and their current ids (pi migrates
/// them on load: `KEYBINDING_NAME_MIGRATIONS`).
pub const LEGACY_IDS: &[(&str, &str)] = &[
    ("cursorUp", "tui.editor.cursorUp"),
    ("cursorDown", "tui.editor.cursorDown"),
    ("cursorLeft", "tui.editor.cursorLeft"),
    ("cursorRight", "tui.editor.cursorRight"),
    ("cursorWordLeft", "tui.editor.cursorWordLeft"),
    ("cursorWordRight", "tui.editor.cursorWordRight"),
    ("cursorLineStart", "tui.editor.cursorLineStart"),
    ("cursorLineEnd", "tui.editor.cursorLineEnd"),
    ("jumpForward", "tui.editor.jumpForward"),
    ("jumpBackward", "tui.editor.jumpBackward"),
    ("pageUp", "tui.editor.pageUp"),
    ("pageDown", "tui.editor.pageDown"),
    ("deleteCharBackward", "tui.editor.deleteCharBackward"),
    ("deleteCharForward", "tui.editor.deleteCharForward"),
    ("deleteWordBackward", "tui.editor.deleteWordBackward"),
    ("deleteWordForward", "tui.editor.deleteWordForward"),
    ("deleteToLineStart", "tui.editor.deleteToLineStart"),
    ("deleteToLineEnd", "tui.editor.deleteToLineEnd"),
    ("yank", "tui.editor.yank"),
    ("yankPop", "tui.editor.yankPop"),
    ("undo", "tui.editor.undo"),
    ("newLine", "tui.input.newLine"),
    ("submit", "tui.input.submit"),
    ("tab", "tui.input.tab"),
    ("copy", "tui.input.copy"),
    ("selectUp", "tui.select.up"),
    ("selectDown", "tui.select.down"),
    ("selectPageUp", "tui.select.pageUp"),
    ("selectPageDown", "tui.select.pageDown"),
    ("selectConfirm", "tui.select.confirm"),
    ("selectCancel", "tui.select.cancel"),
    ("interrupt", "app.interrupt"),
    ("clear", "app.clear"),
    ("exit", "app.exit"),
    ("suspend", "app.suspend"),
    ("cycleThinkingLevel", "app.thinking.cycle"),
    ("cycleModelForward", "app.model.cycleForward"),
    ("cycleModelBackward", "app.model.cycleBackward"),
    ("selectModel", "app.model.select"),
    ("expandTools", "app.tools.expand"),
    ("toggleThinking", "app.thinking.toggle"),
    ("toggleSessionNamedFilter", "app.session.toggleNamedFilter"),
    ("externalEditor", "app.editor.external"),
    ("followUp", "app.message.followUp"),
    ("dequeue", "app.message.dequeue"),
    ("pasteImage", "app.clipboard.pasteImage"),
    ("newSession", "app.session.new"),
    ("tree", "app.session.tree"),
    ("fork", "app.session.fork"),
    ("resume", "app.session.resume"),
    ("treeFoldOrUp", "app.tree.foldOrUp"),
    ("treeUnfoldOrDown", "app.tree.unfoldOrDown"),
    ("treeEditLabel", "app.tree.editLabel"),
    ("treeToggleLabelTimestamp", "app.tree.toggleLabelTimestamp"),
    ("toggleSessionPath", "app.session.togglePath"),
    ("toggleSessionSort", "app.session.toggleSort"),
    ("renameSession", "app.session.rename"),
    ("deleteSession", "app.session.delete"),
    ("deleteSessionNoninvasive", "app.session.deleteNoninvasive"),
];

/// Something wrong in a `keybindings.json` that did not stop it from loading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigDiagnostic {
    /// The file is not JSON or not an object; every action keeps its defaults.
    Invalid(String),
    /// An id pi does not define (an extension's, or a typo); kept, but it binds nothing here.
    UnknownId(String),
    /// A value that is neither a string nor an array of strings; that id keeps its defaults.
    InvalidValue {
        /// The id.
        id: String,
    },
    /// A key spec that does not parse; the other keys of that id still apply.
    InvalidKey {
        /// The id.
        id: String,
        /// The parse error.
        error: KeySpecError,
    },
    /// A legacy id and its current id were both set; the current one wins.
    LegacyIdShadowed {
        /// The legacy id, ignored.
        legacy: String,
        /// The current id.
        id: String,
    },
    /// Two or more actions claim the same key in the user's file (pi's conflicts).
    Conflict {
        /// The key spec as written.
        key: String,
        /// The ids claiming it.
        ids: Vec<String>,
    },
}

impl fmt::Display for ConfigDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(reason) => write!(f, "keybindings.json ignored: {reason}"),
            Self::UnknownId(id) => write!(f, "unknown keybinding id {id:?}"),
            Self::InvalidValue { id } => {
                write!(
                    f,
                    "keybinding {id:?}: expected a key string or an array of key strings"
                )
            }
            Self::InvalidKey { id, error } => write!(f, "keybinding {id:?}: {error}"),
            Self::LegacyIdShadowed { legacy, id } => {
                write!(f, "keybinding {legacy:?} ignored: {id:?} is also set")
            }
            Self::Conflict { key, ids } => {
                write!(
                    f,
                    "key {key:?} is bound to several actions: {}",
                    ids.join(", ")
                )
            }
        }
    }
}

/// User overrides as read from `keybindings.json`: id → key strings, in file order,
/// legacy ids migrated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserBindings {
    entries: Vec<(String, Vec<String>)>,
}

impl UserBindings {
    /// Reads pi's `keybindings.json` text. Never fails: problems come back as diagnostics
    /// and the affected entries are skipped (a broken file means "all defaults").
    pub fn parse(json: &str) -> (Self, Vec<ConfigDiagnostic>) {
        let mut diagnostics = Vec::new();
        let text = json.strip_prefix('\u{feff}').unwrap_or(json);
        let value: serde_json::Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                diagnostics.push(ConfigDiagnostic::Invalid(e.to_string()));
                return (Self::default(), diagnostics);
            }
        };
        let serde_json::Value::Object(map) = value else {
            diagnostics.push(ConfigDiagnostic::Invalid("not a JSON object".into()));
            return (Self::default(), diagnostics);
        };
        let mut entries: Vec<(String, Vec<String>)> = Vec::new();
        for (raw_id, value) in &map {
            let id = LEGACY_IDS
                .iter()
                .find(|(legacy, _)| legacy == raw_id)
                .map_or(raw_id.as_str(), |(_, new)| new);
            if id != raw_id && map.contains_key(id) {
                diagnostics.push(ConfigDiagnostic::LegacyIdShadowed {
                    legacy: raw_id.clone(),
                    id: id.to_owned(),
                });
                continue;
            }
            let keys = match value {
                serde_json::Value::String(s) => vec![s.clone()],
                serde_json::Value::Array(items) => {
                    let strings: Option<Vec<String>> = items
                        .iter()
                        .map(|v| v.as_str().map(str::to_owned))
                        .collect();
                    match strings {
                        Some(s) => s,
                        None => {
                            diagnostics.push(ConfigDiagnostic::InvalidValue { id: id.to_owned() });
                            continue;
                        }
                    }
                }
                _ => {
                    diagnostics.push(ConfigDiagnostic::InvalidValue { id: id.to_owned() });
                    continue;
                }
            };
            entries.push((id.to_owned(), keys));
        }
        (Self { entries }, diagnostics)
    }

    /// Reads a `keybindings.json` file. A missing file is no overrides and no diagnostic;
    /// an unreadable one is a diagnostic.
    pub fn load(path: &std::path::Path) -> (Self, Vec<ConfigDiagnostic>) {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Self::default(), Vec::new()),
            Err(e) => (
                Self::default(),
                vec![ConfigDiagnostic::Invalid(format!(
                    "{}: {e}",
                    path.display()
                ))],
            ),
        }
    }

    /// Sets the keys of one id (replacing earlier ones).
    pub fn set(&mut self, id: &str, keys: &[&str]) {
        let keys: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
        match self.entries.iter_mut().find(|(i, _)| i == id) {
            Some(entry) => entry.1 = keys,
            None => self.entries.push((id.to_owned(), keys)),
        }
    }

    /// The overrides, in file order.
    pub fn entries(&self) -> &[(String, Vec<String>)] {
        &self.entries
    }
}

/// The resolved table: every action's keys (user overrides replacing defaults per id).
#[derive(Clone, Debug)]
pub struct Keybindings {
    defs: Vec<ActionDef>,
    keys: HashMap<&'static str, Vec<KeySpec>>,
    diagnostics: Vec<ConfigDiagnostic>,
}

impl Default for Keybindings {
    fn default() -> Self {
        Self::defaults(Platform::current())
    }
}

impl Keybindings {
    /// pi's defaults for `platform`.
    pub fn defaults(platform: Platform) -> Self {
        Self::with_user(platform, &UserBindings::default())
    }

    /// Defaults with `user`'s overrides applied. Problems (unknown ids, bad keys, conflicts)
    /// are kept in [`diagnostics`](Self::diagnostics).
    pub fn with_user(platform: Platform, user: &UserBindings) -> Self {
        let defs = action_defs(platform);
        let mut diagnostics = Vec::new();
        let mut keys = HashMap::new();
        for def in &defs {
            let parsed = def
                .default_keys
                .iter()
                .filter_map(|k| KeySpec::parse(k).ok())
                .collect::<Vec<_>>();
            keys.insert(def.id, parsed);
        }
        let mut claims: Vec<(KeySpec, String, Vec<String>)> = Vec::new();
        for (id, specs) in user.entries() {
            let Some(def) = defs.iter().find(|d| d.id == id) else {
                diagnostics.push(ConfigDiagnostic::UnknownId(id.clone()));
                continue;
            };
            let mut parsed = Vec::new();
            for spec in specs {
                match KeySpec::parse(spec) {
                    Ok(k) => {
                        if !parsed.contains(&k) {
                            parsed.push(k);
                        }
                        match claims.iter_mut().find(|(c, _, _)| *c == k) {
                            Some((_, _, ids)) => {
                                if !ids.contains(id) {
                                    ids.push(id.clone());
                                }
                            }
                            None => claims.push((k, spec.clone(), vec![id.clone()])),
                        }
                    }
                    Err(error) => diagnostics.push(ConfigDiagnostic::InvalidKey {
                        id: id.clone(),
                        error,
                    }),
                }
            }
            keys.insert(def.id, parsed);
        }
        for (_, key, ids) in claims {
            if ids.len() > 1 {
                diagnostics.push(ConfigDiagnostic::Conflict { key, ids });
            }
        }
        Self {
            defs,
            keys,
            diagnostics,
        }
    }

    /// Whether `event` is one of `action`'s keys. An unknown action matches nothing.
    pub fn matches(&self, event: &KeyEvent, action: &str) -> bool {
        self.keys
            .get(action)
            .is_some_and(|specs| specs.iter().any(|s| s.matches(event)))
    }

    /// The keys bound to `action` (empty for an unknown or unbound one).
    pub fn keys(&self, action: &str) -> &[KeySpec] {
        self.keys.get(action).map_or(&[], Vec::as_slice)
    }

    /// Every action, in pi's order.
    pub fn actions(&self) -> &[ActionDef] {
        &self.defs
    }

    /// Problems found while applying the user's file.
    pub fn diagnostics(&self) -> &[ConfigDiagnostic] {
        &self.diagnostics
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{Decoded, Decoder};

    fn spec(s: &str) -> KeySpec {
        KeySpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn ev(code: KeyCode, m: Modifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    fn decode(bytes: &str) -> KeyEvent {
        let mut d = Decoder::new();
        let mut out = d.feed_vec(bytes.as_bytes());
        d.flush_pending(&mut out);
        match out.as_slice() {
            [Decoded::Input(crate::input::InputEvent::Key(k))] => *k,
            other => panic!("{bytes:?}: {other:?}"),
        }
    }

    #[test]
    fn parse_specs() {
        assert_eq!(
            spec("ctrl+shift+p"),
            KeySpec {
                key: SpecKey::Code(KeyCode::Char('p')),
                modifiers: Modifiers::CTRL | Modifiers::SHIFT
            }
        );
        assert_eq!(spec("shift+ctrl+p"), spec("ctrl+shift+p"));
        assert_eq!(spec("Ctrl+P"), spec("ctrl+p"));
        assert_eq!(spec("pageUp").key, SpecKey::Code(KeyCode::PageUp));
        assert_eq!(spec("pageup").key, SpecKey::Code(KeyCode::PageUp));
        assert_eq!(spec("esc"), spec("escape"));
        assert_eq!(spec("return"), spec("enter"));
        assert_eq!(spec("f12").key, SpecKey::Code(KeyCode::F(12)));
        assert_eq!(spec("ctrl+]").key, SpecKey::Code(KeyCode::Char(']')));
        assert_eq!(spec("ctrl+-").key, SpecKey::Code(KeyCode::Char('-')));
        assert_eq!(spec("+").key, SpecKey::Code(KeyCode::Char('+')));
        assert_eq!(spec("ctrl++").modifiers, Modifiers::CTRL);
        assert_eq!(spec("space").key, SpecKey::Code(KeyCode::Char(' ')));
        assert_eq!(spec("clear").key, SpecKey::Clear);
        assert_eq!(spec("super+k").modifiers, Modifiers::SUPER);
        assert!(matches!(KeySpec::parse(""), Err(KeySpecError::Empty(_))));
        assert!(matches!(
            KeySpec::parse("ctrl+"),
            Err(KeySpecError::Empty(_))
        ));
        assert!(matches!(
            KeySpec::parse("hyper+k"),
            Err(KeySpecError::UnknownModifier { .. })
        ));
        assert!(matches!(
            KeySpec::parse("ctrl+foo"),
            Err(KeySpecError::UnknownKey { .. })
        ));
        assert!(matches!(
            KeySpec::parse("f13"),
            Err(KeySpecError::UnknownKey { .. })
        ));
        assert_eq!(spec("shift+ctrl+p").to_string(), "shift+ctrl+p");
        assert_eq!(spec("ctrl+pageup").to_string(), "ctrl+pageUp");
    }

    #[test]
    fn matching_decoded_keys() {
        let kb = Keybindings::defaults(Platform::Unix);
        // Legacy bytes and protocol sequences reach the same actions.
        for bytes in ["\x01", "\x1b[97;5u", "\x1b[27;5;97~", "\x1b[H", "\x1bOH"] {
            assert!(
                kb.matches(&decode(bytes), "tui.editor.cursorLineStart"),
                "{bytes:?}"
            );
        }
        for bytes in ["\x1b[1;3D", "\x1bb", "\x1b[1;5D", "\x1b[98;3u"] {
            assert!(
                kb.matches(&decode(bytes), "tui.editor.cursorWordLeft"),
                "{bytes:?}"
            );
        }
        for bytes in ["\x1b[13;2u", "\x1b[27;2;13~", "\n"] {
            assert!(kb.matches(&decode(bytes), "tui.input.newLine"), "{bytes:?}");
        }
        assert!(!kb.matches(&decode("\r"), "tui.input.newLine"));
        assert!(kb.matches(&decode("\r"), "tui.input.submit"));
        assert!(kb.matches(&decode("\x1f"), "tui.editor.undo"));
        assert!(kb.matches(&decode("\x1b[45;5u"), "tui.editor.undo"));
        assert!(kb.matches(&decode("\x1d"), "tui.editor.jumpForward"));
        assert!(kb.matches(&decode("\x1b\x1d"), "tui.editor.jumpBackward"));
        assert!(kb.matches(&decode("\x1b[112;6u"), "app.model.cycleBackward"));
        assert!(kb.matches(&decode("\x1b[27;6;80~"), "app.model.cycleBackward"));
        assert!(!kb.matches(&decode("\x10"), "app.model.cycleBackward"));
        assert!(kb.matches(&decode("\x10"), "app.model.cycleForward"));
        assert!(kb.matches(&decode("\x1b[Z"), "app.thinking.cycle"));
        assert!(kb.matches(&decode("\x1b\r"), "app.message.followUp"));
        assert!(kb.matches(&decode("\x1b[1;3A"), "app.message.dequeue"));
        // shift+l: legacy upper-case `L` and Kitty's `l` with Shift.
        assert!(kb.matches(&decode("L"), "app.tree.editLabel"));
        assert!(kb.matches(&decode("\x1b[108;2u"), "app.tree.editLabel"));
        assert!(!kb.matches(&decode("l"), "app.tree.editLabel"));
        // Releases never match.
        assert!(!kb.matches(&decode("\x1b[97;5:3u"), "tui.editor.cursorLineStart"));
        // Repeats do.
        assert!(kb.matches(&decode("\x1b[1;1:2D"), "tui.editor.cursorLeft"));
        assert!(!kb.matches(&ev(KeyCode::Char('a'), Modifiers::CTRL), "no.such.action"));
        // ctrl+_ is the same byte as ctrl+-.
        assert!(spec("ctrl+_").matches(&decode("\x1f")));
    }

    #[test]
    fn all_ids_and_platform_defaults() {
        let unix = action_defs(Platform::Unix);
        assert_eq!(unix.len(), 89);
        assert_eq!(unix[0].id, "tui.editor.cursorUp");
        assert_eq!(unix[88].id, "app.tree.filter.cycleBackward");
        for def in &unix {
            for k in &def.default_keys {
                assert!(KeySpec::parse(k).is_ok(), "{}: {k}", def.id);
            }
        }
        let keys = |p, id: &str| {
            Keybindings::defaults(p)
                .keys(id)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(keys(Platform::Unix, "tui.editor.undo"), ["ctrl+-"]);
        assert_eq!(keys(Platform::Windows, "tui.editor.undo"), ["ctrl+z"]);
        assert_eq!(keys(Platform::Wsl, "tui.editor.undo"), ["alt+z"]);
        assert!(keys(Platform::Windows, "app.suspend").is_empty());
        assert_eq!(keys(Platform::Wsl, "app.suspend"), ["ctrl+z"]);
        assert_eq!(keys(Platform::Wsl, "app.message.followUp"), ["ctrl+q"]);
        assert_eq!(
            keys(Platform::MacOs, "app.tree.foldOrUp"),
            ["alt+left", "ctrl+left"]
        );
        assert_eq!(
            keys(Platform::Unix, "tui.altScreen.search"),
            ["shift+ctrl+f"]
        );
    }

    #[test]
    fn user_overrides_from_json() {
        let (user, diags) = UserBindings::parse(
            r#"{
                "tui.editor.historyPrevious": "ctrl+p",
                "tui.editor.historyNext": ["ctrl+n"],
                "cursorLeft": ["left", "alt+h"],
                "tui.select.cancel": [],
                "my.extension.action": "ctrl+q",
                "tui.editor.yank": 5,
                "tui.editor.yankPop": ["alt+y", "hyper+y", "ctrl+nope"],
                "expandTools": "ctrl+e",
                "app.tools.expand": "ctrl+o"
            }"#,
        );
        assert_eq!(
            diags,
            vec![
                ConfigDiagnostic::InvalidValue {
                    id: "tui.editor.yank".into()
                },
                ConfigDiagnostic::LegacyIdShadowed {
                    legacy: "expandTools".into(),
                    id: "app.tools.expand".into()
                },
            ]
        );
        let kb = Keybindings::with_user(Platform::Unix, &user);
        let p = ev(KeyCode::Char('p'), Modifiers::CTRL);
        assert!(kb.matches(&p, "tui.editor.historyPrevious"));
        assert!(
            kb.matches(&p, "app.model.cycleForward"),
            "other ids keep defaults"
        );
        // The legacy id was migrated and replaced the defaults.
        assert!(kb.matches(
            &ev(KeyCode::Char('h'), Modifiers::ALT),
            "tui.editor.cursorLeft"
        ));
        assert!(!kb.matches(
            &ev(KeyCode::Char('b'), Modifiers::CTRL),
            "tui.editor.cursorLeft"
        ));
        // An empty array unbinds.
        assert!(!kb.matches(&ev(KeyCode::Escape, Modifiers::NONE), "tui.select.cancel"));
        // A bad value keeps the defaults.
        assert!(kb.matches(&ev(KeyCode::Char('y'), Modifiers::CTRL), "tui.editor.yank"));
        // Good keys of a list with bad ones still apply.
        assert!(kb.matches(
            &ev(KeyCode::Char('y'), Modifiers::ALT),
            "tui.editor.yankPop"
        ));
        let d = kb.diagnostics();
        assert!(d.contains(&ConfigDiagnostic::UnknownId("my.extension.action".into())));
        assert_eq!(
            d.iter()
                .filter(|x| matches!(x, ConfigDiagnostic::InvalidKey { .. }))
                .count(),
            2
        );
        for x in d {
            assert!(!x.to_string().is_empty());
        }
    }

    #[test]
    fn conflicts_and_broken_files() {
        let (user, _) = UserBindings::parse(
            r#"{"app.clear": "ctrl+k", "tui.editor.deleteToLineEnd": "ctrl+k"}"#,
        );
        let kb = Keybindings::with_user(Platform::Unix, &user);
        assert_eq!(
            kb.diagnostics(),
            &[ConfigDiagnostic::Conflict {
                key: "ctrl+k".into(),
                ids: vec!["app.clear".into(), "tui.editor.deleteToLineEnd".into()]
            }]
        );
        for broken in ["{", "[1,2]", "null", "\"x\""] {
            let (user, diags) = UserBindings::parse(broken);
            assert!(user.entries().is_empty());
            assert!(
                matches!(diags.as_slice(), [ConfigDiagnostic::Invalid(_)]),
                "{broken}"
            );
        }
        let (user, diags) = UserBindings::parse("\u{feff}{\"tui.input.submit\": \"ctrl+s\"}");
        assert!(diags.is_empty());
        assert_eq!(user.entries().len(), 1);
        let (_, diags) = UserBindings::load(std::path::Path::new("/nonexistent/keybindings.json"));
        assert!(diags.is_empty());
    }
}
