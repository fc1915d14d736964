//! Project trust: which working directories may load `.pi/` settings and resources.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/trust-manager.js` and `core/project-trust.js`:
//! - a cwd *needs* trust when `<cwd>/.pi` holds `settings.json`, `extensions`, `skills`,
//!   `prompts`, `themes`, `SYSTEM.md` or `APPEND_SYSTEM.md`, or when the cwd or an ancestor has
//!   `.agents/skills` (other than `~/.agents/skills`); otherwise it is trusted;
//! - decision order: `--approve`/`--no-approve`; no trust-requiring resources → trusted; the
//!   first yes/no of the `project_trust` extension hook (the seam [`ProjectTrustHook`]; a
//!   `remember` answer is stored); the nearest ancestor entry of `trust.json`;
//!   `defaultProjectTrust` (`always` → trusted, `never` → untrusted); `ask` → the UI prompt
//!   when there is one, else untrusted;
//! - `trust.json` = `{"<canonical dir>": true|false}` written with sorted keys, 2-space
//!   indentation and a trailing newline, under `trust.json.lock`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::agent_paths::CONFIG_DIR_NAME;
use super::js_json::parse_json;
use super::lock::FileLock;
use super::settings::ProjectTrustDefault;
use super::text::strip_bom;

/// Entries of `.pi/` that make a project need trust.
pub const TRUST_REQUIRING_RESOURCES: [&str; 7] = [
    "settings.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
];

/// `realpath` when the path exists, else the path as given.
pub fn canonicalize(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Whether `cwd` has project resources that trust gates (see the module docs).
pub fn has_trust_requiring_project_resources(cwd: &Path, home: &Path) -> bool {
    let user_skills = canonicalize(home).join(".agents").join("skills");
    let cwd = canonicalize(cwd);
    let config_dir = cwd.join(CONFIG_DIR_NAME);
    if TRUST_REQUIRING_RESOURCES
        .iter()
        .any(|e| config_dir.join(e).exists())
    {
        return true;
    }
    cwd.ancestors().any(|dir| {
        let skills = dir.join(".agents").join("skills");
        skills != user_skills && skills.exists()
    })
}

/// One stored decision change (`None` removes the entry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustUpdate {
    /// The directory (canonicalized when stored).
    pub path: PathBuf,
    /// `Some(true|false)` or `None` to delete.
    pub decision: Option<bool>,
}

/// Why `trust.json` could not be read or written; `Display` is pi's diagnostic (shown as a
/// start-up warning; the project then counts as untrusted).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TrustStoreError {
    /// The file exists but could not be read or is not JSON (the I/O or `JSON.parse` message).
    #[error("Failed to read trust store {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error or `JSON.parse` message.
        reason: String,
    },
    /// The JSON is not an object.
    #[error("Invalid trust store {path}: expected an object")]
    NotAnObject {
        /// The file.
        path: String,
    },
    /// A decision that is not `true`, `false` or `null`.
    #[error("Invalid trust store {path}: value for {key} must be true, false, or null")]
    InvalidDecision {
        /// The file.
        path: String,
        /// The directory key, as a JSON string.
        key: String,
    },
    /// Locking or writing the file failed (the I/O error).
    #[error("{0}")]
    Write(String),
}

/// `<agentDir>/trust.json`.
#[derive(Clone, Debug)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store of an agent directory.
    pub fn new(agent_dir: &Path) -> Self {
        TrustStore {
            path: agent_dir.join("trust.json"),
        }
    }

    fn read(&self) -> Result<Map<String, Value>, TrustStoreError> {
        let path = || self.path.display().to_string();
        let text = match crate::config::text::read_config_text(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(e) => {
                return Err(TrustStoreError::Read {
                    path: path(),
                    reason: e.to_string(),
                });
            }
        };
        let parsed: Value = parse_json(strip_bom(&text)).map_err(|e| TrustStoreError::Read {
            path: path(),
            reason: e.to_string(),
        })?;
        let Value::Object(map) = parsed else {
            return Err(TrustStoreError::NotAnObject { path: path() });
        };
        for (k, v) in &map {
            if !matches!(v, Value::Bool(_) | Value::Null) {
                return Err(TrustStoreError::InvalidDecision {
                    path: path(),
                    key: Value::from(k.as_str()).to_string(),
                });
            }
        }
        Ok(map)
    }

    fn lock(&self) -> Result<FileLock, TrustStoreError> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| TrustStoreError::Write(e.to_string()))?;
        }
        FileLock::acquire(&self.path).map_err(|e| TrustStoreError::Write(e.to_string()))
    }

    /// The nearest ancestor decision for `cwd` (`(dir, decision)`), `None` when there is none.
    pub fn get_entry(&self, cwd: &Path) -> Result<Option<(PathBuf, bool)>, TrustStoreError> {
        let _lock = self.lock()?;
        let data = self.read()?;
        let cwd = canonicalize(cwd);
        for dir in cwd.ancestors() {
            if let Some(Value::Bool(b)) = data.get(&dir.to_string_lossy().into_owned()) {
                return Ok(Some((dir.to_path_buf(), *b)));
            }
        }
        Ok(None)
    }

    /// The nearest ancestor decision for `cwd`.
    pub fn get(&self, cwd: &Path) -> Result<Option<bool>, TrustStoreError> {
        Ok(self.get_entry(cwd)?.map(|(_, d)| d))
    }

    /// Stores one decision for `cwd`.
    pub fn set(&self, cwd: &Path, decision: bool) -> Result<(), TrustStoreError> {
        self.set_many(&[TrustUpdate {
            path: cwd.to_path_buf(),
            decision: Some(decision),
        }])
    }

    /// Applies several updates in one locked write.
    pub fn set_many(&self, updates: &[TrustUpdate]) -> Result<(), TrustStoreError> {
        let _lock = self.lock()?;
        let mut data = self.read()?;
        for u in updates {
            let key = canonicalize(&u.path).to_string_lossy().into_owned();
            match u.decision {
                Some(d) => data.insert(key, Value::Bool(d)),
                None => data.remove(&key),
            };
        }
        let mut keys: Vec<&String> = data.keys().collect();
        keys.sort();
        let mut sorted = Map::new();
        for k in keys {
            if let Some(v @ Value::Bool(_)) = data.get(k) {
                sorted.insert(k.clone(), v.clone());
            }
        }
        let text = pi_ai::json::to_string_pretty(&Value::Object(sorted))
            .map_err(|e| TrustStoreError::Write(e.to_string()))?;
        super::replace::replace_file(&self.path, format!("{text}\n").as_bytes(), 0o666)
            .map_err(|e| TrustStoreError::Write(e.to_string()))
    }
}

/// One choice of the trust prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustOption {
    /// The label shown.
    pub label: String,
    /// Whether choosing it trusts the project.
    pub trusted: bool,
    /// What it stores.
    pub updates: Vec<TrustUpdate>,
}

/// `Trust project folder?\n<cwd>\n\nThis allows pi to load .pi settings and resources, install
/// missing project packages, and execute project extensions.`
pub fn format_project_trust_prompt(cwd: &Path) -> String {
    format!(
        "Trust project folder?\n{}\n\nThis allows pi to load {CONFIG_DIR_NAME} settings and resources, install missing project packages, and execute project extensions.",
        cwd.display()
    )
}

/// The prompt's choices: Trust, Trust parent folder (…), [Trust (this session only)],
/// Do not trust, [Do not trust (this session only)].
pub fn project_trust_options(cwd: &Path, include_session_only: bool) -> Vec<TrustOption> {
    let path = canonicalize(cwd);
    let mut out = vec![TrustOption {
        label: "Trust".into(),
        trusted: true,
        updates: vec![TrustUpdate {
            path: path.clone(),
            decision: Some(true),
        }],
    }];
    if let Some(parent) = path.parent() {
        out.push(TrustOption {
            label: format!("Trust parent folder ({})", parent.display()),
            trusted: true,
            updates: vec![
                TrustUpdate {
                    path: parent.to_path_buf(),
                    decision: Some(true),
                },
                TrustUpdate {
                    path: path.clone(),
                    decision: None,
                },
            ],
        });
    }
    if include_session_only {
        out.push(TrustOption {
            label: "Trust (this session only)".into(),
            trusted: true,
            updates: vec![],
        });
    }
    out.push(TrustOption {
        label: "Do not trust".into(),
        trusted: false,
        updates: vec![TrustUpdate {
            path,
            decision: Some(false),
        }],
    });
    if include_session_only {
        out.push(TrustOption {
            label: "Do not trust (this session only)".into(),
            trusted: false,
            updates: vec![],
        });
    }
    out
}

/// A `project_trust` handler's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrustHookAnswer {
    /// `trusted: "yes"` → true, `"no"` → false.
    pub trusted: bool,
    /// Store the answer in `trust.json`.
    pub remember: bool,
}

/// The seam where the extensions' `project_trust` event plugs in.
pub trait ProjectTrustHook {
    /// The first yes/no answer of the handlers, plus handler errors (as
    /// `Extension "<path>" project_trust error: <e>` diagnostics).
    fn project_trust(&mut self, cwd: &Path) -> (Option<TrustHookAnswer>, Vec<String>);
}

/// The interactive trust prompt: gets the prompt text and the choices, returns the chosen
/// index (`None` = cancelled).
pub type TrustPrompt<'a> = &'a mut dyn FnMut(&str, &[TrustOption]) -> Option<usize>;

/// Inputs of [`resolve_project_trusted`].
pub struct TrustInputs<'a> {
    /// The working directory.
    pub cwd: &'a Path,
    /// The home directory (for `~/.agents/skills`).
    pub home: &'a Path,
    /// `--approve` (Some(true)) / `--no-approve` (Some(false)).
    pub trust_override: Option<bool>,
    /// `defaultProjectTrust` from the global settings.
    pub default_trust: ProjectTrustDefault,
    /// The `project_trust` hook, when extensions are loaded.
    pub hook: Option<&'a mut dyn ProjectTrustHook>,
    /// The interactive prompt; `None` = no UI (print/json/rpc modes).
    pub prompt: Option<TrustPrompt<'a>>,
}

/// The decision and any warnings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustResolution {
    /// Whether project resources load.
    pub trusted: bool,
    /// Warnings (hook errors, trust-store problems).
    pub diagnostics: Vec<String>,
}

/// `resolveProjectTrusted` (see the module docs for the order).
pub fn resolve_project_trusted(inputs: TrustInputs<'_>, store: &TrustStore) -> TrustResolution {
    let mut diagnostics = Vec::new();
    let done = |trusted, diagnostics| TrustResolution {
        trusted,
        diagnostics,
    };
    if let Some(t) = inputs.trust_override {
        return done(t, diagnostics);
    }
    if !has_trust_requiring_project_resources(inputs.cwd, inputs.home) {
        return done(true, diagnostics);
    }
    if let Some(hook) = inputs.hook {
        let (answer, errors) = hook.project_trust(inputs.cwd);
        diagnostics.extend(errors);
        if let Some(a) = answer {
            if a.remember
                && let Err(e) = store.set(inputs.cwd, a.trusted)
            {
                diagnostics.push(e.to_string());
            }
            return done(a.trusted, diagnostics);
        }
    }
    match store.get(inputs.cwd) {
        Ok(Some(d)) => return done(d, diagnostics),
        Ok(None) => {}
        Err(e) => diagnostics.push(e.to_string()),
    }
    match inputs.default_trust {
        ProjectTrustDefault::Always => return done(true, diagnostics),
        ProjectTrustDefault::Never => return done(false, diagnostics),
        ProjectTrustDefault::Ask => {}
    }
    let Some(prompt) = inputs.prompt else {
        return done(false, diagnostics);
    };
    let options = project_trust_options(inputs.cwd, true);
    let text = format_project_trust_prompt(inputs.cwd);
    match prompt(&text, &options).and_then(|i| options.get(i)) {
        Some(choice) => {
            if !choice.updates.is_empty()
                && let Err(e) = store.set_many(&choice.updates)
            {
                diagnostics.push(e.to_string());
            }
            done(choice.trusted, diagnostics)
        }
        None => done(false, diagnostics),
    }
}

#[cfg(test)]
mod tests;
