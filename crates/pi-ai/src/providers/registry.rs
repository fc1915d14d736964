//! The API registry: `model.api` → the stream function that serves it.
//!
//! Mirrors pi-ai 0.85.1 `/compat` (`registerApiProvider`, `stream`, `streamSimple`) and
//! `api/simple-options.ts`:
//! - [`stream`] reports every failure inside the stream, including
//!   `No API provider registered for api: <api>`;
//! - [`stream_simple`] fails early with [`Error::NoApiKey`] when the provider needs a key and
//!   there is neither a key (option or environment) nor an auth header (`authorization`,
//!   `cf-aig-authorization`, and `x-api-key` for `anthropic-messages`), and caps
//!   `max_tokens` at `max(1, contextWindow − estimate − 4096)` when `contextWindow > 0`.
//!
//! Wire APIs register with [`register_api`]; other stream functions (the faux provider, a
//! fork's own transport) implement [`ApiProvider`] and use [`register_api_provider`].

mod estimate;

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, RwLock};

pub use estimate::{context_tokens, estimate_context_tokens, message_tokens};

use super::WireApi;
use super::driver::stream_wire;
use crate::error::{Error, Result};
use crate::stream::AssistantMessageEventStream;
use crate::types::{AssistantMessage, Context, Model, StopReason, StreamOptions};

/// Tokens kept free below the context window by [`stream_simple`].
pub const CONTEXT_SAFETY_TOKENS: i64 = 4_096;

/// A stream function for one api id.
pub trait ApiProvider: Send + Sync {
    /// The api id it serves (`model.api`).
    fn api(&self) -> &str;

    /// Starts a request; every failure is reported inside the stream.
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream;

    /// Whether [`stream_simple`] must find an API key or auth header first (default `true`).
    fn requires_api_key(&self) -> bool {
        true
    }
}

/// A [`WireApi`] served over HTTP by the driver.
struct WireProvider(Arc<dyn WireApi>);

impl ApiProvider for WireProvider {
    fn api(&self) -> &str {
        self.0.api()
    }

    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        stream_wire(self.0.clone(), model, context, options)
    }
}

/// The wire APIs pi-rs ships, registered on first use of the registry. Each wire-API module
/// adds its line here, e.g. `Arc::new(super::anthropic::AnthropicMessages)`.
fn builtin_wire_apis() -> Vec<Arc<dyn WireApi>> {
    vec![
        Arc::new(super::anthropic::AnthropicMessages),
        Arc::new(super::google::GoogleGenerativeAi),
        super::openai_completions::openai_completions(),
        super::openai_responses::openai_responses(),
        super::azure_openai_responses::azure_openai_responses(),
        super::mistral::mistral_conversations(),
        super::google_vertex::google_vertex(),
        super::bedrock::bedrock_converse_stream(),
        super::openai_codex::openai_codex_responses(),
    ]
}

type Registry = HashMap<String, Arc<dyn ApiProvider>>;

static REGISTRY: LazyLock<RwLock<Registry>> = LazyLock::new(|| {
    let mut map: Registry = HashMap::new();
    for wire in builtin_wire_apis() {
        map.insert(wire.api().to_owned(), Arc::new(WireProvider(wire)));
    }
    RwLock::new(map)
});

/// Registers (or replaces) a wire API under its [`WireApi::api`] id.
pub fn register_api(wire: Arc<dyn WireApi>) {
    register_api_provider(Arc::new(WireProvider(wire)));
}

/// Registers (or replaces) a stream function under its [`ApiProvider::api`] id.
pub fn register_api_provider(provider: Arc<dyn ApiProvider>) {
    let mut map = crate::sync::write(&REGISTRY);
    map.insert(provider.api().to_owned(), provider);
}

/// Removes an api id; `true` when it was registered.
pub fn unregister_api(api: &str) -> bool {
    let mut map = crate::sync::write(&REGISTRY);
    map.remove(api).is_some()
}

/// The provider registered for `api`.
pub fn get_api_provider(api: &str) -> Option<Arc<dyn ApiProvider>> {
    let map = crate::sync::read(&REGISTRY);
    map.get(api).cloned()
}

/// The registered api ids, sorted.
pub fn registered_apis() -> Vec<String> {
    let map = crate::sync::read(&REGISTRY);
    let mut apis: Vec<String> = map.keys().cloned().collect();
    apis.sort();
    apis
}

/// Streams `context` with the provider registered for `model.api`; an unknown api yields an
/// error-only stream `No API provider registered for api: <api>`.
///
/// Call it inside a Tokio runtime: the request runs on a spawned task (outside one, the
/// stream holds the error `pi-ai streams must be started inside a Tokio runtime`). Every
/// failure after this point — HTTP errors, an unreachable server (`Connection error.`,
/// Google `fetch failed`), a malformed base URL (`Invalid URL`), a cancelled
/// `options.signal` — ends the stream with an `error` event; nothing panics. Dropping the
/// stream cancels the request.
pub fn stream(
    model: &Model,
    context: &Context,
    options: StreamOptions,
) -> AssistantMessageEventStream {
    match get_api_provider(&model.api) {
        Some(provider) => provider.stream(model, context, options),
        None => {
            let mut message = AssistantMessage::empty(&model.api, &model.provider, &model.id);
            message.stop_reason = StopReason::Error;
            message.error_message = Some(Error::UnknownApi(model.api.clone()).to_string());
            AssistantMessageEventStream::error_only(message)
        }
    }
}

/// Like [`stream`], after pi's simple-options checks: `Err(UnknownApi)` for an unknown api,
/// `Err(NoApiKey)` without key or auth header; `max_tokens` capped by
/// [`clamp_max_tokens_to_context`]; a key found in the environment is passed as
/// `options.api_key`.
pub fn stream_simple(
    model: &Model,
    context: &Context,
    mut options: StreamOptions,
) -> Result<AssistantMessageEventStream> {
    let provider =
        get_api_provider(&model.api).ok_or_else(|| Error::UnknownApi(model.api.clone()))?;
    if provider.requires_api_key() {
        let key = options
            .api_key
            .clone()
            .filter(|k| !k.is_empty())
            .or_else(|| crate::models::get_env_api_key(&model.provider));
        match key {
            Some(key) => options.api_key = Some(key),
            None if has_auth_header(model, &options) => {}
            None => return Err(Error::NoApiKey(model.provider.clone())),
        }
    }
    let requested = options.max_tokens.unwrap_or(model.max_tokens);
    options.max_tokens = Some(clamp_max_tokens_to_context(model, context, requested));
    Ok(provider.stream(model, context, options))
}

/// `min(max_tokens, max(1, contextWindow − estimate − 4096))`, or `max(1, max_tokens)`
/// when the context window is unknown (0). Mirrors `clampMaxTokensToContext`.
pub fn clamp_max_tokens_to_context(model: &Model, context: &Context, max_tokens: u64) -> u64 {
    if model.context_window == 0 {
        return max_tokens.max(1);
    }
    let estimate = estimate_context_tokens(context) as i64;
    let available = model.context_window as i64 - estimate - CONTEXT_SAFETY_TOKENS;
    max_tokens.min(available.max(1) as u64)
}

/// Whether the merged model + caller headers carry credentials.
fn has_auth_header(model: &Model, options: &StreamOptions) -> bool {
    let mut names: HashMap<String, bool> = HashMap::new();
    for (name, value) in model.headers.iter().flatten() {
        let set = value.as_str().is_some_and(|v| !v.is_empty());
        names.insert(name.to_ascii_lowercase(), set);
    }
    for (name, value) in &options.headers {
        let set = value.as_deref().is_some_and(|v| !v.is_empty());
        names.insert(name.to_ascii_lowercase(), set);
    }
    let anthropic = model.api == crate::types::api::ANTHROPIC_MESSAGES;
    names.iter().any(|(name, &set)| {
        set && (name == "authorization"
            || name == "cf-aig-authorization"
            || (anthropic && name == "x-api-key"))
    })
}

#[cfg(test)]
mod tests;
