//! `/settings` rows, themes (discovery, the selector with live preview, hot reload, the CLI
//! flags, broken files) through the real binary in a pty: what the screen shows, which
//! colours reach the terminal and what `settings.json` holds.

use std::time::Duration;

use pi_tui::testkit::{PtySession, ScreenModel};
use serde_json::{Value, json};

use crate::support::binary_rig::slot;
use crate::support::pty_rig::*;

/// The selector's marked row shows `text`.
fn selected(m: &mut ScreenModel, text: &str) -> bool {
    m.screen_lines()
        .iter()
        .any(|l| l.trim_start().starts_with('→') && l.contains(text))
}

/// The text of the marked row.
fn selected_row(m: &mut ScreenModel) -> String {
    m.screen_lines()
        .into_iter()
        .find(|l| l.trim_start().starts_with('→'))
        .unwrap_or_default()
}

fn spawn_in(root: &Root, args: &[&str]) -> PtySession {
    let dir = root.sessions();
    let mut all = vec!["--session-dir", dir.as_str()];
    all.extend_from_slice(args);
    let mut s = root.spawn_replay(&all, 30, 110);
    wait_ready(&mut s);
    s
}

fn settings_json(root: &Root) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root.path("agent/settings.json")).unwrap())
        .unwrap()
}

/// A theme named `name`: the built-in dark one with `accent` replaced.
fn theme_file(name: &str, accent: &str) -> String {
    let mut v: Value = serde_json::from_str(pi_tui::theme::DARK_JSON).unwrap();
    v["name"] = name.into();
    v["colors"]["accent"] = accent.into();
    serde_json::to_string_pretty(&v).unwrap()
}

/// The bytes written since `from` hold this true-colour foreground.
fn painted(m: &mut ScreenModel, from: usize, sgr: &str) -> bool {
    String::from_utf8_lossy(&m.bytes()[from..]).contains(sgr)
}

/// pi's rows, in pi's order, on a terminal without inline images.
const PI_ROWS: &[&str] = &[
    "Auto-compact",
    "Auto-resize images",
    "Block images",
    "Skill commands",
    "Show hardware cursor",
    "Editor padding",
    "Output padding",
    "Autocomplete max items",
    "Clear on shrink",
    "Terminal progress",
    "Steering mode",
    "Follow-up mode",
    "Transport",
    "HTTP idle timeout",
    "Hide thinking",
    "Mermaid diagrams",
    "Cache miss notices",
    "Collapse changelog",
    "Quiet startup",
    "Install telemetry",
    "Default project trust",
    "Double-escape action",
    "Tree filter mode",
    "Warnings",
    "Default thinking level per model",
    "TUI mode",
    "Fullscreen exit output",
    "Fullscreen scrollbar",
    "Fullscreen copy on select",
    "Theme",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_lists_pis_rows_in_pis_order_and_writes_pis_keys() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = spawn_in(&root, &[]);
    type_line(&mut s, "/settings");
    wait_text(&mut s, "Auto-compact");
    // Down through every row: each label comes in pi's order, with pi's description.
    let mut seen = Vec::new();
    for (i, label) in PI_ROWS.iter().enumerate() {
        ok(s.wait_for(label, WAIT, |m| selected(m, label)));
        let row = selected_row(s.model());
        seen.push(row.clone());
        if *label == "Autocomplete max items" {
            wait_text(&mut s, "Max visible items in autocomplete dropdown (3-20)");
        }
        if i + 1 < PI_ROWS.len() {
            ok(s.send(b"\x1b[B"));
        }
    }
    // Down from the last row wraps to the first.
    ok(s.send(b"\x1b[B"));
    ok(s.wait_for("wrapped", WAIT, |m| selected(m, "Auto-compact")));
    // Cycle some rows pi-rs only stores, and a live one.
    let change = |s: &mut PtySession, search: &str, label: &str, value: &str| {
        ok(s.send(&b"\x7f".repeat(30)));
        ok(s.send(search.as_bytes()));
        ok(s.wait_for(label, WAIT, |m| selected(m, label)));
        ok(s.send(b"\r"));
        ok(s.wait_for(value, WAIT, |m| {
            let row = selected_row(m);
            row.contains(label) && row.trim_end().ends_with(value)
        }));
    };
    change(&mut s, "autocomplete", "Autocomplete max items", "7");
    change(&mut s, "outputpad", "Output padding", "0");
    change(&mut s, "terminalprog", "Terminal progress", "true");
    change(&mut s, "mermaid", "Mermaid diagrams", "off");
    change(
        &mut s,
        "exitoutput",
        "Fullscreen exit output",
        "resume-hint",
    );
    // The warnings row opens pi's submenu of one row.
    ok(s.send(&b"\x7f".repeat(30)));
    ok(s.send(b"warnings"));
    ok(s.wait_for("warnings row", WAIT, |m| selected(m, "Warnings")));
    ok(s.send(b"\r"));
    ok(s.wait_for("the submenu", WAIT, |m| {
        selected(m, "Anthropic extra usage")
    }));
    wait_text(
        &mut s,
        "Warn when Anthropic subscription auth may use paid extra usage",
    );
    ok(s.send(b"\r"));
    ok(s.wait_for("off", WAIT, |m| {
        selected_row(m).trim_end().ends_with("false")
    }));
    ok(s.send(b"\x1b"));
    ok(s.wait_for("back in the list", WAIT, |m| selected(m, "Warnings")));
    // The per-model row: the model, then its level, written to modelThinkingLevels.
    ok(s.send(&b"\x7f".repeat(30)));
    ok(s.send(b"permodel"));
    ok(s.wait_for("per-model row", WAIT, |m| {
        selected(m, "Default thinking level per model")
    }));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Select a model to configure");
    ok(s.wait_for("current model first", WAIT, |m| selected(m, "replay-model")));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Thinking Level for replay-model [replay-anthropic]");
    let level = selected_row(s.model())
        .trim_start_matches(['→', ' ', '✓'])
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    ok(s.send(b"\r"));
    // Back to the model step, the override shown; Esc twice returns to the list.
    wait_text(&mut s, "Select a model to configure");
    ok(s.send(b"\x1b"));
    ok(s.wait_for("summary", WAIT, |m| {
        selected(m, "Default thinking level per model")
            && selected_row(m).trim_end().ends_with("1 configured")
    }));
    ok(s.send(b"\x1b"));
    ok(s.wait_for("closed", WAIT, |m| {
        !m.screen_text().contains("Enter/Space to change")
    }));
    quit(&mut s);
    let w = settings_json(&root);
    assert_eq!(w["autocompleteMaxVisible"], 7, "{w}");
    assert_eq!(w["outputPad"], 0, "{w}");
    assert_eq!(w["terminal"]["showTerminalProgress"], true, "{w}");
    assert_eq!(w["markdown"]["mermaid"], "off", "{w}");
    assert_eq!(w["fullscreenExitOutput"], "resume-hint", "{w}");
    assert_eq!(w["warnings"]["anthropicExtraUsage"], false, "{w}");
    assert_eq!(
        w["modelThinkingLevels"]["replay-anthropic/replay-model"], level,
        "{w}"
    );
    assert_eq!(w["retry"]["enabled"], false, "the rest is kept: {w}");
    assert_eq!(seen.len(), PI_ROWS.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_theme_row_previews_saves_and_the_theme_file_reloads_when_edited() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    std::fs::create_dir_all(root.path("agent/themes")).unwrap();
    let ocean = root.path("agent/themes/ocean.json");
    // accent #123456 → 18;52;86.
    std::fs::write(&ocean, theme_file("ocean", "#123456")).unwrap();
    let extra = root.path("extra.json");
    std::fs::write(&extra, theme_file("extra", "#0a0b0c")).unwrap();
    let extra_arg = extra.display().to_string();
    let mut s = spawn_in(&root, &["--theme", &extra_arg]);
    type_line(&mut s, "/settings");
    wait_text(&mut s, "Auto-compact");
    ok(s.send(b"Theme"));
    ok(s.wait_for("theme row", WAIT, |m| selected(m, "Theme")));
    assert!(selected_row(s.model()).trim_end().ends_with("dark"));
    ok(s.send(b"\r"));
    wait_text(
        &mut s,
        "Select a theme, or choose Automatic to follow terminal appearance.",
    );
    let screen = s.model().screen_text();
    for name in ["Automatic", "dark", "extra", "light", "ocean"] {
        assert!(screen.contains(name), "{name}: {screen}");
    }
    // The current theme is marked and selected; moving previews.
    ok(s.wait_for("dark selected", WAIT, |m| selected(m, "dark")));
    let before = s.model().bytes().len();
    ok(s.send(b"\x1b[B\x1b[B\x1b[B"));
    ok(s.wait_for("ocean selected", WAIT, |m| selected(m, "ocean")));
    ok(s.wait_for("ocean's accent drawn", WAIT, |m| {
        painted(m, before, "38;2;18;52;86")
    }));
    // Esc restores the theme of before and goes back to the settings.
    let before = s.model().bytes().len();
    ok(s.send(b"\x1b"));
    ok(s.wait_for("back in settings", WAIT, |m| selected(m, "Theme")));
    pump_for(&mut s, Duration::from_millis(300));
    assert!(!painted(s.model(), before, "38;2;18;52;86"));
    assert!(selected_row(s.model()).trim_end().ends_with("dark"));
    // Choose it for real.
    ok(s.send(b"\r"));
    ok(s.wait_for("dark selected", WAIT, |m| selected(m, "dark")));
    ok(s.send(b"\x1b[B\x1b[B\x1b[B\r"));
    ok(s.wait_for("saved", WAIT, |m| {
        selected(m, "Theme") && selected_row(m).trim_end().ends_with("ocean")
    }));
    assert_eq!(settings_json(&root)["theme"], "ocean");
    ok(s.send(b"\x1b"));
    // Editing the active theme's file redraws with its new colours (#654321 → 101;67;33).
    let before = s.model().bytes().len();
    std::fs::write(&ocean, theme_file("ocean", "#654321")).unwrap();
    ok(s.wait_for("reloaded", WAIT, |m| painted(m, before, "38;2;101;67;33")));
    // A half-written file keeps the last good theme and nothing breaks.
    std::fs::write(&ocean, "{ \"name\": \"ocean\", ").unwrap();
    pump_for(&mut s, Duration::from_millis(600));
    type_line(&mut s, "/settings");
    wait_text(&mut s, "Auto-compact");
    ok(s.send(b"\x1b"));
    ok(s.wait_for("closed", WAIT, |m| {
        !m.screen_text().contains("Enter/Space to change")
    }));
    // /reload discovers themes again.
    std::fs::write(&ocean, theme_file("ocean", "#654321")).unwrap();
    std::fs::write(
        root.path("agent/themes/forest.json"),
        theme_file("forest", "#224422"),
    )
    .unwrap();
    type_line(&mut s, "/reload");
    wait_text(&mut s, "Reloaded keybindings");
    type_line(&mut s, "/settings");
    wait_text(&mut s, "Auto-compact");
    ok(s.send(b"Theme"));
    ok(s.wait_for("theme row", WAIT, |m| selected(m, "Theme")));
    ok(s.send(b"\r"));
    wait_text(
        &mut s,
        "Select a theme, or choose Automatic to follow terminal appearance.",
    );
    ok(s.wait_for("ocean still current", WAIT, |m| selected(m, "ocean")));
    assert!(
        s.model().screen_text().contains("forest"),
        "{}",
        s.model().screen_text()
    );
    // Automatic: the light theme, then the dark one, saved as `light/dark`.
    ok(s.send(b"\x1b[A\x1b[A\x1b[A\x1b[A\x1b[A"));
    ok(s.wait_for("automatic", WAIT, |m| selected(m, "Automatic")));
    ok(s.send(b"\r"));
    wait_text(
        &mut s,
        "Select the theme to use for light terminal appearance",
    );
    ok(s.wait_for("ocean current", WAIT, |m| selected(m, "ocean")));
    ok(s.send(b"\x1b[A"));
    ok(s.wait_for("light", WAIT, |m| selected(m, "light")));
    ok(s.send(b"\r"));
    wait_text(
        &mut s,
        "Select the theme to use for dark terminal appearance",
    );
    ok(s.wait_for("ocean current", WAIT, |m| selected(m, "ocean")));
    ok(s.send(b"\r"));
    ok(s.wait_for("saved automatic", WAIT, |m| {
        selected(m, "Theme") && selected_row(m).trim_end().ends_with("light/ocean")
    }));
    assert_eq!(settings_json(&root)["theme"], "light/ocean");
    ok(s.send(b"\x1b"));
    ok(s.wait_for("closed", WAIT, |m| {
        !m.screen_text().contains("Enter/Space to change")
    }));
    quit(&mut s);

    // --no-themes: discovery is off (the saved ocean is not found), --theme paths still load.
    let mut s = spawn_in(&root, &["--no-themes", "--theme", &extra_arg]);
    wait_text(
        &mut s,
        "Failed to load theme \"ocean\": Theme not found: ocean",
    );
    type_line(&mut s, "/settings");
    wait_text(&mut s, "Auto-compact");
    ok(s.send(b"Theme"));
    ok(s.wait_for("theme row", WAIT, |m| selected(m, "Theme")));
    ok(s.send(b"\r"));
    wait_text(&mut s, "extra");
    let items: Vec<String> = s
        .model()
        .screen_lines()
        .iter()
        .map(|l| l.trim_start_matches(['→', ' ', '✓']).trim_end().to_owned())
        .collect();
    assert!(items.iter().any(|l| l == "light"), "{items:?}");
    assert!(!items.iter().any(|l| l == "ocean"), "{items:?}");
    ok(s.send(b"\x1b"));
    ok(s.wait_for("back in settings", WAIT, |m| selected(m, "Theme")));
    ok(s.send(b"\x1b"));
    ok(s.wait_for("closed", WAIT, |m| {
        !m.screen_text().contains("Enter/Space to change")
    }));
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_themes_are_reported_and_fall_back_to_dark() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({"theme": "broken"}));
    std::fs::create_dir_all(root.path("agent/themes")).unwrap();
    std::fs::write(root.path("agent/themes/broken.json"), "{ not json").unwrap();
    std::fs::write(
        root.path("agent/themes/partial.json"),
        r##"{"name": "partial", "colors": {"accent": "#ffffff"}}"##,
    )
    .unwrap();
    let mut s = spawn_in(&root, &[]);
    wait_text(&mut s, "Fell back to dark theme.");
    let all = s.model().all_lines().join("\n");
    assert!(all.contains("[Theme conflicts]"), "{all}");
    assert!(
        all.contains("Error: Failed to load theme \"broken\": Failed to parse theme broken: "),
        "{all}"
    );
    assert!(all.contains("Invalid theme"), "{all}");
    assert!(all.contains("Missing required color tokens:"), "{all}");
    assert!(all.contains("partial.json"), "{all}");
    // Still usable.
    type_line(&mut s, "/settings");
    ok(s.wait_for("dark in use", WAIT, |m| {
        m.screen_text().contains("Auto-compact")
    }));
    ok(s.send(b"\x1b"));
    ok(s.wait_for("closed", WAIT, |m| {
        !m.screen_text().contains("Enter/Space to change")
    }));
    quit(&mut s);
    // --use-theme with an unknown name: pi's text, not saved.
    let mut s = spawn_in(&root, &["--use-theme", "nope"]);
    wait_text(
        &mut s,
        "Failed to load theme \"nope\": Theme not found: nope",
    );
    quit(&mut s);
    assert_eq!(settings_json(&root)["theme"], "broken");
}

/// The text of the marked row of `pi config` (`> ` leads it).
fn config_cursor(m: &mut ScreenModel) -> String {
    m.screen_lines()
        .into_iter()
        .find(|l| l.starts_with(">     ["))
        .unwrap_or_default()
}

fn project_settings(root: &Root) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(root.path("work/.pi/settings.json")).unwrap_or_default(),
    )
    .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_config_toggles_resources_globally_and_per_project() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    for d in [
        "agent/prompts",
        "agent/themes",
        "agent/skills/lint",
        "work/.pi/prompts",
    ] {
        std::fs::create_dir_all(root.path(d)).unwrap();
    }
    std::fs::write(root.path("agent/prompts/review.md"), "Review $ARGUMENTS\n").unwrap();
    std::fs::write(
        root.path("agent/themes/ocean.json"),
        theme_file("ocean", "#123456"),
    )
    .unwrap();
    std::fs::write(
        root.path("agent/skills/lint/SKILL.md"),
        "---\nname: lint\ndescription: Lint the code\n---\nRun the linter.\n",
    )
    .unwrap();
    std::fs::write(root.path("work/.pi/prompts/local.md"), "Local $ARGUMENTS\n").unwrap();
    let mut s = root.spawn(&["config", "-a"], 30, 110);
    wait_text(&mut s, "Global Resources");
    wait_text(&mut s, "~/.pi/agent/settings.json");
    wait_text(&mut s, "ocean.json");
    let screen = s.model().screen_text();
    for text in [
        "tab switch mode",
        "space toggle",
        "esc close",
        "Skills",
        "Prompts",
        "Themes",
    ] {
        assert!(screen.contains(text), "{text}: {screen}");
    }
    // Global mode lists what the global file alone leads to, as pi's does.
    assert!(!screen.contains("local.md"), "{screen}");
    // The first item is selected; Down goes to the next item, past the headers.
    ok(s.wait_for("lint first", WAIT, |m| {
        config_cursor(m).contains("[x] lint")
    }));
    ok(s.send(b"\x1b[B"));
    ok(s.wait_for("review next", WAIT, |m| {
        config_cursor(m).contains("[x] review.md")
    }));
    ok(s.send(b" "));
    ok(s.wait_for("review off", WAIT, |m| {
        config_cursor(m).contains("[ ] review.md")
    }));
    assert_eq!(
        settings_json(&root)["prompts"],
        json!(["-prompts/review.md"])
    );
    ok(s.send(b" "));
    ok(s.wait_for("review on", WAIT, |m| {
        config_cursor(m).contains("[x] review.md")
    }));
    assert_eq!(
        settings_json(&root)["prompts"],
        json!(["+prompts/review.md"])
    );
    assert_eq!(project_settings(&root), Value::Null);
    // Tab: the project file, the project's resources too.
    ok(s.send(b"\t"));
    wait_text(&mut s, "Project Local Resources");
    wait_text(&mut s, "inherited global resources are dimmed");
    wait_text(&mut s, "· inherited global");
    ok(s.send(b"local"));
    ok(s.wait_for("local shown", WAIT, |m| {
        config_cursor(m).contains("local.md")
    }));
    ok(s.send(b" "));
    ok(s.wait_for("unload", WAIT, |m| {
        let row = config_cursor(m);
        row.contains("[-] local.md") && row.contains("project unload")
    }));
    assert_eq!(
        project_settings(&root)["prompts"],
        json!(["-prompts/local.md"])
    );
    // A global resource overridden in the project is listed by its path, then switched.
    ok(s.send(&b"\x7f".repeat(5)));
    ok(s.send(b"ocean"));
    ok(s.wait_for("ocean", WAIT, |m| {
        let row = config_cursor(m);
        row.contains("[x] ocean.json") && row.contains("inherited global")
    }));
    ok(s.send(b" "));
    ok(s.wait_for("ocean unloaded here", WAIT, |m| {
        config_cursor(m).contains("[-] ocean.json")
    }));
    let ocean = root.path("agent/themes/ocean.json").display().to_string();
    assert_eq!(
        project_settings(&root)["themes"],
        json!([ocean.clone(), format!("-{ocean}")])
    );
    ok(s.send(b" "));
    ok(s.wait_for("ocean loaded", WAIT, |m| {
        config_cursor(m).contains("[+] ocean.json")
    }));
    ok(s.send(b" "));
    ok(s.wait_for("ocean inherits", WAIT, |m| {
        config_cursor(m).contains("[x] ocean.json")
    }));
    assert_eq!(project_settings(&root)["themes"], json!([]));
    pump_for(&mut s, Duration::from_millis(200));
    ok(s.send(b"\x1b"));
    assert_eq!(ok(s.wait_exit(WAIT)), 0);
    // The prompt switched off is gone from the next session's menu.
    let w = settings_json(&root);
    assert_eq!(w["retry"]["enabled"], false, "{w}");
    // An untrusted project cannot be edited with -l.
    let mut s = root.spawn(&["config", "-l", "-na"], 30, 110);
    assert_eq!(ok(s.wait_exit(WAIT)), 1);
    assert!(
        s.model()
            .all_lines()
            .join("\n")
            .contains("Project is not trusted. Use --approve to modify local resource config."),
    );
}

/// A session file by hand: its header, then `messages` user/assistant message entries
/// (`name` adds a `session_info` entry), modified `age_s` seconds ago.
fn session_file(
    dir: &std::path::Path,
    file: &str,
    parent: Option<&std::path::Path>,
    name: Option<&str>,
    first: &str,
    messages: usize,
    age_s: u64,
) -> std::path::PathBuf {
    let mut header = json!({"type": "session", "version": 3, "id": file,
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"});
    if let Some(p) = parent {
        header["parentSession"] = p.display().to_string().into();
    }
    let mut lines = vec![header.to_string()];
    let mut parent_id = Value::Null;
    for i in 0..messages {
        let id = format!("{file}-{i}");
        let message = if i % 2 == 0 {
            json!({"role": "user", "content": [{"type": "text", "text": format!("{first} {i}")}],
                "timestamp": 1})
        } else {
            json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                "api": "anthropic-messages", "provider": "replay-anthropic",
                "model": "replay-model", "usage": {"input": 1, "output": 1, "cacheRead": 0,
                "cacheWrite": 0, "totalTokens": 2, "cost": {"input": 0, "output": 0,
                "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "stop",
                "timestamp": 2})
        };
        lines.push(
            json!({"type": "message", "id": id, "parentId": parent_id,
                "timestamp": "2026-01-01T00:00:00.000Z", "message": message})
            .to_string(),
        );
        parent_id = id.into();
    }
    if let Some(n) = name {
        lines.push(
            json!({"type": "session_info", "id": format!("{file}-n"), "parentId": parent_id,
                "timestamp": "2026-01-01T00:00:00.000Z", "name": n})
            .to_string(),
        );
    }
    let path = dir.join(format!("{file}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let when = std::time::SystemTime::now() - Duration::from_secs(age_s);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(when)
        .unwrap();
    path
}

/// The rows of the session list, top to bottom, without the cursor.
fn session_rows(m: &mut ScreenModel) -> Vec<String> {
    m.screen_lines()
        .into_iter()
        .skip_while(|l| !l.starts_with("> "))
        .skip(2)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.trim_start_matches(['→', ' ', '✓']).trim_end().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_selector_sorts_filters_names_and_counts_messages() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let dir = root.path("sessions");
    let a = session_file(&dir, "a", None, None, "alpha topic", 2, 7200);
    session_file(&dir, "b", Some(&a), None, "beta fork", 1, 3600);
    session_file(&dir, "c", None, Some("Named gamma"), "gamma", 3, 10);
    let mut s = spawn_in(&root, &["-r"]);
    wait_text(&mut s, "Resume Session (Current Folder)");
    wait_text(
        &mut s,
        "◉ Current Folder | ○ All  Name: All  Sort: Threaded",
    );
    wait_text(&mut s, "tab scope · re:<pattern> regex · \"phrase\" exact");
    wait_text(
        &mut s,
        "ctrl+s sort · ctrl+n named · ctrl+d delete · ctrl+p path (off) · ctrl+r rename",
    );
    // Threaded: the fork under its parent; trees by their latest activity; the message count
    // and pi's age on each row.
    ok(s.wait_for("threaded rows", WAIT, |m| session_rows(m).len() == 3));
    let rows = session_rows(s.model());
    assert!(
        rows[0].starts_with("Named gamma") && rows[0].ends_with("3 now"),
        "{rows:?}"
    );
    assert!(
        rows[1].starts_with("alpha topic 0") && rows[1].ends_with("2 2h"),
        "{rows:?}"
    );
    assert!(
        rows[2].starts_with("└─ beta fork 0") && rows[2].ends_with("1 1h"),
        "{rows:?}"
    );
    // Ctrl+S: Recent, newest first.
    ok(s.send(b"\x13"));
    wait_text(&mut s, "Sort: Recent");
    ok(s.wait_for("recent rows", WAIT, |m| {
        let r = session_rows(m);
        r.len() == 3 && r[1].starts_with("beta fork") && r[2].starts_with("alpha topic")
    }));
    // Ctrl+N: named sessions only; again: all.
    ok(s.send(b"\x0e"));
    wait_text(&mut s, "Name: Named");
    ok(s.wait_for("named only", WAIT, |m| {
        let r = session_rows(m);
        r.len() == 1 && r[0].starts_with("Named gamma")
    }));
    ok(s.send(b"\x0e"));
    wait_text(&mut s, "Name: All");
    // A search keeps the sort and the toggles keep the search.
    ok(s.send(b"topic"));
    ok(s.wait_for("alpha only", WAIT, |m| {
        let r = session_rows(m);
        r.len() == 1 && r[0].starts_with("alpha topic")
    }));
    ok(s.send(b"\x13"));
    wait_text(&mut s, "Sort: Fuzzy");
    ok(s.wait_for("search kept", WAIT, |m| {
        m.screen_text().contains("> topic") && session_rows(m).len() == 1
    }));
    ok(s.send(b"\x13"));
    wait_text(&mut s, "Sort: Threaded");
    // pi's search syntax: `re:` regexes and quoted phrases.
    ok(s.send(&b"\x7f".repeat(10)));
    ok(s.send(b"re:F.RK"));
    ok(s.wait_for("regex", WAIT, |m| {
        let r = session_rows(m);
        r.len() == 1 && r[0].starts_with("beta fork")
    }));
    ok(s.send(&b"\x7f".repeat(10)));
    ok(s.send(b"\"topic  0\""));
    ok(s.wait_for("phrase", WAIT, |m| {
        let r = session_rows(m);
        r.len() == 1 && r[0].starts_with("alpha topic")
    }));
    ok(s.send(&b"\x7f".repeat(12)));
    ok(s.wait_for("all again", WAIT, |m| session_rows(m).len() == 3));
    // Ctrl+P shows the file paths.
    ok(s.send(b"\x10"));
    wait_text(&mut s, "path (on)");
    wait_text(&mut s, "a.jsonl");
    ok(s.send(b"\r"));
    wait_text(&mut s, "alpha topic 0");
    quit(&mut s);
}
