//! Tool-call arguments nested 1,000 levels deep (pi's depth, the documented limit) through the
//! whole library path on a tokio multi-thread runtime whose workers have tokio's default
//! 2 MiB stack, in the build the tests run in (debug in CI): the Anthropic wire API parses the
//! streamed arguments (pi-ai), the loop validates them against the tool's schema, clones them
//! into events and messages, the tool gets them, its result carries them back as details, the
//! next request serializes them, and everything is dropped. Past the limit the call is refused
//! with the tool error naming it.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::{Agent, AgentOptions, AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::json_depth::MAX_ARGUMENT_DEPTH;
use pi_ai::providers::registry::stream;
use pi_ai::testkit::{ReplayServer, Reply};
use pi_ai::{Model, StreamOptions};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// `{"a":{"a":…1…}}` with `levels` objects.
fn nested(levels: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(levels), "}".repeat(levels))
}

fn sse(events: &[(&str, String)]) -> Vec<u8> {
    let mut out = String::new();
    for (name, data) in events {
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    out.into_bytes()
}

/// An Anthropic reply calling tool `t` with `args`, streamed in 97-byte fragments.
fn tool_reply(args: &str) -> Reply {
    let mut events = vec![
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "m", "model": "m",
                "usage": {"input_tokens": 1, "output_tokens": 1}}})
            .to_string(),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block":
                {"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}})
            .to_string(),
        ),
    ];
    for piece in args.as_bytes().chunks(97) {
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta":
                {"type": "input_json_delta", "partial_json": std::str::from_utf8(piece).unwrap()}})
            .to_string(),
        ));
    }
    events.extend([
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}).to_string(),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 2}})
            .to_string(),
        ),
        ("message_stop", json!({"type": "message_stop"}).to_string()),
    ]);
    Reply::sse(sse(&events))
}

fn text_reply() -> Reply {
    Reply::sse(sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "m2", "model": "m",
                "usage": {"input_tokens": 1, "output_tokens": 1}}})
            .to_string(),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}})
            .to_string(),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": "done"}})
            .to_string(),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}).to_string(),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 2}})
            .to_string(),
        ),
        ("message_stop", json!({"type": "message_stop"}).to_string()),
    ]))
}

/// Keeps the arguments it was called with and returns them as its result's details.
struct Echo {
    schema: Value,
    seen: Mutex<Vec<String>>,
}

impl AgentTool for Echo {
    fn name(&self) -> &str {
        "t"
    }
    fn label(&self) -> &str {
        "T"
    }
    fn description(&self) -> &str {
        "Echoes its arguments."
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        args: Value,
        _cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            self.seen
                .lock()
                .unwrap()
                .push(pi_ai::json::to_string(&args).unwrap());
            Ok(AgentToolResult::text("ok", Some(args)))
        })
    }
}

/// One prompt whose reply calls `t` with `args`; returns what the tool saw, the messages'
/// JSON, and the body of the request that followed the tool result.
async fn run(args: String) -> (Vec<String>, String, String) {
    let (_, server) = ReplayServer::start(vec![tool_reply(&args), text_reply()])
        .await
        .unwrap();
    let model = Model {
        id: "m".into(),
        name: "m".into(),
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        base_url: server.base_url(),
        context_window: 200_000,
        max_tokens: 4_096,
        ..Default::default()
    };
    let agent = Agent::new(AgentOptions::new(Arc::new(
        |model: Model, context, options: StreamOptions| {
            stream(
                &model,
                &context,
                StreamOptions {
                    api_key: Some("k".into()),
                    max_retries: Some(0),
                    ..options
                },
            )
        },
    )));
    agent.set_model(model);
    let echo = Arc::new(Echo {
        schema: json!({"type": "object", "properties": {"a": {"type": "object"}}, "required": ["a"]}),
        seen: Mutex::new(Vec::new()),
    });
    agent.set_tools(vec![echo.clone()]);
    agent.prompt("go").await.unwrap();
    let messages = agent.messages();
    let copy = messages.clone();
    let json = pi_ai::json::to_string(&copy).unwrap();
    drop(copy);
    drop(messages);
    drop(agent);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let next = String::from_utf8(requests[1].body.clone()).unwrap();
    let seen = echo.seen.lock().unwrap().clone();
    (seen, json, next)
}

/// A multi-thread runtime with tokio's defaults: its workers' stacks are 2 MiB.
fn default_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn arguments_1000_levels_deep_run_the_whole_loop_on_2_mib_worker_stacks() {
    let rt = default_runtime();
    let args = nested(MAX_ARGUMENT_DEPTH);
    let expected = args.clone();
    // Spawned, so the loop runs on a worker thread, not on this test thread.
    let (seen, json, next) = rt
        .block_on(async move { tokio::spawn(run(args)).await })
        .unwrap();
    assert_eq!(
        seen,
        std::slice::from_ref(&expected),
        "the tool gets the arguments exactly"
    );
    // The assistant's tool call, the tool result's details and the next request carry them.
    assert_eq!(json.matches(expected.as_str()).count(), 2, "{}", json.len());
    assert!(
        next.contains(expected.as_str()),
        "the next request sends them back"
    );
    assert!(json.contains("\"text\":\"done\""));
}

#[test]
fn arguments_past_the_limit_are_refused_with_the_limit_named() {
    let rt = default_runtime();
    let (seen, json, next) = rt
        .block_on(async { tokio::spawn(run(nested(MAX_ARGUMENT_DEPTH + 1))).await })
        .unwrap();
    assert!(seen.is_empty(), "not executed");
    let refusal = "Tool call \\\"t\\\" was not executed: its arguments nest deeper than 1000 levels, the limit. Re-issue the tool call with less deeply nested arguments.";
    assert!(json.contains(refusal), "{json}");
    assert!(next.contains(refusal));
}
