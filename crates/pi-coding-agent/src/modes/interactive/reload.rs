//! `/reload` (pi's `handleReloadCommand`): the session is built again on the same file with
//! its settings, extensions (their processes restarted), skills, prompt templates and context
//! files read anew ([`crate::runtime::RuntimeHost::reload`]); the keybindings are read again
//! and the transcript is drawn again from the session.

use std::sync::Arc;

use pi_tui::keybindings::{Keybindings, Platform, UserBindings};

use super::App;
use super::commands::ReplaceError;

/// pi's notice while reloading, and its status line after.
const RELOADING: &str =
    "Reloading keybindings, extensions, skills, prompts, themes, and context files...";
pub(super) const RELOADED: &str =
    "Reloaded keybindings, extensions, skills, prompts, themes, and context files";

impl App {
    /// `/reload`.
    pub(super) fn reload_command(&mut self) {
        if self.prompts > 0 || self.session.is_streaming() {
            self.transcript.notice(
                "Warning: Wait for the current response to finish before reloading.",
                "warning",
            );
            return;
        }
        if self.session.is_compacting() {
            self.transcript.notice(
                "Warning: Wait for compaction to finish before reloading.",
                "warning",
            );
            return;
        }
        self.transcript.notice(RELOADING, "muted");
        self.replace_with(
            |host| {
                Box::pin(async move {
                    host.reload().await.map_err(ReplaceError::Reload)?;
                    Ok((false, None))
                })
            },
            RELOADED,
        );
    }

    /// After a reload: the keybindings from `keybindings.json` again, for the mode and its
    /// editor (a file that does not parse is reported, and the defaults stay).
    pub(super) fn reload_keybindings(&mut self) {
        let (user, diagnostics) =
            UserBindings::load(&self.options.agent_dir.join("keybindings.json"));
        for d in diagnostics {
            self.transcript
                .notice(format!("Warning: keybindings.json: {d}"), "warning");
        }
        let keys = Arc::new(Keybindings::with_user(Platform::current(), &user));
        self.editor.set_keybindings(keys.clone());
        self.keys = keys;
    }
}
