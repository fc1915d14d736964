//! The harness's normalization rules 1–11 (`conformance/README.md`), a line-for-line port of
//! `run_pi.py`'s `Normalizer`, `scrub_live`, `mask_prose`, `normalize_request` and
//! `normalize`.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value, json};

use super::pyjson::{Dumps, dumps, splitlines};

/// Artifact files, in the harness's order (`run_pi.ARTIFACTS`).
pub(crate) const ARTIFACTS: [&str; 7] = [
    "exit_code",
    "stdout.jsonl",
    "stdout.txt",
    "stderr.txt",
    "requests.jsonl",
    "files.json",
    "session.jsonl",
];

/// Request headers kept (rule 10), in this order.
pub(crate) const KEEP_HEADERS: [&str; 7] = [
    "content-type",
    "authorization",
    "x-api-key",
    "x-goog-api-key",
    "anthropic-version",
    "anthropic-beta",
    "user-agent",
];

const ENTRY_ID_KEYS: [&str; 6] = [
    "id",
    "parentId",
    "firstKeptEntryId",
    "targetId",
    "fromId",
    "leafId",
];
const LIVE_MESSAGE_KEYS: [&str; 3] = ["content", "usage", "stopReason"];
const LIVE_OPTIONAL_KEYS: [&str; 4] = [
    "responseId",
    "responseModel",
    "rawStopReason",
    "errorMessage",
];
const SUMMARY_SPLIT: &str = "</conversation>";

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"))
}

static UUID_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"));
static ISO_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"\d{4}-\d{2}-\d{2}T\d{2}[:\-]\d{2}[:\-]\d{2}(?:[.\-]\d+)?Z?"));
// Python's `$` also matches before a final newline.
static HEX8_RE: LazyLock<Regex> = LazyLock::new(|| re(r"\A[0-9a-f]{8}\n?\z"));
static GOOGLE_CALL_ID_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b([A-Za-z0-9_-]+?)_1\d{12}_(\d+)\b"));
static PKG_DIR_RE: LazyLock<Regex> = LazyLock::new(|| re(r"Main documentation: (\S+)/README\.md"));
static PLATFORM_RE: LazyLock<Regex> = LazyLock::new(|| re(r"\([^)]*\)"));

/// One run's unnormalized results (`run_pi.run_scenario`'s dict).
#[derive(Clone, Debug, Default)]
pub(crate) struct RawRun {
    /// The temp root `R` (real path).
    pub root: String,
    /// The replay server's port.
    pub port: u16,
    /// Scenario mode `json` (else `text`).
    pub json_mode: bool,
    /// Scenario `session: true`.
    pub session: bool,
    /// Exit status, or `timeout`.
    pub exit_code: String,
    /// Raw stdout / stderr (lossily decoded).
    pub stdout: String,
    /// See `stdout`.
    pub stderr: String,
    /// The replay server's request log records (`seq, method, path, query, route, headers,
    /// body[, model]`).
    pub requests: Vec<Value>,
    /// Files under `R/work` (relative path, text or `<binary N bytes>`), in walk order.
    pub files: Vec<(String, String)>,
    /// Session files under `R/sessions` (relative path, parsed records).
    pub sessions: Vec<(String, Vec<Value>)>,
}

impl RawRun {
    /// Reads a `raw.json` written by `tests/data/conformance/make_raw.py`.
    pub(crate) fn from_json(v: &Value) -> RawRun {
        let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
        RawRun {
            root: s("root"),
            port: v["port"].as_u64().unwrap_or_default() as u16,
            json_mode: v["mode"] == "json",
            session: v["session"] == true,
            exit_code: match &v["exit_code"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            },
            stdout: s("stdout"),
            stderr: s("stderr"),
            requests: v["requests"].as_array().cloned().unwrap_or_default(),
            files: v["files"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, x)| (k.clone(), x.as_str().unwrap_or_default().to_owned()))
                        .collect()
                })
                .unwrap_or_default(),
            sessions: v["sessions"]
                .as_array()
                .map(|list| {
                    list.iter()
                        .map(|pair| {
                            (
                                pair[0].as_str().unwrap_or_default().to_owned(),
                                pair[1].as_array().cloned().unwrap_or_default(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// Replaces volatile values with stable placeholders (rules 2–8).
pub(crate) struct Normalizer {
    subs: Vec<(String, String)>,
    entry_ids: HashMap<String, String>,
}

impl Normalizer {
    /// `Normalizer(root, port, pkg_dir)`.
    pub(crate) fn new(root: &str, port: u16, pkg_dir: Option<&str>) -> Self {
        let mut subs = Vec::new();
        if let Some(dir) = pkg_dir.filter(|d| !d.is_empty()) {
            subs.push((dir.to_owned(), "<PI_PACKAGE_DIR>".to_owned()));
        }
        for (sub, placeholder) in [
            ("work", "<CWD>"),
            ("agent", "<AGENT_DIR>"),
            ("home", "<HOME>"),
            ("sessions", "<SESSION_DIR>"),
            ("tmp", "<TMPDIR>"),
        ] {
            subs.push((format!("{root}/{sub}"), placeholder.to_owned()));
        }
        subs.push((root.to_owned(), "<ROOT>".to_owned()));
        subs.push((format!("127.0.0.1:{port}"), "127.0.0.1:<PORT>".to_owned()));
        Normalizer {
            subs,
            entry_ids: HashMap::new(),
        }
    }

    /// Restarts the `<IDn>` numbering (done before the session file).
    pub(crate) fn reset_entry_ids(&mut self) {
        self.entry_ids.clear();
    }

    /// Rules 2–5 and 8 on a string.
    pub(crate) fn text(&self, s: &str) -> String {
        let mut s = s.to_owned();
        for (old, new) in &self.subs {
            s = s.replace(old.as_str(), new);
        }
        let s = UUID_RE.replace_all(&s, "<UUID>");
        let s = ISO_RE.replace_all(&s, "<ISO_TIME>");
        GOOGLE_CALL_ID_RE
            .replace_all(&s, "${1}_<NOW>_${2}")
            .into_owned()
    }

    fn entry_id(&mut self, v: &str) -> String {
        let next = format!("<ID{}>", self.entry_ids.len() + 1);
        self.entry_ids.entry(v.to_owned()).or_insert(next).clone()
    }

    /// Rules 2–8 on a JSON value found under `key`.
    pub(crate) fn value(&mut self, v: &Value, key: Option<&str>) -> Value {
        match v {
            Value::Object(map) => {
                let mut out = Map::new();
                for (k, x) in map {
                    let nx = self.value(x, Some(k));
                    out.insert(k.clone(), nx);
                }
                Value::Object(out)
            }
            Value::Array(items) => {
                Value::Array(items.iter().map(|x| self.value(x, None)).collect())
            }
            Value::Number(_) if key == Some("timestamp") => json!("<TIMESTAMP_MS>"),
            Value::String(s) => {
                if key.is_some_and(|k| ENTRY_ID_KEYS.contains(&k)) && HEX8_RE.is_match(s) {
                    Value::String(self.entry_id(s))
                } else {
                    Value::String(self.text(s))
                }
            }
            other => other.clone(),
        }
    }
}

/// Rule 9: timing-dependent snapshot values of a json-mode event become `"<LIVE>"`.
pub(crate) fn scrub_live(event: &mut Value) {
    let Some(obj) = event.as_object_mut() else {
        return;
    };
    let kind = obj.get("type").and_then(Value::as_str).map(str::to_owned);
    if kind.as_deref() == Some("message_update")
        && let Some(usage) = obj.get_mut("usage")
    {
        *usage = json!("<LIVE>");
    }
    if kind.as_deref() != Some("message_start") {
        return;
    }
    let Some(msg) = obj.get_mut("message").and_then(Value::as_object_mut) else {
        return;
    };
    if msg.get("role").and_then(Value::as_str) != Some("assistant") {
        return;
    }
    for k in LIVE_MESSAGE_KEYS {
        if let Some(x) = msg.get_mut(k) {
            *x = json!("<LIVE>");
        }
    }
    for k in LIVE_OPTIONAL_KEYS {
        msg.shift_remove(k);
    }
}

/// Rule 3: pi's package directory from the system prompt in the request log.
pub(crate) fn find_pkg_dir(requests: &[Value]) -> Option<String> {
    let ascii = Dumps {
        ensure_ascii: true,
        ..Dumps::default()
    };
    let text = ascii
        .to_string(&Value::Array(requests.to_vec()))
        .replace("\\n", "\n");
    PKG_DIR_RE
        .captures(&text)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str().to_owned())
}

fn mask_schema(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, x)| {
                    let masked = if k == "description" && x.is_string() {
                        json!("<DESCRIPTION>")
                    } else {
                        mask_schema(x)
                    };
                    (k.clone(), masked)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(mask_schema).collect()),
        other => other.clone(),
    }
}

fn mask_text(v: &Value) -> Value {
    match v
        .as_str()
        .and_then(|t| t.find(SUMMARY_SPLIT).map(|i| (t, i)))
    {
        Some((t, i)) => json!(format!(
            "{}<SUMMARY_INSTRUCTIONS>",
            &t[..i + SUMMARY_SPLIT.len()]
        )),
        None => v.clone(),
    }
}

fn mask_summary(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, x)| {
                    let masked = if k == "text" {
                        mask_text(x)
                    } else {
                        mask_summary(x)
                    };
                    (k.clone(), masked)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(mask_summary).collect()),
        other => mask_text(other),
    }
}

/// Rule 11: prose written for the model is masked in a request body.
pub(crate) fn mask_prose(body: &Value) -> Value {
    let Some(map) = body.as_object() else {
        return body.clone();
    };
    let mut b = map.clone();
    for key in ["system", "instructions", "systemInstruction"] {
        if let Some(x) = b.get_mut(key) {
            *x = json!("<SYSTEM_PROMPT>");
        }
    }
    for key in ["messages", "input"] {
        if let Some(Value::Array(items)) = b.get_mut(key) {
            for m in items.iter_mut() {
                let is_system = m
                    .get("role")
                    .and_then(Value::as_str)
                    .is_some_and(|r| r == "system" || r == "developer");
                if is_system && let Some(obj) = m.as_object_mut() {
                    obj.insert("content".into(), json!("<SYSTEM_PROMPT>"));
                }
            }
        }
    }
    if let Some(tools @ Value::Array(_)) = b.get_mut("tools") {
        *tools = mask_schema(tools);
    }
    mask_summary(&Value::Object(b))
}

/// One request record, normalized (rules 10, 11, then 2–8).
pub(crate) fn normalize_request(r: &Value, norm: &mut Normalizer) -> Value {
    let mut headers = Map::new();
    for k in KEEP_HEADERS {
        if let Some(h) = r["headers"].get(k) {
            let h = match (k, h.as_str()) {
                ("user-agent", Some(ua)) => json!(PLATFORM_RE.replace_all(ua, "(<PLATFORM>)")),
                _ => h.clone(),
            };
            headers.insert(k.into(), h);
        }
    }
    let mut out = Map::new();
    for k in ["seq", "method", "path", "query", "route"] {
        out.insert(k.into(), r.get(k).cloned().unwrap_or(Value::Null));
    }
    out.insert("headers".into(), Value::Object(headers));
    out.insert(
        "body".into(),
        mask_prose(r.get("body").unwrap_or(&Value::Null)),
    );
    if let Some(model) = r.get("model") {
        out.insert("model".into(), model.clone());
    }
    norm.value(&Value::Object(out), None)
}

/// The artifacts of a run (`run_pi.normalize`), by artifact name.
pub(crate) fn normalize(raw: &RawRun) -> Vec<(&'static str, String)> {
    let pkg_dir = find_pkg_dir(&raw.requests);
    let mut norm = Normalizer::new(&raw.root, raw.port, pkg_dir.as_deref());
    let mut arts = vec![("exit_code", format!("{}\n", raw.exit_code))];
    if raw.json_mode {
        let mut text = String::new();
        for line in splitlines(&raw.stdout) {
            let record = match serde_json::from_str::<Value>(line) {
                Ok(mut v) => {
                    scrub_live(&mut v);
                    norm.value(&v, None)
                }
                Err(_) => json!({"__non_json_line__": norm.text(line)}),
            };
            text.push_str(&dumps(&record));
            text.push('\n');
        }
        arts.push(("stdout.jsonl", text));
    } else {
        arts.push(("stdout.txt", norm.text(&raw.stdout)));
    }
    arts.push(("stderr.txt", norm.text(&raw.stderr)));
    let mut requests = String::new();
    for r in &raw.requests {
        requests.push_str(&dumps(&normalize_request(r, &mut norm)));
        requests.push('\n');
    }
    arts.push(("requests.jsonl", requests));
    let files: Map<String, Value> = raw
        .files
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let pretty = Dumps {
        sort_keys: true,
        indent: Some(2),
        ..Dumps::default()
    };
    let files = norm.value(&Value::Object(files), None);
    arts.push(("files.json", format!("{}\n", pretty.to_string(&files))));
    if raw.session {
        norm.reset_entry_ids();
        let mut text = String::new();
        for (rel, entries) in &raw.sessions {
            text.push_str(&dumps(&json!({"__file__": norm.text(rel)})));
            text.push('\n');
            for e in entries {
                text.push_str(&dumps(&norm.value(e, None)));
                text.push('\n');
            }
        }
        arts.push(("session.jsonl", text));
    }
    arts
}
