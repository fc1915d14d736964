//! `AgentSession::builder()`: the session's construction.
//!
//! Mirrors pi-coding-agent 0.85.0 `createAgentSession` (`core/sdk.ts`) and the `AgentSession`
//! constructor: the agent gets the model, clamped thinking level, tools, system
//! prompt and pi's request options (`convertToLlm`, the session id, queue modes, thinking
//! budgets, provider retry/timeout settings); an existing session's messages are restored;
//! a new session records `model_change` (when there is a model) then
//! `thinking_level_change`, an existing one only a missing `thinking_level_change`. The
//! session then subscribes its handler and installs its agent hooks.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pi_agent_core::{Agent, AgentOptions, AgentTool, StreamFn, agent::default_model};
use pi_ai::{AssistantMessage, AssistantMessageEventStream, Model, ModelThinkingLevel};
use tokio::sync::watch;

use super::agent_session::{AgentSession, Inner, SessionState, lock};
use super::hooks::{Compactor, NoCompaction, NoHooks, SessionHooks};
use super::prompt::{AnyProviderAuth, AuthSource, SessionError};
use crate::config::model_resolver::DEFAULT_THINKING_LEVEL;
use crate::config::settings::SettingsManager;
use crate::config::skills::Skill;
use crate::config::templates::PromptTemplate;
use crate::storage::context::context_path;
use crate::storage::{EntryKind, EntryType, SessionContext, SessionStore, build_session_context};

/// Builds an [`AgentSession`]. Everything is optional: the defaults are an in-memory store,
/// in-memory default settings, no tools, an empty system prompt, [`NoHooks`],
/// [`NoCompaction`], [`AnyProviderAuth`] and pi-ai's registry `stream_simple`.
#[derive(Default)]
pub struct AgentSessionBuilder {
    model: Option<Model>,
    thinking_level: Option<ModelThinkingLevel>,
    settings: Option<Arc<Mutex<SettingsManager>>>,
    tools: Vec<Arc<dyn AgentTool>>,
    store: Option<Arc<Mutex<SessionStore>>>,
    /// The store's context, when the caller built it already ([`Self::store_with_context`]).
    store_context: Option<SessionContext>,
    /// The explicit base prompt ([`Self::system_prompt`]); `None` = built by
    /// `prompt_for_tools` from the initial tools, else empty.
    system_prompt: Option<String>,
    prompt_for_tools: Option<super::agent_session::SystemPromptFn>,
    hooks: Option<Arc<dyn SessionHooks>>,
    compactor: Option<Arc<dyn Compactor>>,
    auth: Option<Arc<dyn AuthSource>>,
    stream_fn: Option<StreamFn>,
    docs_dir: PathBuf,
    agent_dir: Option<PathBuf>,
    skills: Vec<Skill>,
    templates: Vec<PromptTemplate>,
}

impl std::fmt::Debug for AgentSessionBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSessionBuilder")
            .field("model", &self.model.as_ref().map(|m| &m.id))
            .field("thinking_level", &self.thinking_level)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl AgentSession {
    /// A builder with the defaults.
    pub fn builder() -> AgentSessionBuilder {
        AgentSessionBuilder::default()
    }
}

/// pi-ai's registry `stream_simple` with the settings' provider options (timeouts, provider
/// retries); a setup failure (unknown api, no key) becomes an error-only stream.
pub fn default_stream_fn(settings: Arc<Mutex<SettingsManager>>) -> StreamFn {
    Arc::new(
        move |model: Model, context, mut options: pi_ai::StreamOptions| {
            if let Ok(s) = lock(&settings).stream_settings() {
                options.timeout_ms.get_or_insert(s.timeout_ms);
                options.idle_timeout_ms.get_or_insert(s.idle_timeout_ms);
                if options.max_retries.is_none() {
                    options.max_retries = s.max_retries;
                }
                options
                    .max_retry_delay_ms
                    .get_or_insert(s.max_retry_delay_ms);
            }
            match pi_ai::providers::registry::stream_simple(&model, &context, options) {
                Ok(stream) => stream,
                Err(e) => AssistantMessageEventStream::error_only(AssistantMessage::setup_error(
                    &model.api,
                    &model.provider,
                    &model.id,
                    e.to_string(),
                )),
            }
        },
    )
}

impl AgentSessionBuilder {
    /// The model (none: pi's `unknown` placeholder; prompts then fail with `No API key found
    /// for the selected model.`).
    pub fn model(mut self, model: Model) -> Self {
        self.model = Some(model);
        self
    }

    /// An explicit thinking level (clamped to the model).
    pub fn thinking_level(mut self, level: ModelThinkingLevel) -> Self {
        self.thinking_level = Some(level);
        self
    }

    /// Settings (shared with the caller).
    pub fn settings(mut self, settings: Arc<Mutex<SettingsManager>>) -> Self {
        self.settings = Some(settings);
        self
    }

    /// The active tools.
    pub fn tools(mut self, tools: Vec<Arc<dyn AgentTool>>) -> Self {
        self.tools = tools;
        self
    }

    /// The session store (shared with the caller).
    pub fn store(mut self, store: Arc<Mutex<SessionStore>>) -> Self {
        self.store = Some(store);
        self.store_context = None;
        self
    }

    /// The session store and the context of its current leaf, for a caller that has built it
    /// already (a resume reads the stored model and thinking level first): `build` then does
    /// not rebuild it. `context` must be [`build_session_context`] of the store as it is now.
    pub fn store_with_context(
        mut self,
        store: Arc<Mutex<SessionStore>>,
        context: SessionContext,
    ) -> Self {
        self.store = Some(store);
        self.store_context = Some(context);
        self
    }

    /// How the base system prompt is built from the active tools (pi `_rebuildSystemPrompt`):
    /// at `build` from the initial tools unless [`Self::system_prompt`] gave the prompt (pi's
    /// session builds it from its tools at construction), and again whenever the active
    /// tools change (see [`AgentSession::set_active_tools`]). Without it the prompt given to
    /// [`Self::system_prompt`] stays.
    pub fn system_prompt_for_tools(
        mut self,
        rebuild: super::agent_session::SystemPromptFn,
    ) -> Self {
        self.prompt_for_tools = Some(rebuild);
        self
    }

    /// The base system prompt (wins over [`Self::system_prompt_for_tools`] at `build`).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The extension seam.
    pub fn hooks(mut self, hooks: Arc<dyn SessionHooks>) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// The compaction seam.
    pub fn compactor(mut self, compactor: Arc<dyn Compactor>) -> Self {
        self.compactor = Some(compactor);
        self
    }

    /// The auth seam (prompt preflight and per-request keys).
    pub fn auth(mut self, auth: Arc<dyn AuthSource>) -> Self {
        self.auth = Some(auth);
        self
    }

    /// The stream function (default [`default_stream_fn`]).
    pub fn stream_fn(mut self, stream_fn: StreamFn) -> Self {
        self.stream_fn = Some(stream_fn);
        self
    }

    /// The documentation directory named by the login help texts.
    pub fn docs_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.docs_dir = dir.into();
        self
    }

    /// The agent dir (`<agent_dir>/bin` is prefixed to `PATH` for user bash).
    pub fn agent_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.agent_dir = Some(dir.into());
        self
    }

    /// Skills for `/skill:name` expansion.
    pub fn skills(mut self, skills: Vec<Skill>) -> Self {
        self.skills = skills;
        self
    }

    /// Prompt templates for `/name` expansion.
    pub fn prompt_templates(mut self, templates: Vec<PromptTemplate>) -> Self {
        self.templates = templates;
        self
    }

    /// Builds the session (see the module docs for the initial entries).
    ///
    /// # Errors
    /// The store cannot be read or written.
    pub fn build(self) -> Result<AgentSession, SessionError> {
        let settings = self.settings.unwrap_or_else(|| {
            Arc::new(Mutex::new(SettingsManager::in_memory(Default::default())))
        });
        let store = self
            .store
            .unwrap_or_else(|| Arc::new(Mutex::new(SessionStore::in_memory("."))));
        let stream_fn = self
            .stream_fn
            .unwrap_or_else(|| default_stream_fn(Arc::clone(&settings)));

        let (existing, has_thinking_entry, session_id) = {
            let s = lock(&store);
            let context = match self.store_context {
                Some(context) => context,
                None => build_session_context(&s)?,
            };
            let has_thinking = context_path(&s)
                .0
                .into_iter()
                .any(|i| *s.kind_at(i) == EntryType::ThinkingLevelChange);
            (context, has_thinking, s.session_id().to_owned())
        };
        let has_existing = !existing.messages.is_empty();

        let level = {
            let st = lock(&settings);
            let requested = self.thinking_level.or_else(|| {
                if has_existing {
                    Some(if has_thinking_entry {
                        ModelThinkingLevel::parse(&existing.thinking_level)
                            .unwrap_or(DEFAULT_THINKING_LEVEL)
                    } else {
                        st.default_thinking_level()
                            .unwrap_or(DEFAULT_THINKING_LEVEL)
                    })
                } else {
                    None
                }
            });
            let requested = requested
                .or_else(|| {
                    self.model
                        .as_ref()
                        .and_then(|m| st.model_thinking_level(&m.provider, &m.id))
                })
                .or_else(|| st.default_thinking_level())
                .unwrap_or(DEFAULT_THINKING_LEVEL);
            match &self.model {
                Some(m) => m.clamp_thinking_level(requested),
                None => ModelThinkingLevel::Off,
            }
        };

        let mut options = AgentOptions::new(stream_fn);
        options.convert_to_llm = super::convert::session_convert_to_llm(Arc::clone(&settings));
        options.session_id = Some(session_id);
        {
            let st = lock(&settings);
            options.steering_mode = st.steering_mode();
            options.follow_up_mode = st.follow_up_mode();
            options.thinking_budgets = st.thinking_budgets();
            options.max_retry_delay_ms = Some(st.provider_retry().max_retry_delay_ms);
        }
        let agent = Agent::new(options);
        agent.set_model(self.model.clone().unwrap_or_else(default_model));
        agent.set_thinking_level(level);
        let system_prompt = match (self.system_prompt, &self.prompt_for_tools) {
            (Some(prompt), _) => prompt,
            (None, Some(build_prompt)) => build_prompt(&self.tools),
            (None, None) => String::new(),
        };
        agent.set_tools(self.tools);
        agent.set_system_prompt(system_prompt.clone());

        {
            let mut s = lock(&store);
            if has_existing {
                agent.set_messages(existing.messages);
                if !has_thinking_entry {
                    s.append(EntryKind::ThinkingLevelChange {
                        thinking_level: level.as_str().to_owned(),
                    })?;
                }
            } else {
                if let Some(m) = &self.model {
                    s.append(EntryKind::ModelChange {
                        provider: m.provider.clone(),
                        model_id: m.id.clone(),
                    })?;
                }
                s.append(EntryKind::ThinkingLevelChange {
                    thinking_level: level.as_str().to_owned(),
                })?;
            }
        }

        let (idle, _) = watch::channel(0);
        let inner = Arc::new(Inner {
            agent: agent.clone(),
            store,
            settings,
            hooks: self.hooks.unwrap_or_else(|| Arc::new(NoHooks)),
            compactor: self.compactor.unwrap_or_else(|| Arc::new(NoCompaction)),
            auth: self.auth.unwrap_or_else(|| Arc::new(AnyProviderAuth)),
            docs_dir: self.docs_dir,
            agent_dir: self.agent_dir,
            skills: self.skills,
            templates: self.templates,
            prompt_for_tools: self.prompt_for_tools,
            state: Mutex::new(SessionState {
                base_system_prompt: system_prompt,
                has_model: self.model.is_some(),
                ..Default::default()
            }),
            listeners: Mutex::new((0, Vec::new())),
            idle,
            agent_subscription: Mutex::new(None),
            durability: super::durability::Durability::new(),
        });
        let session = AgentSession::from_inner(inner);
        agent.update_options(|o| session.install_agent_hooks(o));
        session.attach_to_agent();
        Ok(session)
    }
}
