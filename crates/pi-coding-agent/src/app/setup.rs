//! From the launch configuration to a built [`AgentSession`].
//!
//! Mirrors the session half of pi-coding-agent 0.85.0 `main.js` and `core/sdk.js`
//! (`createAgentSession`):
//! 1. start-up migrations of old layouts;
//! 2. project trust (`--approve` / `--no-approve`, `trust.json`, `defaultProjectTrust`; the
//!    question only in the interactive mode, [`build_session_asking`]), then the settings with
//!    project settings only when trusted;
//! 3. the session store ([`super::session_select::open_store`]; pi resolves it before the model, so
//!    a missing session wins over a bad model);
//! 4. the model registry (`models.json`, `auth.json`, environment);
//! 5. the `--models` / `enabledModels` scope and the `--provider` / `--model` resolution (an
//!    unresolvable model is a start-up error), `--api-key` for the chosen model's provider;
//! 6. the session's model and thinking level ([`choose_session_model`]);
//! 7. the active built-in tools (`--tools`, `--no-tools`, `--no-builtin-tools`,
//!    `--exclude-tools`, settings `defaultTools`);
//! 8. context files, skills, templates and the system prompt;
//! 9. the session itself and `--name`.
//!
//! Steps 1–5 are fixed for the run; steps 6–9 depend on the store and its cwd and are
//! reused, as [`SessionSetup::factory`], for every session replacement (pi's runtime factory,
//! [`crate::runtime`]).
//!
//! Warnings go to the caller's stderr as `Warning: …`; errors come back as a
//! [`SetupError`] (the caller prints its line and exits 1).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use pi_agent_core::AgentTool;
use pi_ai::{InputKind, Model, ModelThinkingLevel};

use super::docs_dir;
use super::extensions::{
    ExtensionProcesses, LoadedExtensions, apply_flags, extension_mode, load,
    post_trust_package_sources, pre_trust_sources, project_sources,
};
use super::launch::{Launch, SHUTDOWN_WAIT};
use super::session_select::open_store;
use crate::cli::LaunchConfig;
use crate::cli::launch::EXTENSION_LOAD_FAILURE_HINT;
use crate::config::agent_paths::{AgentPaths, home_dir};
use crate::config::migrations::run_migrations;
use crate::config::model_resolver::ScopedModel;
use crate::config::model_resolver::{
    API_KEY_REQUIRES_MODEL, SessionModelInputs, choose_session_model, parse_thinking_level,
    resolve_cli_model, resolve_model_scope,
};
use crate::config::registry::ModelRegistry;
use crate::config::resources::{ResourceOptions, Resources};
use crate::config::settings::SettingsManager;
use crate::config::skills::Skill;
use crate::config::system_prompt::{DocsPaths, SystemPromptBase};
use crate::config::templates::PromptTemplate;
use crate::config::trust::{
    TrustInputs, TrustOption, TrustPrompt, TrustStore, resolve_project_trusted,
};
use crate::extensions::{ExtensionHooks, ExtensionRunner, Mode, mode_error_listener};
use crate::runtime::{BuildError, BuiltSession, RuntimeHost, SessionFactory, SessionTarget};
use crate::session::auto_compaction::AutoCompactor;
use crate::session::hooks::Compactor;
use crate::session::{AgentSession, RegistryAuth};
use crate::storage::context::context_path;
use crate::storage::entry::{EntryKind, EntryType};
use crate::storage::tree::normalize_session_name;
use crate::storage::{SessionStore, build_session_context};
use crate::tools::bash::BashToolOptions;
use crate::tools::bash::SessionEnv;
use crate::tools::read::ReadToolOptions;
use crate::tools::{BuiltinToolOptions, create_builtin_tool, initial_active_tool_names};

/// Why the session could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SetupError {
    /// Printed as `Error: <text>`.
    Error(String),
    /// Printed verbatim (pi's `No session found matching '<X>'`).
    Plain(String),
}

impl SetupError {
    /// The stderr line (without its newline).
    pub(crate) fn line(&self) -> String {
        match self {
            SetupError::Error(t) => format!("Error: {t}"),
            SetupError::Plain(t) => t.clone(),
        }
    }

    /// The message without the `Error: ` prefix (an RPC error response).
    pub(crate) fn message(&self) -> &str {
        match self {
            SetupError::Error(t) | SetupError::Plain(t) => t,
        }
    }
}

impl From<String> for SetupError {
    fn from(text: String) -> Self {
        SetupError::Error(text)
    }
}

/// A built session and what the modes need beside it.
pub(crate) struct SessionSetup {
    /// The session, ready for prompts.
    pub session: AgentSession,
    /// The prompt templates loaded for it (RPC `get_commands`).
    pub templates: Vec<PromptTemplate>,
    /// The skills loaded for it (RPC `get_commands`).
    pub skills: Vec<Skill>,
    /// Builds the next session of this run for another store (session replacement), with
    /// the same command line, settings, auth and resource options.
    pub factory: SessionFactory,
    /// The extension hooks of the session (`None` without extensions); bind them
    /// ([`ExtensionHooks::bind`]) before the first prompt.
    pub extensions: Option<Arc<ExtensionHooks>>,
    /// Every extension process of the run (ended with [`ExtensionProcesses::shutdown`]).
    pub extension_processes: ExtensionProcesses,
    /// The run's model registry (models, `auth.json`), shared by every session of the run.
    pub registry: Arc<RwLock<ModelRegistry>>,
}

fn warn(stderr: &mut dyn Write, message: &str) {
    let _ = writeln!(stderr, "Warning: {message}");
}

/// The compaction coordinator the binary uses (threshold and overflow auto-compaction).
fn compactor() -> Arc<dyn Compactor> {
    Arc::new(AutoCompactor::new())
}

/// Builds the session for `launch` (see the module docs for the order).
///
/// # Errors
/// A session that cannot be found ([`SetupError::Plain`]), opened or written; a model that
/// cannot be resolved (`Model "x" not found. …`, `Unknown provider "p". …`); `--api-key`
/// without a model.
pub(crate) fn build_session(
    launch: &Launch,
    stderr: &mut dyn Write,
) -> Result<SessionSetup, SetupError> {
    build_session_asking(launch, stderr, None)
}

/// [`build_session`] with the interactive mode's project-trust question: `trust_prompt` is
/// asked when the project has `.pi` resources and no decision is recorded (pi's select; the
/// answer is written to `trust.json` as pi writes it).
///
/// # Errors
/// Those of [`build_session`].
pub(crate) fn build_session_asking(
    launch: &Launch,
    stderr: &mut dyn Write,
    trust_prompt: Option<TrustPrompt<'_>>,
) -> Result<SessionSetup, SetupError> {
    let (config, store) = prepare(launch, stderr, trust_prompt)?;
    // pi appends `--name`'s session_info as soon as the session manager exists, before the
    // session is built (its model and thinking-level entries follow).
    if let Some(name) = &launch.config.name {
        let name = normalize_session_name(name);
        store
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .append(EntryKind::SessionInfo { name: Some(name) })
            .map_err(|e| SetupError::Error(e.to_string()))?;
    }
    let built = config.build_for_store(store, &launch.cwd, stderr)?;
    Ok(SessionSetup {
        session: built.session,
        templates: built.templates,
        skills: built.skills,
        extensions: built.extensions,
        extension_processes: config.extensions.clone(),
        registry: Arc::clone(&config.registry),
        factory: config.factory(),
    })
}

/// The available-models snapshot (models whose provider has auth), in registry order.
pub(crate) type AvailableModels = Arc<dyn Fn() -> Vec<Model> + Send + Sync>;

/// A built session with its runtime host: what a mode that replaces sessions drives (RPC).
pub(crate) struct Running {
    /// The first session (also the host's current one).
    pub session: AgentSession,
    /// Replaces the session (`new_session`, `switch_session`, `fork`, `clone`) with sessions
    /// built like the first.
    pub host: Arc<RuntimeHost>,
    /// The prompt templates loaded for the first session.
    pub templates: Vec<PromptTemplate>,
    /// The skills loaded for the first session.
    pub skills: Vec<Skill>,
    /// pi's `modelRuntime.getAvailableSnapshot()`.
    pub available_models: AvailableModels,
    /// Every extension process of the run (ended with [`ExtensionProcesses::shutdown`]).
    pub extension_processes: ExtensionProcesses,
    /// The run's model registry, shared with its sessions: a credential saved through it
    /// (`/login`) is used by the next request.
    pub registry: Arc<RwLock<ModelRegistry>>,
}

/// Builds the session for `launch` ([`build_session`]) and the runtime host around it.
///
/// # Errors
/// Those of [`build_session`].
pub(crate) fn build_running(
    launch: &Launch,
    stderr: &mut dyn Write,
) -> Result<Running, SetupError> {
    build_running_asking(launch, stderr, None)
}

/// [`build_running`] with the project-trust question ([`build_session_asking`]).
///
/// # Errors
/// Those of [`build_session`].
pub(crate) fn build_running_asking(
    launch: &Launch,
    stderr: &mut dyn Write,
    trust_prompt: Option<TrustPrompt<'_>>,
) -> Result<Running, SetupError> {
    let setup = build_session_asking(launch, stderr, trust_prompt)?;
    let host = RuntimeHost::with_session(
        setup.factory,
        BuiltSession {
            session: setup.session.clone(),
            extensions: setup.extensions,
        },
        launch.cwd.clone(),
    );
    let registry = Arc::clone(&setup.registry);
    let shared = Arc::clone(&setup.registry);
    Ok(Running {
        session: setup.session,
        host: Arc::new(host),
        templates: setup.templates,
        skills: setup.skills,
        available_models: Arc::new(move || {
            crate::sync::read(&registry)
                .available()
                .into_iter()
                .cloned()
                .collect()
        }),
        extension_processes: setup.extension_processes,
        registry: shared,
    })
}

/// The inputs fixed for the whole run (steps 1–5): what every session of the run is built
/// from, whatever its store (pi's runtime factory closure).
struct SessionConfig {
    flags: LaunchConfig,
    agent_dir: PathBuf,
    settings: Arc<Mutex<SettingsManager>>,
    registry: Arc<RwLock<ModelRegistry>>,
    scoped: Vec<ScopedModel>,
    cli_model: Option<Model>,
    cli_level: Option<ModelThinkingLevel>,
    /// The scoped model a new session starts on ([`scoped_start`]).
    scoped_start: Option<ScopedModel>,
    trusted: bool,
    home: PathBuf,
    /// The run's extension processes and their flag values (started anew by `/reload`).
    extensions: ExtensionProcesses,
    /// The launch's working directory (where `-e` paths and project extensions resolve).
    launch_cwd: PathBuf,
}

/// A session built for one store, with the resources it was built with.
struct BuiltForStore {
    session: AgentSession,
    extensions: Option<Arc<ExtensionHooks>>,
    templates: Vec<PromptTemplate>,
    skills: Vec<Skill>,
}

/// Steps 1–5: migrations, trust, settings, the store, the registry, the model scope and the
/// command-line model.
fn prepare(
    launch: &Launch,
    stderr: &mut dyn Write,
    mut trust_prompt: Option<TrustPrompt<'_>>,
) -> Result<(Arc<SessionConfig>, Arc<Mutex<SessionStore>>), SetupError> {
    let flags = &launch.config;
    let cwd = launch.cwd.as_path();
    let agent_dir = launch.agent_dir.as_path();
    let paths = AgentPaths::new(agent_dir.to_path_buf());
    let home = home_dir();
    run_migrations(agent_dir, cwd);

    let default_trust = SettingsManager::load(cwd, agent_dir, false).default_project_trust();
    let trust = resolve_project_trusted(
        TrustInputs {
            cwd,
            home: &home,
            trust_override: flags.project_trust_override,
            default_trust,
            hook: None,
            // A shorter borrow of the caller's prompt, for the lifetime of these inputs.
            prompt: trust_prompt.as_mut().map(|p| {
                let p: &mut dyn FnMut(&str, &[TrustOption]) -> Option<usize> = &mut **p;
                p
            }),
        },
        &TrustStore::new(agent_dir),
    );
    for d in &trust.diagnostics {
        warn(stderr, d);
    }
    let mut settings = SettingsManager::load(cwd, agent_dir, trust.trusted);
    for e in settings.drain_errors() {
        warn(stderr, &e.diagnostic());
    }
    let extensions = load_project_extensions(launch, &settings, trust.trusted, stderr)?;

    // pi resolves the session before the model: a missing session wins over a bad model.
    // The registry (catalog, `models.json`, `auth.json`) is loaded meanwhile on another
    // thread: opening a large session is the longest step of a resume, and the two are
    // independent (the session's errors still come first).
    let (store, registry) = std::thread::scope(|scope| {
        // Without a thread (resource limits) the registry loads after the session.
        let registry = std::thread::Builder::new()
            .name("pi-model-registry".into())
            .spawn_scoped(scope, || ModelRegistry::load(&paths))
            .ok();
        let store = open_store(launch, &settings, &paths, stderr);
        let registry = match registry {
            Some(h) => h
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            None => ModelRegistry::load(&paths),
        };
        (store, registry)
    });
    let store = store?;
    let mut registry = registry;
    if let Some(e) = registry.error() {
        warn(stderr, &e);
    }

    let patterns = flags
        .model
        .models
        .clone()
        .or_else(|| settings.enabled_models());
    let scoped = match &patterns {
        Some(p) => {
            let (scoped, diagnostics) = resolve_model_scope(p, &registry.available());
            for d in diagnostics {
                warn(stderr, &d.message);
            }
            scoped
        }
        None => Vec::new(),
    };
    let cli_thinking = flags
        .model
        .thinking
        .as_deref()
        .and_then(parse_thinking_level);
    let cli = resolve_cli_model(
        flags.model.provider.as_deref(),
        flags.model.model.as_deref(),
        cli_thinking,
        &registry,
    );
    if let Some(e) = cli.error {
        return Err(e.into());
    }
    if let Some(w) = &cli.warning {
        warn(stderr, w);
    }
    if let Some(key) = &flags.model.api_key {
        // pi: the key belongs to the explicit model (the command line's, else the first
        // scoped one when the session is new).
        let has_existing = {
            let s = crate::sync::lock(&store);
            build_session_context(&s)
                .map(|c| !c.messages.is_empty())
                .unwrap_or(false)
        };
        let explicit = cli.model.clone().or_else(|| {
            (!has_existing)
                .then(|| scoped_start(&scoped, &settings).map(|s| s.model.clone()))
                .flatten()
        });
        let Some(m) = &explicit else {
            return Err(API_KEY_REQUIRES_MODEL.to_owned().into());
        };
        registry.auth_mut().set_runtime_api_key(&m.provider, key);
    }
    let start = scoped_start(&scoped, &settings).cloned();
    let config = SessionConfig {
        flags: flags.clone(),
        agent_dir: launch.agent_dir.clone(),
        settings: Arc::new(Mutex::new(settings)),
        registry: Arc::new(RwLock::new(registry)),
        scoped_start: start,
        scoped,
        cli_model: cli.model,
        cli_level: cli_thinking.or(cli.thinking_level),
        trusted: trust.trusted,
        home,
        extensions: ExtensionProcesses::new(extensions),
        launch_cwd: launch.cwd.clone(),
    };
    Ok((Arc::new(config), store))
}

impl SessionConfig {
    /// The factory of session replacement: builds with [`SessionConfig::build_for_store`];
    /// warnings go to the process's stderr.
    fn factory(self: Arc<Self>) -> SessionFactory {
        Arc::new(move |target: SessionTarget| {
            if target.reload {
                self.reload_inputs(&mut std::io::stderr());
            }
            let store = Arc::new(Mutex::new(target.store));
            self.build_for_store(store, &target.cwd, &mut std::io::stderr())
                .map(|b| BuiltSession {
                    session: b.session,
                    extensions: b.extensions,
                })
                .map_err(|e| BuildError::new(e.message()))
        })
    }

    /// `/reload`'s first half (pi's `AgentSession.reload` before the runtime is rebuilt): the
    /// settings files are read again, and the extension processes end and start again from
    /// the same sources (`-e`, the agent and, when trusted, the project directories and
    /// settings), with the command line's flag values. An extension that fails to load is
    /// reported (`Error: …`) and left out; the others run.
    fn reload_inputs(&self, stderr: &mut dyn Write) {
        let project = {
            let mut settings = crate::sync::lock(&self.settings);
            settings.reload();
            for e in settings.drain_errors() {
                warn(stderr, &e.diagnostic());
            }
            let mut project = if self.trusted && !self.flags.no_extensions {
                project_sources(&settings, &self.launch_cwd)
            } else {
                Vec::new()
            };
            project.extend(post_trust_package_sources(
                &self.launch_cwd,
                &self.agent_dir,
                self.trusted,
                self.flags.no_extensions,
            ));
            project
        };
        let old = self.extensions.replace(LoadedExtensions::default());
        old.shutdown(SHUTDOWN_WAIT);
        let mut next = LoadedExtensions::default();
        let mut warnings = Vec::new();
        let cwd = &self.launch_cwd;
        let mut sources = pre_trust_sources(
            &self.flags.extensions,
            self.flags.no_extensions,
            cwd,
            &self.agent_dir,
        );
        sources.extend(project);
        let errors = load(
            &sources,
            &mut next,
            cwd,
            &self.agent_dir,
            self.flags.mode,
            &mut warnings,
        );
        for w in &warnings {
            warn(stderr, w);
        }
        if let Some(unknown) = apply_flags(&self.flags.unknown_flags, &mut next) {
            let _ = writeln!(stderr, "Error: {unknown}");
        }
        for e in &errors {
            let _ = writeln!(stderr, "Error: {e}");
        }
        self.extensions.replace(next);
    }

    /// A fresh runner over the run's extension processes (pi loads the extensions anew for
    /// every session), with their command-line flag values; `None` without extensions.
    fn extension_hooks(&self, cwd: &Path) -> Option<Arc<ExtensionHooks>> {
        let loaded = self.extensions.snapshot();
        if loaded.remotes.is_empty() {
            return None;
        }
        let mode = extension_mode(self.flags.mode);
        let mut builder = ExtensionRunner::builder(cwd).mode(mode);
        for r in &loaded.remotes {
            builder = builder.extension(Arc::clone(r));
        }
        for (name, value) in &loaded.flag_values {
            builder = builder.flag_value(name.clone(), value.clone());
        }
        let runner = builder.build();
        for e in runner.load_errors() {
            eprintln!("Error: {e}");
        }
        // RPC writes `extension_error` records itself; the TUI shows errors inline.
        if matches!(mode, Mode::Print | Mode::Json) {
            runner.on_error(mode_error_listener(mode, Box::new(std::io::stderr())));
        }
        let hooks = ExtensionHooks::new(runner);
        let registry = Arc::clone(&self.registry);
        hooks.set_available_models(Arc::new(move || {
            crate::sync::read(&registry)
                .available()
                .into_iter()
                .cloned()
                .collect()
        }));
        let tools = &self.flags.tools;
        if tools.tools.is_some() || tools.no_tools || tools.exclude_tools.is_some() {
            let allow = if tools.no_tools && tools.tools.is_none() {
                Some(Vec::new())
            } else {
                tools.tools.clone()
            };
            hooks.set_tool_filter(crate::tools::ToolFilter::new(
                allow,
                tools.exclude_tools.clone().unwrap_or_default(),
            ));
        }
        Some(hooks)
    }

    /// Steps 6–9 for `store` in `cwd`: the model and thinking level (the command line's, else
    /// the session's, else the settings'), the tools, the resources and system prompt of
    /// `cwd`, and the session.
    fn build_for_store(
        &self,
        store: Arc<Mutex<SessionStore>>,
        cwd: &Path,
        stderr: &mut dyn Write,
    ) -> Result<BuiltForStore, SetupError> {
        let resource_flags = &self.flags.resources;
        let (context, session_thinking) = {
            let s = crate::sync::lock(&store);
            for w in s.warnings() {
                warn(stderr, w);
            }
            let context =
                build_session_context(&s).map_err(|e| SetupError::Error(e.to_string()))?;
            let has_thinking = context_path(&s)
                .0
                .into_iter()
                .any(|i| *s.kind_at(i) == EntryType::ThinkingLevelChange);
            let thinking = has_thinking
                .then(|| parse_thinking_level(&context.thinking_level))
                .flatten();
            (context, thinking)
        };
        let has_existing = !context.messages.is_empty();
        let session_model = context.model.clone();

        let start = self.scoped_start.as_ref().filter(|_| !has_existing);
        let explicit_model = self
            .cli_model
            .clone()
            .or_else(|| start.map(|s| s.model.clone()));
        let explicit_level = self.cli_level.or_else(|| {
            self.cli_model
                .is_none()
                .then(|| start.and_then(|s| s.thinking_level))
                .flatten()
        });
        let (choice, tools, resources) = {
            let settings = crate::sync::lock(&self.settings);
            let registry = crate::sync::read(&self.registry);
            let levels = settings.all_model_thinking_levels();
            let choice = choose_session_model(
                &SessionModelInputs {
                    model: explicit_model,
                    thinking_level: explicit_level,
                    has_existing_session: has_existing,
                    session_model: session_model
                        .as_ref()
                        .map(|(p, id)| (p.as_str(), id.as_str())),
                    session_thinking_level: session_thinking,
                    default_provider: settings.default_provider(),
                    default_model_id: settings.default_model(),
                    default_thinking_level: settings.default_thinking_level(),
                    model_thinking_levels: &levels,
                },
                &*registry,
            );
            if let Some(msg) = &choice.fallback_message {
                warn(stderr, msg);
            }
            let slot: Arc<OnceLock<AgentSession>> = Arc::new(OnceLock::new());
            let tools = build_tools(
                &self.flags,
                &self.agent_dir,
                cwd,
                &settings,
                &choice.model,
                &slot,
            );
            let mut package_warnings = Vec::new();
            let packages = crate::packages::session_resources(
                &settings,
                cwd,
                &self.agent_dir,
                &mut package_warnings,
            );
            for w in &package_warnings {
                warn(stderr, w);
            }
            let resources = Resources::load(&ResourceOptions {
                cwd: cwd.to_path_buf(),
                agent_dir: self.agent_dir.clone(),
                home: self.home.clone(),
                project_trusted: self.trusted,
                settings_skill_paths: settings.scoped_resource_paths("skills"),
                settings_prompt_paths: settings.scoped_resource_paths("prompts"),
                cli_skill_paths: with_packages(
                    &resource_flags.skills,
                    &packages.skills,
                    resource_flags.no_skills,
                ),
                cli_prompt_paths: with_packages(
                    &resource_flags.prompt_templates,
                    &packages.prompts,
                    resource_flags.no_prompt_templates,
                ),
                no_skills: resource_flags.no_skills,
                no_prompt_templates: resource_flags.no_prompt_templates,
                no_context_files: resource_flags.no_context_files,
                system_prompt: resource_flags.system_prompt.clone(),
                append_system_prompt: resource_flags.append_system_prompt.clone(),
            });
            (choice, (tools, slot), resources)
        };
        let (
            BuiltTools {
                active: tools,
                available,
            },
            slot,
        ) = tools;
        for w in &resources.warnings {
            warn(stderr, w);
        }
        let docs = docs_dir();
        let package = docs.parent().unwrap_or(Path::new("/")).to_path_buf();
        let docs_paths = DocsPaths {
            readme: package.join("README.md"),
            docs: docs.clone(),
            examples: package.join("examples"),
        };
        let prompt_for_tools = prompt_for_tools(&resources, cwd, docs_paths);
        let system_prompt = prompt_for_tools(&tools);

        let hooks = self.extension_hooks(cwd);
        let mut builder = AgentSession::builder()
            .thinking_level(choice.thinking_level)
            .settings(Arc::clone(&self.settings))
            .store_with_context(store, context)
            .tools(tools)
            .system_prompt(system_prompt)
            .system_prompt_for_tools(prompt_for_tools)
            .compactor(compactor())
            .auth(Arc::new(RegistryAuth(Arc::clone(&self.registry))))
            .docs_dir(docs)
            .agent_dir(&self.agent_dir)
            .skills(resources.skills.skills.clone())
            .prompt_templates(resources.templates.clone());
        if let Some(m) = choice.model {
            builder = builder.model(m);
        }
        if let Some(h) = &hooks {
            h.set_available_tools(available);
            builder = builder.hooks(Arc::clone(h) as Arc<dyn crate::session::SessionHooks>);
        }
        let session = builder
            .build()
            .map_err(|e| SetupError::Error(e.to_string()))?;
        // pi passes `scopedModels` to the session: `cycle_model` cycles within the scope.
        session.set_scoped_models(self.scoped.clone());
        let _ = slot.set(session.clone());
        Ok(BuiltForStore {
            session,
            extensions: hooks,
            templates: resources.templates,
            skills: resources.skills.skills,
        })
    }
}

/// The base system prompt for the active tools, from the loaded resources (pi
/// `_rebuildSystemPrompt`): the session's first prompt, and its prompt after the active tools
/// change.
fn prompt_for_tools(
    resources: &Resources,
    cwd: &Path,
    docs: DocsPaths,
) -> crate::session::agent_session::SystemPromptFn {
    SystemPromptBase {
        custom_prompt: resources.prompts.system_prompt.clone(),
        append_system_prompt: resources.prompts.append_system_prompt.clone(),
        cwd: cwd.to_path_buf(),
        context_files: resources.context_files.clone(),
        skills: resources.skills.skills.clone(),
        docs,
    }
    .into_prompt_fn()
}

/// The scoped model a new session starts on (pi 0.85.0 `buildSessionOptions`): the saved
/// default (`defaultProvider`/`defaultModel`) when it is in the scope, else the first.
fn scoped_start<'a>(
    scoped: &'a [ScopedModel],
    settings: &SettingsManager,
) -> Option<&'a ScopedModel> {
    let saved = settings.default_provider().zip(settings.default_model());
    saved
        .and_then(|(p, id)| {
            scoped
                .iter()
                .find(|s| s.model.provider == p && s.model.id == id)
        })
        .or_else(|| scoped.first())
}

/// The built-in tools: the active ones in order, and all of them. Tools read the session's live state (model, thinking
/// level, file) through `slot`, filled once the session exists.
fn build_tools(
    flags: &LaunchConfig,
    agent_dir: &Path,
    cwd: &Path,
    settings: &SettingsManager,
    model: &Option<Model>,
    slot: &Arc<OnceLock<AgentSession>>,
) -> BuiltTools {
    let args = &flags.tools;
    let exclude = args.exclude_tools.clone().unwrap_or_default();
    let names = if args.no_builtin_tools && args.tools.is_none() {
        Vec::new()
    } else {
        initial_active_tool_names(
            args.tools.as_deref(),
            args.no_tools,
            settings.default_tools().as_deref(),
            &exclude,
        )
    };
    let fallback_images = model
        .as_ref()
        .is_some_and(|m| m.input.contains(&InputKind::Image));
    let images_slot = Arc::clone(slot);
    let env_slot = Arc::clone(slot);
    let options = BuiltinToolOptions {
        read: ReadToolOptions {
            auto_resize_images: settings.image_auto_resize(),
            model_supports_images: model.as_ref().map(|_| {
                Arc::new(move || match images_slot.get().and_then(|s| s.model()) {
                    Some(m) => m.input.contains(&InputKind::Image),
                    None => fallback_images,
                }) as crate::tools::read::ImageSupportFn
            }),
        },
        bash: BashToolOptions {
            command_prefix: settings.shell_command_prefix().map(str::to_owned),
            shell_path: settings.shell_path(),
            agent_dir: Some(agent_dir.to_path_buf()),
            session_env: Some(Arc::new(move || session_env(env_slot.get()))),
            temp_dir: None,
        },
    };
    let active = names
        .iter()
        .filter_map(|name| create_builtin_tool(name, cwd, &options))
        .collect();
    // pi's tool registry holds every built-in tool (the allowlist and denylist applied there),
    // so an extension's `setActiveTools(["grep", …])` can turn on one that did not start active.
    let available = if args.no_builtin_tools {
        Vec::new()
    } else {
        crate::tools::ALL_TOOL_NAMES
            .iter()
            .filter_map(|name| create_builtin_tool(name, cwd, &options))
            .collect()
    };
    BuiltTools { active, available }
}

/// The built-in tools of a session: the active ones, and every one an extension may activate.
struct BuiltTools {
    active: Vec<Arc<dyn AgentTool>>,
    available: Vec<Arc<dyn AgentTool>>,
}

/// The `PI_*` variables of the bash tool from the live session.
fn session_env(session: Option<&AgentSession>) -> SessionEnv {
    let Some(s) = session else {
        return SessionEnv::default();
    };
    let model = s.model();
    SessionEnv {
        session_id: s.session_id(),
        session_file: s.session_file().map(|p| p.display().to_string()),
        provider: model.as_ref().map(|m| m.provider.clone()),
        model: model.as_ref().map(|m| m.id.clone()),
        reasoning_level: Some(thinking_name(s.thinking_level()).to_owned()),
    }
}

fn thinking_name(level: ModelThinkingLevel) -> &'static str {
    level.as_str()
}

/// The `--skill` / `--prompt-template` paths, then the packages' files (unless the kind is
/// switched off: explicit paths still load then, package files do not, as in pi).
fn with_packages(cli: &[String], packages: &[std::path::PathBuf], off: bool) -> Vec<String> {
    let mut out = cli.to_vec();
    if !off {
        out.extend(packages.iter().map(|p| p.display().to_string()));
    }
    out
}

/// After trust: the project's extensions (trusted projects only, not with `-ne`), then the
/// unknown options that no loaded extension registered as a flag. Any failure ends the run
/// like pi's start-up errors: every line, then the `pi -ne` hint after load failures.
fn load_project_extensions(
    launch: &Launch,
    settings: &SettingsManager,
    trusted: bool,
    stderr: &mut dyn Write,
) -> Result<LoadedExtensions, SetupError> {
    let flags = &launch.config;
    let mut extensions = launch.extensions.clone();
    let mut load_errors = Vec::new();
    if !flags.no_extensions {
        let mut warnings = Vec::new();
        let mut sources = if trusted {
            project_sources(settings, &launch.cwd)
        } else {
            Vec::new()
        };
        sources.extend(post_trust_package_sources(
            &launch.cwd,
            &launch.agent_dir,
            trusted,
            false,
        ));
        load_errors = load(
            &sources,
            &mut extensions,
            &launch.cwd,
            &launch.agent_dir,
            flags.mode,
            &mut warnings,
        );
        for w in &warnings {
            warn(stderr, w);
        }
    }
    let mut lines: Vec<String> = apply_flags(&flags.unknown_flags, &mut extensions)
        .map(|m| format!("Error: {m}"))
        .into_iter()
        .collect();
    lines.extend(load_errors.iter().map(|e| format!("Error: {e}")));
    if lines.is_empty() {
        return Ok(extensions);
    }
    if !load_errors.is_empty() || !flags.extensions.is_empty() {
        lines.push(EXTENSION_LOAD_FAILURE_HINT.to_owned());
    }
    extensions.shutdown(SHUTDOWN_WAIT);
    Err(SetupError::Plain(lines.join("\n")))
}
