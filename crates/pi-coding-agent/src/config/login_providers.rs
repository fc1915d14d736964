//! The providers `/login` and `/logout` offer, with pi's names and prompts (pi-ai 0.85.1
//! `providers/*.js`: each provider's `name`, whether it has an OAuth (subscription) login,
//! and its API-key login's prompt).
//!
//! Left out of the API-key login here: Amazon Bedrock and Google Vertex AI (their logins first
//! ask which of several credential kinds to use), the two Cloudflare providers (they also ask
//! for account and gateway ids, stored as `env` of the entry) and Radius (its models need
//! pi's `pi-messages` API). Their credentials can still be written to `auth.json` by hand or
//! by the TypeScript pi, and are used.

/// A provider as the login selectors show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LoginProvider {
    /// The provider id (`anthropic`).
    pub id: &'static str,
    /// pi's display name (`Anthropic`).
    pub name: &'static str,
    /// pi has a subscription (OAuth) login for it.
    pub oauth: bool,
    /// The API-key prompt (`Enter Anthropic API key`), when pi-rs offers the API-key login.
    pub api_key_prompt: Option<&'static str>,
}

const fn p(
    id: &'static str,
    name: &'static str,
    oauth: bool,
    api_key_prompt: Option<&'static str>,
) -> LoginProvider {
    LoginProvider {
        id,
        name,
        oauth,
        api_key_prompt,
    }
}

/// Every built-in provider, by id.
pub(crate) const LOGIN_PROVIDERS: &[LoginProvider] = &[
    p("amazon-bedrock", "Amazon Bedrock", false, None),
    p(
        "ant-ling",
        "Ant Ling",
        false,
        Some("Enter Ant Ling API key"),
    ),
    p(
        "anthropic",
        "Anthropic",
        true,
        Some("Enter Anthropic API key"),
    ),
    p(
        "azure-openai-responses",
        "Azure OpenAI",
        false,
        Some("Enter Azure OpenAI API key"),
    ),
    p("baseten", "Baseten", false, Some("Enter Baseten API key")),
    p(
        "cerebras",
        "Cerebras",
        false,
        Some("Enter Cerebras API key"),
    ),
    p(
        "cloudflare-ai-gateway",
        "Cloudflare AI Gateway",
        false,
        None,
    ),
    p(
        "cloudflare-workers-ai",
        "Cloudflare Workers AI",
        false,
        None,
    ),
    p(
        "deepseek",
        "DeepSeek",
        false,
        Some("Enter DeepSeek API key"),
    ),
    p(
        "fireworks",
        "Fireworks",
        false,
        Some("Enter Fireworks API key"),
    ),
    p(
        "github-copilot",
        "GitHub Copilot",
        true,
        Some("Enter GitHub Copilot token"),
    ),
    p("google", "Google", false, Some("Enter Gemini API key")),
    p("google-vertex", "Google Vertex AI", false, None),
    p("groq", "Groq", false, Some("Enter Groq API key")),
    p(
        "huggingface",
        "Hugging Face",
        false,
        Some("Enter Hugging Face token"),
    ),
    p(
        "kimi-coding",
        "Kimi For Coding",
        true,
        Some("Enter Kimi API key"),
    ),
    p("minimax", "MiniMax", false, Some("Enter MiniMax API key")),
    p(
        "minimax-cn",
        "MiniMax CN",
        false,
        Some("Enter MiniMax CN API key"),
    ),
    p("mistral", "Mistral", false, Some("Enter Mistral API key")),
    p(
        "moonshotai",
        "Moonshot AI",
        false,
        Some("Enter Moonshot AI API key"),
    ),
    p(
        "moonshotai-cn",
        "Moonshot AI CN",
        false,
        Some("Enter Moonshot AI API key"),
    ),
    p("nvidia", "NVIDIA", false, Some("Enter NVIDIA API key")),
    p("openai", "OpenAI", false, Some("Enter OpenAI API key")),
    p("openai-codex", "OpenAI Codex", true, None),
    p(
        "opencode",
        "OpenCode Zen",
        false,
        Some("Enter OpenCode API key"),
    ),
    p(
        "opencode-go",
        "OpenCode Go",
        false,
        Some("Enter OpenCode API key"),
    ),
    p(
        "openrouter",
        "OpenRouter",
        true,
        Some("Enter OpenRouter API key"),
    ),
    p(
        "qwen-token-plan",
        "Qwen Token Plan",
        false,
        Some("Enter Qwen Token Plan API key"),
    ),
    p(
        "qwen-token-plan-cn",
        "Qwen Token Plan CN",
        false,
        Some("Enter Qwen Token Plan CN API key"),
    ),
    p(
        "qwen-token-plan-individual",
        "Qwen Token Plan Individual",
        false,
        Some("Enter Qwen Token Plan Individual API key"),
    ),
    p(
        "together",
        "Together",
        false,
        Some("Enter Together API key"),
    ),
    p(
        "vercel-ai-gateway",
        "Vercel AI Gateway",
        false,
        Some("Enter Vercel AI Gateway API key"),
    ),
    p("xai", "xAI", true, Some("Enter xAI API key")),
    p("xiaomi", "Xiaomi", false, Some("Enter Xiaomi API key")),
    p(
        "xiaomi-token-plan-ams",
        "Xiaomi Token Plan AMS",
        false,
        Some("Enter Xiaomi Token Plan AMS API key"),
    ),
    p(
        "xiaomi-token-plan-cn",
        "Xiaomi Token Plan CN",
        false,
        Some("Enter Xiaomi Token Plan CN API key"),
    ),
    p(
        "xiaomi-token-plan-sgp",
        "Xiaomi Token Plan SGP",
        false,
        Some("Enter Xiaomi Token Plan SGP API key"),
    ),
    p("zai", "Z.AI", false, Some("Enter Z.AI API key")),
    p(
        "zai-coding-cn",
        "Z.AI Coding CN",
        false,
        Some("Enter Z.AI Coding CN API key"),
    ),
];

/// The built-in provider `id`.
pub(crate) fn login_provider(id: &str) -> Option<&'static LoginProvider> {
    LOGIN_PROVIDERS.iter().find(|p| p.id == id)
}

/// pi's name for provider `id` (the id itself for a custom provider).
pub(crate) fn provider_name(id: &str) -> &str {
    login_provider(id).map_or(id, |p| p.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_sorted_and_names_resolve() {
        let ids: Vec<&str> = LOGIN_PROVIDERS.iter().map(|p| p.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted);
        assert_eq!(provider_name("openai"), "OpenAI");
        assert_eq!(provider_name("my-proxy"), "my-proxy");
        // Every OAuth provider pi-ai refreshes is listed as one.
        for id in pi_ai::auth::oauth::OAUTH_PROVIDERS {
            assert!(login_provider(id).is_some_and(|p| p.oauth), "{id}");
        }
    }
}
