//! `settings.json`: global and project files, deep merge, load migrations, locked writes.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/settings-manager.js`:
//! - effective settings = deep merge(global, project): objects merge recursively, arrays and
//!   scalars are replaced; the project file (`<cwd>/.pi/settings.json`) counts only when trusted;
//! - load migrations (see [`migrate`]);
//! - a file that fails to parse is reported as an error (`Invalid settings file <path>: <why>`,
//!   `<why>` being `JSON.parse`'s text with position, line and column), treated as `{}`, and
//!   never overwritten;
//! - setters change the in-memory global settings, remember which fields (and nested keys) this
//!   process modified, and write the global file under its lock: re-read it, replace only those
//!   fields, write `JSON.stringify(settings, null, 2)` without a trailing newline.
//!
//! Typed getters with the reference's defaults live in `accessors.rs`.

mod accessors;
mod migrate;

pub use accessors::{
    BranchSummarySettings, CompactionSettings, InvalidSetting, ProjectTrustDefault,
    ProviderRetrySettings, QueueMode, RetrySettings, ScopedResourcePaths, StreamSettings,
};
pub use migrate::migrate;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::agent_paths::CONFIG_DIR_NAME;
use super::js_json::parse_json;
use super::lock::FileLock;
use super::text::strip_bom;

/// Which settings file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingsScope {
    /// `<agentDir>/settings.json`.
    Global,
    /// `<cwd>/.pi/settings.json`.
    Project,
}

impl SettingsScope {
    fn as_str(self) -> &'static str {
        match self {
            SettingsScope::Global => "global",
            SettingsScope::Project => "project",
        }
    }
}

/// A load or write failure of one settings file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsError {
    /// The file's scope.
    pub scope: SettingsScope,
    /// The file, when file-backed.
    pub path: Option<PathBuf>,
    /// What went wrong (for parse errors: serde's text with line and column).
    pub message: String,
}

impl SettingsError {
    /// The user-facing diagnostic, as pi's `collectSettingsDiagnostics`:
    /// `Invalid settings file <path>: <message>` or `Invalid <scope> settings: <message>`.
    pub fn diagnostic(&self) -> String {
        match &self.path {
            Some(p) => format!("Invalid settings file {}: {}", p.display(), self.message),
            None => format!("Invalid {} settings: {}", self.scope.as_str(), self.message),
        }
    }
}

/// Deep merge: `overrides` wins; objects merge recursively; arrays and scalars are replaced.
pub fn deep_merge(base: &Map<String, Value>, overrides: &Map<String, Value>) -> Map<String, Value> {
    let mut result = base.clone();
    for (key, value) in overrides {
        let merged = match (result.get(key), value) {
            (Some(Value::Object(b)), Value::Object(o)) => Value::Object(deep_merge(b, o)),
            _ => value.clone(),
        };
        result.insert(key.clone(), merged);
    }
    result
}

/// Why a settings file's text is not settings; the text is a [`SettingsError`]'s message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsTextError {
    /// Not JSON: `JSON.parse`'s message.
    #[error("{0}")]
    Json(#[from] crate::config::js_json::JsonParseError),
    /// JSON, but not an object.
    #[error("expected a JSON object")]
    NotAnObject,
}

/// Why a settings write did not land; the text is a [`SettingsError`]'s message.
#[derive(Debug, thiserror::Error)]
enum SettingsWriteError {
    /// Creating the directory, locking, reading or replacing the file.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file on disk is not settings (it is left as it is).
    #[error("{0}")]
    Text(#[from] SettingsTextError),
    /// The merged settings do not serialize.
    #[error("{0}")]
    Serialize(#[from] serde_json::Error),
}

/// Parses and migrates one settings file's text. Empty text is `{}`.
pub fn parse_settings(text: &str) -> Result<Map<String, Value>, SettingsTextError> {
    let text = strip_bom(text);
    if text.is_empty() {
        return Ok(Map::new());
    }
    match parse_json(text)? {
        Value::Object(map) => Ok(migrate(map)),
        _ => Err(SettingsTextError::NotAnObject),
    }
}

struct Loaded {
    settings: Map<String, Value>,
    error: Option<String>,
}

fn load_file(path: Option<&Path>) -> Loaded {
    let Some(path) = path else {
        return Loaded {
            settings: Map::new(),
            error: None,
        };
    };
    match crate::config::text::read_config_text(path) {
        Ok(text) => match parse_settings(&text) {
            Ok(settings) => Loaded {
                settings,
                error: None,
            },
            Err(error) => Loaded {
                settings: Map::new(),
                error: Some(error.to_string()),
            },
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Loaded {
            settings: Map::new(),
            error: None,
        },
        Err(e) => Loaded {
            settings: Map::new(),
            error: Some(e.to_string()),
        },
    }
}

/// Global + project settings of one working directory.
#[derive(Debug)]
pub struct SettingsManager {
    global_path: Option<PathBuf>,
    project_path: Option<PathBuf>,
    global: Map<String, Value>,
    project: Map<String, Value>,
    merged: Map<String, Value>,
    project_trusted: bool,
    /// Fields modified by this process in first-modification order, each with the nested keys
    /// modified (`None` = the whole field).
    modified: Vec<(String, Option<Vec<String>>)>,
    global_load_failed: bool,
    errors: Vec<SettingsError>,
}

impl SettingsManager {
    /// Loads `<agent_dir>/settings.json` and, when `project_trusted`, `<cwd>/.pi/settings.json`.
    pub fn load(cwd: &Path, agent_dir: &Path, project_trusted: bool) -> Self {
        let global_path = agent_dir.join("settings.json");
        let project_path = cwd.join(CONFIG_DIR_NAME).join("settings.json");
        Self::from_paths(Some(global_path), Some(project_path), project_trusted)
    }

    /// Settings held only in memory (no file is read or written); `global` is migrated.
    pub fn in_memory(global: Map<String, Value>) -> Self {
        let mut manager = Self::from_paths(None, None, true);
        manager.global = migrate(global);
        manager.remerge();
        manager
    }

    fn from_paths(
        global_path: Option<PathBuf>,
        project_path: Option<PathBuf>,
        project_trusted: bool,
    ) -> Self {
        let mut manager = SettingsManager {
            global_path,
            project_path,
            global: Map::new(),
            project: Map::new(),
            merged: Map::new(),
            project_trusted,
            modified: Vec::new(),
            global_load_failed: false,
            errors: Vec::new(),
        };
        manager.reload();
        manager
    }

    /// Re-reads both files, forgetting this process's unsaved field tracking.
    pub fn reload(&mut self) {
        let global = load_file(self.global_path.as_deref());
        if let Some(message) = global.error {
            self.global_load_failed = true;
            self.record_error(SettingsScope::Global, message);
        } else {
            self.global_load_failed = false;
            self.global = global.settings;
        }
        self.modified.clear();
        self.load_project();
    }

    fn load_project(&mut self) {
        if !self.project_trusted {
            self.project = Map::new();
        } else {
            let project = load_file(self.project_path.as_deref());
            if let Some(message) = project.error {
                self.record_error(SettingsScope::Project, message);
                self.project = Map::new();
            } else {
                self.project = project.settings;
            }
        }
        self.remerge();
    }

    fn record_error(&mut self, scope: SettingsScope, message: String) {
        let path = match scope {
            SettingsScope::Global => self.global_path.clone(),
            SettingsScope::Project => self.project_path.clone(),
        };
        self.errors.push(SettingsError {
            scope,
            path,
            message,
        });
    }

    fn remerge(&mut self) {
        self.merged = deep_merge(&self.global, &self.project);
    }

    /// Whether project settings are loaded.
    pub fn is_project_trusted(&self) -> bool {
        self.project_trusted
    }

    /// Changes the trust decision: untrusted drops project settings, trusted (re)loads them.
    pub fn set_project_trusted(&mut self, trusted: bool) {
        if self.project_trusted != trusted {
            self.project_trusted = trusted;
            self.load_project();
        }
    }

    /// Applies run-time overrides (e.g. `--settings` style) on top of the effective settings.
    pub fn apply_overrides(&mut self, overrides: &Map<String, Value>) {
        self.merged = deep_merge(&self.merged, overrides);
    }

    /// The effective (merged) settings.
    pub fn effective(&self) -> &Map<String, Value> {
        &self.merged
    }

    /// The global file's settings.
    pub fn global(&self) -> &Map<String, Value> {
        &self.global
    }

    /// The project file's settings (empty when untrusted).
    pub fn project(&self) -> &Map<String, Value> {
        &self.project
    }

    /// Takes the errors recorded so far (load and write failures).
    pub fn drain_errors(&mut self) -> Vec<SettingsError> {
        std::mem::take(&mut self.errors)
    }

    /// A value of the effective settings.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.merged.get(key)
    }

    /// A nested value of the effective settings (`get_nested("retry", "enabled")`).
    pub fn get_nested(&self, key: &str, nested: &str) -> Option<&Value> {
        self.merged.get(key)?.as_object()?.get(nested)
    }

    /// Sets (or with `None` removes) a global field and writes the global file.
    pub fn set_global(&mut self, key: &str, value: Option<Value>) {
        self.stage_global(key, value);
        self.save();
    }

    /// Sets (or with `None` removes) a field of the project file (`<cwd>/.pi/settings.json`)
    /// and writes that field alone into it; nothing happens while the project is untrusted.
    /// A project file that does not parse is left as it is (the error is recorded).
    pub fn set_project(&mut self, key: &str, value: Option<Value>) {
        if !self.project_trusted {
            return;
        }
        let Some(path) = self.project_path.clone() else {
            return;
        };
        match &value {
            Some(v) => {
                self.project.insert(key.to_owned(), v.clone());
            }
            None => {
                self.project.remove(key);
            }
        }
        self.remerge();
        let write = || -> Result<(), SettingsWriteError> {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let _lock = FileLock::acquire(&path)?;
            let mut next = match crate::config::text::read_config_text(&path) {
                Ok(text) => parse_settings(&text)?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
                Err(e) => return Err(e.into()),
            };
            match &value {
                Some(v) => {
                    next.insert(key.to_owned(), v.clone());
                }
                None => {
                    next.remove(key);
                }
            }
            let text = pi_ai::json::to_string_pretty(&Value::Object(next))?;
            super::replace::replace_file(&path, text.as_bytes(), 0o666)?;
            Ok(())
        };
        if let Err(e) = write() {
            self.record_error(SettingsScope::Project, e.to_string());
        }
    }

    /// Sets several global fields and writes the global file once.
    pub fn set_global_fields(&mut self, fields: &[(&str, Value)]) {
        for (key, value) in fields {
            self.stage_global(key, Some(value.clone()));
        }
        self.save();
    }

    fn stage_global(&mut self, key: &str, value: Option<Value>) {
        match value {
            Some(v) => {
                self.global.insert(key.to_owned(), v);
            }
            None => {
                self.global.remove(key);
            }
        }
        match self.modified.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = None,
            None => self.modified.push((key.to_owned(), None)),
        }
    }

    /// Sets a nested global key (`retry.enabled`) and writes the global file; only that nested
    /// key of the file's object is replaced.
    pub fn set_global_nested(&mut self, key: &str, nested: &str, value: Value) {
        let entry = self
            .global
            .entry(key.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        if let Value::Object(obj) = entry {
            obj.insert(nested.to_owned(), value);
        }
        match self.modified.iter_mut().find(|(k, _)| k == key) {
            Some((_, Some(keys))) => {
                if !keys.iter().any(|k| k == nested) {
                    keys.push(nested.to_owned());
                }
            }
            Some((_, None)) => {}
            None => self
                .modified
                .push((key.to_owned(), Some(vec![nested.to_owned()]))),
        }
        self.save();
    }

    /// Writes the modified global fields (no-op when the global file failed to load).
    fn save(&mut self) {
        self.remerge();
        if self.global_load_failed {
            return;
        }
        let Some(path) = self.global_path.clone() else {
            self.modified.clear();
            return;
        };
        if let Err(e) = self.persist(&path) {
            self.record_error(SettingsScope::Global, e.to_string());
        }
        self.modified.clear();
    }

    fn persist(&self, path: &Path) -> Result<(), SettingsWriteError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let _lock = FileLock::acquire(path)?;
        let current = match crate::config::text::read_config_text(path) {
            Ok(text) => parse_settings(&text)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
            Err(e) => return Err(e.into()),
        };
        let mut next = current.clone();
        for (field, nested) in &self.modified {
            let value = self.global.get(field);
            match (nested, value) {
                (Some(keys), Some(Value::Object(in_memory))) => {
                    let mut merged = current
                        .get(field)
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_default();
                    for k in keys {
                        match in_memory.get(k) {
                            Some(v) => {
                                merged.insert(k.clone(), v.clone());
                            }
                            None => {
                                merged.remove(k);
                            }
                        }
                    }
                    next.insert(field.clone(), Value::Object(merged));
                }
                (_, Some(v)) => {
                    next.insert(field.clone(), v.clone());
                }
                (_, None) => {
                    next.remove(field);
                }
            }
        }
        let text = pi_ai::json::to_string_pretty(&Value::Object(next))?;
        super::replace::replace_file(path, text.as_bytes(), 0o666)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
