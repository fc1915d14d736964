//! Recorded real provider streams through the `pi` binary, as the shared harness's
//! `check_streams.py` does: each stream is the first reply of a json-mode run (a plain text
//! reply follows so a tool-use stream can finish; retries off), and the first assistant
//! `message_end` is compared with the stream's `expected.json` (content, stopReason, usage
//! without cost, responseId, error presence; where the reference is wrong, the corrected
//! value in `correct_behaviour_differs_from_reference`).
//!
//! The 25 streams are vendored once, by pi-ai: the bodies under
//! `crates/pi-ai/tests/data/sse/streams/<api>/`, the expectations under
//! `crates/pi-ai/tests/data/streams/<api>/` (Anthropic, Google) and
//! `crates/pi-ai/tests/data/openai/expected/<api>/` (both OpenAI APIs).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::conformance::pyjson::splitlines;
use super::conformance::run::run_scenario;

/// The follow-up text reply per wire API (`check_streams.FOLLOW`).
pub(crate) fn follow_up(api: &str) -> &'static str {
    match api {
        "anthropic-messages" => concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_f\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        ),
        "openai-completions" => concat!(
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":null}]}\n\n",
            "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n",
        ),
        "openai-responses" => concat!(
            "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_f\",\"status\":\"in_progress\",\"output\":[]}}\n\n",
            "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":\"msg_f\",\"role\":\"assistant\",\"content\":[]}}\n\n",
            "event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"item_id\":\"msg_f\",\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\"}}\n\n",
            "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_f\",\"output_index\":0,\"content_index\":0,\"delta\":\"ok\"}\n\n",
            "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":\"msg_f\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"ok\"}]}}\n\n",
            "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_f\",\"status\":\"completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1,\"total_tokens\":2}}}\n\n",
        ),
        _ => {
            "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"ok\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":1,\"candidatesTokenCount\":1,\"totalTokenCount\":2}}\n\n"
        }
    }
}

/// pi-ai's vendored test data.
pub(crate) fn pi_ai_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../pi-ai/tests/data")
}

/// Every recorded stream: (api, name, body path, expected.json path), sorted.
pub(crate) fn streams() -> Vec<(String, String, PathBuf, PathBuf)> {
    let data = pi_ai_data();
    let mut out = Vec::new();
    for api in [
        "anthropic-messages",
        "google-generative-ai",
        "openai-completions",
        "openai-responses",
    ] {
        let mut names: Vec<String> = std::fs::read_dir(data.join("sse/streams").join(api))
            .unwrap()
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_string_lossy()
                    .strip_suffix(".sse")
                    .map(str::to_owned)
            })
            .collect();
        names.sort();
        for name in names {
            let expected = [
                data.join("streams").join(api),
                data.join("openai/expected").join(api),
            ]
            .into_iter()
            .map(|d| d.join(format!("{name}.expected.json")))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("no expected.json for {api}/{name}"));
            let body = data
                .join("sse/streams")
                .join(api)
                .join(format!("{name}.sse"));
            out.push((api.to_owned(), name, body, expected));
        }
    }
    out
}

/// Python `==` on JSON values (`5 == 5.0`).
pub(crate) fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => a == b,
    }
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// `check_streams.strip`.
pub(crate) fn strip(msg: &Value) -> Value {
    let mut content = msg.get("content").cloned().unwrap_or(Value::Null);
    if let Value::Array(blocks) = &mut content {
        for b in blocks {
            let generated = b["type"] == "toolCall"
                && b.get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| id.starts_with("<generated"));
            if generated {
                b["id"] = json!("<generated>");
            }
        }
    }
    let mut usage = msg
        .get("usage")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    usage.shift_remove("cost");
    json!({
        "content": content,
        "stopReason": msg.get("stopReason").cloned().unwrap_or(Value::Null),
        "responseId": msg.get("responseId").cloned().unwrap_or(Value::Null),
        "usage": usage,
        "hasError": truthy(msg.get("errorMessage")),
    })
}

/// The first assistant `message_end` message of a json-mode stdout.
pub(crate) fn first_assistant(stdout: &str) -> Option<Value> {
    splitlines(stdout).into_iter().find_map(|line| {
        let ev: Value = serde_json::from_str(line).ok()?;
        (ev["type"] == "message_end" && ev["message"]["role"] == "assistant")
            .then(|| ev["message"].clone())
    })
}

fn concat_blocks(blocks: &[Value], kind: &str, field: &str) -> String {
    blocks
        .iter()
        .filter(|b| b["type"] == kind)
        .filter_map(|b| b.get(field).and_then(Value::as_str))
        .collect()
}

/// `check_streams.check_correct`: `Err(reason)` when `got` misses the corrected result.
pub(crate) fn check_correct(got: &Value, fix: &Value) -> Result<(), String> {
    let blocks = got["content"].as_array().cloned().unwrap_or_default();
    let mut bad = Vec::new();
    if let Some(want) = fix.get("toolCalls") {
        let calls: Vec<Value> = blocks
            .iter()
            .filter(|b| b["type"] == "toolCall")
            .map(|b| json!({"name": b.get("name"), "arguments": b.get("arguments")}))
            .collect();
        if !py_eq(&Value::Array(calls), want) {
            bad.push("toolCalls");
        }
    }
    for (key, kind) in [("thinking", "thinking"), ("text", "text")] {
        if let Some(want) = fix.get(key)
            && Some(concat_blocks(&blocks, kind, key).as_str()) != want.as_str()
        {
            bad.push(key);
        }
    }
    if let Some(want) = fix.get("stopReason")
        && !py_eq(&got["stopReason"], want)
    {
        bad.push("stopReason");
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "differs from the correct result in {}",
            bad.join(",")
        ))
    }
}

/// Runs one recorded stream through `pi`; `Err(reason)` on a mismatch.
pub(crate) async fn check_stream(pi: &Path, body: &Path, expected: &Path) -> Result<(), String> {
    let exp: Value = serde_json::from_str(&std::fs::read_to_string(expected).unwrap()).unwrap();
    let api = exp["replay_model"]["api"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let dir = tempfile::Builder::new()
        .prefix("stream-")
        .tempdir()
        .unwrap();
    std::fs::copy(body, dir.path().join("01.sse")).unwrap();
    std::fs::write(dir.path().join("02.sse"), follow_up(&api)).unwrap();
    let script = json!({"api": api, "prompt": "go", "responses": [{"sse": "01.sse"}, {"sse": "02.sse"}],
                        "settings": {"retry": {"enabled": false}}, "timeout": 60});
    std::fs::write(dir.path().join("script.json"), script.to_string()).unwrap();
    let raw = run_scenario(dir.path(), pi).await;
    let Some(got) = first_assistant(&raw.stdout) else {
        return Err(format!(
            "no assistant message_end (exit {}, stderr {:?})",
            raw.exit_code, raw.stderr
        ));
    };
    if let Some(fix) = exp.get("correct_behaviour_differs_from_reference") {
        return check_correct(&got, fix);
    }
    let want = strip(&exp["message"]);
    let mut got = strip(&got);
    let want_generated = want["content"].as_array().is_some_and(|c| {
        c.iter()
            .any(|b| b["type"] == "toolCall" && b["id"] == "<generated>")
    });
    if want_generated && let Some(blocks) = got["content"].as_array_mut() {
        for b in blocks.iter_mut().filter(|b| b["type"] == "toolCall") {
            b["id"] = json!("<generated>");
        }
    }
    let diffs: Vec<&str> = ["content", "stopReason", "responseId", "usage", "hasError"]
        .into_iter()
        .filter(|k| !py_eq(&want[*k], &got[*k]))
        .collect();
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "differs in {}\nwant {}\ngot  {}",
            diffs.join(","),
            want,
            got
        ))
    }
}
