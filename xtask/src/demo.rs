//! `cargo xtask demo [--no-build] [--pi <path>]`: the main job, offline.
//!
//! Builds `pi` (debug profile), starts a local replay server (`pi_ai::testkit::ReplayServer`)
//! and points a throw-away agent directory's `models.json` at it, then runs:
//! 1. four replies recorded from the live Anthropic, OpenAI Chat Completions, OpenAI
//!    Responses and Google APIs (vendored under `crates/pi-ai/tests/data/sse/streams/`),
//!    each through `pi -p` (text mode), printing the answer;
//! 2. a tool round trip on real files in a temp dir, in json mode with a session file: the
//!    model reads `hello.txt` with the `read` tool (Anthropic wire format), then edits
//!    `greet.py` with the `edit` tool (Google wire format); the demo checks the tool result
//!    carries the file's text, the edit reached the disk and the session file holds the
//!    round trip. The replies are the conformance scenarios' (`crates/pi-coding-agent/tests/
//!    data/conformance/tool_read`, `tool_edit`), checked against the TypeScript pi.
//!
//! No API key and no network: the only key is the fake one in the temp `models.json`, and
//! only 127.0.0.1 is contacted. Exits non-zero on any mismatch.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pi_ai::testkit::{ReplayHandle, ReplayServer, Reply};
use serde_json::{Value, json};

use crate::workspace::{build_debug_pi, target_dir, workspace_root};

const USAGE: &str = "usage: cargo xtask demo [--no-build] [--pi <path>]";

/// wire API → (demo provider, URL suffix).
const PROVIDERS: [(&str, &str, &str); 4] = [
    ("anthropic-messages", "demo-anthropic", ""),
    ("openai-completions", "demo-openai", "/v1"),
    ("openai-responses", "demo-responses", "/v1"),
    ("google-generative-ai", "demo-google", "/v1beta"),
];

/// The recorded real replies of step 1: (api, stream name, where it was recorded, a prompt
/// matching the recorded answer).
const RECORDED: [(&str, &str, &str, &str); 4] = [
    (
        "anthropic-messages",
        "thinking-signature-text",
        "api.anthropic.com",
        "How do I cross the street safely?",
    ),
    (
        "openai-completions",
        "deepseek-reasoning-content-emoji",
        "an OpenAI-compatible API (DeepSeek)",
        "Hello!",
    ),
    (
        "openai-responses",
        "reasoning-summary-then-text-utf8",
        "api.openai.com /v1/responses",
        "How do I cross the street safely?",
    ),
    (
        "google-generative-ai",
        "utf8-degree-sign",
        "generativelanguage.googleapis.com",
        "What is the temperature in Paris?",
    ),
];

/// At most `n` lines of `text`, with `…` when some were left out.
fn first_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let mut out = lines[..lines.len().min(n)].join("\n  ");
    if lines.len() > n {
        out.push_str("\n  …");
    }
    out
}

/// The isolated surroundings of one pi run.
struct Sandbox {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Sandbox {
    fn new(base_url: &str) -> Result<Self, String> {
        let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
        let root = tmp.path().to_path_buf();
        for d in ["agent", "home", "tmp", "work", "sessions"] {
            std::fs::create_dir_all(root.join(d)).map_err(|e| e.to_string())?;
        }
        let models = json!({"id": "demo-model", "reasoning": false, "contextWindow": 128000,
            "maxTokens": 16384, "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}});
        let mut providers = serde_json::Map::new();
        for (api, name, suffix) in PROVIDERS {
            providers.insert(
                name.into(),
                json!({"baseUrl": format!("{base_url}{suffix}"), "api": api,
                       "apiKey": "demo-no-real-key", "models": [models.clone()]}),
            );
        }
        std::fs::write(
            root.join("agent/models.json"),
            json!({ "providers": providers }).to_string(),
        )
        .map_err(|e| e.to_string())?;
        Ok(Sandbox { _tmp: tmp, root })
    }

    fn work(&self) -> PathBuf {
        self.root.join("work")
    }

    /// Runs pi with nothing inherited but `PATH`; returns (exit code, stdout, stderr).
    fn run(&self, pi: &Path, args: &[&str]) -> Result<(i32, String, String), String> {
        let out = Command::new(pi)
            .args(args)
            .current_dir(self.work())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env("TMPDIR", self.root.join("tmp"))
            .env("PI_CODING_AGENT_DIR", self.root.join("agent"))
            .env("PI_OFFLINE", "1")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{}: {e}", pi.display()))?;
        Ok((
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }
}

fn provider_of(api: &str) -> &'static str {
    PROVIDERS
        .iter()
        .find(|(a, _, _)| *a == api)
        .map_or("demo-anthropic", |(_, p, _)| p)
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

async fn server(script: Vec<Reply>) -> Result<ReplayHandle, String> {
    let (_, handle) = ReplayServer::start(script)
        .await
        .map_err(|e| format!("replay server: {e}"))?;
    Ok(handle)
}

/// Step 1: each recorded reply through `pi -p`.
async fn recorded_replies(pi: &Path, root: &Path) -> Result<(), String> {
    let streams = root.join("crates/pi-ai/tests/data/sse/streams");
    for (api, name, origin, prompt) in RECORDED {
        let body = read(&streams.join(api).join(format!("{name}.sse")))?;
        let handle = server(vec![Reply::sse(body)]).await?;
        let sandbox = Sandbox::new(&handle.base_url())?;
        let provider = provider_of(api);
        let (code, stdout, stderr) = sandbox.run(
            pi,
            &[
                "-p",
                "--no-session",
                "--provider",
                provider,
                "--model",
                "demo-model",
                prompt,
            ],
        )?;
        println!("$ pi -p --provider {provider} --model demo-model {prompt:?}");
        println!("  # {api}/{name}: a reply recorded from {origin}");
        println!("  {}\n", first_lines(&stdout, 4));
        if code != 0 || stdout.trim().is_empty() {
            return Err(format!("{api}/{name}: exit {code}, stderr: {stderr}"));
        }
        if handle.request_count() != 1 {
            return Err(format!("{api}/{name}: expected one request"));
        }
    }
    Ok(())
}

/// The parsed json-mode lines.
fn events(stdout: &str) -> Result<Vec<Value>, String> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).map_err(|e| format!("bad json line {l:?}: {e}")))
        .collect()
}

fn tool_results(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_execution_end")
        .map(|e| {
            e["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn session_roles(dir: &Path) -> Result<Vec<String>, String> {
    let mut roles = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| e.to_string())?.flatten() {
        let text = String::from_utf8_lossy(&read(&entry.path())?).into_owned();
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
            if let Some(r) = v["message"]["role"].as_str() {
                roles.push(r.to_owned());
            }
        }
    }
    Ok(roles)
}

/// One tool round trip: replies `sse` for `api`, a file seeded in the work dir, a prompt.
async fn round_trip(
    pi: &Path,
    scenario: &Path,
    api: &str,
    file: (&str, &str),
    prompt: &str,
) -> Result<(Sandbox, Vec<Value>), String> {
    let mut replies = Vec::new();
    for name in ["01-tool-use.sse", "01-function-call.sse", "02-answer.sse"] {
        let path = scenario.join(name);
        if path.is_file() {
            replies.push(Reply::sse(read(&path)?));
        }
    }
    let handle = server(replies).await?;
    let sandbox = Sandbox::new(&handle.base_url())?;
    std::fs::write(sandbox.work().join(file.0), file.1).map_err(|e| e.to_string())?;
    let sessions = sandbox.root.join("sessions").display().to_string();
    let provider = provider_of(api);
    println!(
        "$ pi -p --mode json --session-dir <tmp>/sessions --provider {provider} --model demo-model {prompt:?}"
    );
    let (code, stdout, stderr) = sandbox.run(
        pi,
        &[
            "-p",
            "--mode",
            "json",
            "--session-dir",
            &sessions,
            "--provider",
            provider,
            "--model",
            "demo-model",
            prompt,
        ],
    )?;
    if code != 0 {
        return Err(format!("exit {code}, stderr: {stderr}"));
    }
    let events = events(&stdout)?;
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    println!(
        "  {} json lines: {} … {}",
        kinds.len(),
        kinds.first().unwrap_or(&""),
        kinds.last().unwrap_or(&"")
    );
    if kinds.last() != Some(&"agent_settled") || handle.request_count() != 2 {
        return Err("the run did not finish with two requests and agent_settled".into());
    }
    let roles = session_roles(&sandbox.root.join("sessions"))?;
    println!("  session file: {}", roles.join(" → "));
    if roles != ["user", "assistant", "toolResult", "assistant"] {
        return Err(format!("unexpected session messages {roles:?}"));
    }
    Ok((sandbox, events))
}

/// Step 2: `read` then `edit` on real files.
async fn tool_round_trips(pi: &Path, root: &Path) -> Result<(), String> {
    let scenarios = root.join("crates/pi-coding-agent/tests/data/conformance");
    let hello = "Hello from the scratch dir!\nSecond line.\n";
    let (_, events) = round_trip(
        pi,
        &scenarios.join("tool_read"),
        "anthropic-messages",
        ("hello.txt", hello),
        "What does hello.txt say?",
    )
    .await?;
    let results = tool_results(&events);
    println!(
        "  read tool result: {:?}",
        results.first().map(String::as_str).unwrap_or("")
    );
    if results.first().map(String::as_str) != Some(hello) {
        return Err(format!("read returned {results:?}"));
    }

    let before = "def greet():\n    print(\"Hello, world\")\n\ngreet()\n";
    let (sandbox, events) = round_trip(
        pi,
        &scenarios.join("tool_edit"),
        "google-generative-ai",
        ("greet.py", before),
        "Change the greeting in greet.py to Goodbye",
    )
    .await?;
    let after = String::from_utf8_lossy(&read(&sandbox.work().join("greet.py"))?).into_owned();
    println!(
        "  edit tool result: {:?}",
        tool_results(&events)
            .first()
            .map(String::as_str)
            .unwrap_or("")
    );
    println!("  greet.py on disk now: {:?}", after);
    if after != before.replace("Hello, world", "Goodbye, world") {
        return Err("greet.py was not edited".into());
    }
    Ok(())
}

/// Runs the demo (see the module docs).
///
/// # Errors
/// A build failure, a pi run that failed, or output that differs from what the recorded
/// replies must produce.
pub fn run(args: &[String]) -> Result<(), String> {
    let root = workspace_root();
    let mut pi: Option<PathBuf> = None;
    let mut build = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--no-build" => build = false,
            "--pi" => pi = Some(it.next().ok_or(USAGE)?.into()),
            _ => return Err(USAGE.into()),
        }
    }
    let pi = match pi {
        Some(p) => p,
        None if build => build_debug_pi(&root)?,
        None => target_dir(&root).join("debug/pi"),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        println!("== 1. Replies recorded from real provider APIs, through `pi -p`\n");
        recorded_replies(&pi, &root).await?;
        println!("\n== 2. A tool round trip on real files (read, then edit), json mode\n");
        tool_round_trips(&pi, &root).await?;
        println!("\ndemo: ok (no API key, no network: a local replay server on 127.0.0.1)");
        Ok(())
    })
}
