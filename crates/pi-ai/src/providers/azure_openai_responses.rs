//! The `azure-openai-responses` wire API: the Responses protocol on an Azure OpenAI resource.
//!
//! Mirrors pi-ai 0.85.1 `api/azure-openai-responses.js`: the Responses body and stream mapper
//! shared with `openai-responses`, sent as the `AzureOpenAI` SDK client sends it:
//! `POST <base>/responses?api-version=<v>` with the key in an `api-key` header.
//!
//! Settings, each from the environment ([`ProviderEnv`]):
//! - base URL: `AZURE_OPENAI_BASE_URL`, else `https://<AZURE_OPENAI_RESOURCE_NAME>.openai.azure.com/openai/v1`,
//!   else `model.baseUrl`; an Azure host (`*.openai.azure.com`, `*.cognitiveservices.azure.com`,
//!   `*.ai.azure.com`) with no path, `/openai` or `/openai/v1/responses` becomes `…/openai/v1`;
//! - `api-version`: `AZURE_OPENAI_API_VERSION`, default `v1`;
//! - the deployment sent as `model`: `AZURE_OPENAI_DEPLOYMENT_NAME_MAP`
//!   (`modelId=deployment,…`), else the model id.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::openai_completions::request as creq;
use super::openai_completions::sdk::{self, clamp_prompt_cache_key, put};
use super::openai_responses::request::{
    MIN_OUTPUT_TOKENS, TOOL_CALL_PROVIDERS, convert_messages, convert_tools,
};
use super::openai_responses::{ResponsesMapper, prepare_messages_for};
use super::provider_env::ProviderEnv;
use super::request_headers::{HeaderList, pi_user_agent};
use super::{StreamError, StreamMapper, WireApi, WireRequest};
use crate::event::PartialMessage;
use crate::types::{Context, Model, ModelThinkingLevel, StreamOptions, api};

/// `api-version` when none is configured.
pub const DEFAULT_API_VERSION: &str = "v1";

/// The `azure-openai-responses` [`WireApi`].
#[derive(Clone, Debug, Default)]
pub struct AzureOpenAiResponses {
    env: ProviderEnv,
}

impl AzureOpenAiResponses {
    /// The API reading its settings from `env` instead of the process environment.
    pub fn with_env(env: ProviderEnv) -> Self {
        AzureOpenAiResponses { env }
    }
}

/// The `azure-openai-responses` wire API as a shared trait object.
pub fn azure_openai_responses() -> Arc<dyn WireApi> {
    Arc::new(AzureOpenAiResponses::default())
}

/// `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (`id=deployment,…`) entry for `model_id`, else the id.
pub fn deployment_name(model_id: &str, map: Option<&str>) -> String {
    map.into_iter()
        .flat_map(|m| m.split(','))
        .filter_map(|entry| {
            let mut parts = entry.trim().splitn(2, '=');
            let id = parts.next()?.trim();
            let deployment = parts.next()?.trim();
            // pi splits with a limit of 2 and drops anything after a second `=`.
            let deployment = deployment.split('=').next().unwrap_or("").trim();
            (!id.is_empty() && !deployment.is_empty()).then_some((id, deployment))
        })
        .rev()
        .find(|(id, _)| *id == model_id)
        .map(|(_, d)| d.to_owned())
        .unwrap_or_else(|| model_id.to_owned())
}

/// A base URL that does not parse as a URL; carries the URL as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid Azure OpenAI base URL: {0}")]
pub struct InvalidBaseUrl(pub String);

/// pi's `normalizeAzureBaseUrl`: trailing slashes removed; an Azure host with no path,
/// `/openai` or `/openai/v1/responses` gets the path `/openai/v1` (query dropped).
pub fn normalize_base_url(base_url: &str) -> Result<String, InvalidBaseUrl> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let mut url = reqwest::Url::parse(trimmed).map_err(|_| InvalidBaseUrl(base_url.to_owned()))?;
    let host = url.host_str().unwrap_or("").to_owned();
    let azure_host = [
        ".openai.azure.com",
        ".cognitiveservices.azure.com",
        ".ai.azure.com",
    ]
    .iter()
    .any(|s| host.ends_with(s));
    let path = url.path().trim_end_matches('/').to_owned();
    if azure_host && matches!(path.as_str(), "" | "/" | "/openai" | "/openai/v1/responses") {
        url.set_path("/openai/v1");
        url.set_query(None);
    }
    Ok(url.to_string().trim_end_matches('/').to_owned())
}

impl AzureOpenAiResponses {
    /// The normalized base URL and `api-version`.
    fn config(&self, model: &Model) -> Result<(String, String), StreamError> {
        let version = self
            .env
            .get("AZURE_OPENAI_API_VERSION")
            .unwrap_or_else(|| DEFAULT_API_VERSION.to_owned());
        let base = self
            .env
            .get("AZURE_OPENAI_BASE_URL")
            .map(|b| b.trim().to_owned())
            .filter(|b| !b.is_empty())
            .or_else(|| {
                self.env
                    .get("AZURE_OPENAI_RESOURCE_NAME")
                    .map(|r| format!("https://{r}.openai.azure.com/openai/v1"))
            })
            .or_else(|| Some(model.base_url.clone()).filter(|b| !b.is_empty()))
            .ok_or_else(|| {
                StreamError::Config("Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, or pass azureBaseUrl, azureResourceName, or model.baseUrl.".to_owned())
            })?;
        Ok((
            // `StreamError::Config` carries text: the typed error becomes its message here.
            normalize_base_url(&base).map_err(|e| StreamError::Config(e.to_string()))?,
            version,
        ))
    }
}

/// pi's Azure `buildParams`.
fn build_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    deployment: String,
) -> Result<Map<String, Value>, StreamError> {
    let messages = prepare_messages_for(AZURE_TOOL_CALL_PROVIDERS, model, context);
    let mut body = Map::new();
    put(&mut body, "model", deployment);
    put(
        &mut body,
        "input",
        Value::Array(convert_messages(
            model,
            context.system_prompt.as_deref(),
            &messages,
        )),
    );
    put(&mut body, "stream", true);
    if let Some(key) = clamp_prompt_cache_key(options.session_id.as_deref()) {
        put(&mut body, "prompt_cache_key", key);
    }
    put(&mut body, "store", false);
    if let Some(max) = options.max_tokens.filter(|&m| m > 0) {
        put(&mut body, "max_output_tokens", max.max(MIN_OUTPUT_TOKENS));
    }
    if let Some(t) = options.temperature {
        put(&mut body, "temperature", t);
    }
    if let Some(tools) = context.tools.as_ref().filter(|t| !t.is_empty()) {
        let strict = model.compat_bool("supportsStrictMode").unwrap_or(true);
        put(
            &mut body,
            "tools",
            Value::Array(convert_tools(tools, strict)?),
        );
    }
    if let Some(tc) = &options.tool_choice {
        put(&mut body, "tool_choice", tc.clone());
    }
    if model.reasoning {
        if let Some(level) = creq::reasoning_effort(model, options) {
            let key = ModelThinkingLevel::from(level).as_str();
            let effort = match creq::level_map(model, key) {
                Some(v) if !v.is_null() => v.clone(),
                _ => json!(key),
            };
            put(
                &mut body,
                "reasoning",
                json!({"effort": effort, "summary": "auto"}),
            );
            put(&mut body, "include", json!(["reasoning.encrypted_content"]));
        } else if creq::level_map(model, "off").is_none_or(|v| !v.is_null()) {
            let effort = creq::level_map(model, "off")
                .cloned()
                .unwrap_or_else(|| json!("none"));
            put(&mut body, "reasoning", json!({ "effort": effort }));
        }
    }
    for (k, v) in options.sampling_params.iter().flatten() {
        body.insert(k.clone(), v.clone());
    }
    Ok(body)
}

/// Providers whose `call|item` tool-call ids Azure replays as such.
const AZURE_TOOL_CALL_PROVIDERS: &[&str] = &[
    TOOL_CALL_PROVIDERS[0],
    TOOL_CALL_PROVIDERS[1],
    TOOL_CALL_PROVIDERS[2],
    api::AZURE_OPENAI_RESPONSES,
];

impl WireApi for AzureOpenAiResponses {
    fn api(&self) -> &'static str {
        api::AZURE_OPENAI_RESPONSES
    }

    /// `POST <base>/responses?api-version=<v>` with `api-key: <key>`, pi's `User-Agent`,
    /// `model.headers` and the caller's headers. Fails with `No API key for provider: <p>`
    /// without a key (pi 0.85 takes no other Azure credential).
    fn build_request(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
        api_key: &str,
    ) -> Result<WireRequest, StreamError> {
        if api_key.is_empty() {
            return Err(StreamError::NoApiKey(model.provider.clone()));
        }
        let (base, version) = self.config(model)?;
        let map = self.env.get("AZURE_OPENAI_DEPLOYMENT_NAME_MAP");
        let deployment = deployment_name(&model.id, map.as_deref());
        let mut headers = HeaderList::new();
        headers.set("Accept", "application/json");
        headers.set("Content-Type", "application/json");
        headers.set("api-key", api_key);
        headers.set("User-Agent", pi_user_agent());
        headers.apply_json(model.headers.as_ref());
        headers.apply_options(&options.headers);
        let body = build_body(model, context, options, deployment)?;
        let mut url = reqwest::Url::parse(&format!("{base}/responses"))
            .map_err(|_| StreamError::Config(format!("Invalid Azure OpenAI base URL: {base}")))?;
        url.query_pairs_mut().append_pair("api-version", &version);
        Ok(WireRequest {
            url: url.to_string(),
            headers: headers.into_vec(),
            body: Value::Object(body),
        })
    }

    fn new_mapper(
        &self,
        model: &Model,
        partial: PartialMessage,
        options: &StreamOptions,
    ) -> Box<dyn StreamMapper> {
        let requested_tier = options
            .sampling_params
            .as_ref()
            .and_then(|p| p.get("service_tier"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        Box::new(
            ResponsesMapper::new(model, partial, requested_tier)
                .with_pending_text("Azure OpenAI Responses stream ended without a stop reason"),
        )
    }

    /// `Azure OpenAI API error (<status>): <error object JSON or SDK message>`.
    fn format_http_error(&self, status: u16, body: &str) -> String {
        sdk::format_http_error(status, body, Some("Azure OpenAI API error"), false)
    }

    /// The shared Responses stream reports a mid-stream cancel as the missing terminal event.
    fn abort_text(&self) -> &'static str {
        "OpenAI Responses stream ended before a terminal response event"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_map_entries() {
        let map = Some(" gpt-4o = dep-a , ,bad, gpt-5=dep-b=x,gpt-4o=dep-c");
        assert_eq!(deployment_name("gpt-4o", map), "dep-c");
        assert_eq!(deployment_name("gpt-5", map), "dep-b");
        assert_eq!(deployment_name("o3", map), "o3");
        assert_eq!(deployment_name("o3", None), "o3");
    }

    #[test]
    fn azure_hosts_get_the_v1_path() {
        for (input, want) in [
            (
                "https://r.openai.azure.com",
                "https://r.openai.azure.com/openai/v1",
            ),
            (
                "https://r.openai.azure.com/openai/",
                "https://r.openai.azure.com/openai/v1",
            ),
            (
                "https://r.cognitiveservices.azure.com/openai/v1/responses?x=1",
                "https://r.cognitiveservices.azure.com/openai/v1",
            ),
            (
                "https://r.services.ai.azure.com/",
                "https://r.services.ai.azure.com/openai/v1",
            ),
            (
                "https://r.openai.azure.com/custom/",
                "https://r.openai.azure.com/custom",
            ),
            ("http://127.0.0.1:9/v1/", "http://127.0.0.1:9/v1"),
        ] {
            assert_eq!(normalize_base_url(input).unwrap(), want, "{input}");
        }
        assert_eq!(
            normalize_base_url("not a url").unwrap_err().to_string(),
            "Invalid Azure OpenAI base URL: not a url"
        );
    }

    #[test]
    fn base_url_precedence_and_missing() {
        let m = Model {
            id: "gpt-4o".into(),
            base_url: "https://m.openai.azure.com".into(),
            ..Default::default()
        };
        let api = |pairs: &[(&str, &str)]| {
            AzureOpenAiResponses::with_env(ProviderEnv::fixed(pairs.iter().copied()))
        };
        assert_eq!(
            api(&[("AZURE_OPENAI_RESOURCE_NAME", "res")])
                .config(&m)
                .unwrap(),
            ("https://res.openai.azure.com/openai/v1".into(), "v1".into())
        );
        assert_eq!(
            api(&[
                ("AZURE_OPENAI_RESOURCE_NAME", "res"),
                (
                    "AZURE_OPENAI_BASE_URL",
                    " https://b.openai.azure.com/openai "
                ),
                ("AZURE_OPENAI_API_VERSION", "2025-04-01-preview"),
            ])
            .config(&m)
            .unwrap(),
            (
                "https://b.openai.azure.com/openai/v1".into(),
                "2025-04-01-preview".into()
            )
        );
        assert_eq!(
            api(&[]).config(&m).unwrap().0,
            "https://m.openai.azure.com/openai/v1"
        );
        let bare = Model::default();
        assert!(
            api(&[])
                .config(&bare)
                .unwrap_err()
                .to_string()
                .starts_with("Azure OpenAI base URL is required.")
        );
        let err = api(&[])
            .build_request(&m, &Context::default(), &StreamOptions::default(), "")
            .unwrap_err();
        assert_eq!(err.to_string(), "No API key for provider: ");
    }
}
