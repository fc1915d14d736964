//! Every recorded stream of the wire APIs (vendored from the shared `streams/` folder and from
//! public fixtures, see each folder's `SOURCES.md`) replayed whole, line by line, and in 1-byte
//! and 7-byte reads: the final message equals the reference's `message` (timestamp and cost
//! left out, Google's synthesized ids as `<generated>`) and the event sequence equals its
//! `events`.

use crate::anthropic_google_support;

use anthropic_google_support::{
    CHUNKINGS, data, data_json, event_summary, message_json, model, replay,
};
use pi_ai::providers::WireApi;

fn check(api: &dyn WireApi, name: &str) {
    let expected = data_json(&format!("streams/{name}.expected.json"));
    let body = data(&format!("streams/{name}.sse"));
    let rm = &expected["replay_model"];
    let m = model(
        rm["api"].as_str().unwrap(),
        rm["provider"].as_str().unwrap(),
        rm["model"].as_str().unwrap(),
    );
    let want_events: Vec<String> = expected["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect();
    for chunking in CHUNKINGS {
        let outcome = replay(api, &m, &body, chunking);
        let mut got = message_json(&outcome.message);
        let obj = got.as_object_mut().unwrap();
        obj.remove("timestamp");
        obj["usage"].as_object_mut().unwrap().remove("cost");
        anthropic_google_support::normalize_google_ids(&mut got, |_, _| "<generated>".into());
        assert_eq!(got, expected["message"], "{name} in {chunking:?}");
        assert_eq!(
            event_summary(&outcome.events),
            want_events,
            "{name} events in {chunking:?}"
        );
    }
}

fn all(api: &dyn WireApi, folder: &str, names: &[&str]) {
    let listed: Vec<String> = std::fs::read_dir(format!(
        "{}/tests/data/streams/{folder}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .filter_map(|e| {
        let name = e.unwrap().file_name().into_string().unwrap();
        name.strip_suffix(".expected.json").map(str::to_owned)
    })
    .collect();
    assert_eq!(
        listed.len(),
        names.len(),
        "every vendored stream with an expectation is listed: {listed:?}"
    );
    for name in names {
        check(api, &format!("{folder}/{name}"));
    }
}

#[test]
fn anthropic_recorded_streams() {
    all(
        &pi_ai::providers::AnthropicMessages,
        "anthropic-messages",
        &[
            "crlf-line-endings",
            "overloaded-error-mid-stream",
            "parallel-tool-use-empty-args",
            "redacted-thinking-two-blocks",
            "server-tool-then-client-tool-split-args",
            "stop-sequence-no-input-tokens-in-delta",
            "thinking-signature-text",
            "thinking-then-tool-use-caller-field",
        ],
    );
}

#[test]
fn google_recorded_streams() {
    all(
        &pi_ai::providers::GoogleGenerativeAi,
        "google-generative-ai",
        &[
            "function-call-with-signature-then-empty-text",
            "text-crlf",
            "thought-parts-then-text",
            "truncated-no-finish-reason",
            "utf8-degree-sign",
        ],
    );
}

#[test]
fn google_function_call_ids_are_synthesized_with_name_time_and_counter() {
    let m = model("google-generative-ai", "google", "gemini-3-pro-preview");
    let body =
        data("streams/google-generative-ai/function-call-with-signature-then-empty-text.sse");
    let before = pi_ai::now_ms();
    let outcome = replay(
        &pi_ai::providers::GoogleGenerativeAi,
        &m,
        &body,
        anthropic_google_support::Chunking::Whole,
    );
    let id = outcome.message.tool_calls().next().unwrap().id.clone();
    let parts: Vec<&str> = id.rsplitn(3, '_').collect();
    assert_eq!(parts[2], "get_country", "{id}");
    let ms: i64 = parts[1].parse().unwrap();
    assert!(ms >= before && ms <= pi_ai::now_ms(), "{id}");
    assert!(parts[0].parse::<u64>().unwrap() >= 1, "{id}");
}

#[test]
fn azure_recorded_streams() {
    all(
        &pi_ai::providers::AzureOpenAiResponses::default(),
        "azure-openai-responses",
        &["reasoning-encrypted-content", "text", "tool-call"],
    );
}

#[test]
fn mistral_recorded_streams() {
    all(
        &pi_ai::providers::MistralConversations,
        "mistral-conversations",
        &["incremental-tool-call", "reasoning", "text", "tool-call"],
    );
}

#[test]
fn vertex_recorded_streams() {
    all(
        &pi_ai::providers::GoogleVertex::default(),
        "google-vertex",
        &["reasoning", "text", "tool-call"],
    );
}

/// Vertex streaming one call's arguments in 152 parts (`willContinue`, `partialArgs`): pi-rs
/// assembles the one `cookRecipe` call, in every chunking; pi 0.85.1 makes 76 empty calls
/// (`tool-call-arguments-in-parts.pi.json`).
#[test]
fn vertex_arguments_streamed_in_parts_make_one_call() {
    let m = model("google-vertex", "google-vertex", "gemini-2.5-flash");
    let body = data("streams/google-vertex/tool-call-arguments-in-parts.sse");
    let pi = data_json("streams/google-vertex/tool-call-arguments-in-parts.pi.json");
    assert_eq!(pi["message"]["content"].as_array().unwrap().len(), 76);
    let mut first = None;
    for chunking in CHUNKINGS {
        let outcome = replay(
            &pi_ai::providers::GoogleVertex::default(),
            &m,
            &body,
            chunking,
        );
        let message = message_json(&outcome.message);
        let content = message["content"].as_array().unwrap();
        assert_eq!(content.len(), 1, "{chunking:?}");
        let call = &content[0];
        assert_eq!(call["name"], "cookRecipe");
        let recipe = &call["arguments"]["recipe"];
        let ingredients = recipe["ingredients"].as_array().unwrap();
        assert_eq!(
            ingredients[0],
            serde_json::json!({"amount": "16 oz", "name": "Lasagna noodles"})
        );
        assert_eq!(
            recipe["steps"][9],
            "Let stand for 15 minutes before serving."
        );
        assert_eq!(message["stopReason"], "toolUse");
        let kinds = event_summary(&outcome.events);
        assert_eq!(kinds.first().map(String::as_str), Some("start"));
        assert_eq!(kinds[1], "toolcall_start[0]");
        assert_eq!(kinds[kinds.len() - 2], "toolcall_end[0]");
        let arguments = call["arguments"].clone();
        match &first {
            None => first = Some(arguments),
            Some(f) => assert_eq!(f, &arguments, "{chunking:?}"),
        }
    }
}
