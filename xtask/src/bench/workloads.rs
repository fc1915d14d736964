//! Workloads 1–3: whole `pi` processes side by side with the TypeScript pi, alternating runs.
//!
//! 1. `pi --version`.
//! 2. The `tool_read` conformance scenario in json mode through the replay server with no
//!    pause between events, and a long answer (a generated 2 MB reply in 20,000 deltas).
//! 3. Resume a generated 100 MiB session (`--session`) and answer one prompt: a fresh copy
//!    each run (the first resume of a file), and the same file resumed again and again (as a
//!    user resumes their session), for the 100 MiB and the 1 GiB sessions.
//!
//! Every run gets a fresh root (`agent/` = `PI_CODING_AGENT_DIR` with a `models.json` pointing
//! at the replay server, `home/`, `tmp/`, `work/`) and the environment of the conformance
//! harness (`run_pi.py`). A run counts only when `pi` exits 0 and the replay server saw the
//! scripted number of requests; the first run of each program is a warm-up that doubles as
//! the capability check, so a `pi` that lacks a mode is reported as skipped, never measured.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use pi_ai::testkit::{ReplayServer, Reply};
use serde_json::{Value, json};

use super::process::{Probe, Sample, Summary, alternate, measure};

/// What the replay server should answer, in order.
#[derive(Clone, Debug)]
pub enum Script {
    /// No server (the workload makes no request).
    None,
    /// A `replay_server.py` script: `script.json` and its SSE files in this directory.
    Dir(PathBuf),
    /// These SSE bodies.
    Bodies(Vec<Vec<u8>>),
}

/// One side-by-side workload.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Short name, e.g. `version`.
    pub name: String,
    /// Arguments after the program.
    pub args: Vec<String>,
    /// Files to seed into `work/` (relative path, text).
    pub files: Vec<(String, String)>,
    /// The replies.
    pub script: Script,
    /// A session to copy to `<root>/sess.jsonl` (header `cwd` pointed at `work/`) before each
    /// run; the arguments may name it as `{session}`.
    pub session: Option<PathBuf>,
    /// The same root for every run of a program (`<work>/again-<name>-<program>/`, made once
    /// with its session copy): the session is resumed again, a little longer each time, with
    /// what the program keeps between runs (its caches under `home/`).
    pub again: bool,
}

/// The outcome of one workload.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Measured: pi-rs and, when available, the TS pi (else the reason it is missing).
    Measured {
        /// pi-rs medians.
        rs: Summary,
        /// TS medians or why there are none.
        ts: Result<Summary, String>,
    },
    /// pi-rs could not run it; the reason.
    Skipped(String),
}

/// Environment of a run, as the conformance harness sets it.
fn pi_env(root: &Path) -> Vec<(String, String)> {
    let p = |s: &str| root.join(s).display().to_string();
    [
        (
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
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
    .collect()
}

/// `models.json` with the harness's four replay providers at `base_url`.
pub fn models_json(base_url: &str) -> Value {
    let cost = json!({"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75});
    let models = json!([
        {"id": "replay-model", "reasoning": false, "contextWindow": 128000, "maxTokens": 16384, "cost": cost},
        {"id": "replay-thinker", "reasoning": true, "contextWindow": 128000, "maxTokens": 16384, "cost": cost},
    ]);
    let mut providers = serde_json::Map::new();
    for (name, api, suffix) in [
        ("replay-anthropic", "anthropic-messages", ""),
        ("replay-openai", "openai-completions", "/v1"),
        ("replay-responses", "openai-responses", "/v1"),
        ("replay-google", "google-generative-ai", "/v1beta"),
    ] {
        providers.insert(
            name.into(),
            json!({"baseUrl": format!("{base_url}{suffix}"), "api": api, "apiKey": "replay-test-key", "models": models}),
        );
    }
    json!({ "providers": providers })
}

/// Copies `src` to `dst` with the header's `cwd` replaced by `cwd`, and syncs the copy to
/// disk: a session being resumed was normally written long ago, and a fresh unsynced copy
/// would make pi-rs's first `fdatasync` (after the assistant message) write the whole
/// 100 MiB, a cost of the copy rather than of resuming (the TS pi does not sync at all).
pub fn copy_session(src: &Path, dst: &Path, cwd: &Path) -> Result<(), String> {
    let err = |e: std::io::Error| format!("{}: {e}", src.display());
    let mut reader = BufReader::with_capacity(1 << 20, std::fs::File::open(src).map_err(err)?);
    let mut first = String::new();
    reader.read_line(&mut first).map_err(err)?;
    let mut header: Value =
        serde_json::from_str(first.trim_end()).map_err(|e| format!("session header: {e}"))?;
    header["cwd"] = Value::String(cwd.display().to_string());
    let mut out = BufWriter::new(std::fs::File::create(dst).map_err(err)?);
    writeln!(out, "{header}").map_err(err)?;
    std::io::copy(&mut reader, &mut out).map_err(err)?;
    let file = out.into_inner().map_err(|e| err(e.into_error()))?;
    file.sync_all().map_err(err)
}

fn replies(script: &Script) -> Result<Vec<Reply>, String> {
    match script {
        Script::None => Ok(Vec::new()),
        Script::Bodies(bodies) => Ok(bodies.iter().map(|b| Reply::sse(b.clone())).collect()),
        Script::Dir(dir) => {
            let path = dir.join("script.json");
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut script: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            // No pause between events: the benchmark measures pi, not the server's pacing.
            script["delay_ms"] = json!(0);
            Reply::from_script(&script, dir).map_err(|e| e.to_string())
        }
    }
}

/// The last `n` bytes of a file, as text.
fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let start = text.len().saturating_sub(n);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    text[start..].trim().to_owned()
}

/// The kept root of `program` for the `again` workload `w`, under the generated sessions'
/// directory: removed at the first call of this process, so every suite run starts from a
/// fresh copy (and a cold cache).
fn again_root(program: &Path, w: &Workload) -> Result<PathBuf, String> {
    use std::sync::Mutex;
    static CLEARED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let base = w
        .session
        .as_deref()
        .and_then(Path::parent)
        .ok_or("an `again` workload needs a session")?;
    let tag: String = program
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let root = base.join(format!("again-{}-{tag}", w.name));
    let mut cleared = CLEARED.lock().map_err(|e| e.to_string())?;
    if !cleared.contains(&root) {
        match std::fs::remove_dir_all(&root) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("{}: {e}", root.display()));
            }
            _ => {}
        }
        cleared.push(root.clone());
    }
    Ok(root)
}

/// One complete run of `program` on `w`: fresh root (or the kept one), server, measurement,
/// checks.
fn run_once(
    program: &Path,
    w: &Workload,
    rt: &tokio::runtime::Runtime,
    probe: Probe,
) -> Result<Sample, String> {
    let temp;
    let kept;
    let r = if w.again {
        kept = again_root(program, w)?;
        kept.as_path()
    } else {
        temp = tempfile::Builder::new()
            .prefix("pi-bench-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        temp.path()
    };
    let fresh = !r.join("work").is_dir();
    for sub in ["agent", "home", "tmp", "work"] {
        std::fs::create_dir_all(r.join(sub)).map_err(|e| e.to_string())?;
    }
    for (rel, text) in &w.files {
        std::fs::write(r.join("work").join(rel), text).map_err(|e| e.to_string())?;
    }
    let script = replies(&w.script)?;
    let expected_requests = script.len();
    let server = if expected_requests > 0 {
        let (_, handle) = rt
            .block_on(async { ReplayServer::start(script).await })
            .map_err(|e| format!("replay server: {e}"))?;
        let models = models_json(&handle.base_url()).to_string();
        std::fs::write(r.join("agent").join("models.json"), models).map_err(|e| e.to_string())?;
        Some(handle)
    } else {
        None
    };
    let session = r.join("sess.jsonl");
    if let Some(src) = &w.session
        && (fresh || !w.again)
    {
        copy_session(src, &session, &r.join("work"))?;
    }
    let args: Vec<String> = w
        .args
        .iter()
        .map(|a| a.replace("{session}", &session.display().to_string()))
        .collect();
    let mut cmd = Command::new(program);
    cmd.args(&args)
        .current_dir(r.join("work"))
        .env_clear()
        .envs(pi_env(r));
    let sample = measure(&mut cmd, r, probe)?;
    let requests = server.as_ref().map_or(0, |s| s.request_count());
    if sample.exit_code != 0 || requests != expected_requests {
        return Err(format!(
            "exit code {}, {requests} of {expected_requests} scripted requests made; stderr: {}",
            sample.exit_code,
            tail(&r.join("stderr.txt"), 300)
        ));
    }
    if std::fs::metadata(r.join("stdout.txt")).map_or(0, |m| m.len()) == 0 {
        return Err("no output on stdout".into());
    }
    Ok(sample)
}

/// Runs `w` with pi-rs (`rs`) and, if given, the TS pi, `runs` measured times each,
/// alternating, after one warm-up run of each.
pub fn run(
    w: &Workload,
    rs: &Path,
    ts: Result<&Path, String>,
    runs: usize,
    rt: &tokio::runtime::Runtime,
) -> Outcome {
    eprintln!("== side by side: {}", w.name);
    if let Err(why) = run_once(rs, w, rt, Probe::Wall) {
        return Outcome::Skipped(format!(
            "target/release/pi cannot run this workload yet ({why})"
        ));
    }
    let ts = ts.and_then(|p| {
        run_once(p, w, rt, Probe::Wall)
            .map(|_| p)
            .map_err(|why| format!("the TS pi failed: {why}"))
    });
    // One measured run = an untraced run for the wall time and a traced one for the peak
    // RSS (see `Probe`).
    let both = |program: &Path| -> Result<Sample, String> {
        let wall = run_once(program, w, rt, Probe::Wall)?;
        let rss = run_once(program, w, rt, Probe::PeakRss)?;
        Ok(Sample {
            wall_s: wall.wall_s,
            peak_rss_kib: rss.peak_rss_kib,
            exit_code: wall.exit_code,
        })
    };
    let result = match &ts {
        Ok(p) => {
            let mut b = || both(p);
            alternate(runs, || both(rs), Some(&mut b))
        }
        Err(_) => alternate(runs, || both(rs), None),
    };
    match result {
        Ok((a, b)) => Outcome::Measured {
            rs: Summary::of(&a),
            ts: ts.map(|_| Summary::of(&b)),
        },
        Err(why) => Outcome::Skipped(format!("a measured run failed: {why}")),
    }
}

/// An Anthropic SSE body answering with `deltas` text deltas of `delta_len` bytes each.
///
/// The usage it reports stays small (1,000 output tokens): a realistic count for 2 MB
/// (~500k tokens) exceeds the replay models' 128k context window and makes pi compact the
/// session after the answer, a second request this workload does not script.
pub fn long_answer_sse(deltas: usize, delta_len: usize) -> Vec<u8> {
    let mut s = String::with_capacity(deltas * (delta_len + 120) + 1024);
    let mut event = |name: &str, data: Value| {
        s.push_str("event: ");
        s.push_str(name);
        s.push_str("\ndata: ");
        s.push_str(&data.to_string());
        s.push_str("\n\n");
    };
    event(
        "message_start",
        json!({"type":"message_start","message":{"id":"msg_long","type":"message","role":"assistant","model":"replay-model","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}),
    );
    event(
        "content_block_start",
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    );
    let line: String = "All work and no play makes pi a dull agent. "
        .chars()
        .cycle()
        .take(delta_len.saturating_sub(1))
        .chain(std::iter::once('\n'))
        .collect();
    for _ in 0..deltas {
        event(
            "content_block_delta",
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":&line}}),
        );
    }
    event(
        "content_block_stop",
        json!({"type":"content_block_stop","index":0}),
    );
    event(
        "message_delta",
        json!({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1000}}),
    );
    event("message_stop", json!({"type":"message_stop"}));
    s.into_bytes()
}

/// The short answer the resume workload gets (`check_streams.py`'s follow-up reply).
pub fn ok_answer_sse() -> Vec<u8> {
    long_answer_sse(1, 3)
}

/// `pi -p --mode json --session {session} … hi`.
fn resume_args() -> Vec<String> {
    [
        "-p",
        "--mode",
        "json",
        "--session",
        "{session}",
        "--provider",
        "replay-anthropic",
        "--model",
        "replay-model",
        "hi",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// The workloads, in report order. `data` is `xtask/bench-data`; `session` the generated
/// 100 MiB session, `big` the 1 GiB one.
pub fn all(data: &Path, session: &Path, big: &Path) -> Vec<Workload> {
    let json_mode = |prompt: &str| -> Vec<String> {
        [
            "-p",
            "--mode",
            "json",
            "--no-session",
            "--provider",
            "replay-anthropic",
            "--model",
            "replay-model",
            prompt,
        ]
        .map(str::to_owned)
        .to_vec()
    };
    vec![
        Workload {
            name: "version".into(),
            args: vec!["--version".into()],
            files: Vec::new(),
            script: Script::None,
            session: None,
            again: false,
        },
        Workload {
            name: "tool_read".into(),
            args: json_mode("What does hello.txt say?"),
            files: vec![(
                "hello.txt".into(),
                "Hello from the scratch dir!\nSecond line.\n".into(),
            )],
            script: Script::Dir(data.join("tool_read")),
            session: None,
            again: false,
        },
        Workload {
            name: "long_answer".into(),
            args: json_mode("Write a long answer."),
            files: Vec::new(),
            script: Script::Bodies(vec![long_answer_sse(20_000, 100)]),
            session: None,
            again: false,
        },
        Workload {
            name: "resume".into(),
            args: resume_args(),
            files: Vec::new(),
            script: Script::Bodies(vec![ok_answer_sse()]),
            session: Some(session.to_owned()),
            again: false,
        },
        Workload {
            name: "resume_again".into(),
            args: resume_args(),
            files: Vec::new(),
            script: Script::Bodies(vec![ok_answer_sse()]),
            session: Some(session.to_owned()),
            again: true,
        },
        Workload {
            name: "resume_1g_again".into(),
            args: resume_args(),
            files: Vec::new(),
            script: Script::Bodies(vec![ok_answer_sse()]),
            session: Some(big.to_owned()),
            again: true,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_answer_is_two_megabytes_of_text_in_20000_deltas() {
        let body = long_answer_sse(20_000, 100);
        let events = pi_ai::sse::parse_all(&body);
        let deltas: Vec<_> = events
            .iter()
            .filter(|e| e.event.as_deref() == Some("content_block_delta"))
            .collect();
        assert_eq!(deltas.len(), 20_000);
        let text: usize = deltas
            .iter()
            .map(|e| {
                let v: Value = serde_json::from_str(&e.data).unwrap();
                v["delta"]["text"].as_str().unwrap().len()
            })
            .sum();
        assert_eq!(text, 2_000_000);
    }

    #[test]
    fn session_copy_points_the_header_at_the_run_directory() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("a.jsonl");
        std::fs::write(
            &src,
            "{\"type\":\"session\",\"cwd\":\"/old\"}\n{\"type\":\"message\"}\n",
        )
        .unwrap();
        let dst = dir.path().join("b.jsonl");
        copy_session(&src, &dst, Path::new("/new/work")).unwrap();
        let text = std::fs::read_to_string(dst).unwrap();
        assert_eq!(
            text,
            "{\"type\":\"session\",\"cwd\":\"/new/work\"}\n{\"type\":\"message\"}\n"
        );
    }

    #[test]
    fn bundled_tool_read_script_has_two_replies() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-data/tool_read");
        assert_eq!(replies(&Script::Dir(data)).unwrap().len(), 2);
    }

    #[test]
    fn models_json_points_every_provider_at_the_server() {
        let m = models_json("http://127.0.0.1:9");
        assert_eq!(
            m["providers"]["replay-anthropic"]["baseUrl"],
            "http://127.0.0.1:9"
        );
        assert_eq!(
            m["providers"]["replay-google"]["baseUrl"],
            "http://127.0.0.1:9/v1beta"
        );
    }
}
