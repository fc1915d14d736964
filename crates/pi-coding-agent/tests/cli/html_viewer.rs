//! The HTML export opened in a real headless browser: the page draws the tree of every entry,
//! one branch at a time (picked by the URL fragment), search, the thinking toggle, images, and
//! text that looks like markup stays text.
//!
//! Needs Chromium (`chromium-headless-shell`, Debian's package of that name, which `.ci/run`
//! installs; `PI_TEST_CHROMIUM` names another binary). Without it the tests fail when `CI` is
//! set and are skipped with a message otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::pi_bin::Sandbox;

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PI_TEST_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium-headless-shell", "chromium", "chromium-browser"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// The browser, or `None` (test skipped) outside CI.
fn browser_or_skip(test: &str) -> Option<PathBuf> {
    match chromium() {
        Some(b) => Some(b),
        None if std::env::var_os("CI").is_some() => {
            panic!("{test}: Chromium is required in CI (install chromium-headless-shell)")
        }
        None => {
            eprintln!("{test}: skipped, no Chromium (install chromium-headless-shell)");
            None
        }
    }
}

fn headless(browser: &Path, profile: &Path) -> Command {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// The DOM after the page's script ran, for `page` opened with `fragment`.
fn dom(browser: &Path, profile: &Path, page: &Path, fragment: &str) -> String {
    let out = headless(browser, profile)
        .arg("--dump-dom")
        .arg(format!("file://{}#{fragment}", page.display()))
        .output()
        .expect("run chromium");
    assert!(out.status.success(), "chromium failed: {out:?}");
    let dom = String::from_utf8(out.stdout).unwrap();
    assert!(
        dom.contains("data-ready=\"1\""),
        "the viewer did not run:\n{dom}"
    );
    dom
}

/// The inner HTML of the element that opens with `open` (e.g. `<main id="chat"`).
fn element<'a>(dom: &'a str, open: &str, close: &str) -> &'a str {
    let start = dom
        .find(open)
        .unwrap_or_else(|| panic!("no {open} in\n{dom}"));
    let end = start + dom[start..].find(close).unwrap();
    &dom[start..end]
}

const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// A session with two branches after the first user message: A (a read tool call with 12
/// result lines, then an answer) and B (another answer, then a label on A's answer, so the
/// file's leaf is on B).
fn session_file(dir: &Path) -> PathBuf {
    let usage = r#""usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.0012}}"#;
    let lines = [
        r#"{"type":"session","version":3,"id":"0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/proj"}"#.to_owned(),
        r#"{"type":"model_change","id":"e0000001","parentId":null,"timestamp":"2026-01-01T00:00:00.500Z","provider":"anthropic","modelId":"claude-x"}"#.to_owned(),
        format!(r#"{{"type":"message","id":"e0000002","parentId":"e0000001","timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":[{{"type":"text","text":"Root question </script><b id=\"injected\">tags</b>"}},{{"type":"image","data":"{PNG_1X1}","mimeType":"image/png"}}],"timestamp":1}}}}"#),
        format!(r#"{{"type":"message","id":"e0000003","parentId":"e0000002","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"deep pondering"}},{{"type":"text","text":"Let me read it."}},{{"type":"toolCall","id":"call_1","name":"read","arguments":{{"path":"hello.txt"}}}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-x",{usage},"stopReason":"toolUse","timestamp":2}}}}"#),
        r#"{"type":"message","id":"e0000004","parentId":"e0000003","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read","content":[{"type":"text","text":"line1\nline2\nline3\nline4\nline5\nline6\nline7\nline8\nline9\nline10\nline11\nline12"}],"isError":false,"timestamp":3}}"#.to_owned(),
        format!(r#"{{"type":"message","id":"e0000005","parentId":"e0000004","timestamp":"2026-01-01T00:00:04.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"Branch A answer alpha"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-x",{usage},"stopReason":"stop","timestamp":4}}}}"#),
        format!(r#"{{"type":"message","id":"e0000006","parentId":"e0000002","timestamp":"2026-01-01T00:00:05.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"Branch B answer bravo"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-x",{usage},"stopReason":"stop","timestamp":5}}}}"#),
        r#"{"type":"label","id":"e0000007","parentId":"e0000006","timestamp":"2026-01-01T00:00:06.000Z","targetId":"e0000005","label":"good-one"}"#.to_owned(),
    ];
    let path = dir.join("s1.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

const ALL_IDS: [&str; 7] = [
    "e0000001", "e0000002", "e0000003", "e0000004", "e0000005", "e0000006", "e0000007",
];

fn exported(sb: &Sandbox) -> PathBuf {
    session_file(&sb.work());
    let out = sb.run(&["--export", "s1.jsonl", "viewer.html"]);
    assert_eq!(out.code, 0, "{out:?}");
    sb.work().join("viewer.html")
}

#[test]
fn the_viewer_draws_every_entry_and_switches_branches() {
    let Some(browser) = browser_or_skip("the_viewer_draws_every_entry_and_switches_branches")
    else {
        return;
    };
    let sb = Sandbox::new();
    let page = exported(&sb);
    let profile = sb.root().join("chromium-profile");

    // No fragment: the file's leaf (the label after B's answer), so branch B.
    let d = dom(&browser, &profile, &page, "");
    let tree = element(&d, "<nav id=\"tree\"", "</nav>");
    for id in ALL_IDS {
        assert!(
            tree.contains(&format!("data-id=\"{id}\"")),
            "{id} missing from the tree"
        );
    }
    assert_eq!(tree.matches("class=\"branch\"").count(), 2, "{tree}");
    let chat = element(&d, "<main id=\"chat\"", "</main>");
    assert!(chat.contains("Branch B answer bravo"), "{chat}");
    assert!(!chat.contains("Branch A answer alpha"), "{chat}");
    assert!(!chat.contains("call_1"));

    // Branch A by its leaf: the tool call with its result (10 lines shown, the rest folded),
    // thinking, the label on the answer; B's answer is not in the chat.
    let d = dom(&browser, &profile, &page, "leaf=e0000005");
    let chat = element(&d, "<main id=\"chat\"", "</main>");
    assert!(chat.contains("data-leaf=\"e0000005\""));
    for needle in [
        "Branch A answer alpha",
        "deep pondering",
        "hello.txt",
        "line10",
        "Show 2 more lines",
        "good-one",
        "$0.0012",
    ] {
        assert!(
            chat.contains(needle),
            "{needle} missing from branch A:\n{chat}"
        );
    }
    assert!(!chat.contains("Branch B answer bravo"));
    let tree = element(&d, "<nav id=\"tree\"", "</nav>");
    assert!(tree.contains("class=\"node type-message on-path active\" data-id=\"e0000005\""));
    assert!(tree.contains("class=\"node type-message\" data-id=\"e0000006\""));

    // Text that looks like markup is text; the image is an inline data URL.
    assert!(chat.contains("Root question &lt;/script&gt;&lt;b id=\"injected\"&gt;tags&lt;/b&gt;"));
    assert!(!d.contains("<b id=\"injected\">"));
    assert!(chat.contains(&format!("src=\"data:image/png;base64,{PNG_1X1}\"")));
}

#[test]
fn the_viewer_searches_and_hides_thinking_from_the_fragment() {
    let Some(browser) = browser_or_skip("the_viewer_searches_and_hides_thinking_from_the_fragment")
    else {
        return;
    };
    let sb = Sandbox::new();
    let page = exported(&sb);
    let profile = sb.root().join("chromium-profile");
    let d = dom(
        &browser,
        &profile,
        &page,
        "leaf=e0000005&q=ALPHA&thinking=hidden",
    );
    assert!(d.contains("<body class=\"hide-thinking\""), "{d}");
    // Four sections on branch A (model, user, two assistants; the tool result sits in its
    // call's card); only A's answer matches.
    assert!(d.contains("1 of 4 messages match"), "{d}");
    let chat = element(&d, "<main id=\"chat\"", "</main>");
    assert_eq!(chat.matches("hidden-by-search").count(), 3, "{chat}");
    assert!(chat.contains("class=\"msg role-assistant\" data-id=\"e0000005\""));
    // The tree marks the entries whose data match.
    let tree = element(&d, "<nav id=\"tree\"", "</nav>");
    assert!(tree.contains("data-id=\"e0000005\""));
    assert_eq!(tree.matches(" match\"").count(), 1, "{tree}");
}

#[test]
fn the_viewer_renders_to_a_screenshot() {
    let Some(browser) = browser_or_skip("the_viewer_renders_to_a_screenshot") else {
        return;
    };
    let sb = Sandbox::new();
    let page = exported(&sb);
    let shot = sb.root().join("shot.png");
    let out = headless(&browser, &sb.root().join("chromium-profile"))
        .arg("--window-size=1200,800")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}#leaf=e0000005", page.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    // A blank page of that size compresses to a few KiB; the drawn session is far more.
    assert!(png.len() > 20_000, "{} bytes", png.len());
}
