//! Provider replies built to break pi-rs, through the `pi` binary (`--mode json` with a
//! session) on every wire API, hand-made for the test kit's replay server:
//!
//! - tool-call arguments nested 1,000 levels deep reach the tool exactly (its
//!   `tool_execution_start` args) and the session line holding them loads again; 1,001 levels
//!   are refused with a tool error naming the limit, a million levels cost one linear pass;
//! - arguments that are not exactly one JSON object (`{…}{…}`, truncated) get a tool error the
//!   model can act on, and the turn goes on;
//! - token counts of 2^64 sum in doubles as pi writes them (`36893488147419103000`);
//! - two Chat Completions calls sharing one id at two indexes are two calls with distinct ids.
//!
//! Every stdout line is read with the project's deep JSON parse (serde_json's default stops at
//! 128 levels).

use crate::support;

use pi_ai::json_depth::{MAX_DOCUMENT_DEPTH, from_str};
use pi_ai::testkit::{ReplayServer, Reply};
use pi_coding_agent::storage::{SessionStore, build_session_context};
use serde_json::{Value, json};
use support::binary_rig::{Rig, Run, provider_for, slot};

const APIS: [&str; 4] = [
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "google-generative-ai",
];

fn sse(events: &[(&str, String)]) -> String {
    let mut out = String::new();
    for (name, data) in events {
        if !name.is_empty() {
            out.push_str(&format!("event: {name}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    }
    out
}

/// A reply of `api` with the tool calls `(id, name, raw argument text)`; `usage` is the raw
/// JSON number text of the input and output counts.
fn tool_reply(api: &str, calls: &[(&str, &str, &str)], usage: &str) -> Reply {
    let q = |s: &str| Value::from(s).to_string();
    let body = match api {
        "anthropic-messages" => {
            let mut ev = vec![(
                "message_start",
                format!(
                    r#"{{"type":"message_start","message":{{"id":"msg_1","type":"message","role":"assistant","model":"replay-model","content":[],"stop_reason":null,"usage":{{"input_tokens":{usage},"output_tokens":1}}}}}}"#
                ),
            )];
            for (i, (id, name, args)) in calls.iter().enumerate() {
                ev.push(("content_block_start", format!(
                    r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"tool_use","id":{},"name":{},"input":{{}}}}}}"#,
                    q(id), q(name))));
                ev.push(("content_block_delta", format!(
                    r#"{{"type":"content_block_delta","index":{i},"delta":{{"type":"input_json_delta","partial_json":{}}}}}"#,
                    q(args))));
                ev.push((
                    "content_block_stop",
                    format!(r#"{{"type":"content_block_stop","index":{i}}}"#),
                ));
            }
            ev.push(("message_delta", format!(
                r#"{{"type":"message_delta","delta":{{"stop_reason":"tool_use"}},"usage":{{"output_tokens":{usage}}}}}"#)));
            ev.push(("message_stop", r#"{"type":"message_stop"}"#.into()));
            sse(&ev)
        }
        "openai-completions" => {
            let mut ev = Vec::new();
            for (i, (id, name, args)) in calls.iter().enumerate() {
                ev.push(("", format!(
                    r#"{{"id":"c","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{i},"id":{},"type":"function","function":{{"name":{},"arguments":{}}}}}]}}}}]}}"#,
                    q(id), q(name), q(args))));
            }
            ev.push((
                "",
                r#"{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#
                    .into(),
            ));
            ev.push(("", format!(
                r#"{{"id":"c","choices":[],"usage":{{"prompt_tokens":{usage},"completion_tokens":{usage},"total_tokens":{usage}}}}}"#)));
            sse(&ev) + "data: [DONE]\n\n"
        }
        "openai-responses" => {
            let mut ev = Vec::new();
            for (i, (id, name, args)) in calls.iter().enumerate() {
                let item = |a: &str| {
                    format!(
                        r#"{{"type":"function_call","id":"fc_{i}","call_id":{},"name":{},"arguments":{}}}"#,
                        q(id),
                        q(name),
                        q(a)
                    )
                };
                ev.push((
                    "response.output_item.added",
                    format!(
                        r#"{{"type":"response.output_item.added","output_index":{i},"item":{}}}"#,
                        item("")
                    ),
                ));
                ev.push(("response.function_call_arguments.delta", format!(
                    r#"{{"type":"response.function_call_arguments.delta","output_index":{i},"delta":{}}}"#, q(args))));
                ev.push((
                    "response.output_item.done",
                    format!(
                        r#"{{"type":"response.output_item.done","output_index":{i},"item":{}}}"#,
                        item(args)
                    ),
                ));
            }
            ev.push(("response.completed", format!(
                r#"{{"type":"response.completed","response":{{"id":"r","status":"completed","output":[],"usage":{{"input_tokens":{usage},"output_tokens":{usage},"total_tokens":{usage}}}}}}}"#)));
            sse(&ev)
        }
        "google-generative-ai" => {
            let parts: Vec<String> = calls
                .iter()
                .map(|(_, name, args)| {
                    format!(r#"{{"functionCall":{{"name":{},"args":{args}}}}}"#, q(name))
                })
                .collect();
            sse(&[(
                "",
                format!(
                    r#"{{"candidates":[{{"content":{{"role":"model","parts":[{}]}},"finishReason":"STOP"}}],"usageMetadata":{{"promptTokenCount":{usage},"candidatesTokenCount":{usage},"totalTokenCount":{usage}}}}}"#,
                    parts.join(",")
                ),
            )])
        }
        _ => unreachable!(),
    };
    Reply::sse(body)
}

/// A text answer of `api`.
fn text_reply(api: &str, text: &str) -> Reply {
    let t = Value::from(text).to_string();
    let body = match api {
        "anthropic-messages" => sse(&[
            ("message_start", r#"{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"replay-model","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}"#.into()),
            ("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#.into()),
            ("content_block_delta", format!(r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{t}}}}}"#)),
            ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#.into()),
            ("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}"#.into()),
            ("message_stop", r#"{"type":"message_stop"}"#.into()),
        ]),
        "openai-completions" => {
            sse(&[
                ("", format!(r#"{{"id":"c2","choices":[{{"index":0,"delta":{{"content":{t}}}}}]}}"#)),
                ("", r#"{"id":"c2","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#.into()),
            ]) + "data: [DONE]\n\n"
        }
        "openai-responses" => sse(&[
            ("response.output_item.added", r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}"#.into()),
            ("response.output_text.delta", format!(r#"{{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":{t}}}"#)),
            ("response.output_item.done", format!(r#"{{"type":"response.output_item.done","output_index":0,"item":{{"type":"message","id":"msg_1","role":"assistant","content":[{{"type":"output_text","text":{t}}}]}}}}"#)),
            ("response.completed", r#"{"type":"response.completed","response":{"id":"r2","status":"completed","output":[],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}}"#.into()),
        ]),
        "google-generative-ai" => sse(&[(
            "",
            format!(r#"{{"candidates":[{{"content":{{"role":"model","parts":[{{"text":{t}}}]}},"finishReason":"STOP"}}]}}"#),
        )]),
        _ => unreachable!(),
    };
    Reply::sse(body)
}

/// One `pi --mode json` run with a session: `replies` answer in order.
struct Outcome {
    run: Run,
    records: Vec<Value>,
    rig: Rig,
    requests: Vec<String>,
}

async fn run_json(api: &str, replies: Vec<Reply>) -> Outcome {
    let _slot = slot();
    let (_, server) = ReplayServer::start(replies).await.unwrap();
    let rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    std::fs::write(rig.path("work/f.txt"), "file content\n").unwrap();
    let sessions = rig.sessions();
    let args = [
        "--mode",
        "json",
        "--session-dir",
        &sessions,
        "--provider",
        provider_for(api),
        "--model",
        "replay-model",
        "go",
    ];
    let run = rig.run(&args).await;
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{api}: {run:?}");
    let records = run
        .stdout
        .lines()
        .map(|l| from_str(l, MAX_DOCUMENT_DEPTH).unwrap_or_else(|e| panic!("{e}: {l:.200}")))
        .collect();
    let requests = server
        .requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    Outcome {
        run,
        records,
        rig,
        requests,
    }
}

/// Runs a test body on a thread with a large stack: the records hold values 1,000 levels deep,
/// which the test itself clones, compares and drops (recursive in serde_json).
fn on_big_stack<F: std::future::Future<Output = ()> + Send + 'static>(f: F) {
    std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(f)
        })
        .unwrap()
        .join()
        .unwrap();
}

fn of_type<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["type"] == kind).collect()
}

fn result_text(end: &Value) -> &str {
    end["result"]["content"][0]["text"].as_str().unwrap_or("")
}

/// `{"path":"f.txt","deep":…}` with `levels` levels in all.
fn deep_args(levels: usize) -> String {
    let inner = levels - 1;
    format!(
        r#"{{"path":"f.txt","deep":{}1{}}}"#,
        "{\"a\":".repeat(inner),
        "}".repeat(inner)
    )
}

/// The session file of the run loads without a warning, with every message.
fn assert_session_loads(o: &Outcome, messages: usize) {
    let files: Vec<_> = std::fs::read_dir(o.rig.path("sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1);
    let cwd = o.rig.path("work").display().to_string();
    let store = SessionStore::open(&files[0], &cwd).unwrap();
    assert!(store.warnings().is_empty(), "{:?}", store.warnings());
    assert_eq!(
        build_session_context(&store).unwrap().messages.len(),
        messages
    );
}

#[test]
fn arguments_1000_levels_deep_reach_the_tool_exactly_on_every_api() {
    on_big_stack(async {
        for api in APIS {
            let args = deep_args(1_000);
            let o = run_json(
                api,
                vec![
                    tool_reply(api, &[("call_1", "read", &args)], "5"),
                    text_reply(api, "Done."),
                ],
            )
            .await;
            let starts = of_type(&o.records, "tool_execution_start");
            assert_eq!(starts.len(), 1, "{api}");
            assert_eq!(
                pi_ai::json::to_string(&starts[0]["args"]).unwrap(),
                args,
                "{api}"
            );
            let ends = of_type(&o.records, "tool_execution_end");
            assert_eq!(ends[0]["isError"], false, "{api}: {}", ends[0]);
            assert_eq!(result_text(ends[0]), "file content\n", "{api}");
            // The next request carries the call back, arguments intact (Chat Completions and
            // Responses send them as a JSON string).
            let sent = o.requests[1].replace("\\\"", "\"");
            assert!(sent.contains(&args[20..]), "{api}");
            // user, assistant (call), tool result, assistant (text).
            assert_session_loads(&o, 4);
        }
    });
}

#[test]
fn arguments_past_the_depth_limit_get_a_tool_error_naming_it() {
    on_big_stack(async {
        for api in APIS {
            let o = run_json(
                api,
                vec![
                    tool_reply(api, &[("call_1", "read", &deep_args(1_001))], "5"),
                    text_reply(api, "Done."),
                ],
            )
            .await;
            let ends = of_type(&o.records, "tool_execution_end");
            assert_eq!(ends.len(), 1, "{api}");
            assert_eq!(ends[0]["isError"], true, "{api}");
            assert_eq!(
                result_text(ends[0]),
                "Tool call \"read\" was not executed: its arguments nest deeper than 1000 levels, the limit. Re-issue the tool call with less deeply nested arguments.",
                "{api}"
            );
            // The tool never ran with another shape: it got no arguments at all.
            let starts = of_type(&o.records, "tool_execution_start");
            assert_eq!(starts[0]["args"], json!({}), "{api}");
            assert_eq!(o.requests.len(), 2, "{api}: the turn went on");
            assert!(
                o.requests[1].contains("nest deeper than 1000 levels"),
                "{api}"
            );
            assert_session_loads(&o, 4);
        }
    });
}

#[test]
fn a_million_levels_of_arguments_are_refused_quickly() {
    on_big_stack(async {
        let text = "[".repeat(1_000_000);
        for api in [
            "anthropic-messages",
            "openai-completions",
            "openai-responses",
        ] {
            let started = std::time::Instant::now();
            let o = run_json(
                api,
                vec![
                    tool_reply(api, &[("call_1", "read", &text)], "5"),
                    text_reply(api, "Done."),
                ],
            )
            .await;
            let ends = of_type(&o.records, "tool_execution_end");
            assert!(
                result_text(ends[0]).contains("nest deeper than 1000 levels"),
                "{api}"
            );
            // Generous: a debug build on a loaded 2-core machine; quadratic work would take minutes.
            assert!(
                started.elapsed().as_secs() < 30,
                "{api}: {:?}",
                started.elapsed()
            );
            assert!(
                o.run.stdout.len() < 40_000_000,
                "{api}: output echoes the input"
            );
        }
    });
}

#[tokio::test]
async fn arguments_that_are_not_one_object_get_a_tool_error_and_the_turn_goes_on() {
    for api in [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
    ] {
        for args in [r#"{"path":"f.txt"}{"path":"g.txt"}"#, r#"{"path":"f.txt"#] {
            let o = run_json(
                api,
                vec![
                    tool_reply(api, &[("call_1", "read", args)], "5"),
                    text_reply(api, "Done."),
                ],
            )
            .await;
            let ends = of_type(&o.records, "tool_execution_end");
            assert_eq!(ends[0]["isError"], true, "{api} {args}");
            assert_eq!(
                result_text(ends[0]),
                "Tool call \"read\" was not executed: its arguments are not exactly one valid JSON object. Re-issue the tool call with its arguments as one complete JSON object.",
                "{api} {args}"
            );
            let last = of_type(&o.records, "message_end");
            assert_eq!(
                last.last().unwrap()["message"]["content"][0]["text"],
                "Done.",
                "{api}"
            );
        }
    }
    // Gemini's arguments are inside the event: a non-object is refused the same way.
    let api = "google-generative-ai";
    let o = run_json(
        api,
        vec![
            tool_reply(api, &[("", "read", "[1]")], "5"),
            text_reply(api, "Done."),
        ],
    )
    .await;
    let ends = of_type(&o.records, "tool_execution_end");
    assert_eq!(
        result_text(ends[0]),
        "Tool call \"read\" was not executed: its arguments are not a JSON object. Re-issue the tool call with its arguments as one complete JSON object."
    );
}

#[tokio::test]
async fn counts_of_two_pow_64_are_summed_as_javascript_does() {
    for api in APIS {
        let o = run_json(
            api,
            vec![
                tool_reply(
                    api,
                    &[("call_1", "read", r#"{"path":"f.txt"}"#)],
                    "18446744073709551616",
                ),
                text_reply(api, "Done."),
            ],
        )
        .await;
        let total = match api {
            "anthropic-messages" | "openai-completions" => "36893488147419103000",
            _ => "18446744073709552000",
        };
        assert!(
            o.run.stdout.contains("\"input\":18446744073709552000,"),
            "{api}"
        );
        assert!(
            o.run.stdout.contains(&format!("\"totalTokens\":{total},")),
            "{api}"
        );
        assert_session_loads(&o, 4);
    }
}

#[tokio::test]
async fn two_calls_sharing_an_id_at_two_indexes_both_run_with_distinct_ids() {
    let api = "openai-completions";
    let o = run_json(
        api,
        vec![
            tool_reply(
                api,
                &[
                    ("call_dup", "read", r#"{"path":"f.txt"}"#),
                    ("call_dup", "ls", r#"{"path":"."}"#),
                ],
                "5",
            ),
            text_reply(api, "Done."),
        ],
    )
    .await;
    let starts = of_type(&o.records, "tool_execution_start");
    let ids: Vec<&str> = starts
        .iter()
        .map(|s| s["toolCallId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_dup", "call_dup_2"]);
    let names: Vec<&str> = starts
        .iter()
        .map(|s| s["toolName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read", "ls"]);
    // The provider gets two results with two ids.
    let second: Value = serde_json::from_str(&o.requests[1]).unwrap();
    let result_ids: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(result_ids, ["call_dup", "call_dup_2"]);
}
