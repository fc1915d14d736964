//! The model registry: built-in catalog + `models.json`, and which providers have auth.
//!
//! Mirrors what pi-coding-agent 0.85.0 `ModelRuntime` / `ModelRegistry` expose to the CLI and
//! the session: `getModels` (every model), `getAvailable` (models whose provider has configured
//! auth), `getModel(provider, id)`, `hasConfiguredAuth(provider)` and per-request auth.
//!
//! Providers: the catalog's, in catalog order, then providers only `models.json` defines, in file
//! order. A provider has auth when any of these holds, and its key is taken in this order:
//! a run-time key (`--api-key`), a stored `auth.json` credential, the `models.json` `apiKey`
//! (a `!command` always counts; a template counts when its variables are set), the provider's
//! environment variable (pi-ai `getEnvApiKey`).

use std::path::Path;

use pi_ai::Model;

use pi_ai::auth::oauth;

use super::agent_paths::AgentPaths;
use super::auth::AuthStorage;
use super::models_json::{
    ModelsConfig, ProviderModelsError, compose_provider_models, merge_headers, model_headers,
    provider_headers,
};
use super::resolve_value::{
    ResolveError, is_command_config_value, is_config_value_configured, lookup_env,
    resolve_config_value_or_throw, resolve_headers_or_throw,
};

/// Why a request cannot be authenticated; the text is the error the request ends with
/// before anything is sent.
///
/// Layers: [`ResolveError`] (one configured value) is wrapped as it is for a `models.json` key
/// or model header, and as [`RequestAuthError::ProviderAuth`] where pi-ai words it as the
/// provider's auth failure; a due OAuth refresh that fails is
/// [`super::oauth::OAuthRefreshError`].
#[derive(Debug, thiserror::Error)]
pub enum RequestAuthError {
    /// A configured key or model header does not resolve.
    #[error("{0}")]
    Resolve(#[from] ResolveError),
    /// The provider's key or headers do not resolve.
    #[error("API key auth failed for provider {provider}: {cause}")]
    ProviderAuth {
        /// The provider id.
        provider: String,
        /// The value that did not resolve.
        cause: ResolveError,
    },
    /// The provider sets `authHeader` and there is no key.
    #[error("No API key found for \"{provider}\"")]
    NoKey {
        /// The provider id.
        provider: String,
    },
    /// The provider's OAuth credential was due and did not refresh.
    #[error("{0}")]
    Refresh(#[from] super::oauth::OAuthRefreshError),
    /// The failure of an embedder's own `AuthSource` (its text as it is).
    #[error("{0}")]
    Source(Box<dyn std::error::Error + Send + Sync>),
}

/// Key and headers for one request. `Debug` prints neither the key nor header values.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RequestAuth {
    /// The API key, when the provider has one.
    pub api_key: Option<String>,
    /// Resolved configured headers (plus `Authorization` when `authHeader` is set, or for an
    /// `ANTHROPIC_AUTH_TOKEN`); `None` removes a header the provider would send.
    pub headers: Vec<(String, Option<String>)>,
}

impl std::fmt::Debug for RequestAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestAuth")
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// One model of the registry: a built-in one by reference, or one a `models.json` entry
/// composed. Two words wide, so the ~900 built-ins cost 16 bytes each here (a
/// `Cow<'static, Model>` is as wide as a `Model`: about 0.5 MiB of the heap of every run).
#[derive(Clone, Debug)]
enum ModelEntry {
    Builtin(&'static Model),
    Custom(Box<Model>),
}

impl std::ops::Deref for ModelEntry {
    type Target = Model;

    fn deref(&self) -> &Model {
        match self {
            ModelEntry::Builtin(m) => m,
            ModelEntry::Custom(m) => m,
        }
    }
}

/// All models and their auth state.
#[derive(Debug)]
pub struct ModelRegistry {
    /// Built-in models a `models.json` provider entry doesn't change are borrowed from the
    /// catalog: a copy of the ~900-model catalog costs ~2 MiB of resident memory at start.
    models: Vec<ModelEntry>,
    config: ModelsConfig,
    auth: AuthStorage,
    composition_errors: Vec<(String, ProviderModelsError)>,
    env: fn(&str) -> Option<String>,
    env_token: fn(&str) -> Option<String>,
}

fn process_env_key(provider: &str) -> Option<String> {
    pi_ai::models::get_env_api_key(provider)
}

/// pi-ai 0.85.1 `anthropicApiKeyAuth`: the built-in `anthropic` provider's bearer token
/// from `ANTHROPIC_AUTH_TOKEN` (non-empty).
fn process_env_token(provider: &str) -> Option<String> {
    if provider != "anthropic" {
        return None;
    }
    std::env::var("ANTHROPIC_AUTH_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
}

fn no_env_token(_provider: &str) -> Option<String> {
    None
}

/// The variables a provider's endpoint needs besides its key (see
/// [`ModelRegistry::request_base_url`]).
fn endpoint_vars(provider: &str) -> &'static [&'static str] {
    match provider {
        "cloudflare-workers-ai" => &["CLOUDFLARE_ACCOUNT_ID"],
        "cloudflare-ai-gateway" => &["CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"],
        _ => &[],
    }
}

impl ModelRegistry {
    /// Loads `models.json` and `auth.json` of an agent directory.
    pub fn load(paths: &AgentPaths) -> Self {
        let config = ModelsConfig::load(&paths.models());
        let auth = AuthStorage::open(&paths.auth());
        Self::new(config, auth)
    }

    /// Loads `models.json` from `path` with the given credentials.
    pub fn with_models_file(path: &Path, auth: AuthStorage) -> Self {
        Self::new(ModelsConfig::load(path), auth)
    }

    /// Builds the registry from a configuration and credentials.
    pub fn new(config: ModelsConfig, auth: AuthStorage) -> Self {
        let mut registry = ModelRegistry {
            models: Vec::new(),
            config,
            auth,
            composition_errors: Vec::new(),
            env: process_env_key,
            env_token: process_env_token,
        };
        registry.rebuild();
        registry
    }

    /// Replaces how provider environment keys are looked up (tests: an empty environment);
    /// the bearer-token lookup ([`Self::with_env_token_lookup`]) is then empty too.
    pub fn with_env_key_lookup(mut self, lookup: fn(&str) -> Option<String>) -> Self {
        self.env = lookup;
        self.env_token = no_env_token;
        self
    }

    /// Replaces how a provider's environment bearer token is looked up (default: the built-in
    /// `anthropic` provider's `ANTHROPIC_AUTH_TOKEN`).
    pub fn with_env_token_lookup(mut self, lookup: fn(&str) -> Option<String>) -> Self {
        self.env_token = lookup;
        self
    }

    /// The environment bearer token `provider` authenticates with: only when it has no key of
    /// its own (run-time, stored, `models.json`), as pi-ai's `anthropicApiKeyAuth` prefers
    /// `ANTHROPIC_AUTH_TOKEN` over `ANTHROPIC_OAUTH_TOKEN` and `ANTHROPIC_API_KEY`.
    fn env_bearer_token(&self, provider: &str) -> Option<String> {
        if self.auth.runtime_api_key(provider).is_some()
            || self.auth.has_stored(provider)
            || self
                .config
                .provider(provider)
                .is_some_and(|c| c.api_key.is_some())
        {
            return None;
        }
        (self.env_token)(provider)
    }

    /// pi-ai's Copilot `filterModels`: an OAuth entry's `availableModelIds` (an array of
    /// strings) keeps only those models of `github-copilot`.
    fn copilot_filter(&self) -> Option<std::collections::HashSet<String>> {
        let entry = self.auth.oauth_entry("github-copilot")?;
        let ids = oauth::available_model_ids(entry)?;
        Some(ids.into_iter().map(str::to_owned).collect())
    }

    /// Whether `provider`'s stored OAuth entry must be refreshed before a request (within
    /// 5 minutes of `expires`), which [`super::oauth::refresh_stored`] does.
    pub fn oauth_refresh_due(&self, provider: &str) -> bool {
        self.auth.runtime_api_key(provider).is_none()
            && oauth::is_oauth_provider(provider)
            && self
                .auth
                .oauth_entry(provider)
                .is_some_and(|e| oauth::expires_soon(e, None))
    }

    /// Takes a refreshed entry into memory (the models of a Copilot entry may change).
    pub fn apply_refreshed(
        &mut self,
        provider: &str,
        entry: serde_json::Map<String, serde_json::Value>,
    ) {
        self.auth.replace_in_memory(provider, entry);
        if provider == "github-copilot" {
            self.rebuild();
        }
    }

    fn rebuild(&mut self) {
        self.models.clear();
        self.composition_errors.clear();
        let mut provider_ids: Vec<String> = pi_ai::models::builtin_providers()
            .into_iter()
            .map(str::to_owned)
            .collect();
        for (id, _) in &self.config.providers {
            if !provider_ids.contains(id) {
                provider_ids.push(id.clone());
            }
        }
        for id in provider_ids {
            let builtin = pi_ai::models::builtin_models_for(&id);
            let Some(config) = self.config.provider(&id) else {
                // No `models.json` entry: the composition is the built-in list unchanged.
                self.models
                    .extend(builtin.into_iter().map(ModelEntry::Builtin));
                continue;
            };
            let base: Vec<Model> = builtin.iter().map(|m| (*m).clone()).collect();
            match compose_provider_models(&id, &base, Some(config)) {
                Ok(models) => self
                    .models
                    .extend(models.into_iter().map(|m| ModelEntry::Custom(Box::new(m)))),
                Err(e) => {
                    self.composition_errors.push((id.clone(), e));
                    self.models
                        .extend(builtin.into_iter().map(ModelEntry::Builtin));
                }
            }
        }
        if let Some(keep) = self.copilot_filter() {
            self.models
                .retain(|m| m.provider != "github-copilot" || keep.contains(&m.id));
        }
    }

    /// Every model (pi's `getModels` / `getAll`), in registry order.
    pub fn all(&self) -> Vec<&Model> {
        self.models.iter().map(|m| &**m).collect()
    }

    /// Models whose provider has auth (pi's `getAvailable`).
    pub fn available(&self) -> Vec<&Model> {
        self.models
            .iter()
            .map(|m| &**m)
            .filter(|m| self.has_configured_auth(&m.provider))
            .collect()
    }

    /// The model `provider/id` (exact).
    pub fn find(&self, provider: &str, id: &str) -> Option<&Model> {
        self.models
            .iter()
            .map(|m| &**m)
            .find(|m| m.provider == provider && m.id == id)
    }

    /// Whether a provider has auth (see the module docs for the sources).
    pub fn has_configured_auth(&self, provider: &str) -> bool {
        if !self.endpoint_vars_set(provider) {
            return false;
        }
        if self.auth.runtime_api_key(provider).is_some() {
            return true;
        }
        if self.auth.has_stored(provider) {
            return true;
        }
        if let Some(key) = self
            .config
            .provider(provider)
            .and_then(|c| c.api_key.as_deref())
        {
            return is_command_config_value(key) || is_config_value_configured(key, None);
        }
        (self.env)(provider).is_some() || (self.env_token)(provider).is_some()
    }

    /// pi 0.85.0's failure when a key lookup for `provider` reaches a credential store whose
    /// `auth.json` is not JSON: `Credential store read failed for <provider>: <JSON.parse
    /// message>`. pi reads the store before `models.json` and the environment, so this fails
    /// even when those hold a key; a run-time key (`--api-key`) is used without reading the
    /// store (`None`), as is a provider no model belongs to (pi's `unknown` placeholder).
    pub fn credential_store_error(&self, provider: &str) -> Option<String> {
        let message = self.auth.syntax_error()?;
        if self.auth.runtime_api_key(provider).is_some()
            || !self.models.iter().any(|m| m.provider == provider)
        {
            return None;
        }
        Some(format!(
            "Credential store read failed for {provider}: {message}"
        ))
    }

    /// The provider's API key (run-time, stored, `models.json`, environment).
    ///
    /// Errors: the resolver's text for a `models.json` key that fails, e.g.
    /// `Failed to resolve API key for provider "p" from environment variable: X`.
    pub fn api_key(&self, provider: &str) -> Result<Option<String>, ResolveError> {
        if let Some(k) = self.auth.runtime_api_key(provider) {
            return Ok(Some(k.to_owned()));
        }
        if self.auth.has_stored(provider) {
            if let Some(entry) = self.auth.oauth_entry(provider)
                && oauth::is_oauth_provider(provider)
            {
                return Ok(oauth::to_auth(provider, entry).api_key);
            }
            return Ok(self.auth.stored_api_key(provider));
        }
        if let Some(raw) = self
            .config
            .provider(provider)
            .and_then(|c| c.api_key.as_deref())
        {
            let description = format!("API key for provider \"{provider}\"");
            return resolve_config_value_or_throw(raw, &description, None).map(Some);
        }
        if (self.env_token)(provider).is_some() {
            return Ok(None); // the bearer token of `request_headers` authenticates
        }
        Ok((self.env)(provider))
    }

    /// Key and headers for a request to `model`: configured headers resolved (uncached), and
    /// `Authorization: Bearer <key>` when the provider sets `authHeader`.
    ///
    /// Errors: `No API key found for "<p>"` when `authHeader` needs a key there is none of;
    /// the resolver's texts for keys and headers.
    pub fn request_auth(&self, model: &Model) -> Result<RequestAuth, RequestAuthError> {
        let api_key = self.api_key(&model.provider)?;
        let headers = self.request_headers(model, api_key.as_deref())?;
        Ok(RequestAuth { api_key, headers })
    }

    /// Whether the variables `provider`'s endpoint needs besides its key are set, in its
    /// stored credential's `env` or the environment (pi-ai 0.85.1 `cloudflareWorkersAIAuth`:
    /// `CLOUDFLARE_ACCOUNT_ID`; `cloudflareAIGatewayAuth`: also `CLOUDFLARE_GATEWAY_ID`).
    /// Without them the provider has no usable auth, whatever its key.
    fn endpoint_vars_set(&self, provider: &str) -> bool {
        let vars = endpoint_vars(provider);
        if vars.is_empty() {
            return true;
        }
        let env = self.auth.stored_env(provider);
        vars.iter().all(|v| lookup_env(v, env.as_ref()).is_some())
    }

    /// The base URL of a request to `model` when it differs from the model's: the one an
    /// OAuth credential derives (Copilot), or the `{CLOUDFLARE_ACCOUNT_ID}` / `{CLOUDFLARE_GATEWAY_ID}` placeholders of the Cloudflare
    /// providers' URLs filled in from the stored credential's `env` or the environment (pi-ai
    /// 0.85.1 `resolveCloudflareModel`; a placeholder without a value stays).
    pub fn request_base_url(&self, model: &Model) -> Option<String> {
        // pi's `toAuth` base URL (Copilot: the token's `proxy-ep`, or the enterprise domain),
        // which replaces even a `models.json` one.
        if let Some(entry) = self.auth.oauth_entry(&model.provider)
            && oauth::is_oauth_provider(&model.provider)
            && self.auth.runtime_api_key(&model.provider).is_none()
            && let Some(url) = oauth::to_auth(&model.provider, entry).base_url
        {
            return (url != model.base_url).then_some(url);
        }
        if endpoint_vars(&model.provider).is_empty() || !model.base_url.contains("{CLOUDFLARE_") {
            return None;
        }
        let env = self.auth.stored_env(&model.provider);
        let mut url = model.base_url.clone();
        for name in ["CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"] {
            if let Some(value) = lookup_env(name, env.as_ref()) {
                url = url.replace(&format!("{{{name}}}"), &value);
            }
        }
        (url != model.base_url).then_some(url)
    }

    /// The auth and `models.json` headers of a request to `model` that will carry `api_key`,
    /// resolved now (uncached), as pi 0.85.0 composes them:
    /// 0. without a key, an environment bearer token (`ANTHROPIC_AUTH_TOKEN`):
    ///    `Authorization: Bearer <token>`, and no `x-api-key` (`None`: pi sends the token
    ///    alone, pi-ai's fallback to `ANTHROPIC_API_KEY` must not add one);
    /// 1. the provider's `headers` (description `provider "<p>"`; a failure is the provider's
    ///    auth failure: `API key auth failed for provider <p>: <cause>`), then
    ///    `Authorization: Bearer <api_key>` when the provider sets `authHeader`;
    /// 2. the model's (`modelOverrides` entry, then definition; description
    ///    `model "<p>/<id>"`, its errors as they are), which win over the provider's.
    ///
    /// Errors: those above; `No API key found for "<p>"` when `authHeader` needs a key and
    /// there is none.
    pub fn request_headers(
        &self,
        model: &Model,
        api_key: Option<&str>,
    ) -> Result<Vec<(String, Option<String>)>, RequestAuthError> {
        let provider = &model.provider;
        let config = self.config.provider(provider);
        let env = self.auth.stored_env(provider);
        let mut auth: Vec<(String, Option<String>)> = Vec::new();
        if api_key.is_none()
            && let Some(token) = self.env_bearer_token(provider)
        {
            auth.push(("Authorization".to_owned(), Some(format!("Bearer {token}"))));
            auth.push(("x-api-key".to_owned(), None));
        }
        // pi's `toAuth` headers (Kimi: `Authorization: Bearer <access>` and no key).
        if api_key.is_none()
            && let Some(entry) = self.auth.oauth_entry(provider)
            && oauth::is_oauth_provider(provider)
        {
            let derived = oauth::to_auth(provider, entry);
            if !derived.headers.is_empty() {
                auth.extend(derived.headers.into_iter().map(|(k, v)| (k, Some(v))));
                auth.push(("x-api-key".to_owned(), None));
            }
        }
        let mut headers = resolve_headers_or_throw(
            &provider_headers(config),
            &format!("provider \"{provider}\""),
            env.as_ref(),
        )
        .map_err(|cause| RequestAuthError::ProviderAuth {
            provider: provider.clone(),
            cause,
        })?
        .unwrap_or_default();
        if config.and_then(|c| c.auth_header).unwrap_or(false) {
            let Some(key) = api_key else {
                return Err(RequestAuthError::NoKey {
                    provider: provider.clone(),
                });
            };
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
            headers.push(("Authorization".to_owned(), format!("Bearer {key}")));
        }
        let description = format!("model \"{provider}/{}\"", model.id);
        let own = resolve_headers_or_throw(
            &model_headers(config, &model.id),
            &description,
            env.as_ref(),
        )?;
        merge_headers(&mut headers, own.unwrap_or_default());
        auth.retain(|(k, _)| !headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(k)));
        auth.extend(headers.into_iter().map(|(k, v)| (k, Some(v))));
        Ok(auth)
    }

    /// The load and composition errors, joined by blank lines (pi's `getError`), e.g.
    /// `Provider "x": Provider x: "baseUrl" is required when defining custom models.`
    pub fn error(&self) -> Option<String> {
        let mut errors: Vec<String> = Vec::new();
        if let Some(e) = &self.config.error {
            errors.push(e.clone());
        }
        for (p, e) in &self.composition_errors {
            errors.push(format!("Provider \"{p}\": {e}"));
        }
        (!errors.is_empty()).then(|| errors.join("\n\n"))
    }

    /// The credentials.
    pub fn auth(&self) -> &AuthStorage {
        &self.auth
    }

    /// The credentials, mutably (`--api-key`, `/login`).
    pub fn auth_mut(&mut self) -> &mut AuthStorage {
        &mut self.auth
    }

    /// The `models.json` configuration.
    pub fn config(&self) -> &ModelsConfig {
        &self.config
    }
}

/// Refreshes `provider`'s OAuth credential (in the file at `path`, or in memory when the
/// credentials have no file) and takes the result into `registry`.
///
/// Errors: [`super::oauth::OAuthRefreshError`] (in memory too:
/// `OAuth refresh failed for <p>: <cause>`).
pub async fn refresh_oauth(
    registry: &std::sync::RwLock<ModelRegistry>,
    provider: &str,
    path: Option<std::path::PathBuf>,
    entry: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<(), super::oauth::OAuthRefreshError> {
    let refreshed = match path {
        Some(path) => {
            super::oauth::refresh_stored(&path, provider, None, oauth::REFRESH_TIMEOUT).await?
        }
        None => {
            let Some(entry) = entry else { return Ok(()) };
            let next = oauth::refresh(provider, &entry, oauth::REFRESH_TIMEOUT)
                .await
                .map_err(|e| super::oauth::OAuthRefreshError::Refresh {
                    provider: provider.to_owned(),
                    cause: e.to_string(),
                })?;
            super::oauth::Refreshed::Entry(next)
        }
    };
    if let super::oauth::Refreshed::Entry(entry) = refreshed {
        let mut r = registry.write().unwrap_or_else(|e| e.into_inner());
        r.apply_refreshed(provider, entry);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
