//! The exact requests of the wire APIs ported from pi-ai 0.85.1, compared with what pi-ai
//! itself sends for the same model, context and options.
//!
//! The expectations in `data/requests/*.json` were captured from the installed reference by
//! `xtask/reference/capture-requests.mjs` (see that file for how to re-run it). pi-rs sends
//! no `x-stainless-*` SDK telemetry headers, so only the headers that carry meaning are
//! compared.

use std::path::Path;

use pi_ai::providers::{
    AzureOpenAiResponses, GoogleVertex, MistralConversations, ProviderEnv, WireApi,
};
use pi_ai::types::{Context, Model, StreamOptions, ThinkingLevel};
use serde_json::Value;

/// The host every captured `{base}` stands for.
const BASE: &str = "http://127.0.0.1:9";

struct Case {
    model: Model,
    context: Context,
    options: StreamOptions,
    env: ProviderEnv,
    api_key: String,
    request: Value,
}

fn load(name: &str) -> Case {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/requests/{name}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("{base}", BASE);
    let record: Value = serde_json::from_str(&text).unwrap();
    let model: Model = serde_json::from_value(record["model"].clone()).unwrap();
    let context: Context = serde_json::from_value(record["context"].clone()).unwrap();
    let o = &record["options"];
    // pi's `stream` takes the provider's own reasoning option (`reasoningEffort`,
    // `promptMode: "reasoning"`), which pi-rs derives from `reasoning`.
    let level = ["reasoningEffort", "reasoning"]
        .iter()
        .find_map(|k| o.get(*k))
        .map(|v| serde_json::from_value::<ThinkingLevel>(v.clone()).unwrap())
        .or_else(|| o.get("promptMode").map(|_| ThinkingLevel::Medium))
        // Gemini's `thinking: {enabled, level | budgetTokens}`: the cases use the budget or
        // level that `reasoning: medium` resolves to.
        .or_else(|| {
            (o["thinking"]["enabled"] == Value::Bool(true)).then_some(ThinkingLevel::Medium)
        });
    let options = StreamOptions {
        session_id: o["sessionId"].as_str().map(str::to_owned),
        max_tokens: o["maxTokens"].as_u64(),
        temperature: o["temperature"].as_f64(),
        reasoning: level,
        tool_choice: o.get("toolChoice").cloned(),
        cache_retention: o
            .get("cacheRetention")
            .map(|v| serde_json::from_value(v.clone()).unwrap()),
        request_metadata: o["requestMetadata"].as_object().map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                .collect()
        }),
        ..Default::default()
    };
    let env = ProviderEnv::fixed(
        record["env"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned())),
    );
    Case {
        model,
        context,
        options,
        env,
        api_key: o["apiKey"].as_str().unwrap_or("").to_owned(),
        request: record["request"].clone(),
    }
}

/// Builds the request and checks URL (path and query), body and the named headers against
/// the capture; the user agent is compared up to the kernel release.
fn check(api: &dyn WireApi, case: &Case, headers: &[&str]) {
    let built = api
        .build_request(&case.model, &case.context, &case.options, &case.api_key)
        .unwrap();
    let want = &case.request;
    // Captured URLs are paths on the capture server, or the full URL of a Google host.
    let url = built.url.strip_prefix(BASE).unwrap_or(&built.url);
    assert_eq!(url, want["url"].as_str().unwrap());
    assert_eq!(built.body, want["body"], "body");
    let get = |name: &str| {
        built
            .headers
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    for name in headers {
        assert_eq!(
            get(name).as_deref(),
            want["headers"][name].as_str(),
            "header {name}"
        );
    }
    let ua = get("user-agent").unwrap();
    let want_ua = want["headers"]["user-agent"].as_str().unwrap();
    let (prefix, suffix) = want_ua.split_once("{release}").unwrap();
    assert!(ua.starts_with(prefix) && ua.ends_with(suffix), "{ua}");
}

#[test]
fn azure_openai_responses_request_matches_pi() {
    for name in ["azure-openai-responses", "azure-openai-responses-resource"] {
        let case = load(name);
        let api = AzureOpenAiResponses::with_env(case.env.clone());
        check(&api, &case, &["api-key", "content-type", "accept"]);
    }
}

#[test]
fn mistral_conversations_request_matches_pi() {
    for name in ["mistral-conversations", "mistral-conversations-effort"] {
        let case = load(name);
        check(
            &MistralConversations,
            &case,
            &["authorization", "content-type", "accept", "x-affinity"],
        );
    }
}

#[test]
fn google_vertex_request_matches_pi() {
    for (name, headers) in [
        (
            "google-vertex-api-key",
            &["x-goog-api-key", "content-type"][..],
        ),
        ("google-vertex-adc", &["content-type"][..]),
        ("google-vertex-adc-global", &["content-type"][..]),
        ("google-vertex-custom-base", &["content-type"][..]),
    ] {
        let case = load(name);
        let api = GoogleVertex::with_env(case.env.clone());
        check(&api, &case, headers);
        // With ADC the bearer token is added when the request is sent (see `vertex_adc`).
        let built = api
            .build_request(&case.model, &case.context, &case.options, &case.api_key)
            .unwrap();
        let has_key = built.headers.iter().any(|(k, _)| k == "x-goog-api-key");
        assert_eq!(
            has_key,
            case.request["headers"].get("x-goog-api-key").is_some(),
            "{name}"
        );
    }
}

/// `YYYYMMDDTHHMMSSZ` as a time (the signature's `x-amz-date`).
fn amz_date(text: &str) -> std::time::SystemTime {
    let n = |r: std::ops::Range<usize>| text[r].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(4..6), n(6..8));
    // Days from the civil date (proleptic Gregorian), Howard Hinnant's algorithm.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + n(9..11) * 3600 + n(11..13) * 60 + n(13..15);
    std::time::UNIX_EPOCH + std::time::Duration::from_secs(u64::try_from(secs).unwrap())
}

/// Bedrock: the body byte for byte (its SHA-256 is the signed `x-amz-content-sha256`), the
/// path, and the SigV4 signature pi's SDK computed, re-made from the same headers and time;
/// `requestMetadata` (pi's `stream` option) as the last member, its pairs in order.
#[test]
fn bedrock_converse_stream_request_matches_pi() {
    use pi_ai::providers::bedrock::{BedrockAuth, resolve_auth, sign_request};
    use pi_ai::providers::{BedrockConverseStream, registry::clamp_max_tokens_to_context};
    use sha2::{Digest, Sha256};

    for name in [
        "bedrock-claude-budget",
        "bedrock-claude-adaptive",
        "bedrock-nova",
        "bedrock-request-metadata",
    ] {
        let mut case = load(name);
        // The capture ran `streamSimple`, which caps the output as `stream_simple` does.
        let requested = case.options.max_tokens.unwrap_or(case.model.max_tokens);
        case.options.max_tokens = Some(clamp_max_tokens_to_context(
            &case.model,
            &case.context,
            requested,
        ));
        let api = BedrockConverseStream::with_env(case.env.clone());
        let built = api
            .build_request(&case.model, &case.context, &case.options, "")
            .unwrap();
        let want = &case.request;
        let url = built.url.strip_prefix(BASE).unwrap();
        assert_eq!(url, want["url"].as_str().unwrap(), "{name}");
        assert_eq!(built.body, want["body"], "{name}");
        let bytes = pi_ai::json::to_vec(&built.body).unwrap();
        let hash: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let headers = &want["headers"];
        assert_eq!(
            hash,
            headers["x-amz-content-sha256"].as_str().unwrap(),
            "{name}: body bytes"
        );
        assert_eq!(
            bytes.len().to_string(),
            headers["content-length"].as_str().unwrap()
        );

        let BedrockAuth::SigV4(keys) = resolve_auth("", &case.env).unwrap() else {
            panic!("{name}: static keys");
        };
        let authorization = headers["authorization"].as_str().unwrap();
        let signed = authorization
            .split("SignedHeaders=")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .unwrap();
        let given: Vec<(String, String)> = signed
            .split(';')
            .filter(|h| !["x-amz-date", "x-amz-content-sha256", "x-amz-security-token"].contains(h))
            .map(|h| (h.to_owned(), headers[h].as_str().unwrap().to_owned()))
            .collect();
        let host = headers["host"].as_str().unwrap();
        let added = sign_request(
            &keys,
            "us-east-1",
            &format!("http://{host}{url}"),
            &given,
            &bytes,
            amz_date(headers["x-amz-date"].as_str().unwrap()),
        )
        .unwrap();
        let get = |n: &str| added.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        assert_eq!(
            get("authorization"),
            Some(authorization),
            "{name}: signature"
        );
        assert_eq!(get("x-amz-date"), headers["x-amz-date"].as_str());
        assert_eq!(
            get("x-amz-security-token"),
            headers["x-amz-security-token"].as_str()
        );
    }
}
