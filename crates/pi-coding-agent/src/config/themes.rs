//! Custom theme discovery: which theme files a run offers, under which names, and what went
//! wrong reading them.
//!
//! Mirrors pi 0.85.0 `DefaultResourceLoader` (`loadThemes`, `dedupeThemes`) and
//! `modes/interactive/theme/theme.js` (`getAvailableThemes`, `loadTheme`):
//! - unless `--no-themes`: the settings files' `themes` path entries (project file first, when
//!   the project is trusted) and the auto-discovered `<cwd>/.pi/themes/*.json` (trusted
//!   projects only) and `<agentDir>/themes/*.json`, switched off and on by the `!x` / `+x` /
//!   `-x` entries as skills are ([`crate::config::resource_filter`]);
//! - then every `--theme <path>` (a file or a directory), even with `--no-themes`;
//! - a theme's name is its JSON `name`; the first file of a name wins, later ones are
//!   collisions; the built-in `dark` and `light` are always offered, and a custom theme of
//!   the same name replaces the built-in one, as in pi;
//! - files that do not load are left out with a warning naming the file and pi's message.

use std::path::{Path, PathBuf};

use pi_tui::theme::{ColorMode, Theme, ThemeError};

use super::agent_paths::resolve_path;
use super::resource_filter::{apply_patterns, is_enabled_by_overrides};
use super::settings::ScopedResourcePaths;
use crate::config::agent_paths::CONFIG_DIR_NAME;

/// Where to look.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThemeSources<'a> {
    /// The working directory (`--theme` paths are relative to it).
    pub cwd: &'a Path,
    /// The agent directory (`themes/`).
    pub agent_dir: &'a Path,
    /// Whether `<cwd>/.pi/themes` may load.
    pub project_trusted: bool,
    /// The settings files' `themes` entries.
    pub settings: &'a ScopedResourcePaths,
    /// `--theme` paths, in order.
    pub cli_paths: &'a [String],
    /// `--no-themes`: only the `--theme` paths load.
    pub no_themes: bool,
}

/// A problem met while discovering themes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ThemeDiagnostic {
    /// `warning`, `error` or `collision` (pi's diagnostic types).
    pub kind: &'static str,
    /// pi's message.
    pub message: String,
    /// The file or directory it is about.
    pub path: PathBuf,
    /// For a collision: the file whose theme of that name is kept.
    pub winner: Option<PathBuf>,
    /// For a collision: the theme name.
    pub name: Option<String>,
}

/// A custom theme file that loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ThemeFile {
    /// Its JSON `name`.
    pub name: String,
    /// The file.
    pub path: PathBuf,
}

/// A theme that could not be loaded by name.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ThemeLoadError {
    /// No built-in or discovered theme has the name.
    #[error("Theme not found: {0}")]
    NotFound(String),
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a valid theme.
    #[error(transparent)]
    Invalid(#[from] ThemeError),
}

/// The themes a run offers.
#[derive(Clone, Debug, Default)]
pub(crate) struct ThemeCatalog {
    /// `<agentDir>/themes`, where pi looks up a name it did not discover (`<name>.json`);
    /// `None` with `--no-themes`.
    pub custom_dir: Option<PathBuf>,
    /// Custom theme files, first of each name only.
    pub files: Vec<ThemeFile>,
    /// Unreadable files and name collisions.
    pub diagnostics: Vec<ThemeDiagnostic>,
}

fn warning(message: impl Into<String>, path: &Path) -> ThemeDiagnostic {
    ThemeDiagnostic {
        kind: "warning",
        message: message.into(),
        path: path.to_path_buf(),
        winner: None,
        name: None,
    }
}

/// The `.json` files of a directory (symbolic links to files included), sorted by name so
/// collisions resolve the same way on every file system.
fn json_files(dir: &Path, diags: &mut Vec<ThemeDiagnostic>) -> Vec<PathBuf> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            diags.push(warning(e.to_string(), dir));
            return Vec::new();
        }
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.sort();
    out
}

/// Reads and validates one theme file: its name, or pi's message.
pub(crate) fn theme_name_of(path: &Path) -> Result<String, ThemeLoadError> {
    let theme = load_theme_file(path, ColorMode::TrueColor)?;
    Ok(theme.name().to_owned())
}

/// Loads a theme file for a colour depth.
pub(crate) fn load_theme_file(path: &Path, mode: ColorMode) -> Result<Theme, ThemeLoadError> {
    load_labelled(path, &path.display().to_string(), mode)
}

/// [`load_theme_file`] naming the theme `label` in errors.
fn load_labelled(path: &Path, label: &str, mode: ColorMode) -> Result<Theme, ThemeLoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| ThemeLoadError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let (theme, _warnings) = Theme::from_json(label, &text, mode)?;
    Ok(theme)
}

impl ThemeCatalog {
    /// Discovers the custom themes (see the module docs for the order).
    pub(crate) fn discover(src: &ThemeSources<'_>) -> Self {
        let mut candidates: Vec<PathBuf> = Vec::new();
        let mut diags = Vec::new();
        let from_path = |path: &Path, candidates: &mut Vec<PathBuf>, diags: &mut Vec<_>| {
            if !path.exists() {
                diags.push(warning("theme path does not exist", path));
            } else if path.is_dir() {
                candidates.extend(json_files(path, diags));
            } else if path.extension().is_some_and(|x| x == "json") {
                candidates.push(path.to_path_buf());
            } else {
                diags.push(warning("theme path is not a json file", path));
            }
        };
        if !src.no_themes {
            let set = src.settings;
            let scope = |paths: &[PathBuf],
                         entries: &[String],
                         base: &Path,
                         auto_dir: Option<PathBuf>,
                         candidates: &mut Vec<PathBuf>,
                         diags: &mut Vec<ThemeDiagnostic>| {
                let mut listed = Vec::new();
                for p in paths {
                    from_path(p, &mut listed, diags);
                }
                candidates.extend(apply_patterns(&listed, entries, base));
                if let Some(dir) = auto_dir {
                    candidates.extend(
                        json_files(&dir, diags)
                            .into_iter()
                            .filter(|f| is_enabled_by_overrides(f, entries, base)),
                    );
                }
            };
            if src.project_trusted {
                scope(
                    &set.project,
                    &set.project_entries,
                    &set.project_base,
                    Some(src.cwd.join(CONFIG_DIR_NAME).join("themes")),
                    &mut candidates,
                    &mut diags,
                );
            }
            scope(
                &set.user,
                &set.user_entries,
                &set.user_base,
                Some(src.agent_dir.join("themes")),
                &mut candidates,
                &mut diags,
            );
        }
        for raw in src.cli_paths {
            let path = resolve_path(raw.trim(), src.cwd);
            from_path(&path, &mut candidates, &mut diags);
        }
        let mut files: Vec<ThemeFile> = Vec::new();
        let mut seen_paths: Vec<PathBuf> = Vec::new();
        let mut collisions = Vec::new();
        for path in candidates {
            let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if seen_paths.contains(&real) {
                continue;
            }
            seen_paths.push(real);
            match theme_name_of(&path) {
                Ok(name) => {
                    if let Some(winner) = files.iter().find(|f| f.name == name) {
                        collisions.push(ThemeDiagnostic {
                            kind: "collision",
                            message: format!("name \"{name}\" collision"),
                            path: path.clone(),
                            winner: Some(winner.path.clone()),
                            name: Some(name),
                        });
                    } else {
                        files.push(ThemeFile { name, path });
                    }
                }
                Err(e) => diags.push(warning(e.to_string(), &path)),
            }
        }
        diags.extend(collisions);
        Self {
            custom_dir: (!src.no_themes).then(|| src.agent_dir.join("themes")),
            files,
            diagnostics: diags,
        }
    }

    /// Every theme name offered, sorted (pi's `getAvailableThemes`): the built-ins and the
    /// custom ones.
    pub(crate) fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = vec!["dark".into(), "light".into()];
        for f in &self.files {
            if !names.contains(&f.name) {
                names.push(f.name.clone());
            }
        }
        names.sort_by(|a, b| crate::config::collate::locale_compare(a, b));
        names
    }

    /// The file of a custom theme.
    pub(crate) fn path_of(&self, name: &str) -> Option<&Path> {
        self.files
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.path.as_path())
    }

    /// Loads a theme by name for a colour depth: a custom file of that name, else a built-in.
    pub(crate) fn load(&self, name: &str, mode: ColorMode) -> Result<Theme, ThemeLoadError> {
        if let Some(path) = self.path_of(name) {
            return load_theme_file(path, mode);
        }
        match name {
            "dark" => Ok(Theme::builtin(
                pi_tui::terminal_colors::ColorScheme::Dark,
                mode,
            )),
            "light" => Ok(Theme::builtin(
                pi_tui::terminal_colors::ColorScheme::Light,
                mode,
            )),
            // pi reads `<agentDir>/themes/<name>.json` itself, so a broken file there is
            // reported with its parse error rather than as missing.
            _ => {
                let file = self
                    .custom_dir
                    .as_ref()
                    .map(|d| d.join(format!("{name}.json")));
                if let Some(file) = file.filter(|f| !name.contains(['/', '\\']) && f.is_file()) {
                    return load_labelled(&file, name, mode);
                }
                Err(ThemeLoadError::NotFound(name.to_owned()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme_json(name: &str) -> String {
        let mut v: serde_json::Value = serde_json::from_str(pi_tui::theme::DARK_JSON).unwrap();
        v["name"] = name.into();
        v.to_string()
    }

    fn sources<'a>(
        cwd: &'a Path,
        agent: &'a Path,
        settings: &'a ScopedResourcePaths,
        cli: &'a [String],
    ) -> ThemeSources<'a> {
        ThemeSources {
            cwd,
            agent_dir: agent,
            project_trusted: true,
            settings,
            cli_paths: cli,
            no_themes: false,
        }
    }

    #[test]
    fn discovers_agent_and_project_themes_and_reports_bad_files_and_collisions() {
        let d = tempfile::tempdir().unwrap();
        let agent = d.path().join("agent");
        let cwd = d.path().join("proj");
        std::fs::create_dir_all(agent.join("themes")).unwrap();
        std::fs::create_dir_all(cwd.join(".pi/themes")).unwrap();
        std::fs::write(agent.join("themes/ocean.json"), theme_json("ocean")).unwrap();
        std::fs::write(agent.join("themes/broken.json"), "{ not json").unwrap();
        std::fs::write(agent.join("themes/notes.txt"), "x").unwrap();
        std::fs::write(cwd.join(".pi/themes/forest.json"), theme_json("forest")).unwrap();
        std::fs::write(cwd.join(".pi/themes/ocean2.json"), theme_json("ocean")).unwrap();
        let settings = ScopedResourcePaths {
            project_base: cwd.join(".pi"),
            user_base: agent.clone(),
            ..Default::default()
        };
        let cat = ThemeCatalog::discover(&sources(&cwd, &agent, &settings, &[]));
        assert_eq!(cat.names(), ["dark", "forest", "light", "ocean"]);
        // The project's ocean came first.
        assert_eq!(
            cat.path_of("ocean").unwrap(),
            cwd.join(".pi/themes/ocean2.json")
        );
        let broken = cat
            .diagnostics
            .iter()
            .find(|d| d.path.ends_with("broken.json"))
            .unwrap();
        assert!(
            broken.message.starts_with("Failed to parse theme "),
            "{broken:?}"
        );
        assert!(
            cat.diagnostics
                .iter()
                .any(|d| d.kind == "collision" && d.message == "name \"ocean\" collision")
        );
        assert!(cat.load("forest", ColorMode::TrueColor).is_ok());
        assert!(matches!(
            cat.load("nope", ColorMode::TrueColor),
            Err(ThemeLoadError::NotFound(_))
        ));
        // Untrusted: no project themes.
        let mut src = sources(&cwd, &agent, &settings, &[]);
        src.project_trusted = false;
        let cat = ThemeCatalog::discover(&src);
        assert_eq!(cat.names(), ["dark", "light", "ocean"]);
    }

    #[test]
    fn no_themes_keeps_only_cli_paths_and_filters_switch_files_off() {
        let d = tempfile::tempdir().unwrap();
        let agent = d.path().join("agent");
        std::fs::create_dir_all(agent.join("themes")).unwrap();
        std::fs::write(agent.join("themes/ocean.json"), theme_json("ocean")).unwrap();
        let extra = d.path().join("extra.json");
        std::fs::write(&extra, theme_json("extra")).unwrap();
        let settings = ScopedResourcePaths {
            user_entries: vec!["-themes/ocean.json".into()],
            user_base: agent.clone(),
            ..Default::default()
        };
        let cli = vec![extra.display().to_string(), "missing.json".to_owned()];
        let cat = ThemeCatalog::discover(&sources(d.path(), &agent, &settings, &cli));
        assert_eq!(cat.names(), ["dark", "extra", "light"]);
        assert!(
            cat.diagnostics
                .iter()
                .any(|d| d.message == "theme path does not exist")
        );
        let none = ScopedResourcePaths::default();
        let mut src = sources(d.path(), &agent, &none, &cli[..1]);
        src.no_themes = true;
        assert_eq!(
            ThemeCatalog::discover(&src).names(),
            ["dark", "extra", "light"]
        );
    }
}
