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
    let (provider, suffix) = provider_for(api);
    Model {
        id: "replay-model".into(),
        name: "replay-model".into(),
        api: api.into(),
        provider: provider.into(),
        base_url: format!("{base_url}{suffix}"),
        reasoning: false,
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
}

/// The harness's normalization (`run_pi.py`): numeric `timestamp` → `<TIMESTAMP_MS>`, the
/// work dir → `<CWD>`, UUIDs, ISO times, 8-hex entry ids → `<IDn>` in order of appearance.
struct Normalizer {
    cwd: String,
    ids: HashMap<String, String>,
    uuid: regex::Regex,
    iso: regex::Regex,
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
                self.iso.replace_all(&s, "<ISO_TIME>").into_owned().into()
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
        SessionStore::create(sessions.path(), &cwd.display().to_string(), None)
    } else {
        SessionStore::in_memory(&cwd.display().to_string())
    };
    let settings = script["settings"].as_object().cloned().unwrap_or_default();
    let tool_names: Vec<String> = match script["args"].as_array() {
        Some(a) if a.len() == 2 && a[0] == "--tools" => a[1]
            .as_str()
            .unwrap()
            .split(',')
            .map(str::to_owned)
            .collect(),
        _ => ["read", "bash", "edit", "write"]
            .map(str::to_owned)
            .to_vec(),
    };
    let tools = tool_names
        .iter()
        .filter_map(|n| create_builtin_tool(n, &cwd, &BuiltinToolOptions::default()))
        .collect();

    let api = script["api"].as_str().unwrap_or("anthropic-messages");
    let session = AgentSession::builder()
        .model(replay_model(api, &server.base_url()))
        .settings(Arc::new(Mutex::new(SettingsManager::in_memory(settings))))
        .store(Arc::new(Mutex::new(store)))
        .tools(tools)
        .system_prompt("You are a test assistant.")
        .auth(Arc::new(Key))
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

/// Compares record by record, reporting the first difference readably.
fn assert_same_events(name: &str, actual: &[Value]) {
    let expected: Vec<Value> = golden(name, "expected_stdout.jsonl")
        .into_iter()
        .skip(1)
        .collect();
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
