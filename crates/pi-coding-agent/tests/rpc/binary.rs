//! `pi --mode rpc` through the real binary over pipes, against the test kit's replay server.
//! `PI_RPC_BIN` runs the same checks against another binary (the TypeScript
//! reference passes them).

use crate::support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use pi_ai::testkit::{ReplayServer, Reply};
use pi_coding_agent::rpc::LineReader;
use serde_json::{Value, json};
use support::conformance::data_dir;
use support::conformance::run::{models_json, pi_env};
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

fn pi_bin() -> PathBuf {
    std::env::var_os("PI_RPC_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_pi")))
}

struct Rpc {
    _root: tempfile::TempDir,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: LineReader<ChildStdout>,
    seen: Vec<Value>,
}

impl Rpc {
    /// `pi --mode rpc --no-session --provider replay-openai --model replay-model` in a fresh
    /// root whose models.json points at `base_url`.
    fn start(base_url: &str, extra: &[&str]) -> Rpc {
        Rpc::start_with(base_url, extra, |_| {})
    }

    /// [`Rpc::start`] after `prepare` filled the root (`agent`, `home`, `tmp`, `work`).
    fn start_with(base_url: &str, extra: &[&str], prepare: impl FnOnce(&std::path::Path)) -> Rpc {
        Rpc::start_with_env(base_url, extra, prepare, &[])
    }

    /// [`Rpc::start_with`] with extra environment variables.
    fn start_with_env(
        base_url: &str,
        extra: &[&str],
        prepare: impl FnOnce(&std::path::Path),
        env: &[(String, String)],
    ) -> Rpc {
        let root = tempfile::tempdir().unwrap();
        let r = root.path().canonicalize().unwrap();
        for sub in ["agent", "home", "tmp", "work"] {
            std::fs::create_dir(r.join(sub)).unwrap();
        }
        prepare(&r);
        std::fs::write(
            r.join("agent/models.json"),
            serde_json::to_string_pretty(&models_json(base_url)).unwrap(),
        )
        .unwrap();
        let mut cmd = Command::new(pi_bin());
        cmd.args([
            "--mode",
            "rpc",
            "--provider",
            "replay-openai",
            "--model",
            "replay-model",
        ])
        .args(extra)
        .current_dir(r.join("work"))
        .env_clear()
        .envs(pi_env(&r, &json!({})))
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = LineReader::new(child.stdout.take().unwrap());
        Rpc {
            _root: root,
            child,
            stdin,
            stdout,
            seen: Vec::new(),
        }
    }

    async fn raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).await.unwrap();
        stdin.flush().await.unwrap();
    }

    async fn send(&mut self, v: Value) {
        self.raw(format!("{v}\n").as_bytes()).await;
    }

    /// The next record; `None` at end of output (a 60 s guard against hangs).
    async fn next(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(Duration::from_secs(60), self.stdout.next_line())
            .await
            .expect("no output for 60 s")
            .unwrap()?;
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        self.seen.push(v.clone());
        Some(v)
    }

    async fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(v) = self.seen.iter().find(|v| pred(v)) {
            return v.clone();
        }
        loop {
            let v = self.next().await.expect("output ended");
            if pred(&v) {
                return v;
            }
        }
    }

    async fn call(&mut self, id: &str, kind: &str, fields: Value) -> Value {
        let mut v = fields;
        v["id"] = id.into();
        v["type"] = kind.into();
        self.send(v).await;
        self.until(|r| r["type"] == "response" && r["id"] == id)
            .await
    }

    async fn data(&mut self, id: &str, kind: &str, fields: Value) -> Value {
        let r = self.call(id, kind, fields).await;
        assert_eq!(r["success"], true, "{r}");
        r.get("data").cloned().unwrap_or(Value::Null)
    }

    /// Closes stdin, reads the output to its end, returns the exit status.
    async fn finish(&mut self) -> i32 {
        self.stdin = None;
        while self.next().await.is_some() {}
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .expect("pi did not exit")
            .unwrap();
        status.code().unwrap_or(-1)
    }
}

fn sse(scenario: &str, file: &str) -> Vec<u8> {
    std::fs::read(data_dir().join(scenario).join(file)).unwrap()
}

#[tokio::test]
async fn commands_events_and_bad_lines_through_the_binary() {
    let (_addr, server) = ReplayServer::start(vec![Reply::sse(sse(
        "text_openai_completions",
        "01-text.sse",
    ))])
    .await
    .unwrap();
    let mut pi = Rpc::start(&server.base_url(), &["--no-session"]);

    // Bad lines of every kind (no `null`: the reference crashes on it).
    pi.raw(b"\n{bad\n5\n{\"id\":7}\n{\"id\":\"u\",\"type\":\"nope\"}\n")
        .await;
    let state = pi.data("s", "get_state", json!({})).await;
    assert_eq!(state["model"]["id"], "replay-model");
    assert_eq!(state["model"]["provider"], "replay-openai");
    assert_eq!(state["thinkingLevel"], "off");
    assert_eq!(state["isStreaming"], false);
    assert_eq!(state["messageCount"], 0);
    let parse = pi.seen.iter().filter(|v| v["command"] == "parse").count();
    assert_eq!(parse, 2);
    assert!(pi.seen.contains(
        &json!({"type":"response","success":false,"error":"Unknown command: undefined"})
    ));
    assert!(pi.seen.contains(
        &json!({"id":7,"type":"response","success":false,"error":"Unknown command: undefined"})
    ));
    assert!(pi.seen.contains(&json!({"id":"u","type":"response","command":"nope","success":false,"error":"Unknown command: nope"})));

    // A prompt and queries interleaved with its events.
    pi.send(json!({"id":"p","type":"prompt","message":"Say hello"}))
        .await;
    pi.send(json!({"id":"q","type":"get_state"})).await;
    let settled = pi.until(|v| v["type"] == "agent_settled").await;
    assert_eq!(settled, json!({"type":"agent_settled"}));
    let p = pi.seen.iter().position(|v| v["id"] == "p").unwrap();
    let start = pi
        .seen
        .iter()
        .position(|v| v["type"] == "agent_start")
        .unwrap();
    assert!(p < start);
    let end = pi
        .until(|v| v["type"] == "message_end" && v["message"]["role"] == "assistant")
        .await;
    assert_eq!(
        end["message"]["content"][0]["text"],
        "Hello from chat completions!"
    );
    assert_eq!(
        pi.data("t", "get_last_assistant_text", json!({})).await,
        json!({"text": "Hello from chat completions!"})
    );
    let messages = pi.data("m", "get_messages", json!({})).await;
    assert_eq!(messages["messages"].as_array().unwrap().len(), 2);
    let stats = pi.data("st", "get_session_stats", json!({})).await;
    assert_eq!(stats["assistantMessages"], 1);
    assert_eq!(stats["tokens"]["input"], 30);

    let bash = pi.data("b", "bash", json!({"command": "echo hi"})).await;
    assert_eq!(
        bash,
        json!({"output":"hi\n","exitCode":0,"cancelled":false,"truncated":false})
    );
    let chunk = pi.until(|v| v["type"] == "bash_execution_update").await;
    assert_eq!(
        chunk,
        json!({"type":"bash_execution_update","id":"b","delta":"hi\n"})
    );

    let empty = pi.call("n", "set_session_name", json!({"name": " "})).await;
    assert_eq!(empty["error"], "Session name cannot be empty");
    let levels = pi
        .data("l", "get_available_thinking_levels", json!({}))
        .await;
    assert_eq!(levels, json!({"levels": ["off"]}));
    let cycled = pi.data("cm", "cycle_model", json!({})).await;
    assert_eq!(cycled["model"]["id"], "replay-thinker");
    assert_eq!(cycled["isScoped"], false);
    let fork = pi.data("f", "get_fork_messages", json!({})).await;
    assert_eq!(fork["messages"][0]["text"], "Say hello");

    assert_eq!(pi.finish().await, 0);
}

/// `--models` is the scope `cycle_model` cycles through (pi 0.85.0 passes `scopedModels` to
/// the session), in the scope's order, wrapping around.
#[tokio::test]
async fn cycle_model_stays_within_the_models_scope() {
    let (_addr, server) = ReplayServer::start(vec![]).await.unwrap();
    let mut pi = Rpc::start(
        &server.base_url(),
        &[
            "--no-session",
            "--models",
            "replay-anthropic/replay-model,replay-openai/replay-model",
        ],
    );
    let cycled = pi.data("c1", "cycle_model", json!({})).await;
    assert_eq!(
        (&cycled["model"]["provider"], &cycled["model"]["id"]),
        (&json!("replay-anthropic"), &json!("replay-model"))
    );
    assert_eq!(cycled["isScoped"], true);
    let cycled = pi.data("c2", "cycle_model", json!({})).await;
    assert_eq!(cycled["model"]["provider"], "replay-openai");
    assert_eq!(cycled["isScoped"], true);
    assert_eq!(pi.finish().await, 0);
}

#[tokio::test]
async fn end_of_input_right_after_a_prompt_exits_zero() {
    let (_addr, server) = ReplayServer::start(vec![Reply::sse(sse(
        "text_openai_completions",
        "01-text.sse",
    ))])
    .await
    .unwrap();
    let mut pi = Rpc::start(&server.base_url(), &["--no-session"]);
    pi.send(json!({"id":"p","type":"prompt","message":"hi"}))
        .await;
    assert_eq!(pi.finish().await, 0);
    assert_eq!(
        pi.seen[0],
        json!({"id":"p","type":"response","command":"prompt","success":true})
    );
}

/// Observed on pi 0.85.0: `export_html` refuses an in-memory session and a session whose file
/// is not written yet (nothing is written before the first assistant message); no HTML file
/// appears either way.
#[tokio::test]
async fn export_html_refuses_in_memory_and_unwritten_sessions() {
    let (_addr, server) = ReplayServer::start(vec![]).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("x.html");
    let html_arg = html.to_str().unwrap();

    let mut pi = Rpc::start(&server.base_url(), &["--no-session"]);
    let r = pi
        .call("e", "export_html", json!({"outputPath": html_arg}))
        .await;
    assert_eq!(
        r,
        json!({"id":"e","type":"response","command":"export_html","success":false,
               "error":"Cannot export in-memory session to HTML"})
    );
    assert_eq!(pi.finish().await, 0);

    let sessions = out.path().join("sessions");
    let sessions_arg = sessions.to_str().unwrap();
    let mut pi = Rpc::start(&server.base_url(), &["--session-dir", sessions_arg]);
    let r = pi
        .call("e", "export_html", json!({"outputPath": html_arg}))
        .await;
    assert_eq!(
        r,
        json!({"id":"e","type":"response","command":"export_html","success":false,
               "error":"Nothing to export yet - start a conversation first"})
    );
    assert_eq!(pi.finish().await, 0);
    assert!(!html.exists());
}

#[tokio::test]
async fn sigterm_and_sighup_end_rpc_mode_with_143_and_129() {
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGHUP, 129)] {
        let (_addr, server) = ReplayServer::start(vec![]).await.unwrap();
        let mut pi = Rpc::start(&server.base_url(), &["--no-session"]);
        // Serving: the handlers are installed before the first command is read.
        pi.data("s", "get_state", json!({})).await;
        let pid = pi.child.id().unwrap() as i32;
        // SAFETY: signalling our own child.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let status = tokio::time::timeout(Duration::from_secs(60), pi.child.wait())
            .await
            .expect("pi did not exit")
            .unwrap();
        assert_eq!(status.code(), Some(code), "signal {signal}");
    }
}

async fn state_file(pi: &mut Rpc, id: &str) -> (String, u64) {
    let state = pi.data(id, "get_state", json!({})).await;
    (
        state["sessionFile"].as_str().unwrap().to_owned(),
        state["messageCount"].as_u64().unwrap(),
    )
}

/// Prompts and waits for `agent_settled` (counting from the records seen so far).
async fn prompt_settled(pi: &mut Rpc, id: &str, text: &str) {
    let before = pi
        .seen
        .iter()
        .filter(|v| v["type"] == "agent_settled")
        .count();
    pi.send(json!({"id": id, "type": "prompt", "message": text}))
        .await;
    loop {
        let v = pi.next().await.expect("output ended");
        if v["type"] == "agent_settled" {
            let n = pi
                .seen
                .iter()
                .filter(|v| v["type"] == "agent_settled")
                .count();
            if n > before {
                return;
            }
        }
    }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test]
async fn session_replacement_and_commands_through_the_binary() {
    let replies = (0..4)
        .map(|_| Reply::sse(sse("text_openai_completions", "01-text.sse")))
        .collect();
    let (_addr, server) = ReplayServer::start(replies).await.unwrap();
    let mut pi = Rpc::start_with(&server.base_url(), &[], |root| {
        let agent = root.join("agent");
        std::fs::create_dir_all(agent.join("prompts")).unwrap();
        std::fs::write(
            agent.join("prompts/review.md"),
            "---\ndescription: Review the code\n---\nReview $1\n",
        )
        .unwrap();
        std::fs::create_dir_all(agent.join("skills/demo")).unwrap();
        std::fs::write(
            agent.join("skills/demo/SKILL.md"),
            "---\nname: demo\ndescription: A demo skill\n---\nDo the demo.\n",
        )
        .unwrap();
    });
    let agent = pi._root.path().canonicalize().unwrap().join("agent");

    // get_commands: prompt templates and skills from disk.
    let commands = pi.data("c", "get_commands", json!({})).await;
    assert_eq!(
        commands,
        json!({"commands": [
            {"name": "review", "description": "Review the code", "source": "prompt",
             "sourceInfo": {"path": agent.join("prompts/review.md").display().to_string()}},
            {"name": "skill:demo", "description": "A demo skill", "source": "skill",
             "sourceInfo": {"path": agent.join("skills/demo/SKILL.md").display().to_string()}},
        ]})
    );

    prompt_settled(&mut pi, "p1", "Say hello").await;
    let (first, n) = state_file(&mut pi, "s1").await;
    assert_eq!(n, 2);
    assert!(read(&first).contains("Say hello"));

    // new_session: a new file beside the first one; the next prompt lands there.
    assert_eq!(
        pi.data("n", "new_session", json!({})).await,
        json!({"cancelled": false})
    );
    let (second, n) = state_file(&mut pi, "s2").await;
    assert_ne!(second, first);
    assert_eq!(n, 0);
    assert_eq!(
        std::path::Path::new(&second).parent(),
        std::path::Path::new(&first).parent()
    );
    prompt_settled(&mut pi, "p2", "In the second").await;
    assert!(read(&second).contains("In the second"));
    assert!(!read(&first).contains("In the second"));

    // switch_session back to the first file.
    assert_eq!(
        pi.data("sw", "switch_session", json!({"sessionPath": first}))
            .await,
        json!({"cancelled": false})
    );
    assert_eq!(state_file(&mut pi, "s3").await, (first.clone(), 2));

    // get_fork_messages + fork before the first user message: an unsaved new session whose
    // header names the first file once written.
    let fork = pi.data("fm", "get_fork_messages", json!({})).await;
    assert_eq!(fork["messages"].as_array().unwrap().len(), 1);
    assert_eq!(fork["messages"][0]["text"], "Say hello");
    let entry = fork["messages"][0]["entryId"].clone();
    assert_eq!(
        pi.data("f", "fork", json!({"entryId": entry})).await,
        json!({"text": "Say hello", "cancelled": false})
    );
    let (forked, n) = state_file(&mut pi, "s4").await;
    assert_ne!(forked, first);
    assert_eq!(n, 0);
    prompt_settled(&mut pi, "p3", "Forked prompt").await;
    let text = read(&forked);
    assert!(text.contains("Forked prompt"));
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["parentSession"], first.as_str());
    let bad = pi.call("fb", "fork", json!({"entryId": "nope"})).await;
    assert_eq!(bad["error"], "Invalid entry ID for forking");

    // clone: the whole branch in a new file; the next prompt lands there only.
    assert_eq!(
        pi.data("cl", "clone", json!({})).await,
        json!({"cancelled": false})
    );
    let (cloned, n) = state_file(&mut pi, "s5").await;
    assert_ne!(cloned, forked);
    assert_eq!(n, 2);
    prompt_settled(&mut pi, "p4", "After clone").await;
    assert!(read(&cloned).contains("Forked prompt"));
    assert!(read(&cloned).contains("After clone"));
    assert!(!read(&forked).contains("After clone"));

    assert_eq!(pi.finish().await, 0);
}

/// An abort (earendil-works/pi#4276) while a tool runs, with a steering message queued, still
/// starts the next turn, and that turn contacts no provider. pi 0.85.0's CLI shows its assistant
/// message as `stopReason: "error"`, `This operation was aborted` (its request setup throws with
/// the aborted signal); pi-rs keeps `aborted` at every layer, as pi-agent-core does (a documented
/// difference, `docs/session.md`).
#[tokio::test]
async fn an_abort_during_a_tool_with_a_steer_queued_ends_the_next_turn_aborted() {
    let (_addr, server) = ReplayServer::start(vec![
        support::anthropic_sse::anthropic_tools(&[(
            "toolu_1",
            "bash",
            json!({"command": "echo start; sleep 30"}),
        )]),
        support::anthropic_sse::anthropic_text("never sent"),
    ])
    .await
    .unwrap();
    let mut pi = Rpc::start(
        &server.base_url(),
        &["--no-session", "--provider", "replay-anthropic"],
    );
    pi.send(json!({"id":"p","type":"prompt","message":"run it"}))
        .await;
    pi.until(|v| v["type"] == "tool_execution_update").await;
    pi.data("s", "steer", json!({"message": "steer during tool"}))
        .await;
    pi.send(json!({"id":"a","type":"abort"})).await;
    pi.until(|v| v["type"] == "response" && v["id"] == "a")
        .await;
    let steer = pi
        .seen
        .iter()
        .position(|v| {
            v["type"] == "message_end" && v["message"]["content"][0]["text"] == "steer during tool"
        })
        .expect("the steering message starts a turn");
    let end = pi.seen[steer..]
        .iter()
        .find(|v| v["type"] == "message_end" && v["message"]["role"] == "assistant")
        .unwrap()
        .clone();
    let m = &end["message"];
    assert_eq!(m["stopReason"], "aborted", "{end}");
    assert_eq!(m["content"], json!([]));
    assert_eq!(server.request_count(), 1);
    assert_eq!(pi.finish().await, 0);
}

/// pi 0.85.0 `SessionManager.open` resolves `switch_session`'s path (`resolvePath`: `~`,
/// then path.resolve against the working directory, `.`/`..` folded).
#[tokio::test]
async fn switch_session_resolves_its_path() {
    let (_addr, server) = ReplayServer::start(vec![]).await.unwrap();
    let mut pi = Rpc::start(&server.base_url(), &["--no-session"]);
    let work = pi._root.path().canonicalize().unwrap().join("work");
    let switched = pi
        .data(
            "s",
            "switch_session",
            json!({"sessionPath": "rel/./../s2.jsonl"}),
        )
        .await;
    assert_eq!(switched, json!({"cancelled": false}));
    let state = pi.data("g", "get_state", json!({})).await;
    assert_eq!(
        state["sessionFile"],
        work.join("s2.jsonl").display().to_string()
    );
    assert_eq!(pi.finish().await, 0);
}

/// An extension process in rpc mode: its `tool_call` handler awaits `ctx.ui.confirm` while
/// pi-rs waits for its answer; the dialog is the client's `extension_ui_request`, and the
/// refusal blocks the tool (the Python example of `examples/extensions/python`).
#[tokio::test]
async fn an_extension_process_asks_the_rpc_client_in_the_middle_of_tool_call() {
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !python {
        eprintln!("skipped: python3 is not installed");
        return;
    }
    let (_addr, server) = ReplayServer::start(vec![
        support::anthropic_sse::anthropic_tools(&[(
            "toolu_1",
            "bash",
            json!({"command": "rm -rf victim"}),
        )]),
        support::anthropic_sse::anthropic_text("done"),
    ])
    .await
    .unwrap();
    let guard = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/extensions/python/guard.json")
        .display()
        .to_string();
    let mut pi = Rpc::start(
        &server.base_url(),
        &[
            "--no-session",
            "--provider",
            "replay-anthropic",
            "-e",
            &guard,
        ],
    );
    pi.send(json!({"id":"p","type":"prompt","message":"clean up"}))
        .await;
    let ask = pi
        .until(|v| v["type"] == "extension_ui_request" && v["method"] == "confirm")
        .await;
    assert_eq!(ask["title"], "Dangerous command");
    assert_eq!(ask["message"], "Allow `rm -rf victim`?");
    pi.send(json!({"type":"extension_ui_response","id":ask["id"],"confirmed":false}))
        .await;
    let end = pi.until(|v| v["type"] == "tool_execution_end").await;
    assert_eq!(end["isError"], true, "{end}");
    assert_eq!(end["result"]["content"][0]["text"], "Blocked by user");
    pi.until(|v| v["type"] == "agent_end").await;
    assert_eq!(server.request_count(), 2);
    assert_eq!(pi.finish().await, 0);
}

/// pi 0.85.0's own `permission-gate.ts`, unchanged, in the Node host over rpc: its
/// `ctx.ui.select` is the client's `extension_ui_request`; "No" blocks the command. Skips
/// without Node >= 22.19 and the installed pi package, fails so under CI (`support/node_host.rs`).
#[tokio::test]
async fn the_official_permission_gate_asks_the_rpc_client() {
    let Some(host) = support::node_host::node_host() else {
        return;
    };
    let gate = host.example("permission-gate.ts");
    let (_addr, server) = ReplayServer::start(vec![
        support::anthropic_sse::anthropic_tools(&[(
            "toolu_1",
            "bash",
            json!({"command": "sudo reboot"}),
        )]),
        support::anthropic_sse::anthropic_text("done"),
    ])
    .await
    .unwrap();
    let env = host.env();
    let gate = gate.display().to_string();
    let mut pi = Rpc::start_with_env(
        &server.base_url(),
        &[
            "--no-session",
            "--provider",
            "replay-anthropic",
            "-e",
            &gate,
        ],
        |_| {},
        &env,
    );
    pi.send(json!({"id":"p","type":"prompt","message":"reboot"}))
        .await;
    let ask = pi
        .until(|v| v["type"] == "extension_ui_request" && v["method"] == "select")
        .await;
    assert_eq!(ask["options"], json!(["Yes", "No"]));
    assert!(
        ask["title"].as_str().unwrap().contains("sudo reboot"),
        "{ask}"
    );
    pi.send(json!({"type":"extension_ui_response","id":ask["id"],"value":"No"}))
        .await;
    let end = pi.until(|v| v["type"] == "tool_execution_end").await;
    assert_eq!(end["isError"], true, "{end}");
    assert_eq!(end["result"]["content"][0]["text"], "Blocked by user");
    pi.until(|v| v["type"] == "agent_end").await;
    assert_eq!(pi.finish().await, 0);
}

/// pi 0.85.0's `event-bus.ts`, unchanged, in the Node host over rpc: its `session_start`
/// handler emits on `pi.events` and its own listener turns that into `ctx.ui.notify`, which
/// reaches the client as a `notify` request; `/emit` goes the same way.
#[tokio::test]
async fn the_official_event_bus_notifies_the_rpc_client() {
    let Some(host) = support::node_host::node_host() else {
        return;
    };
    let (_addr, server) = ReplayServer::start(Vec::new()).await.unwrap();
    let example = host.example("event-bus.ts").display().to_string();
    let mut pi = Rpc::start_with_env(
        &server.base_url(),
        &[
            "--no-session",
            "--provider",
            "replay-anthropic",
            "-e",
            &example,
        ],
        |_| {},
        &host.env(),
    );
    let started = "Event from event-bus-example: Session started";
    let note = pi
        .until(|v| v["type"] == "extension_ui_request" && v["method"] == "notify")
        .await;
    assert_eq!(note["message"], started, "{note}");
    assert_eq!(note["notifyType"], "info", "{note}");
    let commands = pi.data("c", "get_commands", json!({})).await;
    assert!(
        commands["commands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "emit" && c["source"] == "extension"),
        "{commands}"
    );
    pi.send(json!({"id":"e","type":"prompt","message":"/emit hi there"}))
        .await;
    let note = pi
        .until(|v| {
            v["type"] == "extension_ui_request"
                && v["method"] == "notify"
                && v["message"] != started
        })
        .await;
    assert_eq!(note["message"], "Event from /emit command: hi there");
    // A command is no prompt: the model was never asked.
    assert_eq!(server.request_count(), 0);
    assert_eq!(pi.finish().await, 0);
}

/// pi 0.85.0's `todo.ts` over rpc: `/todos` needs the TUI and says so, as its docs describe.
#[tokio::test]
async fn the_official_todo_command_says_it_needs_interactive_mode_over_rpc() {
    let Some(host) = support::node_host::node_host() else {
        return;
    };
    let (_addr, server) = ReplayServer::start(Vec::new()).await.unwrap();
    let example = host.example("todo.ts").display().to_string();
    let mut pi = Rpc::start_with_env(
        &server.base_url(),
        &[
            "--no-session",
            "--provider",
            "replay-anthropic",
            "-e",
            &example,
        ],
        |_| {},
        &host.env(),
    );
    pi.send(json!({"id":"t","type":"prompt","message":"/todos"}))
        .await;
    let note = pi
        .until(|v| v["type"] == "extension_ui_request" && v["method"] == "notify")
        .await;
    assert_eq!(note["message"], "/todos requires interactive mode");
    assert_eq!(note["notifyType"], "error");
    assert_eq!(server.request_count(), 0);
    assert_eq!(pi.finish().await, 0);
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir.parent().unwrap().join("home"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// pi 0.85.0's `git-checkpoint.ts` over rpc. Its `turn_start` handler stashes the working
/// tree (`git stash create`) under the entry the last tool result was seen at; a `fork`
/// from that entry asks the client whether to restore, and "Yes" applies the stash. The
/// checkpoints live until `agent_settled`, so the fork comes while the run is still open.
/// As in pi, the fork itself then fails: the entry is the assistant's, not a user message.
#[tokio::test]
async fn the_official_git_checkpoint_restores_the_file_on_fork() {
    let Some(host) = support::node_host::node_host() else {
        return;
    };
    let (_addr, server) = ReplayServer::start(vec![
        support::anthropic_sse::anthropic_tools(&[(
            "toolu_1",
            "edit",
            json!({"path": "notes.txt", "edits": [{"oldText": "v1", "newText": "v2"}]}),
        )]),
        support::anthropic_sse::anthropic_tools(&[(
            "toolu_2",
            "bash",
            json!({"command": "git checkout -- notes.txt"}),
        )]),
        // The last answer never ends on its own: the run stays open for the fork.
        support::anthropic_sse::anthropic_text("done").stall_after_bytes(64),
    ])
    .await
    .unwrap();
    let example = host.example("git-checkpoint.ts").display().to_string();
    let mut work = PathBuf::new();
    let mut pi = Rpc::start_with_env(
        &server.base_url(),
        &["--provider", "replay-anthropic", "-e", &example],
        |root| {
            work = root.join("work");
            std::fs::write(
                root.join("home/.gitconfig"),
                "[user]\n\tname = Test\n\temail = test@example.invalid\n",
            )
            .unwrap();
            std::fs::write(work.join("notes.txt"), "v1\n").unwrap();
            git(&work, &["init", "-q"]);
            git(&work, &["add", "notes.txt"]);
            git(&work, &["commit", "-qm", "start"]);
        },
        &host.env(),
    );
    pi.send(json!({"id":"p","type":"prompt","message":"edit the notes"}))
        .await;
    // The edit ran, then the model's bash put the file back.
    let end = pi
        .until(|v| v["type"] == "tool_execution_end" && v["toolName"] == "bash")
        .await;
    assert_eq!(end["isError"], false, "{end}");
    while server.request_count() < 3 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        std::fs::read_to_string(work.join("notes.txt")).unwrap(),
        "v1\n"
    );
    // The assistant entry that made the edit.
    let entries = pi.data("g", "get_entries", json!({})).await;
    let edit_entry = entries["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| {
            e["type"] == "message"
                && e["message"]["role"] == "assistant"
                && e["message"]["content"].to_string().contains("toolu_1")
        })
        .unwrap_or_else(|| panic!("{entries}"))["id"]
        .clone();
    pi.send(json!({"id":"f","type":"fork","entryId":edit_entry}))
        .await;
    let ask = pi
        .until(|v| v["type"] == "extension_ui_request" && v["method"] == "select")
        .await;
    assert_eq!(ask["title"], "Restore code state?");
    assert_eq!(
        ask["options"],
        json!(["Yes, restore code to that point", "No, keep current code"])
    );
    pi.send(json!({"type":"extension_ui_response","id":ask["id"],"value":"Yes, restore code to that point"}))
        .await;
    let note = pi
        .until(|v| v["type"] == "extension_ui_request" && v["method"] == "notify")
        .await;
    assert_eq!(note["message"], "Code restored to checkpoint");
    assert_eq!(
        std::fs::read_to_string(work.join("notes.txt")).unwrap(),
        "v2\n"
    );
    let fork = pi
        .until(|v| v["type"] == "response" && v["id"] == "f")
        .await;
    assert_eq!(fork["success"], false, "{fork}");
    assert_eq!(fork["error"], "Invalid entry ID for forking");
    pi.send(json!({"id":"a","type":"abort"})).await;
    pi.until(|v| v["type"] == "agent_end").await;
    assert_eq!(pi.finish().await, 0);
}

/// A TypeScript extension in the Node host receives the events pi gives extensions beyond the
/// core loop — `message_update`, `after_provider_response`, `agent_settled`, `model_select`,
/// `user_bash` (its `{result}` replaces the command), `session_before_compact` (cancel, then
/// supply the compaction) with `session_compact_failed`/`session_compact`, and
/// `ui_prompt_start`/`_end` around its own dialog — with pi's shapes (`type`, an `AbortSignal`,
/// `fileOps` as sets, no model `headers`).
#[tokio::test]
async fn an_extension_process_receives_pis_other_events() {
    let Some(host) = support::node_host::node_host() else {
        return;
    };
    let replies = (0..2)
        .map(|_| Reply::sse(sse("text_openai_completions", "01-text.sse")))
        .collect();
    let (_addr, server) = ReplayServer::start(replies).await.unwrap();
    let extension = r#"
import { appendFileSync } from "node:fs";
const LOG = new URL("./events.log", import.meta.url);
const log = (e, data) => appendFileSync(LOG, JSON.stringify({ type: e.type, ...data }) + "\n");
let compactions = 0;
export default function (pi) {
  pi.on("message_update", (e) => log(e, { kind: e.assistantMessageEvent.type, role: e.message.role }));
  pi.on("after_provider_response", (e) => log(e, { status: e.status }));
  pi.on("agent_settled", (e) => log(e, {}));
  pi.on("model_select", (e) => log(e, {
    model: `${e.model.provider}/${e.model.id}`, previous: e.previousModel?.provider,
    source: e.source, headers: "headers" in e.model,
  }));
  pi.on("user_bash", (e) => {
    log(e, { command: e.command, excluded: e.excludeFromContext });
    if (e.command === "pretend") {
      return { result: { output: "from the extension", exitCode: 0, cancelled: false, truncated: false } };
    }
  });
  pi.on("session_before_compact", (e) => {
    compactions += 1;
    log(e, {
      reason: e.reason, signal: e.signal instanceof AbortSignal,
      sets: e.preparation.fileOps.read instanceof Set, branch: e.branchEntries.length,
      kept: e.preparation.firstKeptEntryId,
    });
    if (compactions === 1) return { cancel: true };
    return { compaction: {
      summary: "summary from the extension", firstKeptEntryId: e.preparation.firstKeptEntryId,
      tokensBefore: e.preparation.tokensBefore, details: { by: "extension" },
    } };
  });
  pi.on("session_compact_failed", (e) => log(e, { aborted: e.aborted, reason: e.reason }));
  pi.on("session_compact", (e) => log(e, {
    fromExtension: e.fromExtension, summary: e.compactionEntry.summary, reason: e.reason,
  }));
  pi.on("ui_prompt_start", (e) => log(e, { kind: e.kind, title: e.title, reason: e.reason }));
  pi.on("ui_prompt_end", (e) => log(e, { kind: e.kind, title: e.title }));
  pi.registerCommand("ask", {
    description: "asks",
    handler: async (_args, ctx) => {
      const yes = await ctx.ui.confirm("Proceed?", "Really proceed?");
      log({ type: "answer" }, { yes });
    },
  });
}
"#;
    let mut pi = Rpc::start_with_env(
        &server.base_url(),
        &["-e", "events.ts"],
        |root| {
            std::fs::write(root.join("work/events.ts"), extension).unwrap();
            std::fs::write(
                root.join("agent/settings.json"),
                r#"{"compaction": {"keepRecentTokens": 1}, "retry": {"enabled": false}}"#,
            )
            .unwrap();
        },
        &host.env(),
    );
    let log_path = pi
        ._root
        .path()
        .canonicalize()
        .unwrap()
        .join("work/events.log");
    let events = |name: &str| -> Vec<Value> {
        std::fs::read_to_string(&log_path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["type"] == name)
            .collect()
    };
    prompt_settled(&mut pi, "p1", "Say hello").await;
    prompt_settled(&mut pi, "p2", "Say it again").await;

    // The command's dialog: answered by the client; the prompt span wraps it.
    pi.send(json!({"id":"a","type":"prompt","message":"/ask"}))
        .await;
    let ask = pi
        .until(|v| v["type"] == "extension_ui_request" && v["method"] == "confirm")
        .await;
    pi.send(json!({"type":"extension_ui_response","id":ask["id"],"confirmed":true}))
        .await;
    pi.until(|v| v["type"] == "response" && v["id"] == "a")
        .await;

    let bash = pi.data("b", "bash", json!({"command": "pretend"})).await;
    assert_eq!(bash["output"], "from the extension", "{bash}");
    let cancelled = pi.call("c1", "compact", json!({})).await;
    assert_eq!(cancelled["success"], false, "{cancelled}");
    assert_eq!(cancelled["error"], "Compaction cancelled", "{cancelled}");
    let compacted = pi.data("c2", "compact", json!({})).await;
    assert_eq!(
        compacted["summary"], "summary from the extension",
        "{compacted}"
    );
    pi.data(
        "m",
        "set_model",
        json!({"provider": "replay-anthropic", "modelId": "replay-model"}),
    )
    .await;
    // Observers are not awaited by their emitters: let the last ones land.
    let wait = std::time::Instant::now();
    while (events("model_select").is_empty() || events("ui_prompt_end").is_empty())
        && wait.elapsed() < Duration::from_secs(10)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(pi.finish().await, 0);

    let updates = events("message_update");
    assert!(
        updates
            .iter()
            .any(|u| u["kind"] == "text_delta" && u["role"] == "assistant"),
        "{updates:?}"
    );
    assert_eq!(events("after_provider_response")[0]["status"], 200);
    assert!(events("agent_settled").len() >= 2);
    assert_eq!(
        events("ui_prompt_start"),
        [
            json!({"type": "ui_prompt_start", "kind": "confirm", "title": "Proceed?", "reason": "ui_prompt"})
        ]
    );
    assert_eq!(
        events("ui_prompt_end"),
        [json!({"type": "ui_prompt_end", "kind": "confirm", "title": "Proceed?"})]
    );
    assert_eq!(events("answer")[0]["yes"], true);
    assert_eq!(
        events("user_bash"),
        [json!({"type": "user_bash", "command": "pretend", "excluded": false})]
    );
    let before = events("session_before_compact");
    assert_eq!(before.len(), 2, "{before:?}");
    for b in &before {
        assert_eq!(b["reason"], "manual");
        assert_eq!(b["signal"], true);
        assert_eq!(b["sets"], true);
        assert!(b["branch"].as_u64().unwrap() >= 4, "{b}");
        assert!(b["kept"].as_str().is_some_and(|k| !k.is_empty()), "{b}");
    }
    assert_eq!(
        events("session_compact_failed"),
        [json!({"type": "session_compact_failed", "aborted": true, "reason": "manual"})]
    );
    assert_eq!(
        events("session_compact"),
        [json!({"type": "session_compact", "fromExtension": true,
                "summary": "summary from the extension", "reason": "manual"})]
    );
    assert_eq!(
        events("model_select"),
        [
            json!({"type": "model_select", "model": "replay-anthropic/replay-model",
                "previous": "replay-openai", "source": "set", "headers": false})
        ]
    );
}

/// A TypeScript command's `ctx` session actions through the Node host: `waitForIdle`,
/// `pi.setModel` with a model of `ctx.modelRegistry`,
/// `navigateTree` (the leaf moves to the first user message, which goes back to the editor
/// as pi's `editorText`) and `newSession` (a new session file), each answering `{cancelled}`.
#[tokio::test]
async fn an_extension_commands_ctx_navigates_the_tree_and_replaces_the_session() {
    let Some(host) = support::node_host::node_host() else {
        return;
    };
    let replies = (0..2)
        .map(|_| Reply::sse(sse("text_openai_completions", "01-text.sse")))
        .collect();
    let (_addr, server) = ReplayServer::start(replies).await.unwrap();
    let extension = r#"
import { appendFileSync } from "node:fs";
const LOG = new URL("./actions.log", import.meta.url);
const log = (data) => appendFileSync(LOG, JSON.stringify(data) + "\n");
export default function (pi) {
  // A failure is logged too, so that the test says what went wrong.
  const logged = (f) => async (args, ctx) => {
    try { await f(args, ctx); } catch (e) { log({ error: String(e?.stack ?? e) }); }
  };
  pi.registerCommand("back", {
    handler: logged(async (_args, ctx) => {
      await ctx.waitForIdle();
      const first = ctx.sessionManager.getEntries().find((e) => e.type === "message" && e.message.role === "user");
      const r = await ctx.navigateTree(first.id, { summarize: false });
      log({ action: "navigateTree", result: r });
    }),
  });
  pi.registerCommand("switch", {
    handler: logged(async (_args, ctx) => {
      const target = ctx.modelRegistry.find("replay-anthropic", "replay-model");
      const ok = await pi.setModel(target);
      const unknown = await pi.setModel({ provider: "nowhere", id: "nothing" });
      const available = ctx.modelRegistry.getAvailable().map((m) => `${m.provider}/${m.id}`);
      log({ action: "setModel", ok, unknown, available, headers: "headers" in target });
    }),
  });
  pi.registerCommand("fresh", {
    handler: logged(async (_args, ctx) => {
      const r = await ctx.newSession();
      log({ action: "newSession", result: r });
    }),
  });
}
"#;
    let mut pi = Rpc::start_with_env(
        &server.base_url(),
        &["-e", "actions.ts"],
        |root| std::fs::write(root.join("work/actions.ts"), extension).unwrap(),
        &host.env(),
    );
    let log_path = pi
        ._root
        .path()
        .canonicalize()
        .unwrap()
        .join("work/actions.log");
    let actions = || -> Vec<Value> {
        std::fs::read_to_string(&log_path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect()
    };
    prompt_settled(&mut pi, "p1", "First question").await;
    prompt_settled(&mut pi, "p2", "Second question").await;
    let (first_file, n) = state_file(&mut pi, "s1").await;
    assert_eq!(n, 4);

    pi.send(json!({"id":"b","type":"prompt","message":"/back"}))
        .await;
    pi.until(|v| v["type"] == "response" && v["id"] == "b")
        .await;
    let wait = std::time::Instant::now();
    while actions().is_empty() && wait.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let done = actions();
    assert_eq!(done[0]["action"], "navigateTree", "{done:?}");
    assert_eq!(done[0]["result"]["cancelled"], false, "{done:?}");
    // The leaf is now before the first user message: the context is empty again.
    let (file, n) = state_file(&mut pi, "s2").await;
    assert_eq!((file.as_str(), n), (first_file.as_str(), 0));

    // pi.setModel with a model of ctx.modelRegistry: switched; an unknown one: false.
    pi.send(json!({"id":"m","type":"prompt","message":"/switch"}))
        .await;
    pi.until(|v| v["type"] == "response" && v["id"] == "m")
        .await;
    let wait = std::time::Instant::now();
    while actions().len() < 2 && wait.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let done = actions();
    assert_eq!(done[1]["action"], "setModel", "{done:?}");
    assert_eq!(done[1]["ok"], true, "{done:?}");
    assert_eq!(done[1]["unknown"], false, "{done:?}");
    assert_eq!(done[1]["headers"], false, "{done:?}");
    let available = done[1]["available"].as_array().unwrap();
    assert!(
        available.contains(&json!("replay-anthropic/replay-model")),
        "{done:?}"
    );
    assert!(
        available.contains(&json!("replay-openai/replay-model")),
        "{done:?}"
    );
    let state = pi.data("st", "get_state", json!({})).await;
    assert_eq!(state["model"]["provider"], "replay-anthropic", "{state}");

    pi.send(json!({"id":"f","type":"prompt","message":"/fresh"}))
        .await;
    pi.until(|v| v["type"] == "response" && v["id"] == "f")
        .await;
    let wait = std::time::Instant::now();
    while actions().len() < 3 && wait.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let done = actions();
    assert_eq!(
        done[2],
        json!({"action": "newSession", "result": {"cancelled": false}})
    );
    let (file, n) = state_file(&mut pi, "s3").await;
    assert_ne!(file, first_file);
    assert_eq!(n, 0);
    assert_eq!(pi.finish().await, 0);
}
