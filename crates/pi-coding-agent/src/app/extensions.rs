//! Which extensions a run loads, and loading them.
//!
//! Mirrors pi-coding-agent 0.85.0's resolution order (`core/package-manager.js`,
//! `resource-loader.js`): the `-e` paths first, then (unless `-ne`) the settings'
//! `extensions`, `<cwd>/.pi/extensions` only when the project is trusted, and
//! `<agent dir>/extensions`, then the settings `packages`' extensions ([`crate::packages`]). The command line, the user settings and the agent directory
//! load before project trust is decided ([`pre_trust_sources`]); the project's own sources
//! load after, only when trusted ([`project_sources`]). A directory named explicitly loads its
//! entry points (`pi-extension.json`, `package.json` `pi.extensions`, `index.ts|js`), else
//! what it contains; a directory contributes its `*.json`/`*.ts`/`*.js` files and each
//! subdirectory's entry points; a path seen twice loads once.
//!
//! pi-rs loads extension processes described by a manifest (`docs/extension-protocol.md`),
//! and runs a `.ts`/`.js` extension in its Node host (`extension-host/host.mjs`), which
//! needs Node and the pi packages installed beside it ([`node_modules_dir`]); without them a
//! named `.ts`/`.js` extension is a load error and one found in a directory a warning.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cli::AppMode;
use crate::cli::args::{FlagValue as CliFlag, unknown_options_message};
use crate::config::settings::SettingsManager;
use crate::extensions::ExtensionHooks;
use crate::extensions::remote::{Manifest, RemoteExtension};
use crate::extensions::{ExtensionLoadError, FlagValue, Mode};
use crate::platform::lexical_path::lexical_normalize;
use crate::session::{AgentSession, SessionStartReason, ShutdownReason};

/// Why a `.ts`/`.js` extension does not load: the Node host's packages are missing.
pub(crate) const NODE_HOST_MISSING: &str = "TypeScript and JavaScript extensions run in pi-rs's Node extension host, which needs Node >= 22.19 and @earendil-works/pi-coding-agent with jiti installed in the host's node_modules (see docs/extensions.md)";

/// The Node host's node_modules: `PI_EXTENSION_NODE_MODULES`, else
/// `<agent dir>/extension-host/node_modules`.
pub(crate) fn node_modules_dir(agent_dir: &Path) -> PathBuf {
    match std::env::var_os("PI_EXTENSION_NODE_MODULES").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => agent_dir.join("extension-host").join("node_modules"),
    }
}

/// The Node host, built into the binary so that a `pi` copied anywhere can run TS extensions.
const NODE_HOST: &str = include_str!("../../extension-host/host.mjs");

/// The Node host script: `PI_EXTENSION_HOST`, else the built-in host written (once per
/// version of its text) to `<agent dir>/extension-host/pi-rs-host-<hash>.mjs`.
///
/// # Errors
/// The write's I/O error.
pub(crate) fn node_host_script(agent_dir: &Path) -> std::io::Result<PathBuf> {
    if let Some(p) = std::env::var_os("PI_EXTENSION_HOST").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    // FNV-1a of the text: a new host text gets a new file, an old one is never half-replaced.
    let hash = NODE_HOST.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let dir = agent_dir.join("extension-host");
    let path = dir.join(format!("pi-rs-host-{hash:016x}.mjs"));
    if std::fs::read_to_string(&path).is_ok_and(|t| t == NODE_HOST) {
        return Ok(path);
    }
    std::fs::create_dir_all(&dir)?;
    let tmp = dir.join(format!(
        ".pi-rs-host-{hash:016x}.{}.tmp",
        std::process::id()
    ));
    std::fs::write(&tmp, NODE_HOST)?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// Why the Node host cannot run a TS/JS extension; each text is [`NODE_HOST_MISSING`] and
/// what is missing, shown as the extension's load error or skip warning.
#[derive(Debug, thiserror::Error)]
enum NodeHostError {
    #[error("{NODE_HOST_MISSING} ({0})")]
    Write(std::io::Error),
    #[error("{NODE_HOST_MISSING} (looked in {})", .0.display())]
    NoModules(PathBuf),
    #[error("{NODE_HOST_MISSING} (no host script at {})", .0.display())]
    NoScript(PathBuf),
}

/// The manifest that runs `script` in the Node host (`PI_NODE`, else `node` on `PATH`), or
/// why it cannot run.
fn node_manifest(script: &Path, agent_dir: &Path) -> Result<Manifest, NodeHostError> {
    let modules = node_modules_dir(agent_dir);
    let host = node_host_script(agent_dir).map_err(NodeHostError::Write)?;
    if !modules.join("@earendil-works/pi-coding-agent").is_dir() || !modules.join("jiti").is_dir() {
        return Err(NodeHostError::NoModules(modules));
    }
    if !host.is_file() {
        return Err(NodeHostError::NoScript(host));
    }
    let node = std::env::var_os("PI_NODE")
        .filter(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("node"), PathBuf::from);
    Ok(Manifest {
        path: script.to_path_buf(),
        command: node,
        args: vec![host.display().to_string(), script.display().to_string()],
        env: vec![(
            "PI_EXTENSION_NODE_MODULES".to_owned(),
            modules.display().to_string(),
        )],
        event_timeout: crate::extensions::remote::manifest::DEFAULT_EVENT_TIMEOUT,
        cancel_grace: crate::extensions::remote::manifest::DEFAULT_CANCEL_GRACE,
    })
}

/// The manifest file a subdirectory of an extensions directory is loaded from.
pub(crate) const DIRECTORY_MANIFEST: &str = "pi-extension.json";

/// An extension to load: its path, and whether it was named explicitly (`-e`, settings)
/// rather than found in a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Source {
    /// The absolute path.
    pub path: PathBuf,
    /// Named explicitly.
    pub explicit: bool,
}

/// The extensions of a run, as loaded so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct LoadedExtensions {
    /// The started extensions, in load order.
    pub remotes: Vec<Arc<RemoteExtension>>,
    /// Their flags' values from the command line.
    pub flag_values: Vec<(String, FlagValue)>,
}

impl LoadedExtensions {
    /// Ends every extension process (at most `wait` each for a clean exit).
    pub(crate) fn shutdown(&self, wait: std::time::Duration) {
        for r in &self.remotes {
            r.shutdown(wait);
        }
    }
}

/// The run's extension processes, shared by the session factory (which starts them anew on
/// `/reload`) and the mode that ends them when the run ends.
#[derive(Clone, Debug, Default)]
pub(crate) struct ExtensionProcesses(Arc<std::sync::Mutex<LoadedExtensions>>);

impl ExtensionProcesses {
    /// Shares `loaded`.
    pub(crate) fn new(loaded: LoadedExtensions) -> Self {
        Self(Arc::new(std::sync::Mutex::new(loaded)))
    }

    /// The processes now.
    pub(crate) fn snapshot(&self) -> LoadedExtensions {
        crate::sync::lock(&self.0).clone()
    }

    /// Puts `next` in place; returns the processes it replaces (still running).
    pub(crate) fn replace(&self, next: LoadedExtensions) -> LoadedExtensions {
        std::mem::replace(&mut *crate::sync::lock(&self.0), next)
    }

    /// Ends every process there is now ([`LoadedExtensions::shutdown`]).
    pub(crate) fn shutdown(&self, wait: std::time::Duration) {
        self.snapshot().shutdown(wait);
    }
}

/// The `ctx.mode` of an app mode.
pub(crate) fn extension_mode(mode: AppMode) -> Mode {
    match mode {
        AppMode::Interactive => Mode::Tui,
        AppMode::Print => Mode::Print,
        AppMode::Json => Mode::Json,
        AppMode::Rpc => Mode::Rpc,
    }
}

fn push(out: &mut Vec<Source>, path: PathBuf, explicit: bool) {
    let path = lexical_normalize(&path);
    if !out.iter().any(|s| s.path == path) {
        out.push(Source { path, explicit });
    }
}

/// A directory's extensions: its `*.json`, `*.ts`, `*.js` files, then each subdirectory's
/// entry points ([`directory_entries`]), in name order.
fn scan_dir(dir: &Path, out: &mut Vec<Source>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<PathBuf> = read.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    for p in &names {
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
        if p.is_file() && matches!(ext, "json" | "ts" | "js") {
            push(out, p.clone(), false);
        }
    }
    for p in &names {
        if !p.is_dir() {
            continue;
        }
        for entry in directory_entries(p).unwrap_or_default() {
            push(out, entry, false);
        }
    }
}

/// A directory's declared entry points, as pi resolves a package directory: our
/// `pi-extension.json`, else the existing files its `package.json` lists under
/// `pi.extensions`, else `index.ts`, else `index.js`; `None` when it declares none.
fn directory_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    let manifest = dir.join(DIRECTORY_MANIFEST);
    if manifest.is_file() {
        return Some(vec![manifest]);
    }
    crate::packages::resolve::declared_extension_entries(dir)
}

fn add_explicit(out: &mut Vec<Source>, path: PathBuf) {
    if path.is_dir() {
        // A directory without entry points contributes the extensions found in it.
        match directory_entries(&path) {
            Some(entries) => {
                for entry in entries {
                    push(out, entry, true);
                }
            }
            None => scan_dir(&path, out),
        }
    } else {
        push(out, path, true);
    }
}

/// The sources that load before project trust: `-e` paths (relative to `cwd`), then unless
/// `no_extensions` the user settings' `extensions` and `<agent dir>/extensions`.
pub(crate) fn pre_trust_sources(
    cli: &[String],
    no_extensions: bool,
    cwd: &Path,
    agent_dir: &Path,
) -> Vec<Source> {
    let mut out = Vec::new();
    for p in cli {
        add_explicit(&mut out, crate::config::agent_paths::resolve_path(p, cwd));
    }
    if no_extensions {
        return out;
    }
    let settings = SettingsManager::load(cwd, agent_dir, false);
    for p in settings.scoped_resource_paths("extensions").user {
        add_explicit(&mut out, p);
    }
    scan_dir(&agent_dir.join("extensions"), &mut out);
    let mut warnings = Vec::new();
    for p in crate::packages::pre_trust_extensions(cwd, agent_dir, &mut warnings) {
        add_explicit(&mut out, p);
    }
    print_package_warnings(&warnings);
    out
}

/// Install failures of missing packages: the run goes on without them.
fn print_package_warnings(warnings: &[String]) {
    for w in warnings {
        eprintln!("Warning: {w}");
    }
}

/// The package extensions that wait for the trust decision (settings `packages`): a trusted
/// project's packages, else the user packages the project also lists. None with `-ne`.
pub(crate) fn post_trust_package_sources(
    cwd: &Path,
    agent_dir: &Path,
    trusted: bool,
    no_extensions: bool,
) -> Vec<Source> {
    let mut out = Vec::new();
    if no_extensions {
        return out;
    }
    let mut warnings = Vec::new();
    for p in crate::packages::post_trust_extensions(cwd, agent_dir, trusted, &mut warnings) {
        add_explicit(&mut out, p);
    }
    print_package_warnings(&warnings);
    out
}

/// The project's sources, for a trusted project without `-ne`: the project settings'
/// `extensions` and `<cwd>/.pi/extensions`.
pub(crate) fn project_sources(settings: &SettingsManager, cwd: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    for p in settings.scoped_resource_paths("extensions").project {
        add_explicit(&mut out, p);
    }
    scan_dir(&cwd.join(".pi").join("extensions"), &mut out);
    out
}

/// Starts `sources` (skipping paths already in `loaded`): manifests directly, `.ts`/`.js`
/// files in the Node host. Every failure is a load error, except a discovered `.ts`/`.js`
/// file whose Node host is not installed, which is a warning.
pub(crate) fn load(
    sources: &[Source],
    loaded: &mut LoadedExtensions,
    cwd: &Path,
    agent_dir: &Path,
    mode: AppMode,
    warnings: &mut Vec<String>,
) -> Vec<ExtensionLoadError> {
    let mut errors = Vec::new();
    let ext_mode = extension_mode(mode);
    let has_ui = matches!(ext_mode, Mode::Rpc | Mode::Tui);
    for s in sources {
        let display = s.path.display().to_string();
        if loaded.remotes.iter().any(|r| r.path() == display) {
            continue;
        }
        let ext = s.path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let started = if matches!(ext, "ts" | "js" | "mjs" | "cjs" | "mts" | "cts") {
            match node_manifest(&s.path, agent_dir) {
                Ok(m) => RemoteExtension::start_manifest(m, cwd, ext_mode, has_ui),
                Err(e) if s.explicit => Err(ExtensionLoadError {
                    path: display,
                    error: e.to_string(),
                }),
                Err(error) => {
                    warnings.push(format!("Skipping extension \"{display}\": {error}"));
                    continue;
                }
            }
        } else {
            RemoteExtension::start(&s.path, cwd, ext_mode, has_ui)
        };
        match started {
            Ok(r) => loaded.remotes.push(r),
            Err(e) => errors.push(e),
        }
    }
    errors
}

/// Splits the command line's unknown long options into the values of the loaded
/// extensions' flags (into `loaded`) and the `Unknown option(s): …` message for the rest.
pub(crate) fn apply_flags(
    unknown: &[(String, CliFlag)],
    loaded: &mut LoadedExtensions,
) -> Option<String> {
    let registered: Vec<String> = loaded.remotes.iter().flat_map(|r| r.flag_names()).collect();
    let booleans: Vec<String> = loaded
        .remotes
        .iter()
        .flat_map(|r| r.boolean_flag_names())
        .collect();
    let mut rest = Vec::new();
    for (name, value) in unknown {
        if !registered.contains(name) {
            rest.push((name.clone(), value.clone()));
            continue;
        }
        let v = flag_value(value, booleans.contains(name));
        loaded.flag_values.retain(|(n, _)| n != name);
        loaded.flag_values.push((name.clone(), v));
    }
    unknown_options_message(&rest)
}

/// The value of an extension flag from the command line. The first parse does not know the
/// flags' types, so `--plan word` took `word` as the value: a boolean flag is then `true`, as
/// in pi (the word is not a prompt there either), except for an explicit `false`.
fn flag_value(value: &CliFlag, boolean: bool) -> FlagValue {
    match value {
        CliFlag::Present => FlagValue::Bool(true),
        CliFlag::Value(s) if boolean => FlagValue::Bool(s != "false"),
        CliFlag::Value(s) if s == "true" || s == "false" => FlagValue::Bool(s == "true"),
        CliFlag::Value(s) => FlagValue::String(s.clone()),
    }
}

/// The start of a run with extensions: binds the session to its hooks and awaits
/// `session_start {reason:"startup"}` (pi's `bindExtensions`). Without hooks, nothing.
pub(crate) async fn bind_startup(hooks: Option<&Arc<ExtensionHooks>>, session: &AgentSession) {
    if let Some(h) = hooks {
        h.bind(session, SessionStartReason::Startup, None).await;
    }
}

/// The end of a run with extensions: `session_shutdown {reason:"quit"}` when the session has
/// hooks, then every extension process is ended.
pub(crate) async fn end_run(
    hooks: Option<&Arc<ExtensionHooks>>,
    session: &AgentSession,
    processes: &LoadedExtensions,
) {
    if hooks.is_some() {
        session.shutdown(ShutdownReason::Quit, None).await;
    }
    if !processes.remotes.is_empty() {
        let processes = processes.clone();
        let _ = tokio::task::spawn_blocking(move || {
            processes.shutdown(super::launch::SHUTDOWN_WAIT);
        })
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_boolean_flag_is_true_whatever_word_the_first_parse_gave_it() {
        let word = CliFlag::Value("make a plan".to_owned());
        assert_eq!(flag_value(&word, true), FlagValue::Bool(true));
        assert_eq!(
            flag_value(&CliFlag::Value("false".to_owned()), true),
            FlagValue::Bool(false)
        );
        assert_eq!(flag_value(&CliFlag::Present, true), FlagValue::Bool(true));
        assert_eq!(
            flag_value(&word, false),
            FlagValue::String("make a plan".to_owned())
        );
    }

    #[test]
    fn a_directory_loads_its_declared_entry_points_as_pi_does() {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("work");
        let agent = root.path().join("agent");
        std::fs::create_dir_all(&agent).unwrap();
        // package.json `pi.extensions` (a missing entry is dropped), never the helper files.
        let pkg = cwd.join("with-deps");
        std::fs::create_dir_all(pkg.join("src")).unwrap();
        std::fs::write(
            pkg.join("package.json"),
            r#"{"pi":{"extensions":["./src/main.ts","./gone.ts"]}}"#,
        )
        .unwrap();
        std::fs::write(pkg.join("src/main.ts"), "").unwrap();
        std::fs::write(pkg.join("helper.ts"), "").unwrap();
        // index.ts beside a helper module: only index.ts.
        let plan = cwd.join("plan-mode");
        std::fs::create_dir_all(&plan).unwrap();
        std::fs::write(plan.join("index.ts"), "").unwrap();
        std::fs::write(plan.join("utils.ts"), "").unwrap();
        // No entry points: what the directory contains.
        let loose = cwd.join("loose");
        std::fs::create_dir_all(&loose).unwrap();
        std::fs::write(loose.join("a.ts"), "").unwrap();
        std::fs::write(loose.join("b.js"), "").unwrap();
        let cli: Vec<String> = ["with-deps", "plan-mode", "loose"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let got: Vec<PathBuf> = pre_trust_sources(&cli, true, &cwd, &agent)
            .into_iter()
            .map(|s| s.path.strip_prefix(&cwd).unwrap().to_path_buf())
            .collect();
        let want: Vec<PathBuf> = [
            "with-deps/src/main.ts",
            "plan-mode/index.ts",
            "loose/a.ts",
            "loose/b.js",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(got, want);
        // In an extensions directory a package subdirectory contributes the same entries.
        let ext = agent.join("extensions");
        std::fs::create_dir_all(&ext).unwrap();
        std::fs::rename(&pkg, ext.join("with-deps")).unwrap();
        let found = pre_trust_sources(&[], false, &cwd, &agent);
        assert_eq!(
            found,
            vec![Source {
                path: ext.join("with-deps/src/main.ts"),
                explicit: false
            }]
        );
    }

    #[test]
    fn sources_come_in_pis_order_and_once() {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("work");
        let agent = root.path().join("agent");
        std::fs::create_dir_all(agent.join("extensions/sub")).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        std::fs::write(agent.join("extensions/b.json"), "{}").unwrap();
        std::fs::write(agent.join("extensions/a.ts"), "").unwrap();
        std::fs::write(agent.join("extensions/notes.txt"), "").unwrap();
        std::fs::write(agent.join("extensions/sub/pi-extension.json"), "{}").unwrap();
        std::fs::write(
            agent.join("settings.json"),
            r#"{"extensions":["extensions/b.json","x.json"]}"#,
        )
        .unwrap();
        let cli = vec!["one.json".to_owned()];
        let got: Vec<(String, bool)> = pre_trust_sources(&cli, false, &cwd, &agent)
            .into_iter()
            .map(|s| {
                let rel = s
                    .path
                    .strip_prefix(root.path())
                    .unwrap()
                    .display()
                    .to_string();
                (rel, s.explicit)
            })
            .collect();
        let want: Vec<(String, bool)> = [
            ("work/one.json", true),
            ("agent/extensions/b.json", true),
            ("agent/x.json", true),
            ("agent/extensions/a.ts", false),
            ("agent/extensions/sub/pi-extension.json", false),
        ]
        .iter()
        .map(|(p, e)| ((*p).to_owned(), *e))
        .collect();
        assert_eq!(got, want);
        let only_cli = pre_trust_sources(&cli, true, &cwd, &agent);
        assert_eq!(only_cli.len(), 1);
    }

    #[test]
    fn project_sources_are_its_settings_then_its_directory() {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("work");
        let agent = root.path().join("agent");
        std::fs::create_dir_all(cwd.join(".pi/extensions")).unwrap();
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::write(cwd.join(".pi/extensions/p.json"), "{}").unwrap();
        std::fs::write(
            cwd.join(".pi/settings.json"),
            r#"{"extensions":["x.json"]}"#,
        )
        .unwrap();
        let trusted = SettingsManager::load(&cwd, &agent, true);
        let got: Vec<Source> = project_sources(&trusted, &cwd);
        assert_eq!(
            got,
            vec![
                Source {
                    path: cwd.join(".pi/x.json"),
                    explicit: true
                },
                Source {
                    path: cwd.join(".pi/extensions/p.json"),
                    explicit: false
                },
            ]
        );
        // Untrusted settings carry no project entries (the directory is only read when
        // trusted, by the caller).
        let untrusted = SettingsManager::load(&cwd, &agent, false);
        assert!(
            project_sources(&untrusted, &cwd)
                .iter()
                .all(|s| !s.explicit)
        );
    }

    #[test]
    fn explicit_scripts_fail_and_discovered_ones_warn() {
        let mut loaded = LoadedExtensions::default();
        let mut warnings = Vec::new();
        let sources = [
            Source {
                path: PathBuf::from("/x/gate.ts"),
                explicit: true,
            },
            Source {
                path: PathBuf::from("/x/found.js"),
                explicit: false,
            },
        ];
        let agent = tempfile::tempdir().unwrap();
        let errors = load(
            &sources,
            &mut loaded,
            Path::new("/"),
            agent.path(),
            AppMode::Json,
            &mut warnings,
        );
        assert_eq!(errors.len(), 1);
        let expected = format!("Failed to load extension \"/x/gate.ts\": {NODE_HOST_MISSING}");
        assert!(
            errors[0].to_string().starts_with(&expected),
            "{}",
            errors[0]
        );
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("Skipping extension \"/x/found.js\""));
    }
}
