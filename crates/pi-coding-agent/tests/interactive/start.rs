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

/// A fake `tmux` on `PATH` answering `show -gv <option>` from `answers` and logging each call.
fn fake_tmux(root: &Root, answers: &[(&str, &str)]) -> String {
    let bin = root.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let mut script = format!(
        "#!/bin/sh\necho \"$*\" >> {}\ncase \"$3\" in\n",
        root.path("tmux.log").display()
    );
    for (option, value) in answers {
        script.push_str(&format!("  {option}) echo {value} ;;\n"));
    }
    script.push_str("  *) exit 1 ;;\nesac\n");
    let path = bin.join("tmux");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:/usr/bin:/bin", bin.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inside_tmux_without_extended_keys_pi_warns_at_start() {
    let _slot = slot();
    let srv = server(vec![]).await;
    for (answers, warning) in [
        (
            [("extended-keys", "off"), ("extended-keys-format", "csi-u")],
            "Warning: tmux extended-keys is off. Modified Enter keys may not work. Add `set -g extended-keys on` to ~/.tmux.conf and restart tmux.",
        ),
        (
            [("extended-keys", "on"), ("extended-keys-format", "xterm")],
            "Warning: tmux extended-keys-format is xterm. Pi works best with csi-u. Add `set -g extended-keys-format csi-u` to ~/.tmux.conf and restart tmux.",
        ),
    ] {
        let root = Root::new(&srv.base_url(), json!({}));
        let path = fake_tmux(&root, &answers);
        let tmux = [("TMUX", "/tmp/tmux-0/default,1,0".to_owned())];
        let mut s = root.spawn_with_env(&["--no-session"], &path, &tmux, 30, 200);
        wait_ready(&mut s);
        wait_text(&mut s, warning);
        quit(&mut s);
        let log = std::fs::read_to_string(root.path("tmux.log")).unwrap();
        assert!(log.contains("show -gv extended-keys\n"), "{log}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_tmux_or_with_csi_u_there_is_no_tmux_warning() {
    let _slot = slot();
    let srv = server(vec![]).await;
    // Outside tmux (no `TMUX`) tmux is not even asked.
    let root = Root::new(&srv.base_url(), json!({}));
    let path = fake_tmux(&root, &[("extended-keys", "off")]);
    let mut s = root.spawn_with_path(&["--no-session"], &path, 30, 200);
    wait_ready(&mut s);
    pump_for(&mut s, std::time::Duration::from_millis(500));
    assert!(!s.model().screen_text().contains("tmux"));
    quit(&mut s);
    assert!(!root.path("tmux.log").exists());
    // Inside tmux with the settings pi wants: asked, and silent.
    let root = Root::new(&srv.base_url(), json!({}));
    let path = fake_tmux(
        &root,
        &[
            ("extended-keys", "always"),
            ("extended-keys-format", "csi-u"),
        ],
    );
    let tmux = [("TMUX", "/tmp/tmux-0/default,1,0".to_owned())];
    let mut s = root.spawn_with_env(&["--no-session"], &path, &tmux, 30, 200);
    wait_ready(&mut s);
    // Asked (pi gives each question 2 s; on a loaded machine the second may go unanswered,
    // which is silent too).
    ok(s.wait_for("a tmux question", WAIT, |_| {
        std::fs::read_to_string(root.path("tmux.log")).is_ok_and(|l| l.contains("extended-keys"))
    }));
    pump_for(&mut s, std::time::Duration::from_millis(300));
    assert!(!s.model().screen_text().contains("tmux"));
    quit(&mut s);
}
