//! Installing, removing and updating packages, and their `packages` settings entries.
//!
//! Mirrors pi 0.85.0 `DefaultPackageManager` (`install`, `remove`, `update`,
//! `addSourceToSettings`, `removeSourceFromSettings`, `listConfiguredPackages`):
//! - npm packages install with `npm install <spec> --prefix <root> --legacy-peer-deps` into
//!   `<agent dir>/npm` (user) or `<cwd>/.pi/npm` (project); each root gets a `.gitignore`
//!   and a `package.json` `{"name":"pi-extensions","private":true}`. The settings key
//!   `npmCommand` (an array: the command and its first arguments) replaces `npm`;
//! - git packages clone into `<agent dir>/git/<host>/<path>` or `<cwd>/.pi/git/<host>/<path>`,
//!   check out the ref, then `npm install --omit=dev` when there is a `package.json`
//!   (`npm install` with a custom `npmCommand`); a failed clone leaves nothing behind;
//! - local paths are only checked to exist; settings store them relative to the settings
//!   file's base (`<agent dir>` or `<cwd>/.pi`).
//!
//! Commands inherit the terminal, except that their standard output goes to our standard
//! error when `quiet_stdout` is set (a run in json or rpc mode owns standard output).

use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::source::{GitSource, NpmSource, PackageSource, parse_source};
use super::{PackageError, Scope};
use crate::config::agent_paths::{CONFIG_DIR_NAME, resolve_path};
use crate::config::settings::SettingsManager;
use crate::platform::lexical_path::lexical_normalize;

/// A configured package, as `pi list` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfiguredPackage {
    /// The source as written.
    pub source: String,
    /// Its settings file.
    pub scope: Scope,
    /// An object entry (with resource filters).
    pub filtered: bool,
    /// Where it is on disk, when it is there.
    pub installed_path: Option<PathBuf>,
}

/// The package operations of one working directory and agent directory.
pub struct PackageManager<'a> {
    /// The working directory.
    pub cwd: PathBuf,
    /// The agent directory.
    pub agent_dir: PathBuf,
    /// The settings (project entries only when trusted).
    pub settings: &'a mut SettingsManager,
    /// Send the commands' standard output to standard error.
    pub quiet_stdout: bool,
    /// Called with each progress line (`Installing x...`).
    pub progress: Option<&'a mut dyn FnMut(&str)>,
}

/// The source string of a settings entry (a string, or an object's `source`).
pub fn entry_source(entry: &Value) -> Option<&str> {
    match entry {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("source").and_then(Value::as_str),
        _ => None,
    }
}

/// Node's `path.relative` between two absolute, lexically normal paths.
pub fn relative(from: &Path, to: &Path) -> String {
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".to_owned(); a.len() - common];
    parts.extend(
        b[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// Whether PI_OFFLINE asks for no network.
pub fn offline() -> bool {
    std::env::var("PI_OFFLINE").ok().is_some_and(|v| {
        v == "1" || v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("yes")
    })
}

impl PackageManager<'_> {
    fn base_dir(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User => self.agent_dir.clone(),
            Scope::Project => self.cwd.join(CONFIG_DIR_NAME),
        }
    }

    fn resolve_from(&self, path: &str, base: &Path) -> PathBuf {
        lexical_normalize(&resolve_path(path.trim(), base))
    }

    fn npm_root(&self, scope: Scope) -> PathBuf {
        self.base_dir(scope).join("npm")
    }

    fn git_root(&self, scope: Scope) -> PathBuf {
        self.base_dir(scope).join("git")
    }

    /// Where an npm package of `scope` is installed.
    pub fn npm_install_path(&self, n: &NpmSource, scope: Scope) -> PathBuf {
        self.npm_root(scope).join("node_modules").join(&n.name)
    }

    /// Where a git package of `scope` is cloned.
    pub fn git_install_path(&self, g: &GitSource, scope: Scope) -> PathBuf {
        self.git_root(scope).join(&g.host).join(&g.path)
    }

    /// Where a source of `scope` is on disk (whether or not it exists).
    pub fn package_path(&self, source: &str, scope: Scope) -> PathBuf {
        match parse_source(source) {
            PackageSource::Npm(n) => self.npm_install_path(&n, scope),
            PackageSource::Git(g) => self.git_install_path(&g, scope),
            PackageSource::Local(p) => self.resolve_from(&p, &self.base_dir(scope)),
        }
    }

    /// `getInstalledPath`: [`PackageManager::package_path`] when it exists.
    pub fn installed_path(&self, source: &str, scope: Scope) -> Option<PathBuf> {
        Some(self.package_path(source, scope)).filter(|p| p.exists())
    }

    /// `getPackageIdentity`: `npm:<name>`, `git:<host>/<path>`, or `local:<absolute path>`
    /// (relative to the scope's base when a scope is given, else to the working directory).
    pub fn identity(&self, source: &str, scope: Option<Scope>) -> String {
        match parse_source(source) {
            PackageSource::Npm(n) => format!("npm:{}", n.name),
            PackageSource::Git(g) => format!("git:{}/{}", g.host, g.path),
            PackageSource::Local(p) => {
                let base = scope.map_or_else(|| self.cwd.clone(), |s| self.base_dir(s));
                format!("local:{}", self.resolve_from(&p, &base).display())
            }
        }
    }

    fn progress(&mut self, line: &str) {
        if let Some(p) = self.progress.as_mut() {
            p(line);
        }
    }

    fn entries(&self, scope: Scope) -> Vec<Value> {
        let map = match scope {
            Scope::User => self.settings.global(),
            Scope::Project => self.settings.project(),
        };
        map.get("packages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    fn write_entries(&mut self, scope: Scope, entries: Vec<Value>) {
        match scope {
            Scope::User => self
                .settings
                .set_global("packages", Some(Value::Array(entries))),
            Scope::Project => self
                .settings
                .set_project("packages", Some(Value::Array(entries))),
        }
    }

    /// Every configured package: the user file's, then the project file's.
    pub fn list(&self) -> Vec<ConfiguredPackage> {
        let mut out = Vec::new();
        for scope in [Scope::User, Scope::Project] {
            for e in self.entries(scope) {
                let Some(source) = entry_source(&e) else {
                    continue;
                };
                out.push(ConfiguredPackage {
                    source: source.to_owned(),
                    scope,
                    filtered: e.is_object(),
                    installed_path: self.installed_path(source, scope),
                });
            }
        }
        out
    }

    fn npm_command(&self) -> Result<(String, Vec<String>), PackageError> {
        let configured: Vec<String> = self
            .settings
            .get("npmCommand")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let Some((first, rest)) = configured.split_first() else {
            return Ok(("npm".to_owned(), Vec::new()));
        };
        if first.is_empty() {
            return Err(PackageError::InvalidNpmCommand);
        }
        Ok((first.clone(), rest.to_vec()))
    }

    fn has_npm_command(&self) -> bool {
        self.settings
            .get("npmCommand")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    }

    fn run(&self, program: &str, args: &[String], cwd: Option<&Path>) -> Result<(), PackageError> {
        let mut cmd = Command::new(program);
        cmd.args(args).stdin(Stdio::null());
        if self.quiet_stdout {
            cmd.stdout(std::io::stderr());
        }
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        let status = cmd.status().map_err(|e| PackageError::Spawn {
            program: program.to_owned(),
            code: if e.kind() == std::io::ErrorKind::NotFound {
                "ENOENT".to_owned()
            } else {
                e.to_string()
            },
        })?;
        if status.success() {
            return Ok(());
        }
        Err(PackageError::CommandFailed {
            command: std::iter::once(program.to_owned())
                .chain(args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" "),
            code: status
                .code()
                .map_or_else(|| "null".to_owned(), |c| c.to_string()),
        })
    }

    fn run_npm(&self, args: Vec<String>, cwd: Option<&Path>) -> Result<(), PackageError> {
        let (program, mut full) = self.npm_command()?;
        full.extend(args);
        self.run(&program, &full, cwd)
    }

    fn ensure_npm_project(root: &Path) -> Result<(), PackageError> {
        std::fs::create_dir_all(root).map_err(|e| PackageError::io(root, &e))?;
        Self::ensure_gitignore(root)?;
        let pkg = root.join("package.json");
        if !pkg.exists() {
            std::fs::write(
                &pkg,
                "{\n  \"name\": \"pi-extensions\",\n  \"private\": true\n}",
            )
            .map_err(|e| PackageError::io(&pkg, &e))?;
        }
        Ok(())
    }

    fn ensure_gitignore(dir: &Path) -> Result<(), PackageError> {
        std::fs::create_dir_all(dir).map_err(|e| PackageError::io(dir, &e))?;
        let ignore = dir.join(".gitignore");
        if !ignore.exists() {
            std::fs::write(&ignore, "*\n!.gitignore\n")
                .map_err(|e| PackageError::io(&ignore, &e))?;
        }
        Ok(())
    }

    fn install_npm(&self, specs: &[String], scope: Scope) -> Result<(), PackageError> {
        let root = self.npm_root(scope);
        Self::ensure_npm_project(&root)?;
        let mut args = vec!["install".to_owned()];
        args.extend(specs.iter().cloned());
        args.extend([
            "--prefix".to_owned(),
            root.display().to_string(),
            "--legacy-peer-deps".to_owned(),
        ]);
        self.run_npm(args, None)
    }

    fn git_dependency_args(&self) -> Vec<String> {
        if self.has_npm_command() {
            vec!["install".to_owned()]
        } else {
            vec!["install".to_owned(), "--omit=dev".to_owned()]
        }
    }

    fn install_git(&self, g: &GitSource, scope: Scope) -> Result<(), PackageError> {
        let target = self.git_install_path(g, scope);
        if target.exists() {
            return self.update_git(g, scope);
        }
        let root = self.git_root(scope);
        Self::ensure_gitignore(&root)?;
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| PackageError::io(parent, &e))?;
        }
        let result = (|| {
            self.run(
                "git",
                &[
                    "clone".to_owned(),
                    g.repo.clone(),
                    target.display().to_string(),
                ],
                None,
            )?;
            if let Some(r) = &g.git_ref {
                self.run("git", &["checkout".to_owned(), r.clone()], Some(&target))?;
            }
            if target.join("package.json").exists() {
                self.run_npm(self.git_dependency_args(), Some(&target))?;
            }
            Ok(())
        })();
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&target);
            prune_empty_parents(&target, &root);
        }
        result
    }

    /// Brings a clone to its ref (pinned) or its upstream: fetch, `reset --hard`,
    /// `clean -fdx`, then the dependencies again. A clone already there is left as it is.
    fn update_git(&self, g: &GitSource, scope: Scope) -> Result<(), PackageError> {
        let target = self.git_install_path(g, scope);
        if !target.exists() {
            return self.install_git(g, scope);
        }
        let s = |x: &str| x.to_owned();
        let (fetch, reference) = match &g.git_ref {
            Some(r) => (vec![s("fetch"), s("origin"), r.clone()], s("FETCH_HEAD")),
            None => (
                vec![s("fetch"), s("--prune"), s("--no-tags"), s("origin")],
                s("@{upstream}"),
            ),
        };
        self.run("git", &fetch, Some(&target))?;
        let head = capture("git", &["rev-parse", "HEAD"], &target);
        let wanted = capture(
            "git",
            &["rev-parse", &format!("{reference}^{{commit}}")],
            &target,
        );
        if head.is_some() && head == wanted {
            return Ok(());
        }
        self.run(
            "git",
            &[s("reset"), s("--hard"), format!("{reference}^{{commit}}")],
            Some(&target),
        )?;
        self.run("git", &[s("clean"), s("-fdx")], Some(&target))?;
        if target.join("package.json").exists() {
            self.run_npm(self.git_dependency_args(), Some(&target))?;
        }
        Ok(())
    }

    fn check_trusted(&self, scope: Scope) -> Result<(), PackageError> {
        if scope == Scope::Project && !self.settings.is_project_trusted() {
            return Err(PackageError::ProjectNotTrusted);
        }
        Ok(())
    }

    /// Installs a parsed source (npm or git; local paths need nothing).
    pub fn install_parsed(&self, parsed: &PackageSource, scope: Scope) -> Result<(), PackageError> {
        match parsed {
            PackageSource::Npm(n) => self.install_npm(std::slice::from_ref(&n.spec), scope),
            PackageSource::Git(g) => self.install_git(g, scope),
            PackageSource::Local(_) => Ok(()),
        }
    }

    /// `pi install`: installs `source`, then adds it to the scope's settings.
    ///
    /// # Errors
    /// The failed command, a missing local path, an untrusted project.
    pub fn install_and_persist(&mut self, source: &str, scope: Scope) -> Result<(), PackageError> {
        self.check_trusted(scope)?;
        self.progress(&format!("Installing {source}..."));
        let parsed = parse_source(source);
        if let PackageSource::Local(p) = &parsed {
            let resolved = self.resolve_from(p, &self.cwd);
            if !resolved.exists() {
                return Err(PackageError::PathMissing(resolved));
            }
        } else {
            self.install_parsed(&parsed, scope)?;
        }
        self.add_to_settings(source, scope);
        Ok(())
    }

    fn normalized_for_settings(&self, source: &str, scope: Scope) -> String {
        match parse_source(source) {
            PackageSource::Local(p) => {
                let resolved = self.resolve_from(&p, &self.cwd);
                let rel = relative(&self.base_dir(scope), &resolved);
                if rel.is_empty() { ".".to_owned() } else { rel }
            }
            _ => source.to_owned(),
        }
    }

    /// The match key of an input source (local paths relative to the working directory).
    fn input_key(&self, source: &str) -> String {
        self.identity(source, None)
    }

    fn add_to_settings(&mut self, source: &str, scope: Scope) -> bool {
        let mut entries = self.entries(scope);
        let normalized = self.normalized_for_settings(source, scope);
        let key = self.input_key(source);
        let found = entries
            .iter()
            .position(|e| entry_source(e).is_some_and(|s| self.identity(s, Some(scope)) == key));
        match found {
            Some(i) => {
                if entry_source(&entries[i]) == Some(normalized.as_str()) {
                    return false;
                }
                match &mut entries[i] {
                    Value::Object(o) => {
                        o.insert("source".to_owned(), Value::String(normalized));
                    }
                    other => *other = Value::String(normalized),
                }
            }
            None => entries.push(Value::String(normalized)),
        }
        self.write_entries(scope, entries);
        true
    }

    /// `pi remove`: uninstalls `source`, then removes it from the scope's settings; false when
    /// no entry matched.
    ///
    /// # Errors
    /// The failed command, an untrusted project.
    pub fn remove_and_persist(&mut self, source: &str, scope: Scope) -> Result<bool, PackageError> {
        self.check_trusted(scope)?;
        self.progress(&format!("Removing {source}..."));
        match parse_source(source) {
            PackageSource::Npm(n) => {
                let root = self.npm_root(scope);
                if root.exists() {
                    self.run_npm(
                        vec![
                            "uninstall".to_owned(),
                            n.name.clone(),
                            "--prefix".to_owned(),
                            root.display().to_string(),
                            "--legacy-peer-deps".to_owned(),
                        ],
                        None,
                    )?;
                }
            }
            PackageSource::Git(g) => {
                let target = self.git_install_path(&g, scope);
                let _ = std::fs::remove_dir_all(&target);
                prune_empty_parents(&target, &self.git_root(scope));
            }
            PackageSource::Local(_) => {}
        }
        let entries = self.entries(scope);
        let key = self.input_key(source);
        let next: Vec<Value> = entries
            .iter()
            .filter(|e| entry_source(e).is_none_or(|s| self.identity(s, Some(scope)) != key))
            .cloned()
            .collect();
        if next.len() == entries.len() {
            return Ok(false);
        }
        self.write_entries(scope, next);
        Ok(true)
    }

    /// `pi update [source]`: npm packages without an exact version go to `<name>@latest` (or
    /// their range), git clones to their upstream or ref. Nothing under PI_OFFLINE.
    ///
    /// # Errors
    /// No configured package matches `source`; a failed command.
    pub fn update(&mut self, source: Option<&str>) -> Result<(), PackageError> {
        let wanted = source.map(|s| self.identity(s, None));
        let mut todo: Vec<(String, Scope)> = Vec::new();
        let mut all = Vec::new();
        for scope in [Scope::User, Scope::Project] {
            for e in self.entries(scope) {
                let Some(s) = entry_source(&e) else { continue };
                all.push(s.to_owned());
                if wanted
                    .as_ref()
                    .is_some_and(|w| *w != self.identity(s, Some(scope)))
                {
                    continue;
                }
                todo.push((s.to_owned(), scope));
            }
        }
        if let Some(s) = source
            && todo.is_empty()
        {
            return Err(PackageError::NoMatch {
                given: s.to_owned(),
                suggestion: suggestion(s, &all),
            });
        }
        if offline() {
            return Ok(());
        }
        for scope in [Scope::User, Scope::Project] {
            let npm: Vec<(String, NpmSource)> = todo
                .iter()
                .filter(|(_, sc)| *sc == scope)
                .filter_map(|(s, _)| match parse_source(s) {
                    PackageSource::Npm(n) if !n.pinned => Some((s.clone(), n)),
                    _ => None,
                })
                .collect();
            if npm.is_empty() {
                continue;
            }
            let line = if npm.len() == 1 {
                format!("Updating {}...", npm[0].0)
            } else {
                format!("Updating {} npm packages...", scope.as_str())
            };
            self.progress(&line);
            let specs: Vec<String> = npm
                .iter()
                .map(|(_, n)| match &n.version {
                    Some(_) => n.spec.clone(),
                    None => format!("{}@latest", n.name),
                })
                .collect();
            self.install_npm(&specs, scope)?;
        }
        for (s, scope) in &todo {
            if let PackageSource::Git(g) = parse_source(s) {
                self.progress(&format!("Updating {s}..."));
                self.update_git(&g, *scope)?;
            }
        }
        Ok(())
    }
}

/// `findSuggestedConfiguredSource`: a configured source the user may have meant.
fn suggestion(source: &str, configured: &[String]) -> Option<String> {
    let t = source.trim();
    configured
        .iter()
        .find(|c| match parse_source(c) {
            PackageSource::Npm(n) => t == n.name || t == n.spec,
            PackageSource::Git(g) => {
                let short = format!("{}/{}", g.host, g.path);
                t == short
                    || g.git_ref
                        .as_ref()
                        .is_some_and(|r| t == format!("{short}@{r}"))
            }
            PackageSource::Local(_) => false,
        })
        .cloned()
}

fn capture(program: &str, args: &[&str], cwd: &Path) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Removes the empty directories between `target` and `root` (exclusive).
fn prune_empty_parents(target: &Path, root: &Path) {
    let mut current = target.parent();
    while let Some(dir) = current {
        if !dir.starts_with(root) || dir == root {
            break;
        }
        if dir.exists() {
            let empty = std::fs::read_dir(dir)
                .map(|mut r| r.next().is_none())
                .unwrap_or(false);
            if !empty || std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
        current = dir.parent();
    }
}
