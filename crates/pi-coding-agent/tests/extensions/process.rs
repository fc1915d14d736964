//! Extension processes through the `pi` binary against the replay server
//! (`docs/extension-protocol.md`): the Python example's tool and gate, and fixtures whose
//! `tool_call` handler throws, hangs, busy-loops, exits mid-call or prints garbage — the
//! turn completes every time and the session file stays consistent; and pi's own example
//! extensions (`.ts`, unchanged, from the installed `@earendil-works/pi-coding-agent`) in
//! the Node host. The tests skip (with a message) when `python3`, or Node >= 22.19 and the
//! pi package, are missing, and fail instead under CI (`support/node_host.rs`).

use crate::support;

use std::path::{Path, PathBuf};

use pi_ai::testkit::ReplayServer;
use serde_json::{Value, json};
use support::anthropic_sse::{anthropic_text, anthropic_tools};
use support::binary_rig::{Rig, file_records};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python_available() -> bool {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        support::node_host::skip_or_fail("python3 is not installed");
    }
    ok
}

/// A manifest in `dir` running `fixture.py <behaviour>`.
fn fixture_manifest(dir: &Path, behaviour: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/extensions/fixture.py");
    let path = dir.join(format!("{behaviour}.json"));
    let manifest = json!({
        "command": "python3",
        "args": [script.display().to_string(), behaviour],
        "eventTimeoutMs": 1000,
    });
    std::fs::write(&path, manifest.to_string()).unwrap();
    path.display().to_string()
}

fn guard_manifest() -> String {
    repo_root()
        .join("examples/extensions/python/guard.json")
        .display()
        .to_string()
}

/// Runs one json-mode turn in which the model calls `tool` with `input`, then answers
/// `done`; returns the run and the session file's records.
async fn turn(
    extension: &[&str],
    tool: &str,
    input: Value,
) -> (support::binary_rig::Run, Vec<Value>, Rig) {
    turn_with_env(extension, tool, input, &[]).await
}

/// [`turn`] with extra environment variables.
async fn turn_with_env(
    extension: &[&str],
    tool: &str,
    input: Value,
    env: &[(String, String)],
) -> (support::binary_rig::Run, Vec<Value>, Rig) {
    let script = vec![
        anthropic_tools(&[("call_1", tool, input)]),
        anthropic_text("done"),
    ];
    let (_, server) = ReplayServer::start(script).await.unwrap();
    let mut rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    rig.env.extend_from_slice(env);
    let sessions = rig.sessions();
    let mut args = vec![
        "--mode",
        "json",
        "--provider",
        "replay-anthropic",
        "--model",
        "replay-model",
        "--session-dir",
        &sessions,
    ];
    args.extend_from_slice(extension);
    args.push("go");
    let run = rig.run(&args).await;
    let files = rig.session_files();
    assert_eq!(files.len(), 1, "{run:?}");
    let records = file_records(&files[0]);
    assert_eq!(server.request_count(), 2, "{run:?}");
    (run, records, rig)
}

/// The tool result message of the session file.
fn tool_result(records: &[Value]) -> &Value {
    records
        .iter()
        .find(|r| r["type"] == "message" && r["message"]["role"] == "toolResult")
        .unwrap_or_else(|| panic!("no tool result in {records:#?}"))
}

fn text_of(message: &Value) -> String {
    message["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The turn ended with the model's `done`, and every entry's parent is an earlier entry.
fn assert_completed_and_consistent(run: &support::binary_rig::Run, records: &[Value]) {
    assert_eq!(run.code, 0, "{run:?}");
    let last = records.last().unwrap();
    assert_eq!(last["message"]["role"], "assistant", "{records:#?}");
    assert_eq!(text_of(&last["message"]), "done");
    let mut seen = Vec::new();
    for r in &records[1..] {
        let parent = &r["parentId"];
        assert!(
            parent.is_null() || seen.contains(parent),
            "entry {r} has an unknown parent"
        );
        seen.push(r["id"].clone());
    }
    assert!(
        run.records().iter().any(|r| r["type"] == "agent_end"),
        "{run:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_examples_tool_is_called_and_its_result_reaches_the_session() {
    if !python_available() {
        return;
    }
    let manifest = guard_manifest();
    let (run, records, _rig) = turn(
        &["-e", &manifest, "--greeting", "Hey"],
        "greet",
        json!({"name": "Ada"}),
    )
    .await;
    assert_completed_and_consistent(&run, &records);
    let result = &tool_result(&records)["message"];
    assert_eq!(result["toolName"], "greet");
    assert_eq!(result["isError"], false);
    assert_eq!(text_of(result), "Hey, Ada!");
    // `pi.appendEntry` from inside the tool reached the session file.
    let custom = records
        .iter()
        .find(|r| r["type"] == "custom" && r["customType"] == "greeted")
        .unwrap_or_else(|| panic!("no greeted entry in {records:#?}"));
    assert_eq!(custom["data"], json!({"name": "Ada"}));
    // The mirror had the session's entries when the tool ran (header excluded).
    let entries = result["details"]["sessionEntries"].as_u64().unwrap();
    assert!(entries >= 2, "{result}");
    // The streamed update reached the json output.
    assert!(
        run.records()
            .iter()
            .any(|r| r["type"] == "tool_execution_update"
                && text_of(&r["partialResult"]) == "thinking of a greeting"),
        "{}",
        run.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_gate_blocks_a_dangerous_command_without_ui() {
    if !python_available() {
        return;
    }
    let manifest = guard_manifest();
    let (run, records, rig) = turn(
        &["-e", &manifest],
        "bash",
        json!({"command": "rm -rf victim"}),
    )
    .await;
    assert_completed_and_consistent(&run, &records);
    let result = &tool_result(&records)["message"];
    assert_eq!(result["isError"], true);
    assert_eq!(
        text_of(result),
        "Dangerous command blocked (no UI for confirmation)"
    );
    let _ = rig;
}

/// `(behaviour, whether bash still ran, what the tool result says)`.
const FIXTURES: [(&str, bool, &str); 5] = [
    ("throw", false, "fixture threw on purpose"),
    ("hang", false, "did not answer tool_call within 1000 ms"),
    ("busy", false, "did not answer tool_call within 1000 ms"),
    ("exit", false, "is not running: exited with code 3"),
    ("garbage", true, "hi"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misbehaving_extension_never_stops_the_turn() {
    if !python_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (behaviour, ran, expected) in FIXTURES {
        let manifest = fixture_manifest(dir.path(), behaviour);
        let (run, records, _rig) =
            turn(&["-e", &manifest], "bash", json!({"command": "echo hi"})).await;
        assert_completed_and_consistent(&run, &records);
        let result = &tool_result(&records)["message"];
        assert_eq!(result["isError"], !ran, "{behaviour}: {result}");
        let text = text_of(result);
        assert!(
            text.contains(expected),
            "{behaviour}: {text:?}\n{}",
            run.stderr
        );
        if behaviour == "garbage" {
            assert!(
                run.stderr.contains("not a JSON-RPC message"),
                "{}",
                run.stderr
            );
            assert!(run.stderr.contains("garbage on stdout"), "{}", run.stderr);
            assert!(!run.stdout.contains("garbage"), "stdout stays JSON");
        }
        if behaviour == "throw" {
            // A throw in tool_call is pi's block, not an extension error.
            assert!(!run.stderr.contains("Extension error"), "{}", run.stderr);
        }
    }
}

use support::node_host::{NodeHost, node_host};

fn official_example(host: &NodeHost, name: &str) -> String {
    host.example(name).display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_permission_gate_blocks_rm_rf_in_json_mode() {
    let Some(host) = node_host() else {
        return;
    };
    let gate = official_example(&host, "permission-gate.ts");
    let (run, records, rig) = turn_with_env(
        &["-e", &gate],
        "bash",
        json!({"command": "rm -rf victim"}),
        &host.env(),
    )
    .await;
    assert_completed_and_consistent(&run, &records);
    let result = &tool_result(&records)["message"];
    assert_eq!(result["isError"], true);
    assert_eq!(
        text_of(result),
        "Dangerous command blocked (no UI for confirmation)"
    );
    // A harmless command goes through the same gate and runs.
    drop(rig);
    let (run, records, _rig) = turn_with_env(
        &["-e", &gate],
        "bash",
        json!({"command": "echo safe"}),
        &host.env(),
    )
    .await;
    assert_completed_and_consistent(&run, &records);
    let result = &tool_result(&records)["message"];
    assert_eq!(result["isError"], false, "{result}");
    assert!(text_of(result).contains("safe"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_protected_paths_refuses_a_write_to_dot_env() {
    let Some(host) = node_host() else {
        return;
    };
    let guard = official_example(&host, "protected-paths.ts");
    let (run, records, rig) = turn_with_env(
        &["-e", &guard],
        "write",
        json!({"path": ".env", "content": "SECRET=1"}),
        &host.env(),
    )
    .await;
    assert_completed_and_consistent(&run, &records);
    let result = &tool_result(&records)["message"];
    assert_eq!(result["isError"], true);
    assert_eq!(text_of(result), "Path \".env\" is protected");
    assert!(!rig.path("work/.env").exists(), "the write must not happen");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_directory_loads_unless_no_extensions() {
    let (_, server) = ReplayServer::start(vec![anthropic_text("hello")])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    std::fs::create_dir_all(rig.path("agent/extensions")).unwrap();
    let broken = rig.path("agent/extensions/broken.json");
    std::fs::write(&broken, r#"{"command": "/nonexistent/extension"}"#).unwrap();
    let args = [
        "--no-session",
        "--provider",
        "replay-anthropic",
        "--model",
        "replay-model",
        "-p",
        "hi",
    ];
    let run = rig.run(&args).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "Error: Failed to load extension \"{}\": cannot start /nonexistent/extension: \
             No such file or directory (os error 2)\n\
             Hint: Start without extensions using \"pi -ne\".\n",
            broken.display()
        )
    );
    assert_eq!(server.request_count(), 0);
    let mut without = vec!["-ne"];
    without.extend_from_slice(&args);
    let run = rig.run(&without).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, "hello\n");
}

/// A json-mode run of `extension` (plus `extra` arguments) in `rig`'s session directory;
/// returns the run and the newest session file's records.
async fn json_run(
    rig: &Rig,
    extension: &[&str],
    prompt: &str,
    extra: &[&str],
) -> (support::binary_rig::Run, Vec<Value>) {
    let sessions = rig.sessions();
    let mut args = vec![
        "--mode",
        "json",
        "--provider",
        "replay-anthropic",
        "--model",
        "replay-model",
        "--session-dir",
        &sessions,
    ];
    args.extend_from_slice(extension);
    // The prompt before `extra`: an extension's flag (`--plan`) would otherwise take it as
    // its value, in pi too (the first parse does not know the flag is boolean).
    args.push(prompt);
    args.extend_from_slice(extra);
    let run = rig.run(&args).await;
    // Session files only: a subagent's sessions live in a directory beside them.
    let files: Vec<PathBuf> = rig
        .session_files()
        .into_iter()
        .filter(|f| f.is_file())
        .collect();
    let records = files.last().map(|f| file_records(f)).unwrap_or_default();
    (run, records)
}

/// The tool results of a session file, in order.
fn tool_results(records: &[Value]) -> Vec<&Value> {
    records
        .iter()
        .filter(|r| r["type"] == "message" && r["message"]["role"] == "toolResult")
        .map(|r| &r["message"])
        .collect()
}

/// The tool names a recorded provider request offered the model.
fn offered_tools(request: &pi_ai::testkit::RecordedRequest) -> Vec<String> {
    let body = request.body_json().expect("a JSON request body");
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// What a golden compares of a json-mode run: the event types in order (without the streamed
/// `message_update`/`tool_execution_update`, whose count follows the transport's chunking), each
/// tool result's name, error flag and text, and each session entry's kind (`message:<role>`,
/// `custom:<customType>`, `custom_message:<customType>`, or the entry type).
fn golden_view(run: &support::binary_rig::Run, records: &[Value]) -> Value {
    let events: Vec<Value> = run
        .records()
        .iter()
        .filter_map(|e| e["type"].as_str().map(str::to_owned))
        .filter(|t| t != "message_update" && t != "tool_execution_update")
        .map(Value::from)
        .collect();
    let results: Vec<Value> = tool_results(records)
        .into_iter()
        .map(|r| json!({"toolName": r["toolName"], "isError": r["isError"], "text": text_of(r)}))
        .collect();
    let entries: Vec<Value> = records
        .iter()
        .skip(1)
        .map(|r| {
            let kind = r["type"].as_str().unwrap_or("?");
            let detail = match kind {
                "message" => r["message"]["role"].as_str(),
                "custom" | "custom_message" => r["customType"].as_str(),
                _ => None,
            };
            Value::from(detail.map_or_else(|| kind.to_owned(), |d| format!("{kind}:{d}")))
        })
        .collect();
    json!({"events": events, "toolResults": results, "entries": entries})
}

/// Compares the run with the golden `name`, made by the same test run against the TS pi
/// 0.85.0: `PI_RIG_BIN=~/.cache/pi-reference/bin/pi PI_UPDATE_EXTENSION_GOLDENS=1 cargo test
/// … -- the_official` writes `tests/data/extensions/goldens/<name>.json`.
fn assert_matches_ts_golden(name: &str, run: &support::binary_rig::Run, records: &[Value]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/extensions/goldens")
        .join(format!("{name}.json"));
    let got = golden_view(run, records);
    if std::env::var_os("PI_UPDATE_EXTENSION_GOLDENS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("golden {}: {e}", path.display()));
    let want: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        serde_json::to_string_pretty(&got).unwrap(),
        serde_json::to_string_pretty(&want).unwrap(),
        "the run differs from the TS pi's ({})",
        path.display()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_structured_output_ends_the_run_without_a_second_request() {
    let Some(host) = node_host() else {
        return;
    };
    let example = official_example(&host, "structured-output.ts");
    let input = json!({
        "headline": "Ready",
        "summary": "Everything is in place.",
        "actionItems": ["ship", "celebrate"],
    });
    // Only one reply: a second request would find the script exhausted.
    let (_, server) = ReplayServer::start(vec![anthropic_tools(&[(
        "call_1",
        "structured_output",
        input,
    )])])
    .await
    .unwrap();
    let mut rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    rig.env.extend(host.env());
    let (run, records) = json_run(&rig, &["-e", &example], "summarize", &[]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.request_count(), 1, "{run:?}");
    // The tool and its guidelines reached the model.
    let request = &server.requests()[0];
    assert!(offered_tools(request).contains(&"structured_output".to_owned()));
    let system = request.body_json().unwrap()["system"].to_string();
    assert!(
        system.contains("Use structured_output as your final action"),
        "{system}"
    );
    let results = tool_results(&records);
    assert_eq!(results.len(), 1, "{records:#?}");
    assert_eq!(text_of(results[0]), "Saved structured output: Ready");
    assert_eq!(results[0]["isError"], false);
    assert_eq!(
        results[0]["details"],
        json!({"headline": "Ready", "summary": "Everything is in place.", "actionItems": ["ship", "celebrate"]})
    );
    // The last entry is the tool result: no assistant message follows it.
    assert_eq!(records.last().unwrap()["message"]["role"], "toolResult");
    let events = run.records();
    assert_eq!(
        events.iter().filter(|e| e["type"] == "turn_start").count(),
        1,
        "{}",
        run.stdout
    );
    assert!(events.iter().any(|e| e["type"] == "agent_end"));
    assert_matches_ts_golden("structured-output", &run, &records);
}

/// `npm install --offline` of pi's with-deps example in `dir`: from npm's cache only (the tests
/// never reach the registry). `.ci/run` fills that cache from `ci/node`'s lockfile.
fn npm_install_offline(dir: &Path) -> Result<(), String> {
    let out = std::process::Command::new("npm")
        .args([
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
        ])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run npm: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "npm install --offline failed (is ms@2.1.3 in npm's cache? .ci/run puts it there): {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_with_deps_works_after_npm_install_in_a_copy() {
    let Some(host) = node_host() else {
        return;
    };
    let copy = tempfile::tempdir().unwrap();
    let dir = copy.path().join("with-deps");
    copy_dir(&host.example("with-deps"), &dir);
    assert!(
        !dir.join("node_modules").exists(),
        "the example ships no node_modules"
    );
    if let Err(why) = npm_install_offline(&dir) {
        support::node_host::skip_or_fail(&why);
        return;
    }
    assert!(dir.join("node_modules/ms/package.json").is_file());
    let (_, server) = ReplayServer::start(vec![
        anthropic_tools(&[
            ("call_1", "parse_duration", json!({"duration": "2 days"})),
            ("call_2", "parse_duration", json!({"duration": "soon"})),
        ]),
        anthropic_text("done"),
    ])
    .await
    .unwrap();
    let mut rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    rig.env.extend(host.env());
    // The directory itself: its package.json `pi.extensions` names index.ts.
    let dir_arg = dir.display().to_string();
    let (run, records) = json_run(&rig, &["-e", &dir_arg], "how long", &[]).await;
    assert_completed_and_consistent(&run, &records);
    let results = tool_results(&records);
    assert_eq!(results.len(), 2, "{records:#?}");
    // `ms` came from the copy's own node_modules.
    assert_eq!(text_of(results[0]), "2 days = 172800000 milliseconds");
    assert_eq!(results[0]["isError"], false);
    // The tool's throw is the tool's error, with its message.
    assert_eq!(results[1]["isError"], true, "{}", results[1]);
    assert!(
        text_of(results[1]).contains("Invalid duration: \"soon\""),
        "{}",
        results[1]
    );
    assert_matches_ts_golden("with-deps", &run, &records);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_plan_mode_with_plan_removes_write_tools_and_blocks_bash() {
    let Some(host) = node_host() else {
        return;
    };
    let (_, server) = ReplayServer::start(vec![
        // One call per turn: parallel calls finish in any order, and the golden compares order.
        anthropic_tools(&[("call_1", "bash", json!({"command": "touch victim"}))]),
        anthropic_tools(&[("call_2", "bash", json!({"command": "echo looking"}))]),
        anthropic_text("Plan:\n1. Read the code\n2. Change it"),
    ])
    .await
    .unwrap();
    let mut rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    rig.env.extend(host.env());
    let plan = host.example("plan-mode").display().to_string();
    let (run, records) = json_run(&rig, &["-e", &plan], "make a plan", &["--plan"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.request_count(), 3, "{run:?}");
    // Every request offers the read-only set: no edit, no write.
    for request in server.requests() {
        let tools = offered_tools(&request);
        assert!(tools.contains(&"read".to_owned()), "{tools:?}");
        assert!(tools.contains(&"bash".to_owned()), "{tools:?}");
        assert!(tools.contains(&"grep".to_owned()), "{tools:?}");
        assert!(!tools.contains(&"edit".to_owned()), "{tools:?}");
        assert!(!tools.contains(&"write".to_owned()), "{tools:?}");
    }
    // Its before_agent_start message told the model about plan mode.
    let first = server.requests()[0].body_json().unwrap().to_string();
    assert!(first.contains("[PLAN MODE ACTIVE]"), "{first}");
    let results = tool_results(&records);
    assert_eq!(results.len(), 2, "{records:#?}");
    assert_eq!(results[0]["isError"], true);
    assert_eq!(
        text_of(results[0]),
        "Plan mode: command blocked (not allowlisted). Use /plan to disable plan mode first.\n\
         Command: touch victim"
    );
    assert!(
        !rig.path("work/victim").exists(),
        "the blocked command must not run"
    );
    // A command on its allowlist runs.
    assert_eq!(results[1]["isError"], false, "{}", results[1]);
    assert_eq!(text_of(results[1]).trim(), "looking");
    assert_matches_ts_golden("plan-mode", &run, &records);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_todo_tool_keeps_its_list_across_a_continued_session() {
    let Some(host) = node_host() else {
        return;
    };
    let (_, server) = ReplayServer::start(vec![
        anthropic_tools(&[
            (
                "call_1",
                "todo",
                json!({"action": "add", "text": "buy milk"}),
            ),
            (
                "call_2",
                "todo",
                json!({"action": "add", "text": "write tests"}),
            ),
            ("call_3", "todo", json!({"action": "toggle", "id": 1})),
            ("call_4", "todo", json!({"action": "add"})),
        ]),
        anthropic_text("done"),
        anthropic_tools(&[("call_5", "todo", json!({"action": "list"}))]),
        anthropic_text("done"),
    ])
    .await
    .unwrap();
    let mut rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    rig.env.extend(host.env());
    let todo = official_example(&host, "todo.ts");
    let (run, records) = json_run(&rig, &["-e", &todo], "plan my day", &[]).await;
    assert_completed_and_consistent(&run, &records);
    let texts: Vec<String> = tool_results(&records).into_iter().map(text_of).collect();
    assert_eq!(
        texts,
        [
            "Added todo #1: buy milk",
            "Added todo #2: write tests",
            "Todo #1 completed",
            "Error: text required for add",
        ]
    );
    assert_matches_ts_golden("todo", &run, &records);
    // A new process on the same session rebuilds the list from the branch at session_start.
    let (run, records) = json_run(&rig, &["-e", &todo], "what is left", &["-c"]).await;
    assert_completed_and_consistent(&run, &records);
    assert_eq!(rig.session_files().len(), 1, "-c continues the one session");
    let results = tool_results(&records);
    let last = results.last().unwrap();
    assert_eq!(text_of(last), "[x] #1: buy milk\n[ ] #2: write tests");
    assert_eq!(last["details"]["nextId"], 3);
    assert_eq!(server.request_count(), 4);
}

/// `pi-subagents@0.49.0` from the registry (pinned in `ci/node`), unchanged: its `subagent`
/// tool spawns `PI_SUBAGENT_PI_BINARY --mode json -p …` — our `pi` — and reads that child's
/// json output, so this also tests our json mode as another program consumes it. The child
/// asks the same replay server, between the parent's two requests.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_subagents_runs_our_pi_as_its_child_agent() {
    let Some(host) = node_host() else {
        return;
    };
    let Some(package) = host.package("pi-subagents") else {
        support::node_host::skip_or_fail(&format!(
            "pi-subagents is not installed in {} (ci/node pins it)",
            host.modules.display()
        ));
        return;
    };
    let (_, server) = ReplayServer::start(vec![
        anthropic_tools(&[(
            "call_1",
            "subagent",
            json!({"agent": "greeter", "task": "Say hello from the child", "async": false}),
        )]),
        anthropic_text("hello from the child"),
        anthropic_text("done"),
    ])
    .await
    .unwrap();
    let mut rig = Rig::new(
        &server.base_url(),
        &json!({"retry": {"enabled": false}, "defaultProvider": "replay-anthropic", "defaultModel": "replay-model"}),
    );
    // A user agent with built-in tools only (the packaged ones also ask for tools of other
    // packages, such as pi-intercom's `intercom`).
    std::fs::create_dir_all(rig.path("agent/agents")).unwrap();
    std::fs::write(
        rig.path("agent/agents/greeter.md"),
        "---\nname: greeter\ndescription: Says hello\ntools: read, ls\nsystemPromptMode: append\n\
         inheritSkills: false\n---\n\nYou greet people.\n",
    )
    .unwrap();
    rig.env.extend(host.env());
    rig.env.push((
        "PI_SUBAGENT_PI_BINARY".to_owned(),
        support::binary_rig::pi_bin().display().to_string(),
    ));
    let package = package.display().to_string();
    let (run, records) = json_run(&rig, &["-e", &package], "delegate it", &[]).await;
    assert_completed_and_consistent(&run, &records);
    assert_eq!(server.request_count(), 3, "{run:?}");
    let results = tool_results(&records);
    assert_eq!(results.len(), 1, "{records:#?}");
    assert_eq!(results[0]["toolName"], "subagent");
    assert_eq!(results[0]["isError"], false, "{}", results[0]);
    let text = text_of(results[0]);
    assert!(text.contains("Workflow completed."), "{text}");
    // It parsed our child's json stream: its answer, exit code and usage.
    assert!(
        text.contains("\"output\": \"hello from the child\""),
        "{text}"
    );
    assert!(text.contains("\"exitCode\": 0"), "{text}");
    assert!(text.contains("\"turns\": 1"), "{text}");
    // The child's request carried the task.
    let child = String::from_utf8_lossy(&server.requests()[1].body).into_owned();
    assert!(child.contains("Say hello from the child"), "{child}");
}

/// `pi-mcp-adapter@2.36.0` from the registry (pinned in `ci/node`), unchanged, against the
/// small stdio MCP server `tests/data/extensions/mcp_server.py` named in the project's
/// `.mcp.json`: the model's `mcp({tool, args})` call reaches the server's `tools/call` and its
/// answer is the tool result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_mcp_adapter_calls_a_tool_of_a_stdio_mcp_server() {
    let Some(host) = node_host() else {
        return;
    };
    if !python_available() {
        return;
    }
    let Some(package) = host.package("pi-mcp-adapter") else {
        support::node_host::skip_or_fail(&format!(
            "pi-mcp-adapter is not installed in {} (ci/node pins it)",
            host.modules.display()
        ));
        return;
    };
    let (_, server) = ReplayServer::start(vec![
        anthropic_tools(&[(
            "call_1",
            "mcp",
            json!({"tool": "shouter_shout", "args": {"text": "hello"}}),
        )]),
        anthropic_text("done"),
    ])
    .await
    .unwrap();
    let mut rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/extensions/mcp_server.py");
    let log = rig.path("tmp/mcp.log");
    std::fs::write(
        rig.path("work/.mcp.json"),
        json!({"mcpServers": {"shouter": {
            "command": "python3",
            "args": [script.display().to_string()],
            "env": {"MCP_LOG": log.display().to_string()},
        }}})
        .to_string(),
    )
    .unwrap();
    rig.env.extend(host.env());
    let package = package.display().to_string();
    let (run, records) = json_run(&rig, &["-e", &package], "shout hello", &[]).await;
    assert_completed_and_consistent(&run, &records);
    let results = tool_results(&records);
    assert_eq!(results.len(), 1, "{records:#?}");
    assert_eq!(results[0]["isError"], false, "{}", results[0]);
    assert_eq!(text_of(results[0]), "HELLO!");
    assert_eq!(results[0]["details"]["server"], "shouter");
    assert_eq!(results[0]["details"]["tool"], "shout");
    assert_matches_ts_golden("pi-mcp-adapter", &run, &records);
    let asked = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(asked.contains("\"tools/call\""), "{asked}");
    assert!(asked.contains("\"shout\""), "{asked}");
}

/// Serves `body` as `text/html` to every request on a loopback port until the test ends;
/// returns the port and the request lines it saw.
fn serve_page(body: &'static str) -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            log.lock().unwrap().push(line.trim_end().to_owned());
            // The headers, up to the blank line.
            loop {
                let mut header = String::new();
                match reader.read_line(&mut header) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if header == "\r\n" || header == "\n" => break,
                    Ok(_) => {}
                }
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
    });
    (port, seen)
}

/// `pi-web-access@0.28.0` from the registry (pinned in `ci/node`), unchanged: the model's
/// `fetch_content({url})` of a page on a loopback HTTP server the test starts reaches that
/// server, and the page's text is in the tool result (the page is long because the
/// extension treats under 500 extracted characters as a failed extraction). Its SSRF guard refuses loopback unless
/// `ssrf.allowRanges` in `web-search.json` allows it; it reads that file from
/// `PI_CODING_AGENT_DIR`, which the binary passes on to the host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_web_access_fetches_a_page_from_a_local_server() {
    let Some(host) = node_host() else {
        return;
    };
    let Some(package) = host.package("pi-web-access") else {
        support::node_host::skip_or_fail(&format!(
            "pi-web-access is not installed in {} (ci/node pins it)",
            host.modules.display()
        ));
        return;
    };
    let (port, seen) = serve_page(
        "<!doctype html><html><head><title>Quartz notes</title></head><body><main>\
         <article><h1>Quartz notes</h1><p>The pelican counts seventeen lanterns before \
         dawn, every single morning, without fail.</p><p>A second paragraph keeps the \
         readability heuristics content with the length of this article: the extension \
         calls anything shorter than five hundred characters incomplete and looks for other \
         services to ask instead, so the page has to say a little more than a note would.</p>\
         <p>A third paragraph tells how the lanterns are lit one by one along the harbour \
         wall, how the pelican waits on the last bollard, and how the fishermen nod to it \
         as they pass on their way down to the boats in the grey early light.</p></article>\
         </main></body></html>",
    );
    let url = format!("http://127.0.0.1:{port}/notes");
    let (_, server) = ReplayServer::start(vec![
        anthropic_tools(&[("call_1", "fetch_content", json!({"url": url}))]),
        anthropic_text("done"),
    ])
    .await
    .unwrap();
    let mut rig = Rig::new(&server.base_url(), &json!({"retry": {"enabled": false}}));
    std::fs::write(
        rig.path("agent/web-search.json"),
        json!({"ssrf": {"allowRanges": ["127.0.0.0/8"]}}).to_string(),
    )
    .unwrap();
    rig.env.extend(host.env());
    let package = package.display().to_string();
    let (run, records) = json_run(&rig, &["-e", &package], "fetch the notes", &[]).await;
    assert_completed_and_consistent(&run, &records);
    assert_eq!(server.request_count(), 2, "{run:?}");
    let results = tool_results(&records);
    assert_eq!(results.len(), 1, "{records:#?}");
    assert_eq!(results[0]["toolName"], "fetch_content");
    assert_eq!(results[0]["isError"], false, "{}", results[0]);
    let text = text_of(results[0]);
    assert!(
        text.contains("The pelican counts seventeen lanterns before dawn"),
        "{text}"
    );
    let asked = seen.lock().unwrap().clone();
    assert!(
        asked.iter().any(|l| l.starts_with("GET /notes ")),
        "{asked:?}"
    );
    // The model's second request carried the fetched text back to it.
    let second = String::from_utf8_lossy(&server.requests()[1].body).into_owned();
    assert!(second.contains("seventeen lanterns"), "{second}");
}
