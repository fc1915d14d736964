//! The interactive mode's slash commands, selectors and completion through the real binary in
//! a pty against the replay server: what the screen shows and what the session files hold.

use std::time::Duration;

use pi_tui::testkit::{PtySession, ScreenModel};
use serde_json::{Value, json};

use crate::support::anthropic_sse::anthropic_text;
use crate::support::binary_rig::{file_records, slot};
use crate::support::pty_rig::*;

fn footer(m: &mut ScreenModel) -> String {
    m.screen_lines()
        .into_iter()
        .rfind(|l| l.contains("(auto)"))
        .unwrap_or_default()
}

/// The selector's marked row shows `text`.
fn selected(m: &mut ScreenModel, text: &str) -> bool {
    m.screen_lines()
        .iter()
        .any(|l| l.trim_start().starts_with('→') && l.contains(text))
}

fn spawn_in(root: &Root, rows: u16, cols: u16) -> PtySession {
    let dir = root.sessions();
    let mut s = root.spawn_replay(&["--session-dir", &dir], rows, cols);
    wait_ready(&mut s);
    s
}

/// Waits until nothing is streaming: the prompt's answer is on screen and the run settled.
fn ask(s: &mut PtySession, prompt: &str, answer: &str) {
    type_line(s, prompt);
    wait_text(s, answer);
    ok(s.settle(Duration::from_millis(300)));
}

fn records_of_type(path: &std::path::Path, kind: &str) -> Vec<Value> {
    file_records(path)
        .into_iter()
        .filter(|r| r["type"] == kind)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_slash_menu_lists_every_command_and_filters_as_you_type() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    std::fs::create_dir_all(root.path("agent/prompts")).unwrap();
    std::fs::write(
        root.path("agent/prompts/review.md"),
        "---\ndescription: Review the staged diff\n---\nReview this: $ARGUMENTS\n",
    )
    .unwrap();
    let mut s = spawn_in(&root, 30, 100);
    ok(s.send(b"/"));
    // pi's 23 built-ins and the template: the menu scrolls through 24.
    wait_text(&mut s, "(1/24)");
    let screen = s.model().screen_text();
    assert!(screen.contains("settings"), "{screen}");
    assert!(
        screen.contains("<provider/model> — "),
        "the argument hint leads the description: {screen}"
    );
    ok(s.send(b"rev"));
    wait_text(&mut s, "Review the staged diff");
    ok(s.send(b"\x1b"));
    ok(s.wait_for("the menu closed", WAIT, |m| {
        !m.screen_text().contains("Review the staged diff")
    }));
    ok(s.send(b"\x03"));
    ok(s.wait_for("the editor cleared", WAIT, |m| {
        !m.screen_text().contains("/rev")
    }));
    // A command chosen with Enter runs at once.
    ok(s.send(b"/hotk"));
    wait_text(&mut s, "hotkeys");
    ok(s.send(b"\r"));
    wait_text(&mut s, "Delete to the end of the line");
    let all = s.model().all_lines().join("\n");
    assert!(
        all.contains("Keyboard shortcuts") && all.contains("shift+tab"),
        "{all}"
    );
    type_line(&mut s, "/debug");
    wait_text(&mut s, "✓ Debug log written");
    let log = std::fs::read_to_string(root.path("agent/pi-debug.log")).unwrap();
    assert!(
        log.contains("=== All rendered lines with visible widths ==="),
        "{log}"
    );
    assert!(log.contains("Keyboard shortcuts"), "{log}");
    assert!(srv.requests().is_empty());
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_and_thinking_commands_change_the_footer_and_the_session() {
    let _slot = slot();
    let gemini = concat!(
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Answered by Gemini.\"}],",
        "\"role\":\"model\"},\"finishReason\":\"STOP\"}],",
        "\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":4}}\n\n"
    );
    let srv = server(vec![pi_ai::testkit::Reply::sse(gemini.to_owned())]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = spawn_in(&root, 30, 110);
    assert!(
        footer(s.model()).contains("(replay-anthropic) replay-model"),
        "{}",
        footer(s.model())
    );
    // An exact reference switches at once. As in pi, Enter on the argument menu takes the
    // completion; the next Enter submits.
    ok(s.send(b"/model replay-openai/replay-model"));
    let menu_open = |m: &mut ScreenModel| {
        m.screen_lines()
            .iter()
            .any(|l| l.contains("replay-openai") && !l.contains("/model"))
    };
    ok(s.wait_for("the argument menu", WAIT, menu_open));
    ok(s.send(b"\r"));
    ok(s.wait_for("the argument menu closed", WAIT, |m| !menu_open(m)));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Model: replay-model");
    ok(s.wait_for("the openai footer", WAIT, |m| {
        footer(m).contains("(replay-openai) replay-model")
    }));
    // No argument: the selector, filtered by typing, Enter picks.
    type_line(&mut s, "/model");
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
    // Esc closes the selector and changes nothing.
    type_line(&mut s, "/model");
    wait_text(&mut s, "Select model");
    ok(s.send(b"\x1b"));
    ok(s.wait_for("the editor back", WAIT, |m| {
        !m.screen_text().contains("Select model")
    }));
    type_line(&mut s, "/thinking bogus");
    wait_text(
        &mut s,
        "Error: Unknown thinking level \"bogus\". Available levels: off.",
    );
    ask(&mut s, "who answers?", "Answered by Gemini.");
    assert!(
        srv.requests()[0].path.starts_with("/v1beta"),
        "{}",
        srv.requests()[0].path
    );
    quit(&mut s);
    let changes: Vec<String> = records_of_type(&root.session_files()[0], "model_change")
        .iter()
        .map(|r| {
            format!(
                "{}/{}",
                r["provider"].as_str().unwrap(),
                r["modelId"].as_str().unwrap()
            )
        })
        .collect();
    // The start's model, then each switch.
    assert_eq!(
        changes,
        [
            "replay-anthropic/replay-model",
            "replay-openai/replay-model",
            "replay-google/replay-model"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_and_resume_switch_between_session_files() {
    let _slot = slot();
    let srv = server(vec![
        anthropic_text("Reply one."),
        anthropic_text("Reply two."),
        anthropic_text("Reply three."),
    ])
    .await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = spawn_in(&root, 30, 100);
    ask(&mut s, "first topic", "Reply one.");
    type_line(&mut s, "/new");
    wait_text(&mut s, "✓ New session started");
    // As in pi, the chat starts over: the old conversation is gone from the screen.
    assert!(!s.model().screen_text().contains("Reply one."));
    ask(&mut s, "second topic", "Reply two.");
    // The second request did not carry the first session's messages.
    assert_eq!(request_user_texts(&srv, 1), ["second topic"]);
    assert_eq!(root.session_files().len(), 2);
    type_line(&mut s, "/resume");
    wait_text(&mut s, "Resume Session (Current Folder)");
    ok(s.wait_for("both sessions listed", WAIT, |m| {
        let t = m.screen_text();
        t.contains("first topic") && t.contains("second topic")
    }));
    ok(s.send(b"first"));
    ok(s.wait_for("the filtered list", WAIT, |m| selected(m, "first topic")));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Resumed session");
    let screen = s.model().screen_text();
    assert!(
        screen.contains("Reply one.") && !screen.contains("Reply two."),
        "{screen}"
    );
    ask(&mut s, "back again", "Reply three.");
    assert_eq!(request_user_texts(&srv, 2), ["first topic", "back again"]);
    quit(&mut s);
    let users: Vec<usize> = root
        .session_files()
        .iter()
        .map(|f| {
            records_of_type(f, "message")
                .iter()
                .filter(|r| r["message"]["role"] == "user")
                .count()
        })
        .collect();
    let mut sorted = users.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, [1, 2], "{users:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clone_and_fork_start_new_sessions_from_this_one() {
    let _slot = slot();
    let srv = server(vec![
        anthropic_text("Alpha reply."),
        anthropic_text("Beta reply."),
        anthropic_text("Gamma reply."),
    ])
    .await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = spawn_in(&root, 30, 100);
    // As in pi, a session without an answer is not on disk yet: nothing to clone from.
    type_line(&mut s, "/clone");
    wait_text(&mut s, "Error: This session has not been saved yet.");
    type_line(&mut s, "/fork");
    wait_text(&mut s, "No messages to fork from");
    ask(&mut s, "alpha question", "Alpha reply.");
    ask(&mut s, "beta question", "Beta reply.");
    type_line(&mut s, "/clone");
    wait_text(&mut s, "Cloned to new session");
    assert_eq!(root.session_files().len(), 2);
    // The latest message is selected; Up picks the first; the fork leaves its text in the
    // editor and the new session holds what came before it.
    type_line(&mut s, "/fork");
    wait_text(&mut s, "Fork from a message");
    ok(s.wait_for("the latest selected", WAIT, |m| {
        selected(m, "beta question")
    }));
    ok(s.send(b"\x1b[A"));
    ok(s.wait_for("the first selected", WAIT, |m| {
        selected(m, "alpha question")
    }));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Forked to new session");
    ok(s.send(b" again\r"));
    wait_text(&mut s, "Gamma reply.");
    assert_eq!(request_user_texts(&srv, 2), ["alpha question again"]);
    quit(&mut s);
    assert_eq!(root.session_files().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_completion_inserts_a_project_path_and_export_writes_a_file() {
    let _slot = slot();
    let srv = server(vec![anthropic_text("Exported soon.")]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    std::fs::create_dir_all(root.path("work/docs")).unwrap();
    std::fs::write(root.path("work/docs/usage.md"), "# Usage\n").unwrap();
    let mut s = spawn_in(&root, 30, 100);
    ok(s.send(b"look at @usa"));
    wait_text(&mut s, "docs/usage.md");
    ok(s.send(b"\t"));
    ok(s.wait_for("the path in the editor", WAIT, |m| {
        m.screen_text().contains("look at @docs/usage.md ")
    }));
    ok(s.send(b"please\r"));
    wait_text(&mut s, "Exported soon.");
    assert_eq!(
        request_user_texts(&srv, 0)[0],
        "look at @docs/usage.md please"
    );
    ok(s.settle(Duration::from_millis(300)));
    let out = root.path("tmp/out.jsonl");
    type_line(&mut s, &format!("/export {}", out.display()));
    wait_text(&mut s, "Session exported to:");
    let exported_text = std::fs::read_to_string(&out).unwrap();
    // Importing asks first; No leaves everything as it was.
    type_line(&mut s, &format!("/import {}", out.display()));
    wait_text(&mut s, "Replace current session with");
    ok(s.send(b"\x1b[B\r"));
    wait_text(&mut s, "Import cancelled");
    // Yes copies the file beside the sessions and resumes the copy.
    type_line(&mut s, &format!("/import {}", out.display()));
    wait_text(&mut s, "Replace current session with");
    ok(s.wait_for("Yes selected", WAIT, |m| selected(m, "Yes")));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Session imported from:");
    assert_eq!(root.session_files().len(), 2);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), exported_text);
    quit(&mut s);
    let exported = file_records(&out);
    assert_eq!(exported[0]["type"], "session");
    assert_eq!(exported.len(), file_records(&root.session_files()[0]).len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_moves_the_leaf_to_an_earlier_message_and_the_next_prompt_branches_there() {
    let _slot = slot();
    let srv = server(vec![
        anthropic_text("First answer."),
        anthropic_text("Second answer."),
        anthropic_text("Branched answer."),
    ])
    .await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = spawn_in(&root, 30, 100);
    ask(&mut s, "first question", "First answer.");
    ask(&mut s, "second question", "Second answer.");
    type_line(&mut s, "/tree");
    wait_text(&mut s, "Session tree");
    ok(s.wait_for("the leaf selected", WAIT, |m| {
        selected(m, "assistant: Second answer.")
    }));
    for _ in 0..3 {
        ok(s.send(b"\x1b[A"));
    }
    ok(s.wait_for("the first question selected", WAIT, |m| {
        selected(m, "user: first question")
    }));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Summarize branch?");
    ok(s.send(b"\r"));
    wait_text(&mut s, "Navigated to selected point");
    // The message is back in the editor; the next prompt continues from before it.
    ok(s.send(b" again\r"));
    wait_text(&mut s, "Branched answer.");
    assert_eq!(request_user_texts(&srv, 2), ["first question again"]);
    ok(s.settle(Duration::from_millis(300)));
    // Esc twice on the empty editor opens the tree (pi's default `doubleEscapeAction`).
    ok(s.send(b"\x1b"));
    pump_for(&mut s, Duration::from_millis(150));
    ok(s.send(b"\x1b"));
    wait_text(&mut s, "Session tree");
    ok(s.wait_for("the new leaf selected", WAIT, |m| {
        selected(m, "assistant: Branched answer.")
    }));
    ok(s.send(b"\x1b"));
    ok(s.wait_for("the tree closed", WAIT, |m| {
        !m.screen_text().contains("Session tree")
    }));
    quit(&mut s);
    let files = root.session_files();
    assert_eq!(files.len(), 1);
    let messages = records_of_type(&files[0], "message");
    let first = messages
        .iter()
        .find(|r| r["message"]["content"][0]["text"] == "first question")
        .unwrap();
    let again = messages
        .iter()
        .find(|r| r["message"]["content"][0]["text"] == "first question again")
        .unwrap();
    // A sibling of the first question: same parent.
    assert_eq!(again["parentId"], first["parentId"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_rows_cycle_their_values_and_are_written_to_settings_json() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = spawn_in(&root, 30, 100);
    type_line(&mut s, "/settings");
    wait_text(&mut s, "Auto-compact");
    // Typing filters the rows: Steering mode, one-at-a-time → all.
    ok(s.send(b"steer"));
    ok(s.wait_for("steering selected", WAIT, |m| {
        selected(m, "Steering mode") && !m.screen_text().contains("Auto-compact")
    }));
    ok(s.send(b"\r"));
    ok(s.wait_for("the new value", WAIT, |m| selected(m, "all")));
    // Quiet startup, with Space.
    ok(s.send(b"\x7f\x7f\x7f\x7f\x7fquiet"));
    ok(s.wait_for("quiet selected", WAIT, |m| selected(m, "Quiet startup")));
    ok(s.send(b" "));
    ok(s.wait_for("quiet on", WAIT, |m| selected(m, "true")));
    // A value shown as pi's label is written as the value it stands for.
    ok(s.send(b"\x7f\x7f\x7f\x7f\x7fidle"));
    ok(s.wait_for("idle selected", WAIT, |m| selected(m, "HTTP idle timeout")));
    ok(s.send(b"\r"));
    ok(s.wait_for("disabled", WAIT, |m| selected(m, "disabled")));
    ok(s.send(b"\x1b"));
    ok(s.wait_for("the editor back", WAIT, |m| {
        !m.screen_text().contains("Enter/Space to change")
    }));
    // /trust saves a decision for the next runs.
    type_line(&mut s, "/trust");
    wait_text(&mut s, "Project trust");
    ok(s.send(b"\x1b[A"));
    ok(s.wait_for("Do not trust selected", WAIT, |m| {
        selected(m, "Do not trust")
    }));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Saved trust decision: untrusted.");
    let trust = std::fs::read_to_string(root.path("agent/trust.json")).unwrap();
    assert!(trust.contains("false"), "{trust}");
    quit(&mut s);
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(root.path("agent/settings.json")).unwrap())
            .unwrap();
    assert_eq!(written["steeringMode"], "all", "{written}");
    assert_eq!(written["quietStartup"], true, "{written}");
    assert_eq!(written["httpIdleTimeoutMs"], 0, "{written}");
    // The rest of the file is kept.
    assert_eq!(written["retry"]["enabled"], false, "{written}");
    // The next start is quiet: no header.
    let mut s = spawn_in(&root, 30, 100);
    assert!(!s.model().screen_text().contains("pi v"));
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_flag_starts_with_the_session_picker() {
    let _slot = slot();
    let srv = server(vec![
        anthropic_text("Stored reply."),
        anthropic_text("Later reply."),
    ])
    .await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = spawn_in(&root, 30, 100);
    ask(&mut s, "stored topic", "Stored reply.");
    quit(&mut s);
    let dir = root.sessions();
    let picker = |root: &Root| {
        let mut s = root.spawn_replay(&["--session-dir", &dir, "-r"], 30, 100);
        wait_text(&mut s, "Resume Session (Current Folder)");
        ok(s.wait_for("the stored session", WAIT, |m| selected(m, "stored topic")));
        s
    };
    let mut s = picker(&root);
    ok(s.send(b"\r"));
    wait_text(&mut s, "Resumed session");
    wait_text(&mut s, "Stored reply.");
    ask(&mut s, "and later", "Later reply.");
    assert_eq!(request_user_texts(&srv, 1), ["stored topic", "and later"]);
    quit(&mut s);
    assert_eq!(root.session_files().len(), 1);
    // Esc quits without a session, as pi does.
    let mut s = picker(&root);
    ok(s.send(b"\x1b"));
    assert_eq!(ok(s.wait_exit(WAIT)), 0);
    let all = s.model().all_lines().join("\n");
    assert!(all.contains("No session selected"), "{all}");
    assert!(!all.contains("To resume this session"), "{all}");
    assert_eq!(root.session_files().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_confirm_is_answered_in_the_terminal() {
    use crate::support::anthropic_sse::anthropic_tools;
    let _slot = slot();
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(std::env::var_os("CI").is_none(), "python3 is missing in CI");
        eprintln!("skipped: no python3 for the example extension");
        return;
    }
    let srv = server(vec![
        anthropic_tools(&[("toolu_1", "bash", json!({"command": "rm -rf junk"}))]),
        anthropic_text("Stopped as asked."),
        anthropic_tools(&[("toolu_2", "bash", json!({"command": "rm -rf junk"}))]),
        anthropic_text("Removed it."),
    ])
    .await;
    let root = Root::new(&srv.base_url(), json!({}));
    std::fs::create_dir_all(root.path("work/junk")).unwrap();
    let guard = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/extensions/python/guard.json");
    let dir = root.sessions();
    let guard = guard.display().to_string();
    let mut s = root.spawn_replay(&["--session-dir", &dir, "-e", &guard], 30, 100);
    wait_ready(&mut s);
    // The extension's command is in the / menu.
    ok(s.send(b"/hel"));
    wait_text(&mut s, "Say hello in the session");
    ok(s.send(b"\x1b"));
    ok(s.wait_for("the menu closed", WAIT, |m| {
        !m.screen_text().contains("Say hello in the session")
    }));
    ok(s.send(b"\x03"));
    // No: the tool is blocked with the extension's reason.
    type_line(&mut s, "clean up");
    wait_text(&mut s, "Allow `rm -rf junk`?");
    ok(s.send(b"\x1b[B"));
    ok(s.wait_for("No selected", WAIT, |m| selected(m, "No")));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Stopped as asked.");
    assert!(root.path("work/junk").exists());
    ok(s.settle(Duration::from_millis(300)));
    // Yes: it runs.
    type_line(&mut s, "really clean up");
    wait_text(&mut s, "Allow `rm -rf junk`?");
    ok(s.wait_for("Yes selected", WAIT, |m| selected(m, "Yes")));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Removed it.");
    assert!(!root.path("work/junk").exists());
    quit(&mut s);
    let results: Vec<String> = records_of_type(&root.session_files()[0], "message")
        .iter()
        .filter(|r| r["message"]["role"] == "toolResult")
        .map(|r| {
            r["message"]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].contains("Blocked by user"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scoped_models_choose_what_ctrl_p_cycles_and_ctrl_s_saves_them() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    // 100 columns: the key hint line is longer, and wraps so that `(unsaved)` stays visible.
    let mut s = spawn_in(&root, 34, 100);
    type_line(&mut s, "/scoped-models");
    wait_text(&mut s, "Model Configuration");
    wait_text(&mut s, "all enabled");
    // Ctrl+X clears every model, then two are enabled back through the search, in order.
    ok(s.send(b"\x18"));
    wait_text(&mut s, "0/4 enabled");
    for name in ["openai", "anthropic"] {
        ok(s.send(name.as_bytes()));
        ok(s.wait_for("the filtered row", WAIT, |m| {
            selected(m, &format!("[replay-{name}]"))
        }));
        ok(s.send(b"\r"));
        ok(s.send(&b"\x7f".repeat(name.len())));
    }
    wait_text(&mut s, "2/4 enabled");
    wait_text(&mut s, "(unsaved)");
    ok(s.send(b"\x13"));
    wait_text(&mut s, "Model selection saved to settings");
    ok(s.send(b"\x1b"));
    ok(s.wait_for("the editor back", WAIT, |m| {
        !m.screen_text().contains("Model Configuration")
    }));
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(root.path("agent/settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        written["enabledModels"],
        json!([
            "replay-openai/replay-model",
            "replay-anthropic/replay-model"
        ]),
        "{written}"
    );
    // Ctrl+P now cycles between the two only.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let before = footer(s.model());
        ok(s.send(b"\x10"));
        ok(s.wait_for("the footer changed", WAIT, |m| footer(m) != before));
        let f = footer(s.model());
        let provider = ["anthropic", "openai", "google", "responses"]
            .into_iter()
            .find(|p| f.contains(&format!("(replay-{p})")))
            .unwrap_or("?");
        seen.push(provider);
    }
    assert_eq!(seen, ["openai", "anthropic", "openai"]);
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changelog_shows_pi_rs_own_changelog() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = spawn_in(&root, 40, 100);
    type_line(&mut s, "/changelog");
    wait_text(&mut s, "What's New");
    // The first entry of crates/pi-coding-agent/CHANGELOG.md, rendered as markdown.
    wait_text(
        &mut s,
        "The first version: the TypeScript pi 0.85.0 re-implemented in Rust",
    );
    assert!(!s.model().screen_text().contains("not available in pi-rs"));
    assert!(srv.requests().is_empty(), "nothing reached the model");
    quit(&mut s);
}

/// Esc closes the `/` menu showing `text`; Ctrl+U clears the line (Ctrl+C twice within
/// half a second would exit).
fn close_menu(s: &mut PtySession, text: &str) {
    ok(s.send(b"\x1b"));
    ok(s.wait_for("the menu closed", WAIT, |m| !m.screen_text().contains(text)));
    ok(s.send(b"\x15"));
}

/// A fake `gh` in `root/bin` running `script` (sh), and the `PATH` that finds it first.
fn fake_gh(root: &Root, script: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = root.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gh = bin.join("gh");
    std::fs::write(&gh, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:/usr/bin:/bin", bin.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_uploads_the_viewer_as_a_secret_gist_with_pi_gh_messages() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let args = ["--provider", "replay-anthropic", "--model", "replay-model"];
    // No gh at all.
    let empty = root.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let mut s = root.spawn_with_path(&args, &empty.display().to_string(), 30, 120);
    wait_ready(&mut s);
    type_line(&mut s, "/share");
    wait_text(
        &mut s,
        "Error: GitHub CLI (gh) is not installed. Install it from https://cli.github.com/",
    );
    quit(&mut s);
    // gh, not logged in.
    let path = fake_gh(&root, "[ \"$1\" = auth ] && exit 1\nexit 0");
    let mut s = root.spawn_with_path(&args, &path, 30, 120);
    wait_ready(&mut s);
    type_line(&mut s, "/share");
    wait_text(
        &mut s,
        "Error: GitHub CLI is not logged in. Run 'gh auth login' first.",
    );
    quit(&mut s);
    // Logged in: the page is handed to `gh gist create --public=false <file>`.
    let seen = root.path("uploaded.html");
    let args_seen = root.path("gh-args");
    let path = fake_gh(
        &root,
        &format!(
            "[ \"$1\" = auth ] && exit 0\necho \"$@\" > '{}'\ncp \"$4\" '{}'\necho https://gist.github.com/tester/abc123",
            args_seen.display(),
            seen.display()
        ),
    );
    let mut s = root.spawn_with_path(&args, &path, 30, 120);
    wait_ready(&mut s);
    type_line(&mut s, "/share");
    wait_text(&mut s, "Share URL: https://pi.dev/session/#abc123");
    wait_text(&mut s, "Gist: https://gist.github.com/tester/abc123");
    quit(&mut s);
    let gh_args = std::fs::read_to_string(&args_seen).unwrap();
    assert!(
        gh_args.starts_with("gist create --public=false ")
            && gh_args.trim_end().ends_with("/session.html"),
        "{gh_args}"
    );
    let page = std::fs::read_to_string(&seen).unwrap();
    assert!(
        page.contains("id=\"pi-session-data\""),
        "the viewer was uploaded"
    );
    // gh failing: its stderr is the message; Esc while it runs cancels and kills it.
    let pid_file = root.path("gh.pid");
    let path = fake_gh(
        &root,
        &format!(
            "[ \"$1\" = auth ] && exit 0\necho $$ > '{}'\nexec sleep 30",
            pid_file.display()
        ),
    );
    let mut s = root.spawn_with_path(&args, &path, 30, 120);
    wait_ready(&mut s);
    type_line(&mut s, "/share");
    wait_text(&mut s, "Creating gist...");
    ok(s.wait_for("gh running", WAIT, |_| pid_file.exists()));
    ok(s.send(b"\x1b"));
    wait_text(&mut s, "Share cancelled");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let gone = (0..100).any(|_| {
        // SAFETY: signal 0 only checks that the process exists.
        let alive = unsafe { libc::kill(pid, 0) } == 0
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "));
        if alive {
            std::thread::sleep(Duration::from_millis(50));
        }
        !alive
    });
    assert!(gone, "gh was killed");
    quit(&mut s);
    let path = fake_gh(
        &root,
        "[ \"$1\" = auth ] && exit 0\necho 'HTTP 422: quota' >&2\nexit 1",
    );
    let mut s = root.spawn_with_path(&args, &path, 30, 120);
    wait_ready(&mut s);
    type_line(&mut s, "/share");
    wait_text(&mut s, "Error: Failed to create gist: HTTP 422: quota");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_restarts_extensions_and_reads_prompts_and_keybindings_again() {
    let _slot = slot();
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(std::env::var_os("CI").is_none(), "python3 is missing in CI");
        eprintln!("skipped: no python3 for the extension");
        return;
    }
    let srv = server(vec![anthropic_text("Still the same session.")]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    // An extension whose command description is read from a file when it starts, and that
    // logs its session events with its pid.
    let lib =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/extensions/python");
    let log = root.path("events.log");
    let desc = root.path("desc.txt");
    std::fs::write(&desc, "First description").unwrap();
    let script = root.path("reloadable.py");
    std::fs::write(
        &script,
        format!(
            r#"import os, sys
sys.path.insert(0, {lib:?})
from pi_extension import Extension
ext = Extension()
def log(line):
    with open({log:?}, "a") as f:
        f.write("%s %d\n" % (line, os.getpid()))
@ext.on("session_start")
def start(event, ctx):
    log("start:" + event.get("reason", "?"))
@ext.on("session_shutdown")
def stop(event, ctx):
    log("shutdown:" + event.get("reason", "?"))
@ext.command("reloadable", open({desc:?}).read())
def run(args, ctx):
    return None
ext.run()
"#,
            lib = lib.display().to_string(),
            log = log.display().to_string(),
            desc = desc.display().to_string(),
        ),
    )
    .unwrap();
    let manifest = root.path("reloadable.json");
    std::fs::write(
        &manifest,
        json!({"command": "python3", "args": [script.display().to_string()]}).to_string(),
    )
    .unwrap();
    let dir = root.sessions();
    let manifest = manifest.display().to_string();
    let mut s = root.spawn_replay(&["--session-dir", &dir, "-e", &manifest], 30, 110);
    wait_ready(&mut s);
    ask(&mut s, "hello", "Still the same session.");
    ok(s.send(b"/reloada"));
    wait_text(&mut s, "First description");
    close_menu(&mut s, "First description");
    // Changed on disk while pi runs: the extension's source, a new prompt template, and
    // Ctrl+T rebound to Ctrl+Y.
    std::fs::write(&desc, "Second description").unwrap();
    std::fs::create_dir_all(root.path("agent/prompts")).unwrap();
    std::fs::write(
        root.path("agent/prompts/fresh-template.md"),
        "---\ndescription: Added after the start\n---\nDo it.\n",
    )
    .unwrap();
    std::fs::write(
        root.path("agent/keybindings.json"),
        json!({"app.thinking.toggle": "ctrl+y"}).to_string(),
    )
    .unwrap();
    ok(s.send(b"/reload"));
    wait_text(&mut s, "Reload keybindings");
    ok(s.send(b"\x1b"));
    ok(s.wait_for("the menu closed", WAIT, |m| {
        !m.screen_text().contains("Reload keybindings")
    }));
    ok(s.send(b"\r"));
    wait_text(
        &mut s,
        "Reloaded keybindings, extensions, skills, prompts, themes, and context files",
    );
    // The history is drawn again from the same session.
    wait_text(&mut s, "Still the same session.");
    ok(s.send(b"/reloada"));
    wait_text(&mut s, "Second description");
    close_menu(&mut s, "Second description");
    ok(s.send(b"/fresh-t"));
    wait_text(&mut s, "Added after the start");
    close_menu(&mut s, "Added after the start");
    type_line(&mut s, "/hotkeys");
    ok(s.wait_for("the new binding", WAIT, |m| {
        m.screen_lines()
            .iter()
            .any(|l| l.contains("ctrl+y") && l.contains("thinking blocks"))
    }));
    quit(&mut s);
    let events = std::fs::read_to_string(&log).unwrap();
    let events: Vec<(&str, &str)> = events.lines().filter_map(|l| l.split_once(' ')).collect();
    let kinds: Vec<&str> = events.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        kinds,
        [
            "start:startup",
            "shutdown:reload",
            "start:reload",
            "shutdown:quit"
        ],
        "{events:?}"
    );
    assert_eq!(
        events[0].1, events[1].1,
        "the first process ends at the reload"
    );
    assert_ne!(events[1].1, events[2].1, "a new process starts");
    // One session file, and the reload wrote nothing into it.
    let files = root.session_files();
    assert_eq!(files.len(), 1);
    let records = file_records(&files[0]);
    assert_eq!(
        records.iter().filter(|r| r["type"] == "message").count(),
        2,
        "{records:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_saves_an_api_key_that_is_used_and_logout_removes_it() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let (path, opened) = fake_browser(&root);
    let dir = root.sessions();
    let args = [
        "--provider",
        "replay-anthropic",
        "--model",
        "replay-model",
        "--session-dir",
        &dir,
    ];
    let mut s = root.spawn_with_path(&args, &path, 34, 120);
    wait_ready(&mut s);
    type_line(&mut s, "/login");
    wait_text(&mut s, "Select authentication method:");
    ok(s.send(b"\x1b[B"));
    ok(s.wait_for("API key selected", WAIT, |m| {
        selected(m, "Sign in with an API key")
    }));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Select provider to configure:");
    ok(s.send(b"OpenAI"));
    ok(s.wait_for("OpenAI selected", WAIT, |m| {
        selected(m, " OpenAI • unconfigured")
    }));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Enter OpenAI API key");
    ok(s.send(b"sk-test-123"));
    wait_text(&mut s, "•••••••••••");
    assert!(
        !s.model().screen_text().contains("sk-test-123"),
        "the key is masked"
    );
    ok(s.send(b"\r"));
    let auth_path = root.path("agent/auth.json");
    wait_text(
        &mut s,
        &format!(
            "Saved API key for OpenAI. Credentials saved to {}",
            auth_path.display()
        ),
    );
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(&auth_path).unwrap()).unwrap();
    assert_eq!(
        auth["openai"],
        json!({"type": "api_key", "key": "sk-test-123"})
    );
    // The saved key makes OpenAI's models available at once.
    ok(s.send(b"/model openai/gpt-4o-mini"));
    ok(s.wait_for("the argument menu", WAIT, |m| {
        m.screen_lines()
            .iter()
            .any(|l| l.contains("gpt-4o-mini") && l.contains("openai") && !l.contains("/model"))
    }));
    ok(s.send(b"\r"));
    ok(s.wait_for("the argument menu closed", WAIT, |m| {
        !m.screen_text().contains("gpt-4.1-mini")
    }));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Model: gpt-4o-mini");
    // A provider with a subscription login asks how; OpenRouter's listens on a port of its
    // own and offers the paste beside it; Esc cancels.
    type_line(&mut s, "/login openrouter");
    wait_text(&mut s, "Select authentication method for OpenRouter:");
    ok(s.send(b"\r"));
    wait_text(
        &mut s,
        "Listening for OpenRouter OAuth callback on http://127.0.0.1:",
    );
    ok(s.wait_for("the browser opened", WAIT, |_| opened.exists()));
    let url = std::fs::read_to_string(&opened).unwrap();
    assert!(
        url.starts_with("https://openrouter.ai/auth?callback_url=http%3A%2F%2F127.0.0.1%3A"),
        "{url}"
    );
    wait_text(
        &mut s,
        "Complete sign-in in your browser, or paste the authorization code / redirect URL here:",
    );
    pump_for(&mut s, Duration::from_millis(200));
    ok(s.send(b"\x1b"));
    wait_text(&mut s, "Login cancelled");
    // /logout lists the stored credential and removes it.
    type_line(&mut s, "/logout");
    wait_text(&mut s, "Select provider to logout:");
    ok(s.wait_for("OpenAI listed", WAIT, |m| selected(m, "OpenAI")));
    ok(s.send(b"\r"));
    wait_text(
        &mut s,
        "Removed stored API key for OpenAI. Environment variables and models.json config are unchanged.",
    );
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(&auth_path).unwrap()).unwrap();
    assert!(auth.get("openai").is_none(), "{auth}");
    type_line(&mut s, "/logout");
    wait_text(&mut s, "No stored credentials to remove.");
    quit(&mut s);
}

/// A fake `xdg-open` that writes down the URL it was asked to open (no real browser starts);
/// the `PATH` with it first, and the file the URL goes to.
fn fake_browser(root: &Root) -> (String, std::path::PathBuf) {
    let opened = root.path("opened-url");
    let bin = root.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        let f = bin.join("xdg-open");
        std::fs::write(
            &f,
            format!("#!/bin/sh\necho \"$1\" > '{}'\n", opened.display()),
        )
        .unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (format!("{}:/usr/bin:/bin", bin.display()), opened)
}

/// A GET of `path_and_query` on 127.0.0.1:`port` (the browser following the redirect); the
/// status line.
fn browser_get(port: u16, path_and_query: &str) -> String {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        c,
        "GET {path_and_query} HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    let _ = c.read_to_string(&mut reply);
    reply.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_with_an_account_runs_the_browser_login_and_stores_the_entry() {
    let _slot = slot();
    // The fake authorization server's token reply, and the replay model's server.
    let auth_srv = server(vec![pi_ai::testkit::Reply::json(
        200,
        &json!({"access_token": "sk-ant-oat01-new", "refresh_token": "sk-ant-ort01-new", "expires_in": 28800}),
    )])
    .await;
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let (path, opened) = fake_browser(&root);
    let args = ["--provider", "replay-anthropic", "--model", "replay-model"];
    let env = [("PI_RS_TEST_OAUTH_ORIGIN", auth_srv.base_url())];
    let mut s = root.spawn_with_env(&args, &path, &env, 34, 200);
    wait_ready(&mut s);
    type_line(&mut s, "/login anthropic");
    wait_text(&mut s, "Select authentication method for Anthropic:");
    ok(s.wait_for("account selected", WAIT, |m| {
        selected(m, "Sign in with an account")
    }));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Waiting for authentication...");
    ok(s.wait_for("the browser opened", WAIT, |_| opened.exists()));
    let url = std::fs::read_to_string(&opened).unwrap();
    assert!(
        url.starts_with("https://claude.ai/oauth/authorize?"),
        "{url}"
    );
    let state = url
        .trim()
        .split(['?', '&'])
        .find_map(|kv| kv.strip_prefix("state="))
        .unwrap()
        .to_owned();
    let status = tokio::task::spawn_blocking(move || {
        browser_get(53692, &format!("/callback?code=the-code&state={state}"))
    })
    .await
    .unwrap();
    assert!(status.contains("200"), "{status}");
    let auth_path = root.path("agent/auth.json");
    wait_text(
        &mut s,
        &format!(
            "Logged in to Anthropic. Credentials saved to {}",
            auth_path.display()
        ),
    );
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(&auth_path).unwrap()).unwrap();
    assert_eq!(auth["anthropic"]["type"], "oauth", "{auth}");
    assert_eq!(auth["anthropic"]["access"], "sk-ant-oat01-new");
    assert_eq!(auth["anthropic"]["refresh"], "sk-ant-ort01-new");
    let body = auth_srv.requests()[0].body_json().unwrap();
    assert_eq!(body["code"], "the-code");
    // Esc cancels a login nobody completes; the port is free again for the next one.
    type_line(&mut s, "/login anthropic");
    wait_text(&mut s, "Select authentication method for Anthropic:");
    ok(s.send(b"\r"));
    ok(s.wait_for("waiting again", WAIT, |m| {
        m.screen_text()
            .matches("Waiting for authentication...")
            .count()
            >= 1
            && m.screen_text().contains("Logged in to Anthropic")
    }));
    pump_for(&mut s, Duration::from_millis(200));
    ok(s.send(b"\x1b"));
    wait_text(&mut s, "Login cancelled");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_to_github_copilot_with_a_device_code_polls_and_stores_pis_entry() {
    let _slot = slot();
    let expires_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 1800;
    let token = "tid=1;exp=9;proxy-ep=proxy.individual.githubcopilot.com";
    // The fake GitHub: the device code, two polls that say wait (one of them slow down), the
    // GitHub token, the Copilot token, the model list, and the policy that enables a model.
    let auth_srv = server(vec![
        pi_ai::testkit::Reply::json(
            200,
            &json!({"device_code": "dev-1", "user_code": "ABCD-1234", "verification_uri": "https://github.com/login/device", "interval": 1, "expires_in": 900}),
        ),
        pi_ai::testkit::Reply::json(200, &json!({"error": "authorization_pending"})),
        pi_ai::testkit::Reply::json(200, &json!({"error": "slow_down", "interval": 1})),
        pi_ai::testkit::Reply::json(200, &json!({"access_token": "ghu_device", "token_type": "bearer"})),
        pi_ai::testkit::Reply::json(200, &json!({"token": token, "expires_at": expires_at})),
        pi_ai::testkit::Reply::json(
            200,
            &json!({"data": [
                {"id": "gpt-4o", "model_picker_enabled": true, "policy": {"state": "enabled"}},
                {"id": "claude-sonnet-4.6", "model_picker_enabled": true, "policy": {"state": "unconfigured"}},
                {"id": "no-tools", "model_picker_enabled": true, "capabilities": {"supports": {"tool_calls": false}}}
            ]}),
        ),
        pi_ai::testkit::Reply::json(200, &json!({})),
    ])
    .await;
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let args = ["--provider", "replay-anthropic", "--model", "replay-model"];
    let env = [("PI_RS_TEST_OAUTH_ORIGIN", auth_srv.base_url())];
    let mut s = root.spawn_with_env(&args, "/usr/bin:/bin", &env, 34, 160);
    wait_ready(&mut s);
    type_line(&mut s, "/login github-copilot");
    wait_text(&mut s, "Select authentication method for GitHub Copilot:");
    ok(s.send(b"\r"));
    wait_text(
        &mut s,
        "GitHub Enterprise URL/domain (blank for github.com)",
    );
    wait_text(&mut s, "e.g., company.ghe.com");
    // A domain that is not one is refused with pi's text.
    ok(s.send(b"http://"));
    ok(s.send(b"\r"));
    wait_text(
        &mut s,
        "Failed to login to GitHub Copilot: Invalid GitHub Enterprise URL/domain",
    );
    type_line(&mut s, "/login github-copilot");
    wait_text(&mut s, "Select authentication method for GitHub Copilot:");
    ok(s.send(b"\r"));
    ok(s.wait_for("the domain question again", WAIT, |m| {
        m.screen_text()
            .matches("GitHub Enterprise URL/domain")
            .count()
            >= 1
            && m.screen_text().contains("Invalid GitHub Enterprise")
            && m.screen_text().contains("e.g., company.ghe.com")
    }));
    ok(s.send(b"\r"));
    wait_text(&mut s, "https://github.com/login/device");
    wait_text(&mut s, "Enter code: ABCD-1234");
    let auth_path = root.path("agent/auth.json");
    ok(s.wait_for("the login's end", Duration::from_secs(30), |m| {
        m.screen_text().contains("Logged in to GitHub Copilot")
    }));
    let text = std::fs::read_to_string(&auth_path).unwrap();
    let auth: Value = serde_json::from_str(&text).unwrap();
    let entry = auth["github-copilot"].as_object().unwrap();
    let keys: Vec<&str> = entry.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["type", "refresh", "access", "expires", "availableModelIds"],
        "pi's key order: {text}"
    );
    assert_eq!(entry["refresh"], "ghu_device");
    assert_eq!(entry["access"], token);
    assert_eq!(
        entry["expires"].as_u64().unwrap(),
        expires_at * 1000 - 5 * 60 * 1000
    );
    assert_eq!(
        entry["availableModelIds"],
        json!(["gpt-4o", "claude-sonnet-4.6"])
    );
    let reqs = auth_srv.requests();
    let paths: Vec<(&str, &str)> = reqs
        .iter()
        .map(|r| (r.method.as_str(), r.path.as_str()))
        .collect();
    assert_eq!(
        paths,
        [
            ("POST", "/login/device/code"),
            ("POST", "/login/oauth/access_token"),
            ("POST", "/login/oauth/access_token"),
            ("POST", "/login/oauth/access_token"),
            ("GET", "/copilot_internal/v2/token"),
            ("GET", "/models"),
            ("POST", "/models/claude-sonnet-4.6/policy"),
        ]
    );
    let body = |i: usize| String::from_utf8_lossy(&reqs[i].body).into_owned();
    assert_eq!(body(0), "client_id=Iv1.b507a08c87ecfe98&scope=read%3Auser");
    assert_eq!(
        body(1),
        "client_id=Iv1.b507a08c87ecfe98&device_code=dev-1&grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code"
    );
    assert_eq!(reqs[4].header("authorization"), Some("Bearer ghu_device"));
    assert_eq!(body(6), r#"{"state":"enabled"}"#);
    // Polls at least a second apart: the device code's interval.
    assert!(
        !s.model().screen_text().contains("ghu_device"),
        "no token on screen"
    );
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_code_completes_a_browser_login_and_esc_on_a_device_login_cancels_it() {
    let _slot = slot();
    let auth_srv = server(vec![
        pi_ai::testkit::Reply::json(
            200,
            &json!({"access_token": "sk-ant-oat01-pasted", "refresh_token": "sk-ant-ort01-pasted", "expires_in": 28800}),
        ),
        pi_ai::testkit::Reply::json(
            200,
            &json!({"device_code": "d", "user_code": "XAI-CODE", "verification_uri": "https://accounts.x.ai/device", "verification_uri_complete": "https://accounts.x.ai/device?code=XAI-CODE", "interval": 5, "expires_in": 600}),
        ),
    ])
    .await;
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let (path, opened) = fake_browser(&root);
    let args = ["--provider", "replay-anthropic", "--model", "replay-model"];
    // A callback host nothing can bind (TEST-NET-1): the callback server is gone, the paste
    // is the way in, and no fixed port is taken by this test.
    let env = [
        ("PI_RS_TEST_OAUTH_ORIGIN", auth_srv.base_url()),
        ("PI_OAUTH_CALLBACK_HOST", "192.0.2.1".to_owned()),
    ];
    let mut s = root.spawn_with_env(&args, &path, &env, 34, 160);
    wait_ready(&mut s);
    type_line(&mut s, "/login anthropic");
    wait_text(&mut s, "Select authentication method for Anthropic:");
    ok(s.send(b"\r"));
    wait_text(
        &mut s,
        "Complete login in your browser, or paste the authorization code / redirect URL here:",
    );
    ok(s.wait_for("the browser opened", WAIT, |_| opened.exists()));
    let url = std::fs::read_to_string(&opened).unwrap();
    let state = url
        .trim()
        .split(['?', '&'])
        .find_map(|kv| kv.strip_prefix("state="))
        .unwrap()
        .to_owned();
    // The browser is on another machine: its page shows `code#state`, pasted here.
    ok(s.send(format!("\x1b[200~pasted-code#{state}\x1b[201~").as_bytes()));
    pump_for(&mut s, Duration::from_millis(200));
    ok(s.send(b"\r"));
    let auth_path = root.path("agent/auth.json");
    wait_text(&mut s, "Logged in to Anthropic. Credentials saved to");
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(&auth_path).unwrap()).unwrap();
    assert_eq!(auth["anthropic"]["access"], "sk-ant-oat01-pasted");
    let body = auth_srv.requests()[0].body_json().unwrap();
    assert_eq!(body["code"], "pasted-code");
    assert_eq!(body["state"], state.as_str());
    // xAI signs in with a device code; Esc while it waits cancels it, and nothing is stored.
    type_line(&mut s, "/login xai");
    wait_text(&mut s, "Select authentication method for xAI:");
    ok(s.send(b"\r"));
    wait_text(&mut s, "https://accounts.x.ai/device?code=XAI-CODE");
    wait_text(&mut s, "Enter code: XAI-CODE");
    pump_for(&mut s, Duration::from_millis(300));
    ok(s.send(b"\x1b"));
    wait_text(&mut s, "Login cancelled");
    let auth: Value = serde_json::from_str(&std::fs::read_to_string(&auth_path).unwrap()).unwrap();
    assert!(auth.get("xai").is_none(), "{auth}");
    assert_eq!(auth_srv.requests().len(), 2, "no poll after the cancel");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_asks_for_the_method_and_signs_in_with_a_device_code() {
    let _slot = slot();
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let access = format!(
        "h.{}.s",
        b64.encode(
            json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-dev"}}).to_string()
        )
    );
    let auth_srv = server(vec![
        pi_ai::testkit::Reply::json(
            200,
            &json!({"device_auth_id": "da-1", "user_code": "CODX-42", "interval": "1"}),
        ),
        pi_ai::testkit::Reply::json(
            403,
            &json!({"error": {"code": "deviceauth_authorization_pending"}}),
        ),
        pi_ai::testkit::Reply::json(
            200,
            &json!({"authorization_code": "ac-1", "code_verifier": "cv-1", "code_challenge": "x"}),
        ),
        pi_ai::testkit::Reply::json(
            200,
            &json!({"access_token": access, "refresh_token": "rt-dev", "expires_in": 864000}),
        ),
    ])
    .await;
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let args = ["--provider", "replay-anthropic", "--model", "replay-model"];
    let env = [("PI_RS_TEST_OAUTH_ORIGIN", auth_srv.base_url())];
    let mut s = root.spawn_with_env(&args, "/usr/bin:/bin", &env, 34, 160);
    wait_ready(&mut s);
    type_line(&mut s, "/login openai-codex");
    wait_text(&mut s, "Select OpenAI Codex login method:");
    ok(s.wait_for("browser first", WAIT, |m| {
        selected(m, "Browser login (default)")
    }));
    ok(s.send(b"\x1b[B"));
    ok(s.wait_for("device code selected", WAIT, |m| {
        selected(m, "Device code login (headless)")
    }));
    ok(s.send(b"\r"));
    wait_text(&mut s, "https://auth.openai.com/codex/device");
    wait_text(&mut s, "Enter code: CODX-42");
    ok(s.wait_for("the login's end", Duration::from_secs(30), |m| {
        m.screen_text().contains("Logged in to OpenAI Codex")
    }));
    let auth: Value =
        serde_json::from_str(&std::fs::read_to_string(root.path("agent/auth.json")).unwrap())
            .unwrap();
    let entry = auth["openai-codex"].as_object().unwrap();
    let keys: Vec<&str> = entry.keys().map(String::as_str).collect();
    assert_eq!(keys, ["type", "access", "refresh", "expires", "accountId"]);
    assert_eq!(entry["accountId"], "acct-dev");
    let reqs = auth_srv.requests();
    assert_eq!(reqs[0].path, "/api/accounts/deviceauth/usercode");
    assert_eq!(
        reqs[0].body_json().unwrap(),
        json!({"client_id": "app_EMoamEEZ73f0CkXaXp7hrann"})
    );
    assert_eq!(
        reqs[1].body_json().unwrap(),
        json!({"device_auth_id": "da-1", "user_code": "CODX-42"})
    );
    assert_eq!(reqs[3].path, "/oauth/token");
    let body = String::from_utf8_lossy(&reqs[3].body).into_owned();
    assert_eq!(
        body,
        "grant_type=authorization_code&client_id=app_EMoamEEZ73f0CkXaXp7hrann&code=ac-1&code_verifier=cv-1&redirect_uri=https%3A%2F%2Fauth.openai.com%2Fdeviceauth%2Fcallback"
    );
    // Esc on the method question cancels the login.
    type_line(&mut s, "/login openai-codex");
    ok(s.wait_for("the method question again", WAIT, |m| {
        selected(m, "Browser login (default)")
    }));
    pump_for(&mut s, Duration::from_millis(200));
    ok(s.send(b"\x1b"));
    wait_text(&mut s, "Login cancelled");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_selector_switches_scope_renames_and_deletes() {
    let _slot = slot();
    let srv = server(vec![
        anthropic_text("Reply one."),
        anthropic_text("Reply two."),
    ])
    .await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = spawn_in(&root, 34, 140);
    ask(&mut s, "first topic", "Reply one.");
    type_line(&mut s, "/new");
    wait_text(&mut s, "✓ New session started");
    ask(&mut s, "second topic", "Reply two.");
    // Another project's session under the agent directory.
    let other = root.path("agent/sessions/--elsewhere--");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("2026-01-01T00-00-00-000Z_0193e0a0-0000-7000-8000-000000000001.jsonl"),
        concat!(
            "{\"type\":\"session\",\"version\":3,\"id\":\"0193e0a0-0000-7000-8000-000000000001\",",
            "\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/elsewhere\"}\n",
            "{\"type\":\"message\",\"id\":\"a1b2c3d4\",\"parentId\":null,",
            "\"timestamp\":\"2026-01-01T00:00:01.000Z\",",
            "\"message\":{\"role\":\"user\",\"content\":\"other project topic\",\"timestamp\":1}}\n"
        ),
    )
    .unwrap();
    type_line(&mut s, "/resume");
    wait_text(&mut s, "Resume Session (Current Folder)");
    ok(s.wait_for("this folder's sessions", WAIT, |m| {
        let t = m.screen_text();
        t.contains("first topic") && t.contains("second topic")
    }));
    assert!(!s.model().screen_text().contains("other project topic"));
    ok(s.send(b"\t"));
    wait_text(&mut s, "Resume Session (All)");
    ok(s.wait_for("every project's sessions", WAIT, |m| {
        let t = m.screen_text();
        t.contains("other project topic") && t.contains("/elsewhere") && t.contains("first topic")
    }));
    ok(s.send(b"\t"));
    wait_text(&mut s, "Resume Session (Current Folder)");
    // Rename the first session.
    ok(s.send(b"first"));
    ok(s.wait_for("first selected", WAIT, |m| selected(m, "first topic")));
    ok(s.send(b"\x12"));
    wait_text(&mut s, "Rename Session");
    ok(s.send(b"Renamed one\r"));
    wait_text(&mut s, "Resume Session (Current Folder)");
    ok(s.wait_for("the new name", WAIT, |m| {
        m.screen_text().contains("Renamed one")
    }));
    let first_file = root
        .session_files()
        .into_iter()
        .find(|f| {
            records_of_type(f, "session_info")
                .iter()
                .any(|r| r["name"] == "Renamed one")
        })
        .expect("the name is written into the first session's file");
    // The active session cannot be deleted.
    ok(s.send(b"second"));
    ok(s.wait_for("second selected", WAIT, |m| selected(m, "second topic")));
    ok(s.send(b"\x04"));
    wait_text(&mut s, "Cannot delete the currently active session");
    // The other one can, after the question.
    ok(s.send(b"Renamed"));
    ok(s.wait_for("renamed selected", WAIT, |m| selected(m, "Renamed one")));
    ok(s.send(b"\x04"));
    wait_text(&mut s, "Delete session?");
    ok(s.send(b"\r"));
    ok(s.wait_for("deleted", WAIT, |m| {
        let t = m.screen_text();
        t.contains("Session deleted") || t.contains("Session moved to trash")
    }));
    assert!(!first_file.exists());
    // Settled first: a frame half-read can look like a closed selector.
    ok(s.settle(Duration::from_millis(200)));
    ok(s.send(b"\x1b"));
    ok(s.wait_for("the selector closed", WAIT, |m| {
        !m.screen_text().contains("Resume Session")
    }));
    ok(s.settle(Duration::from_millis(200)));
    assert!(!s.model().screen_text().contains("Resume Session"));
    quit(&mut s);
    assert_eq!(root.session_files().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_filters_switch_with_their_keys_and_labels_are_written() {
    let _slot = slot();
    let srv = server(vec![
        anthropic_text("Reply one."),
        anthropic_text("Reply two."),
    ])
    .await;
    let root = Root::new(&srv.base_url(), json!({"treeFilterMode": "no-tools"}));
    let mut s = spawn_in(&root, 34, 120);
    ask(&mut s, "first question", "Reply one.");
    ask(&mut s, "second question", "Reply two.");
    type_line(&mut s, "/tree");
    // The filter from the settings.
    wait_text(&mut s, "Session tree [no-tools]");
    wait_text(&mut s, "assistant: Reply one.");
    // Ctrl+U: user messages only.
    ok(s.send(b"\x15"));
    wait_text(&mut s, "Session tree [user]");
    ok(s.wait_for("only user rows", WAIT, |m| {
        let t = m.screen_text();
        t.contains("user: first question") && !t.contains("assistant: Reply one.")
    }));
    // Label the first question.
    ok(s.send(b"first"));
    ok(s.wait_for("first selected", WAIT, |m| {
        selected(m, "user: first question")
    }));
    ok(s.send(b"L"));
    wait_text(&mut s, "Label (empty to remove):");
    ok(s.send(b"start\r"));
    ok(s.wait_for("the label badge", WAIT, |m| {
        m.screen_lines()
            .iter()
            .any(|l| l.contains("user: first question") && l.contains("[start]"))
    }));
    // Ctrl+L: labelled entries only; Ctrl+A: everything, bookkeeping included.
    ok(s.send(b"\x0c"));
    wait_text(&mut s, "Session tree [labeled]");
    ok(s.wait_for("only the labelled row", WAIT, |m| {
        let t = m.screen_text();
        t.contains("user: first question") && !t.contains("user: second question")
    }));
    ok(s.send(b"\x01"));
    wait_text(&mut s, "Session tree [all]");
    wait_text(&mut s, "[label: start]");
    wait_text(&mut s, "[model: replay-model]");
    // Ctrl+O cycles on from `all` back to the default filter.
    ok(s.send(b"\x0f"));
    ok(s.wait_for("the default filter", WAIT, |m| {
        m.screen_lines()
            .iter()
            .any(|l| l.trim_end() == "Session tree")
    }));
    ok(s.settle(Duration::from_millis(200)));
    ok(s.send(b"\x1b"));
    ok(s.wait_for("the tree closed", WAIT, |m| {
        !m.screen_text().contains("Session tree")
    }));
    ok(s.settle(Duration::from_millis(200)));
    quit(&mut s);
    let file = &root.session_files()[0];
    let first_id = records_of_type(file, "message")
        .iter()
        .find(|r| r["message"]["role"] == "user")
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .unwrap();
    let labels = records_of_type(file, "label");
    assert_eq!(labels.len(), 1, "{labels:?}");
    assert_eq!(labels[0]["targetId"], first_id.as_str());
    assert_eq!(labels[0]["label"], "start");
}
