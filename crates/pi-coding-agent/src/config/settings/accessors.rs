//! Typed getters (with the reference's defaults) and setters over [`SettingsManager`].
//!
//! Mirrors the getters of pi-coding-agent 0.85.0 `SettingsManager`. A value of the wrong JSON
//! type reads as absent (the default applies), as `??` does for the reference's consumers;
//! `httpIdleTimeoutMs` is the exception: an unparsable value is an error
//! (`Invalid httpIdleTimeoutMs setting: <value>`).

use pi_ai::{ModelThinkingLevel, ThinkingBudgets};
use serde_json::{Map, Value};

use super::SettingsManager;
use crate::config::agent_paths::expand_tilde;
use crate::config::resource_filter::is_pattern;

/// Default `httpIdleTimeoutMs` (5 minutes).
pub(super) const DEFAULT_HTTP_IDLE_TIMEOUT_MS: u64 = 300_000;
/// The request timeout used when `httpIdleTimeoutMs` is 0 ("off"): 2^31 − 1 ms.
pub(super) const NO_TIMEOUT_MS: u64 = 2_147_483_647;

/// How queued steering / follow-up messages are delivered: the agent's own type, so the
/// settings, the session and RPC speak one vocabulary.
pub use pi_agent_core::QueueMode;

/// `defaultProjectTrust` (global settings only): `ask` (default), `always`, `never`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProjectTrustDefault {
    /// Ask (TUI) / untrusted (non-interactive).
    Ask,
    /// Trust every project.
    Always,
    /// Trust no project.
    Never,
}

impl ProjectTrustDefault {
    /// pi's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectTrustDefault::Ask => "ask",
            ProjectTrustDefault::Always => "always",
            ProjectTrustDefault::Never => "never",
        }
    }
}

/// `compaction.*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactionSettings {
    /// `compaction.enabled` (true): gates automatic compaction only.
    pub enabled: bool,
    /// `compaction.reserveTokens` (16384).
    pub reserve_tokens: u64,
    /// `compaction.keepRecentTokens` (20000).
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    /// pi's defaults: enabled, 16384 reserved, 20000 kept.
    fn default() -> Self {
        CompactionSettings {
            enabled: true,
            reserve_tokens: 16384,
            keep_recent_tokens: 20000,
        }
    }
}

/// `branchSummary.*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchSummarySettings {
    /// `branchSummary.reserveTokens` (16384).
    pub reserve_tokens: u64,
    /// `branchSummary.skipPrompt` (false).
    pub skip_prompt: bool,
}

/// `retry.*` (the session's auto-retry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetrySettings {
    /// `retry.enabled` (true).
    pub enabled: bool,
    /// `retry.maxRetries` (3).
    pub max_retries: u32,
    /// `retry.baseDelayMs` (2000); delay = base · 2^(attempt−1).
    pub base_delay_ms: u64,
}

/// `retry.provider.*` (handed to the provider request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProviderRetrySettings {
    /// `retry.provider.timeoutMs` (unset).
    pub timeout_ms: Option<u64>,
    /// `retry.provider.maxRetries` (unset: the provider default, 0).
    pub max_retries: Option<u32>,
    /// `retry.provider.maxRetryDelayMs` (60000; 0 = no cap).
    pub max_retry_delay_ms: u64,
}

/// What the settings put into every provider request (pi's `createAgentSession` `streamFn`).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamSettings {
    /// `StreamOptions::idle_timeout_ms` ← `httpIdleTimeoutMs` (0 = off).
    pub idle_timeout_ms: u64,
    /// `StreamOptions::timeout_ms` ← `retry.provider.timeoutMs`, else `httpIdleTimeoutMs`, with 0
    /// meaning "no limit" (2^31 − 1 ms).
    pub timeout_ms: u64,
    /// `StreamOptions::max_retries` ← `retry.provider.maxRetries`.
    pub max_retries: Option<u32>,
    /// `StreamOptions::max_retry_delay_ms` ← `retry.provider.maxRetryDelayMs` (60000).
    pub max_retry_delay_ms: u64,
    /// `transport` (`auto`).
    pub transport: String,
    /// `thinkingBudgets`, over the defaults.
    pub thinking_budgets: Option<ThinkingBudgets>,
}

fn as_u64(v: Option<&Value>) -> Option<u64> {
    let v = v?;
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    let f = v.as_f64()?;
    (f.is_finite() && f >= 0.0).then_some(f.floor() as u64)
}

fn as_str(v: Option<&Value>) -> Option<&str> {
    v?.as_str()
}

/// A settings resource list of both files, resolved (see
/// [`SettingsManager::scoped_resource_paths`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScopedResourcePaths {
    /// The path entries of `<cwd>/.pi/settings.json` (empty when the project is untrusted).
    pub project: Vec<std::path::PathBuf>,
    /// The path entries of `<agentDir>/settings.json`.
    pub user: Vec<std::path::PathBuf>,
    /// Every entry of the project file as written (patterns included; see
    /// `crate::config::resource_filter`).
    pub project_entries: Vec<String>,
    /// Every entry of the global file as written.
    pub user_entries: Vec<String>,
    /// The project file's resource base (`<cwd>/.pi`).
    pub project_base: std::path::PathBuf,
    /// The global file's resource base (the agent directory).
    pub user_base: std::path::PathBuf,
}

fn string_list(v: Option<&Value>) -> Option<Vec<String>> {
    Some(
        v?.as_array()?
            .iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect(),
    )
}

/// Mirrors `parseHttpIdleTimeoutMs`: `"disabled"` → 0; numeric strings parse; a finite
/// non-negative number is floored; anything else is `None`.
pub(super) fn parse_timeout_ms(value: &Value) -> Option<u64> {
    match value {
        Value::String(s) => {
            let t = s.trim();
            if t.eq_ignore_ascii_case("disabled") {
                return Some(0);
            }
            if t.is_empty() {
                return None;
            }
            let n: f64 = t.parse().ok()?;
            (n.is_finite() && n >= 0.0).then_some(n.floor() as u64)
        }
        other => as_u64(Some(other)),
    }
}

/// A timeout setting that is not a number of milliseconds: `Invalid <key> setting: <value>`,
/// the error a request fails with before it is sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid {key} setting: {value}")]
pub struct InvalidSetting {
    key: String,
    value: String,
}

fn display_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl SettingsManager {
    fn nested(&self, key: &str, nested: &str) -> Option<&Value> {
        self.get_nested(key, nested)
    }

    /// `defaultProvider`.
    pub fn default_provider(&self) -> Option<&str> {
        as_str(self.get("defaultProvider"))
    }

    /// `defaultModel`.
    pub fn default_model(&self) -> Option<&str> {
        as_str(self.get("defaultModel"))
    }

    /// `defaultThinkingLevel` (unset or `null` → `None`; the caller falls back to `medium`).
    /// See `configured_level` for a value that is not a level.
    pub fn default_thinking_level(&self) -> Option<ModelThinkingLevel> {
        configured_level(self.get("defaultThinkingLevel"))
    }

    /// `modelThinkingLevels["<provider>/<id>"]` (as [`Self::default_thinking_level`]).
    pub fn model_thinking_level(&self, provider: &str, id: &str) -> Option<ModelThinkingLevel> {
        let key = format!("{provider}/{id}");
        configured_level(self.get("modelThinkingLevels")?.get(&key))
    }

    /// All of `modelThinkingLevels` (as [`Self::default_thinking_level`]).
    pub fn all_model_thinking_levels(&self) -> Vec<(String, ModelThinkingLevel)> {
        self.get("modelThinkingLevels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), configured_level(Some(v))?)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `enabledModels` (patterns scoping model cycling).
    pub fn enabled_models(&self) -> Option<Vec<String>> {
        string_list(self.get("enabledModels"))
    }

    fn queue_mode(&self, key: &str) -> QueueMode {
        match as_str(self.get(key)) {
            Some("all") => QueueMode::All,
            _ => QueueMode::OneAtATime,
        }
    }

    /// `steeringMode` (`one-at-a-time`).
    pub fn steering_mode(&self) -> QueueMode {
        self.queue_mode("steeringMode")
    }

    /// `followUpMode` (`one-at-a-time`).
    pub fn follow_up_mode(&self) -> QueueMode {
        self.queue_mode("followUpMode")
    }

    /// `transport` (`auto`).
    pub fn transport(&self) -> &str {
        as_str(self.get("transport")).unwrap_or("auto")
    }

    /// `compaction.*`.
    pub fn compaction(&self) -> CompactionSettings {
        CompactionSettings {
            enabled: self
                .nested("compaction", "enabled")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            reserve_tokens: as_u64(self.nested("compaction", "reserveTokens")).unwrap_or(16384),
            keep_recent_tokens: as_u64(self.nested("compaction", "keepRecentTokens"))
                .unwrap_or(20000),
        }
    }

    /// `branchSummary.*`.
    pub fn branch_summary(&self) -> BranchSummarySettings {
        BranchSummarySettings {
            reserve_tokens: as_u64(self.nested("branchSummary", "reserveTokens")).unwrap_or(16384),
            skip_prompt: self
                .nested("branchSummary", "skipPrompt")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }
    }

    /// `retry.*`.
    pub fn retry(&self) -> RetrySettings {
        RetrySettings {
            enabled: self
                .nested("retry", "enabled")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            max_retries: as_u64(self.nested("retry", "maxRetries"))
                .map_or(3, |n| u32::try_from(n).unwrap_or(u32::MAX)),
            base_delay_ms: as_u64(self.nested("retry", "baseDelayMs")).unwrap_or(2000),
        }
    }

    /// `retry.provider.*`.
    pub fn provider_retry(&self) -> ProviderRetrySettings {
        let provider = self.nested("retry", "provider");
        let get = |k: &str| provider.and_then(|p| p.get(k));
        ProviderRetrySettings {
            timeout_ms: as_u64(get("timeoutMs")),
            max_retries: as_u64(get("maxRetries")).map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
            max_retry_delay_ms: as_u64(get("maxRetryDelayMs")).unwrap_or(60_000),
        }
    }

    /// `httpIdleTimeoutMs` (300000; 0 = off; `"disabled"` = 0).
    ///
    /// Errors: `Invalid httpIdleTimeoutMs setting: <value>` for an unparsable value.
    pub fn http_idle_timeout_ms(&self) -> Result<u64, InvalidSetting> {
        self.timeout_setting("httpIdleTimeoutMs")
            .map(|v| v.unwrap_or(DEFAULT_HTTP_IDLE_TIMEOUT_MS))
    }

    /// `websocketConnectTimeoutMs` (unset → the transport's default, 15000).
    pub fn websocket_connect_timeout_ms(&self) -> Result<Option<u64>, InvalidSetting> {
        self.timeout_setting("websocketConnectTimeoutMs")
    }

    fn timeout_setting(&self, key: &str) -> Result<Option<u64>, InvalidSetting> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match parse_timeout_ms(v) {
                Some(n) => Ok(Some(n)),
                None => Err(InvalidSetting {
                    key: key.to_owned(),
                    value: display_value(v),
                }),
            },
        }
    }

    /// `thinkingBudgets` over the default budgets, when set.
    pub fn thinking_budgets(&self) -> Option<ThinkingBudgets> {
        let obj = self.get("thinkingBudgets")?.as_object()?;
        let mut b = ThinkingBudgets::default();
        let get = |k: &str| as_u64(obj.get(k));
        if let Some(n) = get("minimal") {
            b.minimal = n;
        }
        if let Some(n) = get("low") {
            b.low = n;
        }
        if let Some(n) = get("medium") {
            b.medium = n;
        }
        if let Some(n) = get("high") {
            b.high = n;
        }
        Some(b)
    }

    /// The stream options these settings drive. Errors as [`Self::http_idle_timeout_ms`].
    pub fn stream_settings(&self) -> Result<StreamSettings, InvalidSetting> {
        let idle = self.http_idle_timeout_ms()?;
        let provider = self.provider_retry();
        let effective = if idle == 0 { NO_TIMEOUT_MS } else { idle };
        Ok(StreamSettings {
            idle_timeout_ms: idle,
            timeout_ms: provider.timeout_ms.unwrap_or(effective),
            max_retries: provider.max_retries,
            max_retry_delay_ms: provider.max_retry_delay_ms,
            transport: self.transport().to_owned(),
            thinking_budgets: self.thinking_budgets(),
        })
    }

    /// `images.autoResize` (true).
    pub fn image_auto_resize(&self) -> bool {
        self.nested("images", "autoResize")
            .and_then(Value::as_bool)
            .unwrap_or(true)
    }

    /// `images.blockImages` (false).
    pub fn block_images(&self) -> bool {
        self.nested("images", "blockImages")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// `shellPath`, `~` expanded.
    pub fn shell_path(&self) -> Option<std::path::PathBuf> {
        as_str(self.get("shellPath"))
            .filter(|s| !s.is_empty())
            .map(expand_tilde)
    }

    /// `shellCommandPrefix`.
    pub fn shell_command_prefix(&self) -> Option<&str> {
        as_str(self.get("shellCommandPrefix"))
    }

    /// `sessionDir`, `~` expanded.
    pub fn session_dir(&self) -> Option<std::path::PathBuf> {
        as_str(self.get("sessionDir"))
            .filter(|s| !s.is_empty())
            .map(expand_tilde)
    }

    /// `defaultTools` (unset → `read, bash, edit, write`, chosen by the caller).
    pub fn default_tools(&self) -> Option<Vec<String>> {
        string_list(self.get("defaultTools"))
    }

    /// `defaultProjectTrust`, read from the **global** file only (`ask`).
    pub fn default_project_trust(&self) -> ProjectTrustDefault {
        match as_str(self.global().get("defaultProjectTrust")) {
            Some("always") => ProjectTrustDefault::Always,
            Some("never") => ProjectTrustDefault::Never,
            _ => ProjectTrustDefault::Ask,
        }
    }

    /// `packages` (strings or objects, as written).
    pub fn packages(&self) -> Vec<Value> {
        self.get("packages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    /// `extensions` paths.
    pub fn extension_paths(&self) -> Vec<String> {
        string_list(self.get("extensions")).unwrap_or_default()
    }

    /// `skills` paths.
    pub fn skill_paths(&self) -> Vec<String> {
        string_list(self.get("skills")).unwrap_or_default()
    }

    /// `prompts` (prompt-template) paths.
    pub fn prompt_template_paths(&self) -> Vec<String> {
        string_list(self.get("prompts")).unwrap_or_default()
    }

    /// The plain entries of a resource list (`skills`, `prompts`) of each settings file,
    /// resolved against that file's resource base: `<agentDir>` for the global file,
    /// `<cwd>/.pi` for the project file (`~` expanded, absolute paths kept).
    ///
    /// Mirrors pi 0.85.0 `DefaultPackageManager.resolve` (`resolveLocalEntries` with the
    /// scope's base directory). Pattern entries (`!x`, `+x`, `-x`, globs) are kept apart, for
    /// `crate::config::resource_filter`. Settings held only in memory resolve against the
    /// current directory.
    pub fn scoped_resource_paths(&self, key: &str) -> ScopedResourcePaths {
        let base = |file: Option<&std::path::Path>| {
            file.and_then(std::path::Path::parent)
                .unwrap_or(std::path::Path::new(""))
                .to_path_buf()
        };
        let entries = |map: &Map<String, Value>| string_list(map.get(key)).unwrap_or_default();
        let paths = |entries: &[String], base: &std::path::Path| {
            entries
                .iter()
                .map(|e| e.trim())
                .filter(|e| !e.is_empty() && !is_pattern(e))
                .map(|e| crate::config::agent_paths::resolve_path(e, base))
                .collect()
        };
        let project_base = base(self.project_path.as_deref());
        let user_base = base(self.global_path.as_deref());
        let project_entries = entries(&self.project);
        let user_entries = entries(&self.global);
        ScopedResourcePaths {
            project: paths(&project_entries, &project_base),
            user: paths(&user_entries, &user_base),
            project_entries,
            user_entries,
            project_base,
            user_base,
        }
    }

    /// `themes` paths.
    pub fn theme_paths(&self) -> Vec<String> {
        string_list(self.get("themes")).unwrap_or_default()
    }

    /// `enableSkillCommands` (true).
    pub fn enable_skill_commands(&self) -> bool {
        self.get("enableSkillCommands")
            .and_then(Value::as_bool)
            .unwrap_or(true)
    }

    /// `httpProxy`.
    pub fn http_proxy(&self) -> Option<&str> {
        as_str(self.get("httpProxy")).filter(|s| !s.trim().is_empty())
    }

    /// `hideThinkingBlock` (false).
    pub fn hide_thinking_block(&self) -> bool {
        self.get("hideThinkingBlock")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// `quietStartup` (false).
    pub fn quiet_startup(&self) -> bool {
        self.get("quietStartup")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// `lastChangelogVersion`.
    pub fn last_changelog_version(&self) -> Option<&str> {
        as_str(self.get("lastChangelogVersion"))
    }

    // ---- setters (global file) ----

    /// Sets `defaultProvider`.
    pub fn set_default_provider(&mut self, provider: &str) {
        self.set_global("defaultProvider", Some(Value::from(provider)));
    }

    /// Sets `defaultModel`.
    pub fn set_default_model(&mut self, model: &str) {
        self.set_global("defaultModel", Some(Value::from(model)));
    }

    /// Sets `defaultProvider` and `defaultModel` in one write.
    pub fn set_default_model_and_provider(&mut self, provider: &str, model: &str) {
        self.set_global_fields(&[
            ("defaultProvider", Value::from(provider)),
            ("defaultModel", Value::from(model)),
        ]);
    }

    /// Sets `defaultThinkingLevel`.
    pub fn set_default_thinking_level(&mut self, level: ModelThinkingLevel) {
        self.set_global("defaultThinkingLevel", Some(Value::from(level.as_str())));
    }

    /// Sets `modelThinkingLevels["<provider>/<id>"]`.
    pub fn set_model_thinking_level(
        &mut self,
        provider: &str,
        id: &str,
        level: ModelThinkingLevel,
    ) {
        let mut levels: Map<String, Value> = self
            .global()
            .get("modelThinkingLevels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        levels.insert(format!("{provider}/{id}"), Value::from(level.as_str()));
        self.set_global("modelThinkingLevels", Some(Value::Object(levels)));
    }

    /// Sets `steeringMode`.
    pub fn set_steering_mode(&mut self, mode: QueueMode) {
        self.set_global("steeringMode", Some(Value::from(mode.as_str())));
    }

    /// Sets `followUpMode`.
    pub fn set_follow_up_mode(&mut self, mode: QueueMode) {
        self.set_global("followUpMode", Some(Value::from(mode.as_str())));
    }

    /// Sets `compaction.enabled` (only that nested key is written).
    pub fn set_compaction_enabled(&mut self, enabled: bool) {
        self.set_global_nested("compaction", "enabled", Value::from(enabled));
    }

    /// Sets `retry.enabled` (only that nested key is written).
    pub fn set_retry_enabled(&mut self, enabled: bool) {
        self.set_global_nested("retry", "enabled", Value::from(enabled));
    }

    /// Sets `enabledModels` (`None` removes it).
    pub fn set_enabled_models(&mut self, patterns: Option<Vec<String>>) {
        self.set_global("enabledModels", patterns.map(Value::from));
    }

    /// Sets `defaultProjectTrust`.
    pub fn set_default_project_trust(&mut self, value: ProjectTrustDefault) {
        self.set_global("defaultProjectTrust", Some(Value::from(value.as_str())));
    }

    /// Sets `httpIdleTimeoutMs` (floored). Errors for a negative or non-finite value.
    pub fn set_http_idle_timeout_ms(&mut self, timeout_ms: f64) -> Result<(), InvalidSetting> {
        if !timeout_ms.is_finite() || timeout_ms < 0.0 {
            return Err(InvalidSetting {
                key: "httpIdleTimeoutMs".to_owned(),
                value: timeout_ms.to_string(),
            });
        }
        self.set_global(
            "httpIdleTimeoutMs",
            Some(Value::from(timeout_ms.floor() as u64)),
        );
        Ok(())
    }

    /// Sets `transport`.
    pub fn set_transport(&mut self, transport: &str) {
        self.set_global("transport", Some(Value::from(transport)));
    }

    /// Sets `lastChangelogVersion`.
    pub fn set_last_changelog_version(&mut self, version: &str) {
        self.set_global("lastChangelogVersion", Some(Value::from(version)));
    }
}

/// A configured thinking level: `None` when unset or `null`; a value that is not a level (a
/// typo, a number) reads as `off`, because pi passes it on and `clampThinkingLevel` turns an
/// unknown level into the model's lowest supported one (which `off` clamps to as well). No
/// warning, as in pi.
fn configured_level(value: Option<&Value>) -> Option<ModelThinkingLevel> {
    match value? {
        Value::Null => None,
        v => Some(
            v.as_str()
                .and_then(ModelThinkingLevel::parse)
                .unwrap_or(ModelThinkingLevel::Off),
        ),
    }
}
