//! The no-model / no-key texts.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/auth-guidance.js`. `docs_dir` is the installed
//! documentation directory (pi's `getDocsPath()`).

use std::path::Path;

/// The `--api-key` diagnostic when no model was chosen.
pub const API_KEY_REQUIRES_MODEL: &str =
    "--api-key requires a model to be specified via --model, --provider/--model, or --models";

/// `Use /login to log into a provider via OAuth or API key. See:` + the two doc paths.
pub fn provider_login_help(docs_dir: &Path) -> String {
    format!(
        "Use /login to log into a provider via OAuth or API key. See:\n  {}\n  {}",
        docs_dir.join("providers.md").display(),
        docs_dir.join("models.md").display()
    )
}

/// `No models available. <help>` (only `--list-models` prints it with exit 0).
pub fn format_no_models_available(docs_dir: &Path) -> String {
    format!("No models available. {}", provider_login_help(docs_dir))
}

/// `No model selected.\n\n<help>\n\nThen use /model to select a model.`
pub fn format_no_model_selected(docs_dir: &Path) -> String {
    format!(
        "No model selected.\n\n{}\n\nThen use /model to select a model.",
        provider_login_help(docs_dir)
    )
}

/// The lines after `No API key found for …` (pi-rs's own: pi's point at its TUI's `/login`):
/// how to give pi-rs a key or a local server, and where it is documented
/// (`<docs_dir>/../README.md`, `<docs_dir>/providers.md`).
pub(super) fn api_key_help(docs_dir: &Path) -> String {
    let readme = docs_dir
        .parent()
        .map_or_else(|| docs_dir.join("README.md"), |p| p.join("README.md"));
    format!(
        "Set the provider's API key in the environment (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY, \
         GEMINI_API_KEY) or pass --api-key, or add a local OpenAI-compatible server (Ollama, \
         llama.cpp, vLLM) to models.json. See:\n  {}\n  {}",
        readme.display(),
        docs_dir.join("providers.md").display()
    )
}

/// `No API key found for <provider>.\n\n<help>`; with no resolved model (`None`, pi's
/// `"unknown"` provider) the provider reads `the selected model`. The first line is pi's
/// verbatim; the help is `api_key_help`.
pub fn format_no_api_key_found(provider: Option<&str>, docs_dir: &Path) -> String {
    let who = match provider {
        None | Some("unknown") => "the selected model",
        Some(p) => p,
    };
    format!("No API key found for {who}.\n\n{}", api_key_help(docs_dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts() {
        let d = Path::new("/pkg/docs");
        assert_eq!(
            format_no_api_key_found(Some("anthropic"), d),
            "No API key found for anthropic.\n\nSet the provider's API key in the environment (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY) or pass --api-key, or add a local OpenAI-compatible server (Ollama, llama.cpp, vLLM) to models.json. See:\n  /pkg/README.md\n  /pkg/docs/providers.md"
        );
        assert!(
            format_no_api_key_found(None, d)
                .starts_with("No API key found for the selected model.\n\n")
        );
        assert!(format_no_models_available(d).starts_with("No models available. Use /login"));
        assert!(format_no_model_selected(d).ends_with("\n\nThen use /model to select a model."));
    }
}
