//! The built-in model catalog and per-provider API-key environment variables.
//!
//! Mirrors pi-ai's `MODELS` catalog as the reference `pi` 0.85.0 binary sees it (its bundle
//! carries its own copy of the catalog) and pi-ai 0.85.1 `env-api-keys.js`. The catalog holds
//! every built-in model, also those on wire APIs pi-rs does not implement
//! ([`is_implemented_api`]), so that model resolution picks what the reference picks. The
//! catalog is data: `catalog.json`, generated from the
//! installed reference by `cargo xtask gen-catalog`, embedded with `include_str!` and parsed
//! once on first use.

mod env_keys;

use std::sync::OnceLock;

use serde::Deserialize;

use crate::types::Model;

pub use env_keys::{api_key_env_vars, find_env_keys, get_env_api_key, get_env_api_key_with};

/// The embedded catalog text (`{"generatedFrom": "...", "models": [Model, ...]}`).
const CATALOG_JSON: &str = include_str!("catalog.json");

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CatalogFile {
    generated_from: String,
    models: Vec<Model>,
}

struct Catalog {
    generated_from: String,
    models: Vec<Model>,
}

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| match serde_json::from_str::<CatalogFile>(CATALOG_JSON) {
        Ok(file) => Catalog {
            generated_from: file.generated_from,
            models: file.models,
        },
        // The file is generated and covered by tests; a broken build degrades to no models.
        Err(err) => {
            tracing::error!("embedded model catalog is invalid: {err}");
            Catalog {
                generated_from: String::new(),
                models: Vec::new(),
            }
        }
    })
}

/// Whether pi-rs implements a wire API (every one of [`crate::types::api`]).
pub fn is_implemented_api(api: &str) -> bool {
    use crate::types::api;
    [
        api::ANTHROPIC_MESSAGES,
        api::OPENAI_COMPLETIONS,
        api::OPENAI_RESPONSES,
        api::GOOGLE_GENERATIVE_AI,
        api::GOOGLE_VERTEX,
        api::AZURE_OPENAI_RESPONSES,
        api::MISTRAL_CONVERSATIONS,
        api::BEDROCK_CONVERSE_STREAM,
        crate::providers::openai_codex::OPENAI_CODEX_RESPONSES,
    ]
    .contains(&api)
}

/// Which reference package the catalog was generated from (e.g. `@earendil-works/pi-ai 0.85.1`).
pub fn catalog_source() -> &'static str {
    &catalog().generated_from
}

/// Every built-in model, grouped by provider in the reference's order (providers
/// alphabetical as in `MODELS`, models in their generated order).
pub fn builtin_models() -> &'static [Model] {
    &catalog().models
}

/// The built-in providers in catalog order, each once.
pub fn builtin_providers() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for model in builtin_models() {
        if out.last() != Some(&model.provider.as_str()) && !out.contains(&model.provider.as_str()) {
            out.push(&model.provider);
        }
    }
    out
}

/// The built-in models of one provider, in catalog order (empty for an unknown provider).
pub fn builtin_models_for(provider: &str) -> Vec<&'static Model> {
    builtin_models()
        .iter()
        .filter(|m| m.provider == provider)
        .collect()
}

/// The built-in model `provider/id` (exact, case-sensitive), mirroring `getModel`.
pub fn get_builtin_model(provider: &str, id: &str) -> Option<&'static Model> {
    builtin_models()
        .iter()
        .find(|m| m.provider == provider && m.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{InputKind, ModelThinkingLevel, api};

    #[test]
    fn catalog_parses_and_names_its_source() {
        assert!(builtin_models().len() > 500);
        // The reference binary bundles its own copy of the catalog.
        assert_eq!(catalog_source(), "@earendil-works/pi-coding-agent 0.85.0");
    }

    #[test]
    fn catalog_holds_every_api_and_marks_ours() {
        let ours = builtin_models()
            .iter()
            .filter(|m| is_implemented_api(&m.api))
            .count();
        assert!(ours > 1000, "{ours}");
        let bedrock = builtin_models_for("amazon-bedrock");
        assert!(!bedrock.is_empty());
        assert!(bedrock.iter().all(|m| m.api == "bedrock-converse-stream"));
        assert!(is_implemented_api("bedrock-converse-stream"));
        assert!(!is_implemented_api("pi-messages"));
        assert!(is_implemented_api(api::OPENAI_RESPONSES));
    }

    #[test]
    fn catalog_covers_the_main_providers() {
        let providers = builtin_providers();
        for p in [
            "amazon-bedrock",
            "anthropic",
            "openai",
            "google",
            "openrouter",
            "groq",
            "cerebras",
            "xai",
            "deepseek",
        ] {
            assert!(providers.contains(&p), "missing provider {p}");
        }
        // Providers come grouped and in the reference's (alphabetical) order.
        let mut sorted = providers.clone();
        sorted.sort_unstable();
        assert_eq!(providers, sorted);
    }

    #[test]
    fn reference_values_of_a_known_model() {
        let m = get_builtin_model("anthropic", "claude-haiku-4-5").expect("model");
        assert_eq!(m.name, "Claude Haiku 4.5 (latest)");
        assert_eq!(m.api, api::ANTHROPIC_MESSAGES);
        assert_eq!(m.base_url, "https://api.anthropic.com");
        assert!(m.reasoning);
        assert_eq!(m.input, vec![InputKind::Text, InputKind::Image]);
        assert_eq!(m.cost.input, 1.0);
        assert_eq!(m.cost.output, 5.0);
        assert_eq!(m.cost.cache_read, 0.1);
        assert_eq!(m.cost.cache_write, 1.25);
        assert_eq!(m.context_window, 200_000);
        assert_eq!(m.max_tokens, 64_000);
        assert_eq!(m.compat_bool("supportsStrictTools"), Some(true));
    }

    #[test]
    fn thinking_level_map_survives_parsing() {
        let m = get_builtin_model("anthropic", "claude-fable-5").expect("model");
        let levels = m.supported_thinking_levels();
        assert!(!levels.contains(&ModelThinkingLevel::Off));
        assert!(levels.contains(&ModelThinkingLevel::Max));
    }

    #[test]
    fn lookups_are_exact() {
        assert!(get_builtin_model("anthropic", "CLAUDE-HAIKU-4-5").is_none());
        assert!(get_builtin_model("nope", "claude-haiku-4-5").is_none());
        assert!(builtin_models_for("nope").is_empty());
        assert!(
            builtin_models_for("openai")
                .iter()
                .all(|m| m.provider == "openai")
        );
    }
}
