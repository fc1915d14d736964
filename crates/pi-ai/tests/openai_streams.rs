//! `openai-completions` and `openai-responses` mappers on recorded provider streams and bug
//! inputs: the final message must equal the reference's (`expected.json`), whatever the read
//! sizes (whole body, line by line, 1-byte and 7-byte reads).

use crate::openai_support;

use openai_support::{Chunking, data, replay_model, run_stream};
use pi_ai::providers::WireApi;
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::types::{AssistantContent, StopReason};
use serde_json::{Value, json};

const CHUNKINGS: [Chunking; 4] = [
    Chunking::Whole,
    Chunking::Lines,
    Chunking::Bytes(1),
    Chunking::Bytes(7),
];

/// Replays one recorded stream in every chunking and compares with its `expected.json`.
fn check_recorded(api_id: &str, name: &str) {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(data(&format!(
            "openai/expected/{api_id}/{name}.expected.json"
        )))
        .unwrap(),
    )
    .unwrap();
    let bytes = std::fs::read(data(&format!("sse/streams/{api_id}/{name}.sse"))).unwrap();
    let rm = &expected["replay_model"];
    let model = replay_model(
        api_id,
        rm["provider"].as_str().unwrap(),
        rm["model"].as_str().unwrap(),
    );
    let api: Box<dyn WireApi> = match api_id {
        "openai-completions" => Box::new(OpenAiCompletions),
        _ => Box::new(OpenAiResponses),
    };
    let mut want = expected["message"].clone();
    want.as_object_mut().unwrap().remove("role");
    let want_events: Vec<String> = serde_json::from_value(expected["events"].clone()).unwrap();
    for chunking in CHUNKINGS {
        let run = run_stream(api.as_ref(), &model, &bytes, chunking);
        let mut got = serde_json::to_value(&run.message).unwrap();
        let obj = got.as_object_mut().unwrap();
        obj.remove("timestamp");
        obj["usage"].as_object_mut().unwrap().remove("cost");
        assert_eq!(got, want, "{api_id}/{name} ({chunking:?}): final message");
        assert_eq!(
            run.events, want_events,
            "{api_id}/{name} ({chunking:?}): events"
        );
    }
}

#[test]
fn completions_deepseek_reasoning_content_emoji() {
    check_recorded("openai-completions", "deepseek-reasoning-content-emoji");
}

#[test]
fn completions_groq_event_error_mid_stream() {
    check_recorded("openai-completions", "groq-event-error-mid-stream");
}

#[test]
fn completions_groq_reasoning_then_whole_tool_call() {
    check_recorded("openai-completions", "groq-reasoning-then-whole-tool-call");
}

#[test]
fn completions_openrouter_reasoning_details_keepalive_comments() {
    check_recorded(
        "openai-completions",
        "openrouter-reasoning-details-keepalive-comments",
    );
}

#[test]
fn completions_parallel_tool_calls_usage_chunk() {
    check_recorded("openai-completions", "parallel-tool-calls-usage-chunk");
}

#[test]
fn completions_tool_args_54_fragments() {
    check_recorded("openai-completions", "tool-args-54-fragments");
}

#[test]
fn completions_truncated_mid_tool_args() {
    check_recorded("openai-completions", "truncated-mid-tool-args");
}

#[test]
fn responses_deepseek_function_tool_cached_tokens() {
    check_recorded("openai-responses", "deepseek-function-tool-cached-tokens");
}

#[test]
fn responses_encrypted_reasoning_no_summary_then_function_call() {
    check_recorded(
        "openai-responses",
        "encrypted-reasoning-no-summary-then-function-call",
    );
}

#[test]
fn responses_error_event_then_response_failed() {
    check_recorded("openai-responses", "error-event-then-response-failed");
}

#[test]
fn responses_function_call_basic() {
    check_recorded("openai-responses", "function-call-basic");
}

#[test]
fn responses_reasoning_summary_then_text_utf8() {
    check_recorded("openai-responses", "reasoning-summary-then-text-utf8");
}

/// Runs a bug input through the Chat Completions mapper in every chunking; all runs must agree.
fn run_bug(name: &str, model_id: &str) -> openai_support::Run {
    let bytes = std::fs::read(data(&format!("bugs/{name}.sse"))).unwrap();
    let model = replay_model("openai-completions", "ollama", model_id);
    let runs: Vec<_> = CHUNKINGS
        .iter()
        .map(|c| run_stream(&OpenAiCompletions, &model, &bytes, *c))
        .collect();
    for r in &runs[1..] {
        let (mut a, mut b) = (r.message.clone(), runs[0].message.clone());
        a.timestamp = 0;
        b.timestamp = 0;
        assert_eq!(a, b, "{name}: chunking changed the result");
        assert_eq!(
            r.events, runs[0].events,
            "{name}: chunking changed the events"
        );
    }
    runs.into_iter().next().unwrap()
}

fn calls(run: &openai_support::Run) -> Vec<(String, String, Value)> {
    run.message
        .tool_calls()
        .map(|t| {
            (
                t.id.clone(),
                t.name.clone(),
                Value::Object(t.arguments.clone()),
            )
        })
        .collect()
}

/// Ollama (ollama/ollama#15457) streams every parallel call at `index: 0`, each with its own
/// id. The reference drops the second call; pi-rs keeps both.
#[test]
fn ollama_same_index_parallel_tool_calls_are_two_calls() {
    let run = run_bug("ollama-same-index-parallel-tool-calls", "qwen2.5-coder:7b");
    assert_eq!(
        calls(&run),
        vec![
            (
                "call_aaaa0001".to_owned(),
                "file_write".to_owned(),
                json!({"filePath": "hello.py", "content": "print(\"hello\")"})
            ),
            (
                "call_aaaa0002".to_owned(),
                "file_write".to_owned(),
                json!({"filePath": "world.py", "content": "print(\"world\")"})
            ),
        ]
    );
    assert_eq!(run.message.stop_reason, StopReason::ToolUse);
    assert_eq!(
        (run.message.usage.input, run.message.usage.output),
        (180.0, 60.0)
    );
    assert_eq!(
        run.events,
        [
            "start",
            "toolcall_start[0]",
            "toolcall_delta[0]x1",
            "toolcall_start[1]",
            "toolcall_delta[1]x1",
            "toolcall_end[0]",
            "toolcall_end[1]",
            "done(toolUse)"
        ]
    );
}

/// Two calls at different indexes sharing one id (some OpenAI-compatible servers): each index
/// is its own call, keeps its own arguments, and the repeat gets the distinct id `call_dup_2`
/// (pi merges them and loses one).
#[test]
fn calls_sharing_an_id_at_two_indexes_stay_two_calls_with_distinct_ids() {
    let run = run_bug("same-id-at-two-indexes", "m");
    assert_eq!(
        calls(&run),
        vec![
            (
                "call_dup".to_owned(),
                "file_write".to_owned(),
                json!({"filePath": "a.txt"})
            ),
            (
                "call_dup_2".to_owned(),
                "file_write".to_owned(),
                json!({"filePath": "b.txt"})
            ),
        ]
    );
    assert_eq!(run.message.stop_reason, StopReason::ToolUse);
}

/// An empty name next to the id must not stick; the later `shell` wins.
#[test]
fn tool_name_arriving_after_id_is_kept() {
    let run = run_bug("tool-name-arrives-after-id", "deepseek-v4-flash");
    assert_eq!(
        calls(&run),
        vec![(
            "call_dddd0001".to_owned(),
            "shell".to_owned(),
            json!({"command": "ls -la"})
        )]
    );
    assert_eq!(run.message.stop_reason, StopReason::ToolUse);
}

/// Tool calls with `finish_reason: "stop"` are parsed; pi keeps stopReason `stop`
/// (the agent loop runs present calls regardless).
#[test]
fn tool_calls_with_finish_reason_stop_are_parsed() {
    let run = run_bug("tool-calls-with-finish-reason-stop", "qwen2.5-coder:7b");
    assert_eq!(
        calls(&run),
        vec![(
            "call_bbbb0001".to_owned(),
            "get_weather".to_owned(),
            json!({"city": "Paris"})
        )]
    );
    assert_eq!(run.message.stop_reason, StopReason::Stop);
    assert_eq!(run.message.raw_stop_reason.as_deref(), Some("stop"));
}

/// Arguments cut by the output limit end as stopReason `length` (the agent refuses to
/// run such calls); the partial arguments are whatever parses.
#[test]
fn tool_args_cut_by_length_end_with_length() {
    let run = run_bug("tool-args-cut-by-length", "gpt-4o");
    assert_eq!(run.message.stop_reason, StopReason::Length);
    assert_eq!(run.message.raw_stop_reason.as_deref(), Some("length"));
    let c = calls(&run);
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].0.as_str(), c[0].1.as_str()),
        ("call_cccc0001", "write_file")
    );
    assert_eq!(c[0].2["path"], json!("/tmp/notes.txt"));
    assert_eq!(
        (run.message.usage.input, run.message.usage.output),
        (120.0, 32.0)
    );
    assert!(matches!(
        run.message.content[0],
        AssistantContent::ToolCall(_)
    ));
    assert_eq!(run.events.last().map(String::as_str), Some("done(length)"));
}
