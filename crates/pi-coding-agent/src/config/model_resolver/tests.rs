//! Ported from pi's offline `model-resolver.test.ts` (adapted to 0.85 defaults), plus the CLI
//! resolution and start-up choice rules.

use super::*;
use pi_ai::{InputKind, ModelCost};
use std::collections::HashSet;

fn model(provider: &str, id: &str, name: &str, reasoning: bool) -> Model {
    Model {
        id: id.into(),
        name: name.into(),
        api: "anthropic-messages".into(),
        provider: provider.into(),
        base_url: format!("https://{provider}.example"),
        reasoning,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 128_000,
        max_tokens: 8192,
        ..Default::default()
    }
}

fn all_models() -> Vec<Model> {
    vec![
        model("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5", true),
        model("openai", "gpt-4o", "GPT-4o", false),
        model(
            "openrouter",
            "qwen/qwen3-coder:exacto",
            "Qwen3 Coder Exacto",
            true,
        ),
        model(
            "openrouter",
            "openai/gpt-4o:extended",
            "GPT-4o Extended",
            false,
        ),
    ]
}

struct Source {
    models: Vec<Model>,
    authed: HashSet<String>,
}

impl Source {
    fn new(models: Vec<Model>, authed: &[&str]) -> Self {
        Source {
            models,
            authed: authed.iter().map(|s| s.to_string()).collect(),
        }
    }
}

impl ModelSource for Source {
    fn all_models(&self) -> Vec<&Model> {
        self.models.iter().collect()
    }
    fn available_models(&self) -> Vec<&Model> {
        self.models
            .iter()
            .filter(|m| self.authed.contains(&m.provider))
            .collect()
    }
    fn provider_has_auth(&self, provider: &str) -> bool {
        self.authed.contains(provider)
    }
}

fn refs(models: &[Model]) -> Vec<&Model> {
    models.iter().collect()
}

use ModelThinkingLevel as L;

#[test]
fn exact_match_without_thinking_level() {
    let ms = all_models();
    let r = parse_model_pattern("claude-sonnet-4-5", &refs(&ms), true);
    assert_eq!(r.model.unwrap().id, "claude-sonnet-4-5");
    assert_eq!(r.thinking_level, None);
    assert_eq!(r.warning, None);
}

#[test]
fn partial_match_and_no_match() {
    let ms = all_models();
    assert_eq!(
        parse_model_pattern("sonnet", &refs(&ms), true)
            .model
            .unwrap()
            .id,
        "claude-sonnet-4-5"
    );
    let r = parse_model_pattern("nonexistent", &refs(&ms), true);
    assert!(r.model.is_none() && r.thinking_level.is_none() && r.warning.is_none());
}

#[test]
fn valid_thinking_level_suffixes() {
    let ms = all_models();
    let r = parse_model_pattern("sonnet:high", &refs(&ms), true);
    assert_eq!(r.model.unwrap().id, "claude-sonnet-4-5");
    assert_eq!(r.thinking_level, Some(L::High));
    let r = parse_model_pattern("gpt-4o:medium", &refs(&ms), true);
    assert_eq!(r.model.unwrap().id, "gpt-4o");
    assert_eq!(r.thinking_level, Some(L::Medium));
    for level in ["off", "minimal", "low", "medium", "high", "xhigh", "max"] {
        let r = parse_model_pattern(&format!("sonnet:{level}"), &refs(&ms), true);
        assert_eq!(r.model.unwrap().id, "claude-sonnet-4-5");
        assert_eq!(r.thinking_level, L::parse(level));
        assert_eq!(r.warning, None);
    }
}

#[test]
fn invalid_thinking_level_warns_in_scope_mode() {
    let ms = all_models();
    let r = parse_model_pattern("sonnet:random", &refs(&ms), true);
    assert_eq!(r.model.unwrap().id, "claude-sonnet-4-5");
    assert_eq!(r.thinking_level, None);
    assert_eq!(
        r.warning.as_deref(),
        Some(
            "Invalid thinking level \"random\" in pattern \"sonnet:random\". Using default instead."
        )
    );
    let r = parse_model_pattern("gpt-4o:invalid", &refs(&ms), true);
    assert_eq!(r.model.unwrap().id, "gpt-4o");
    assert!(r.warning.unwrap().contains("Invalid thinking level"));
    // Strict (CLI) mode: no fallback.
    assert!(
        parse_model_pattern("sonnet:random", &refs(&ms), false)
            .model
            .is_none()
    );
}

#[test]
fn openrouter_ids_with_colons() {
    let ms = all_models();
    let r = parse_model_pattern("qwen/qwen3-coder:exacto", &refs(&ms), true);
    assert_eq!(r.model.unwrap().id, "qwen/qwen3-coder:exacto");
    assert_eq!((r.thinking_level, r.warning), (None, None));
    let r = parse_model_pattern("openrouter/qwen/qwen3-coder:exacto", &refs(&ms), true);
    assert_eq!(r.model.unwrap().provider, "openrouter");
    let r = parse_model_pattern("qwen/qwen3-coder:exacto:high", &refs(&ms), true);
    assert_eq!(r.model.unwrap().id, "qwen/qwen3-coder:exacto");
    assert_eq!(r.thinking_level, Some(L::High));
    let r = parse_model_pattern("openrouter/qwen/qwen3-coder:exacto:high", &refs(&ms), true);
    assert_eq!(r.model.unwrap().provider, "openrouter");
    assert_eq!(r.thinking_level, Some(L::High));
    let r = parse_model_pattern("openai/gpt-4o:extended", &refs(&ms), true);
    assert_eq!(r.model.unwrap().id, "openai/gpt-4o:extended");
    assert_eq!(r.thinking_level, None);
}

#[test]
fn invalid_levels_with_openrouter_ids() {
    let ms = all_models();
    let r = parse_model_pattern("qwen/qwen3-coder:exacto:random", &refs(&ms), true);
    assert_eq!(r.model.unwrap().id, "qwen/qwen3-coder:exacto");
    assert_eq!(r.thinking_level, None);
    assert!(r.warning.unwrap().contains("random"));
    let r = parse_model_pattern("qwen/qwen3-coder:exacto:high:random", &refs(&ms), true);
    assert_eq!(r.model.unwrap().id, "qwen/qwen3-coder:exacto");
    assert_eq!(r.thinking_level, None);
    assert!(r.warning.unwrap().contains("random"));
}

#[test]
fn edge_cases() {
    let ms = all_models();
    let r = parse_model_pattern("", &refs(&ms), true);
    assert!(r.model.is_some());
    assert_eq!(r.thinking_level, None);
    let r = parse_model_pattern("sonnet:", &refs(&ms), true);
    assert_eq!(r.model.unwrap().id, "claude-sonnet-4-5");
    assert!(r.warning.unwrap().contains("Invalid thinking level"));
}

#[test]
fn aliases_beat_dated_versions() {
    let ms = vec![
        model(
            "anthropic",
            "claude-haiku-4-5-20251001",
            "Claude Haiku 4.5",
            true,
        ),
        model(
            "anthropic",
            "claude-haiku-4-5",
            "Claude Haiku 4.5 (latest)",
            true,
        ),
        model(
            "anthropic",
            "claude-3-5-haiku-20241022",
            "Claude 3.5 Haiku",
            true,
        ),
    ];
    assert_eq!(
        parse_model_pattern("haiku", &refs(&ms), true)
            .model
            .unwrap()
            .id,
        "claude-haiku-4-5"
    );
    let dated = vec![ms[0].clone(), ms[2].clone()];
    assert_eq!(
        parse_model_pattern("haiku", &refs(&dated), true)
            .model
            .unwrap()
            .id,
        "claude-haiku-4-5-20251001"
    );
}

#[test]
fn ambiguous_bare_id_is_no_exact_match() {
    let ms = vec![
        model("a", "same", "S", false),
        model("b", "same", "S", false),
    ];
    assert!(find_exact_model_reference_match("same", &refs(&ms)).is_none());
    assert_eq!(
        find_exact_model_reference_match("B/SAME", &refs(&ms))
            .unwrap()
            .provider,
        "b"
    );
}

#[test]
fn scope_with_provider_id_pattern_and_glob_with_level() {
    let ms = vec![
        model(
            "google-antigravity",
            "claude-sonnet-4-5",
            "Claude Sonnet 4.5",
            true,
        ),
        model(
            "google-antigravity",
            "gemini-3-flash",
            "Gemini 3 Flash",
            true,
        ),
        model("anthropic", "claude-sonnet-4-5", "Claude Sonnet 4.5", true),
    ];
    let (scoped, d) =
        resolve_model_scope(&["google-antigravity/claude-sonnet-4-5".into()], &refs(&ms));
    assert!(d.is_empty());
    assert_eq!(scoped.len(), 1);
    assert_eq!(scoped[0].model.provider, "google-antigravity");
    let (scoped, _) = resolve_model_scope(&["google-antigravity/*:high".into()], &refs(&ms));
    assert_eq!(scoped.len(), 2);
    assert!(
        scoped
            .iter()
            .all(|s| s.model.provider == "google-antigravity")
    );
    assert!(scoped.iter().all(|s| s.thinking_level == Some(L::High)));
}

#[test]
fn scope_globs_match_ids_dedupe_and_warn() {
    let ms = vec![
        model("google-antigravity", "claude-sonnet-4-5", "S", true),
        model("anthropic", "claude-sonnet-4-5", "S", true),
        model("openai", "gpt-4o", "G", false),
    ];
    let (scoped, d) = resolve_model_scope(
        &[
            "*SONNET*".into(),
            "anthropic/claude-sonnet-4-5".into(),
            "nope*".into(),
            "zzz".into(),
        ],
        &refs(&ms),
    );
    assert_eq!(scoped.len(), 2);
    assert_eq!(
        d.iter().map(|x| x.message.as_str()).collect::<Vec<_>>(),
        vec![
            "No models match pattern \"nope*\"",
            "No models match pattern \"zzz\""
        ]
    );
    let (_, d) = resolve_model_scope(&["gpt-4o:bad".into()], &refs(&ms));
    assert_eq!(d[0].code, "invalid-thinking-level");
}

#[test]
fn default_models_per_provider() {
    assert_eq!(
        default_model_for_test("vercel-ai-gateway"),
        Some("zai/glm-5.1")
    );
    assert_eq!(default_model_for_test("anthropic"), Some("claude-opus-4-8"));
    assert_eq!(default_model_for_test("nope"), None);
}

fn default_model_for_test(p: &str) -> Option<&'static str> {
    DEFAULT_MODEL_PER_PROVIDER
        .iter()
        .find(|(x, _)| *x == p)
        .map(|(_, id)| *id)
}

#[test]
fn initial_model_selects_provider_default_when_available() {
    let gw = model("vercel-ai-gateway", "zai/glm-5.1", "GLM", true);
    let other = model("vercel-ai-gateway", "aaa", "A", true);
    let s = Source::new(vec![other, gw], &["vercel-ai-gateway"]);
    let r = find_initial_model(&InitialModelOptions::default(), &s).unwrap();
    assert_eq!(r.model.unwrap().id, "zai/glm-5.1");
    assert_eq!(r.thinking_level, L::Medium);
}

#[test]
fn initial_model_priority() {
    let ms = all_models();
    let s = Source::new(ms.clone(), &["openai", "anthropic"]);
    let levels = vec![("openai/gpt-4o".to_owned(), L::Low)];
    // Settings default with auth wins over provider defaults; per-model level applies.
    let opts = InitialModelOptions {
        default_provider: Some("openai"),
        default_model_id: Some("gpt-4o"),
        default_thinking_level: Some(L::High),
        model_thinking_levels: &levels,
        ..Default::default()
    };
    let r = find_initial_model(&opts, &s).unwrap();
    assert_eq!(r.model.unwrap().id, "gpt-4o");
    assert_eq!(r.thinking_level, L::Low);
    // Settings default without auth is skipped: first available.
    let s2 = Source::new(ms.clone(), &["anthropic"]);
    let r = find_initial_model(&opts, &s2).unwrap();
    assert_eq!(r.model.unwrap().provider, "anthropic");
    assert_eq!(r.thinking_level, L::Medium);
    // Scoped models come first unless continuing.
    let scoped = vec![ScopedModel {
        model: ms[1].clone(),
        thinking_level: None,
    }];
    let opts = InitialModelOptions {
        scoped_models: &scoped,
        default_thinking_level: Some(L::Minimal),
        ..Default::default()
    };
    let r = find_initial_model(&opts, &s2).unwrap();
    assert_eq!(r.model.unwrap().id, "gpt-4o");
    assert_eq!(r.thinking_level, L::Minimal);
    let opts = InitialModelOptions {
        is_continuing: true,
        ..opts
    };
    assert_eq!(
        find_initial_model(&opts, &s2)
            .unwrap()
            .model
            .unwrap()
            .provider,
        "anthropic"
    );
    // Nothing available.
    let s3 = Source::new(ms, &[]);
    assert_eq!(
        find_initial_model(&InitialModelOptions::default(), &s3)
            .unwrap()
            .model,
        None
    );
}

#[test]
fn cli_model_provider_slash_and_errors() {
    let s = Source::new(all_models(), &[]);
    let r = resolve_cli_model(None, Some("openai/gpt-4o"), None, &s);
    assert_eq!(r.model.unwrap().provider, "openai");
    let r = resolve_cli_model(Some("OpenAI"), Some("gpt-4o"), None, &s);
    assert_eq!(r.model.unwrap().id, "gpt-4o");
    let r = resolve_cli_model(Some("openai"), Some("openai/gpt-4o"), None, &s);
    assert_eq!(r.model.unwrap().id, "gpt-4o");
    let r = resolve_cli_model(Some("nope"), Some("x"), None, &s);
    assert_eq!(
        r.error.as_deref(),
        Some("Unknown provider \"nope\". Use --list-models to see available providers/models.")
    );
    let r = resolve_cli_model(None, Some("x/y"), None, &s);
    assert_eq!(
        r.error.as_deref(),
        Some("Model \"x/y\" not found. Use --list-models to see available models.")
    );
    let r = resolve_cli_model(None, Some("sonnet:high"), None, &s);
    assert_eq!(r.model.unwrap().id, "claude-sonnet-4-5");
    assert_eq!(r.thinking_level, Some(L::High));
    // Strict mode: an invalid suffix is part of the id, so nothing matches.
    let r = resolve_cli_model(None, Some("sonnet:bogus"), None, &s);
    assert_eq!(
        r.error.as_deref(),
        Some("Model \"sonnet:bogus\" not found. Use --list-models to see available models.")
    );
}

#[test]
fn cli_openrouter_style_id_falls_back_to_raw_match() {
    let s = Source::new(all_models(), &[]);
    let r = resolve_cli_model(None, Some("openai/gpt-4o:extended"), None, &s);
    let m = r.model.unwrap();
    assert_eq!(m.provider, "openrouter");
    assert_eq!(m.id, "openai/gpt-4o:extended");
}

#[test]
fn cli_unknown_id_for_known_provider_builds_custom_model() {
    let mut ms = all_models();
    ms.push(model("openai", "gpt-5.5", "GPT-5.5", true));
    let s = Source::new(ms, &[]);
    let r = resolve_cli_model(None, Some("openai/brand-new:high"), None, &s);
    let m = r.model.unwrap();
    assert_eq!(m.id, "brand-new");
    assert_eq!(m.name, "brand-new");
    assert_eq!(m.base_url, "https://openai.example");
    assert!(
        m.reasoning,
        "requested thinking makes the custom model reasoning"
    );
    assert_eq!(r.thinking_level, Some(L::High));
    assert_eq!(
        r.warning.as_deref(),
        Some("Model \"brand-new\" not found for provider \"openai\". Using custom model id.")
    );
}

#[test]
fn cli_ambiguous_bare_id() {
    let ms = vec![
        model("a", "same", "S", false),
        model("b", "same", "S", false),
    ];
    let s = Source::new(ms.clone(), &[]);
    let r = resolve_cli_model(None, Some("same"), None, &s);
    assert_eq!(
        r.error.as_deref(),
        Some(
            "Model \"same\" is ambiguous across providers: a/same, b/same. No matching provider is authenticated. Use --provider or provider/model."
        )
    );
    let s = Source::new(ms.clone(), &["a", "b"]);
    assert!(
        resolve_cli_model(None, Some("same"), None, &s)
            .error
            .unwrap()
            .contains("More than one matching provider is authenticated.")
    );
    let s = Source::new(ms, &["b"]);
    assert_eq!(
        resolve_cli_model(None, Some("same"), None, &s)
            .model
            .unwrap()
            .provider,
        "b"
    );
}

#[test]
fn restore_from_session() {
    let ms = all_models();
    let s = Source::new(ms.clone(), &["openai"]);
    let r = restore_model_from_session("openai", "gpt-4o", None, &s);
    assert_eq!(r.model.unwrap().id, "gpt-4o");
    assert_eq!(r.fallback_message, None);
    let r = restore_model_from_session("anthropic", "claude-sonnet-4-5", None, &s);
    assert_eq!(
        r.fallback_message.as_deref(),
        Some(
            "Could not restore model anthropic/claude-sonnet-4-5 (no auth configured). Using openai/gpt-4o."
        )
    );
    let r = restore_model_from_session("x", "gone", Some(&ms[2]), &s);
    assert_eq!(
        r.fallback_message.as_deref(),
        Some(
            "Could not restore model x/gone (model no longer exists). Using openrouter/qwen/qwen3-coder:exacto."
        )
    );
}

#[test]
fn session_choice_thinking_rules() {
    let ms = all_models();
    let s = Source::new(ms.clone(), &["anthropic", "openai"]);
    let levels = vec![("anthropic/claude-sonnet-4-5".to_owned(), L::Xhigh)];
    // New session: per-model level, clamped (no xhigh mapping → high).
    let c = choose_session_model(
        &SessionModelInputs {
            default_provider: Some("anthropic"),
            default_model_id: Some("claude-sonnet-4-5"),
            model_thinking_levels: &levels,
            ..Default::default()
        },
        &s,
    );
    assert_eq!(c.model.as_ref().unwrap().id, "claude-sonnet-4-5");
    assert_eq!(c.thinking_level, L::High);
    // Non-reasoning model clamps everything to off.
    let c = choose_session_model(
        &SessionModelInputs {
            model: Some(ms[1].clone()),
            thinking_level: Some(L::High),
            ..Default::default()
        },
        &s,
    );
    assert_eq!(c.thinking_level, L::Off);
    // Existing session: its model and its branch level.
    let c = choose_session_model(
        &SessionModelInputs {
            has_existing_session: true,
            session_model: Some(("anthropic", "claude-sonnet-4-5")),
            session_thinking_level: Some(L::Low),
            ..Default::default()
        },
        &s,
    );
    assert_eq!(c.model.unwrap().provider, "anthropic");
    assert_eq!(c.thinking_level, L::Low);
    assert_eq!(c.fallback_message, None);
    // Existing session whose model lost auth.
    let s2 = Source::new(ms.clone(), &["openai"]);
    let c = choose_session_model(
        &SessionModelInputs {
            has_existing_session: true,
            session_model: Some(("anthropic", "claude-sonnet-4-5")),
            ..Default::default()
        },
        &s2,
    );
    assert_eq!(
        c.fallback_message.as_deref(),
        Some("Could not restore model anthropic/claude-sonnet-4-5. Using openai/gpt-4o")
    );
    // Nothing usable: no model, off.
    let s3 = Source::new(ms, &[]);
    let c = choose_session_model(&SessionModelInputs::default(), &s3);
    assert_eq!(c.model, None);
    assert_eq!(c.thinking_level, L::Off);
}

#[test]
fn cycling_over_scope_or_available() {
    let ms = all_models();
    let s = Source::new(ms.clone(), &["anthropic", "openai"]);
    // All available (2 models): wraps both ways.
    let n = next_model_in_cycle(&[], Some(&ms[0]), true, &s).unwrap();
    assert_eq!(n.model.id, "gpt-4o");
    assert!(!n.is_scoped);
    let n = next_model_in_cycle(&[], Some(&ms[0]), false, &s).unwrap();
    assert_eq!(n.model.id, "gpt-4o");
    let n = next_model_in_cycle(&[], Some(&ms[1]), true, &s).unwrap();
    assert_eq!(n.model.id, "claude-sonnet-4-5");
    // Scope: unavailable entries are skipped; one usable model → no cycle.
    let scoped = vec![
        ScopedModel {
            model: ms[2].clone(),
            thinking_level: Some(L::High),
        },
        ScopedModel {
            model: ms[1].clone(),
            thinking_level: Some(L::Low),
        },
    ];
    assert!(next_model_in_cycle(&scoped, Some(&ms[1]), true, &s).is_none());
    let s2 = Source::new(ms.clone(), &["anthropic", "openai", "openrouter"]);
    let n = next_model_in_cycle(&scoped, Some(&ms[2]), true, &s2).unwrap();
    assert_eq!(
        (n.model.id.as_str(), n.scoped_level, n.is_scoped),
        ("gpt-4o", Some(L::Low), true)
    );
    // Unknown current counts as the first.
    let n = next_model_in_cycle(&scoped, None, true, &s2).unwrap();
    assert_eq!(n.model.id, "gpt-4o");
    // Single available model.
    let s3 = Source::new(ms.clone(), &["openai"]);
    assert!(next_model_in_cycle(&[], Some(&ms[1]), true, &s3).is_none());
}

#[test]
fn switch_level_priority() {
    let m = model("openai", "gpt-4o", "G", false);
    let per = vec![("openai/gpt-4o".to_owned(), L::Low)];
    assert_eq!(
        thinking_level_for_switch(&m, Some(L::High), &per, Some(L::Minimal), Some(L::Xhigh)),
        L::High
    );
    assert_eq!(
        thinking_level_for_switch(&m, None, &per, Some(L::Minimal), Some(L::Xhigh)),
        L::Low
    );
    assert_eq!(
        thinking_level_for_switch(&m, None, &[], Some(L::Minimal), Some(L::Xhigh)),
        L::Minimal
    );
    assert_eq!(
        thinking_level_for_switch(&m, None, &[], None, Some(L::Xhigh)),
        L::Xhigh
    );
    assert_eq!(
        thinking_level_for_switch(&m, None, &[], None, None),
        L::Medium
    );
}

/// With `AWS_PROFILE` and an Anthropic key pi starts on Bedrock (first in its order), and so
/// does pi-rs now that it calls Bedrock. A model of an API nobody registered goes after the
/// callable ones; with nothing callable, the order is pi's.
#[test]
fn initial_model_prefers_a_provider_default_pi_rs_can_call() {
    let mut bedrock = model(
        "amazon-bedrock",
        "us.anthropic.claude-opus-4-6-v1",
        "Opus",
        true,
    );
    bedrock.api = "bedrock-converse-stream".into();
    let anthropic = model("anthropic", "claude-opus-4-8", "Opus 4.8", true);
    let s = Source::new(
        vec![bedrock.clone(), anthropic.clone()],
        &["amazon-bedrock", "anthropic"],
    );
    let r = find_initial_model(&InitialModelOptions::default(), &s).unwrap();
    assert_eq!(r.model.unwrap().provider, "amazon-bedrock");
    let mut unregistered = bedrock.clone();
    unregistered.api = "no-such-api".into();
    let s = Source::new(
        vec![unregistered.clone(), anthropic],
        &["amazon-bedrock", "anthropic"],
    );
    let r = find_initial_model(&InitialModelOptions::default(), &s).unwrap();
    assert_eq!(r.model.unwrap().provider, "anthropic");
    let only_unregistered = Source::new(vec![unregistered], &["amazon-bedrock"]);
    let r = find_initial_model(&InitialModelOptions::default(), &only_unregistered).unwrap();
    assert_eq!(r.model.unwrap().provider, "amazon-bedrock");
}
