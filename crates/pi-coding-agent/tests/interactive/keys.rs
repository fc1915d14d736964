//! The interactive mode's keys and notices beyond the basics: the model selector key, the
//! notices pi adds to the transcript, the status line in the editor's rule, clipboard paste.
//! Through the real binary in a pty against the replay server.

use std::time::Duration;

use pi_tui::testkit::{Answers, CommandBuilder, PtySession, ScreenModel};
use serde_json::json;

use crate::support::anthropic_sse::{anthropic_text, anthropic_tools};
use crate::support::binary_rig::{pi_bin, slot};
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

/// The editor's top rule: the line right above the editor's text, found as the first rule of
/// the two rules around the (empty) editor above the footer.
fn top_rule(m: &mut ScreenModel) -> String {
    let lines = m.screen_lines();
    let footer = lines
        .iter()
        .rposition(|l| l.contains("(auto)"))
        .unwrap_or(lines.len());
    lines[..footer]
        .iter()
        .rev()
        .filter(|l| l.starts_with("──"))
        .nth(1)
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn working_sits_in_the_editor_rule_and_retries_get_a_line_of_their_own() {
    let _slot = slot();
    let words: Vec<String> = (1..=30).map(|i| format!("word{i}")).collect();
    let slow = anthropic_text(&words.join(" "))
        .chunk_size(7)
        .event_delay(Duration::from_millis(60));
    let overloaded =
        json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}});
    let srv = server(vec![
        slow,
        pi_ai::testkit::Reply::json(529, &overloaded),
        anthropic_text("Answered after the retry."),
    ])
    .await;
    let root = Root::new(
        &srv.base_url(),
        json!({"retry": {"enabled": true, "maxRetries": 2, "baseDelayMs": 1500}}),
    );
    let mut s = root.spawn_replay(&[], 30, 100);
    wait_ready(&mut s);
    type_line(&mut s, "stream slowly");
    ok(s.wait_for("Working in the rule", WAIT, |m| {
        let rule = top_rule(m);
        rule.starts_with("── ") && rule.contains(" Working ─")
    }));
    let screen = s.model().screen_lines();
    assert_eq!(
        screen.iter().filter(|l| l.contains("Working")).count(),
        1,
        "only the rule says Working:\n{}",
        screen.join("\n")
    );
    wait_text(&mut s, "word30");
    ok(s.wait_for("the plain rule back", WAIT, |m| {
        let rule = top_rule(m);
        !rule.is_empty() && rule.chars().all(|c| c == '─')
    }));

    type_line(&mut s, "now fail once");
    wait_text(&mut s, "Retrying (1/2) in 2s... (escape to cancel)");
    let m = s.model();
    let rule = top_rule(m);
    assert!(!rule.contains("Retrying"), "{rule}");
    wait_text(&mut s, "Answered after the retry.");
    ok(s.wait_for("the retry line gone", WAIT, |m| {
        !m.screen_text().contains("Retrying (")
    }));
    assert_eq!(srv.request_count(), 3);
    quit(&mut s);
}

/// `pi` on the replay model with `bin` first on `PATH` (fake clipboard tools) and `extra`
/// in its environment.
fn spawn_env(
    root: &Root,
    bin: &std::path::Path,
    extra: &[(&str, &str)],
    rows: u16,
    cols: u16,
) -> PtySession {
    let mut cmd = CommandBuilder::new(pi_bin());
    cmd.args(["--provider", "replay-anthropic", "--model", "replay-model"]);
    cmd.cwd(root.path("work"));
    cmd.env_clear();
    for (k, v) in [
        (
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
        ),
        ("HOME", root.path("home").display().to_string()),
        ("TMPDIR", root.path("tmp").display().to_string()),
        (
            "PI_CODING_AGENT_DIR",
            root.path("agent").display().to_string(),
        ),
        ("PI_OFFLINE", "1".to_owned()),
        ("PI_SKIP_VERSION_CHECK", "1".to_owned()),
        ("COLORTERM", "truecolor".to_owned()),
        ("CLIP_DIR", bin.display().to_string()),
    ] {
        cmd.env(k, v);
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    PtySession::spawn(cmd, rows, cols, Answers::default()).unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_v_attaches_a_clipboard_image_by_path_else_pastes_text() {
    let _slot = slot();
    let srv = server(vec![anthropic_text("Seen it.")]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let bin = root.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let png: &[u8] = b"\x89PNG\r\n\x1a\nfake image bytes";
    std::fs::write(bin.join("clip.png"), png).unwrap();
    // A fake xclip: the image while `clip.png` exists, else only text.
    let script = r#"#!/bin/sh
case "$*" in
  *TARGETS*) if [ -f "$CLIP_DIR/clip.png" ]; then printf 'TARGETS\nimage/png\nUTF8_STRING\n'; else printf 'TARGETS\nUTF8_STRING\n'; fi ;;
  *"-t image/png"*) [ -f "$CLIP_DIR/clip.png" ] && cat "$CLIP_DIR/clip.png" || exit 1 ;;
  *"-t "*) exit 1 ;;
  *) printf 'text from the clipboard' ;;
esac
"#;
    let xclip = bin.join("xclip");
    std::fs::write(&xclip, script).unwrap();
    let mut perms = std::fs::metadata(&xclip).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&xclip, perms).unwrap();

    let mut s = spawn_env(&root, &bin, &[], 30, 160);
    wait_ready(&mut s);
    ok(s.send(b"look at"));
    ok(s.send(b"\x16"));
    wait_text(&mut s, "pi-clipboard-");
    let saved: Vec<std::path::PathBuf> = std::fs::read_dir(root.path("tmp"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("pi-clipboard-")
        })
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert_eq!(std::fs::read(&saved[0]).unwrap(), png);
    assert!(saved[0].extension().is_some_and(|e| e == "png"));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Seen it.");
    let texts = request_user_texts(&srv, 0);
    assert_eq!(
        texts,
        [format!("look at {}", saved[0].display())],
        "the prompt names the saved file"
    );

    // No image on the clipboard: its text.
    std::fs::remove_file(bin.join("clip.png")).unwrap();
    ok(s.send(b"\x16"));
    wait_text(&mut s, "text from the clipboard");
    ok(s.send(b"\x03"));
    ok(s.wait_for("the editor cleared", WAIT, |m| {
        !m.screen_text().contains("text from the clipboard")
    }));
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_png_read_in_kitty_reaches_the_terminal_as_kitty_graphics() {
    let _slot = slot();
    let srv = server(vec![
        anthropic_tools(&[("toolu_1", "read", json!({"path": "pic.png"}))]),
        anthropic_text("A small picture."),
    ])
    .await;
    let root = Root::new(&srv.base_url(), json!({}));
    let models = json!({"providers": {"replay-anthropic": {
        "baseUrl": srv.base_url(), "api": "anthropic-messages", "apiKey": "replay-test-key",
        "models": [{"id": "replay-model", "reasoning": false, "input": ["text", "image"],
                    "contextWindow": 128000, "maxTokens": 16384}]
    }}});
    std::fs::write(root.path("agent/models.json"), models.to_string()).unwrap();
    let mut png = std::io::Cursor::new(Vec::new());
    image::RgbImage::from_pixel(90, 36, image::Rgb([200, 30, 30]))
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    std::fs::write(root.path("work/pic.png"), png.get_ref()).unwrap();
    let mut s = spawn_env(
        &root,
        &root.path("work"),
        &[("KITTY_WINDOW_ID", "1")],
        30,
        100,
    );
    wait_ready(&mut s);
    type_line(&mut s, "look at pic.png");
    wait_text(&mut s, "A small picture.");
    ok(s.settle(Duration::from_millis(300)));
    let bytes = String::from_utf8_lossy(s.model().bytes()).into_owned();
    // The cell-size query went out, and the image as one Kitty command (a small payload):
    // PNG data, 60 columns at most (pi's default), the cursor left in place.
    assert!(bytes.contains("\x1b[16t"));
    let start = bytes
        .find("\x1b_Ga=T,f=100,q=2,C=1,c=")
        .unwrap_or_else(|| panic!("no Kitty image in the output"));
    let cmd = &bytes[start..start + bytes[start..].find("\x1b\\").unwrap()];
    assert!(cmd.contains(",r=") && cmd.contains(",i="), "{cmd:?}");
    let payload = cmd.split_once(';').unwrap().1;
    assert!(
        payload.starts_with("iVBORw0KGgo"),
        "PNG base64: {payload:.20}"
    );
    assert_eq!(bytes.matches("\x1b_Ga=T").count(), 1, "drawn once");
    // Nothing of it shows as text.
    assert!(!s.model().screen_text().contains("iVBOR"));
    quit(&mut s);

    // Elsewhere (no protocol): no graphics at all.
    let srv2 = server(vec![
        anthropic_tools(&[("toolu_1", "read", json!({"path": "pic.png"}))]),
        anthropic_text("A small picture."),
    ])
    .await;
    let models = models
        .to_string()
        .replace(&srv.base_url(), &srv2.base_url());
    std::fs::write(root.path("agent/models.json"), models).unwrap();
    let mut s = spawn_env(&root, &root.path("work"), &[], 30, 100);
    wait_ready(&mut s);
    type_line(&mut s, "look at pic.png");
    wait_text(&mut s, "A small picture.");
    let bytes = String::from_utf8_lossy(s.model().bytes()).into_owned();
    assert!(!bytes.contains("\x1b_G") && !bytes.contains("\x1b[16t"));
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_invocation_shows_its_collapsed_block_then_the_words() {
    let _slot = slot();
    let srv = server(vec![anthropic_text("Summarized.")]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let skill = root.path("agent/skills/pdf");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: pdf\ndescription: Work with PDF files\n---\nUse pdftotext first.\n",
    )
    .unwrap();
    let mut s = root.spawn_replay(&[], 30, 100);
    wait_ready(&mut s);
    ok(s.send(b"/skill:pdf summarize a.pdf"));
    ok(s.settle(Duration::from_millis(200)));
    ok(s.send(b"\r"));
    wait_text(&mut s, "Summarized.");
    let texts = request_user_texts(&srv, 0);
    assert!(
        texts[0].starts_with("<skill name=\"pdf\"") && texts[0].ends_with("summarize a.pdf"),
        "{texts:?}"
    );
    let m = s.model();
    assert_once(m, "[skill] pdf (ctrl+o to expand)");
    assert_once(m, "summarize a.pdf");
    let all = m.all_lines().join("\n");
    assert!(!all.contains("Use pdftotext first."), "collapsed: {all}");
    // Ctrl+O shows the skill's text.
    ok(s.send(b"\x0f"));
    wait_text(&mut s, "Use pdftotext first.");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alt_v_under_wsl_reads_a_windows_screenshot_through_powershell() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let bin = root.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let png: &[u8] = b"\x89PNG\r\n\x1a\na windows screenshot";
    std::fs::write(bin.join("clip.png"), png).unwrap();
    let tool = |name: &str, script: &str| {
        let path = bin.join(name);
        std::fs::write(&path, script).unwrap();
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).unwrap();
    };
    // The Linux clipboard has nothing (as after Win+Shift+S); `wslpath -w` maps the path to
    // itself here, and PowerShell saves Windows' clipboard image where the script says.
    tool("wl-paste", "#!/bin/sh\nexit 1\n");
    tool("xclip", "#!/bin/sh\nexit 1\n");
    tool(
        "wslpath",
        "#!/bin/sh\n[ \"$1\" = -w ] && printf '%s\\n' \"$2\"\n",
    );
    tool(
        "powershell.exe",
        "#!/bin/sh\nprintf '%s' \"$*\" > \"$CLIP_DIR/ps-args\"\n\
         p=$(printf '%s' \"$3\" | sed -n \"s/.*\\$path = '\\([^']*\\)'.*/\\1/p\")\n\
         cp \"$CLIP_DIR/clip.png\" \"$p\" && echo ok\n",
    );
    let mut s = spawn_env(&root, &bin, &[("WSL_DISTRO_NAME", "Ubuntu")], 30, 160);
    wait_ready(&mut s);
    // Under WSL pi binds the paste to Alt+V (Windows terminals take Ctrl+V).
    ok(s.send(b"\x1bv"));
    wait_text(&mut s, "pi-clipboard-");
    let names: Vec<String> = std::fs::read_dir(root.path("tmp"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let saved: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("pi-clipboard-"))
        .collect();
    assert_eq!(saved.len(), 1, "{names:?}");
    assert_eq!(std::fs::read(root.path("tmp").join(saved[0])).unwrap(), png);
    assert!(
        !names.iter().any(|n| n.starts_with("pi-wsl-clip-")),
        "PowerShell's file is removed: {names:?}"
    );
    let args = std::fs::read_to_string(bin.join("ps-args")).unwrap();
    assert!(
        args.starts_with("-NoProfile -Command ") && args.contains("Clipboard]::GetImage()"),
        "{args}"
    );
    ok(s.send(b"\x03"));
    quit(&mut s);
}
