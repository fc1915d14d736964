//! `kill_tracked_process_groups` (the binary's SIGTERM/SIGHUP path) kills running commands.
//! Its own test binary: it kills every command of the process.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_agent_core::{AgentTool, AgentToolResult, ToolUpdateFn};
use pi_coding_agent::tools::bash::executor::kill_tracked_process_groups;
use pi_coding_agent::tools::bash::{BashTool, BashToolOptions};
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn tracked_groups_are_killed_with_their_grandchildren() {
    let dir = tempfile::tempdir().unwrap();
    let tool = BashTool::new(dir.path(), BashToolOptions::default());
    let pid_seen: Arc<Mutex<Option<i32>>> = Arc::default();
    let seen = pid_seen.clone();
    let on_update: ToolUpdateFn = Arc::new(move |r: AgentToolResult| {
        let text: String = r.content.iter().filter_map(|c| c.as_text()).collect();
        if let Ok(pid) = text.trim().parse::<i32>() {
            *seen.lock().unwrap() = Some(pid);
            kill_tracked_process_groups();
        }
    });
    let result = tool
        .execute(
            "call",
            json!({"command": "sh -c 'sleep 30 & echo $!; wait'"}),
            CancellationToken::new(),
            Some(on_update),
        )
        .await;
    // The shell died of SIGKILL (exit code null): the reference reports the output so far.
    let ok = result.unwrap();
    let pid = pid_seen.lock().unwrap().unwrap();
    assert_eq!(ok.content[0].as_text().unwrap(), format!("{pid}\n"));
    let mut gone = false;
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        if stat.map_or(true, |s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        }) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if !gone {
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert!(gone, "grandchild {pid} survived");
}
