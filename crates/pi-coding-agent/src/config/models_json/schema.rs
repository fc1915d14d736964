//! The `models.json` schema check with the reference's error texts.
//!
//! Mirrors the TypeBox schema of pi-coding-agent 0.85.0 `core/model-config.js` and TypeBox's
//! en_US messages: `<path>: must be <type>`, `must be equal to constant`, `must match a schema
//! in anyOf` (after every branch's errors), `must not have fewer than 1 characters`, and
//! `<path>.<first missing>: must have required properties <all missing>`; paths are dotted
//! (`providers.p.models.0.input.1`), `root` for the top. Additional properties are allowed.
//! Deeply nested routing objects inside `compat` are not checked.

use serde_json::Value;

/// A schema node.
enum S {
    Str { min_len: usize },
    Num,
    Bool,
    Null,
    Unknown,
    Const(&'static str),
    Array(Box<S>),
    Record(Box<S>),
    Object(Vec<(&'static str, S, bool)>),
    AnyOf(Vec<S>),
}

fn opt(name: &'static str, s: S) -> (&'static str, S, bool) {
    (name, s, false)
}

fn req(name: &'static str, s: S) -> (&'static str, S, bool) {
    (name, s, true)
}

fn string() -> S {
    S::Str { min_len: 0 }
}

fn non_empty() -> S {
    S::Str { min_len: 1 }
}

fn consts(values: &[&'static str]) -> S {
    S::AnyOf(values.iter().map(|v| S::Const(v)).collect())
}

fn thinking_level_map() -> S {
    let v = || S::AnyOf(vec![string(), S::Null]);
    S::Object(
        ["off", "minimal", "low", "medium", "high", "xhigh", "max"]
            .into_iter()
            .map(|k| opt(k, v()))
            .collect(),
    )
}

fn kwarg() -> S {
    S::AnyOf(vec![
        string(),
        S::Num,
        S::Bool,
        S::Null,
        S::Object(vec![
            req("$var", consts(&["thinking.enabled", "thinking.effort"])),
            opt("omitWhenOff", S::Bool),
        ]),
    ])
}

fn compat() -> S {
    let affinity = || consts(&["openai", "openai-nosession", "openrouter"]);
    let completions = S::Object(vec![
        opt("supportsStore", S::Bool),
        opt("supportsDeveloperRole", S::Bool),
        opt("supportsReasoningEffort", S::Bool),
        opt("supportsUsageInStreaming", S::Bool),
        opt("supportsFinishReason", S::Bool),
        opt(
            "maxTokensField",
            consts(&["max_completion_tokens", "max_tokens"]),
        ),
        opt("requiresToolResultName", S::Bool),
        opt("requiresAssistantAfterToolResult", S::Bool),
        opt("requiresThinkingAsText", S::Bool),
        opt("requiresReasoningContentOnAssistantMessages", S::Bool),
        opt(
            "thinkingFormat",
            consts(&[
                "openai",
                "openrouter",
                "together",
                "baseten",
                "deepseek",
                "zai",
                "qwen",
                "chat-template",
                "qwen-chat-template",
                "string-thinking",
                "ant-ling",
            ]),
        ),
        opt("chatTemplateKwargs", S::Record(Box::new(kwarg()))),
        opt("chatTemplateArgs", S::Record(Box::new(kwarg()))),
        opt("cacheControlFormat", S::Const("anthropic")),
        opt("openRouterRouting", S::Unknown),
        opt("vercelGatewayRouting", S::Unknown),
        opt("supportsOpenAIGrammarTools", S::Bool),
        opt("supportsStrictMode", S::Bool),
        opt("sendSessionAffinityHeaders", S::Bool),
        opt("deferredToolsMode", S::Const("kimi")),
        opt("sessionAffinityFormat", affinity()),
        opt("supportsLongCacheRetention", S::Bool),
        opt("vllmPriority", S::Num),
    ]);
    let responses = S::Object(vec![
        opt("supportsDeveloperRole", S::Bool),
        opt("sessionAffinityFormat", affinity()),
        opt("supportsLongCacheRetention", S::Bool),
        opt("supportsStrictMode", S::Bool),
        opt("supportsOpenAIGrammarTools", S::Bool),
        opt("supportsAdditionalTools", S::Bool),
        opt("supportsToolSearch", S::Bool),
        opt("supportsMaxOutputTokens", S::Bool),
    ]);
    let anthropic = S::Object(vec![
        opt("supportsEagerToolInputStreaming", S::Bool),
        opt("supportsLongCacheRetention", S::Bool),
        opt("sendSessionAffinityHeaders", S::Bool),
        opt("supportsCacheControlOnTools", S::Bool),
        opt("supportsTemperature", S::Bool),
        opt("forceAdaptiveThinking", S::Bool),
        opt("allowEmptySignature", S::Bool),
        opt("supportsStrictTools", S::Bool),
        opt("supportsMidConvoEffort", S::Bool),
        opt("supportsToolReferences", S::Bool),
    ]);
    S::AnyOf(vec![completions, responses, anthropic])
}

fn rates(required: bool) -> Vec<(&'static str, S, bool)> {
    ["input", "output", "cacheRead", "cacheWrite"]
        .into_iter()
        .map(|k| (k, S::Num, required))
        .collect()
}

fn tier() -> S {
    let mut fields = vec![req("inputTokensAbove", S::Num)];
    fields.extend(rates(true));
    S::Object(fields)
}

fn model_fields(definition: bool) -> Vec<(&'static str, S, bool)> {
    let mut f = Vec::new();
    if definition {
        f.push(req("id", non_empty()));
    }
    f.push(opt("name", non_empty()));
    if definition {
        f.push(opt("api", non_empty()));
        f.push(opt("baseUrl", non_empty()));
    }
    f.push(opt("reasoning", S::Bool));
    f.push(opt("thinkingLevelMap", thinking_level_map()));
    f.push(opt("input", S::Array(Box::new(consts(&["text", "image"])))));
    let mut cost = rates(definition);
    cost.push(opt("tiers", S::Array(Box::new(tier()))));
    f.push(opt("cost", S::Object(cost)));
    f.push(opt("contextWindow", S::Num));
    f.push(opt("maxTokens", S::Num));
    f.push(opt("samplingParams", S::Record(Box::new(S::Unknown))));
    f.push(opt("headers", S::Record(Box::new(string()))));
    f.push(opt("compat", compat()));
    f
}

fn models_json_schema() -> S {
    let provider = S::Object(vec![
        opt("name", non_empty()),
        opt("baseUrl", non_empty()),
        opt("apiKey", non_empty()),
        opt("api", non_empty()),
        opt("oauth", S::Const("radius")),
        opt("headers", S::Record(Box::new(string()))),
        opt("compat", compat()),
        opt("authHeader", S::Bool),
        opt("models", S::Array(Box::new(S::Object(model_fields(true))))),
        opt(
            "modelOverrides",
            S::Record(Box::new(S::Object(model_fields(false)))),
        ),
    ]);
    S::Object(vec![req("providers", S::Record(Box::new(provider)))])
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn shown(path: &str) -> String {
    if path.is_empty() {
        "root".to_owned()
    } else {
        path.to_owned()
    }
}

fn check(s: &S, v: &Value, path: &str, errors: &mut Vec<String>) {
    let mut err = |msg: &str| errors.push(format!("{}: {msg}", shown(path)));
    match s {
        S::Unknown => {}
        S::Str { min_len } => match v.as_str() {
            None => err("must be string"),
            Some(text) if text.encode_utf16().count() < *min_len => {
                err(&format!("must not have fewer than {min_len} characters"))
            }
            Some(_) => {}
        },
        S::Num => {
            if !v.is_number() {
                err("must be number")
            }
        }
        S::Bool => {
            if !v.is_boolean() {
                err("must be boolean")
            }
        }
        S::Null => {
            if !v.is_null() {
                err("must be null")
            }
        }
        S::Const(c) => {
            if v.as_str() != Some(c) {
                err("must be equal to constant")
            }
        }
        S::Array(item) => match v.as_array() {
            None => err("must be array"),
            Some(items) => {
                for (i, x) in items.iter().enumerate() {
                    check(item, x, &join(path, &i.to_string()), errors);
                }
            }
        },
        S::Record(value) => match v.as_object() {
            None => err("must be object"),
            Some(map) => {
                for (k, x) in map {
                    check(value, x, &join(path, k), errors);
                }
            }
        },
        S::Object(fields) => {
            let Some(map) = v.as_object() else {
                return err("must be object");
            };
            let missing: Vec<&str> = fields
                .iter()
                .filter(|(k, _, required)| *required && !map.contains_key(*k))
                .map(|(k, _, _)| *k)
                .collect();
            if let Some(first) = missing.first() {
                errors.push(format!(
                    "{}: must have required properties {}",
                    join(path, first),
                    missing.join(", ")
                ));
            }
            for (k, schema, _) in fields {
                if let Some(x) = map.get(*k) {
                    check(schema, x, &join(path, k), errors);
                }
            }
        }
        S::AnyOf(branches) => {
            let mut all = Vec::new();
            for b in branches {
                let mut branch = Vec::new();
                check(b, v, path, &mut branch);
                if branch.is_empty() {
                    return;
                }
                all.extend(branch);
            }
            errors.extend(all);
            errors.push(format!("{}: must match a schema in anyOf", shown(path)));
        }
    }
}

/// The schema errors of a parsed `models.json` (empty when valid), each `<path>: <message>`.
pub fn validate_models_json(value: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(&models_json_schema(), value, "", &mut errors);
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errs(v: Value) -> Vec<String> {
        validate_models_json(&v)
    }

    // Expected texts taken from the TS reference's output for the same files.
    #[test]
    fn reference_messages() {
        assert_eq!(
            errs(
                json!({"providers": {"p": {"models": [{"id": "m", "input": ["text", "video"]}]}}})
            ),
            vec![
                "providers.p.models.0.input.1: must be equal to constant",
                "providers.p.models.0.input.1: must be equal to constant",
                "providers.p.models.0.input.1: must match a schema in anyOf",
            ]
        );
        assert_eq!(
            errs(json!({"providers": {"p": {"models": [{"name": "m"}]}}})),
            vec!["providers.p.models.0.id: must have required properties id"]
        );
        assert_eq!(
            errs(json!({"providers": {"p": {"models": [{"id": ""}]}}})),
            vec!["providers.p.models.0.id: must not have fewer than 1 characters"]
        );
        assert_eq!(
            errs(json!({"providers": {"p": {"models": [{"id": "m", "cost": {"input": 1}}]}}})),
            vec![
                "providers.p.models.0.cost.output: must have required properties output, cacheRead, cacheWrite"
            ]
        );
        assert_eq!(
            errs(json!({"providers": {"p": {"models": {"id": "m"}}}})),
            vec!["providers.p.models: must be array"]
        );
        assert_eq!(
            errs(json!({"providers": {"p": 5}})),
            vec!["providers.p: must be object"]
        );
        assert_eq!(
            errs(json!({"provider": {}})),
            vec!["providers: must have required properties providers"]
        );
        assert_eq!(errs(json!([])), vec!["root: must be object"]);
        assert!(errs(json!({"providers": {"p": {"compat": {"supportsStore": "x"}}}})).is_empty());
        assert_eq!(
            errs(json!({"providers": {"p": {"headers": {"a": 1}, "apiKey": 5, "extra": true}}})),
            vec![
                "providers.p.apiKey: must be string",
                "providers.p.headers.a: must be string"
            ]
        );
        assert_eq!(
            errs(
                json!({"providers": {"p": {"models": [{"id": "m", "contextWindow": "big", "thinkingLevelMap": {"low": 3}}]}}})
            ),
            vec![
                "providers.p.models.0.thinkingLevelMap.low: must be string",
                "providers.p.models.0.thinkingLevelMap.low: must be null",
                "providers.p.models.0.thinkingLevelMap.low: must match a schema in anyOf",
                "providers.p.models.0.contextWindow: must be number",
            ]
        );
        assert_eq!(
            errs(
                json!({"providers": {"p": {"modelOverrides": {"m": {"reasoning": 1}}, "oauth": "x"}}})
            ),
            vec![
                "providers.p.oauth: must be equal to constant",
                "providers.p.modelOverrides.m.reasoning: must be boolean",
            ]
        );
    }

    #[test]
    fn valid_files_pass() {
        let conformance: Value = serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/config/conformance-models.json"
        )))
        .unwrap();
        assert!(validate_models_json(&conformance).is_empty());
        assert!(errs(json!({"providers": {}})).is_empty());
    }
}
