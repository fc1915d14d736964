//! The interactive mode's keys and notices beyond the basics: the model selector key, the
//! notices pi adds to the transcript, the status line in the editor's rule, clipboard paste.
//! Through the real binary in a pty against the replay server.

use std::time::Duration;

use pi_tui::testkit::ScreenModel;
use serde_json::json;

use crate::support::binary_rig::slot;
use crate::support::pty_rig::*;

fn footer(m: &mut ScreenModel) -> String {
    m.screen_lines()
        .into_iter()
        .rfind(|l| l.contains("(auto)"))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_l_opens_the_model_selector_and_follows_keybindings_json() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = root.spawn_replay(&[], 30, 110);
    wait_ready(&mut s);
    ok(s.send(b"\x0c"));
    wait_text(&mut s, "Select model");
    ok(s.send(b"google"));
    ok(s.wait_for("the filtered list", WAIT, |m| {
        let t = m.screen_text();
        t.contains("[replay-google]") && !t.contains("[replay-responses]")
    }));
    ok(s.send(b"\r"));
    ok(s.wait_for("the google footer", WAIT, |m| {
        footer(m).contains("(replay-google) replay-model")
    }));
    assert!(!s.model().screen_text().contains("Select model"));
    quit(&mut s);

    // Rebound: Alt+M opens it, Ctrl+L no longer does.
    std::fs::write(
        root.path("agent/keybindings.json"),
        r#"{"app.model.select": "alt+m"}"#,
    )
    .unwrap();
    let mut s = root.spawn_replay(&[], 30, 110);
    wait_ready(&mut s);
    ok(s.send(b"\x0c"));
    ok(s.settle(Duration::from_millis(400)));
    assert!(
        !s.model().screen_text().contains("Select model"),
        "{}",
        s.model().screen_text()
    );
    ok(s.send(b"\x1bm"));
    wait_text(&mut s, "Select model");
    ok(s.send(b"\x1b"));
    ok(s.wait_for("the editor back", WAIT, |m| {
        !m.screen_text().contains("Select model")
    }));
    quit(&mut s);
}
