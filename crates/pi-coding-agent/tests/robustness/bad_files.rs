//! Bad files at the library level: configuration files with syntax errors
//! or wrong types give a clear message naming the file (and the line, for syntax errors) and
//! are never overwritten; session files with a wrong header, corrupt lines or entries of
//! unknown types load what they can, with warnings, and keep every line the user had.

use std::fs;
use std::path::Path;

use pi_coding_agent::config::auth::AuthStorage;
use pi_coding_agent::config::models_json::ModelsConfig;
use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::storage::{
    EntryKind, SessionStore, StoreError, build_session_context, get_tree,
};

fn dirs() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let agent = tmp.path().join("agent");
    let cwd = tmp.path().join("work");
    fs::create_dir_all(&agent).unwrap();
    fs::create_dir_all(cwd.join(".pi")).unwrap();
    (tmp, agent, cwd)
}

#[test]
fn settings_with_wrong_types_fall_back_to_defaults_and_are_kept_on_write() {
    let (_t, agent, cwd) = dirs();
    let path = agent.join("settings.json");
    let text =
        r#"{"retry": "yes", "defaultModel": 5, "compaction": [1], "steeringMode": {"x": 1}}"#;
    fs::write(&path, text).unwrap();
    let mut s = SettingsManager::load(&cwd, &agent, true);
    assert!(
        s.drain_errors().is_empty(),
        "wrong types are not syntax errors"
    );
    assert_eq!(s.default_model(), None);
    assert!(s.retry().enabled);
    assert_eq!(s.retry().max_retries, 3);
    assert!(s.compaction().enabled);
    s.set_default_model("m");
    let written: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    // Only the field the user changed is replaced; the others stay as they were.
    assert_eq!(
        written,
        serde_json::json!({"retry": "yes", "defaultModel": "m", "compaction": [1], "steeringMode": {"x": 1}})
    );
}

#[test]
fn settings_with_a_wrong_timeout_value_name_the_setting() {
    let (_t, agent, cwd) = dirs();
    fs::write(
        agent.join("settings.json"),
        r#"{"httpIdleTimeoutMs": "soon"}"#,
    )
    .unwrap();
    let s = SettingsManager::load(&cwd, &agent, true);
    assert_eq!(
        s.http_idle_timeout_ms().map_err(|e| e.to_string()),
        Err("Invalid httpIdleTimeoutMs setting: soon".to_owned())
    );
}

#[test]
fn a_broken_project_settings_file_is_never_written() {
    let (_t, agent, cwd) = dirs();
    let project = cwd.join(".pi/settings.json");
    let broken = "{\n  \"defaultModel\": \"p\"\n  \"x\": 1\n}";
    fs::write(&project, broken).unwrap();
    let mut s = SettingsManager::load(&cwd, &agent, true);
    let errors = s.drain_errors();
    assert_eq!(errors.len(), 1);
    let diag = errors[0].diagnostic();
    assert!(
        diag.starts_with(&format!("Invalid settings file {}: ", project.display())),
        "{diag}"
    );
    assert!(diag.contains("line 3"), "{diag}");
    s.set_default_model("g");
    assert_eq!(fs::read_to_string(&project).unwrap(), broken);
}

#[test]
fn models_json_with_wrong_types_names_the_file_and_the_place() {
    let (_t, agent, _cwd) = dirs();
    let path = agent.join("models.json");
    let text = r#"{"providers": {"p": {"baseUrl": "u", "api": "openai-completions", "models": [{"id": "m", "contextWindow": "big"}]}}}"#;
    fs::write(&path, text).unwrap();
    let c = ModelsConfig::load(&path);
    let e = c.error.clone().unwrap();
    assert!(e.starts_with("Invalid models.json schema:\n  - "), "{e}");
    assert!(e.contains("providers.p"), "{e}");
    assert!(e.ends_with(&format!("File: {}", path.display())), "{e}");
    assert!(
        c.providers.is_empty(),
        "a broken file is ignored as a whole"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn models_json_syntax_errors_name_file_and_line() {
    let (_t, agent, _cwd) = dirs();
    let path = agent.join("models.json");
    let text = "{\n  \"providers\": {\n    \"p\": {\"baseUrl\": \"u\"}\n    \"q\": {}\n  }\n}";
    fs::write(&path, text).unwrap();
    let e = ModelsConfig::load(&path).error.unwrap();
    assert!(e.starts_with("Failed to parse models.json: "), "{e}");
    assert!(e.contains("line 4"), "{e}");
    assert!(e.ends_with(&format!("File: {}", path.display())), "{e}");
}

#[test]
fn a_broken_auth_json_is_never_overwritten_by_a_new_key() {
    let (_t, agent, _cwd) = dirs();
    let path = agent.join("auth.json");
    for (text, expected) in [
        (
            "{\n  \"anthropic\": {\"type\": \"api_key\", \"key\": \"sk-1\"},\n}",
            "line 3",
        ),
        (
            r#"{"anthropic": {"type": "api_key", "key": 5}}"#,
            "Invalid auth.json credential for provider \"anthropic\"",
        ),
        ("[]", "Invalid auth.json: expected an object"),
    ] {
        fs::write(&path, text).unwrap();
        let mut auth = AuthStorage::open(&path);
        let err = auth.error().unwrap().to_owned();
        assert!(err.contains(expected), "{err}");
        assert!(err.ends_with(&format!("File: {}", path.display())), "{err}");
        assert!(auth.set_api_key("openai", "sk-2").is_err());
        assert!(auth.remove("anthropic").is_err());
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            text,
            "the user's file is kept"
        );
    }
}

fn session_file(dir: &Path, lines: &[&str]) -> std::path::PathBuf {
    let path = dir.join("s.jsonl");
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
const USER: &str = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;

#[test]
fn wrong_headers_are_rejected_and_the_file_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    for header in [
        r#"{"type":"session","version":3,"timestamp":"t","cwd":"/w"}"#,
        r#"{"type":"session","version":3,"id":7,"cwd":"/w"}"#,
        r#"{"type":"sesion","version":3,"id":"s1","cwd":"/w"}"#,
        r#"["session"]"#,
        "not json at all",
    ] {
        let path = session_file(dir.path(), &[header, USER]);
        let before = fs::read(&path).unwrap();
        let err = SessionStore::open(&path, "/w").unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidSession(_)),
            "{header}: {err}"
        );
        assert_eq!(
            err.to_string(),
            format!("Session file is not a valid pi session: {}", path.display())
        );
        assert_eq!(fs::read(&path).unwrap(), before, "{header}");
    }
}

#[test]
fn unknown_entry_types_are_kept_skipped_and_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let future = r#"{"type":"hologram","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","payload":{"deep":true}}"#;
    let future2 =
        r#"{"type":"hologram","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z"}"#;
    let path = session_file(dir.path(), &[HEADER, USER, future, future2]);
    let mut store = SessionStore::open(&path, "/w").unwrap();
    assert_eq!(store.len(), 3);
    let warnings = store.warnings().to_vec();
    assert_eq!(
        warnings.len(),
        1,
        "one warning per unknown type: {warnings:?}"
    );
    assert!(warnings[0].contains("\"hologram\""), "{warnings:?}");
    assert!(
        warnings[0].contains(&format!("{}:3:", path.display())),
        "{warnings:?}"
    );
    let ctx = build_session_context(&store).unwrap();
    assert_eq!(
        ctx.messages.len(),
        1,
        "unknown entries are not part of the context"
    );
    // Appending keeps them: the child hangs below the unknown leaf, the lines stay verbatim.
    store
        .append(EntryKind::SessionInfo {
            name: Some("n".into()),
        })
        .unwrap();
    drop(store);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(future) && text.contains(future2));
    let store = SessionStore::open(&path, "/w").unwrap();
    assert_eq!(store.len(), 4);
    assert_eq!(get_tree(&store).unwrap().len(), 1);
}

#[test]
fn corrupt_lines_anywhere_are_skipped_with_their_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let assistant = r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}"#;
    let path = session_file(
        dir.path(),
        &[
            "garbage before the header",
            HEADER,
            USER,
            "{\"type\":\"message\",\"id\":\"zz\",",
            "\u{0}\u{1}binary",
            assistant,
            &assistant[..40],
        ],
    );
    // A torn last line has no newline.
    let mut bytes = fs::read(&path).unwrap();
    bytes.pop();
    fs::write(&path, &bytes).unwrap();
    let store = SessionStore::open(&path, "/w").unwrap();
    assert_eq!(store.len(), 2);
    let lines: Vec<String> = store
        .warnings()
        .iter()
        .map(|w| w.split(':').nth(1).unwrap_or_default().to_owned())
        .collect();
    assert_eq!(lines, ["1", "4", "5", "7"], "{:?}", store.warnings());
    let ctx = build_session_context(&store).unwrap();
    assert_eq!(ctx.messages.len(), 2);
    // Every byte the user had is still there (the torn line got its newline).
    let after = fs::read(&path).unwrap();
    assert_eq!(&after[..bytes.len()], &bytes[..]);
    assert_eq!(&after[bytes.len()..], b"\n");
}

#[test]
fn a_structurally_valid_line_with_a_bad_entry_shape_does_not_break_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let bad = r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":5}}"#;
    let after = r#"{"type":"session_info","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","name":"kept"}"#;
    let path = session_file(dir.path(), &[HEADER, USER, bad, after]);
    let mut store = SessionStore::open(&path, "/w").unwrap();
    let ctx = build_session_context(&store).unwrap();
    assert_eq!(ctx.messages.len(), 1, "the bad message is skipped");
    assert_eq!(
        pi_coding_agent::storage::session_name(&store)
            .unwrap()
            .as_deref(),
        Some("kept")
    );
    let tree = get_tree(&store).unwrap();
    assert_eq!(tree.len(), 1);
    let entries = store.entries().unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[1].to_line(), bad, "the bad entry is kept verbatim");
    store
        .append(EntryKind::SessionInfo {
            name: Some("n".into()),
        })
        .unwrap();
    assert!(fs::read_to_string(&path).unwrap().contains(bad));
}

#[test]
fn a_line_the_index_accepts_but_json_rejects_does_not_break_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    // Balanced brackets and closed strings (what the cheap index checks), but `tru` is no
    // JSON literal: a hand edit or a flipped bit, never a torn write.
    let odd = r#"{"type":"label","id":"a2","parentId":"a1","targetId":"a1","label":"x","n":tru}"#;
    let label = r#"{"type":"label","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","targetId":"a1","label":"ok"}"#;
    let path = session_file(dir.path(), &[HEADER, USER, odd, label]);
    let store = SessionStore::open(&path, "/w").unwrap();
    assert_eq!(store.len(), 3);
    let labels = pi_coding_agent::storage::labels(&store).unwrap();
    assert_eq!(labels.get("a1").map(String::as_str), Some("ok"));
    let tree = get_tree(&store).unwrap();
    assert_eq!(tree.len(), 1);
    let odd_node = &tree[0].children[0];
    assert_eq!(odd_node.entry.id, "a2");
    assert_eq!(odd_node.entry.kind.type_name(), "label");
    assert_eq!(odd_node.children[0].entry.id, "a3");
    assert_eq!(build_session_context(&store).unwrap().messages.len(), 1);
}
