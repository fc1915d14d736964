//! What the interactive mode shows and records around its start, through the real binary in a
//! pty: the `--models` scope line, Ctrl+P's status line, `lastChangelogVersion`.

use serde_json::{Value, json};

use crate::support::binary_rig::slot;
use crate::support::pty_rig::*;

fn settings(root: &Root) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.path("agent/settings.json")).unwrap())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_scope_is_announced_and_ctrl_p_says_where_it_switched() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let dir = root.sessions();
    let mut s = root.spawn(
        &[
            "--session-dir",
            &dir,
            "--models",
            "replay-anthropic/replay-model,replay-openai/replay-model:high",
        ],
        30,
        100,
    );
    wait_ready(&mut s);
    let m = s.model();
    let lines = m.screen_lines();
    let scope = lines
        .iter()
        .position(|l| l.contains("Model scope:"))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert_eq!(
        lines[scope].trim_end(),
        "Model scope: replay-model, replay-model:high (Ctrl+P to cycle)"
    );
    // Printed before the header, as pi prints it.
    let header = lines.iter().position(|l| l.contains("pi v")).unwrap();
    assert!(scope < header, "{lines:#?}");
    ok(s.send(b"\x10"));
    wait_text(&mut s, "Switched to replay-model");
    ok(s.wait_for("the footer's provider", WAIT, |m| {
        m.screen_text().contains("(replay-openai)")
    }));
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_model_in_scope_says_so_on_ctrl_p() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let dir = root.sessions();
    let mut s = root.spawn(
        &[
            "--session-dir",
            &dir,
            "--models",
            "replay-openai/replay-model",
        ],
        30,
        100,
    );
    wait_ready(&mut s);
    wait_text(&mut s, "Model scope: replay-model (Ctrl+P to cycle)");
    ok(s.send(b"\x10"));
    wait_text(&mut s, "Only one model in scope");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_run_records_the_version_and_an_upgrade_shows_what_is_new() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let dir = root.sessions();
    let version = env!("CARGO_PKG_VERSION");
    // First run: recorded, nothing shown.
    let mut s = root.spawn_replay(&["--session-dir", &dir], 30, 100);
    wait_ready(&mut s);
    assert!(!s.model().screen_text().contains("What's New"));
    quit(&mut s);
    assert_eq!(settings(&root)["lastChangelogVersion"], version);
    // The same version again: nothing.
    let mut s = root.spawn_replay(&["--session-dir", &dir], 30, 100);
    wait_ready(&mut s);
    assert!(!s.model().screen_text().contains("What's New"));
    quit(&mut s);
    // An upgrade from an older version: the entries since, then the version recorded.
    let mut older = settings(&root);
    older["lastChangelogVersion"] = json!("0.0.9");
    std::fs::write(root.path("agent/settings.json"), older.to_string()).unwrap();
    let mut s = root.spawn_replay(&["--session-dir", &dir], 40, 100);
    wait_ready(&mut s);
    wait_text(&mut s, "What's New");
    wait_text(
        &mut s,
        "The first version: the TypeScript pi 0.85.0 re-implemented in Rust",
    );
    quit(&mut s);
    let after = settings(&root);
    assert_eq!(after["lastChangelogVersion"], version);
    assert_eq!(
        after["retry"]["enabled"], false,
        "the rest is kept: {after}"
    );
    // collapseChangelog: pi's one line instead.
    let mut older = settings(&root);
    older["lastChangelogVersion"] = json!("0.0.9");
    older["collapseChangelog"] = json!(true);
    std::fs::write(root.path("agent/settings.json"), older.to_string()).unwrap();
    let mut s = root.spawn_replay(&["--session-dir", &dir], 30, 100);
    wait_ready(&mut s);
    wait_text(
        &mut s,
        &format!("Updated to v{version}. Use /changelog to view full changelog."),
    );
    assert!(!s.model().screen_text().contains("What's New"));
    quit(&mut s);
}
