//! `models.json`: custom providers and models, and overrides of built-in ones.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/model-config.js` (loading) and
//! `core/provider-composer.js` (`applyModelsJson`, `modelFromJson`, `applyModelOverride`,
//! `mergeCompat`):
//! - `{"providers": {"<id>": {name?, baseUrl?, apiKey?, api?, headers?, compat?, authHeader?,
//!   models?: [{id, name?, api?, baseUrl?, reasoning?, thinkingLevelMap?, input?, cost?,
//!   contextWindow?, maxTokens?, samplingParams?, headers?, compat?}], modelOverrides?: {"<id>":
//!   {…}}}}}`; `//` comments and trailing commas are allowed, a BOM is stripped;
//! - a provider overlay sets `baseUrl` and merges `compat` into every base model, then each
//!   `models` entry replaces the model of the same id or is appended (defaults: name = id,
//!   reasoning false, input `["text"]`, zero cost, contextWindow 128000, maxTokens 16384, api
//!   and baseUrl from the model, the provider, or a base model of the provider);
//! - `modelOverrides` apply last, field by field (`cost` per rate, maps merged);
//! - errors: `Failed to load models.json: …`, `Failed to parse models.json: …` (line, column),
//!   `Invalid models.json schema:\n  - <path>: <message>` (the reference's TypeBox texts, see
//!   `schema.rs`), each followed by `\n\nFile: <path>`; the whole file
//!   is then ignored. Structural errors of one provider (`Provider <p>: "baseUrl" is required
//!   when defining custom models.` …) drop only that provider's overlay.

use std::path::Path;

use pi_ai::{InputKind, Model, ModelCost};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::js_json::parse_json;
use super::text::{strip_bom, strip_json_comments};

mod schema;

pub use schema::validate_models_json;

/// One entry of `models`.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelDefinition {
    /// Model id (non-empty).
    pub id: String,
    /// Display name (default: the id).
    pub name: Option<String>,
    /// Wire API.
    pub api: Option<String>,
    /// Base URL.
    pub base_url: Option<String>,
    /// Reasoning model.
    pub reasoning: Option<bool>,
    /// Level → native value (`null` disables a level).
    pub thinking_level_map: Option<Map<String, Value>>,
    /// Input kinds.
    pub input: Option<Vec<InputKind>>,
    /// Prices.
    pub cost: Option<ModelCost>,
    /// Context window in tokens (> 0).
    pub context_window: Option<f64>,
    /// Output cap in tokens (> 0).
    pub max_tokens: Option<f64>,
    /// Extra sampling parameters.
    pub sampling_params: Option<Map<String, Value>>,
    /// Extra headers (configured values; resolved per request).
    pub headers: Option<Map<String, Value>>,
    /// Compatibility flags.
    pub compat: Option<Map<String, Value>>,
}

/// Partial cost of an override.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CostOverride {
    /// Input price.
    pub input: Option<f64>,
    /// Output price.
    pub output: Option<f64>,
    /// Cache-read price.
    pub cache_read: Option<f64>,
    /// Cache-write price.
    pub cache_write: Option<f64>,
    /// Tiers.
    pub tiers: Option<Vec<pi_ai::CostTier>>,
}

/// One entry of `modelOverrides`.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelOverride {
    /// Display name.
    pub name: Option<String>,
    /// Reasoning model.
    pub reasoning: Option<bool>,
    /// Merged into the model's map.
    pub thinking_level_map: Option<Map<String, Value>>,
    /// Input kinds.
    pub input: Option<Vec<InputKind>>,
    /// Prices, per rate.
    pub cost: Option<CostOverride>,
    /// Context window.
    pub context_window: Option<f64>,
    /// Output cap.
    pub max_tokens: Option<f64>,
    /// Merged into the model's sampling parameters.
    pub sampling_params: Option<Map<String, Value>>,
    /// Extra headers.
    pub headers: Option<Map<String, Value>>,
    /// Merged into the model's compat.
    pub compat: Option<Map<String, Value>>,
}

/// One provider of `providers`.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfig {
    /// Display name.
    pub name: Option<String>,
    /// Base URL for all its models.
    pub base_url: Option<String>,
    /// Configured key (literal, `$VAR`, `!command`).
    pub api_key: Option<String>,
    /// Default wire API of its models.
    pub api: Option<String>,
    /// `"radius"` (not supported by pi-rs beyond parsing).
    pub oauth: Option<String>,
    /// Extra headers (configured values).
    pub headers: Option<Map<String, Value>>,
    /// Compat merged into every model.
    pub compat: Option<Map<String, Value>>,
    /// Send `Authorization: Bearer <key>`.
    pub auth_header: Option<bool>,
    /// Custom models.
    pub models: Option<Vec<ModelDefinition>>,
    /// Per-model overrides.
    pub model_overrides: Option<Map<String, Value>>,
}

// `Debug` of the models.json records: `apiKey` and header values may be credentials, so
// only their presence (the key) or names (headers) are printed: values may be credentials.

fn header_names(h: &Option<Map<String, Value>>) -> Option<Vec<&String>> {
    h.as_ref().map(|h| h.keys().collect())
}

impl std::fmt::Debug for ModelDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelDefinition")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("api", &self.api)
            .field("base_url", &self.base_url)
            .field("reasoning", &self.reasoning)
            .field("thinking_level_map", &self.thinking_level_map)
            .field("input", &self.input)
            .field("cost", &self.cost)
            .field("context_window", &self.context_window)
            .field("max_tokens", &self.max_tokens)
            .field("sampling_params", &self.sampling_params)
            .field("headers", &header_names(&self.headers))
            .field("compat", &self.compat)
            .finish()
    }
}

impl std::fmt::Debug for ModelOverride {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelOverride")
            .field("name", &self.name)
            .field("reasoning", &self.reasoning)
            .field("thinking_level_map", &self.thinking_level_map)
            .field("input", &self.input)
            .field("cost", &self.cost)
            .field("context_window", &self.context_window)
            .field("max_tokens", &self.max_tokens)
            .field("sampling_params", &self.sampling_params)
            .field("headers", &header_names(&self.headers))
            .field("compat", &self.compat)
            .finish()
    }
}

impl std::fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("api", &self.api)
            .field("oauth", &self.oauth)
            .field("headers", &header_names(&self.headers))
            .field("compat", &self.compat)
            .field("auth_header", &self.auth_header)
            .field("models", &self.models)
            // Model ids only: an override may carry headers.
            .field(
                "model_overrides",
                &self
                    .model_overrides
                    .as_ref()
                    .map(|m| m.keys().collect::<Vec<_>>()),
            )
            .finish()
    }
}

#[derive(Deserialize)]
struct ModelsFile {
    providers: Map<String, Value>,
}

/// A loaded `models.json`: providers in file order, and the load error if any.
#[derive(Clone, Debug, Default)]
pub struct ModelsConfig {
    /// `(provider id, config)` in file order.
    pub providers: Vec<(String, ProviderConfig)>,
    /// The load error (the whole file is then ignored).
    pub error: Option<String>,
}

/// A provider entry of `models.json` that does not fit the schema; one line of the file's
/// `Invalid models.json schema:` list.
#[derive(Debug, thiserror::Error)]
enum ProviderSchemaError {
    /// The entry does not deserialize.
    #[error("providers.{id}: {source}")]
    Shape {
        id: String,
        source: serde_json::Error,
    },
    /// A model with an empty id.
    #[error("providers.{id}.models.{index}.id: must not be empty")]
    EmptyModelId { id: String, index: usize },
    /// A model override that does not deserialize.
    #[error("providers.{id}.modelOverrides.{key}: {source}")]
    Override {
        id: String,
        key: String,
        source: serde_json::Error,
    },
}

fn validate_provider(id: &str, value: Value) -> Result<ProviderConfig, ProviderSchemaError> {
    let config: ProviderConfig =
        serde_json::from_value(value).map_err(|source| ProviderSchemaError::Shape {
            id: id.to_owned(),
            source,
        })?;
    for (index, m) in config.models.iter().flatten().enumerate() {
        if m.id.is_empty() {
            return Err(ProviderSchemaError::EmptyModelId {
                id: id.to_owned(),
                index,
            });
        }
    }
    for (k, v) in config.model_overrides.iter().flatten() {
        serde_json::from_value::<ModelOverride>(v.clone()).map_err(|source| {
            ProviderSchemaError::Override {
                id: id.to_owned(),
                key: k.clone(),
                source,
            }
        })?;
    }
    Ok(config)
}

impl ModelsConfig {
    /// Parses file text; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Path) -> Self {
        let cleaned = strip_json_comments(strip_bom(text));
        let fail = |error: String| ModelsConfig {
            providers: Vec::new(),
            error: Some(format!("{error}\n\nFile: {}", path.display())),
        };
        let value: Value = match parse_json(&cleaned) {
            Ok(v) => v,
            Err(e) => return fail(format!("Failed to parse models.json: {e}")),
        };
        let schema_errors = schema::validate_models_json(&value);
        if !schema_errors.is_empty() {
            let lines: Vec<String> = schema_errors.iter().map(|e| format!("  - {e}")).collect();
            return fail(format!("Invalid models.json schema:\n{}", lines.join("\n")));
        }
        let file: ModelsFile = match serde_json::from_value(value) {
            Ok(f) => f,
            Err(e) => return fail(format!("Invalid models.json schema:\n  - {e}")),
        };
        let mut providers = Vec::new();
        let mut errors = Vec::new();
        for (id, v) in file.providers {
            match validate_provider(&id, v) {
                Ok(c) => providers.push((id, c)),
                Err(e) => errors.push(format!("  - {e}")),
            }
        }
        if !errors.is_empty() {
            return fail(format!(
                "Invalid models.json schema:\n{}",
                errors.join("\n")
            ));
        }
        ModelsConfig {
            providers,
            error: None,
        }
    }

    /// Loads `path`; a missing file is an empty configuration.
    pub fn load(path: &Path) -> Self {
        match crate::config::text::read_config_text(path) {
            Ok(text) => Self::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::default(),
            Err(e) => ModelsConfig {
                providers: Vec::new(),
                error: Some(format!(
                    "Failed to load models.json: {e}\n\nFile: {}",
                    path.display()
                )),
            },
        }
    }

    /// The configuration of one provider.
    pub fn provider(&self, id: &str) -> Option<&ProviderConfig> {
        self.providers.iter().find(|(p, _)| p == id).map(|(_, c)| c)
    }
}

/// `mergeCompat`: shallow merge, with the routing/kwargs objects merged one level deeper.
pub fn merge_compat(
    base: Option<&Map<String, Value>>,
    over: Option<&Map<String, Value>>,
) -> Option<Map<String, Value>> {
    let Some(over) = over else {
        return base.cloned();
    };
    let mut merged = base.cloned().unwrap_or_default();
    for (k, v) in over {
        merged.insert(k.clone(), v.clone());
    }
    for key in [
        "openRouterRouting",
        "vercelGatewayRouting",
        "chatTemplateKwargs",
        "chatTemplateArgs",
    ] {
        let b = base.and_then(|b| b.get(key)).and_then(Value::as_object);
        let o = over.get(key).and_then(Value::as_object);
        if b.is_some() || o.is_some() {
            let mut inner = b.cloned().unwrap_or_default();
            for (k, v) in o.into_iter().flatten() {
                inner.insert(k.clone(), v.clone());
            }
            merged.insert(key.to_owned(), Value::Object(inner));
        }
    }
    Some(merged)
}

fn merge_maps(
    base: Option<&Map<String, Value>>,
    over: Option<&Map<String, Value>>,
) -> Option<Map<String, Value>> {
    match over {
        None => base.cloned(),
        Some(o) => {
            let mut m = base.cloned().unwrap_or_default();
            m.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
            Some(m)
        }
    }
}

/// Why a provider's models could not be composed from its `models.json` entry: the
/// reference's structural messages (without the `Provider "<p>": ` prefix the registry adds).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderModelsError {
    /// `oauth` without `baseUrl`.
    #[error("Provider {provider}: \"baseUrl\" is required when \"oauth\" is set.")]
    OauthWithoutBaseUrl {
        /// The provider id.
        provider: String,
    },
    /// An entry that configures nothing.
    #[error(
        "Provider {provider}: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\"."
    )]
    NothingConfigured {
        /// The provider id.
        provider: String,
    },
    /// A custom model with no `api` at model or provider level (nor a base model's).
    #[error(
        "Provider {provider}, model {model}: no \"api\" specified. Set at provider or model level."
    )]
    NoApi {
        /// The provider id.
        provider: String,
        /// The model id.
        model: String,
    },
    /// A custom model with no `baseUrl` anywhere.
    #[error("Provider {provider}: \"baseUrl\" is required when defining custom models.")]
    NoBaseUrl {
        /// The provider id.
        provider: String,
    },
    /// `contextWindow` or `maxTokens` not positive.
    #[error("Provider {provider}, model {model}: invalid {field}")]
    InvalidLimit {
        /// The provider id.
        provider: String,
        /// The model id.
        model: String,
        /// `contextWindow` or `maxTokens`.
        field: &'static str,
    },
}

fn positive(
    v: Option<f64>,
    field: &'static str,
    provider: &str,
    id: &str,
) -> Result<Option<u64>, ProviderModelsError> {
    match v {
        None => Ok(None),
        Some(n) if n > 0.0 => Ok(Some(n as u64)),
        Some(_) => Err(ProviderModelsError::InvalidLimit {
            provider: provider.to_owned(),
            model: id.to_owned(),
            field,
        }),
    }
}

/// `modelFromJson`: a model from a definition, the provider config and a base model.
pub fn model_from_definition(
    provider: &str,
    def: &ModelDefinition,
    config: &ProviderConfig,
    defaults: Option<&Model>,
) -> Result<Model, ProviderModelsError> {
    let api = def
        .api
        .clone()
        .or_else(|| config.api.clone())
        .or_else(|| defaults.map(|d| d.api.clone()))
        .ok_or_else(|| ProviderModelsError::NoApi {
            provider: provider.to_owned(),
            model: def.id.clone(),
        })?;
    let base_url = def
        .base_url
        .clone()
        .or_else(|| config.base_url.clone())
        .or_else(|| defaults.map(|d| d.base_url.clone()))
        .ok_or_else(|| ProviderModelsError::NoBaseUrl {
            provider: provider.to_owned(),
        })?;
    let context_window = positive(def.context_window, "contextWindow", provider, &def.id)?;
    let max_tokens = positive(def.max_tokens, "maxTokens", provider, &def.id)?;
    Ok(Model {
        id: def.id.clone(),
        name: def.name.clone().unwrap_or_else(|| def.id.clone()),
        api,
        provider: provider.to_owned(),
        base_url,
        reasoning: def.reasoning.unwrap_or(false),
        input: def.input.clone().unwrap_or_else(|| vec![InputKind::Text]),
        cost: def.cost.clone().unwrap_or_default(),
        context_window: context_window.unwrap_or(128_000),
        max_tokens: max_tokens.unwrap_or(16_384),
        thinking_level_map: def.thinking_level_map.clone(),
        sampling_params: def.sampling_params.clone(),
        headers: None,
        compat: merge_compat(config.compat.as_ref(), def.compat.as_ref()),
    })
}

/// `applyModelOverride`.
pub fn apply_override(model: &Model, o: &ModelOverride) -> Model {
    let mut m = model.clone();
    if let Some(n) = &o.name {
        m.name = n.clone();
    }
    if let Some(r) = o.reasoning {
        m.reasoning = r;
    }
    if o.thinking_level_map.is_some() {
        m.thinking_level_map = merge_maps(
            model.thinking_level_map.as_ref(),
            o.thinking_level_map.as_ref(),
        );
    }
    if let Some(i) = &o.input {
        m.input = i.clone();
    }
    if let Some(c) = &o.cost {
        m.cost = ModelCost {
            input: c.input.unwrap_or(model.cost.input),
            output: c.output.unwrap_or(model.cost.output),
            cache_read: c.cache_read.unwrap_or(model.cost.cache_read),
            cache_write: c.cache_write.unwrap_or(model.cost.cache_write),
            tiers: c.tiers.clone().or_else(|| model.cost.tiers.clone()),
        };
    }
    if let Some(n) = o.context_window {
        m.context_window = n.max(0.0) as u64;
    }
    if let Some(n) = o.max_tokens {
        m.max_tokens = n.max(0.0) as u64;
    }
    if o.sampling_params.is_some() {
        m.sampling_params = merge_maps(model.sampling_params.as_ref(), o.sampling_params.as_ref());
    }
    m.compat = merge_compat(model.compat.as_ref(), o.compat.as_ref());
    m
}

fn find_defaults<'a>(models: &'a [Model], id: &str, api: Option<&str>) -> Option<&'a Model> {
    models
        .iter()
        .find(|m| m.id == id)
        .or_else(|| api.and_then(|a| models.iter().find(|m| m.api == a)))
        .or_else(|| {
            models
                .iter()
                .find(|m| m.api == pi_ai::api::OPENAI_COMPLETIONS)
        })
        .or_else(|| models.first())
}

/// `applyModelsJson` then the overrides: the provider's final model list.
///
/// # Errors
/// [`ProviderModelsError`].
pub fn compose_provider_models(
    provider: &str,
    base: &[Model],
    config: Option<&ProviderConfig>,
) -> Result<Vec<Model>, ProviderModelsError> {
    let Some(config) = config else {
        return Ok(base.to_vec());
    };
    if config.oauth.is_some() && config.base_url.is_none() {
        return Err(ProviderModelsError::OauthWithoutBaseUrl {
            provider: provider.to_owned(),
        });
    }
    let has_overrides = config
        .model_overrides
        .as_ref()
        .is_some_and(|m| !m.is_empty());
    if config.models.as_ref().is_none_or(Vec::is_empty)
        && config.base_url.is_none()
        && config.headers.is_none()
        && config.compat.is_none()
        && !has_overrides
        && config.api_key.is_none()
        && config.oauth.is_none()
        && config.auth_header.is_none()
    {
        return Err(ProviderModelsError::NothingConfigured {
            provider: provider.to_owned(),
        });
    }
    let mut models: Vec<Model> = base
        .iter()
        .map(|m| {
            let mut m = m.clone();
            if config.oauth.as_deref() != Some("radius")
                && let Some(url) = &config.base_url
            {
                m.base_url = url.clone();
            }
            m.compat = merge_compat(m.compat.as_ref(), config.compat.as_ref());
            m
        })
        .collect();
    for def in config.models.iter().flatten() {
        let api = def.api.as_deref().or(config.api.as_deref());
        let defaults = find_defaults(&models, &def.id, api).cloned();
        let model = model_from_definition(provider, def, config, defaults.as_ref())?;
        match models.iter().position(|m| m.id == def.id) {
            Some(i) => models[i] = model,
            None => models.push(model),
        }
    }
    if let Some(overrides) = &config.model_overrides {
        for m in &mut models {
            if let Some(v) = overrides.get(&m.id)
                && let Ok(o) = serde_json::from_value::<ModelOverride>(v.clone())
            {
                *m = apply_override(m, &o);
            }
        }
    }
    Ok(models)
}

/// The configured (unresolved) headers for requests to `model`: provider headers, then the
/// override's, then the model definition's (later wins).
pub fn configured_headers(
    config: Option<&ProviderConfig>,
    model_id: &str,
) -> Vec<(String, String)> {
    let mut out = provider_headers(config);
    merge_headers(&mut out, model_headers(config, model_id));
    out
}

/// The provider's own `headers` (unresolved). pi resolves them with the provider's key (a
/// failure is an auth failure of the provider).
pub fn provider_headers(config: Option<&ProviderConfig>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    merge_headers(
        &mut out,
        string_headers(config.and_then(|c| c.headers.as_ref())),
    );
    out
}

/// The model's configured headers (unresolved): its `modelOverrides` entry's, then its
/// definition's (later wins).
pub fn model_headers(config: Option<&ProviderConfig>, model_id: &str) -> Vec<(String, String)> {
    let Some(config) = config else {
        return Vec::new();
    };
    let override_headers = config
        .model_overrides
        .as_ref()
        .and_then(|o| o.get(model_id))
        .and_then(|v| v.get("headers"))
        .and_then(Value::as_object);
    let def_headers = config
        .models
        .iter()
        .flatten()
        .find(|d| d.id == model_id)
        .and_then(|d| d.headers.as_ref());
    let mut out = Vec::new();
    merge_headers(&mut out, string_headers(override_headers));
    merge_headers(&mut out, string_headers(def_headers));
    out
}

/// Sets each of `later` in `into`: a name already there is replaced (and moves to the end).
pub fn merge_headers(into: &mut Vec<(String, String)>, later: Vec<(String, String)>) {
    for (k, v) in later {
        into.retain(|(name, _)| *name != k);
        into.push((k, v));
    }
}

/// The string-valued entries of a `headers` object.
fn string_headers(map: Option<&Map<String, Value>>) -> Vec<(String, String)> {
    map.into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
        .collect()
}

#[cfg(test)]
mod tests;
