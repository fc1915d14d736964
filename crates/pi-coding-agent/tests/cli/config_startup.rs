//! Start-up configuration end to end, through the public API, in temp dirs: the agent
//! directory the conformance harness writes, and a fresh machine.

use std::fs;
use std::path::Path;

use pi_ai::ModelThinkingLevel;
use pi_coding_agent::config::agent_paths::AgentPaths;
use pi_coding_agent::config::model_resolver::{
    InitialModelOptions, SessionModelInputs, choose_session_model, find_initial_model,
    format_no_api_key_found, resolve_cli_model, resolve_model_scope,
};
use pi_coding_agent::config::registry::ModelRegistry;
use pi_coding_agent::config::settings::SettingsManager;

fn no_env(_: &str) -> Option<String> {
    None
}

fn harness_agent_dir(root: &Path) -> AgentPaths {
    let agent = root.join("agent");
    fs::create_dir_all(&agent).unwrap();
    fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/config/conformance-models.json"
        ),
        agent.join("models.json"),
    )
    .unwrap();
    fs::write(
        agent.join("settings.json"),
        r#"{"retry": {"baseDelayMs": 50}}"#,
    )
    .unwrap();
    AgentPaths::new(agent)
}

#[test]
fn harness_setup_resolves_the_cli_model() {
    let tmp = tempfile::tempdir().unwrap();
    let paths = harness_agent_dir(tmp.path());
    let registry = ModelRegistry::load(&paths).with_env_key_lookup(no_env);
    assert_eq!(registry.error(), None);
    assert!(paths.auth().exists(), "auth.json is created on load");

    let r = resolve_cli_model(
        Some("replay-openai"),
        Some("replay-thinker"),
        None,
        &registry,
    );
    let model = r.model.unwrap();
    assert_eq!(model.api, "openai-completions");
    assert!(model.base_url.ends_with("/v1"));
    assert_eq!(
        registry.api_key(&model.provider).unwrap().as_deref(),
        Some("replay-test-key")
    );

    let settings = SettingsManager::load(&tmp.path().join("work"), &paths.dir, true);
    assert_eq!(settings.retry().base_delay_ms, 50);
    let levels = settings.all_model_thinking_levels();
    let choice = choose_session_model(
        &SessionModelInputs {
            model: Some(model.clone()),
            thinking_level: Some(ModelThinkingLevel::Xhigh),
            default_thinking_level: settings.default_thinking_level(),
            model_thinking_levels: &levels,
            ..Default::default()
        },
        &registry,
    );
    // xhigh is not mapped for a custom model: clamped down to high.
    assert_eq!(choice.thinking_level, ModelThinkingLevel::High);

    let r = resolve_cli_model(None, Some("replay-x/y"), None, &registry);
    assert_eq!(
        r.error.as_deref(),
        Some("Model \"replay-x/y\" not found. Use --list-models to see available models.")
    );
    let (scoped, diagnostics) =
        resolve_model_scope(&["replay-google/*:low".into()], &registry.available());
    assert_eq!(scoped.len(), 2);
    assert!(diagnostics.is_empty());
}

#[test]
fn fresh_machine_has_no_model_and_the_generic_no_key_text() {
    let tmp = tempfile::tempdir().unwrap();
    let paths = AgentPaths::new(tmp.path().join("agent"));
    let registry = ModelRegistry::load(&paths).with_env_key_lookup(no_env);
    assert!(registry.available().is_empty());
    let initial = find_initial_model(&InitialModelOptions::default(), &registry).unwrap();
    assert_eq!(initial.model, None);
    let text = format_no_api_key_found(None, Path::new("/docs"));
    assert!(text.starts_with("No API key found for the selected model.\n\n"));
    // With a model named on the command line the provider is named.
    let r = resolve_cli_model(None, Some("anthropic/claude-haiku-4-5"), None, &registry);
    let m = r.model.unwrap();
    assert!(!registry.has_configured_auth(&m.provider));
    assert!(
        format_no_api_key_found(Some(&m.provider), Path::new("/docs"))
            .starts_with("No API key found for anthropic.\n\n")
    );
}

fn five_env_keys(provider: &str) -> Option<String> {
    matches!(
        provider,
        "openai" | "groq" | "openrouter" | "google" | "anthropic"
    )
    .then(|| "k".to_owned())
}

#[test]
fn builtin_list_matches_the_reference() {
    // Golden: the TS pi's `--list-models` with OPENAI, GROQ, OPENROUTER, GEMINI and ANTHROPIC
    // keys set and no models.json.
    let tmp = tempfile::tempdir().unwrap();
    let paths = AgentPaths::new(tmp.path().join("agent"));
    let registry = ModelRegistry::load(&paths).with_env_key_lookup(five_env_keys);
    let out = pi_coding_agent::config::list_models::list_models(&registry, None, Path::new("/d"));
    let golden = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/config/list-models-builtin.txt"
    ));
    let ours: Vec<&str> = out.stdout.lines().collect();
    let theirs: Vec<&str> = golden.lines().collect();
    let missing: Vec<&&str> = theirs.iter().filter(|l| !ours.contains(l)).collect();
    let extra: Vec<&&str> = ours.iter().filter(|l| !theirs.contains(l)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:#?}\nextra {extra:#?}"
    );
    assert_eq!(out.stdout, golden);
}

fn groq_and_openai(provider: &str) -> Option<String> {
    matches!(provider, "groq" | "openai").then(|| "k".to_owned())
}

#[test]
fn provider_default_models_from_the_real_catalog() {
    let tmp = tempfile::tempdir().unwrap();
    let paths = AgentPaths::new(tmp.path().join("agent"));
    // openai comes before groq in the reference's priority list.
    let registry = ModelRegistry::load(&paths).with_env_key_lookup(groq_and_openai);
    let m = find_initial_model(&InitialModelOptions::default(), &registry)
        .unwrap()
        .model
        .unwrap();
    assert_eq!((m.provider.as_str(), m.id.as_str()), ("openai", "gpt-5.5"));
    // A settings default with auth wins over provider defaults.
    let opts = InitialModelOptions {
        default_provider: Some("groq"),
        default_model_id: Some("openai/gpt-oss-120b"),
        default_thinking_level: Some(ModelThinkingLevel::Low),
        ..Default::default()
    };
    let r = find_initial_model(&opts, &registry).unwrap();
    assert_eq!(r.model.unwrap().provider, "groq");
    assert_eq!(r.thinking_level, ModelThinkingLevel::Low);
}

#[test]
fn fuzzy_search_matches_the_reference() {
    // Goldens: the TS pi's `--list-models <query>` with the same five keys.
    let tmp = tempfile::tempdir().unwrap();
    let paths = AgentPaths::new(tmp.path().join("agent"));
    let registry = ModelRegistry::load(&paths).with_env_key_lookup(five_env_keys);
    let cases = [
        (
            "opus",
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/data/config/list-models-q-opus.txt"
            )),
        ),
        (
            "gemini flash",
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/data/config/list-models-q-gemini_flash.txt"
            )),
        ),
        (
            "o4",
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/data/config/list-models-q-o4.txt"
            )),
        ),
        (
            "kimi/k2",
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/data/config/list-models-q-kimi_k2.txt"
            )),
        ),
    ];
    for (query, golden) in cases {
        let out = pi_coding_agent::config::list_models::list_models(
            &registry,
            Some(query),
            Path::new("/d"),
        );
        assert_eq!(out.stdout, golden, "query {query:?}");
    }
}

#[test]
fn cli_resolution_over_the_real_catalog_matches_the_reference() {
    // Goldens: the TS pi's `resolveCliModel` (bundle build) with the same five keys.
    let tmp = tempfile::tempdir().unwrap();
    let paths = AgentPaths::new(tmp.path().join("agent"));
    let registry = ModelRegistry::load(&paths).with_env_key_lookup(five_env_keys);
    let cases: [(&str, &str, Option<ModelThinkingLevel>, Option<&str>); 12] = [
        (
            "sonnet",
            "amazon-bedrock/us.anthropic.claude-sonnet-5",
            None,
            None,
        ),
        (
            "opus:high",
            "amazon-bedrock/us.anthropic.claude-opus-5",
            Some(ModelThinkingLevel::High),
            None,
        ),
        ("gpt-4o", "openai/gpt-4o", None, None),
        ("anthropic/haiku", "anthropic/claude-haiku-4-5", None, None),
        (
            "openai/gpt-4o:extended",
            "openai/gpt-4o:extended",
            None,
            Some(
                "Model \"gpt-4o:extended\" not found for provider \"openai\". Using custom model id.",
            ),
        ),
        ("flash", "vercel-ai-gateway/zai/glm-5.3-flash", None, None),
        (
            "gpt-oss",
            "cloudflare-ai-gateway/workers-ai/@cf/openai/gpt-oss-20b",
            None,
            None,
        ),
        ("claude-haiku-4-5", "anthropic/claude-haiku-4-5", None, None),
        (
            "kimi",
            "cloudflare-ai-gateway/workers-ai/@cf/moonshotai/kimi-k2.7-code",
            None,
            None,
        ),
        ("openrouter/auto", "openrouter/auto", None, None),
        ("groq/llama", "groq/llama-3.3-70b-versatile", None, None),
        (
            "o3:low",
            "openrouter/openai/o3:batch",
            Some(ModelThinkingLevel::Low),
            None,
        ),
    ];
    for (pattern, expected, level, warning) in cases {
        let r = resolve_cli_model(None, Some(pattern), None, &registry);
        let m = r
            .model
            .unwrap_or_else(|| panic!("{pattern}: {:?}", r.error));
        assert_eq!(format!("{}/{}", m.provider, m.id), expected, "{pattern}");
        assert_eq!(r.thinking_level, level, "{pattern}");
        assert_eq!(r.warning.as_deref(), warning, "{pattern}");
    }
}
