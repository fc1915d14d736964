//! API keys from environment variables, per provider.
//!
//! Mirrors pi-ai 0.85.1 `env-api-keys.js` (`getApiKeyEnvVars`, `findEnvKeys`, `getEnvApiKey`):
//! an empty variable counts as unset; Anthropic's `ANTHROPIC_AUTH_TOKEN` is discovered but never
//! returned as an API key (it must travel as `Authorization: Bearer`); Vertex and Bedrock report
//! `<authenticated>` when their ambient credentials are configured.

use std::path::Path;

/// `ANTHROPIC_AUTH_TOKEN`: discovered, but not an API key.
const ANTHROPIC_AUTH_TOKEN_ENV: &str = "ANTHROPIC_AUTH_TOKEN";

/// The variables holding a provider's key, in priority order; `None` for an unknown provider.
pub fn api_key_env_vars(provider: &str) -> Option<&'static [&'static str]> {
    let vars: &'static [&'static str] = match provider {
        "github-copilot" => &["COPILOT_GITHUB_TOKEN"],
        "anthropic" => &[
            ANTHROPIC_AUTH_TOKEN_ENV,
            "ANTHROPIC_OAUTH_TOKEN",
            "ANTHROPIC_API_KEY",
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

fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.is_empty())
}

/// The provider's variables that are set (non-empty) according to `env`; `None` when none is.
pub fn find_env_keys(
    provider: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<Vec<&'static str>> {
    let found: Vec<&'static str> = api_key_env_vars(provider)?
        .iter()
        .copied()
        .filter(|name| non_empty(env(name)).is_some())
        .collect();
    (!found.is_empty()).then_some(found)
}

/// `getEnvApiKey` over the process environment.
pub fn get_env_api_key(provider: &str) -> Option<String> {
    get_env_api_key_with(provider, &|name| std::env::var(name).ok())
}

/// `getEnvApiKey` with an explicit environment lookup (tests, scoped environments).
///
/// Returns the key, `"<authenticated>"` for ambient Vertex/Bedrock credentials, or `None`.
pub fn get_env_api_key_with(
    provider: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if let Some(found) = find_env_keys(provider, env) {
        let chosen = if provider == "anthropic" {
            found.into_iter().find(|k| *k != ANTHROPIC_AUTH_TOKEN_ENV)
        } else {
            found.into_iter().next()
        };
        if let Some(name) = chosen {
            return non_empty(env(name));
        }
    }
    let set = |name: &str| non_empty(env(name)).is_some();
    match provider {
        "google-vertex" => {
            let has_credentials = match non_empty(env("GOOGLE_APPLICATION_CREDENTIALS")) {
                Some(path) => Path::new(&path).exists(),
                None => non_empty(env("HOME")).is_some_and(|home| {
                    Path::new(&home)
                        .join(".config/gcloud/application_default_credentials.json")
                        .exists()
                }),
            };
            let has_project = set("GOOGLE_CLOUD_PROJECT") || set("GCLOUD_PROJECT");
            (has_credentials && has_project && set("GOOGLE_CLOUD_LOCATION"))
                .then(|| "<authenticated>".to_owned())
        }
        "amazon-bedrock" => (set("AWS_PROFILE")
            || (set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY"))
            || set("AWS_BEARER_TOKEN_BEDROCK")
            || set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
            || set("AWS_CONTAINER_CREDENTIALS_FULL_URI")
            || set("AWS_WEB_IDENTITY_TOKEN_FILE"))
        .then(|| "<authenticated>".to_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn provider_variables() {
        assert_eq!(api_key_env_vars("openai"), Some(&["OPENAI_API_KEY"][..]));
        assert_eq!(api_key_env_vars("google"), Some(&["GEMINI_API_KEY"][..]));
        assert_eq!(
            api_key_env_vars("moonshotai-cn"),
            Some(&["MOONSHOT_API_KEY"][..])
        );
        assert_eq!(api_key_env_vars("my-custom"), None);
    }

    #[test]
    fn key_from_env_and_empty_counts_as_unset() {
        let env = env_of(&[("OPENAI_API_KEY", "sk-1"), ("GROQ_API_KEY", "")]);
        assert_eq!(
            get_env_api_key_with("openai", &env).as_deref(),
            Some("sk-1")
        );
        assert_eq!(get_env_api_key_with("groq", &env), None);
        assert_eq!(find_env_keys("groq", &env), None);
    }

    #[test]
    fn anthropic_auth_token_is_found_but_not_a_key() {
        let env = env_of(&[("ANTHROPIC_AUTH_TOKEN", "tok")]);
        assert_eq!(
            find_env_keys("anthropic", &env),
            Some(vec!["ANTHROPIC_AUTH_TOKEN"])
        );
        assert_eq!(get_env_api_key_with("anthropic", &env), None);
        let env = env_of(&[
            ("ANTHROPIC_AUTH_TOKEN", "tok"),
            ("ANTHROPIC_API_KEY", "key"),
            ("ANTHROPIC_OAUTH_TOKEN", "oauth"),
        ]);
        assert_eq!(
            get_env_api_key_with("anthropic", &env).as_deref(),
            Some("oauth")
        );
    }

    #[test]
    fn bedrock_ambient_credentials() {
        let env = env_of(&[("AWS_ACCESS_KEY_ID", "a")]);
        assert_eq!(get_env_api_key_with("amazon-bedrock", &env), None);
        let env = env_of(&[("AWS_ACCESS_KEY_ID", "a"), ("AWS_SECRET_ACCESS_KEY", "b")]);
        assert_eq!(
            get_env_api_key_with("amazon-bedrock", &env).as_deref(),
            Some("<authenticated>")
        );
    }
}
