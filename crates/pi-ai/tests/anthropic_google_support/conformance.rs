//! Conformance-scenario helpers: the replay models of `run_pi.py`, the golden `message_end`
//! records, per-request contexts rebuilt from the goldens, and the harness's request
//! normalization (README rules 1, 10, 11).

use pi_ai::providers::WireRequest;
use pi_ai::{Context, Message, Model, ModelCost, Tool};
use serde_json::{Map, Value, json};

use super::{data, data_json};

/// The scenario's model as `run_pi.py` `models_json` defines it.
pub(crate) fn replay_model(scenario: &str) -> Model {
    let script = data_json(&format!("conformance/{scenario}/script.json"));
    let api = script["api"]
        .as_str()
        .unwrap_or("anthropic-messages")
        .to_owned();
    let id = script["model"]
        .as_str()
        .unwrap_or("replay-model")
        .to_owned();
    let (provider, suffix) = match api.as_str() {
        "anthropic-messages" => ("replay-anthropic", ""),
        "google-generative-ai" => ("replay-google", "/v1beta"),
        other => panic!("unexpected api {other}"),
    };
    Model {
        name: id.clone(),
        reasoning: id == "replay-thinker",
        id,
        api,
        provider: provider.into(),
        base_url: format!("http://127.0.0.1:4321{suffix}"),
        context_window: 128_000,
        max_tokens: 16_384,
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            tiers: None,
        },
        ..Default::default()
    }
}

/// The scenario's `args` (e.g. `--thinking high`).
pub(crate) fn script_args(scenario: &str) -> Vec<String> {
    let script = data_json(&format!("conformance/{scenario}/script.json"));
    script["args"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

/// The SSE files of the scenario's replies, in order.
pub(crate) fn replies(scenario: &str) -> Vec<Vec<u8>> {
    let script = data_json(&format!("conformance/{scenario}/script.json"));
    script["responses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            data(&format!(
                "conformance/{scenario}/{}",
                r["sse"].as_str().unwrap()
            ))
        })
        .collect()
}

/// The messages of the golden `message_end` records, in order.
pub(crate) fn golden_messages(scenario: &str) -> Vec<Value> {
    let text = String::from_utf8(data(&format!("conformance/{scenario}/stdout.jsonl"))).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "message_end")
        .map(|r| r["message"].clone())
        .collect()
}

/// The golden request records.
pub(crate) fn golden_requests(scenario: &str) -> Vec<Value> {
    let text = String::from_utf8(data(&format!("conformance/{scenario}/requests.jsonl"))).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A golden message as a pi [`Message`] (normalized timestamps become 0).
pub(crate) fn to_message(golden: &Value) -> Message {
    let mut v = golden.clone();
    v["timestamp"] = json!(0);
    serde_json::from_value(v).unwrap()
}

/// The context of request `k`: the golden messages before the `k`-th assistant message, a
/// system prompt (masked in the comparison) and the tools of the golden request (their
/// descriptions are masked too, so any text does).
pub(crate) fn context_for(scenario: &str, k: usize, request: &Value) -> Context {
    let mut messages = Vec::new();
    let mut assistants = 0;
    for m in golden_messages(scenario) {
        if m["role"] == "assistant" {
            if assistants == k {
                break;
            }
            assistants += 1;
        }
        messages.push(to_message(&m));
    }
    let tools = tools_of(&request["body"]);
    Context {
        system_prompt: Some("You are a test assistant.".into()),
        messages,
        tools: (!tools.is_empty()).then_some(tools),
    }
}

fn tools_of(body: &Value) -> Vec<Tool> {
    let tool = |name: &Value, schema: &Value| Tool {
        name: name.as_str().unwrap().to_owned(),
        description: "A tool.".into(),
        parameters: schema.clone(),
        constrained_sampling: None,
    };
    match body.get("tools").and_then(Value::as_array) {
        None => Vec::new(),
        Some(tools) => tools
            .iter()
            .flat_map(|t| match t.get("functionDeclarations") {
                Some(Value::Array(decls)) => decls
                    .iter()
                    .map(|d| tool(&d["name"], &d["parametersJsonSchema"]))
                    .collect::<Vec<_>>(),
                _ => vec![tool(&t["name"], &t["input_schema"])],
            })
            .collect(),
    }
}

fn mask_descriptions(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "description" && x.is_string() {
                    *x = json!("<DESCRIPTION>");
                } else {
                    mask_descriptions(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(mask_descriptions),
        _ => {}
    }
}

/// The harness's view of a request: kept headers (platform masked), path, query, model
/// (Google) and the body with prose masked.
pub(crate) fn normalize_request(r: &WireRequest) -> Value {
    const KEEP: [&str; 7] = [
        "content-type",
        "authorization",
        "x-api-key",
        "x-goog-api-key",
        "anthropic-version",
        "anthropic-beta",
        "user-agent",
    ];
    let platform = regex::Regex::new(r"\([^)]*\)").unwrap();
    let mut headers = Map::new();
    for (k, v) in &r.headers {
        let k = k.to_ascii_lowercase();
        if KEEP.contains(&k.as_str()) {
            let v = if k == "user-agent" {
                platform.replace_all(v, "(<PLATFORM>)").into_owned()
            } else {
                v.clone()
            };
            headers.insert(k, v.into());
        }
    }
    let after_host = r.url.split_once("://").unwrap().1;
    let path_query = &after_host[after_host.find('/').unwrap()..];
    let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
    let mut q = Map::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        q.insert(k.into(), json!([v]));
    }
    let mut body = r.body.clone();
    let b = body.as_object_mut().unwrap();
    for key in ["system", "systemInstruction"] {
        if b.contains_key(key) {
            b.insert(key.into(), json!("<SYSTEM_PROMPT>"));
        }
    }
    if let Some(tools) = b.get_mut("tools") {
        mask_descriptions(tools);
    }
    let mut out = json!({ "path": path, "query": q, "headers": headers, "body": body });
    if let Some(model) = path.rsplit_once("/models/").map(|(_, m)| m) {
        out["model"] = json!(model.split(':').next().unwrap());
    }
    out
}

/// The golden request restricted to the fields [`normalize_request`] produces.
pub(crate) fn golden_view(golden: &Value) -> Value {
    let mut out = json!({
        "path": golden["path"],
        "query": golden["query"],
        "headers": golden["headers"],
        "body": golden["body"],
    });
    if let Some(model) = golden.get("model") {
        out["model"] = model.clone();
    }
    out
}
