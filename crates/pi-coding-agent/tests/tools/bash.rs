//! The bash tool against real processes (small real-time timeouts, no timed assertions).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_coding_agent::tools::bash::{BashTool, BashToolOptions, SessionEnv};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn text_of(result: &AgentToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

struct Harness {
    dir: tempfile::TempDir,
    tool: BashTool,
}

fn harness(configure: impl FnOnce(&mut BashToolOptions, &Path)) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let mut options = BashToolOptions {
        temp_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    configure(&mut options, dir.path());
    let tool = BashTool::new(dir.path(), options);
    Harness { dir, tool }
}

async fn run(tool: &BashTool, args: Value) -> Result<AgentToolResult, ToolError> {
    tool.execute("call-1", args, CancellationToken::new(), None)
        .await
}

type Updates = Arc<Mutex<Vec<Value>>>;

fn recorder() -> (ToolUpdateFn, Updates) {
    let updates: Updates = Arc::default();
    let sink = updates.clone();
    let f: ToolUpdateFn = Arc::new(move |r: AgentToolResult| {
        sink.lock().unwrap().push(serde_json::to_value(&r).unwrap());
    });
    (f, updates)
}

/// Whether `pid` is gone (or a zombie waiting to be reaped).
fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

async fn wait_gone(pid: i32) -> bool {
    for _ in 0..100 {
        if process_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

fn first_pid(text: &str) -> i32 {
    text.lines().next().unwrap().trim().parse().unwrap()
}

fn kill(pid: i32) {
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
}

#[tokio::test]
async fn echo_streams_updates_like_the_reference() {
    let h = harness(|_, _| {});
    let (on_update, updates) = recorder();
    let result = h
        .tool
        .execute(
            "call",
            json!({"command": "echo hello"}),
            CancellationToken::new(),
            Some(on_update),
        )
        .await
        .unwrap();
    // Golden tool_bash: result without details; updates `{content:[]}` then a snapshot.
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({"content": [{"type": "text", "text": "hello\n"}]})
    );
    let updates = updates.lock().unwrap().clone();
    assert_eq!(
        updates,
        vec![
            json!({"content": []}),
            json!({"content": [{"type": "text", "text": "hello\n"}], "details": {}}),
        ]
    );
}

#[tokio::test]
async fn schema_matches_the_reference_shape() {
    let h = harness(|_, _| {});
    let p = h.tool.parameters();
    assert_eq!(p["type"], "object");
    assert_eq!(p["required"], json!(["command"]));
    assert_eq!(p["properties"]["command"]["type"], "string");
    assert_eq!(p["properties"]["timeout"]["type"], "number");
    assert_eq!(p["properties"].as_object().unwrap().len(), 2);
    assert_eq!(h.tool.name(), "bash");
}

#[tokio::test]
async fn no_output_and_exit_codes() {
    let h = harness(|_, _| {});
    let ok = run(&h.tool, json!({"command": "true"})).await.unwrap();
    assert_eq!(text_of(&ok), "(no output)");
    assert!(ok.details.is_none());

    let err = run(&h.tool, json!({"command": "exit 1"}))
        .await
        .unwrap_err();
    assert_eq!(err.0, "(no output)\n\nCommand exited with code 1");

    let err = run(
        &h.tool,
        json!({"command": "echo out; echo err >&2; exit 3"}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.0, "out\nerr\n\n\nCommand exited with code 3");
}

#[tokio::test]
async fn killed_by_foreign_signal_is_not_an_error() {
    let h = harness(|_, _| {});
    let ok = run(&h.tool, json!({"command": "echo before; kill -9 $$"}))
        .await
        .unwrap();
    assert_eq!(text_of(&ok), "before\n");
}

#[tokio::test]
async fn runs_in_the_tool_cwd() {
    let h = harness(|_, _| {});
    let ok = run(&h.tool, json!({"command": "pwd -P"})).await.unwrap();
    let expected = h.dir.path().canonicalize().unwrap();
    assert_eq!(text_of(&ok), format!("{}\n", expected.display()));
}

#[tokio::test]
async fn timeout_reports_the_given_seconds() {
    let h = harness(|_, _| {});
    let err = run(&h.tool, json!({"command": "sleep 5", "timeout": 0.2}))
        .await
        .unwrap_err();
    assert_eq!(err.0, "Command timed out after 0.2 seconds");
    let err = run(
        &h.tool,
        json!({"command": "echo start; sleep 5", "timeout": 0.3}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.0, "start\n\n\nCommand timed out after 0.3 seconds");
}

#[tokio::test]
async fn invalid_timeouts() {
    let h = harness(|_, _| {});
    for bad in [json!(0), json!(-1), json!(-0.5)] {
        let err = run(&h.tool, json!({"command": "echo x", "timeout": bad}))
            .await
            .unwrap_err();
        assert_eq!(err.0, "Invalid timeout: must be a finite number of seconds");
    }
    let err = run(&h.tool, json!({"command": "echo x", "timeout": 1e10}))
        .await
        .unwrap_err();
    assert_eq!(err.0, "Invalid timeout: maximum is 2147483.647 seconds");
}

#[tokio::test]
async fn timeout_kills_grandchildren() {
    let h = harness(|_, _| {});
    let (on_update, updates) = recorder();
    let err = h
        .tool
        .execute(
            "call",
            json!({"command": "sh -c 'sleep 30 & echo $!; wait'", "timeout": 0.5}),
            CancellationToken::new(),
            Some(on_update),
        )
        .await
        .unwrap_err();
    assert!(
        err.0.ends_with("\n\n\nCommand timed out after 0.5 seconds"),
        "{}",
        err.0
    );
    let pid = first_pid(&err.0);
    let gone = wait_gone(pid).await;
    if !gone {
        kill(pid);
    }
    assert!(gone, "grandchild {pid} survived the timeout");
    assert!(updates.lock().unwrap().len() >= 2);
}

#[tokio::test]
async fn abort_kills_grandchildren_and_keeps_output() {
    let h = harness(|_, _| {});
    let cancel = CancellationToken::new();
    let pid_seen: Arc<Mutex<Option<i32>>> = Arc::default();
    let (seen, trigger) = (pid_seen.clone(), cancel.clone());
    let on_update: ToolUpdateFn = Arc::new(move |r: AgentToolResult| {
        let text = text_of(&r);
        if let Ok(pid) = text.trim().parse::<i32>() {
            *seen.lock().unwrap() = Some(pid);
            trigger.cancel();
        }
    });
    let err = h
        .tool
        .execute(
            "call",
            json!({"command": "sh -c 'sleep 30 & echo $!; wait'"}),
            cancel,
            Some(on_update),
        )
        .await
        .unwrap_err();
    let pid = pid_seen.lock().unwrap().expect("pid streamed before abort");
    assert_eq!(err.0, format!("{pid}\n\n\nCommand aborted"));
    let gone = wait_gone(pid).await;
    if !gone {
        kill(pid);
    }
    assert!(gone, "grandchild {pid} survived the abort");
}

#[tokio::test]
async fn aborted_before_start_spawns_nothing() {
    let h = harness(|_, _| {});
    let cancel = CancellationToken::new();
    cancel.cancel();
    let marker = h.dir.path().join("ran");
    let err = h
        .tool
        .execute(
            "call",
            json!({"command": format!("touch {}", marker.display())}),
            cancel,
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(err.0, "Command aborted");
    assert!(!marker.exists());
}

#[tokio::test]
async fn background_grandchild_does_not_hold_the_result() {
    let h = harness(|_, _| {});
    let ok = run(&h.tool, json!({"command": "sleep 30 & echo $!"}))
        .await
        .unwrap();
    let pid = first_pid(&text_of(&ok));
    // The shell exited; the background sleep still holds the pipes but the tool returned.
    assert!(!process_gone(pid));
    kill(pid);
}

#[tokio::test]
async fn session_environment_and_markers() {
    let h = harness(|o, dir| {
        o.agent_dir = Some(dir.join("agent"));
        o.session_env = Some(Arc::new(|| SessionEnv {
            session_id: "sess-1".into(),
            session_file: Some("/tmp/s.jsonl".into()),
            provider: Some("anthropic".into()),
            model: Some("claude-x".into()),
            reasoning_level: Some("high".into()),
        }));
    });
    let cmd = r#"echo "$PI_SESSION_ID|$PI_SESSION_FILE|$PI_PROVIDER|$PI_MODEL|$PI_REASONING_LEVEL|$AI_AGENT|$PI_CODING_AGENT"; echo "$PATH""#;
    let ok = run(&h.tool, json!({ "command": cmd })).await.unwrap();
    let text = text_of(&ok);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "sess-1|/tmp/s.jsonl|anthropic|claude-x|high|pi|true"
    );
    let bin = h.dir.path().join("agent").join("bin");
    let path = lines.next().unwrap();
    assert!(
        path.starts_with(&format!("{}:", bin.display())),
        "PATH = {path}"
    );
}

#[tokio::test]
async fn without_session_env_no_session_vars() {
    let h = harness(|_, _| {});
    let cmd = r#"echo "${PI_SESSION_ID-unset}|${PI_MODEL-unset}|$AI_AGENT|$PI_CODING_AGENT""#;
    let ok = run(&h.tool, json!({ "command": cmd })).await.unwrap();
    assert_eq!(text_of(&ok), "unset|unset|pi|true\n");
}

#[tokio::test]
async fn command_prefix_is_prepended() {
    let h = harness(|o, _| o.command_prefix = Some("export GREETING=hi".into()));
    let ok = run(&h.tool, json!({"command": "echo $GREETING"}))
        .await
        .unwrap();
    assert_eq!(text_of(&ok), "hi\n");
}

#[tokio::test]
async fn shell_path_rules() {
    let missing = harness(|o, _| o.shell_path = Some(PathBuf::from("/nonexistent/shell")));
    let err = run(&missing.tool, json!({"command": "echo x"}))
        .await
        .unwrap_err();
    assert_eq!(err.0, "Custom shell path not found: /nonexistent/shell");

    let sh = harness(|o, _| o.shell_path = Some(PathBuf::from("/bin/sh")));
    let ok = run(&sh.tool, json!({"command": "echo via-sh"}))
        .await
        .unwrap();
    assert_eq!(text_of(&ok), "via-sh\n");
}

#[tokio::test]
async fn missing_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let tool = BashTool::new(&gone, BashToolOptions::default());
    let err = run(&tool, json!({"command": "echo x"})).await.unwrap_err();
    assert_eq!(
        err.0,
        format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            gone.display()
        )
    );
}

fn full_output_path(result: &AgentToolResult) -> PathBuf {
    let details = result.details.as_ref().unwrap();
    PathBuf::from(details["fullOutputPath"].as_str().unwrap())
}

#[tokio::test]
async fn tail_truncation_by_lines_writes_full_output() {
    let h = harness(|_, _| {});
    let ok = run(&h.tool, json!({"command": "seq 1 2500"}))
        .await
        .unwrap();
    let path = full_output_path(&ok);
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("pi-bash-") && name.ends_with(".log") && name.len() == 28);
    assert_eq!(path.parent().unwrap(), h.dir.path());
    let expected_body: Vec<String> = (501..=2500).map(|i| i.to_string()).collect();
    assert_eq!(
        text_of(&ok),
        format!(
            "{}\n\n[Showing lines 501-2500 of 2500. Full output: {}]",
            expected_body.join("\n"),
            path.display()
        )
    );
    let full: String = (1..=2500).map(|i| format!("{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), full);
    let t = &ok.details.as_ref().unwrap()["truncation"];
    assert_eq!(t["truncated"], true);
    assert_eq!(t["truncatedBy"], "lines");
    assert_eq!(t["totalLines"], 2500);
    assert_eq!(t["outputLines"], 2000);
    assert_eq!(t["maxLines"], 2000);
    assert_eq!(t["maxBytes"], 51200);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[tokio::test]
async fn tail_truncation_by_bytes() {
    let h = harness(|_, _| {});
    // 1000 lines of 99 'x' + newline = 100 000 bytes; 512 lines fit in 51 200 bytes.
    let cmd = "for i in $(seq 1 1000); do printf '%099d\\n' 0 | tr 0 x; done";
    let ok = run(&h.tool, json!({ "command": cmd })).await.unwrap();
    let path = full_output_path(&ok);
    let text = text_of(&ok);
    let line = "x".repeat(99);
    let body = vec![line.as_str(); 512].join("\n");
    assert_eq!(
        text,
        format!(
            "{body}\n\n[Showing lines 489-1000 of 1000 (50.0KB limit). Full output: {}]",
            path.display()
        )
    );
    assert_eq!(
        ok.details.as_ref().unwrap()["truncation"]["truncatedBy"],
        "bytes"
    );
}

#[tokio::test]
async fn tail_truncation_of_one_long_line() {
    let h = harness(|_, _| {});
    let ok = run(
        &h.tool,
        json!({"command": "head -c 60000 /dev/zero | tr '\\0' x"}),
    )
    .await
    .unwrap();
    let path = full_output_path(&ok);
    assert_eq!(
        text_of(&ok),
        format!(
            "{}\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {}]",
            "x".repeat(51200),
            path.display()
        )
    );
    assert_eq!(
        ok.details.as_ref().unwrap()["truncation"]["lastLinePartial"],
        true
    );
}

#[tokio::test]
async fn truncated_error_keeps_notice() {
    let h = harness(|_, _| {});
    let err = run(&h.tool, json!({"command": "seq 1 2001; exit 2"}))
        .await
        .unwrap_err();
    assert!(err.0.starts_with("2\n3\n"), "{}", &err.0[..20]);
    assert!(
        err.0
            .contains("\n\n[Showing lines 2-2001 of 2001. Full output: ")
    );
    assert!(err.0.ends_with("]\n\nCommand exited with code 2"));
}

#[tokio::test]
async fn truncated_updates_carry_details() {
    let h = harness(|_, _| {});
    let (on_update, updates) = recorder();
    h.tool
        .execute(
            "call",
            json!({"command": "seq 1 3000"}),
            CancellationToken::new(),
            Some(on_update),
        )
        .await
        .unwrap();
    let updates = updates.lock().unwrap().clone();
    let last = updates.last().unwrap();
    assert_eq!(last["details"]["truncation"]["totalLines"], 3000);
    assert!(
        last["details"]["fullOutputPath"]
            .as_str()
            .unwrap()
            .contains("pi-bash-")
    );
    let text = last["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("1001\n") && text.ends_with("\n3000"));
}

#[tokio::test]
async fn dropping_the_call_kills_the_process_group() {
    let h = harness(|_, _| {});
    let pid_seen: Arc<Mutex<Option<i32>>> = Arc::default();
    let seen = pid_seen.clone();
    let on_update: ToolUpdateFn = Arc::new(move |r: AgentToolResult| {
        if let Ok(pid) = text_of(&r).trim().parse::<i32>() {
            *seen.lock().unwrap() = Some(pid);
        }
    });
    let mut call = h.tool.execute(
        "call",
        json!({"command": "sh -c 'sleep 30 & echo $!; wait'"}),
        CancellationToken::new(),
        Some(on_update),
    );
    // Drive the call until the grandchild's pid has been streamed, then drop it.
    loop {
        tokio::select! {
            _ = &mut call => panic!("command finished on its own"),
            _ = tokio::time::sleep(Duration::from_millis(20)) => {
                if pid_seen.lock().unwrap().is_some() {
                    break;
                }
            }
        }
    }
    drop(call);
    let pid = pid_seen.lock().unwrap().unwrap();
    let gone = wait_gone(pid).await;
    if !gone {
        kill(pid);
    }
    assert!(gone, "grandchild {pid} survived the dropped call");
}

#[tokio::test]
async fn updates_are_growing_snapshots_of_the_output() {
    let h = harness(|_, _| {});
    let (on_update, updates) = recorder();
    let result = h
        .tool
        .execute(
            "call",
            json!({"command": "for i in 1 2 3; do echo line$i; sleep 0.12; done"}),
            CancellationToken::new(),
            Some(on_update),
        )
        .await
        .unwrap();
    let updates = updates.lock().unwrap().clone();
    assert_eq!(updates[0], json!({"content": []}));
    let texts: Vec<&str> = updates[1..]
        .iter()
        .map(|u| u["content"][0]["text"].as_str().unwrap())
        .collect();
    assert!(!texts.is_empty());
    for pair in texts.windows(2) {
        assert!(pair[1].starts_with(pair[0]) && pair[1].len() > pair[0].len());
    }
    assert_eq!(*texts.last().unwrap(), text_of(&result));
    assert_eq!(text_of(&result), "line1\nline2\nline3\n");
}
