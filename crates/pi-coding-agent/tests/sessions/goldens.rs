//! The session's event stream against the TypeScript pi's goldens.
//!
//! Each scenario of `tests/data/session_goldens/` (vendored from the conformance harness)
//! runs an `AgentSession` in-process on the real wire API against `ReplayServer` serving the
//! scenario's recorded replies. The session's events, in the json-mode projection and
//! normalized as the harness normalizes them (timestamps, ids, the live partial snapshot),
//! must equal the golden `stdout.jsonl` record for record (the first golden line, the session
//! header, is the CLI's).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pi_ai::testkit::{ReplayServer, Reply};
use pi_ai::{InputKind, Model, ModelCost};
use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::session::auto_compaction::AutoCompactor;
use pi_coding_agent::session::{AgentSession, AuthSource, PromptOptions};
use pi_coding_agent::storage::SessionStore;
use pi_coding_agent::tools::{BuiltinToolOptions, create_builtin_tool};
use serde_json::Value;

fn scenario_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/session_goldens")
        .join(name)
}

struct Key;
impl AuthSource for Key {
    fn has_auth(&self, _provider: &str) -> bool {
        true
    }
    fn api_key(&self, _provider: &str) -> Option<String> {
        Some("replay-test-key".into())
    }
}

/// The harness's provider name and URL suffix per wire API.
fn provider_for(api: &str) -> (&'static str, &'static str) {
    match api {
        "anthropic-messages" => ("replay-anthropic", ""),
        "openai-completions" => ("replay-openai", "/v1"),
        "openai-responses" => ("replay-responses", "/v1"),
        _ => ("replay-google", "/v1beta"),
    }
}

fn replay_model(api: &str, base_url: &str) -> Model {
    replay_model_named(api, base_url, "replay-model")
}

/// The harness's models: `replay-model`, and `replay-thinker` (reasoning).
fn replay_model_named(api: &str, base_url: &str, id: &str) -> Model {
    let (provider, suffix) = provider_for(api);
    Model {
        id: id.into(),
        name: id.into(),
        api: api.into(),
        provider: provider.into(),
        base_url: format!("{base_url}{suffix}"),
        reasoning: id == "replay-thinker",
        input: vec![InputKind::Text],
        cost: ModelCost {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
            ..Default::default()
        },
        context_window: 128_000,
        max_tokens: 16_384,
        ..Default::default()
    }
}

fn register_wire_apis() {
    use pi_ai::providers::registry::register_api;
    register_api(Arc::new(
        pi_ai::providers::openai_completions::OpenAiCompletions,
    ));
    register_api(Arc::new(
        pi_ai::providers::openai_responses::OpenAiResponses,
    ));
}

/// The harness's normalization (`run_pi.py`): numeric `timestamp` → `<TIMESTAMP_MS>`, the
/// work dir → `<CWD>`, UUIDs, ISO times, 8-hex entry ids → `<IDn>` in order of appearance.
struct Normalizer {
    cwd: String,
    ids: HashMap<String, String>,
    uuid: regex::Regex,
    iso: regex::Regex,
    google_call_id: regex::Regex,
}

impl Normalizer {
    fn new(cwd: &Path) -> Self {
        Normalizer {
            cwd: cwd.display().to_string(),
            ids: HashMap::new(),
            uuid: regex::Regex::new(
                r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            )
            .unwrap(),
            iso: regex::Regex::new(r"\d{4}-\d{2}-\d{2}T\d{2}[:\-]\d{2}[:\-]\d{2}(?:[.\-]\d+)?Z?")
                .unwrap(),
            google_call_id: regex::Regex::new(r"\b([A-Za-z0-9_-]+?)_1\d{12}_(\d+)\b").unwrap(),
        }
    }

    fn value(&mut self, v: Value, key: Option<&str>) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .map(|(k, x)| {
                        let x = self.value(x, Some(&k));
                        (k, x)
                    })
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.into_iter().map(|x| self.value(x, None)).collect()),
            Value::Number(_) if key == Some("timestamp") => "<TIMESTAMP_MS>".into(),
            Value::String(s) => {
                let is_id_key = matches!(
                    key,
                    Some("id" | "parentId" | "firstKeptEntryId" | "targetId" | "fromId")
                );
                if is_id_key && s.len() == 8 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
                    let n = self.ids.len() + 1;
                    return self
                        .ids
                        .entry(s)
                        .or_insert_with(|| format!("<ID{n}>"))
                        .clone()
                        .into();
                }
                let s = s.replace(&self.cwd, "<CWD>");
                let s = self.uuid.replace_all(&s, "<UUID>");
                let s = self.iso.replace_all(&s, "<ISO_TIME>");
                self.google_call_id
                    .replace_all(&s, "${1}_<NOW>_${2}")
                    .into_owned()
                    .into()
            }
            other => other,
        }
    }
}

/// The harness's `scrub_live`: the live partial snapshot of an assistant `message_start` and
/// `message_update.usage`.
fn scrub_live(mut event: Value) -> Value {
    if event["type"] == "message_update" && event.get("usage").is_some() {
        event["usage"] = "<LIVE>".into();
    }
    if event["type"] == "message_start" && event["message"]["role"] == "assistant" {
        let msg = event["message"].as_object_mut().unwrap();
        for k in ["content", "usage", "stopReason"] {
            if msg.contains_key(k) {
                msg.insert(k.into(), "<LIVE>".into());
            }
        }
        for k in [
            "responseId",
            "responseModel",
            "rawStopReason",
            "errorMessage",
        ] {
            msg.remove(k);
        }
    }
    event
}

struct Run {
    events: Vec<Value>,
    session_lines: Vec<Value>,
    requests: usize,
}

async fn run_scenario(name: &str) -> Run {
    register_wire_apis();
    let dir = scenario_dir(name);
    let script: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("script.json")).unwrap()).unwrap();
    let replies = Reply::load_script(&dir.join("script.json")).unwrap();
    let (_addr, server) = ReplayServer::start(replies).await.unwrap();

    let work = tempfile::tempdir().unwrap();
    let cwd = work.path().canonicalize().unwrap();
    if let Some(files) = script["files"].as_object() {
        for (path, text) in files {
            let p = cwd.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text.as_str().unwrap()).unwrap();
        }
    }
    let sessions = tempfile::tempdir().unwrap();
    let with_session = script["session"].as_bool().unwrap_or(false);
    let store = if with_session {
        SessionStore::create(sessions.path(), &cwd.display().to_string(), None).unwrap()
    } else {
        SessionStore::in_memory(&cwd.display().to_string())
    };
    let settings = script["settings"].as_object().cloned().unwrap_or_default();
    let args: Vec<&str> = script["args"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let flag = |name: &str| {
        args.iter()
            .position(|a| *a == name)
            .and_then(|i| args.get(i + 1).copied())
    };
    let tool_names: Vec<String> = match flag("--tools") {
        Some(list) => list.split(',').map(str::to_owned).collect(),
        None => ["read", "bash", "edit", "write"]
            .map(str::to_owned)
            .to_vec(),
    };
    let thinking = flag("--thinking").and_then(pi_ai::ModelThinkingLevel::parse);
    let tools = tool_names
        .iter()
        .filter_map(|n| create_builtin_tool(n, &cwd, &BuiltinToolOptions::default()))
        .collect();

    let api = script["api"].as_str().unwrap_or("anthropic-messages");
    let model_id = script["model"].as_str().unwrap_or("replay-model");
    let mut builder = AgentSession::builder();
    if let Some(level) = thinking {
        builder = builder.thinking_level(level);
    }
    let session = builder
        .model(replay_model_named(api, &server.base_url(), model_id))
        .settings(Arc::new(Mutex::new(SettingsManager::in_memory(settings))))
        .store(Arc::new(Mutex::new(store)))
        .tools(tools)
        .system_prompt("You are a test assistant.")
        .auth(Arc::new(Key))
        .compactor(Arc::new(AutoCompactor::new()))
        .build()
        .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    session.subscribe(move |e| {
        // As written: numbers spelled as JavaScript writes them.
        let line = e.to_json_line();
        sink.lock()
            .unwrap()
            .push(serde_json::from_str::<Value>(&line).unwrap());
        Ok(())
    });
    session
        .prompt(script["prompt"].as_str().unwrap(), PromptOptions::default())
        .await
        .unwrap();

    let mut n = Normalizer::new(&cwd);
    let events = std::mem::take(&mut *events.lock().unwrap())
        .into_iter()
        .map(|e| scrub_live(n.value(e, None)))
        .collect();
    let session_lines = match session.session_file() {
        Some(p) if with_session => {
            let mut n = Normalizer::new(&cwd);
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .map(|l| n.value(serde_json::from_str(l).unwrap(), None))
                .collect()
        }
        _ => Vec::new(),
    };
    Run {
        events,
        session_lines,
        requests: server.request_count(),
    }
}

fn golden(name: &str, file: &str) -> Vec<Value> {
    std::fs::read_to_string(scenario_dir(name).join(file))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            let t = e["type"].as_str().unwrap_or("?").to_owned();
            match t.as_str() {
                "message_update" => format!("{t}:{}", e["assistantMessageEvent"]["type"]),
                "message_start" | "message_end" => format!("{t}:{}", e["message"]["role"]),
                _ => t,
            }
        })
        .collect()
}

/// Parallel tools finish in whatever order they finish (pi's too: `tool_execution_end`
/// follows each pipeline's completion): a run of consecutive
/// `tool_execution_end` records is compared in `toolCallId` order.
fn canonical_tool_ends(mut events: Vec<Value>) -> Vec<Value> {
    let mut i = 0;
    while i < events.len() {
        let mut j = i;
        while j < events.len() && events[j]["type"] == "tool_execution_end" {
            j += 1;
        }
        if j > i + 1 {
            events[i..j].sort_by(|a, b| {
                a["toolCallId"]
                    .as_str()
                    .unwrap_or("")
                    .cmp(b["toolCallId"].as_str().unwrap_or(""))
            });
        }
        i = j.max(i + 1);
    }
    events
}

/// Compares record by record, reporting the first difference readably.
fn assert_same_events(name: &str, actual: &[Value]) {
    let expected: Vec<Value> = golden(name, "expected_stdout.jsonl")
        .into_iter()
        .skip(1)
        .collect();
    let expected = canonical_tool_ends(expected);
    let actual = canonical_tool_ends(actual.to_vec());
    let actual = actual.as_slice();
    assert_eq!(kinds(actual), kinds(&expected), "{name}: event order");
    for (i, (a, e)) in actual.iter().zip(&expected).enumerate() {
        assert_eq!(
            a,
            e,
            "{name}: record #{} ({}) differs\nactual:   {}\nexpected: {}",
            i + 2,
            e["type"],
            a,
            e
        );
    }
}

#[tokio::test]
async fn text_anthropic_matches_the_golden_events() {
    let run = run_scenario("text_anthropic").await;
    assert_same_events("text_anthropic", &run.events);
    assert_eq!(run.requests, 1);
}

#[tokio::test]
async fn tool_read_matches_the_golden_events() {
    let run = run_scenario("tool_read").await;
    assert_same_events("tool_read", &run.events);
    assert_eq!(run.requests, 2);
}

#[tokio::test]
async fn retry_http_500_matches_the_golden_events() {
    let run = run_scenario("retry_http_500").await;
    assert_same_events("retry_http_500", &run.events);
    assert_eq!(run.requests, 2);
}

#[tokio::test]
async fn stream_error_event_matches_the_golden_events() {
    let run = run_scenario("stream_error_event").await;
    assert_same_events("stream_error_event", &run.events);
    assert_eq!(run.requests, 2);
}

#[tokio::test]
async fn tool_parallel_ls_read_matches_the_golden_events() {
    let run = run_scenario("tool_parallel_ls_read").await;
    assert_same_events("tool_parallel_ls_read", &run.events);
    assert_eq!(run.requests, 2);
}

#[tokio::test]
async fn session_tool_read_writes_the_golden_session_file() {
    let run = run_scenario("session_tool_read").await;
    assert_same_events("session_tool_read", &run.events);
    let expected: Vec<Value> = golden("session_tool_read", "expected_session.jsonl")
        .into_iter()
        .skip(1) // the harness's {"__file__": …} record
        .collect();
    assert_eq!(run.session_lines.len(), expected.len());
    for (i, (a, e)) in run.session_lines.iter().zip(&expected).enumerate() {
        assert_eq!(a, e, "session line {}", i + 1);
    }
}

#[tokio::test]
async fn compaction_auto_matches_the_golden_events_and_session_file() {
    let run = run_scenario("compaction_auto").await;
    assert_eq!(run.requests, 3, "tool use, big usage, one summary request");
    assert_same_events("compaction_auto", &run.events);
    let expected: Vec<Value> = golden("compaction_auto", "expected_session.jsonl")
        .into_iter()
        .skip(1)
        .collect();
    assert_eq!(run.session_lines.len(), expected.len());
    for (i, (a, e)) in run.session_lines.iter().zip(&expected).enumerate() {
        assert_eq!(a, e, "session line {}", i + 1);
    }
}

/// Rewrites the request body and records the response status.
#[derive(Default)]
struct ProviderHooks(Mutex<Vec<String>>);

impl pi_coding_agent::session::SessionHooks for ProviderHooks {
    fn before_provider_request(
        &self,
        mut payload: Value,
    ) -> futures::future::BoxFuture<'_, Option<Value>> {
        payload["metadata"] = serde_json::json!({"user_id": "from-hook"});
        Box::pin(async move { Some(payload) })
    }
    fn after_provider_response(
        &self,
        status: u16,
        headers: Vec<(String, String)>,
    ) -> futures::future::BoxFuture<'_, ()> {
        let ct = headers
            .iter()
            .find(|(k, _)| k == "content-type")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        self.0.lock().unwrap().push(format!("{status} {ct}"));
        Box::pin(async {})
    }
}

#[tokio::test]
async fn provider_request_and_response_hooks_reach_the_wire() {
    let dir = scenario_dir("text_anthropic");
    let replies = Reply::load_script(&dir.join("script.json")).unwrap();
    let (_addr, server) = ReplayServer::start(replies).await.unwrap();
    let hooks = Arc::new(ProviderHooks::default());
    let session = AgentSession::builder()
        .model(replay_model("anthropic-messages", &server.base_url()))
        .auth(Arc::new(Key))
        .hooks(hooks.clone())
        .build()
        .unwrap();
    session
        .prompt("Say hello", PromptOptions::default())
        .await
        .unwrap();
    let body = server.requests()[0].body_json().unwrap();
    assert_eq!(body["metadata"]["user_id"], "from-hook");
    let seen = hooks.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].starts_with("200 text/event-stream"), "{seen:?}");
}

macro_rules! golden_scenario {
    ($test:ident, $name:literal, $requests:literal) => {
        #[tokio::test]
        async fn $test() {
            let run = run_scenario($name).await;
            assert_same_events($name, &run.events);
            assert_eq!(run.requests, $requests);
        }
    };
}

golden_scenario!(text_google_matches_the_golden_events, "text_google", 1);
golden_scenario!(
    text_openai_completions_matches_the_golden_events,
    "text_openai_completions",
    1
);
golden_scenario!(
    text_openai_responses_matches_the_golden_events,
    "text_openai_responses",
    1
);
golden_scenario!(
    thinking_anthropic_matches_the_golden_events,
    "thinking_anthropic",
    1
);
golden_scenario!(tool_bash_matches_the_golden_events, "tool_bash", 2);
golden_scenario!(tool_edit_matches_the_golden_events, "tool_edit", 2);
golden_scenario!(
    tool_invalid_args_matches_the_golden_events,
    "tool_invalid_args",
    2
);
