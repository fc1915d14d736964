//! API keys from the environment, per provider.
//!
//! Mirrors pi-ai 0.85.1 `env-api-keys.ts` (`getApiKeyEnvVars`, `findEnvKeys`, `getEnvApiKey`):
//! one variable per provider (e.g. `openai` → `OPENAI_API_KEY`); `anthropic` reads
//! `ANTHROPIC_OAUTH_TOKEN` before `ANTHROPIC_API_KEY` (`ANTHROPIC_AUTH_TOKEN` is discovered
//! but never returned as a key: it must travel as `Authorization: Bearer`);
//! `google-vertex` and `amazon-bedrock` report `<authenticated>` when ambient credentials
//! are configured. Empty values count as unset, as in JavaScript.

use std::path::Path;

/// `ANTHROPIC_AUTH_TOKEN`: a bearer token, listed by [`find_env_keys`] but never returned by
/// [`get_env_api_key`].
pub const ANTHROPIC_AUTH_TOKEN_ENV: &str = "ANTHROPIC_AUTH_TOKEN";
/// `ANTHROPIC_OAUTH_TOKEN`: preferred over `ANTHROPIC_API_KEY`.
pub const ANTHROPIC_OAUTH_TOKEN_ENV: &str = "ANTHROPIC_OAUTH_TOKEN";
/// `ANTHROPIC_API_KEY`.
pub const ANTHROPIC_API_KEY_ENV: &str = "ANTHROPIC_API_KEY";

/// The value returned for providers authenticated by ambient credentials (Vertex ADC, AWS).
pub const AUTHENTICATED_MARKER: &str = "<authenticated>";

/// The environment variables that can hold an API key for `provider`, in priority order, or
/// `None` for providers without one (custom providers, OAuth-only providers).
pub fn api_key_env_vars(provider: &str) -> Option<&'static [&'static str]> {
    let vars: &'static [&'static str] = match provider {
        "github-copilot" => &["COPILOT_GITHUB_TOKEN"],
        "anthropic" => &[
            ANTHROPIC_AUTH_TOKEN_ENV,
            ANTHROPIC_OAUTH_TOKEN_ENV,
            ANTHROPIC_API_KEY_ENV,
        ],
        "ant-ling" => &["ANT_LING_API_KEY"],
        "qwen-token-plan" | "qwen-token-plan-individual" => &["QWEN_TOKEN_PLAN_API_KEY"],
        "qwen-token-plan-cn" => &["QWEN_TOKEN_PLAN_CN_API_KEY"],
        "openai" => &["OPENAI_API_KEY"],
        "azure-openai-responses" => &["AZURE_OPENAI_API_KEY"],
        "nvidia" => &["NVIDIA_API_KEY"],
        "deepseek" => &["DEEPSEEK_API_KEY"],
        "google" => &["GEMINI_API_KEY"],
        "google-vertex" => &["GOOGLE_CLOUD_API_KEY"],
        "groq" => &["GROQ_API_KEY"],
        "cerebras" => &["CEREBRAS_API_KEY"],
        "xai" => &["XAI_API_KEY"],
        "radius" => &["RADIUS_API_KEY"],
        "openrouter" => &["OPENROUTER_API_KEY"],
        "vercel-ai-gateway" => &["AI_GATEWAY_API_KEY"],
        "zai" => &["ZAI_API_KEY"],
        "zai-coding-cn" => &["ZAI_CODING_CN_API_KEY"],
        "mistral" => &["MISTRAL_API_KEY"],
        "minimax" => &["MINIMAX_API_KEY"],
        "minimax-cn" => &["MINIMAX_CN_API_KEY"],
        "moonshotai" | "moonshotai-cn" => &["MOONSHOT_API_KEY"],
        "huggingface" => &["HF_TOKEN"],
        "fireworks" => &["FIREWORKS_API_KEY"],
        "together" => &["TOGETHER_API_KEY"],
        "baseten" => &["BASETEN_API_KEY"],
        "opencode" | "opencode-go" => &["OPENCODE_API_KEY"],
        "kimi-coding" => &["KIMI_API_KEY"],
        "cloudflare-workers-ai" | "cloudflare-ai-gateway" => &["CLOUDFLARE_API_KEY"],
        "xiaomi" => &["XIAOMI_API_KEY"],
        "xiaomi-token-plan-cn" => &["XIAOMI_TOKEN_PLAN_CN_API_KEY"],
        "xiaomi-token-plan-ams" => &["XIAOMI_TOKEN_PLAN_AMS_API_KEY"],
        "xiaomi-token-plan-sgp" => &["XIAOMI_TOKEN_PLAN_SGP_API_KEY"],
        _ => return None,
    };
    Some(vars)
}

/// Reads a variable from the process environment; empty or non-UTF-8 values are unset.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The key variables of `provider` that are set (non-empty) according to `lookup`, in
/// priority order; empty when none is set. Mirrors `findEnvKeys`.
pub fn find_env_keys_with(
    provider: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Vec<&'static str> {
    api_key_env_vars(provider)
        .unwrap_or(&[])
        .iter()
        .copied()
        .filter(|name| lookup(name).is_some_and(|v| !v.is_empty()))
        .collect()
}

/// [`find_env_keys_with`] over the process environment.
pub fn find_env_keys(provider: &str) -> Vec<&'static str> {
    find_env_keys_with(provider, &process_env)
}

/// The API key for `provider` according to `lookup`, or `None`. Mirrors `getEnvApiKey`,
/// including the `<authenticated>` marker for Vertex ADC (credentials file + project +
/// location) and AWS credential sources for Bedrock.
pub fn get_env_api_key_with(
    provider: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let get = |name: &str| lookup(name).filter(|v| !v.is_empty());
    let found = find_env_keys_with(provider, lookup);
    let chosen = if provider == "anthropic" {
        found.into_iter().find(|k| *k != ANTHROPIC_AUTH_TOKEN_ENV)
    } else {
        found.into_iter().next()
    };
    if let Some(value) = chosen.and_then(get) {
        return Some(value);
    }
    match provider {
        "google-vertex" => {
            let credentials = match get("GOOGLE_APPLICATION_CREDENTIALS") {
                Some(path) => Path::new(&path).exists(),
                None => get("HOME").is_some_and(|home| {
                    Path::new(&home)
                        .join(".config/gcloud/application_default_credentials.json")
                        .exists()
                }),
            };
            let project = get("GOOGLE_CLOUD_PROJECT").or_else(|| get("GCLOUD_PROJECT"));
            let location = get("GOOGLE_CLOUD_LOCATION");
            (credentials && project.is_some() && location.is_some())
                .then(|| AUTHENTICATED_MARKER.to_owned())
        }
        "amazon-bedrock" => {
            let any = get("AWS_PROFILE").is_some()
                || (get("AWS_ACCESS_KEY_ID").is_some() && get("AWS_SECRET_ACCESS_KEY").is_some())
                || get("AWS_BEARER_TOKEN_BEDROCK").is_some()
                || get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").is_some()
                || get("AWS_CONTAINER_CREDENTIALS_FULL_URI").is_some()
                || get("AWS_WEB_IDENTITY_TOKEN_FILE").is_some();
            any.then(|| AUTHENTICATED_MARKER.to_owned())
        }
        _ => None,
    }
}

/// [`get_env_api_key_with`] over the process environment.
pub fn get_env_api_key(provider: &str) -> Option<String> {
    get_env_api_key_with(provider, &process_env)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn maps_providers_to_their_variables() {
        let e = env(&[
            ("OPENAI_API_KEY", "sk-o"),
            ("GEMINI_API_KEY", "g"),
            ("MOONSHOT_API_KEY", "m"),
            ("HF_TOKEN", "hf"),
        ]);
        assert_eq!(get_env_api_key_with("openai", &e).as_deref(), Some("sk-o"));
        assert_eq!(get_env_api_key_with("google", &e).as_deref(), Some("g"));
        assert_eq!(
            get_env_api_key_with("moonshotai-cn", &e).as_deref(),
            Some("m")
        );
        assert_eq!(
            get_env_api_key_with("huggingface", &e).as_deref(),
            Some("hf")
        );
        assert_eq!(get_env_api_key_with("groq", &e), None);
        assert_eq!(get_env_api_key_with("my-custom-provider", &e), None);
    }

    #[test]
    fn anthropic_prefers_oauth_and_never_returns_the_auth_token() {
        let all = env(&[
            ("ANTHROPIC_AUTH_TOKEN", "bearer"),
            ("ANTHROPIC_OAUTH_TOKEN", "oauth"),
            ("ANTHROPIC_API_KEY", "key"),
        ]);
        assert_eq!(
            get_env_api_key_with("anthropic", &all).as_deref(),
            Some("oauth")
        );
        assert_eq!(
            find_env_keys_with("anthropic", &all),
            vec![
                "ANTHROPIC_AUTH_TOKEN",
                "ANTHROPIC_OAUTH_TOKEN",
                "ANTHROPIC_API_KEY"
            ]
        );
        let only_bearer = env(&[("ANTHROPIC_AUTH_TOKEN", "bearer")]);
        assert_eq!(get_env_api_key_with("anthropic", &only_bearer), None);
        let key = env(&[("ANTHROPIC_API_KEY", "key"), ("ANTHROPIC_OAUTH_TOKEN", "")]);
        assert_eq!(
            get_env_api_key_with("anthropic", &key).as_deref(),
            Some("key")
        );
    }

    #[test]
    fn empty_values_count_as_unset() {
        let e = env(&[("OPENAI_API_KEY", "")]);
        assert_eq!(get_env_api_key_with("openai", &e), None);
        assert!(find_env_keys_with("openai", &e).is_empty());
    }

    #[test]
    fn bedrock_reports_ambient_credentials() {
        let pair = env(&[("AWS_ACCESS_KEY_ID", "a"), ("AWS_SECRET_ACCESS_KEY", "b")]);
        assert_eq!(
            get_env_api_key_with("amazon-bedrock", &pair).as_deref(),
            Some("<authenticated>")
        );
        let half = env(&[("AWS_ACCESS_KEY_ID", "a")]);
        assert_eq!(get_env_api_key_with("amazon-bedrock", &half), None);
    }

    #[test]
    fn vertex_needs_credentials_project_and_location() {
        let dir = std::env::temp_dir();
        let creds = dir.join("pi-ai-env-keys-test-adc.json");
        std::fs::write(&creds, "{}").unwrap();
        let path = creds.to_string_lossy().to_string();
        let full = env(&[
            ("GOOGLE_APPLICATION_CREDENTIALS", path.as_str()),
            ("GCLOUD_PROJECT", "p"),
            ("GOOGLE_CLOUD_LOCATION", "us"),
        ]);
        assert_eq!(
            get_env_api_key_with("google-vertex", &full).as_deref(),
            Some("<authenticated>")
        );
        let no_location = env(&[
            ("GOOGLE_APPLICATION_CREDENTIALS", path.as_str()),
            ("GCLOUD_PROJECT", "p"),
        ]);
        assert_eq!(get_env_api_key_with("google-vertex", &no_location), None);
        let key = env(&[("GOOGLE_CLOUD_API_KEY", "k")]);
        assert_eq!(
            get_env_api_key_with("google-vertex", &key).as_deref(),
            Some("k")
        );
    }
}
