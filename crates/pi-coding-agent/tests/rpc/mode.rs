//! RPC mode in process: `run_rpc` over `tokio::io::duplex` with sessions on the faux provider
//! (observed reference values where noted).

use crate::rpc_support;
use crate::session_support;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::StopReason;
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxModelDefinition, FauxOptions, FauxProvider, faux_assistant_message,
    faux_tool_call,
};
use pi_coding_agent::rpc::RpcRuntime;
use pi_coding_agent::runtime::targets::ForkError;
use pi_coding_agent::runtime::{ForkReplacement, Replacement, SessionHost};
use pi_coding_agent::session::AgentSession;
use pi_coding_agent::session::ShutdownReason;
use pi_coding_agent::storage::ForkPosition;
use pi_coding_agent::storage::SessionStore;
use rpc_support::start;
use serde_json::{Map, Value, json};
use session_support::{Echo, echo_call, harness, text};
use tokio_util::sync::CancellationToken;

/// A tool that runs until cancelled.
struct Wait;

impl AgentTool for Wait {
    fn name(&self) -> &str {
        "wait"
    }
    fn label(&self) -> &str {
        "Wait"
    }
    fn description(&self) -> &str {
        "Waits until aborted"
    }
    fn parameters(&self) -> &Value {
        static S: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        S.get_or_init(|| json!({"type":"object","properties":{}}))
    }
    fn execute<'a>(
        &'a self,
        _id: &'a str,
        _args: Value,
        cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            cancel.cancelled().await;
            Err(ToolError::new("Command aborted"))
        })
    }
}

fn wait_call() -> pi_ai::providers::faux::FauxStep {
    faux_assistant_message(
        vec![faux_tool_call("wait", Map::new(), Some("call_wait"))],
        FauxMessageOptions {
            stop_reason: Some(StopReason::ToolUse),
            ..Default::default()
        },
    )
    .into()
}

fn kind(v: &Value) -> &str {
    v["type"].as_str().unwrap_or("")
}

#[tokio::test]
async fn every_kind_of_bad_line_is_answered_and_the_server_keeps_serving() {
    let h = harness(vec![], |b| b);
    let mut c = start(h.session.clone());
    c.raw(b"\n{bad\n5\n[1]\n\"x\"\nnull\n{\"id\":7}\n{\"id\":\"u\",\"type\":\"nope\"}\n{\"type\":5}\n{\"type\":null}\n{\"id\":\"s\",\"type\":\"steer\"}\n")
        .await;
    let state = c.data("after", "get_state", json!({})).await;
    assert_eq!(state["isStreaming"], false);
    let responses: Vec<Value> = c
        .seen
        .iter()
        .filter(|v| v["type"] == "response" && v["id"] != "after")
        .cloned()
        .collect();
    assert_eq!(responses.len(), 11, "{responses:?}");
    let parse: Vec<&Value> = responses
        .iter()
        .filter(|v| v["command"] == "parse")
        .collect();
    assert_eq!(parse.len(), 2);
    for p in parse {
        assert!(p.get("id").is_none());
        assert!(
            p["error"]
                .as_str()
                .unwrap()
                .starts_with("Failed to parse command: ")
        );
    }
    let undefined: Vec<&Value> = responses
        .iter()
        .filter(|v| v["error"] == "Unknown command: undefined")
        .collect();
    assert_eq!(undefined.len(), 5, "5, [1], \"x\", null, {{id:7}}");
    assert!(undefined.iter().all(|v| v.get("command").is_none()));
    assert!(undefined.iter().any(|v| v["id"] == 7));
    assert!(responses.contains(&json!({"id":"u","type":"response","command":"nope","success":false,"error":"Unknown command: nope"})));
    assert!(responses.contains(
        &json!({"type":"response","command":5,"success":false,"error":"Unknown command: 5"})
    ));
    assert!(responses.contains(
        &json!({"type":"response","command":null,"success":false,"error":"Unknown command: null"})
    ));
    let steer = responses.iter().find(|v| v["id"] == "s").unwrap();
    assert_eq!(steer["success"], false);
    assert_eq!(steer["command"], "steer");
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn a_crlf_line_and_an_unterminated_last_line_are_commands() {
    let h = harness(vec![], |b| b);
    let mut c = start(h.session.clone());
    c.raw(b"{\"id\":\"a\",\"type\":\"get_state\"}\r\n{\"id\":\"b\",\"type\":\"get_messages\"}")
        .await;
    assert_eq!(c.response("a").await["success"], true);
    assert_eq!(c.finish().await, 0);
    let b = c
        .seen
        .iter()
        .find(|v| v["id"] == "b")
        .expect("answered at EOF");
    assert_eq!(b["data"], json!({"messages": []}));
}

#[tokio::test]
async fn prompt_responds_before_agent_start_and_queries_interleave_with_the_run() {
    let h = harness(vec![echo_call("c1", "x"), text("done")], |b| b);
    let mut c = start(h.session.clone());
    c.send(r#"{"id":"p","type":"prompt","message":"hi"}"#).await;
    c.send(r#"{"id":"s","type":"get_state"}"#).await;
    let settled = c.until(|v| kind(v) == "agent_settled").await;
    assert_eq!(settled, json!({"type":"agent_settled"}));
    let p = c.position(|v| v["id"] == "p").unwrap();
    let start = c.position(|v| kind(v) == "agent_start").unwrap();
    assert!(p < start, "prompt response precedes agent_start");
    assert_eq!(
        c.response("p").await,
        json!({"id":"p","type":"response","command":"prompt","success":true})
    );
    assert_eq!(c.response("s").await["success"], true);
    // Events are the json-mode projection.
    let update = c.seen.iter().find(|v| kind(v) == "message_update").unwrap();
    let keys: Vec<&String> = update.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["type", "usage", "assistantMessageEvent"]);
    assert!(update["assistantMessageEvent"].get("partial").is_none());
    assert!(c.seen.iter().any(|v| kind(v) == "tool_execution_end"));
    let end = c.seen.iter().find(|v| kind(v) == "agent_end").unwrap();
    assert_eq!(end["willRetry"], false);

    assert_eq!(
        c.data("t", "get_last_assistant_text", json!({})).await,
        json!({"text": "done"})
    );
    let messages = c.data("m", "get_messages", json!({})).await;
    let roles: Vec<&str> = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
    let state = c.data("s2", "get_state", json!({})).await;
    assert_eq!(state["messageCount"], 4);
    assert_eq!(state["thinkingLevel"], "off");
    assert_eq!(state["steeringMode"], "one-at-a-time");
    assert_eq!(state["followUpMode"], "one-at-a-time");
    assert_eq!(state["autoCompactionEnabled"], true);
    assert_eq!(state["pendingMessageCount"], 0);
    assert_eq!(state["model"]["provider"], "faux");
    assert!(state.get("sessionFile").is_none(), "in memory");
    assert!(state.get("sessionName").is_none());
    assert_eq!(state["sessionId"], h.session.session_id());

    let stats = c.data("st", "get_session_stats", json!({})).await;
    assert_eq!(stats["userMessages"], 1);
    assert_eq!(stats["assistantMessages"], 2);
    assert_eq!(stats["toolCalls"], 1);
    assert_eq!(stats["toolResults"], 1);

    let fork = c.data("f", "get_fork_messages", json!({})).await;
    let fm = fork["messages"].as_array().unwrap();
    assert_eq!(fm.len(), 1);
    assert_eq!(fm[0]["text"], "hi");
    let user_entry = fm[0]["entryId"].as_str().unwrap().to_owned();

    let entries = c.data("e", "get_entries", json!({})).await;
    let all = entries["entries"].as_array().unwrap();
    let types: Vec<&str> = all.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "model_change",
            "thinking_level_change",
            "message",
            "message",
            "message",
            "message"
        ]
    );
    assert_eq!(entries["leafId"], all.last().unwrap()["id"]);
    let since = c
        .data("e2", "get_entries", json!({"since": user_entry}))
        .await;
    assert_eq!(since["entries"].as_array().unwrap().len(), 3);
    let missing = c.call("e3", "get_entries", json!({"since": "zz"})).await;
    assert_eq!(
        missing,
        json!({"id":"e3","type":"response","command":"get_entries","success":false,"error":"Entry not found: zz"})
    );

    let tree = c.data("tr", "get_tree", json!({})).await;
    let roots = tree["tree"].as_array().unwrap();
    assert_eq!(roots.len(), 1);
    let mut node = &roots[0];
    let mut depth = 1;
    while let Some(child) = node["children"].as_array().unwrap().first() {
        node = child;
        depth += 1;
    }
    assert_eq!(depth, 6);
    assert_eq!(node["entry"]["id"], tree["leafId"]);

    let empty = c
        .call("n0", "set_session_name", json!({"name": "  "}))
        .await;
    assert_eq!(empty["error"], "Session name cannot be empty");
    c.data("n1", "set_session_name", json!({"name": "  My run "}))
        .await;
    let info = c.until(|v| kind(v) == "session_info_changed").await;
    assert_eq!(info, json!({"type":"session_info_changed","name":"My run"}));
    assert_eq!(
        c.data("s3", "get_state", json!({})).await["sessionName"],
        "My run"
    );
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn prompt_preflight_failures_are_error_responses() {
    // No model: pi's no-key text for the selected model.
    let faux = FauxProvider::new(FauxOptions::default());
    let f = faux.clone();
    let session = AgentSession::builder()
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .build()
        .unwrap();
    let mut c = start(session);
    let r = c.call("p", "prompt", json!({"message": "hi"})).await;
    assert_eq!(r["success"], false);
    assert_eq!(r["command"], "prompt");
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .starts_with("No API key found for the selected model."),
        "{r}"
    );
    assert_eq!(
        c.data("tl", "get_available_thinking_levels", json!({}))
            .await["levels"]
            .as_array()
            .unwrap()
            .len(),
        7
    );
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn abort_responds_after_agent_settled_and_a_busy_prompt_needs_a_streaming_behavior() {
    let h = harness(vec![wait_call(), text("after")], |b| {
        b.tools(vec![Arc::new(Wait)])
    });
    let mut c = start(h.session.clone());
    c.send(r#"{"id":"p","type":"prompt","message":"go"}"#).await;
    c.until(|v| kind(v) == "tool_execution_start").await;
    let busy = c.call("p2", "prompt", json!({"message": "again"})).await;
    assert_eq!(
        busy["error"],
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
    );
    let queued = c
        .call(
            "p3",
            "prompt",
            json!({"message": "later", "streamingBehavior": "followUp"}),
        )
        .await;
    assert_eq!(queued["success"], true);
    let q = c.until(|v| kind(v) == "queue_update").await;
    assert_eq!(
        q,
        json!({"type":"queue_update","steering":[],"followUp":["later"]})
    );
    let cleared = c.data("cq", "clear_queue", json!({})).await;
    assert_eq!(cleared, json!({"steering": [], "followUp": ["later"]}));
    c.send(r#"{"id":"a","type":"abort"}"#).await;
    let abort = c.response("a").await;
    assert_eq!(
        abort,
        json!({"id":"a","type":"response","command":"abort","success":true})
    );
    let settled = c
        .position(|v| kind(v) == "agent_settled")
        .expect("settled before abort's response");
    let answered = c.position(|v| v["id"] == "a").unwrap();
    assert!(settled < answered);
    assert_eq!(
        c.data("s", "get_state", json!({})).await["isStreaming"],
        false
    );
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn steer_and_follow_up_queue_while_idle() {
    let h = harness(vec![], |b| b);
    let mut c = start(h.session.clone());
    c.data("s", "steer", json!({"message": "a"})).await;
    c.data("f", "follow_up", json!({"message": "b"})).await;
    let state = c.data("st", "get_state", json!({})).await;
    assert_eq!(state["pendingMessageCount"], 2);
    let updates: Vec<&Value> = c
        .seen
        .iter()
        .filter(|v| kind(v) == "queue_update")
        .collect();
    assert_eq!(updates.last().unwrap()["followUp"], json!(["b"]));
    assert_eq!(
        c.data("cq", "clear_queue", json!({})).await,
        json!({"steering": ["a"], "followUp": ["b"]})
    );
    assert_eq!(c.finish().await, 0);
}

fn two_model_faux(reasoning_second: bool) -> FauxProvider {
    FauxProvider::new(FauxOptions {
        models: vec![
            FauxModelDefinition {
                id: "m1".into(),
                ..Default::default()
            },
            FauxModelDefinition {
                id: "m2".into(),
                reasoning: reasoning_second,
                ..Default::default()
            },
        ],
        ..Default::default()
    })
}

#[tokio::test]
async fn models_and_thinking_levels() {
    let faux = two_model_faux(true);
    let f = faux.clone();
    let session = AgentSession::builder()
        .model(faux.get_model("m1").unwrap())
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .build()
        .unwrap();
    let mut runtime = RpcRuntime::new(session.clone());
    let models = faux.models().to_vec();
    runtime.models = Some(Arc::new(move || models.clone()));
    let mut c = start(runtime);

    let all = c.data("am", "get_available_models", json!({})).await;
    let ids: Vec<&str> = all["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["m1", "m2"]);
    assert_eq!(
        c.data("l", "get_available_thinking_levels", json!({}))
            .await,
        json!({"levels": ["off"]})
    );
    assert_eq!(
        c.data("ct", "cycle_thinking_level", json!({})).await,
        Value::Null
    );

    let bad = c
        .call(
            "sm0",
            "set_model",
            json!({"provider": "faux", "modelId": "nope"}),
        )
        .await;
    assert_eq!(bad["error"], "Model not found: faux/nope");
    let set = c
        .data(
            "sm",
            "set_model",
            json!({"provider": "faux", "modelId": "m2"}),
        )
        .await;
    assert_eq!(set["id"], "m2");
    assert_eq!(set["reasoning"], true);
    assert_eq!(session.model().unwrap().id, "m2");
    let levels = c
        .data("l2", "get_available_thinking_levels", json!({}))
        .await;
    assert_eq!(
        levels,
        json!({"levels": ["off", "minimal", "low", "medium", "high"]})
    );

    c.data("st", "set_thinking_level", json!({"level": "high"}))
        .await;
    let changed = c
        .until(|v| kind(v) == "thinking_level_changed" && v["level"] == "high")
        .await;
    assert_eq!(
        changed,
        json!({"type":"thinking_level_changed","level":"high"})
    );
    let invalid = c
        .call("st2", "set_thinking_level", json!({"level": "loud"}))
        .await;
    assert_eq!(invalid["success"], false);
    // Cycling wraps from the last level to `off`.
    assert_eq!(
        c.data("ct2", "cycle_thinking_level", json!({})).await,
        json!({"level": "off"})
    );
    assert_eq!(
        c.data("ct3", "cycle_thinking_level", json!({})).await,
        json!({"level": "minimal"})
    );

    let cycled = c.data("cm", "cycle_model", json!({})).await;
    assert_eq!(cycled["model"]["id"], "m1");
    assert_eq!(cycled["thinkingLevel"], "off", "m1 does not reason");
    assert_eq!(cycled["isScoped"], false);
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn cycle_model_with_one_model_is_null() {
    let h = harness(vec![], |b| b);
    let mut c = start(h.session.clone());
    assert_eq!(c.data("cm", "cycle_model", json!({})).await, Value::Null);
    let models = c.data("am", "get_available_models", json!({})).await;
    assert_eq!(models["models"].as_array().unwrap().len(), 1);
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn settings_commands_change_state() {
    let h = harness(vec![], |b| b);
    let mut c = start(h.session.clone());
    c.data("a", "set_steering_mode", json!({"mode": "all"}))
        .await;
    c.data("b", "set_follow_up_mode", json!({"mode": "all"}))
        .await;
    c.data("c", "set_auto_compaction", json!({"enabled": false}))
        .await;
    c.data("d", "set_auto_retry", json!({"enabled": false}))
        .await;
    c.data("e", "abort_retry", json!({})).await;
    let bad = c
        .call("f", "set_steering_mode", json!({"mode": "some"}))
        .await;
    assert_eq!(bad["success"], false);
    let state = c.data("s", "get_state", json!({})).await;
    assert_eq!(state["steeringMode"], "all");
    assert_eq!(state["followUpMode"], "all");
    assert_eq!(state["autoCompactionEnabled"], false);
    assert!(!h.session.auto_retry_enabled());
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn bash_streams_chunks_with_the_request_id_and_records_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Mutex::new(SessionStore::in_memory(
        dir.path().to_str().unwrap(),
    )));
    let h = harness(vec![], |b| b.store(store));
    let mut c = start(h.session.clone());
    let r = c
        .data("b", "bash", json!({"command": "echo hi; echo there"}))
        .await;
    assert_eq!(
        r,
        json!({"output": "hi\nthere\n", "exitCode": 0, "cancelled": false, "truncated": false})
    );
    let chunks: String = c
        .seen
        .iter()
        .filter(|v| kind(v) == "bash_execution_update")
        .map(|v| {
            assert_eq!(v["id"], "b");
            v["delta"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(chunks, "hi\nthere\n");
    c.data("ab", "abort_bash", json!({})).await;
    let messages = c.data("m", "get_messages", json!({})).await;
    assert_eq!(messages["messages"][0]["role"], "bashExecution");
    assert_eq!(messages["messages"][0]["command"], "echo hi; echo there");
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn export_html_writes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file_store = SessionStore::create(&dir.path().join("sessions"), "/tmp", None).unwrap();
    let h = harness(vec![text("hello")], |b| {
        b.store(Arc::new(Mutex::new(file_store)))
    });
    let mut c = start(h.session.clone());
    c.send(r#"{"id":"p","type":"prompt","message":"hi"}"#).await;
    c.until(|v| kind(v) == "agent_settled").await;
    let out = dir.path().join("out.html");
    let r = c
        .data(
            "x",
            "export_html",
            json!({"outputPath": out.to_str().unwrap()}),
        )
        .await;
    assert_eq!(r, json!({"path": out.to_str().unwrap()}));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("hello"));
    // A live session's export carries the agent's system prompt (pi's `exportSessionToHtml`
    // passes its state); an export of a file has none.
    assert!(html.contains(r#""systemPrompt":""#), "{html}");
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn commands_without_their_runtime_seam_are_errors() {
    let h = harness(vec![], |b| b);
    let mut c = start(h.session.clone());
    for (id, kind, fields) in [
        ("1", "new_session", json!({})),
        ("2", "switch_session", json!({"sessionPath": "/x.jsonl"})),
        ("3", "fork", json!({"entryId": "abc"})),
        ("4", "clone", json!({})),
    ] {
        let r = c.call(id, kind, fields).await;
        assert_eq!(r["success"], false, "{r}");
        assert_eq!(r["command"], kind);
        assert!(r["error"].as_str().unwrap().contains(kind), "{r}");
    }
    assert_eq!(
        c.data("g", "get_commands", json!({})).await,
        json!({"commands": []})
    );
    assert_eq!(c.finish().await, 0);
}

/// A host replacing the session with a fresh in-memory one (or cancelling when asked to).
struct TestHost {
    faux: FauxProvider,
    calls: Arc<Mutex<Vec<String>>>,
}

impl TestHost {
    fn build(&self) -> AgentSession {
        let f = self.faux.clone();
        AgentSession::builder()
            .model(self.faux.model())
            .tools(vec![Arc::new(Echo)])
            .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
            .build()
            .unwrap()
    }
}

impl SessionHost for TestHost {
    fn new_session(
        &self,
        current: AgentSession,
        parent: Option<String>,
    ) -> BoxFuture<'_, Replacement> {
        Box::pin(async move {
            self.calls.lock().unwrap().push(format!("new {parent:?}"));
            current.shutdown(ShutdownReason::New, None).await;
            Ok(Some(self.build()))
        })
    }
    fn switch_session(&self, _current: AgentSession, path: String) -> BoxFuture<'_, Replacement> {
        Box::pin(async move {
            self.calls.lock().unwrap().push(format!("switch {path}"));
            Ok(None)
        })
    }
    fn fork(
        &self,
        _current: AgentSession,
        entry_id: String,
        position: ForkPosition,
    ) -> BoxFuture<'_, ForkReplacement> {
        let at = position == ForkPosition::At;
        Box::pin(async move {
            self.calls
                .lock()
                .unwrap()
                .push(format!("fork {entry_id} {at}"));
            if entry_id == "bad" {
                return Err(ForkError::InvalidEntry.into());
            }
            Ok((Some(self.build()), "picked".into()))
        })
    }
}

#[tokio::test]
async fn session_replacing_commands_rebind_the_events_to_the_new_session() {
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![text("from the new session")]);
    let calls = Arc::new(Mutex::new(Vec::new()));
    let host = Arc::new(TestHost {
        faux: faux.clone(),
        calls: calls.clone(),
    });
    let first = host.build();
    let first_id = first.session_id();
    let mut runtime = RpcRuntime::new(first);
    runtime.host = Some(host);
    let mut c = start(runtime);

    assert_eq!(
        c.data("sw", "switch_session", json!({"sessionPath": "/s.jsonl"}))
            .await,
        json!({"cancelled": true})
    );
    assert_eq!(
        c.data("s0", "get_state", json!({})).await["sessionId"],
        first_id
    );
    let bad = c.call("fb", "fork", json!({"entryId": "bad"})).await;
    assert_eq!(bad["error"], "Invalid entry ID for forking");

    assert_eq!(
        c.data("n", "new_session", json!({"parentSession": "/p.jsonl"}))
            .await,
        json!({"cancelled": false})
    );
    let second_id = c.data("s1", "get_state", json!({})).await["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(second_id, first_id);
    c.send(r#"{"id":"p","type":"prompt","message":"hi"}"#).await;
    c.until(|v| kind(v) == "agent_settled").await;
    assert_eq!(
        c.data("t", "get_last_assistant_text", json!({})).await,
        json!({"text": "from the new session"})
    );

    assert_eq!(
        c.data("f", "fork", json!({"entryId": "e1"})).await,
        json!({"text": "picked", "cancelled": false})
    );
    assert_eq!(
        c.data("cl", "clone", json!({})).await,
        json!({"cancelled": false})
    );
    let log = calls.lock().unwrap().clone();
    assert_eq!(log[0], "switch /s.jsonl");
    assert_eq!(log[1], "fork bad false");
    assert_eq!(log[2], "new Some(\"/p.jsonl\")");
    assert_eq!(log[3], "fork e1 false");
    assert!(
        log[4].starts_with("fork ") && log[4].ends_with(" true"),
        "clone forks at the leaf"
    );
    assert_eq!(c.finish().await, 0);
}

#[tokio::test]
async fn end_of_input_mid_run_aborts_it_and_exits_zero() {
    let h = harness(vec![wait_call(), text("never")], |b| {
        b.tools(vec![Arc::new(Wait)])
    });
    let mut c = start(h.session.clone());
    c.send(r#"{"id":"p","type":"prompt","message":"go"}"#).await;
    c.until(|v| kind(v) == "tool_execution_start").await;
    assert_eq!(c.finish().await, 0);
    assert!(!h.session.is_streaming());
    // Nothing is written once the input ended (pi unsubscribes before disposing).
    assert!(c.position(|v| kind(v) == "agent_settled").is_none());
}

#[tokio::test]
async fn compact_summarizes_with_the_model_and_reports_failures() {
    use pi_coding_agent::config::settings::SettingsManager;
    let mut m = Map::new();
    m.insert("compaction".into(), json!({"keepRecentTokens": 1}));
    let settings = Arc::new(Mutex::new(SettingsManager::in_memory(m)));
    let h = harness(
        vec![
            text("first answer"),
            text("second answer"),
            text("THE SUMMARY"),
            text("THE PREFIX"),
        ],
        |b| {
            b.settings(settings).compactor(Arc::new(
                pi_coding_agent::session::auto_compaction::AutoCompactor::new(),
            ))
        },
    );
    let mut c = start(h.session.clone());

    // An empty session has nothing to compact.
    let empty = c.call("c0", "compact", json!({})).await;
    assert_eq!(empty["error"], "Nothing to compact (session too small)");
    let end = c.until(|v| kind(v) == "compaction_end").await;
    assert_eq!(
        end,
        json!({"type":"compaction_end","reason":"manual","aborted":false,"willRetry":false,
               "errorMessage":"Compaction failed: Nothing to compact (session too small)"})
    );
    let start_pos = c.position(|v| kind(v) == "compaction_start").unwrap();
    assert_eq!(
        c.seen[start_pos],
        json!({"type":"compaction_start","reason":"manual"})
    );

    for (id, msg) in [("p1", "one"), ("p2", "two")] {
        c.send(&json!({"id": id, "type": "prompt", "message": msg}).to_string())
            .await;
        c.response(id).await;
        c.until(|v| kind(v) == "agent_settled").await;
    }
    let result = c
        .data("c1", "compact", json!({"customInstructions": "be brief"}))
        .await;
    assert!(
        result["summary"]
            .as_str()
            .unwrap()
            .starts_with("THE SUMMARY"),
        "{result}"
    );
    assert!(result["firstKeptEntryId"].is_string());
    assert!(result["tokensBefore"].as_u64().unwrap() > 0);
    assert!(result.get("estimatedTokensAfter").is_some());
    let end = c
        .until(|v| kind(v) == "compaction_end" && v.get("result").is_some())
        .await;
    assert_eq!(end["result"], result);
    let entries = c.data("e", "get_entries", json!({})).await;
    assert_eq!(
        entries["entries"].as_array().unwrap().last().unwrap()["type"],
        "compaction"
    );
    let messages = c.data("m", "get_messages", json!({})).await;
    assert_eq!(messages["messages"][0]["role"], "compactionSummary");
    let again = c.call("c2", "compact", json!({})).await;
    assert_eq!(again["error"], "Already compacted");
    assert_eq!(c.finish().await, 0);
}
