//! Extension shortcuts (`pi.registerShortcut`) bound in the terminal, with pi's conflict
//! rules (`getShortcuts` of its extension runner): a key of one of the reserved built-in
//! actions cannot be taken (the shortcut is skipped), any other built-in key is overridden
//! with a warning, and of two extensions taking one key the later wins, with a warning.
//!
//! Keys are compared parsed, not as strings as pi compares them, so `shift+ctrl+k` and
//! `ctrl+shift+k` are one key here, as they are one key on the keyboard.

use pi_tui::keybindings::{KeySpec, Keybindings};

use crate::extensions::ShortcutSpec;

/// The built-in actions whose keys an extension may not take (pi's list).
pub(super) const RESERVED: [&str; 18] = [
    "app.interrupt",
    "app.clear",
    "app.exit",
    "app.suspend",
    "app.thinking.cycle",
    "app.model.cycleForward",
    "app.model.cycleBackward",
    "app.model.select",
    "app.tools.expand",
    "app.thinking.toggle",
    "app.editor.external",
    "app.message.copy",
    "app.message.followUp",
    "tui.input.submit",
    "tui.select.confirm",
    "tui.select.cancel",
    "tui.input.copy",
    "tui.editor.deleteToLineEnd",
];

/// A shortcut the terminal binds.
#[derive(Clone, Debug)]
pub(super) struct Bound {
    /// The parsed key.
    pub key: KeySpec,
    /// The extension's registration.
    pub shortcut: ShortcutSpec,
}

/// The shortcuts to bind, in the order pi lists them, and the warnings about the others.
pub(super) fn resolve(
    shortcuts: Vec<ShortcutSpec>,
    keys: &Keybindings,
) -> (Vec<Bound>, Vec<String>) {
    let mut bound: Vec<Bound> = Vec::new();
    let mut warnings = Vec::new();
    for shortcut in shortcuts {
        let (name, path) = (shortcut.key.clone(), shortcut.extension_path.clone());
        let key = match KeySpec::parse(&name) {
            Ok(k) => k,
            Err(e) => {
                warnings.push(format!(
                    "Extension shortcut '{name}' from {path} is not a key ({e}). Skipping."
                ));
                continue;
            }
        };
        // A key several actions share counts as reserved when any of them is.
        let mut builtin: Option<(&str, bool)> = None;
        for def in keys.actions() {
            if keys.keys(def.id).contains(&key) {
                let reserved = RESERVED.contains(&def.id);
                if builtin.is_none_or(|(_, r)| !r && reserved) {
                    builtin = Some((def.id, reserved));
                }
            }
        }
        match builtin {
            Some((_, true)) => {
                warnings.push(format!(
                    "Extension shortcut '{name}' from {path} conflicts with built-in shortcut. Skipping."
                ));
                continue;
            }
            Some((action, false)) => warnings.push(format!(
                "Extension shortcut conflict: '{name}' is built-in shortcut for {action} and {path}. Using {path}."
            )),
            None => {}
        }
        match bound.iter_mut().find(|b| b.key == key) {
            Some(existing) => {
                warnings.push(format!(
                    "Extension shortcut conflict: '{name}' registered by both {} and {path}. Using {path}.",
                    existing.shortcut.extension_path
                ));
                existing.shortcut = shortcut;
            }
            None => bound.push(Bound { key, shortcut }),
        }
    }
    (bound, warnings)
}

/// pi's `formatKeyText(key, {capitalize: true})`: keys split at `/`, each part of a key
/// capitalized, `+` between.
pub(super) fn display(key: &str) -> String {
    key.split('/')
        .map(|k| {
            k.split('+')
                .map(|part| {
                    let mut c = part.chars();
                    match c.next() {
                        Some(first) => first.to_uppercase().chain(c).collect(),
                        None => String::new(),
                    }
                })
                .collect::<Vec<String>>()
                .join("+")
        })
        .collect::<Vec<String>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::keybindings::Platform;
    use std::sync::Arc;

    fn spec(key: &str, path: &str) -> ShortcutSpec {
        ShortcutSpec {
            key: key.into(),
            description: None,
            handler: Arc::new(|_ctx| Box::pin(async { Ok(()) })),
            extension_path: path.into(),
        }
    }

    #[test]
    fn reserved_keys_are_skipped_others_overridden_and_the_later_extension_wins() {
        let keys = Keybindings::defaults(Platform::Unix);
        let (bound, warnings) = resolve(
            vec![
                spec("ctrl+c", "a.json"),
                spec("ctrl+shift+k", "a.json"),
                spec("ctrl+w", "a.json"),
                spec("shift+ctrl+k", "b.json"),
                spec("ctrl+nope", "b.json"),
            ],
            &keys,
        );
        let got: Vec<(String, String)> = bound
            .iter()
            .map(|b| (b.key.to_string(), b.shortcut.extension_path.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("shift+ctrl+k".to_owned(), "b.json".to_owned()),
                ("ctrl+w".to_owned(), "a.json".to_owned()),
            ]
        );
        assert_eq!(
            warnings[0],
            "Extension shortcut 'ctrl+c' from a.json conflicts with built-in shortcut. Skipping."
        );
        assert_eq!(
            warnings[1],
            "Extension shortcut conflict: 'ctrl+w' is built-in shortcut for tui.editor.deleteWordBackward and a.json. Using a.json."
        );
        assert_eq!(
            warnings[2],
            "Extension shortcut conflict: 'shift+ctrl+k' registered by both a.json and b.json. Using b.json."
        );
        assert!(warnings[3].contains("'ctrl+nope'"), "{warnings:?}");
        assert_eq!(warnings.len(), 4);
    }

    #[test]
    fn keys_are_shown_capitalized_as_pi_shows_them() {
        assert_eq!(display("ctrl+shift+k"), "Ctrl+Shift+K");
        assert_eq!(display("f5"), "F5");
        assert_eq!(display("ctrl+p/alt+p"), "Ctrl+P/Alt+P");
    }
}
