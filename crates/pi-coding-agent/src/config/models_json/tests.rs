//! models.json parsing and composition.

use super::*;
use serde_json::json;
use std::path::PathBuf;

fn parse(v: &str) -> ModelsConfig {
    ModelsConfig::parse(v, Path::new("/cfg/models.json"))
}

fn base_model(id: &str, api: &str) -> Model {
    Model {
        id: id.into(),
        name: format!("Base {id}"),
        api: api.into(),
        provider: "prov".into(),
        base_url: "https://base".into(),
        reasoning: true,
        input: vec![InputKind::Text, InputKind::Image],
        cost: ModelCost {
            input: 1.0,
            output: 2.0,
            cache_read: 0.1,
            cache_write: 0.2,
            tiers: None,
        },
        context_window: 200_000,
        max_tokens: 8_000,
        compat: Some(json!({"supportsStore": false}).as_object().unwrap().clone()),
        ..Default::default()
    }
}

#[test]
fn conformance_harness_file_loads() {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/config/conformance-models.json"
    ));
    let config = ModelsConfig::load(&path);
    assert_eq!(config.error, None);
    let ids: Vec<&str> = config.providers.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        ids,
        vec![
            "replay-anthropic",
            "replay-openai",
            "replay-responses",
            "replay-google"
        ]
    );
    let p = config.provider("replay-openai").unwrap();
    let models = compose_provider_models("replay-openai", &[], Some(p)).unwrap();
    assert_eq!(models.len(), 2);
    let m = &models[1];
    assert_eq!(m.id, "replay-thinker");
    assert_eq!(m.name, "replay-thinker");
    assert_eq!(m.api, "openai-completions");
    assert_eq!(m.base_url, "http://127.0.0.1:4321/v1");
    assert!(m.reasoning);
    assert_eq!(m.input, vec![InputKind::Text]);
    assert_eq!(m.cost.cache_write, 3.75);
    assert_eq!(m.context_window, 128_000);
    assert_eq!(m.max_tokens, 16_384);
}

#[test]
fn comments_trailing_commas_and_bom_are_accepted() {
    let c = parse(
        "\u{feff}{\n // mine\n \"providers\": {\"p\": {\"baseUrl\": \"u\", \"api\": \"openai-completions\", \"models\": [{\"id\": \"m\",},],},},\n}",
    );
    assert_eq!(c.error, None);
    assert_eq!(c.providers.len(), 1);
}

#[test]
fn parse_error_names_file_and_line() {
    let c = parse("{\n  \"providers\": {\n    \"p\": [1 2]\n  }\n}");
    let e = c.error.unwrap();
    assert!(e.starts_with("Failed to parse models.json: "), "{e}");
    assert!(e.contains("line 3"), "{e}");
    assert!(e.ends_with("\n\nFile: /cfg/models.json"), "{e}");
    assert!(c.providers.is_empty());
}

#[test]
fn schema_errors_name_the_place() {
    let e = parse(r#"{"nope": 1}"#).error.unwrap();
    assert_eq!(
        e,
        "Invalid models.json schema:\n  - providers: must have required properties providers\n\nFile: /cfg/models.json"
    );
    // The reference's text for a wrong type (from the TS pi).
    let e = parse(
        "{\"providers\": {\"p\": {\"models\": [\n  {\"id\": \"m\",\n   \"reasoning\": \"yes\"}]}}}",
    )
    .error
    .unwrap();
    assert_eq!(
        e,
        "Invalid models.json schema:\n  - providers.p.models.0.reasoning: must be boolean\n\nFile: /cfg/models.json"
    );
}

#[test]
fn missing_file_is_empty_without_error() {
    let c = ModelsConfig::load(Path::new("/definitely/not/here/models.json"));
    assert!(c.error.is_none());
    assert!(c.providers.is_empty());
}

#[test]
fn custom_model_defaults_and_required_fields() {
    let c =
        parse(r#"{"providers": {"p": {"api": "openai-completions", "models": [{"id": "m"}]}}}"#);
    let err = compose_provider_models("p", &[], c.provider("p"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "Provider p: \"baseUrl\" is required when defining custom models."
    );
    let c = parse(r#"{"providers": {"p": {"baseUrl": "u", "models": [{"id": "m"}]}}}"#);
    let err = compose_provider_models("p", &[], c.provider("p"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "Provider p, model m: no \"api\" specified. Set at provider or model level."
    );
    let c = parse(
        r#"{"providers": {"p": {"baseUrl": "u", "api": "x", "models": [{"id": "m", "maxTokens": 0}]}}}"#,
    );
    let err = compose_provider_models("p", &[], c.provider("p"))
        .unwrap_err()
        .to_string();
    assert_eq!(err, "Provider p, model m: invalid maxTokens");
    let c = parse(r#"{"providers": {"p": {}}}"#);
    let err = compose_provider_models("p", &[], c.provider("p"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "Provider p: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\"."
    );
}

#[test]
fn overlay_on_builtin_models() {
    let base = vec![
        base_model("a", "openai-completions"),
        base_model("b", "openai-completions"),
    ];
    let c = parse(
        r#"{"providers": {"prov": {
            "baseUrl": "https://proxy",
            "compat": {"supportsDeveloperRole": false},
            "models": [{"id": "b", "contextWindow": 1000}, {"id": "c"}],
            "modelOverrides": {"a": {"name": "Renamed", "cost": {"output": 9}, "compat": {"supportsStore": true}}}
        }}}"#,
    );
    let models = compose_provider_models("prov", &base, c.provider("prov")).unwrap();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, vec!["a", "b", "c"]);
    let a = &models[0];
    assert_eq!(a.base_url, "https://proxy");
    assert_eq!(a.name, "Renamed");
    assert_eq!(a.cost.output, 9.0);
    assert_eq!(a.cost.input, 1.0);
    assert_eq!(
        a.compat.as_ref().unwrap(),
        json!({"supportsStore": true, "supportsDeveloperRole": false})
            .as_object()
            .unwrap()
    );
    // A definition replaces the model of the same id (defaults are not inherited, only api/url).
    let b = &models[1];
    assert_eq!(b.name, "b");
    assert_eq!(b.context_window, 1000);
    assert!(!b.reasoning);
    assert_eq!(b.api, "openai-completions");
    // A new id takes api from a base model of the provider.
    assert_eq!(models[2].api, "openai-completions");
    assert_eq!(models[2].base_url, "https://proxy");
}

#[test]
fn compat_merge_goes_one_level_into_routing() {
    let base = json!({"openRouterRouting": {"only": ["a"]}, "x": 1});
    let over = json!({"openRouterRouting": {"order": ["b"]}});
    let m = merge_compat(base.as_object(), over.as_object()).unwrap();
    assert_eq!(
        Value::Object(m),
        json!({"openRouterRouting": {"only": ["a"], "order": ["b"]}, "x": 1})
    );
}

#[test]
fn headers_provider_then_override_then_definition() {
    let c = parse(
        r#"{"providers": {"p": {"baseUrl": "u", "api": "a",
            "headers": {"x-a": "1", "x-b": "1"},
            "modelOverrides": {"m": {"headers": {"x-b": "2", "x-c": "2"}}},
            "models": [{"id": "m", "headers": {"x-c": "3"}}]}}}"#,
    );
    let h = configured_headers(c.provider("p"), "m");
    assert_eq!(
        h,
        vec![
            ("x-a".to_owned(), "1".to_owned()),
            ("x-b".to_owned(), "2".to_owned()),
            ("x-c".to_owned(), "3".to_owned())
        ]
    );
    assert_eq!(configured_headers(c.provider("p"), "other").len(), 2);
}
