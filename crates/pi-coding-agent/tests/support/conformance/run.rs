//! Running one scenario with a `pi` binary, as `run_pi.py`'s `run_scenario` does: an
//! isolated temp root, the same environment, `models.json`, settings and command line, and
//! `pi_ai::testkit::ReplayServer` serving the scenario's script.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use pi_ai::testkit::{RecordedRequest, ReplayServer, Reply};
use serde_json::{Map, Value, json};

use super::normalize::RawRun;
use super::pyjson::Dumps;

/// wire API → (provider in models.json, path appended to the server URL).
pub(crate) const PROVIDERS: [(&str, &str, &str); 4] = [
    ("anthropic-messages", "replay-anthropic", ""),
    ("openai-completions", "replay-openai", "/v1"),
    ("openai-responses", "replay-responses", "/v1"),
    ("google-generative-ai", "replay-google", "/v1beta"),
];

/// The key every replay provider has.
pub(crate) const API_KEY: &str = "replay-test-key";

/// A scenario's `script.json` with the harness's defaults filled in.
#[derive(Clone, Debug)]
pub(crate) struct Scenario {
    /// Its directory.
    pub dir: PathBuf,
    /// The script.
    pub script: Value,
}

impl Scenario {
    /// Loads `<dir>/script.json`.
    pub(crate) fn load(dir: &Path) -> Scenario {
        let text = std::fs::read_to_string(dir.join("script.json")).unwrap();
        let mut script: Value = serde_json::from_str(&text).unwrap();
        let defaults = [
            ("api", json!("anthropic-messages")),
            ("model", json!("replay-model")),
            ("mode", json!("json")),
            ("session", json!(false)),
            ("args", json!([])),
            ("settings", json!({})),
            ("files", json!({})),
            ("env", json!({})),
            ("timeout", json!(60)),
        ];
        let obj = script.as_object_mut().unwrap();
        for (k, v) in defaults {
            obj.entry(k).or_insert(v);
        }
        Scenario {
            dir: dir.to_owned(),
            script,
        }
    }

    fn str(&self, key: &str) -> &str {
        self.script[key].as_str().unwrap_or_default()
    }

    /// `json` mode (else `text`).
    pub(crate) fn json_mode(&self) -> bool {
        self.str("mode") == "json"
    }

    /// `session: true`.
    pub(crate) fn session(&self) -> bool {
        self.script["session"] == true
    }

    fn provider(&self) -> &'static str {
        PROVIDERS
            .iter()
            .find(|(api, _, _)| *api == self.str("api"))
            .map(|(_, name, _)| *name)
            .unwrap_or_else(|| panic!("unknown api {}", self.str("api")))
    }

    /// `run_pi.pi_command` (without the binary).
    pub(crate) fn args(&self, root: &Path) -> Vec<String> {
        let mut cmd = vec!["-p".to_owned()];
        if self.json_mode() {
            cmd.extend(["--mode".into(), "json".into()]);
        }
        if self.session() {
            cmd.extend([
                "--session-dir".into(),
                root.join("sessions").display().to_string(),
            ]);
        } else {
            cmd.push("--no-session".into());
        }
        cmd.extend([
            "--provider".into(),
            self.provider().into(),
            "--model".into(),
            self.str("model").into(),
        ]);
        for a in self.script["args"].as_array().into_iter().flatten() {
            cmd.push(a.as_str().unwrap_or_default().to_owned());
        }
        cmd.push(self.str("prompt").to_owned());
        cmd
    }
}

/// `run_pi.models_json`.
pub(crate) fn models_json(base_url: &str) -> Value {
    let cost = json!({"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75});
    let models = json!([
        {"id": "replay-model", "reasoning": false, "contextWindow": 128000, "maxTokens": 16384, "cost": cost},
        {"id": "replay-thinker", "reasoning": true, "contextWindow": 128000, "maxTokens": 16384, "cost": cost},
    ]);
    let mut providers = Map::new();
    for (api, name, suffix) in PROVIDERS {
        providers.insert(
            name.into(),
            json!({"baseUrl": format!("{base_url}{suffix}"), "api": api, "apiKey": API_KEY, "models": models}),
        );
    }
    json!({ "providers": providers })
}

/// `run_pi.pi_env` plus the scenario's `env`.
pub(crate) fn pi_env(root: &Path, extra: &Value) -> Vec<(String, String)> {
    let p = |sub: &str| root.join(sub).display().to_string();
    let mut env: Vec<(String, String)> = [
        (
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_owned(),
        ),
        ("HOME", p("home")),
        ("TMPDIR", p("tmp")),
        ("PI_CODING_AGENT_DIR", p("agent")),
        ("PI_OFFLINE", "1".into()),
        ("PI_SKIP_VERSION_CHECK", "1".into()),
        ("PI_TELEMETRY", "0".into()),
        ("TZ", "UTC".into()),
        ("LANG", "C.UTF-8".into()),
        ("TERM", "dumb".into()),
        ("NO_COLOR", "1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    for (k, v) in extra.as_object().into_iter().flatten() {
        let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        env.retain(|(name, _)| name != k);
        env.push((k.clone(), v));
    }
    env
}

/// `replay_server.match_route`: (route, Google model).
pub(crate) fn match_route(path: &str) -> (Option<&'static str>, Option<String>) {
    if path.ends_with("/v1/messages") {
        return (Some("anthropic-messages"), None);
    }
    if path.ends_with("/chat/completions") {
        return (Some("openai-completions"), None);
    }
    if path.ends_with("/responses") {
        return (Some("openai-responses"), None);
    }
    if let Some(stem) = path.strip_suffix(":streamGenerateContent")
        && let Some((_, model)) = stem.rsplit_once("/models/")
        && !model.is_empty()
        && !model.contains('/')
    {
        return (Some("google-generative-ai"), Some(model.to_owned()));
    }
    (None, None)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.replace('+', " ").into_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|b| hex(*b)),
                bytes.get(i + 2).and_then(|b| hex(*b)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Python's `parse_qs` (blank values dropped).
pub(crate) fn parse_qs(query: &str) -> Value {
    let mut out = Map::new();
    for field in query.split('&') {
        let Some((k, v)) = field.split_once('=') else {
            continue;
        };
        if v.is_empty() {
            continue;
        }
        let list = out.entry(percent_decode(k)).or_insert_with(|| json!([]));
        if let Value::Array(items) = list {
            items.push(json!(percent_decode(v)));
        }
    }
    Value::Object(out)
}

/// The request-log record `replay_server.py` writes for `r` (without `reply`).
pub(crate) fn request_record(r: &RecordedRequest) -> Value {
    let (route, model) = match_route(&r.path);
    let valid = r.method == "POST" && route.is_some();
    let mut headers = Map::new();
    for (k, v) in &r.headers {
        headers.insert(k.clone(), json!(v));
    }
    let body = if r.body.is_empty() {
        Value::Null
    } else {
        match std::str::from_utf8(&r.body)
            .ok()
            .and_then(|t| serde_json::from_str(t).ok())
        {
            Some(v) => v,
            None => json!(String::from_utf8_lossy(&r.body)),
        }
    };
    let mut rec = Map::new();
    rec.insert("seq".into(), if valid { json!(r.seq) } else { Value::Null });
    rec.insert("method".into(), json!(r.method));
    rec.insert("path".into(), json!(r.path));
    rec.insert("query".into(), parse_qs(&r.query));
    rec.insert("route".into(), json!(route));
    rec.insert("headers".into(), Value::Object(headers));
    rec.insert("body".into(), body);
    if let Some(m) = model {
        rec.insert("model".into(), json!(m));
    }
    Value::Object(rec)
}

/// `run_pi.snapshot_files`: every file under `dir` in `os.walk` order (a directory's files
/// sorted, then its subdirectories sorted).
pub(crate) fn snapshot_files(dir: &Path) -> Vec<(String, String)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        let mut files = Vec::new();
        let mut dirs = Vec::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
        files.sort();
        dirs.sort();
        for f in files {
            let rel = f.strip_prefix(base).unwrap_or(&f).display().to_string();
            let data = std::fs::read(&f).unwrap_or_default();
            let text = match String::from_utf8(data) {
                Ok(t) => t,
                Err(e) => format!("<binary {} bytes>", e.as_bytes().len()),
            };
            out.push((rel, text));
        }
        for d in dirs {
            walk(base, &d, out);
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

/// Session files under `dir` with their records (Python's universal-newline line reading).
pub(crate) fn read_sessions(dir: &Path) -> Vec<(String, Vec<Value>)> {
    snapshot_files(dir)
        .into_iter()
        .map(|(rel, text)| {
            let text = text.replace("\r\n", "\n").replace('\r', "\n");
            let records = text
                .split('\n')
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).unwrap_or(Value::Null))
                .collect();
            (rel, records)
        })
        .collect()
}

/// Runs `pi` on the scenario in `dir` and returns the raw results. `PI_CONFORMANCE_KEEP=1`
/// keeps the temp root (its path is printed).
pub(crate) async fn run_scenario(dir: &Path, pi: &Path) -> RawRun {
    let sc = Scenario::load(dir);
    let tmp = tempfile::Builder::new()
        .prefix("pi-conf-")
        .tempdir()
        .unwrap();
    let root = tmp.path().canonicalize().unwrap();
    for sub in ["agent", "home", "tmp", "work"] {
        std::fs::create_dir(root.join(sub)).unwrap();
    }
    let work = root.join("work");
    for (rel, text) in sc.script["files"].as_object().into_iter().flatten() {
        let p = work.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text.as_str().unwrap_or_default()).unwrap();
    }
    let replies = Reply::load_script(&dir.join("script.json")).unwrap();
    let (addr, server) = ReplayServer::start(replies).await.unwrap();
    let pretty = Dumps {
        ensure_ascii: true,
        indent: Some(2),
        ..Dumps::default()
    };
    std::fs::write(
        root.join("agent/models.json"),
        pretty.to_string(&models_json(&server.base_url())),
    )
    .unwrap();
    if sc.script["settings"]
        .as_object()
        .is_some_and(|m| !m.is_empty())
    {
        std::fs::write(
            root.join("agent/settings.json"),
            pretty.to_string(&sc.script["settings"]),
        )
        .unwrap();
    }
    let mut cmd = tokio::process::Command::new(pi);
    cmd.args(sc.args(&root))
        .current_dir(&work)
        .env_clear()
        .envs(pi_env(&root, &sc.script["env"]))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = cmd.spawn().unwrap();
    let timeout = Duration::from_secs(sc.script["timeout"].as_u64().unwrap_or(60));
    let (exit_code, stdout, stderr) =
        match tokio::time::timeout(timeout, child.wait_with_output()).await {
            Ok(Ok(out)) => {
                use std::os::unix::process::ExitStatusExt;
                let code = out
                    .status
                    .code()
                    .unwrap_or_else(|| -out.status.signal().unwrap_or(0));
                (code.to_string(), out.stdout, out.stderr)
            }
            Ok(Err(e)) => panic!("running {}: {e}", pi.display()),
            Err(_) => ("timeout".to_owned(), Vec::new(), Vec::new()),
        };
    let requests = server.requests().iter().map(request_record).collect();
    drop(server);
    let raw = RawRun {
        root: root.display().to_string(),
        port: addr.port(),
        json_mode: sc.json_mode(),
        session: sc.session(),
        exit_code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        requests,
        files: snapshot_files(&work),
        sessions: read_sessions(&root.join("sessions")),
    };
    if std::env::var_os("PI_CONFORMANCE_KEEP").is_some() {
        eprintln!("temp root kept: {}", tmp.keep().display());
    }
    raw
}
