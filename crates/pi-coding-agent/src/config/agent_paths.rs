//! The agent directory and the files in it.
//!
//! Mirrors pi-coding-agent 0.85.0 `config.js` (`getAgentDir`: `$PI_CODING_AGENT_DIR` with `~`
//! expanded, else `~/.pi/agent`) and `utils/paths.js` (`normalizePath`'s tilde expansion).

use std::path::{Path, PathBuf};

/// Name of the per-project configuration directory (`.pi`).
pub const CONFIG_DIR_NAME: &str = ".pi";

/// Environment variable overriding the agent directory.
pub const ENV_AGENT_DIR: &str = "PI_CODING_AGENT_DIR";

/// The user's home directory (`$HOME`, else `/`).
pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Expands a leading `~` (`~` alone or `~/…`) against `home`; other paths are returned as-is.
pub fn expand_tilde_with(path: &str, home: &Path) -> PathBuf {
    if path == "~" {
        return home.to_path_buf();
    }
    if let Some(rest) = path.strip_prefix("~/") {
        return home.join(rest);
    }
    PathBuf::from(path)
}

/// [`expand_tilde_with`] against [`home_dir`] (pi's `normalizePath`).
pub fn expand_tilde(path: &str) -> PathBuf {
    expand_tilde_with(path, &home_dir())
}

/// Resolves `path` against `base` after tilde expansion (pi's `resolvePath`, lexically).
pub fn resolve_path(path: &str, base: &Path) -> PathBuf {
    let expanded = expand_tilde(path);
    if expanded.is_absolute() {
        expanded
    } else {
        base.join(expanded)
    }
}

/// The agent directory given the value of `PI_CODING_AGENT_DIR` and the home directory.
pub fn agent_dir_from(env_value: Option<&str>, home: &Path) -> PathBuf {
    match env_value.filter(|v| !v.is_empty()) {
        Some(dir) => expand_tilde_with(dir, home),
        None => home.join(CONFIG_DIR_NAME).join("agent"),
    }
}

/// The agent directory of this process.
pub fn agent_dir() -> PathBuf {
    let env = std::env::var(ENV_AGENT_DIR).ok();
    agent_dir_from(env.as_deref(), &home_dir())
}

/// The files and directories inside an agent directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentPaths {
    /// The agent directory itself.
    pub dir: PathBuf,
}

impl AgentPaths {
    /// Paths inside `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// Paths inside this process's agent directory.
    pub fn current() -> Self {
        Self::new(agent_dir())
    }

    /// `settings.json`.
    pub fn settings(&self) -> PathBuf {
        self.dir.join("settings.json")
    }
    /// `models.json`.
    pub fn models(&self) -> PathBuf {
        self.dir.join("models.json")
    }
    /// `auth.json`.
    pub fn auth(&self) -> PathBuf {
        self.dir.join("auth.json")
    }
    /// `trust.json`.
    pub fn trust(&self) -> PathBuf {
        self.dir.join("trust.json")
    }
    /// `sessions/`.
    pub fn sessions(&self) -> PathBuf {
        self.dir.join("sessions")
    }
    /// `skills/`.
    pub fn skills(&self) -> PathBuf {
        self.dir.join("skills")
    }
    /// `prompts/`.
    pub fn prompts(&self) -> PathBuf {
        self.dir.join("prompts")
    }
    /// `extensions/`.
    pub fn extensions(&self) -> PathBuf {
        self.dir.join("extensions")
    }
    /// `bin/` (rg, fd).
    pub fn bin(&self) -> PathBuf {
        self.dir.join("bin")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_dir_default_and_override() {
        let home = Path::new("/home/u");
        assert_eq!(
            agent_dir_from(None, home),
            PathBuf::from("/home/u/.pi/agent")
        );
        assert_eq!(
            agent_dir_from(Some(""), home),
            PathBuf::from("/home/u/.pi/agent")
        );
        assert_eq!(agent_dir_from(Some("/x/y"), home), PathBuf::from("/x/y"));
        assert_eq!(
            agent_dir_from(Some("~/cfg"), home),
            PathBuf::from("/home/u/cfg")
        );
        assert_eq!(agent_dir_from(Some("~"), home), PathBuf::from("/home/u"));
    }

    #[test]
    fn tilde_only_at_the_start() {
        let home = Path::new("/h");
        assert_eq!(expand_tilde_with("a/~/b", home), PathBuf::from("a/~/b"));
        assert_eq!(expand_tilde_with("~user", home), PathBuf::from("~user"));
    }

    #[test]
    fn agent_files() {
        let p = AgentPaths::new("/a");
        assert_eq!(p.settings(), PathBuf::from("/a/settings.json"));
        assert_eq!(p.models(), PathBuf::from("/a/models.json"));
        assert_eq!(p.auth(), PathBuf::from("/a/auth.json"));
        assert_eq!(p.trust(), PathBuf::from("/a/trust.json"));
    }
}
