//! Conformance scenarios of the TS reference over both OpenAI wire APIs: the final assistant
//! messages (with cost), the streamed event projections, the HTTP error text, and the request
//! bodies and headers (normalized as the harness does, rule 11: system prompt and tool
//! descriptions masked; the Context is rebuilt from the golden run).

use crate::openai_support;

use openai_support::{Chunking, data, replay_model};
use pi_ai::event::{AssistantMessageEvent, PartialMessage};
use pi_ai::providers::WireApi;
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::sse::SseParser;
use pi_ai::types::{AssistantMessage, Context, Message, StopReason, StreamOptions, Tool};
use serde_json::{Value, json};

const SESSION: &str = "3f9c2a4e-8b1d-4c6e-9f0a-1b2c3d4e5f60";

struct Scenario {
    api: Box<dyn WireApi>,
    provider: &'static str,
    api_id: &'static str,
}

fn scenario(name: &'static str) -> Scenario {
    let script: Value = read_json(&format!("openai/conformance/{name}/script.json"));
    match script["api"].as_str().unwrap() {
        "openai-completions" => Scenario {
            api: Box::new(OpenAiCompletions),
            provider: "replay-openai",
            api_id: "openai-completions",
        },
        _ => Scenario {
            api: Box::new(OpenAiResponses),
            provider: "replay-responses",
            api_id: "openai-responses",
        },
    }
}

fn read_json(rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(data(rel)).unwrap()).unwrap()
}

fn read_jsonl(rel: &str) -> Vec<Value> {
    std::fs::read_to_string(data(rel))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Golden `message_end` messages in order, timestamps restored to numbers.
fn golden_messages(name: &str) -> Vec<Value> {
    read_jsonl(&format!("openai/conformance/{name}/stdout.jsonl"))
        .into_iter()
        .filter(|e| e["type"] == "message_end")
        .map(|e| {
            let mut m = e["message"].clone();
            m["timestamp"] = json!(0);
            m
        })
        .collect()
}

/// Golden `assistantMessageEvent` projections of each assistant response, in order.
fn golden_event_runs(name: &str) -> Vec<Vec<Value>> {
    let mut runs = Vec::new();
    let mut cur: Option<Vec<Value>> = None;
    for e in read_jsonl(&format!("openai/conformance/{name}/stdout.jsonl")) {
        match e["type"].as_str() {
            Some("message_start") if e["message"]["role"] == "assistant" => cur = Some(Vec::new()),
            Some("message_update") => {
                if let Some(c) = cur.as_mut() {
                    c.push(e["assistantMessageEvent"].clone());
                }
            }
            Some("message_end") if e["message"]["role"] == "assistant" => {
                runs.push(cur.take().unwrap_or_default())
            }
            _ => {}
        }
    }
    runs
}

/// One attempt through the mini driver: SSE → mapper → final message and projections.
fn replay(s: &Scenario, sse: &[u8]) -> (AssistantMessage, Vec<Value>) {
    let model = replay_model(s.api_id, s.provider, "replay-model");
    let run = openai_support::run_stream(s.api.as_ref(), &model, sse, Chunking::Bytes(7));
    // Event projections (the json-mode `assistantMessageEvent`s) from a second, whole-body run.
    let partial = PartialMessage::new(AssistantMessage::empty(
        s.api_id,
        s.provider,
        "replay-model",
    ));
    let mut mapper = s
        .api
        .new_mapper(&model, partial.clone(), &StreamOptions::default());
    let mut parser = SseParser::new();
    let mut sse_events = Vec::new();
    parser.feed(sse, &mut sse_events).unwrap();
    parser.finish(&mut sse_events).unwrap();
    let mut events: Vec<AssistantMessageEvent> = Vec::new();
    for e in &sse_events {
        mapper.on_event(e, &mut events).unwrap();
    }
    mapper.on_end(&mut events).unwrap();
    let projections = events
        .iter()
        .map(AssistantMessageEvent::to_json_projection)
        .collect();
    (run.message, projections)
}

/// The message as pi-rs writes it (JavaScript number spelling), re-read for comparison.
fn normalize_message(m: &AssistantMessage) -> Value {
    let mut v: Value = serde_json::from_str(&pi_ai::json::to_string(m).unwrap()).unwrap();
    v["timestamp"] = json!(0);
    v["role"] = json!("assistant");
    v
}

/// Final assistant messages (cost included) and their event projections equal the goldens.
fn check_messages(name: &'static str) {
    let s = scenario(name);
    let script: Value = read_json(&format!("openai/conformance/{name}/script.json"));
    let golden: Vec<Value> = golden_messages(name)
        .into_iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    let golden_events = golden_event_runs(name);
    let responses = script["responses"].as_array().unwrap();
    assert_eq!(
        golden.len(),
        responses.len(),
        "{name}: one message per reply"
    );
    for (i, reply) in responses.iter().enumerate() {
        if let Some(file) = reply["sse"].as_str() {
            let bytes =
                std::fs::read(data(&format!("sse/conformance/scenarios/{name}/{file}"))).unwrap();
            let (message, projections) = replay(&s, &bytes);
            assert_eq!(
                normalize_message(&message),
                golden[i],
                "{name}: assistant message #{i}"
            );
            assert_eq!(
                projections, golden_events[i],
                "{name}: events of reply #{i}"
            );
        } else {
            // An HTTP error reply: the driver fails the attempt with `format_http_error`.
            let status = reply["status"].as_u64().unwrap() as u16;
            let body = pi_ai::json::to_string(&reply["body"]).unwrap();
            let mut m = AssistantMessage::empty(s.api_id, s.provider, "replay-model");
            m.stop_reason = StopReason::Error;
            m.error_message = Some(s.api.format_http_error(status, &body));
            assert_eq!(normalize_message(&m), golden[i], "{name}: HTTP error #{i}");
        }
    }
}

#[test]
fn text_openai_completions_messages() {
    check_messages("text_openai_completions");
}

#[test]
fn tool_parallel_ls_read_messages() {
    check_messages("tool_parallel_ls_read");
}

#[test]
fn retry_http_500_messages() {
    check_messages("retry_http_500");
}

#[test]
fn text_openai_responses_messages() {
    check_messages("text_openai_responses");
}

#[test]
fn tool_bash_messages() {
    check_messages("tool_bash");
}

/// Rule 11: system/developer content and every tool `description` masked; the session id
/// becomes `<UUID>`.
fn mask(v: &mut Value, in_tools: bool) {
    match v {
        Value::Object(o) => {
            let is_system = matches!(
                o.get("role").and_then(Value::as_str),
                Some("system" | "developer")
            );
            for (k, child) in o.iter_mut() {
                if in_tools && k == "description" {
                    *child = json!("<DESCRIPTION>");
                } else if is_system && k == "content" {
                    *child = json!("<SYSTEM_PROMPT>");
                } else {
                    mask(child, in_tools || k == "tools");
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| mask(x, in_tools)),
        Value::String(s) if s == SESSION => *s = "<UUID>".into(),
        _ => {}
    }
}

/// The Context of request `seq`: the golden system prompt placeholder, the golden tools, and
/// the messages before the `seq`-th reply (failed attempts are not part of the retried
/// context).
fn rebuild_context(name: &str, golden_body: &Value, seq: usize) -> Context {
    let tools_json = golden_body["tools"].as_array().cloned().unwrap_or_default();
    let tools: Vec<Tool> = tools_json
        .iter()
        .map(|t| {
            let f = if t.get("function").is_some() {
                &t["function"]
            } else {
                t
            };
            Tool {
                name: f["name"].as_str().unwrap().to_owned(),
                description: "described by pi-rs".into(),
                parameters: f["parameters"].clone(),
                constrained_sampling: None,
            }
        })
        .collect();
    let mut messages = Vec::new();
    let mut replies = 0;
    for m in golden_messages(name) {
        if m["role"] == "assistant" {
            if replies == seq {
                break;
            }
            replies += 1;
            if m["stopReason"] == "error" {
                continue;
            }
        }
        messages.push(serde_json::from_value::<Message>(m).unwrap());
    }
    Context {
        system_prompt: Some("You are pi-rs under test.".into()),
        messages,
        tools: (!tools.is_empty()).then_some(tools),
    }
}

/// Request bodies (after masking) and the compared headers equal the goldens.
fn check_requests(name: &'static str) {
    let s = scenario(name);
    let model = replay_model(s.api_id, s.provider, "replay-model");
    for req in read_jsonl(&format!("openai/conformance/{name}/requests.jsonl")) {
        let seq = req["seq"].as_u64().unwrap() as usize;
        let ctx = rebuild_context(name, &req["body"], seq);
        let options = StreamOptions {
            session_id: Some(SESSION.into()),
            ..Default::default()
        };
        let wire = s
            .api
            .build_request(&model, &ctx, &options, "replay-test-key")
            .unwrap();
        let mut body = wire.body.clone();
        mask(&mut body, false);
        assert_eq!(body, req["body"], "{name}: request #{seq} body");
        let path = wire.url.strip_prefix("http://127.0.0.1:9").unwrap();
        assert_eq!(path, req["path"].as_str().unwrap(), "{name}: request path");
        let header = |n: &str| {
            wire.headers
                .iter()
                .rev()
                .find(|(k, _)| k.eq_ignore_ascii_case(n))
                .map(|(_, v)| v.clone())
        };
        let ua = header("user-agent").unwrap();
        let platform = ua
            .strip_prefix("pi (")
            .and_then(|r| r.strip_suffix(')'))
            .unwrap();
        assert!(!platform.is_empty(), "user-agent has a platform part: {ua}");
        let got = json!({
            "authorization": header("authorization"),
            "content-type": header("content-type"),
            "user-agent": "pi (<PLATFORM>)",
        });
        assert_eq!(got, req["headers"], "{name}: request #{seq} headers");
    }
}

#[test]
fn text_openai_completions_requests() {
    check_requests("text_openai_completions");
}

#[test]
fn tool_parallel_ls_read_requests() {
    check_requests("tool_parallel_ls_read");
}

#[test]
fn retry_http_500_requests() {
    check_requests("retry_http_500");
}

#[test]
fn text_openai_responses_requests() {
    check_requests("text_openai_responses");
}

#[test]
fn tool_bash_requests() {
    check_requests("tool_bash");
}
