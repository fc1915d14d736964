//! pi packages: the `packages` settings entries, the `pi install|remove|update|list`
//! commands, and the resources packages add to a run.
//!
//! | module | job |
//! |---|---|
//! | [`source`] | source strings → npm / git / local ([`source::PackageSource`]) |
//! | [`manager`] | install, remove, update, and the settings entries they write |
//! | [`resolve`] | a package's extensions, skills, prompts and themes |
//! | [`command`] | the subcommands' output and exit codes |
//!
//! The run's extension loading (`app::extensions`) takes the user packages before
//! project trust is decided and the project packages after ([`pre_trust_extensions`],
//! [`post_trust_extensions`]); a user package the project also lists waits for the trust
//! decision, so that the project's entry wins when the project is trusted.

pub mod command;
pub mod manager;
pub mod resolve;
pub mod source;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::settings::SettingsManager;
pub use manager::PackageManager;
pub use resolve::PackageResources;

/// Which settings file a package belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `<agent dir>/settings.json`.
    User,
    /// `<cwd>/.pi/settings.json`.
    Project,
}

impl Scope {
    /// `user` / `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

/// Why a package operation failed (the texts are pi's).
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// A local source that is not there.
    #[error("Path does not exist: {}", .0.display())]
    PathMissing(PathBuf),
    /// A command exited unsuccessfully.
    #[error("{command} failed with code {code}")]
    CommandFailed {
        /// The command line.
        command: String,
        /// Its exit code (`null` after a signal).
        code: String,
    },
    /// A command could not start.
    #[error("spawn {program} {code}")]
    Spawn {
        /// The program.
        program: String,
        /// `ENOENT`, or the system's message.
        code: String,
    },
    /// `pi update <source>` with no such package configured.
    #[error("No matching package found for {given}{}", suggestion.as_ref().map(|s| format!(". Did you mean {s}?")).unwrap_or_default())]
    NoMatch {
        /// The source given.
        given: String,
        /// A configured source it may mean.
        suggestion: Option<String>,
    },
    /// Project storage while the project is untrusted.
    #[error("Project is not trusted; refusing to access project package storage")]
    ProjectNotTrusted,
    /// `npmCommand` with an empty first entry.
    #[error("Invalid npmCommand: first array entry must be a non-empty command")]
    InvalidNpmCommand,
    /// A file operation.
    #[error("{path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        message: String,
    },
}

impl PackageError {
    fn io(path: &Path, e: &std::io::Error) -> Self {
        PackageError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }
}

fn packages_of(map: &serde_json::Map<String, Value>) -> Vec<Value> {
    map.get("packages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn resolve_with(
    settings: &mut SettingsManager,
    cwd: &Path,
    agent_dir: &Path,
    pick: impl FnOnce(&PackageManager<'_>, &[Value], &[Value]) -> Vec<resolve::Entry>,
    warnings: &mut Vec<String>,
) -> PackageResources {
    let project = packages_of(settings.project());
    let user = packages_of(settings.global());
    let pm = PackageManager {
        cwd: cwd.to_path_buf(),
        agent_dir: agent_dir.to_path_buf(),
        settings,
        quiet_stdout: true,
        progress: None,
    };
    let entries = pick(&pm, &project, &user);
    resolve::resolve(&pm, &entries, warnings)
}

/// The user packages the project settings also list (`listed_by_project`) or do not: a
/// package both list waits for the trust decision, where the project's entry wins.
fn user_packages(
    pm: &PackageManager<'_>,
    project: &[Value],
    user: &[Value],
    listed_by_project: bool,
) -> Vec<resolve::Entry> {
    let listed: Vec<String> = project
        .iter()
        .filter_map(manager::entry_source)
        .map(|s| pm.identity(s, Some(Scope::Project)))
        .collect();
    resolve::dedupe(pm, &[], user)
        .into_iter()
        .filter(|(v, _)| {
            manager::entry_source(v).is_some_and(|s| {
                listed.contains(&pm.identity(s, Some(Scope::User))) == listed_by_project
            })
        })
        .collect()
}

/// The extensions of the user packages that load before project trust: those the project
/// settings file does not also list.
pub fn pre_trust_extensions(
    cwd: &Path,
    agent_dir: &Path,
    warnings: &mut Vec<String>,
) -> Vec<PathBuf> {
    let raw_project = SettingsManager::load(cwd, agent_dir, true);
    let project = packages_of(raw_project.project());
    let mut settings = SettingsManager::load(cwd, agent_dir, false);
    resolve_with(
        &mut settings,
        cwd,
        agent_dir,
        |pm, _, user| user_packages(pm, &project, user, false),
        warnings,
    )
    .extensions
}

/// The package extensions that load once trust is decided: a trusted project's packages, or
/// for an untrusted one the user packages [`pre_trust_extensions`] held back.
pub fn post_trust_extensions(
    cwd: &Path,
    agent_dir: &Path,
    trusted: bool,
    warnings: &mut Vec<String>,
) -> Vec<PathBuf> {
    let raw_project = SettingsManager::load(cwd, agent_dir, true);
    let project = packages_of(raw_project.project());
    let mut settings = SettingsManager::load(cwd, agent_dir, trusted);
    resolve_with(
        &mut settings,
        cwd,
        agent_dir,
        |pm, trusted_project, user| {
            if trusted {
                return resolve::dedupe(pm, trusted_project, &[]);
            }
            user_packages(pm, &project, user, true)
        },
        warnings,
    )
    .extensions
}

/// Every package resource of a run (project packages only when `settings` trusts the
/// project), for the skills, prompt templates and themes.
pub fn session_resources(
    settings: &SettingsManager,
    cwd: &Path,
    agent_dir: &Path,
    warnings: &mut Vec<String>,
) -> PackageResources {
    let mut settings = SettingsManager::load(cwd, agent_dir, settings.is_project_trusted());
    resolve_with(&mut settings, cwd, agent_dir, resolve::dedupe, warnings)
}

/// The `--theme` paths, then the packages' theme files (none with `--no-themes`). Missing
/// packages are not installed here: the run's start already did.
pub fn with_package_themes(
    cli: &[String],
    no_themes: bool,
    settings: &SettingsManager,
    cwd: &Path,
    agent_dir: &Path,
) -> Vec<String> {
    let mut out = cli.to_vec();
    if no_themes {
        return out;
    }
    let mut settings = SettingsManager::load(cwd, agent_dir, settings.is_project_trusted());
    let project = packages_of(settings.project());
    let user = packages_of(settings.global());
    let pm = PackageManager {
        cwd: cwd.to_path_buf(),
        agent_dir: agent_dir.to_path_buf(),
        settings: &mut settings,
        quiet_stdout: true,
        progress: None,
    };
    let entries: Vec<resolve::Entry> = resolve::dedupe(&pm, &project, &user)
        .into_iter()
        .filter(|(v, scope)| {
            manager::entry_source(v).is_some_and(|s| pm.installed_path(s, *scope).is_some())
        })
        .collect();
    let mut warnings = Vec::new();
    let found = resolve::resolve(&pm, &entries, &mut warnings);
    out.extend(found.themes.iter().map(|p| p.display().to_string()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installed_package_themes_follow_the_theme_flags() {
        let tmp = tempfile::tempdir().unwrap();
        let (cwd, agent) = (tmp.path().join("work"), tmp.path().join("agent"));
        std::fs::create_dir_all(cwd.join("pkg/themes")).unwrap();
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::write(cwd.join("pkg/themes/ocean.json"), "{}").unwrap();
        std::fs::write(
            agent.join("settings.json"),
            r#"{"packages":["../work/pkg","npm:not-installed"]}"#,
        )
        .unwrap();
        let settings = SettingsManager::load(&cwd, &agent, false);
        let cli = vec!["mine.json".to_owned()];
        let got = with_package_themes(&cli, false, &settings, &cwd, &agent);
        assert_eq!(
            got,
            vec![
                "mine.json".to_owned(),
                cwd.join("pkg/themes/ocean.json").display().to_string()
            ]
        );
        // Nothing was installed for the missing npm package.
        assert!(!agent.join("npm").exists());
        assert_eq!(
            with_package_themes(&cli, true, &settings, &cwd, &agent),
            cli
        );
    }
}
