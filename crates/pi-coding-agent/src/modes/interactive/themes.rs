//! Themes in the interactive mode: the start-up choice (`--use-theme`, the `theme` setting,
//! pi's `light/dark` automatic form), the `[Theme conflicts]` report, the theme selector of
//! `/settings` with live preview, and the hot reload of the active theme's file.
//!
//! Mirrors pi 0.85.0 `theme-controller.js` and `theme.js` (`setTheme`, `startThemeWatcher`):
//! a theme that does not load falls back to `dark` with pi's error text; a file being edited
//! that is briefly invalid keeps the last good theme. The watcher here polls the file's
//! modification time and size every [`POLL`] (one `stat`), which is cheaper and steadier than
//! a directory watch and covers editors that replace the file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use pi_tui::terminal_colors::ColorScheme;
use pi_tui::theme::{ColorMode, Theme, parse_auto_theme_setting};

use super::App;
use super::picker::{PickItem, Picker};
use crate::config::themes::{ThemeCatalog, ThemeSources};

/// How often the active theme's file is checked for changes.
pub(super) const POLL: Duration = Duration::from_millis(250);

/// The automatic entry's key in the theme selector (pi's `AUTOMATIC_THEME_VALUE`).
const AUTOMATIC: &str = "/";

/// What the interactive mode knows about themes.
pub(super) struct ThemeState {
    /// The themes this run offers.
    pub catalog: ThemeCatalog,
    /// The theme setting chosen in this run (`--use-theme`, the selector), over the file's.
    pub run_setting: Option<String>,
    /// The name of the theme in use.
    pub active: String,
    /// The terminal's appearance (for `light/dark` settings).
    pub scheme: ColorScheme,
    /// The colour depth.
    pub mode: ColorMode,
    /// The setting when the selector opened (Esc restores it).
    pub before_preview: Option<String>,
    /// In the automatic selector: the light theme picked in its first step.
    pub auto_light: Option<String>,
    watched: Option<Watched>,
    last_poll: Instant,
}

struct Watched {
    path: PathBuf,
    stamp: Option<(SystemTime, u64)>,
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// pi's `resolveThemeSetting`: the name a setting stands for on a terminal of `scheme`.
pub(super) fn resolve_setting(setting: &str, scheme: ColorScheme) -> Option<String> {
    if let Some((light, dark)) = parse_auto_theme_setting(setting) {
        return Some(
            match scheme {
                ColorScheme::Light => light,
                ColorScheme::Dark => dark,
            }
            .to_owned(),
        );
    }
    (!setting.contains('/')).then(|| setting.to_owned())
}

impl ThemeState {
    /// Discovers the themes for a run and picks the first one; the error text when the
    /// configured theme does not load (the theme is then `dark`).
    pub(super) fn start(
        sources: &ThemeSources<'_>,
        file_setting: Option<&str>,
        run_setting: Option<String>,
        mode: ColorMode,
    ) -> (Self, Theme, Option<String>) {
        let catalog = ThemeCatalog::discover(sources);
        let (scheme, _) = pi_tui::theme::detect_scheme(None, None, |name| std::env::var(name).ok());
        let mut state = Self {
            catalog,
            run_setting,
            active: "dark".into(),
            scheme,
            mode,
            before_preview: None,
            auto_light: None,
            watched: None,
            last_poll: Instant::now(),
        };
        let setting = state
            .run_setting
            .clone()
            .or(file_setting.map(str::to_owned));
        let name = match setting.as_deref() {
            Some(s) => resolve_setting(s, scheme),
            // pi: no setting, the terminal's appearance.
            None => Some(scheme.as_str().to_owned()),
        };
        let (theme, error) = match name {
            Some(name) => state.load(&name),
            None => (state.fallback(), None),
        };
        (state, theme, error)
    }

    fn fallback(&mut self) -> Theme {
        self.active = "dark".into();
        self.watched = None;
        Theme::builtin(ColorScheme::Dark, self.mode)
    }

    /// Loads `name` and watches its file; on failure `dark` and pi's error text.
    pub(super) fn load(&mut self, name: &str) -> (Theme, Option<String>) {
        match self.catalog.load(name, self.mode) {
            Ok(theme) => {
                self.active = name.to_owned();
                self.watched = self.catalog.path_of(name).map(|p| Watched {
                    path: p.to_path_buf(),
                    stamp: stamp(p),
                });
                (theme, None)
            }
            Err(e) => (
                self.fallback(),
                Some(format!(
                    "Failed to load theme \"{name}\": {e}\nFell back to dark theme."
                )),
            ),
        }
    }

    /// The active theme again when its file changed since the last look (at most every
    /// [`POLL`]); `None` when unchanged, gone or (while being edited) invalid.
    pub(super) fn poll(&mut self, now: Instant) -> Option<Theme> {
        if now.duration_since(self.last_poll) < POLL {
            return None;
        }
        self.last_poll = now;
        let w = self.watched.as_mut()?;
        let current = stamp(&w.path);
        if current.is_none() || current == w.stamp {
            return None;
        }
        w.stamp = current;
        crate::config::themes::load_theme_file(&w.path, self.mode).ok()
    }

    /// The `[Theme conflicts]` report of discovery, if anything went wrong.
    pub(super) fn report(&self) -> Option<String> {
        let diags = &self.catalog.diagnostics;
        if diags.is_empty() {
            return None;
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let show = |p: &Path| match home.as_deref().and_then(|h| p.strip_prefix(h).ok()) {
            Some(rest) => format!("~/{}", rest.display()),
            None => p.display().to_string(),
        };
        let mut lines = vec!["[Theme conflicts]".to_owned()];
        let mut names: Vec<&str> = Vec::new();
        for d in diags.iter().filter(|d| d.kind == "collision") {
            let name = d.name.as_deref().unwrap_or_default();
            if names.contains(&name) {
                continue;
            }
            names.push(name);
            lines.push(format!("  \"{name}\" collision:"));
            if let Some(w) = &d.winner {
                lines.push(format!("    ✓ {}", show(w)));
            }
            for l in diags
                .iter()
                .filter(|x| x.kind == "collision" && x.name.as_deref() == Some(name))
            {
                lines.push(format!("    ✗ {} (skipped)", show(&l.path)));
            }
        }
        for d in diags.iter().filter(|d| d.kind != "collision") {
            lines.push(format!("  {}", show(&d.path)));
            for m in d.message.lines() {
                lines.push(format!("    {m}"));
            }
        }
        Some(lines.join("\n"))
    }
}

impl App {
    /// Draws everything with `theme` from now on, the history too (pi invalidates the whole
    /// UI on a theme change). While a reply streams only the new blocks change.
    pub(super) fn install_theme(&mut self, theme: Theme) {
        self.adopt_theme(theme);
        if !self.busy() {
            self.redraw_history();
        }
        if self.settings_view.is_some() {
            self.reopen_settings();
        }
        if let Some((_, p)) = self.picker.as_mut() {
            p.set_theme(self.theme.clone());
        }
        self.refresh_footer();
        self.force = true;
    }

    /// The theme for every part of the mode, without drawing the history again.
    fn adopt_theme(&mut self, theme: Theme) {
        let theme = Arc::new(theme);
        let hyperlinks = pi_tui::capabilities::Capabilities::detect().hyperlinks;
        let style = Arc::new(theme.markdown_style(hyperlinks));
        self.transcript.set_theme(theme.clone(), style);
        self.editor
            .set_style(pi_tui::components::editor::EditorStyle::from_theme(&theme));
        self.status
            .set_colors(theme.fg_ansi("borderMuted"), theme.fg_ansi("accent"));
        self.theme = theme;
    }

    /// `/reload`: the themes discovered again (the settings files were read again) and the
    /// selected theme loaded anew; the caller draws the history, then these notices.
    pub(super) fn reload_themes(&mut self) -> Vec<(String, &'static str)> {
        let (paths, trusted, cli_paths) = {
            let s = crate::sync::lock(self.session.settings());
            let cli = crate::packages::with_package_themes(
                &self.options.theme_paths,
                self.options.no_themes,
                &s,
                &self.options.cwd,
                &self.options.agent_dir,
            );
            (
                s.scoped_resource_paths("themes"),
                s.is_project_trusted(),
                cli,
            )
        };
        self.themes.catalog = ThemeCatalog::discover(&ThemeSources {
            cwd: &self.options.cwd,
            agent_dir: &self.options.agent_dir,
            project_trusted: trusted,
            settings: &paths,
            cli_paths: &cli_paths,
            no_themes: self.options.no_themes,
        });
        let setting = self.theme_selection();
        let name =
            resolve_setting(&setting, self.themes.scheme).unwrap_or_else(|| "dark".to_owned());
        let (theme, error) = self.themes.load(&name);
        self.adopt_theme(theme);
        let mut notes = Vec::new();
        if let Some(report) = self.themes.report() {
            notes.push((report, "warning"));
        }
        if let Some(e) = error {
            notes.push((format!("Error: {e}"), "error"));
        }
        notes
    }

    /// The transcript drawn again from the session (no editor history or usage changes).
    fn redraw_history(&mut self) {
        self.clear_chat();
        let messages = self.session.messages();
        let skip = messages.len().saturating_sub(super::RESUME_MESSAGES);
        if skip > 0 {
            self.transcript.notice(
                format!("··· {skip} earlier messages of this session not shown ···"),
                "dim",
            );
        }
        for m in &messages[skip..] {
            self.transcript.replay_message(m);
        }
        self.transcript.settle();
    }

    /// Applies a theme setting (a name or `light/dark`); pi's error when it does not load.
    pub(super) fn apply_theme_setting(&mut self, setting: &str, show_error: bool) {
        let name =
            resolve_setting(setting, self.themes.scheme).unwrap_or_else(|| "dark".to_owned());
        let (theme, error) = self.themes.load(&name);
        self.install_theme(theme);
        if let (Some(e), true) = (error, show_error) {
            self.error_notice(e);
        }
    }

    /// Checks the active theme's file; a change is drawn at once.
    pub(super) fn poll_theme(&mut self, now: Instant) {
        if let Some(theme) = self.themes.poll(now) {
            self.install_theme(theme);
        }
    }

    /// The effective theme setting (this run's, else the settings file's, else the theme in
    /// use), as pi's `getThemeSelection`.
    pub(super) fn theme_selection(&self) -> String {
        self.themes.run_setting.clone().unwrap_or_else(|| {
            crate::sync::lock(self.session.settings())
                .get("theme")
                .and_then(serde_json::Value::as_str)
                .map_or_else(|| self.themes.active.clone(), str::to_owned)
        })
    }

    /// The theme row of `/settings`: pi's selector, `Automatic` first, the current one ticked;
    /// moving through it previews each theme.
    pub(super) fn open_theme_selector(&mut self) {
        let setting = self.theme_selection();
        self.themes.before_preview = Some(setting.clone());
        let current = resolve_setting(&setting, self.themes.scheme);
        let automatic = parse_auto_theme_setting(&setting).is_some();
        let mut items = vec![PickItem::new(AUTOMATIC, "Automatic")];
        items[0].badge = Some("Use separate themes for light and dark terminal appearance".into());
        items[0].current = automatic;
        for name in self.themes.catalog.names() {
            let mut item = PickItem::new(name.clone(), name.clone());
            item.current = !automatic && current.as_deref() == Some(name.as_str());
            items.push(item);
        }
        let p = Picker::new("Theme", items, self.theme.clone(), self.keys.clone()).with_note(
            "Select a theme, or choose Automatic to follow terminal appearance.",
            "muted",
        );
        self.settings_view = None;
        self.open_picker(super::commands::Pick::Theme, p);
    }

    /// A step of the automatic selector: the light theme, then the dark one.
    fn open_auto_step(&mut self, light: Option<String>) {
        let setting = self.themes.before_preview.clone().unwrap_or_default();
        let (cur_light, cur_dark) = parse_auto_theme_setting(&setting)
            .map(|(l, d)| (l.to_owned(), d.to_owned()))
            .unwrap_or_else(|| {
                let fixed =
                    resolve_setting(&setting, self.themes.scheme).unwrap_or_else(|| "dark".into());
                (fixed.clone(), fixed)
            });
        let (title, note, current) = match &light {
            None => (
                "Light Theme",
                "Select the theme to use for light terminal appearance",
                cur_light,
            ),
            Some(_) => (
                "Dark Theme",
                "Select the theme to use for dark terminal appearance",
                cur_dark,
            ),
        };
        let items = self
            .themes
            .catalog
            .names()
            .into_iter()
            .map(|n| {
                let mut item = PickItem::new(n.clone(), n.clone());
                item.current = n == current;
                item
            })
            .collect();
        self.themes.auto_light = light;
        let p = Picker::new(title, items, self.theme.clone(), self.keys.clone())
            .with_note(note, "muted")
            .with_hint("Enter to select · Esc to go back");
        self.open_picker(super::commands::Pick::AutoTheme, p);
    }

    /// The selection moved in a theme selector: show that theme.
    pub(super) fn preview_theme(&mut self, key: &str) {
        let name = if key == AUTOMATIC {
            resolve_setting(
                self.themes.before_preview.as_deref().unwrap_or("dark"),
                self.themes.scheme,
            )
            .unwrap_or_else(|| "dark".into())
        } else {
            key.to_owned()
        };
        if name == self.themes.active {
            return;
        }
        // pi previews only themes that load.
        if let Ok(theme) = self.themes.catalog.load(&name, self.themes.mode) {
            self.themes.load(&name);
            self.install_theme(theme);
        }
    }

    /// Enter or Esc in a theme selector.
    pub(super) fn theme_chosen(&mut self, auto_step: bool, key: Option<String>) {
        let Some(key) = key else {
            // Esc: the theme of before, back to /settings.
            let before = self.themes.before_preview.take().unwrap_or_default();
            self.apply_theme_setting(&before, false);
            self.reopen_settings();
            return;
        };
        if !auto_step && key == AUTOMATIC {
            self.open_auto_step(None);
            return;
        }
        if auto_step && self.themes.auto_light.is_none() {
            self.open_auto_step(Some(key));
            return;
        }
        let setting = match self.themes.auto_light.take() {
            Some(light) if auto_step => format!("{light}/{key}"),
            _ => key,
        };
        self.themes.before_preview = None;
        crate::sync::lock(self.session.settings())
            .set_global("theme", Some(serde_json::Value::from(setting.clone())));
        self.themes.run_setting = Some(setting.clone());
        self.apply_theme_setting(&setting, true);
        self.reopen_settings();
    }
}
