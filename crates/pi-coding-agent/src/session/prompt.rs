//! Prompt options, the session's errors and user-facing texts, and the auth seam.
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSession.prompt` preflight and
//! `core/auth-guidance.js`. Every text a user sees is pi's, verbatim.

use std::path::Path;
use std::sync::{Arc, RwLock};

use pi_agent_core::{AgentError, HookError};
use pi_ai::ImageContent;

use super::hooks::{InputSource, StreamingBehavior};
use crate::config::model_resolver::{format_no_api_key_found, format_no_model_selected};
use crate::config::registry::{ModelRegistry, RequestAuthError};
use crate::storage::StoreError;

/// `prompt()` while a manual compaction runs (step 2).
pub const COMPACTION_IN_PROGRESS: &str = "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry.";

/// `prompt()` while streaming without `streamingBehavior` (step 5).
pub const ALREADY_PROCESSING: &str = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.";

/// `Extension command "/<name>" cannot be queued. Use prompt() or execute the command when not
/// streaming.`
pub fn command_cannot_be_queued(name: &str) -> String {
    format!(
        "Extension command \"/{name}\" cannot be queued. Use prompt() or execute the command when not streaming."
    )
}

/// `Authentication failed for "<p>". Credentials may have expired or network is unavailable.
/// Run '/login <p>' to re-authenticate.` (OAuth providers without usable credentials).
pub fn oauth_failed(provider: &str) -> String {
    format!(
        "Authentication failed for \"{provider}\". Credentials may have expired or network is unavailable. Run '/login {provider}' to re-authenticate."
    )
}

/// The no-key text of step 7: `No API key found for <provider>.` (or `for the selected
/// model.` when no model was resolved — pi's placeholder provider `unknown`) plus the login
/// help naming `docs_dir`'s `providers.md` and `models.md`.
pub fn no_api_key(provider: &str, docs_dir: &Path) -> String {
    format_no_api_key_found(Some(provider), docs_dir)
}

/// `No model selected.\n\n<help>\n\nThen use /model to select a model.`
pub fn no_model_selected(docs_dir: &Path) -> String {
    format_no_model_selected(docs_dir)
}

/// Options of [`super::AgentSession::prompt`].
#[derive(Default)]
pub struct PromptOptions {
    /// Run extension commands and expand skills/templates (default `true`; `Some(false)` to
    /// send the text verbatim).
    pub expand_prompt_templates: Option<bool>,
    /// Images after the text.
    pub images: Vec<ImageContent>,
    /// How to queue the prompt while the session streams (none → error).
    pub streaming_behavior: Option<StreamingBehavior>,
    /// Origin reported to `input` handlers.
    pub source: InputSource,
    /// Called once with the preflight outcome (`true`: accepted, queued or handled; `false`:
    /// refused), before the run starts (RPC answers `prompt` from it).
    pub preflight_result: Option<Box<dyn FnOnce(bool) + Send>>,
}

impl std::fmt::Debug for PromptOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptOptions")
            .field("expand_prompt_templates", &self.expand_prompt_templates)
            .field("images", &self.images.len())
            .field("streaming_behavior", &self.streaming_behavior)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// Errors of the session's entry points. `Display` is pi's message.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A refused prompt or queue operation with pi's text (no model, no key, busy, …).
    #[error("{0}")]
    Refused(String),
    /// The agent refused or failed (e.g. a listener failed while the failure was delivered).
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// A session listener failed outside a run (pi: the throw reaches the caller).
    #[error("{0}")]
    Listener(HookError),
    /// The session file could not be written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The auth seam of prompt step 7 and of each request's API key.
pub trait AuthSource: Send + Sync {
    /// Whether `provider` has configured auth (key, stored credential, environment).
    fn has_auth(&self, provider: &str) -> bool;

    /// Whether `provider` authenticates with OAuth (its failure text differs).
    fn is_oauth(&self, _provider: &str) -> bool {
        false
    }

    /// The API key for a request to `provider`, if any.
    fn api_key(&self, _provider: &str) -> Option<String> {
        None
    }

    /// The API key for a request to `provider`, or the failure text the request ends with when
    /// a configured key cannot be resolved (mirrors pi-ai 0.85.1 `auth/resolve.ts`:
    /// `API key auth failed for provider <p>: <cause>`). Defaults to [`AuthSource::api_key`].
    fn resolve_api_key(&self, provider: &str) -> Result<Option<String>, RequestAuthError> {
        Ok(self.api_key(provider))
    }

    /// Extra headers of a request to `model` that will carry `api_key` (an environment bearer
    /// token, `models.json` provider and model `headers`, `authHeader`; `None` removes a
    /// header), or the failure text the request ends with. They come before the request's own
    /// headers, which win (pi: `mergeHeaders(auth headers, options.headers)`). Default: none.
    fn request_headers(
        &self,
        _model: &pi_ai::Model,
        _api_key: Option<&str>,
    ) -> Result<Vec<(String, Option<String>)>, RequestAuthError> {
        Ok(Vec::new())
    }

    /// The base URL of a request to `model` when it is not the model's own (the Cloudflare
    /// providers' account and gateway placeholders filled in). Default: none.
    fn request_base_url(&self, _model: &pi_ai::Model) -> Option<String> {
        None
    }

    /// Work to finish before a request to `model` is set up: refreshing the provider's OAuth
    /// credential when it expires within 5 minutes (pi-ai 0.85.1 `resolveStoredOAuth`). The
    /// error is the text the request ends with. Default: none.
    fn prepare_request(
        &self,
        _model: &pi_ai::Model,
    ) -> Option<futures::future::BoxFuture<'static, Result<(), RequestAuthError>>> {
        None
    }

    /// A failure reading `provider`'s credentials that refuses the prompt before the key
    /// check, with pi's text (e.g. `Credential store read failed for <p>: <message>` for a
    /// broken `auth.json`). Default: none.
    fn credential_error(&self, _provider: &str) -> Option<String> {
        None
    }
}

/// Accepts every provider except pi's placeholder `unknown` (no model resolved). The default
/// of [`super::AgentSessionBuilder`]: the stream function finds keys itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnyProviderAuth;

impl AuthSource for AnyProviderAuth {
    fn has_auth(&self, provider: &str) -> bool {
        provider != "unknown"
    }
}

/// Auth from the model registry (run-time keys, `auth.json`, `models.json`, environment).
#[derive(Clone, Debug)]
pub struct RegistryAuth(pub Arc<RwLock<ModelRegistry>>);

impl AuthSource for RegistryAuth {
    fn has_auth(&self, provider: &str) -> bool {
        let r = crate::sync::read(&self.0);
        r.has_configured_auth(provider)
    }

    fn api_key(&self, provider: &str) -> Option<String> {
        let r = crate::sync::read(&self.0);
        r.api_key(provider).ok().flatten()
    }

    fn resolve_api_key(&self, provider: &str) -> Result<Option<String>, RequestAuthError> {
        let r = crate::sync::read(&self.0);
        r.api_key(provider)
            .map_err(|cause| RequestAuthError::ProviderAuth {
                provider: provider.to_owned(),
                cause,
            })
    }

    fn request_headers(
        &self,
        model: &pi_ai::Model,
        api_key: Option<&str>,
    ) -> Result<Vec<(String, Option<String>)>, RequestAuthError> {
        let r = crate::sync::read(&self.0);
        r.request_headers(model, api_key)
    }

    fn request_base_url(&self, model: &pi_ai::Model) -> Option<String> {
        let r = crate::sync::read(&self.0);
        r.request_base_url(model)
    }

    fn credential_error(&self, provider: &str) -> Option<String> {
        let r = crate::sync::read(&self.0);
        r.credential_store_error(provider)
    }

    fn prepare_request(
        &self,
        model: &pi_ai::Model,
    ) -> Option<futures::future::BoxFuture<'static, Result<(), RequestAuthError>>> {
        let provider = model.provider.clone();
        let (path, entry) = {
            let r = self.0.read().unwrap_or_else(|e| e.into_inner());
            if !r.oauth_refresh_due(&provider) {
                return None;
            }
            (
                r.auth().path().map(Path::to_path_buf),
                r.auth().oauth_entry(&provider).cloned(),
            )
        };
        let registry = Arc::clone(&self.0);
        Some(Box::pin(async move {
            crate::config::registry::refresh_oauth(&registry, &provider, path, entry)
                .await
                .map_err(RequestAuthError::from)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_texts_are_pis() {
        let docs = Path::new("/pkg/docs");
        assert_eq!(
            no_api_key("anthropic", docs),
            "No API key found for anthropic.\n\nSet the provider's API key in the environment (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY) or pass --api-key, or add a local OpenAI-compatible server (Ollama, llama.cpp, vLLM) to models.json. See:\n  /pkg/README.md\n  /pkg/docs/providers.md"
        );
        assert!(
            no_api_key("unknown", docs).starts_with("No API key found for the selected model.\n\n")
        );
        assert_eq!(
            oauth_failed("x"),
            "Authentication failed for \"x\". Credentials may have expired or network is unavailable. Run '/login x' to re-authenticate."
        );
        assert_eq!(
            command_cannot_be_queued("deploy"),
            "Extension command \"/deploy\" cannot be queued. Use prompt() or execute the command when not streaming."
        );
        assert!(AnyProviderAuth.has_auth("faux"));
        assert!(!AnyProviderAuth.has_auth("unknown"));
    }
}
