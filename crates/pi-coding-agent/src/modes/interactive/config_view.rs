//! `pi config`: pi's resource configuration screen (`cli/config-selector.js`,
//! `components/config-selector.js`, `handleConfigCommand` in `package-manager-cli.js`).
//!
//! The extensions, skills, prompt templates and themes that the agent directory, a trusted
//! project's `.pi/` and the settings files' path entries provide, grouped as pi groups them
//! (`User (~/.pi/agent/)`, `User settings`, `Project (…/.pi/)`, `Project settings`), each
//! with its checkbox. Space or Enter switches one:
//! - global mode (`~/.pi/agent/settings.json`): a user resource toggles between `+path` and
//!   `-path` in the global file's list of its kind (the path relative to the group's base;
//!   older `!`/`+`/`-` entries of that path are replaced);
//! - project mode (`.pi/settings.json`, Tab switches; only for a trusted project): the entry
//!   cycles through inherit / `+path` / `-path` in the project file; a global resource
//!   overridden there is also listed by its absolute path, as pi writes it.
//!
//! Typing filters by name, kind or path; Esc closes, Ctrl+C quits. Package resources
//! (`pi install`) are not listed here yet: there are no package groups.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use pi_tui::keybindings::{Keybindings, Platform, UserBindings};
use pi_tui::keys::Decoded;
use pi_tui::terminal::{self, Terminal, TerminalOptions};
use pi_tui::theme::{ColorMode, Theme};
use pi_tui::tui::{Tui, TuiOptions};
use pi_tui::{Component, InputEvent, KeyCode, KeyEvent, Modifiers};
use serde_json::Value;

use crate::config::agent_paths::CONFIG_DIR_NAME;
use crate::config::resource_filter::{apply_patterns, is_enabled_by_overrides, is_pattern};
use crate::config::settings::SettingsManager;

/// A kind of resource, in pi's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// `extensions`.
    Extensions,
    /// `skills`.
    Skills,
    /// `prompts`.
    Prompts,
    /// `themes`.
    Themes,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Extensions, Kind::Skills, Kind::Prompts, Kind::Themes];

    /// The settings key.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Kind::Extensions => "extensions",
            Kind::Skills => "skills",
            Kind::Prompts => "prompts",
            Kind::Themes => "themes",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::Extensions => "Extensions",
            Kind::Skills => "Skills",
            Kind::Prompts => "Prompts",
            Kind::Themes => "Themes",
        }
    }
}

/// Which file the screen writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// `~/.pi/agent/settings.json`.
    Global,
    /// `.pi/settings.json`.
    Project,
}

/// One resource file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Item {
    /// The file.
    pub path: PathBuf,
    /// Its kind.
    pub kind: Kind,
    /// From the user's files (else the project's).
    pub user: bool,
    /// Found by a settings path entry (else auto-discovered).
    pub from_settings: bool,
    /// The directory its patterns are relative to.
    pub base: PathBuf,
    /// The name shown.
    pub name: String,
    /// Whether it loads.
    pub enabled: bool,
}

struct Group {
    label: String,
    user: bool,
    items: Vec<Item>,
}

fn home() -> PathBuf {
    crate::config::agent_paths::home_dir()
}

/// pi's `formatBaseDir`: `~` for the home directory, a trailing `/`.
fn format_base(dir: &Path) -> String {
    let home = home();
    let shown = match dir.strip_prefix(&home) {
        Ok(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => dir.display().to_string(),
    };
    if shown.ends_with('/') {
        shown
    } else {
        format!("{shown}/")
    }
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn has_ext(p: &Path, exts: &[&str]) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| exts.contains(&e))
}

/// `SKILL.md` files under `dir`: a directory holding one is a skill and is not searched
/// further.
fn skill_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for p in sorted_entries(dir) {
        if p.is_dir() {
            let skill = p.join("SKILL.md");
            if skill.is_file() {
                out.push(skill);
            } else {
                skill_files(&p, out);
            }
        }
    }
}

/// The files of a kind under an auto-discovery directory (pi's `collectAuto*Entries`);
/// `agents` is a `~/.agents/skills`-style directory (no loose `.md` skills).
fn collect(kind: Kind, dir: &Path, agents: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    match kind {
        Kind::Extensions => {
            for p in sorted_entries(dir) {
                if p.is_file() && has_ext(&p, &["ts", "js", "mjs", "cjs"]) {
                    out.push(p);
                } else if p.is_dir()
                    && let Some(index) = ["index.ts", "index.js"]
                        .iter()
                        .map(|f| p.join(f))
                        .find(|f| f.is_file())
                {
                    out.push(index);
                }
            }
        }
        Kind::Skills => {
            if !agents {
                out.extend(
                    sorted_entries(dir)
                        .into_iter()
                        .filter(|p| p.is_file() && has_ext(p, &["md"])),
                );
            }
            skill_files(dir, &mut out);
        }
        Kind::Prompts => out.extend(
            sorted_entries(dir)
                .into_iter()
                .filter(|p| p.is_file() && has_ext(p, &["md"])),
        ),
        Kind::Themes => out.extend(
            sorted_entries(dir)
                .into_iter()
                .filter(|p| p.is_file() && has_ext(p, &["json"])),
        ),
    }
    out
}

fn display_name(kind: Kind, path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = path
        .parent()
        .and_then(Path::file_name)
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    match kind {
        Kind::Extensions if parent != "extensions" => format!("{parent}/{file}"),
        Kind::Skills if file == "SKILL.md" => parent,
        _ => file,
    }
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Every resource `settings` leads to, with whether it loads (pi's package-manager
/// `resolve` for top-level resources). The project's only when it is trusted.
pub(crate) fn resolve(settings: &SettingsManager, cwd: &Path, agent_dir: &Path) -> Vec<Item> {
    let trusted = settings.is_project_trusted();
    let project_base = cwd.join(CONFIG_DIR_NAME);
    let mut out = Vec::new();
    for kind in Kind::ALL {
        let user_entries = string_list(settings.global().get(kind.key()));
        let project_entries = if trusted {
            string_list(settings.project().get(kind.key()))
        } else {
            Vec::new()
        };
        let mut from_entries = |entries: &[String], base: &Path, user: bool| {
            let mut files = Vec::new();
            for e in entries.iter().map(|e| e.trim()) {
                if e.is_empty() || is_pattern(e) {
                    continue;
                }
                let p = crate::config::agent_paths::resolve_path(e, base);
                if p.is_file() {
                    files.push(p);
                } else if p.is_dir() {
                    files.extend(collect(kind, &p, false));
                }
            }
            let on = apply_patterns(&files, entries, base);
            for f in files {
                out.push(Item {
                    enabled: on.contains(&f),
                    name: display_name(kind, &f),
                    path: f,
                    kind,
                    user,
                    from_settings: true,
                    base: base.to_path_buf(),
                });
            }
        };
        if trusted {
            from_entries(&project_entries, &project_base, false);
        }
        from_entries(&user_entries, agent_dir, true);
        let mut auto = |dir: PathBuf, base: &Path, entries: &[String], user: bool, agents| {
            for f in collect(kind, &dir, agents) {
                out.push(Item {
                    enabled: is_enabled_by_overrides(&f, entries, base),
                    name: display_name(kind, &f),
                    path: f,
                    kind,
                    user,
                    from_settings: false,
                    base: base.to_path_buf(),
                });
            }
        };
        if trusted {
            auto(
                project_base.join(kind.key()),
                &project_base,
                &project_entries,
                false,
                false,
            );
        }
        auto(
            agent_dir.join(kind.key()),
            agent_dir,
            &user_entries,
            true,
            false,
        );
        if kind == Kind::Skills {
            let agents = home().join(".agents");
            auto(agents.join("skills"), &agents, &user_entries, true, true);
        }
    }
    // A file reached twice counts once (its first appearance).
    let mut seen: Vec<(Kind, PathBuf)> = Vec::new();
    out.retain(|i| {
        let key = (
            i.kind,
            std::fs::canonicalize(&i.path).unwrap_or(i.path.clone()),
        );
        if seen.contains(&key) {
            false
        } else {
            seen.push(key);
            true
        }
    });
    out
}

/// pi's `buildGroups`: user groups before project ones, auto-discovered before settings
/// entries; kinds in pi's order and items by name inside.
fn groups(items: &[Item]) -> Vec<Group> {
    let mut groups: Vec<(String, bool, bool, Group)> = Vec::new();
    for it in items {
        let label = match (it.from_settings, it.user) {
            (true, true) => "User settings".to_owned(),
            (true, false) => "Project settings".to_owned(),
            (false, true) => format!("User ({})", format_base(&it.base)),
            (false, false) => format!("Project ({})", format_base(&it.base)),
        };
        match groups.iter_mut().find(|g| g.0 == label) {
            Some(g) => g.3.items.push(it.clone()),
            None => groups.push((
                label.clone(),
                it.user,
                it.from_settings,
                Group {
                    label,
                    user: it.user,
                    items: vec![it.clone()],
                },
            )),
        }
    }
    groups.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
    groups
        .into_iter()
        .map(|(_, _, _, mut g)| {
            g.items.sort_by(|a, b| {
                a.kind
                    .cmp(&b.kind)
                    .then_with(|| crate::config::collate::locale_compare(&a.name, &b.name))
            });
            g
        })
        .collect()
}

/// A row of the list.
#[derive(Clone, Debug)]
enum Row {
    Group(usize),
    Kind(usize, Kind),
    Item(usize, usize),
}

/// The project override of an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Override {
    Inherit,
    Load,
    Unload,
}

fn target(entry: &str) -> &str {
    entry.strip_prefix(['!', '+', '-']).unwrap_or(entry)
}

fn rel(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(r) => r.to_string_lossy().replace('\\', "/"),
        Err(_) => path.display().to_string(),
    }
}

/// The screen's state.
pub(crate) struct ConfigView {
    scope: Scope,
    project_available: bool,
    cwd: PathBuf,
    /// Global mode's groups, project mode's groups.
    global: Vec<Group>,
    project: Vec<Group>,
    /// Enabled state of each global resource (kind, canonical path).
    inherited: Vec<((Kind, PathBuf), bool)>,
    rows: Vec<Row>,
    selected: usize,
    query: String,
    max_visible: usize,
    theme: Arc<Theme>,
    keys: Arc<Keybindings>,
}

/// What a key did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConfigEvent {
    /// Esc.
    Close,
    /// Ctrl+C.
    Exit,
}

fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

impl ConfigView {
    /// The screen over the resources of `global_items` (what the global file alone leads to)
    /// and `project_items` (with the trusted project's file), writing `scope` first.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        global_items: &[Item],
        project_items: &[Item],
        scope: Scope,
        project_available: bool,
        cwd: &Path,
        rows: u16,
        theme: Arc<Theme>,
        keys: Arc<Keybindings>,
    ) -> Self {
        let inherited = global_items
            .iter()
            .map(|i| ((i.kind, canon(&i.path)), i.enabled))
            .collect();
        let mut v = Self {
            scope,
            project_available,
            cwd: cwd.to_path_buf(),
            global: groups(global_items),
            project: groups(project_items),
            inherited,
            rows: Vec::new(),
            selected: 0,
            query: String::new(),
            max_visible: usize::from(rows).saturating_sub(8).max(5),
            theme,
            keys,
        };
        v.refilter();
        v
    }

    fn groups(&self) -> &Vec<Group> {
        match self.scope {
            Scope::Global => &self.global,
            Scope::Project => &self.project,
        }
    }

    fn item(&self, g: usize, i: usize) -> &Item {
        &self.groups()[g].items[i]
    }

    fn refilter(&mut self) {
        let q = self.query.to_lowercase();
        let mut rows = Vec::new();
        for (gi, g) in self.groups().iter().enumerate() {
            let mut group_rows = Vec::new();
            let mut last_kind = None;
            for (ii, it) in g.items.iter().enumerate() {
                let hit = q.trim().is_empty()
                    || it.name.to_lowercase().contains(&q)
                    || it.kind.key().contains(&q)
                    || it.path.to_string_lossy().to_lowercase().contains(&q);
                if !hit {
                    continue;
                }
                if last_kind != Some(it.kind) {
                    group_rows.push(Row::Kind(gi, it.kind));
                    last_kind = Some(it.kind);
                }
                group_rows.push(Row::Item(gi, ii));
            }
            if !group_rows.is_empty() {
                rows.push(Row::Group(gi));
                rows.extend(group_rows);
            }
        }
        self.rows = rows;
        self.selected = self
            .rows
            .iter()
            .position(|r| matches!(r, Row::Item(..)))
            .unwrap_or(0);
    }

    fn step(&mut self, dir: isize) {
        let mut i = self.selected as isize + dir;
        while i >= 0 && (i as usize) < self.rows.len() {
            if matches!(self.rows[i as usize], Row::Item(..)) {
                self.selected = i as usize;
                return;
            }
            i += dir;
        }
    }

    fn inherited_enabled(&self, it: &Item) -> bool {
        self.inherited
            .iter()
            .find(|(k, _)| *k == (it.kind, canon(&it.path)))
            .map_or(if it.user { it.enabled } else { true }, |(_, e)| *e)
    }

    fn is_inherited_global(&self, it: &Item) -> bool {
        it.user
            || self
                .inherited
                .iter()
                .any(|(k, _)| *k == (it.kind, canon(&it.path)))
    }

    fn project_base(&self) -> PathBuf {
        self.cwd.join(CONFIG_DIR_NAME)
    }

    /// The entries of the project file that name this item.
    fn override_patterns(&self, it: &Item) -> Vec<String> {
        let mut v = vec![
            self.project_pattern(it),
            it.path.display().to_string(),
            rel(&self.project_base(), &it.path),
            rel(&it.base, &it.path),
        ];
        v.dedup();
        v
    }

    fn project_pattern(&self, it: &Item) -> String {
        if it.user {
            it.path.display().to_string()
        } else {
            rel(&it.base, &it.path)
        }
    }

    fn override_state(&self, settings: &SettingsManager, it: &Item) -> Override {
        if self.scope != Scope::Project {
            return Override::Inherit;
        }
        let patterns = self.override_patterns(it);
        let mut state = Override::Inherit;
        for e in string_list(settings.project().get(it.kind.key())) {
            if !patterns.iter().any(|p| p == target(&e)) {
                continue;
            }
            state = if e.starts_with(['!', '-']) {
                Override::Unload
            } else {
                Override::Load
            };
        }
        state
    }

    /// Space / Enter on an item: the settings file written, the checkbox updated.
    fn toggle(&mut self, settings: &mut SettingsManager, g: usize, i: usize) {
        let it = self.item(g, i).clone();
        match self.scope {
            Scope::Global => {
                if !it.user {
                    return;
                }
                let enabled = !it.enabled;
                let pattern = rel(&it.base, &it.path);
                let mut list: Vec<String> = string_list(settings.global().get(it.kind.key()))
                    .into_iter()
                    .filter(|e| target(e) != pattern)
                    .collect();
                list.push(format!("{}{pattern}", if enabled { '+' } else { '-' }));
                settings.set_global(
                    it.kind.key(),
                    Some(Value::Array(list.into_iter().map(Value::from).collect())),
                );
                self.global[g].items[i].enabled = enabled;
            }
            Scope::Project => {
                let inherited = self.inherited_enabled(&it);
                let next = match (self.override_state(settings, &it), inherited) {
                    (Override::Inherit, true) => Override::Unload,
                    (Override::Inherit, false) => Override::Load,
                    (Override::Unload, true) => Override::Load,
                    (Override::Unload, false) => Override::Inherit,
                    (Override::Load, true) => Override::Inherit,
                    (Override::Load, false) => Override::Unload,
                };
                let pattern = self.project_pattern(&it);
                let patterns = self.override_patterns(&it);
                let global_item = self.is_inherited_global(&it);
                let mut list: Vec<String> = string_list(settings.project().get(it.kind.key()))
                    .into_iter()
                    .filter(|e| {
                        let t = target(e);
                        if e.starts_with(['!', '+', '-']) && patterns.iter().any(|p| p == t) {
                            return false;
                        }
                        !(next == Override::Inherit && global_item && t == pattern)
                    })
                    .collect();
                if next != Override::Inherit {
                    if global_item && !list.contains(&pattern) {
                        list.push(pattern.clone());
                    }
                    let sign = if next == Override::Load { '+' } else { '-' };
                    list.push(format!("{sign}{pattern}"));
                }
                settings.set_project(
                    it.kind.key(),
                    Some(Value::Array(list.into_iter().map(Value::from).collect())),
                );
                self.project[g].items[i].enabled = match next {
                    Override::Inherit => inherited,
                    Override::Load => true,
                    Override::Unload => false,
                };
            }
        }
    }

    /// Handles a key.
    pub(crate) fn handle_key(
        &mut self,
        settings: &mut SettingsManager,
        k: &KeyEvent,
    ) -> Option<ConfigEvent> {
        let is = |a: &str| self.keys.matches(k, a);
        if k.code == KeyCode::Char('c') && k.modifiers == Modifiers::CTRL {
            return Some(ConfigEvent::Exit);
        }
        if is("tui.select.cancel") {
            return Some(ConfigEvent::Close);
        }
        if is("tui.select.up") {
            self.step(-1);
        } else if is("tui.select.down") {
            self.step(1);
        } else if is("tui.select.pageUp") {
            let mut t = self.selected.saturating_sub(self.max_visible);
            while t < self.rows.len() && !matches!(self.rows[t], Row::Item(..)) {
                t += 1;
            }
            if t < self.rows.len() {
                self.selected = t;
            }
        } else if is("tui.select.pageDown") {
            let mut t = (self.selected + self.max_visible).min(self.rows.len().saturating_sub(1));
            while t > 0 && !matches!(self.rows.get(t), Some(Row::Item(..))) {
                t -= 1;
            }
            if matches!(self.rows.get(t), Some(Row::Item(..))) {
                self.selected = t;
            }
        } else if k.code == KeyCode::Tab && k.modifiers == Modifiers::NONE {
            if self.project_available {
                self.scope = match self.scope {
                    Scope::Global => Scope::Project,
                    Scope::Project => Scope::Global,
                };
                self.refilter();
            }
        } else if k.code == KeyCode::Char(' ') || is("tui.select.confirm") {
            if let Some(Row::Item(g, i)) = self.rows.get(self.selected).cloned() {
                self.toggle(settings, g, i);
            }
        } else if super::picker::edit_search(&mut self.query, k) {
            self.refilter();
        }
        None
    }

    /// The lines, with the project override marks of `settings`.
    pub(crate) fn render_with(&self, settings: &SettingsManager, width: u16) -> Vec<String> {
        let w = usize::from(width);
        let t = &self.theme;
        let fit = |s: &str| pi_tui::ansi::truncate(s, w, "...");
        let project = self.scope == Scope::Project;
        let title = if project {
            "Project Local Resources"
        } else {
            "Global Resources"
        };
        let sep = t.fg("muted", " · ");
        let hint_of = |key: &str, what: &str| {
            format!("{}{}", t.fg("dim", key), t.fg("muted", &format!(" {what}")))
        };
        let mut hint = String::new();
        if self.project_available {
            hint.push_str(&hint_of("tab", "switch mode"));
            hint.push_str(&sep);
        }
        hint.push_str(&if project {
            hint_of("space", "cycle inherit/+/-")
        } else {
            hint_of("space", "toggle")
        });
        hint.push_str(&sep);
        hint.push_str(&hint_of("esc", "close"));
        let title = format!("\x1b[1m{title}\x1b[22m");
        let gap = w
            .saturating_sub(
                pi_tui::ansi::visible_width(&title) + pi_tui::ansi::visible_width(&hint),
            )
            .max(1);
        let scope_hint = if project {
            format!("{CONFIG_DIR_NAME}/settings.json · inherited global resources are dimmed")
        } else {
            format!("~/{CONFIG_DIR_NAME}/agent/settings.json")
        };
        let rule = t.fg("border", &"─".repeat(w));
        let mut out = vec![
            String::new(),
            rule.clone(),
            String::new(),
            fit(&format!("{title}{}{hint}", " ".repeat(gap))),
            fit(&t.fg("muted", &scope_hint)),
            String::new(),
            fit(&format!("> {}", pi_tui::ansi::escape_control(&self.query))),
            String::new(),
        ];
        if self.rows.is_empty() {
            out.push(t.fg("muted", "  No resources found"));
        } else {
            let n = self.rows.len();
            let start = self
                .selected
                .saturating_sub(self.max_visible / 2)
                .min(n.saturating_sub(self.max_visible));
            let end = (start + self.max_visible).min(n);
            for (pos, row) in self.rows[start..end].iter().enumerate() {
                let sel = start + pos == self.selected;
                match row {
                    Row::Group(g) => {
                        let g = &self.groups()[*g];
                        let inherited = project && g.user;
                        let label = format!(
                            "\x1b[1m{}{}\x1b[22m",
                            g.label,
                            if inherited {
                                " · inherited global"
                            } else {
                                ""
                            }
                        );
                        out.push(fit(&format!(
                            "  {}",
                            t.fg(if inherited { "dim" } else { "accent" }, &label)
                        )));
                    }
                    Row::Kind(g, kind) => {
                        let dim = project && self.groups()[*g].user;
                        out.push(fit(&format!(
                            "    {}",
                            t.fg(if dim { "dim" } else { "muted" }, kind.label())
                        )));
                    }
                    Row::Item(g, i) => {
                        let it = self.item(*g, *i);
                        let state = self.override_state(settings, it);
                        let inherited_global = self.is_inherited_global(it);
                        let checkbox = match (project, state) {
                            (true, Override::Load) => t.fg("success", "[+]"),
                            (true, Override::Unload) => t.fg("warning", "[-]"),
                            (true, Override::Inherit) => {
                                t.fg("dim", if it.enabled { "[x]" } else { "[ ]" })
                            }
                            (false, _) if it.enabled => t.fg("success", "[x]"),
                            (false, _) => t.fg("dim", "[ ]"),
                        };
                        let suffix = match (project, state) {
                            (true, Override::Load) => t.fg("muted", "  project load"),
                            (true, Override::Unload) => t.fg("muted", "  project unload"),
                            (true, Override::Inherit) if inherited_global => {
                                t.fg("dim", "  inherited global")
                            }
                            _ => String::new(),
                        };
                        let dimmed = project && inherited_global && state == Override::Inherit;
                        let name = pi_tui::ansi::escape_control(&it.name);
                        let name = if dimmed {
                            t.fg("dim", &name)
                        } else if sel {
                            format!("\x1b[1m{name}\x1b[22m")
                        } else {
                            name
                        };
                        let cursor = if sel { "> " } else { "  " };
                        out.push(fit(&format!("{cursor}    {checkbox} {name}{suffix}")));
                    }
                }
            }
            if start > 0 || end < n {
                let items = self
                    .rows
                    .iter()
                    .filter(|r| matches!(r, Row::Item(..)))
                    .count();
                let current = self.rows[..self.selected]
                    .iter()
                    .filter(|r| matches!(r, Row::Item(..)))
                    .count()
                    + 1;
                out.push(t.fg("dim", &format!("  ({current}/{items})")));
            }
        }
        out.push(String::new());
        out.push(rule);
        out
    }
}

struct Screen<'a> {
    view: &'a ConfigView,
    settings: &'a SettingsManager,
}

impl Component for Screen<'_> {
    fn render(&mut self, width: u16) -> Vec<String> {
        self.view.render_with(self.settings, width)
    }
}

struct Nothing;

impl Component for Nothing {
    fn render(&mut self, _width: u16) -> Vec<String> {
        Vec::new()
    }
}

const USAGE: &str = "pi config [-l] [--approve|--no-approve]";

/// `pi config [-l] [-a|--approve] [-na|--no-approve]`: pi's options and texts; the exit
/// code.
pub(crate) fn run(
    argv: &[String],
    cwd: &Path,
    agent_dir: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let rest = argv.get(1..).unwrap_or_default();
    if rest.iter().any(|a| a == "-h" || a == "--help") {
        let _ = write!(
            stdout,
            "Usage:\n  {USAGE}\n\nOpen the resource configuration TUI to enable or disable package resources.\nWithout -l, starts in global settings (~/{CONFIG_DIR_NAME}/agent/settings.json).\nPress Tab in the TUI to switch between global and project-local modes.\n\nOptions:\n  -l, --local       Edit project overrides ({CONFIG_DIR_NAME}/settings.json)\n  -a, --approve     Trust project-local files for this command with -l\n  -na, --no-approve Ignore project-local files for this command with -l\n\n"
        );
        return 0;
    }
    let mut local = false;
    let mut trust_override = None;
    for a in rest {
        match a.as_str() {
            "-l" | "--local" => local = true,
            "-a" | "--approve" => trust_override = Some(true),
            "-na" | "--no-approve" => trust_override = Some(false),
            a if a.starts_with('-') => {
                let _ = writeln!(stderr, "Unknown option {a} for \"config\".");
                let _ = writeln!(stderr, "Use \"pi --help\" or \"{USAGE}\".");
                return 1;
            }
            a => {
                let _ = writeln!(stderr, "Unexpected argument {a}.");
                let _ = writeln!(stderr, "Usage: {USAGE}");
                return 1;
            }
        }
    }
    let trusted =
        crate::config::trust::trusted_without_asking(cwd, agent_dir, trust_override, stderr);
    if local && !trusted {
        let _ = writeln!(
            stderr,
            "Project is not trusted. Use --approve to modify local resource config."
        );
        return 1;
    }
    let mut settings = SettingsManager::load(cwd, agent_dir, trusted);
    for e in settings.drain_errors() {
        let _ = writeln!(stderr, "Warning (config command): {}", e.diagnostic());
    }
    let global_items = resolve(
        &SettingsManager::load(cwd, agent_dir, false),
        cwd,
        agent_dir,
    );
    let project_items = if trusted {
        resolve(&settings, cwd, agent_dir)
    } else {
        global_items.clone()
    };
    let Ok(mut term) = Terminal::enter(TerminalOptions::default()) else {
        let _ = writeln!(stderr, "Error: pi config needs a terminal");
        return 1;
    };
    let theme_name = settings
        .get("theme")
        .and_then(Value::as_str)
        .unwrap_or("dark")
        .to_owned();
    let catalog =
        crate::config::themes::ThemeCatalog::discover(&crate::config::themes::ThemeSources {
            cwd,
            agent_dir,
            project_trusted: trusted,
            settings: &settings.scoped_resource_paths("themes"),
            cli_paths: &[],
            no_themes: false,
        });
    let mode = ColorMode::from_env();
    let theme =
        super::themes::resolve_setting(&theme_name, pi_tui::terminal_colors::ColorScheme::Dark)
            .and_then(|n| catalog.load(&n, mode).ok())
            .unwrap_or_else(|| Theme::builtin(pi_tui::terminal_colors::ColorScheme::Dark, mode));
    let (user, _) = UserBindings::load(&agent_dir.join("keybindings.json"));
    let keys = Arc::new(Keybindings::with_user(Platform::current(), &user));
    let (cols, rows) = terminal::size();
    let mut view = ConfigView::new(
        &global_items,
        &project_items,
        if local { Scope::Project } else { Scope::Global },
        trusted,
        cwd,
        rows,
        Arc::new(theme),
        keys,
    );
    let mut tui = Tui::new(cols, rows, TuiOptions::default());
    if let Some(row) = term.cursor_row() {
        tui.set_cursor_row(row);
    }
    let mut input = super::standalone_input::StandaloneInput::new();
    let mut force = true;
    'outer: loop {
        let now = Instant::now();
        let mut screen = Screen {
            view: &view,
            settings: &settings,
        };
        if let Some(bytes) = tui.frame(&mut screen, &mut Nothing, now, force) {
            let _ = term.write(&bytes);
            force = false;
        }
        let decoded = match input.poll(&mut term, &mut tui) {
            super::standalone_input::Polled::Input(d) => d,
            super::standalone_input::Polled::Redraw => {
                force = true;
                continue;
            }
            super::standalone_input::Polled::Terminate => break,
        };
        for d in decoded {
            if let Decoded::Input(InputEvent::Key(k)) = d {
                force = true;
                if view.handle_key(&mut settings, &k).is_some() {
                    break 'outer;
                }
            }
        }
    }
    let _ = term.write(&tui.finish());
    term.restore();
    for e in settings.drain_errors() {
        let _ = writeln!(stderr, "Warning (config command): {}", e.diagnostic());
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_list_every_kind_with_headers() {
        let d = tempfile::tempdir().unwrap();
        let agent = d.path().join("agent");
        let cwd = d.path().join("work");
        for sub in [
            "agent/prompts",
            "agent/skills/lint",
            "agent/themes",
            "work/.pi/prompts",
        ] {
            std::fs::create_dir_all(d.path().join(sub)).unwrap();
        }
        std::fs::write(agent.join("prompts/review.md"), "x").unwrap();
        std::fs::write(agent.join("themes/ocean.json"), "{}").unwrap();
        std::fs::write(agent.join("skills/lint/SKILL.md"), "x").unwrap();
        std::fs::write(cwd.join(".pi/prompts/local.md"), "x").unwrap();
        let settings = SettingsManager::load(&cwd, &agent, true);
        let items = resolve(&settings, &cwd, &agent);
        let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names.len(), 4, "{names:?}");
        let theme = Arc::new(Theme::builtin(
            pi_tui::terminal_colors::ColorScheme::Dark,
            ColorMode::None,
        ));
        let keys = Arc::new(Keybindings::with_user(
            Platform::current(),
            &Default::default(),
        ));
        let view = ConfigView::new(&items, &items, Scope::Global, true, &cwd, 30, theme, keys);
        let text = view.render_with(&settings, 100).join("\n");
        for t in [
            "Skills",
            "Prompts",
            "Themes",
            "review.md",
            "local.md",
            "Project (",
        ] {
            assert!(text.contains(t), "{t}: {text}");
        }
    }
}
