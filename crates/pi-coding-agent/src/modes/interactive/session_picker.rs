//! `/resume` and `--resume`: pi's session selector (`components/session-selector.js`) over
//! the current folder's sessions or all of them (Tab switches: `Resume Session (Current
//! Folder)` / `Resume Session (All)`), newest first, searchable; Ctrl+R renames the selected
//! session (a `session_info` entry appended to its file, as pi's rename does), Ctrl+D deletes
//! it after pi's `Delete session?` (never the active one; moved to the trash with `trash`
//! when there is one, as pi does, else removed).

use std::path::{Path, PathBuf};

use super::App;
use super::commands::Pick;
use super::picker::{PickItem, Picker};
use crate::storage::discovery::{SessionFileInfo, list_sessions};

/// Which sessions the selector lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scope {
    /// The current session's directory.
    Current,
    /// Every project's sessions under the agent directory (and the current directory's).
    All,
}

/// The selector's extra keys.
const ACTIONS: &[&str] = &["tui.input.tab", "app.session.rename", "app.session.delete"];

/// Every session of every project directory under `root`, plus those of `current`.
fn all_sessions(root: &Path, current: &Path) -> Vec<SessionFileInfo> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    if !dirs.iter().any(|d| d == current) {
        dirs.push(current.to_path_buf());
    }
    dirs.iter().flat_map(|d| list_sessions(d)).collect()
}

/// Moves `path` to the trash with the `trash` command when it exists, else removes it.
/// Returns pi's notice.
fn delete_session_file(path: &Path) -> std::io::Result<&'static str> {
    let trashed = std::process::Command::new("trash")
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if trashed && !path.exists() {
        return Ok("Session moved to trash");
    }
    std::fs::remove_file(path)?;
    Ok("Session deleted")
}

impl App {
    /// The session selector over `scope`, as `kind` (`/resume` or the start-up one).
    pub(super) fn open_sessions(&mut self, scope: Scope, kind: Pick) {
        let dir = self.session_dir();
        let mut sessions = match scope {
            Scope::Current => list_sessions(&dir),
            Scope::All => all_sessions(&self.options.agent_dir.join("sessions"), &dir),
        };
        sessions.sort_by_key(|s| std::cmp::Reverse(s.modified));
        let current = self.session.session_file();
        let now = std::time::SystemTime::now();
        let items: Vec<PickItem> = sessions
            .iter()
            .map(|s| {
                let (name, first) = super::session_list::summary(&s.path);
                let label = name.or(first).unwrap_or_else(|| "(no messages)".into());
                let mut item = PickItem::new(s.path.display().to_string(), label.clone());
                let age =
                    super::session_list::age(now.duration_since(s.modified).unwrap_or_default());
                item.badge = Some(match scope {
                    Scope::Current => age,
                    Scope::All => format!("{age} · {}", s.header.cwd),
                });
                item.search = format!("{label} {} {}", s.header.id, s.header.cwd);
                item.current = current.as_deref() == Some(s.path.as_path());
                item
            })
            .collect();
        if items.is_empty() && scope == Scope::Current {
            self.status_notice("No sessions found");
            return;
        }
        let title = match scope {
            Scope::Current => "Resume Session (Current Folder)",
            Scope::All => "Resume Session (All)",
        };
        let empty = match scope {
            Scope::Current => "No sessions in this folder. Press Tab to view all.",
            Scope::All => "No matching sessions",
        };
        let p = Picker::new(title, items, self.theme.clone(), self.keys.clone())
            .searchable("")
            .with_actions(ACTIONS)
            .with_hint(
                "Enter to resume · Tab scope · Ctrl+R rename · Ctrl+D delete · Esc to cancel",
            )
            .with_empty_text(empty);
        self.session_scope = scope;
        self.open_picker(kind, p);
    }

    /// A key of the selector's extra actions on `selected` (a session file).
    pub(super) fn session_action(&mut self, kind: Pick, action: &str, selected: Option<String>) {
        match action {
            "tui.input.tab" => {
                let next = match self.session_scope {
                    Scope::Current => Scope::All,
                    Scope::All => Scope::Current,
                };
                self.open_sessions(next, kind);
            }
            "app.session.rename" => {
                let Some(path) = selected else {
                    return self.open_sessions(self.session_scope, kind);
                };
                let (name, _) = super::session_list::summary(Path::new(&path));
                let p = Picker::new(
                    "Rename Session",
                    Vec::new(),
                    self.theme.clone(),
                    self.keys.clone(),
                )
                .text_input(name.as_deref().unwrap_or(""))
                .with_hint("Enter to save · Esc to cancel");
                self.open_picker(Pick::RenameSession(path, Box::new(kind)), p);
            }
            "app.session.delete" => {
                let Some(path) = selected else {
                    return self.open_sessions(self.session_scope, kind);
                };
                if self.session.session_file().as_deref() == Some(Path::new(&path)) {
                    self.error_notice("Cannot delete the currently active session");
                    return self.open_sessions(self.session_scope, kind);
                }
                let p = Picker::yes_no(
                    "Delete session?",
                    &path,
                    self.theme.clone(),
                    self.keys.clone(),
                );
                self.open_picker(Pick::DeleteSession(path, Box::new(kind)), p);
            }
            _ => {}
        }
    }

    /// Rename's answer: the name appended to `path` (pi's `appendSessionInfo`); back to the
    /// list.
    pub(super) fn rename_session(&mut self, path: &str, name: &str, kind: Pick) {
        let name = crate::storage::tree::normalize_session_name(name);
        if !name.is_empty() {
            let current = self.session.session_file();
            let result = if current.as_deref() == Some(Path::new(path)) {
                self.session
                    .set_session_name(&name)
                    .map_err(|e| e.to_string())
            } else {
                let cwd = self.running.host.cwd().display().to_string();
                crate::storage::SessionStore::open(Path::new(path), &cwd)
                    .and_then(|mut store| {
                        store.append(crate::storage::EntryKind::SessionInfo { name: Some(name) })
                    })
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            };
            if let Err(e) = result {
                self.error_notice(format!("Failed to rename session: {e}"));
            }
        }
        self.open_sessions(self.session_scope, kind);
    }

    /// Delete's answer.
    pub(super) fn delete_session(&mut self, path: &str, confirmed: bool, kind: Pick) {
        if confirmed {
            match delete_session_file(Path::new(path)) {
                Ok(notice) => self.status_notice(notice),
                Err(e) => self.error_notice(format!("Failed to delete: {e}")),
            }
        }
        self.open_sessions(self.session_scope, kind);
    }
}
