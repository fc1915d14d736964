//! Registry: catalog + models.json merge and availability by auth (no process env keys).

use super::*;
use serde_json::json;
use std::path::PathBuf;

fn no_env(_: &str) -> Option<String> {
    None
}

fn openai_env(p: &str) -> Option<String> {
    (p == "openai").then(|| "sk-env".to_owned())
}

fn registry(models_json: &str, auth: serde_json::Value) -> ModelRegistry {
    let config = ModelsConfig::parse(models_json, Path::new("/a/models.json"));
    let auth = AuthStorage::in_memory(auth.as_object().unwrap().clone());
    ModelRegistry::new(config, auth).with_env_key_lookup(no_env)
}

fn conformance() -> ModelRegistry {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/config/conformance-models.json"
    ));
    ModelRegistry::with_models_file(&path, AuthStorage::in_memory(Default::default()))
        .with_env_key_lookup(no_env)
}

#[test]
fn catalog_models_without_auth_are_not_available() {
    let r = registry("{\"providers\": {}}", json!({}));
    assert!(r.all().len() > 500);
    assert!(r.available().is_empty());
    assert!(r.find("anthropic", "claude-haiku-4-5").is_some());
    assert!(r.error().is_none());
}

#[test]
fn models_json_provider_with_literal_key_is_available() {
    let r = conformance();
    let avail: Vec<String> = r
        .available()
        .iter()
        .map(|m| format!("{}/{}", m.provider, m.id))
        .collect();
    assert_eq!(
        avail,
        vec![
            "replay-anthropic/replay-model",
            "replay-anthropic/replay-thinker",
            "replay-openai/replay-model",
            "replay-openai/replay-thinker",
            "replay-responses/replay-model",
            "replay-responses/replay-thinker",
            "replay-google/replay-model",
            "replay-google/replay-thinker",
        ]
    );
    assert_eq!(
        r.api_key("replay-google").unwrap().as_deref(),
        Some("replay-test-key")
    );
    // Custom providers come after the catalog.
    assert_eq!(r.all().last().unwrap().provider, "replay-google");
}

#[test]
fn auth_json_beats_env_and_models_json_key() {
    let r = registry(
        r#"{"providers": {"openai": {"apiKey": "from-models-json"}}}"#,
        json!({"openai": {"type": "api_key", "key": "from-auth"}}),
    )
    .with_env_key_lookup(openai_env);
    assert_eq!(r.api_key("openai").unwrap().as_deref(), Some("from-auth"));
    let r = registry(
        r#"{"providers": {"openai": {"apiKey": "from-models-json"}}}"#,
        json!({}),
    )
    .with_env_key_lookup(openai_env);
    assert_eq!(
        r.api_key("openai").unwrap().as_deref(),
        Some("from-models-json")
    );
    let r = registry("{\"providers\": {}}", json!({})).with_env_key_lookup(openai_env);
    assert_eq!(r.api_key("openai").unwrap().as_deref(), Some("sk-env"));
    assert!(r.has_configured_auth("openai"));
    assert!(r.available().iter().all(|m| m.provider == "openai"));
}

#[test]
fn runtime_key_makes_a_provider_available() {
    let mut r = registry("{\"providers\": {}}", json!({}));
    assert!(!r.has_configured_auth("groq"));
    r.auth_mut().set_runtime_api_key("groq", "cli-key");
    assert!(r.has_configured_auth("groq"));
    assert_eq!(r.api_key("groq").unwrap().as_deref(), Some("cli-key"));
}

#[test]
fn models_json_env_key_counts_only_when_set() {
    let r = registry(
        r#"{"providers": {"c": {"baseUrl": "u", "api": "openai-completions", "apiKey": "$PIRS_REG_UNSET", "models": [{"id": "m"}]}}}"#,
        json!({}),
    );
    assert!(!r.has_configured_auth("c"));
    assert_eq!(
        r.api_key("c").map_err(|e| e.to_string()),
        Err("Failed to resolve API key for provider \"c\" from environment variable: PIRS_REG_UNSET".to_owned())
    );
    let r = registry(
        r#"{"providers": {"c": {"baseUrl": "u", "api": "openai-completions", "apiKey": "!printf k", "models": [{"id": "m"}]}}}"#,
        json!({}),
    );
    assert!(r.has_configured_auth("c"));
    assert_eq!(r.api_key("c").unwrap().as_deref(), Some("k"));
}

#[test]
fn request_auth_headers_and_auth_header() {
    let r = registry(
        r#"{"providers": {"c": {"baseUrl": "u", "api": "openai-completions", "apiKey": "key1",
            "authHeader": true, "headers": {"x-team": "blue", "authorization": "old"},
            "models": [{"id": "m"}]}}}"#,
        json!({}),
    );
    let m = r.find("c", "m").unwrap().clone();
    let a = r.request_auth(&m).unwrap();
    assert_eq!(a.api_key.as_deref(), Some("key1"));
    assert_eq!(
        a.headers,
        vec![
            ("x-team".to_owned(), Some("blue".to_owned())),
            ("Authorization".to_owned(), Some("Bearer key1".to_owned()))
        ]
    );
    let r = registry(
        r#"{"providers": {"c": {"baseUrl": "u", "api": "openai-completions", "authHeader": true, "models": [{"id": "m"}]}}}"#,
        json!({}),
    );
    let m = r.find("c", "m").unwrap().clone();
    assert_eq!(
        r.request_auth(&m).unwrap_err().to_string(),
        "No API key found for \"c\""
    );
}

#[test]
fn composition_errors_keep_the_builtin_models() {
    let r = registry(
        r#"{"providers": {"openai": {}, "x": {"models": [{"id": "m"}]}}}"#,
        json!({}),
    );
    let e = r.error().unwrap();
    assert!(
        e.contains("Provider \"openai\": Provider openai: must specify"),
        "{e}"
    );
    assert!(
        e.contains("Provider \"x\": Provider x, model m: no \"api\" specified."),
        "{e}"
    );
    assert!(r.find("openai", "gpt-4o").is_some() || r.all().iter().any(|m| m.provider == "openai"));
    assert!(r.all().iter().all(|m| m.provider != "x"));
}

#[test]
fn broken_models_json_is_reported_and_ignored() {
    let r = registry("{ broken", json!({}));
    let e = r.error().unwrap();
    assert!(e.starts_with("Failed to parse models.json"), "{e}");
    assert!(e.ends_with("File: /a/models.json"), "{e}");
    assert!(r.all().len() > 500);
}

fn anthropic_token(provider: &str) -> Option<String> {
    (provider == "anthropic").then(|| "tok".to_owned())
}

fn anthropic_api_key(provider: &str) -> Option<String> {
    (provider == "anthropic").then(|| "sk-env".to_owned())
}

/// pi-ai 0.85.1 `anthropicApiKeyAuth`: without a key of its own, `anthropic` authenticates with
/// `ANTHROPIC_AUTH_TOKEN` as `Authorization: Bearer`, before `ANTHROPIC_API_KEY`, and sends no
/// `x-api-key`; a run-time, stored or `models.json` key wins over the token.
#[test]
fn an_anthropic_auth_token_is_a_bearer_header_without_a_key() {
    let r = registry("{\"providers\": {}}", json!({}))
        .with_env_key_lookup(anthropic_api_key)
        .with_env_token_lookup(anthropic_token);
    assert!(r.has_configured_auth("anthropic"));
    assert_eq!(r.api_key("anthropic"), Ok(None));
    let m = r.find("anthropic", "claude-sonnet-4-5").unwrap().clone();
    assert_eq!(
        r.request_headers(&m, None).unwrap(),
        vec![
            ("Authorization".to_owned(), Some("Bearer tok".to_owned())),
            ("x-api-key".to_owned(), None)
        ]
    );
    // Only the token: still configured.
    let r = registry("{\"providers\": {}}", json!({})).with_env_token_lookup(anthropic_token);
    assert!(r.has_configured_auth("anthropic"));
    assert!(!r.has_configured_auth("openai"));
    // A key of its own wins.
    let mut r = registry("{\"providers\": {}}", json!({})).with_env_token_lookup(anthropic_token);
    r.auth_mut().set_runtime_api_key("anthropic", "sk-cli");
    assert_eq!(r.api_key("anthropic"), Ok(Some("sk-cli".to_owned())));
    assert!(r.request_headers(&m, Some("sk-cli")).unwrap().is_empty());
}

/// pi-ai 0.85.1 `cloudflareWorkersAIAuth` / `cloudflareAIGatewayAuth`: a Cloudflare provider is
/// configured only with its account id (and gateway id) besides its key, and those fill the
/// placeholders of its base URL (here from the stored credential's `env`; the process
/// environment is the fallback).
#[test]
fn cloudflare_providers_need_their_ids_and_fill_their_urls() {
    let key_only = registry(
        "{\"providers\": {}}",
        json!({"cloudflare-workers-ai": {"type": "api_key", "key": "cf-key"}}),
    );
    assert!(!key_only.has_configured_auth("cloudflare-workers-ai"));

    let r = registry(
        "{\"providers\": {}}",
        json!({
            "cloudflare-workers-ai": {"type": "api_key", "key": "cf-key",
                "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-1"}},
            "cloudflare-ai-gateway": {"type": "api_key", "key": "cf-key",
                "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-1"}}
        }),
    );
    assert!(r.has_configured_auth("cloudflare-workers-ai"));
    assert!(
        !r.has_configured_auth("cloudflare-ai-gateway"),
        "the gateway id is missing"
    );
    let workers = r
        .all()
        .into_iter()
        .find(|m| m.provider == "cloudflare-workers-ai")
        .unwrap()
        .clone();
    assert_eq!(
        r.request_base_url(&workers).as_deref(),
        Some("https://api.cloudflare.com/client/v4/accounts/acct-1/ai/v1")
    );
    let gateway = r
        .all()
        .into_iter()
        .find(|m| m.provider == "cloudflare-ai-gateway" && m.api == "openai-completions")
        .unwrap()
        .clone();
    assert_eq!(
        r.request_base_url(&gateway).as_deref(),
        Some("https://gateway.ai.cloudflare.com/v1/acct-1/{CLOUDFLARE_GATEWAY_ID}/compat")
    );
    // Other providers are left alone.
    let m = r.find("anthropic", "claude-sonnet-4-5").unwrap().clone();
    assert_eq!(r.request_base_url(&m), None);
}
