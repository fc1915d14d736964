//! Fault injection through the `pi` binary: the replay server answers with
//! an HTTP error, a reset, silence, a cut or stalled stream, a stream without its terminal
//! event, invalid JSON, a wrong content type or one gigantic event. Each case runs
//! `pi --mode json` with a session and checks:
//!
//! - the terminal text: one assistant `message_end` per attempt, `stopReason: "error"` with
//!   the reference's `errorMessage` (texts confirmed by running the TypeScript pi 0.85.0
//!   against the same replies: set `PI_RIG_BIN` to its binary);
//! - the retry policy (`retry.baseDelayMs` 10, 3 retries): `agent_end.willRetry`,
//!   `auto_retry_start {attempt, maxAttempts, delayMs = 10·2^(attempt−1), errorMessage}`,
//!   `auto_retry_end`, and exactly one request per attempt;
//! - the session: the file loads without warnings, holds the user message and one assistant
//!   entry per attempt in a single parent chain, and a follow-up `pi -p --session <file>`
//!   continues it (its request carries the history, its entries extend the chain);
//! - exit codes: json mode 0 whatever the outcome; print mode 1 with the error on stderr
//!   when the last attempt failed, else 0.
//!
//! Real time with small settings: `httpIdleTimeoutMs` 1000 (also the request timeout), so
//! the slowest cases wait about a second; at most four cases run at once
//! ([`support::binary_rig::slot`]), so load cannot stretch a normal reply past those limits.

use crate::support;

use std::path::Path;

use pi_ai::testkit::{ReplayServer, Reply, SseBuilder};
use pi_coding_agent::storage::{SessionStore, build_session_context};
use serde_json::{Value, json};
use support::anthropic_sse::{anthropic_error, anthropic_text, anthropic_text_unfinished};
use support::binary_rig::{Rig, Run, file_records, provider_for, slot};

const ANTHROPIC: &str = "anthropic-messages";
const COMPLETIONS: &str = "openai-completions";
const RESPONSES: &str = "openai-responses";
const GOOGLE: &str = "google-generative-ai";

/// `retry.baseDelayMs` of these runs.
const BASE_DELAY_MS: u64 = 10;
/// pi's default `retry.maxRetries`.
const MAX_RETRIES: usize = 3;

/// `{not json` in a data line: what every API's `JSON.parse` says (Node 22).
const BAD_JSON: &str = "Expected property name or '}' in JSON at position 1 (line 1 column 2)";

fn settings() -> Value {
    json!({"retry": {"baseDelayMs": BASE_DELAY_MS}, "httpIdleTimeoutMs": 1000})
}

/// A recorded text stream of `api` (the conformance scenarios'), and its text.
fn recorded(api: &str) -> (String, &'static str) {
    let (scenario, text) = match api {
        COMPLETIONS => ("text_openai_completions", "Hello from chat completions!"),
        RESPONSES => ("text_openai_responses", "Hello from responses!"),
        GOOGLE => ("text_google", "Hello from Gemini!"),
        _ => panic!("no recorded stream for {api}"),
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/conformance")
        .join(scenario)
        .join("01-text.sse");
    (std::fs::read_to_string(path).unwrap(), text)
}

/// A successful reply of `api` and the text it answers.
fn good(api: &str) -> (Reply, &'static str) {
    match api {
        ANTHROPIC => (anthropic_text("Recovered."), "Recovered."),
        _ => {
            let (body, text) = recorded(api);
            (Reply::sse(body), text)
        }
    }
}

/// The SSE events of `api`'s recorded stream, each with its blank line.
fn recorded_events(api: &str) -> Vec<String> {
    recorded(api)
        .0
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| format!("{e}\n\n"))
        .collect()
}

/// `api`'s recorded stream without its terminal events (finish reason, `[DONE]`,
/// `response.completed`).
fn without_terminal(api: &str) -> Reply {
    let events = recorded_events(api);
    let keep = match api {
        COMPLETIONS => events.len() - 3,
        _ => events.len() - 1,
    };
    Reply::sse(events[..keep].concat())
}

/// `api`'s recorded stream with `data: {not json` as its second event.
fn with_bad_json(api: &str) -> Reply {
    let mut events = recorded_events(api);
    events.insert(1, "data: {not json\n\n".into());
    Reply::sse(events.concat())
}

/// A `200 text/html` page instead of an event stream.
fn html_page() -> Reply {
    Reply::text(200, "<html>hello</html>").header("content-type", "text/html")
}

/// What the run is expected to do with the faults.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Policy {
    /// Each fault is retried; more than [`MAX_RETRIES`] faults exhaust the retries.
    Retried,
    /// One fault ends the run (no retry).
    Final,
}

/// The json-mode events that carry the outcome, one value each: assistant `message_end`
/// (`{"end": stopReason, "error": errorMessage}`), `agent_end` (`{"agentEnd": willRetry}`),
/// and `auto_retry_start` / `auto_retry_end` verbatim.
fn outcome_events(records: &[Value]) -> Vec<Value> {
    records
        .iter()
        .filter_map(|r| match r["type"].as_str()? {
            "message_end" if r["message"]["role"] == "assistant" => Some(json!({
                "end": r["message"]["stopReason"],
                "error": r["message"]["errorMessage"],
            })),
            "agent_end" => Some(json!({"agentEnd": r["willRetry"]})),
            "auto_retry_start" | "auto_retry_end" => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// [`outcome_events`] as the retry policy prescribes for these attempt errors.
fn expected_events(errors: &[&str], policy: Policy) -> Vec<Value> {
    let failed = |e: &str| json!({"end": "error", "error": e});
    let mut out = Vec::new();
    for (i, e) in errors.iter().enumerate() {
        out.push(failed(e));
        if policy == Policy::Final || i == MAX_RETRIES {
            out.push(json!({"agentEnd": false}));
            if policy == Policy::Retried {
                out.push(json!({"type": "auto_retry_end", "success": false,
                    "attempt": MAX_RETRIES, "finalError": e}));
            }
            return out;
        }
        out.push(json!({"agentEnd": true}));
        out.push(json!({"type": "auto_retry_start", "attempt": i + 1,
            "maxAttempts": MAX_RETRIES, "delayMs": BASE_DELAY_MS << i, "errorMessage": e}));
    }
    out.push(json!({"end": "stop", "error": null}));
    if !errors.is_empty() {
        out.push(json!({"type": "auto_retry_end", "success": true, "attempt": errors.len()}));
    }
    out.push(json!({"agentEnd": false}));
    out
}

/// Streaming updates come only between an assistant's `message_start` and its `message_end`:
/// nothing follows a terminal event.
fn assert_updates_inside_messages(records: &[Value]) {
    let mut open = false;
    for r in records {
        match r["type"].as_str() {
            Some("message_start") if r["message"]["role"] == "assistant" => open = true,
            Some("message_end") if r["message"]["role"] == "assistant" => open = false,
            Some("message_update") => assert!(open, "update outside a message: {r}"),
            _ => {}
        }
    }
}

/// The string leaves of `v` equal to one of `words`, in document order.
fn words_in(v: &Value, words: &[&str], out: &mut Vec<String>) {
    match v {
        Value::String(s) if words.contains(&s.as_str()) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| words_in(i, words, out)),
        Value::Object(map) => map.values().for_each(|i| words_in(i, words, out)),
        _ => {}
    }
}

/// The session file is consistent: it loads without warnings, its entries form one parent
/// chain ending at the leaf, and it holds the user prompts and the assistant attempts
/// (`Some(error)` or `None` for a success) in order.
fn assert_session(rig: &Rig, path: &Path, prompts: &[&str], attempts: &[Option<&str>]) {
    let cwd = rig.path("work").display().to_string();
    let store = SessionStore::open(path, &cwd).unwrap();
    assert!(store.warnings().is_empty(), "{:?}", store.warnings());
    let context = build_session_context(&store).unwrap();
    let records = file_records(path);
    assert_eq!(records[0]["type"], "session");
    let mut parent = Value::Null;
    for r in &records[1..] {
        assert_eq!(r["parentId"], parent, "broken chain at {r}");
        parent = r["id"].clone();
    }
    assert_eq!(Some(store.leaf_id().unwrap()), parent.as_str());
    let messages: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "message")
        .map(|r| &r["message"])
        .collect();
    assert_eq!(context.messages.len(), messages.len());
    let users: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(users, prompts);
    let assistants: Vec<Option<&str>> = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["errorMessage"].as_str())
        .collect();
    assert_eq!(assistants, attempts);
}

/// Runs one case in json mode with a session, then continues the session in print mode.
/// `faults` get `errors` (one per attempt) under `policy`.
async fn check(api: &str, faults: Vec<Reply>, errors: &[&str], policy: Policy) -> Run {
    assert_eq!(faults.len(), errors.len());
    let _slot = slot();
    let succeeds = policy == Policy::Retried && errors.len() <= MAX_RETRIES;
    let (ok, ok_text) = good(api);
    let mut script = faults;
    if succeeds {
        script.push(good(api).0);
    }
    script.push(ok);
    let attempts = script.len() - 1;
    let (_, server) = ReplayServer::start(script).await.unwrap();
    let rig = Rig::new(&server.base_url(), &settings());
    let model = ["--provider", provider_for(api), "--model", "replay-model"];
    let sessions = rig.sessions();
    let mut args = vec!["--mode", "json", "--session-dir", &sessions];
    args.extend(model);
    args.push("hi");
    let run = rig.run(&args).await;
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    let records = run.records();
    assert_eq!(records[0]["type"], "session");
    assert_eq!(records.last().unwrap()["type"], "agent_settled");
    assert_eq!(
        outcome_events(&records),
        expected_events(errors, policy),
        "{}",
        run.stdout
    );
    assert_updates_inside_messages(&records);
    assert_eq!(server.request_count(), attempts, "one request per attempt");

    let files = rig.session_files();
    assert_eq!(files.len(), 1);
    let mut outcomes: Vec<Option<&str>> = errors.iter().map(|e| Some(*e)).collect();
    if succeeds {
        outcomes.push(None);
    }
    assert_session(&rig, &files[0], &["hi"], &outcomes);
    let before = std::fs::read_to_string(&files[0]).unwrap();

    // The session continues.
    let file = files[0].display().to_string();
    let mut args = vec!["-p", "--session", &file];
    args.extend(model);
    args.push("next");
    let follow = rig.run(&args).await;
    assert_eq!(
        (follow.code, follow.stdout.as_str(), follow.stderr.as_str()),
        (0, format!("{ok_text}\n").as_str(), ""),
        "follow-up"
    );
    let request = server.requests().last().unwrap().body_json().unwrap();
    let mut prompts = Vec::new();
    words_in(&request, &["hi", "next"], &mut prompts);
    assert_eq!(prompts, ["hi", "next"], "the history is sent");
    assert_eq!(rig.session_files(), files, "the same file continues");
    let after = std::fs::read_to_string(&files[0]).unwrap();
    assert!(after.starts_with(&before), "existing lines are kept");
    outcomes.push(None);
    assert_session(&rig, &files[0], &["hi", "next"], &outcomes);
    run
}

/// Runs `pi -p --no-session hi` against `script`; returns the run and the request count.
async fn print_run(api: &str, script: Vec<Reply>) -> (Run, usize) {
    let _slot = slot();
    let (_, server) = ReplayServer::start(script).await.unwrap();
    let rig = Rig::new(&server.base_url(), &settings());
    let run = rig
        .run(&[
            "-p",
            "--no-session",
            "--provider",
            provider_for(api),
            "--model",
            "replay-model",
            "hi",
        ])
        .await;
    (run, server.request_count())
}

fn anthropic_json_error(status: u16, kind: &str, message: &str) -> (Reply, String) {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    (
        anthropic_error(status, kind, message),
        format!("{status} {body}"),
    )
}

// ---- Anthropic: every fault kind ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_http_429_is_retried() {
    let (reply, text) = anthropic_json_error(429, "rate_limit_error", "Rate limited");
    check(ANTHROPIC, vec![reply], &[&text], Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_http_500_then_502_are_retried() {
    let (reply, text) = anthropic_json_error(500, "api_error", "Internal server error");
    let html = Reply::text(502, "<html>Bad Gateway</html>").header("content-type", "text/html");
    check(
        ANTHROPIC,
        vec![reply, html],
        &[&text, "502 <html>Bad Gateway</html>"],
        Policy::Retried,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_http_503_four_times_exhausts_the_retries() {
    let (_, text) = anthropic_json_error(503, "api_error", "Service unavailable");
    let faults = (0..4)
        .map(|_| anthropic_error(503, "api_error", "Service unavailable"))
        .collect();
    check(ANTHROPIC, faults, &[text.as_str(); 4], Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_http_529_overloaded_is_retried() {
    let (reply, text) = anthropic_json_error(529, "overloaded_error", "Overloaded");
    check(ANTHROPIC, vec![reply], &[&text], Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_reset_before_headers_is_a_connection_error() {
    let faults = vec![Reply::reset_before_headers()];
    check(ANTHROPIC, faults, &["Connection error."], Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_no_headers_past_the_request_timeout() {
    let faults = vec![Reply::stall_before_headers()];
    check(ANTHROPIC, faults, &["Request timed out."], Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_disconnect_mid_stream_is_terminated() {
    let faults = vec![anthropic_text("hello world").disconnect_after_bytes(400)];
    check(ANTHROPIC, faults, &["terminated"], Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_stall_past_the_idle_limit_is_terminated() {
    let faults = vec![anthropic_text("hello world").stall_after_bytes(400)];
    check(ANTHROPIC, faults, &["terminated"], Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_stream_cut_before_message_stop() {
    let faults = vec![Reply::sse(anthropic_text_unfinished("hello"))];
    let error = "Anthropic stream ended before message_stop";
    check(ANTHROPIC, faults, &[error], Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_invalid_json_in_a_data_line_is_not_retried() {
    let start = json!({"type":"message_start","message":{"id":"m","type":"message",
        "role":"assistant","model":"replay-model","content":[],"stop_reason":null,
        "stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}});
    let body = SseBuilder::new()
        .event("message_start", &start)
        .event_raw("content_block_start", "{not json")
        .build();
    let error = format!(
        "Could not parse Anthropic SSE event content_block_start: {BAD_JSON}; \
         data={{not json; raw=event: content_block_start\\ndata: {{not json"
    );
    check(ANTHROPIC, vec![Reply::sse(body)], &[&error], Policy::Final).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_wrong_content_type_ends_without_a_stop_reason() {
    let error = "Anthropic stream ended without a stop reason";
    check(ANTHROPIC, vec![html_page()], &[error], Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_one_gigantic_event_is_taken_whole() {
    let _slot = slot();
    let text = "x".repeat(1 << 20);
    let (_, server) = ReplayServer::start(vec![anthropic_text(&text)])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &settings());
    let sessions = rig.sessions();
    let run = rig
        .run(&[
            "--mode",
            "json",
            "--session-dir",
            &sessions,
            "--provider",
            provider_for(ANTHROPIC),
            "--model",
            "replay-model",
            "hi",
        ])
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let records = run.records();
    assert_eq!(
        outcome_events(&records),
        expected_events(&[], Policy::Retried)
    );
    let end = records
        .iter()
        .find(|r| r["type"] == "message_end" && r["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(end["message"]["content"][0]["text"].as_str(), Some(&*text));
    let files = rig.session_files();
    assert_session(&rig, &files[0], &["hi"], &[None]);
    let stored = file_records(&files[0]);
    assert_eq!(
        stored.last().unwrap()["message"]["content"][0]["text"].as_str(),
        Some(&*text)
    );
}

// ---- The other wire APIs: their own texts ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_http_500_reset_and_cut_are_retried() {
    let body = json!({"error": {"message": "The server had an error", "type": "server_error",
        "param": null, "code": null}});
    let faults = vec![
        Reply::json(500, &body),
        Reply::reset_before_headers(),
        Reply::sse(recorded(COMPLETIONS).0).disconnect_after_bytes(300),
    ];
    let http = format!("500: {}", body["error"]);
    let errors = [http.as_str(), "Connection error.", "terminated"];
    check(COMPLETIONS, faults, &errors, Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_cut_stream_and_wrong_content_type_lack_a_finish_reason() {
    let faults = vec![without_terminal(COMPLETIONS), html_page()];
    let error = "Stream ended without finish_reason";
    check(COMPLETIONS, faults, &[error, error], Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_no_headers_past_the_request_timeout() {
    let faults = vec![Reply::stall_before_headers()];
    check(
        COMPLETIONS,
        faults,
        &["Request timed out."],
        Policy::Retried,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_invalid_json_is_not_retried() {
    check(
        COMPLETIONS,
        vec![with_bad_json(COMPLETIONS)],
        &[BAD_JSON],
        Policy::Final,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_http_500_reset_and_cut_are_retried() {
    let body = json!({"error": {"message": "The server had an error", "type": "server_error",
        "param": null, "code": null}});
    let faults = vec![
        Reply::json(500, &body),
        Reply::reset_before_headers(),
        Reply::sse(recorded(RESPONSES).0).disconnect_after_bytes(300),
    ];
    let http = format!("OpenAI API error (500): {}", body["error"]);
    let errors = [http.as_str(), "Connection error.", "terminated"];
    check(RESPONSES, faults, &errors, Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_cut_stream_and_wrong_content_type_lack_a_terminal_event() {
    let faults = vec![without_terminal(RESPONSES), html_page()];
    let error = "OpenAI Responses stream ended before a terminal response event";
    check(RESPONSES, faults, &[error, error], Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_invalid_json_is_not_retried() {
    check(
        RESPONSES,
        vec![with_bad_json(RESPONSES)],
        &[BAD_JSON],
        Policy::Final,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn google_http_500_reset_and_cut_are_retried() {
    let body = json!({"error": {"code": 500, "message": "Internal error encountered.",
        "status": "INTERNAL"}});
    let faults = vec![
        Reply::json(500, &body),
        Reply::reset_before_headers(),
        Reply::sse(recorded(GOOGLE).0).disconnect_after_bytes(300),
    ];
    let http = body.to_string();
    let errors = [http.as_str(), "fetch failed", "terminated"];
    check(GOOGLE, faults, &errors, Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn google_no_headers_fails_after_the_idle_limit_and_a_cut_lacks_a_finish_reason() {
    let faults = vec![Reply::stall_before_headers(), without_terminal(GOOGLE)];
    let errors = [
        "fetch failed",
        "Google stream ended without a finish reason",
    ];
    check(GOOGLE, faults, &errors, Policy::Retried).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn google_invalid_json_is_not_retried() {
    check(
        GOOGLE,
        vec![with_bad_json(GOOGLE)],
        &[BAD_JSON],
        Policy::Final,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn google_wrong_content_type_is_an_incomplete_segment_not_retried() {
    let error = "Incomplete JSON segment at the end";
    check(GOOGLE, vec![html_page()], &[error], Policy::Final).await;
}

// ---- Exit codes of print mode ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_exits_1_with_the_last_error_when_the_retries_are_exhausted() {
    let (_, text) = anthropic_json_error(503, "api_error", "Service unavailable");
    let script = (0..4)
        .map(|_| anthropic_error(503, "api_error", "Service unavailable"))
        .collect();
    let (run, requests) = print_run(ANTHROPIC, script).await;
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str(), requests),
        (1, "", format!("{text}\n").as_str(), 4)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_exits_1_on_an_error_that_is_not_retried() {
    let (run, requests) = print_run(GOOGLE, vec![with_bad_json(GOOGLE)]).await;
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str(), requests),
        (1, "", format!("{BAD_JSON}\n").as_str(), 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_exits_0_after_a_successful_retry() {
    let script = vec![Reply::reset_before_headers(), anthropic_text("Recovered.")];
    let (run, requests) = print_run(ANTHROPIC, script).await;
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str(), requests),
        (0, "Recovered.\n", "", 2)
    );
}
