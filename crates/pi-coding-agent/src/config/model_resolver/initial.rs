//! The start-up model and thinking level.
//!
//! Mirrors pi-coding-agent 0.85.0 `findInitialModel`, `restoreModelFromSession`,
//! `defaultModelPerProvider` (`core/model-resolver.js`) and the model/thinking choice of
//! `createAgentSession` (`core/sdk.js`).

use pi_ai::{Model, ModelThinkingLevel};

use super::{ModelSource, ScopedModel, resolve_cli_model};

/// `medium`.
pub const DEFAULT_THINKING_LEVEL: ModelThinkingLevel = ModelThinkingLevel::Medium;

/// Default model id per provider, in the reference's priority order.
pub const DEFAULT_MODEL_PER_PROVIDER: &[(&str, &str)] = &[
    ("amazon-bedrock", "us.anthropic.claude-opus-4-6-v1"),
    ("ant-ling", "Ring-2.6-1T"),
    ("anthropic", "claude-opus-4-8"),
    ("openai", "gpt-5.5"),
    ("azure-openai-responses", "gpt-5.4"),
    ("openai-codex", "gpt-5.5"),
    ("radius", "auto"),
    ("nvidia", "nvidia/nemotron-3-super-120b-a12b"),
    ("deepseek", "deepseek-v4-pro"),
    ("google", "gemini-3.1-pro-preview"),
    ("google-vertex", "gemini-3.1-pro-preview"),
    ("github-copilot", "gpt-5.4"),
    ("openrouter", "moonshotai/kimi-k2.6"),
    ("vercel-ai-gateway", "zai/glm-5.1"),
    ("xai", "grok-4.6"),
    ("groq", "openai/gpt-oss-120b"),
    ("cerebras", "gpt-oss-120b"),
    ("zai", "glm-5.3"),
    ("zai-coding-cn", "glm-5.3"),
    ("mistral", "devstral-medium-latest"),
    ("minimax", "MiniMax-M2.7"),
    ("minimax-cn", "MiniMax-M2.7"),
    ("moonshotai", "kimi-k2.6"),
    ("moonshotai-cn", "kimi-k2.6"),
    ("huggingface", "moonshotai/Kimi-K2.6"),
    ("fireworks", "accounts/fireworks/models/kimi-k2p6"),
    ("together", "moonshotai/Kimi-K2.6"),
    ("baseten", "zai-org/GLM-5.2"),
    ("opencode", "kimi-k2.6"),
    ("opencode-go", "kimi-k2.6"),
    ("kimi-coding", "kimi-for-coding"),
    ("cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.6"),
    (
        "cloudflare-ai-gateway",
        "workers-ai/@cf/moonshotai/kimi-k2.6",
    ),
    ("qwen-token-plan", "qwen3.7-max"),
    ("qwen-token-plan-cn", "qwen3.7-max"),
    ("qwen-token-plan-individual", "qwen3.8-max"),
    ("xiaomi", "mimo-v2.5-pro"),
    ("xiaomi-token-plan-cn", "mimo-v2.5-pro"),
    ("xiaomi-token-plan-ams", "mimo-v2.5-pro"),
    ("xiaomi-token-plan-sgp", "mimo-v2.5-pro"),
];

/// The default model id of a provider.
pub(super) fn default_model_for(provider: &str) -> Option<&'static str> {
    DEFAULT_MODEL_PER_PROVIDER
        .iter()
        .find(|(p, _)| *p == provider)
        .map(|(_, id)| *id)
}

/// The first available model that is its provider's default (in provider priority order),
/// else the first available model.
///
/// Difference from pi: among the available models, those whose wire API is registered come
/// first (a model of an API nobody registered would fail every request with `No API provider
/// registered for api: …`). Only when none is callable does the choice fall back to all of
/// them, as pi chooses. Every built-in API is registered, so for built-in models this is pi's
/// choice.
fn first_default_or_any<'a>(available: &[&'a Model]) -> Option<&'a Model> {
    let callable: Vec<&Model> = available
        .iter()
        .copied()
        .filter(|m| pi_ai::providers::registry::get_api_provider(&m.api).is_some())
        .collect();
    let pool = if callable.is_empty() {
        available
    } else {
        &callable
    };
    DEFAULT_MODEL_PER_PROVIDER
        .iter()
        .find_map(|(p, id)| {
            pool.iter()
                .copied()
                .find(|m| m.provider == *p && m.id == *id)
        })
        .or_else(|| pool.first().copied())
}

/// Inputs of [`find_initial_model`].
#[derive(Clone, Debug, Default)]
pub struct InitialModelOptions<'a> {
    /// `--provider`.
    pub cli_provider: Option<&'a str>,
    /// `--model`.
    pub cli_model: Option<&'a str>,
    /// The resolved `--models` / `enabledModels` scope.
    pub scoped_models: &'a [ScopedModel],
    /// Continuing or resuming a session.
    pub is_continuing: bool,
    /// `defaultProvider`.
    pub default_provider: Option<&'a str>,
    /// `defaultModel`.
    pub default_model_id: Option<&'a str>,
    /// `defaultThinkingLevel`.
    pub default_thinking_level: Option<ModelThinkingLevel>,
    /// `modelThinkingLevels` as `("p/id", level)`.
    pub model_thinking_levels: &'a [(String, ModelThinkingLevel)],
}

/// The start-up choice.
#[derive(Clone, Debug, PartialEq)]
pub struct InitialModel {
    /// The model, if any is usable.
    pub model: Option<Model>,
    /// Its thinking level (before clamping).
    pub thinking_level: ModelThinkingLevel,
}

fn per_model(
    levels: &[(String, ModelThinkingLevel)],
    provider: &str,
    id: &str,
) -> Option<ModelThinkingLevel> {
    let key = format!("{provider}/{id}");
    levels.iter().find(|(k, _)| *k == key).map(|(_, l)| *l)
}

/// The `--provider`/`--model` pair names no model: the CLI resolution's text (e.g.
/// `Model "x" not found for provider "p"`), which the caller prints as `Error: …`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CliModelError(pub String);

/// `findInitialModel`: CLI model; else the first scoped model (not when continuing); else the
/// settings default when its provider has auth; else the first available provider default;
/// else the first available model; else none.
///
/// Errors: the CLI resolution error text (the caller prints `Error: …` and exits 1).
pub fn find_initial_model(
    opts: &InitialModelOptions<'_>,
    source: &dyn ModelSource,
) -> Result<InitialModel, CliModelError> {
    if let (Some(_), Some(_)) = (opts.cli_provider, opts.cli_model) {
        let r = resolve_cli_model(opts.cli_provider, opts.cli_model, None, source);
        if let Some(e) = r.error {
            return Err(CliModelError(e));
        }
        if let Some(model) = r.model {
            return Ok(InitialModel {
                model: Some(model),
                thinking_level: DEFAULT_THINKING_LEVEL,
            });
        }
    }
    if let Some(first) = opts.scoped_models.first()
        && !opts.is_continuing
    {
        let level = first
            .thinking_level
            .or_else(|| {
                per_model(
                    opts.model_thinking_levels,
                    &first.model.provider,
                    &first.model.id,
                )
            })
            .or(opts.default_thinking_level)
            .unwrap_or(DEFAULT_THINKING_LEVEL);
        return Ok(InitialModel {
            model: Some(first.model.clone()),
            thinking_level: level,
        });
    }
    if let (Some(p), Some(id)) = (opts.default_provider, opts.default_model_id)
        && let Some(found) = source.find_model(p, id)
        && source.provider_has_auth(&found.provider)
    {
        let level = per_model(opts.model_thinking_levels, p, id)
            .or(opts.default_thinking_level)
            .unwrap_or(DEFAULT_THINKING_LEVEL);
        return Ok(InitialModel {
            model: Some(found.clone()),
            thinking_level: level,
        });
    }
    let available = source.available_models();
    Ok(InitialModel {
        model: first_default_or_any(&available).cloned(),
        thinking_level: DEFAULT_THINKING_LEVEL,
    })
}

/// The result of [`restore_model_from_session`].
#[derive(Clone, Debug, PartialEq)]
pub struct RestoredModel {
    /// The model to use.
    pub model: Option<Model>,
    /// `Could not restore model p/id (<reason>). Using p2/id2.`
    pub fallback_message: Option<String>,
}

/// `restoreModelFromSession`: the saved model if it exists and has auth; else `current`, else
/// the first available default, with a fallback message whose reason is `model no longer
/// exists` or `no auth configured`.
pub fn restore_model_from_session(
    saved_provider: &str,
    saved_id: &str,
    current: Option<&Model>,
    source: &dyn ModelSource,
) -> RestoredModel {
    let restored = source.find_model(saved_provider, saved_id);
    if let Some(m) = restored
        && source.provider_has_auth(&m.provider)
    {
        return RestoredModel {
            model: Some(m.clone()),
            fallback_message: None,
        };
    }
    let reason = if restored.is_none() {
        "model no longer exists"
    } else {
        "no auth configured"
    };
    let available = source.available_models();
    let fallback = current.or_else(|| first_default_or_any(&available));
    match fallback {
        Some(m) => RestoredModel {
            model: Some(m.clone()),
            fallback_message: Some(format!(
                "Could not restore model {saved_provider}/{saved_id} ({reason}). Using {}/{}.",
                m.provider, m.id
            )),
        },
        None => RestoredModel {
            model: None,
            fallback_message: None,
        },
    }
}

/// What the session knows when [`choose_session_model`] runs.
#[derive(Clone, Debug, Default)]
pub struct SessionModelInputs<'a> {
    /// An explicit model (CLI / SDK option).
    pub model: Option<Model>,
    /// An explicit thinking level.
    pub thinking_level: Option<ModelThinkingLevel>,
    /// The session already has context messages.
    pub has_existing_session: bool,
    /// The session context's model `(provider, id)`.
    pub session_model: Option<(&'a str, &'a str)>,
    /// The branch's last `thinking_level_change`, when the branch has one.
    pub session_thinking_level: Option<ModelThinkingLevel>,
    /// `defaultProvider`.
    pub default_provider: Option<&'a str>,
    /// `defaultModel`.
    pub default_model_id: Option<&'a str>,
    /// `defaultThinkingLevel`.
    pub default_thinking_level: Option<ModelThinkingLevel>,
    /// `modelThinkingLevels`.
    pub model_thinking_levels: &'a [(String, ModelThinkingLevel)],
}

/// The session's model and (clamped) thinking level.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionModelChoice {
    /// The model (`None`: no model is usable).
    pub model: Option<Model>,
    /// Clamped to the model (`off` without a model).
    pub thinking_level: ModelThinkingLevel,
    /// `Could not restore model p/id[. Using p2/id2]`, or `None`. With no model at all the
    /// caller reports [`super::format_no_models_available`].
    pub fallback_message: Option<String>,
}

/// The model and thinking choice of pi's `createAgentSession`: explicit model;
/// else the session's model when it exists and has auth; else [`find_initial_model`]'s
/// settings/provider defaults. Thinking: explicit; existing session → the branch's level
/// (else default / `medium`); else per-model, default, `medium`; clamped.
pub fn choose_session_model(
    inputs: &SessionModelInputs<'_>,
    source: &dyn ModelSource,
) -> SessionModelChoice {
    let mut model = inputs.model.clone();
    let mut fallback_message = None;
    if model.is_none()
        && inputs.has_existing_session
        && let Some((p, id)) = inputs.session_model
    {
        match source.find_model(p, id) {
            Some(m) if source.provider_has_auth(&m.provider) => model = Some(m.clone()),
            _ => fallback_message = Some(format!("Could not restore model {p}/{id}")),
        }
    }
    if model.is_none() {
        let opts = InitialModelOptions {
            is_continuing: inputs.has_existing_session,
            default_provider: inputs.default_provider,
            default_model_id: inputs.default_model_id,
            default_thinking_level: inputs.default_thinking_level,
            model_thinking_levels: inputs.model_thinking_levels,
            ..Default::default()
        };
        model = find_initial_model(&opts, source).ok().and_then(|r| r.model);
        match (&model, &mut fallback_message) {
            (Some(m), Some(msg)) => msg.push_str(&format!(". Using {}/{}", m.provider, m.id)),
            (None, msg) => *msg = None,
            _ => {}
        }
    }
    let mut level = inputs.thinking_level;
    if level.is_none() && inputs.has_existing_session {
        level = Some(
            inputs
                .session_thinking_level
                .or(inputs.default_thinking_level)
                .unwrap_or(DEFAULT_THINKING_LEVEL),
        );
    }
    if level.is_none()
        && let Some(m) = &model
    {
        level = per_model(inputs.model_thinking_levels, &m.provider, &m.id);
    }
    let level = level
        .or(inputs.default_thinking_level)
        .unwrap_or(DEFAULT_THINKING_LEVEL);
    let thinking_level = match &model {
        Some(m) => m.clamp_thinking_level(level),
        None => ModelThinkingLevel::Off,
    };
    SessionModelChoice {
        model,
        thinking_level,
        fallback_message,
    }
}
