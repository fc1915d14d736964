//! `/resume` and `--resume`: pi's session selector (`components/session-selector.js`) over
//! the current folder's sessions or all of them (Tab switches: `Resume Session (Current
//! Folder)` / `Resume Session (All)`), searchable, each row with its message count and age;
//! pi's sort modes (Ctrl+S: `Threaded`, forks under their parent; `Recent`; `Fuzzy`), name
//! filter (Ctrl+N: named sessions only) and path toggle (Ctrl+P); Ctrl+R renames the selected
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
const ACTIONS: &[&str] = &[
    "tui.input.tab",
    "app.session.toggleSort",
    "app.session.toggleNamedFilter",
    "app.session.togglePath",
    "app.session.rename",
    "app.session.delete",
];

/// pi's sort modes (`app.session.toggleSort` cycles them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Sort {
    /// Forks under the session they came from, trees by their latest activity.
    Threaded,
    /// Newest first; a search keeps that order.
    Recent,
    /// Newest first; a search ranks by match.
    Fuzzy,
}

impl Sort {
    fn label(self) -> &'static str {
        match self {
            Sort::Threaded => "Threaded",
            Sort::Recent => "Recent",
            Sort::Fuzzy => "Fuzzy",
        }
    }

    fn next(self) -> Self {
        match self {
            Sort::Threaded => Sort::Recent,
            Sort::Recent => Sort::Fuzzy,
            Sort::Fuzzy => Sort::Threaded,
        }
    }
}

/// The selector's view options, kept while it is open and reopened.
#[derive(Clone, Debug)]
pub(super) struct View {
    /// Which sessions.
    pub scope: Scope,
    /// The order.
    pub sort: Sort,
    /// Only named sessions.
    pub named: bool,
    /// The file paths shown.
    pub path: bool,
    /// The search line.
    pub query: String,
}

impl Default for View {
    fn default() -> Self {
        Self {
            scope: Scope::Current,
            sort: Sort::Threaded,
            named: false,
            path: false,
            query: String::new(),
        }
    }
}

/// pi's `buildSessionTree` + `flattenSessionTree`: each session with its tree prefix, forks
/// (by `parentSession`) under their parent, siblings and roots by the latest activity of
/// their subtree.
fn threaded(sessions: &[SessionFileInfo]) -> Vec<(usize, String)> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let paths: Vec<PathBuf> = sessions.iter().map(|s| canon(&s.path)).collect();
    let parent_of: Vec<Option<usize>> = sessions
        .iter()
        .map(|s| {
            let p = canon(Path::new(s.header.parent_session.as_deref()?));
            paths.iter().position(|x| *x == p)
        })
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); sessions.len()];
    let mut roots = Vec::new();
    for (i, p) in parent_of.iter().enumerate() {
        match p {
            Some(p) if *p != i => children[*p].push(i),
            _ => roots.push(i),
        }
    }
    fn latest(
        i: usize,
        s: &[SessionFileInfo],
        c: &[Vec<usize>],
        depth: usize,
    ) -> std::time::SystemTime {
        let mut t = s[i].modified;
        if depth < 64 {
            for &k in &c[i] {
                t = t.max(latest(k, s, c, depth + 1));
            }
        }
        t
    }
    let times: Vec<std::time::SystemTime> = (0..sessions.len())
        .map(|i| latest(i, sessions, &children, 0))
        .collect();
    let by_latest = |v: &mut Vec<usize>| v.sort_by_key(|&i| std::cmp::Reverse(times[i]));
    by_latest(&mut roots);
    for c in &mut children {
        by_latest(c);
    }
    let mut out = Vec::new();
    let mut seen = vec![false; sessions.len()];
    fn walk(
        i: usize,
        depth: usize,
        ancestors: &mut Vec<bool>,
        is_last: bool,
        children: &[Vec<usize>],
        seen: &mut [bool],
        out: &mut Vec<(usize, String)>,
    ) {
        if seen[i] {
            return;
        }
        seen[i] = true;
        let prefix = if depth == 0 {
            String::new()
        } else {
            let mut p: String = ancestors
                .iter()
                .map(|&c| if c { "│  " } else { "   " })
                .collect();
            p.push_str(if is_last { "└─ " } else { "├─ " });
            p
        };
        out.push((i, prefix));
        let n = children[i].len();
        for (k, &c) in children[i].iter().enumerate() {
            ancestors.push(depth > 0 && !is_last);
            walk(c, depth + 1, ancestors, k + 1 == n, children, seen, out);
            ancestors.pop();
        }
    }
    let n = roots.len();
    for (k, &r) in roots.iter().enumerate() {
        walk(
            r,
            0,
            &mut Vec::new(),
            k + 1 == n,
            &children,
            &mut seen,
            &mut out,
        );
    }
    // Cycles in parent links leave sessions unvisited: list them as roots.
    for (i, s) in seen.iter().enumerate() {
        if !s {
            out.push((i, String::new()));
        }
    }
    out
}

fn shorten(path: &str) -> String {
    let home = crate::config::agent_paths::home_dir();
    match Path::new(path).strip_prefix(&home) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.to_owned(),
    }
}

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
    /// The session selector over `scope`, as `kind` (`/resume` or the start-up one), with
    /// the view options of [`App::session_view`].
    pub(super) fn open_sessions(&mut self, scope: Scope, kind: Pick) {
        self.session_view.scope = scope;
        let view = self.session_view.clone();
        let dir = self.session_dir();
        let mut sessions = match scope {
            Scope::Current => list_sessions(&dir),
            Scope::All => all_sessions(&self.options.agent_dir.join("sessions"), &dir),
        };
        sessions.sort_by_key(|s| std::cmp::Reverse(s.modified));
        let summaries: Vec<_> = sessions
            .iter()
            .map(|s| super::session_list::summary_with_count(&s.path))
            .collect();
        let keep: Vec<usize> = (0..sessions.len())
            .filter(|&i| !view.named || summaries[i].0.is_some())
            .collect();
        let kept: Vec<SessionFileInfo> = keep.iter().map(|&i| sessions[i].clone()).collect();
        let order: Vec<(usize, String)> = match view.sort {
            Sort::Threaded => threaded(&kept)
                .into_iter()
                .map(|(i, p)| (keep[i], p))
                .collect(),
            Sort::Recent | Sort::Fuzzy => keep.iter().map(|&i| (i, String::new())).collect(),
        };
        let current = self.session.session_file();
        let now = std::time::SystemTime::now();
        let items: Vec<PickItem> = order
            .iter()
            .map(|(i, prefix)| {
                let s = &sessions[*i];
                let (name, first, count) = &summaries[*i];
                let label = name
                    .clone()
                    .or_else(|| first.clone())
                    .unwrap_or_else(|| "(no messages)".into());
                let mut item = PickItem::new(s.path.display().to_string(), label.clone());
                item.prefix = prefix.clone();
                let age = super::session_list::session_age(
                    now.duration_since(s.modified).unwrap_or_default(),
                );
                let mut right = format!("{count} {age}");
                if scope == Scope::All {
                    right = format!("{} {right}", shorten(&s.header.cwd));
                }
                if view.path {
                    right = format!("{} {right}", shorten(&s.path.display().to_string()));
                }
                item.badge = Some(right);
                // pi searches the name and the messages too; the first message stands for them.
                item.search = format!(
                    "{label} {} {} {}",
                    first.as_deref().unwrap_or_default(),
                    s.header.id,
                    s.header.cwd
                );
                item.current = current.as_deref() == Some(s.path.as_path());
                item
            })
            .collect();
        if sessions.is_empty() && scope == Scope::Current {
            self.status_notice("No sessions found");
            return;
        }
        let title = match scope {
            Scope::Current => "Resume Session (Current Folder)",
            Scope::All => "Resume Session (All)",
        };
        let key = |a: &str| self.key_hint(a);
        let empty = match (view.named, scope) {
            (true, Scope::All) => format!(
                "No named sessions found. Press {} to show all.",
                key("app.session.toggleNamedFilter")
            ),
            (true, Scope::Current) => format!(
                "No named sessions in current folder. Press {} to show all, or Tab to view all.",
                key("app.session.toggleNamedFilter")
            ),
            (false, Scope::All) => "No sessions found".to_owned(),
            (false, Scope::Current) => {
                "No sessions in current folder. Press Tab to view all.".to_owned()
            }
        };
        let scope_text = match scope {
            Scope::Current => "◉ Current Folder | ○ All",
            Scope::All => "○ Current Folder | ◉ All",
        };
        let status = format!(
            "{scope_text}  Name: {}  Sort: {}",
            if view.named { "Named" } else { "All" },
            view.sort.label()
        );
        let hint = format!(
            "{} scope · re:<pattern> regex · \"phrase\" exact\n{} sort · {} named · {} delete · {} path ({}) · {} rename",
            key("tui.input.tab"),
            key("app.session.toggleSort"),
            key("app.session.toggleNamedFilter"),
            key("app.session.delete"),
            key("app.session.togglePath"),
            if view.path { "on" } else { "off" },
            key("app.session.rename"),
        );
        let mut p = Picker::new(title, items, self.theme.clone(), self.keys.clone())
            .with_note(status, "muted")
            .searchable(&view.query)
            .with_actions(ACTIONS)
            .with_hint(hint)
            .with_empty_text(empty);
        if view.sort == Sort::Recent {
            p = p.keeping_order();
        }
        p = p.with_matcher(Box::new(|q| {
            let parsed = super::session_list::SessionQuery::parse(q);
            Box::new(move |text| parsed.score(text))
        }));
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
            "app.session.toggleSort" => {
                self.session_view.sort = self.session_view.sort.next();
                self.open_sessions(self.session_scope, kind);
            }
            "app.session.toggleNamedFilter" => {
                self.session_view.named = !self.session_view.named;
                self.open_sessions(self.session_scope, kind);
            }
            "app.session.togglePath" => {
                self.session_view.path = !self.session_view.path;
                self.open_sessions(self.session_scope, kind);
            }
            "app.session.rename" => {
                // The list comes back unfiltered after the rename.
                self.session_view.query.clear();
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
                self.session_view.query.clear();
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
