//! Shell resolution and the child environment of the bash tool and the user-bash executor.
//!
//! Mirrors pi 0.85.0 `utils/shell.ts` (`getShellConfig`, `getShellEnv`) and the environment
//! part of `core/tools/bash.ts` (`resolveSpawnContext`), Unix only.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use pi_agent_core::ToolError;

/// The shell program and the arguments that precede the command (`<shell> -c <command>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellConfig {
    /// Program to run (a path, or a bare name looked up on `PATH`).
    pub shell: PathBuf,
    /// Arguments before the command: always `["-c"]`.
    pub args: Vec<String>,
}

impl ShellConfig {
    fn bash_like(shell: PathBuf) -> Self {
        ShellConfig {
            shell,
            args: vec!["-c".to_owned()],
        }
    }
}

/// Resolves the shell: `shell_path` when given (it must exist, else
/// `Custom shell path not found: <path>`), else `/bin/bash`, else the first `bash` on `PATH`,
/// else `sh`. Mirrors pi `getShellConfig`.
pub fn resolve_shell(shell_path: Option<&Path>) -> Result<ShellConfig, ToolError> {
    if let Some(custom) = shell_path.filter(|p| !p.as_os_str().is_empty()) {
        if custom.exists() {
            return Ok(ShellConfig::bash_like(custom.to_path_buf()));
        }
        return Err(ToolError::new(format!(
            "Custom shell path not found: {}",
            custom.display()
        )));
    }
    let bin_bash = Path::new("/bin/bash");
    if bin_bash.exists() {
        return Ok(ShellConfig::bash_like(bin_bash.to_path_buf()));
    }
    if let Some(found) = find_on_path("bash") {
        return Ok(ShellConfig::bash_like(found));
    }
    Ok(ShellConfig::bash_like(PathBuf::from("sh")))
}

/// The first executable file named `name` in the directories of `$PATH` (what `which` prints).
fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            candidate
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The session metadata the bash tool exposes as `PI_*` variables.
///
/// Mirrors the `ctx` fields pi reads in `resolveSpawnContext`: the session id, the persisted
/// session file (absent for in-memory sessions), the model's provider and id, and the thinking
/// level. Absent fields are not set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionEnv {
    /// `PI_SESSION_ID`.
    pub session_id: String,
    /// `PI_SESSION_FILE` (only for a persisted session).
    pub session_file: Option<String>,
    /// `PI_PROVIDER`.
    pub provider: Option<String>,
    /// `PI_MODEL` (the model id).
    pub model: Option<String>,
    /// `PI_REASONING_LEVEL` (the thinking level, e.g. `medium`).
    pub reasoning_level: Option<String>,
}

/// The variables holding session metadata; inherited values are always removed from the bash
/// tool's environment before the current session's are set.
pub const SESSION_ENV_VARS: [&str; 5] = [
    "PI_SESSION_ID",
    "PI_SESSION_FILE",
    "PI_PROVIDER",
    "PI_MODEL",
    "PI_REASONING_LEVEL",
];

/// A child environment: variable name → value, in name order.
pub type Env = BTreeMap<OsString, OsString>;

/// The environment of every shell pi starts: the whole process environment, `AI_AGENT=pi`,
/// `PI_CODING_AGENT=true`, and `<agent_dir>/bin` prefixed to `PATH` unless already one of its
/// entries. Mirrors pi `getShellEnv` (pi sets the two markers on its own process at startup;
/// pi-rs sets them on the child only).
///
/// Command output produced under this environment is user data: it is returned to the model
/// verbatim and never interpreted by pi.
pub fn shell_env(agent_dir: Option<&Path>) -> Env {
    let mut env: Env = std::env::vars_os().collect();
    env.insert("AI_AGENT".into(), "pi".into());
    env.insert("PI_CODING_AGENT".into(), "true".into());
    if let Some(agent_dir) = agent_dir {
        let bin = agent_dir.join("bin");
        let current = env.get(OsStr::new("PATH")).cloned().unwrap_or_default();
        let present = std::env::split_paths(&current).any(|entry| entry == bin);
        if !present {
            let mut entries = vec![bin];
            entries.extend(std::env::split_paths(&current).filter(|e| !e.as_os_str().is_empty()));
            if let Ok(joined) = std::env::join_paths(entries) {
                env.insert("PATH".into(), joined);
            }
        }
    }
    env
}

/// The bash tool's environment: [`shell_env`] without inherited `PI_SESSION_*`/`PI_PROVIDER`/
/// `PI_MODEL`/`PI_REASONING_LEVEL`, then those of `session` when given. Mirrors pi
/// `resolveSpawnContext`.
pub fn tool_env(agent_dir: Option<&Path>, session: Option<&SessionEnv>) -> Env {
    let mut env = shell_env(agent_dir);
    for name in SESSION_ENV_VARS {
        env.remove(OsStr::new(name));
    }
    if let Some(s) = session {
        env.insert("PI_SESSION_ID".into(), s.session_id.clone().into());
        let optional = [
            ("PI_SESSION_FILE", &s.session_file),
            ("PI_PROVIDER", &s.provider),
            ("PI_MODEL", &s.model),
            ("PI_REASONING_LEVEL", &s.reasoning_level),
        ];
        for (name, value) in optional {
            if let Some(v) = value.as_ref().filter(|v| !v.is_empty()) {
                env.insert(name.into(), v.clone().into());
            }
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_shell_must_exist() {
        let err = resolve_shell(Some(Path::new("/no/such/shell"))).unwrap_err();
        assert_eq!(err.0, "Custom shell path not found: /no/such/shell");
        let ok = resolve_shell(Some(Path::new("/bin/sh"))).unwrap();
        assert_eq!(ok.shell, PathBuf::from("/bin/sh"));
        assert_eq!(ok.args, vec!["-c".to_owned()]);
        // An empty setting means "not set".
        assert_eq!(
            resolve_shell(Some(Path::new(""))).unwrap().args,
            vec!["-c".to_owned()]
        );
    }

    #[test]
    fn default_shell_prefers_bin_bash() {
        if Path::new("/bin/bash").exists() {
            assert_eq!(
                resolve_shell(None).unwrap().shell,
                PathBuf::from("/bin/bash")
            );
        }
    }

    #[test]
    fn bin_dir_is_prefixed_once() {
        let env = shell_env(Some(Path::new("/opt/agent")));
        let path = env
            .get(OsStr::new("PATH"))
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(path.starts_with("/opt/agent/bin:") || path == "/opt/agent/bin");
        assert_eq!(env.get(OsStr::new("AI_AGENT")).unwrap(), "pi");
        assert_eq!(env.get(OsStr::new("PI_CODING_AGENT")).unwrap(), "true");

        // A bin dir already on PATH is not added again.
        let current = std::env::var_os("PATH").unwrap_or_default();
        if let Some(first) = std::env::split_paths(&current).find(|p| p.ends_with("bin")) {
            let agent = first.parent().unwrap().to_path_buf();
            let env = shell_env(Some(&agent));
            assert_eq!(env.get(OsStr::new("PATH")).unwrap(), &current);
        }
    }

    #[test]
    fn tool_env_sets_only_present_session_fields() {
        let session = SessionEnv {
            session_id: "id-1".into(),
            session_file: None,
            provider: Some("openai".into()),
            model: Some("gpt".into()),
            reasoning_level: None,
        };
        let env = tool_env(None, Some(&session));
        assert_eq!(env.get(OsStr::new("PI_SESSION_ID")).unwrap(), "id-1");
        assert_eq!(env.get(OsStr::new("PI_PROVIDER")).unwrap(), "openai");
        assert_eq!(env.get(OsStr::new("PI_MODEL")).unwrap(), "gpt");
        assert!(!env.contains_key(OsStr::new("PI_SESSION_FILE")));
        assert!(!env.contains_key(OsStr::new("PI_REASONING_LEVEL")));
        let bare = tool_env(None, None);
        assert!(
            SESSION_ENV_VARS
                .iter()
                .all(|v| !bare.contains_key(OsStr::new(v)))
        );
    }
}
