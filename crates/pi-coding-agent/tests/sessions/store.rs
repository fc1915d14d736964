//! Session store behaviour on real files: the bug inputs, writing policy, recovery.

use std::fs;
use std::path::{Path, PathBuf};

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantMessage, Message, StopReason, UserMessage};
use pi_coding_agent::messages::convert_to_llm;
use pi_coding_agent::storage::{EntryKind, SessionStore, StoreError, build_session_context};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sessions")
        .join(name)
}

fn copy_to_temp(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    fs::copy(data(name), &p).unwrap();
    (dir, p)
}

fn roles(msgs: &[AgentMessage]) -> Vec<String> {
    msgs.iter().map(|m| m.role().to_owned()).collect()
}

fn user(text: &str) -> EntryKind {
    EntryKind::Message {
        message: AgentMessage::from(Message::User(UserMessage::text(text))),
    }
}

fn assistant(text: &str) -> EntryKind {
    let mut a = AssistantMessage::empty("anthropic-messages", "anthropic", "m");
    a.content.push(pi_ai::AssistantContent::text(text));
    a.stop_reason = StopReason::Stop;
    EntryKind::Message {
        message: AgentMessage::from(a),
    }
}

#[test]
fn torn_line_is_skipped_and_the_rest_loads() {
    let (_d, p) = copy_to_temp("session-torn-line.jsonl");
    let before = fs::read(&p).unwrap();
    let store = SessionStore::open(&p, "/home/user/project").unwrap();
    assert_eq!(
        store.len(),
        6 - 1,
        "5 entries: model_change, user, assistant, toolResult, assistant"
    );
    assert_eq!(store.warnings().len(), 1, "{:?}", store.warnings());
    assert!(
        store.warnings()[0].contains(":5:"),
        "{:?}",
        store.warnings()
    );
    let ctx = build_session_context(&store).unwrap();
    assert_eq!(
        roles(&ctx.messages),
        ["user", "assistant", "toolResult", "assistant"]
    );
    assert_eq!(
        ctx.model,
        Some(("anthropic".into(), "claude-sonnet-4-5".into()))
    );
    // Loading changes nothing on disk.
    assert_eq!(fs::read(&p).unwrap(), before);
}

#[test]
fn a_file_without_header_is_invalid_and_left_untouched() {
    let (_d, p) = copy_to_temp("session-recreated-without-header.jsonl");
    let before = fs::read(&p).unwrap();
    let err = SessionStore::open(&p, "/x").unwrap_err();
    assert!(matches!(err, StoreError::InvalidSession(_)));
    assert_eq!(
        err.to_string(),
        format!("Session file is not a valid pi session: {}", p.display())
    );
    assert_eq!(
        fs::read(&p).unwrap(),
        before,
        "the file is neither rewritten nor deleted"
    );
}

#[test]
fn orphaned_tool_call_stays_in_the_stored_context() {
    // The synthetic "No result provided" result is added at request-build time (pi-ai
    // transform), never stored: the context keeps user → assistant → user.
    let (_d, p) = copy_to_temp("session-orphaned-toolcall-no-result.jsonl");
    let store = SessionStore::open(&p, "/home/user/project").unwrap();
    let ctx = build_session_context(&store).unwrap();
    assert_eq!(roles(&ctx.messages), ["user", "assistant", "user"]);
}

#[test]
fn compaction_boundary_on_a_tool_result_does_not_orphan_it() {
    let (_d, p) = copy_to_temp("compaction-kept-boundary-at-tool-result.jsonl");
    let store = SessionStore::open(&p, "/home/user/project").unwrap();
    let ctx = build_session_context(&store).unwrap();
    // The reference sends compactionSummary → toolResult → assistant → user; the orphan
    // tool result is dropped here.
    assert_eq!(
        roles(&ctx.messages),
        ["compactionSummary", "assistant", "user"]
    );
    let llm = convert_to_llm(&ctx.messages);
    assert!(llm.iter().all(|m| !matches!(m, Message::ToolResult(_))));
}

#[test]
fn nothing_is_written_before_the_first_assistant_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = SessionStore::create(dir.path(), "/w", None).unwrap();
    let path = store.path().unwrap().to_owned();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.ends_with(&format!("_{}.jsonl", store.session_id())),
        "{name}"
    );
    store
        .append(EntryKind::ModelChange {
            provider: "p".into(),
            model_id: "m".into(),
        })
        .unwrap();
    store.append(user("hi")).unwrap();
    assert!(!path.exists());
    store.append(assistant("hello")).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(
        lines[0].starts_with(r#"{"type":"session","version":3,"id":""#),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with(r#"{"type":"model_change","id":""#),
        "{}",
        lines[1]
    );
    assert!(lines[1].contains(r#""parentId":null"#));
    store.append(user("more")).unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap().lines().count(), 5);
    assert!(text.ends_with('\n'));
}

#[test]
fn reopened_sessions_append_and_repair_a_missing_newline() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    let src = fs::read_to_string(data("session-orphaned-toolcall-no-result.jsonl")).unwrap();
    fs::write(&p, src.trim_end_matches('\n')).unwrap();
    let mut store = SessionStore::open(&p, "/home/user/project").unwrap();
    assert_eq!(store.leaf_id(), Some("a0000004"));
    let id = store.append(assistant("ok")).unwrap();
    let text = fs::read_to_string(&p).unwrap();
    assert!(
        text.starts_with(src.trim_end_matches('\n')),
        "existing bytes are never rewritten"
    );
    let last = text.lines().last().unwrap();
    assert!(
        last.contains(&format!(r#""id":"{id}","parentId":"a0000004""#)),
        "{last}"
    );
    let again = SessionStore::open(&p, "/home/user/project").unwrap();
    assert_eq!(again.len(), 5);
    assert!(again.warnings().is_empty());
}

#[test]
fn empty_file_gets_a_header_and_missing_file_is_bound_lazily() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("e.jsonl");
    fs::write(&empty, "").unwrap();
    let s = SessionStore::open(&empty, "/w").unwrap();
    assert!(s.is_persisted());
    let text = fs::read_to_string(&empty).unwrap();
    assert!(text.starts_with(r#"{"type":"session","version":3"#) && text.ends_with('\n'));

    let missing = dir.path().join("m.jsonl");
    let mut s = SessionStore::open(&missing, "/w").unwrap();
    assert!(!s.is_persisted());
    s.append(user("x")).unwrap();
    assert!(!missing.exists());
    s.append(assistant("y")).unwrap();
    assert_eq!(fs::read_to_string(&missing).unwrap().lines().count(), 3);
}

#[test]
fn a_deleted_file_is_written_again_with_its_header() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionStore::create(dir.path(), "/w", None).unwrap();
    s.append(user("a")).unwrap();
    s.append(assistant("b")).unwrap();
    let p = s.path().unwrap().to_owned();
    fs::remove_file(&p).unwrap();
    s.append(user("c")).unwrap();
    let text = fs::read_to_string(&p).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with(r#"{"type":"session""#));
    assert_eq!(s.warnings().len(), 1);
    let again = SessionStore::open(&p, "/w").unwrap();
    assert_eq!(
        roles(&build_session_context(&again).unwrap().messages),
        ["user", "assistant", "user"]
    );
}

#[test]
fn a_replaced_or_truncated_file_is_never_written_into() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionStore::create(dir.path(), "/w", None).unwrap();
    s.append(user("a")).unwrap();
    s.append(assistant("b")).unwrap();
    let p = s.path().unwrap().to_owned();
    // Another program replaces the file (new inode).
    let tmp = dir.path().join("other");
    fs::write(&tmp, "foreign\n").unwrap();
    fs::rename(&tmp, &p).unwrap();
    s.append(user("c")).unwrap();
    assert_eq!(fs::read_to_string(&p).unwrap(), "foreign\n");
    let fresh = s.path().unwrap().to_owned();
    assert_ne!(fresh, p);
    let again = SessionStore::open(&fresh, "/w").unwrap();
    assert_eq!(again.session_id(), s.session_id());
    assert_eq!(
        roles(&build_session_context(&again).unwrap().messages),
        ["user", "assistant", "user"]
    );

    // Truncated below our offset.
    fs::write(&fresh, "").unwrap();
    s.append(assistant("d")).unwrap();
    assert_eq!(fs::read_to_string(&fresh).unwrap(), "");
    let newest = s.path().unwrap().to_owned();
    assert_ne!(newest, fresh);
    let again = SessionStore::open(&newest, "/w").unwrap();
    assert_eq!(again.len(), 4);
}

#[test]
fn unknown_entries_and_fields_survive_a_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("n.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","future":1}"#,
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1},"newField":{"x":[1,2.5]}}"#,
        r#"{"type":"hologram","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","payload":{"deep":true}}"#,
        r#"{"type":"custom","customType":"ext","data":{"n":1},"id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z"}"#,
    ];
    fs::write(&p, lines.join("\n") + "\n").unwrap();
    let s = SessionStore::open(&p, "/w").unwrap();
    let entries = s.entries().unwrap();
    let written: Vec<String> = entries.iter().map(|e| e.to_line()).collect();
    assert_eq!(written, lines[1..]);
    assert_eq!(pi_ai::json::to_string(s.header()).unwrap(), lines[0]);
}

#[test]
fn branching_moves_the_leaf_and_unknown_ids_fail() {
    let mut s = SessionStore::in_memory("/w");
    let a = s.append(user("a")).unwrap();
    s.append(assistant("b")).unwrap();
    s.branch(&a).unwrap();
    s.append(assistant("c")).unwrap();
    let ctx = build_session_context(&s).unwrap();
    assert_eq!(roles(&ctx.messages), ["user", "assistant"]);
    assert_eq!(
        s.branch("nope").unwrap_err().to_string(),
        "Entry nope not found"
    );
    s.reset_leaf();
    assert!(build_session_context(&s).unwrap().messages.is_empty());
}

/// pi 0.85.0 `-p --session-dir` with a `models.json` key command that exits 3: the failed
/// request's assistant message has no content and `errorMessage` before `timestamp` (pi-ai's
/// `lazyStream`), an order pi-rs keeps when it reads and writes the entry.
#[test]
fn a_ts_setup_error_message_round_trips_byte_for_byte() {
    let (_d, p) = copy_to_temp("ts-pi-0.85.0-key-command-error.jsonl");
    let original = fs::read_to_string(&p).unwrap();
    let s = SessionStore::open(&p, "/w").unwrap();
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());
    let mut rewritten = pi_ai::json::to_string(s.header()).unwrap() + "\n";
    for e in s.entries().unwrap() {
        rewritten.push_str(&e.to_line());
        rewritten.push('\n');
    }
    assert_eq!(rewritten, original);
    let ctx = build_session_context(&s).unwrap();
    let Some(AgentMessage::Assistant(a)) = ctx.messages.last() else {
        panic!("the last message is the failed request's")
    };
    assert!(a.error_before_timestamp);
    assert!(a.content.is_empty());
    assert_eq!(a.stop_reason, StopReason::Error);
}

#[test]
fn a_file_written_by_the_ts_pi_round_trips_byte_for_byte_and_continues() {
    let (_d, p) = copy_to_temp("ts-pi-0.85.0-session_tool_read.jsonl");
    let original = fs::read_to_string(&p).unwrap();
    let mut s = SessionStore::open(&p, "/w").unwrap();
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());
    let mut rewritten = pi_ai::json::to_string(s.header()).unwrap() + "\n";
    for e in s.entries().unwrap() {
        rewritten.push_str(&e.to_line());
        rewritten.push('\n');
    }
    assert_eq!(
        rewritten, original,
        "key order and number spelling match the TS pi"
    );
    let ctx = build_session_context(&s).unwrap();
    assert_eq!(
        roles(&ctx.messages),
        ["user", "assistant", "toolResult", "assistant"]
    );
    assert_eq!(
        ctx.model,
        Some(("replay-anthropic".into(), "replay-model".into()))
    );
    assert_eq!(ctx.thinking_level, "off");
    let leaf = s.leaf_id().unwrap().to_owned();
    s.append(user("and then?")).unwrap();
    let text = fs::read_to_string(&p).unwrap();
    assert!(text.starts_with(&original));
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains(&format!(r#""parentId":"{leaf}""#))
    );
}

/// v1 and v2 files are rewritten as pi 0.85.0's `SessionManager.open` rewrites them: the
/// migrated objects keep pi's key order (`version`, `id`, `parentId`, `firstKeptEntryId`
/// appended; a changed `version` or `role` in place). Expected: the files the TS pi left after
/// opening the same inputs, with the generated 8-hex ids numbered in order of appearance.
#[test]
fn migrated_files_are_rewritten_as_the_ts_pi_rewrites_them() {
    fn numbered_ids(text: &str) -> String {
        let re = regex::Regex::new(r#""([0-9a-f]{8})""#).unwrap();
        let mut seen: Vec<String> = Vec::new();
        re.replace_all(text, |c: &regex::Captures| {
            let id = c[1].to_owned();
            let n = match seen.iter().position(|s| *s == id) {
                Some(n) => n,
                None => {
                    seen.push(id);
                    seen.len() - 1
                }
            };
            format!("\"<ID{n}>\"")
        })
        .into_owned()
    }
    for (input, expected, entries) in [
        ("v1.jsonl", "v1.migrated-by-ts-pi-0.85.0.jsonl", 4),
        ("v2.jsonl", "v2.migrated-by-ts-pi-0.85.0.jsonl", 1),
    ] {
        // Their own directory: a v1 file gets new ids whenever it is opened.
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/migration");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(input);
        fs::copy(fixtures.join(input), &path).unwrap();
        let store = SessionStore::open(&path, "/tmp/mig").unwrap();
        let written = fs::read_to_string(&path).unwrap();
        let reference = fs::read_to_string(fixtures.join(expected)).unwrap();
        assert_eq!(numbered_ids(&written), numbered_ids(&reference), "{input}");
        // The store holds what it wrote, and the file reopens byte for byte.
        assert_eq!(store.entries().unwrap().len(), entries, "{input}");
        drop(store);
        SessionStore::open(&path, "/tmp/mig").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), written, "{input}");
    }
}

/// A file the TypeScript pi's own `SessionManager` wrote (`ts-pi-0.85.0-deep-1000.mjs`): tool
/// arguments nesting 1,000 levels (the argument limit), a tool result carrying an image, and a
/// custom entry whose data nests 1,000 levels. Nothing is skipped, everything arrives intact
/// and the file writes back byte for byte.
#[test]
fn a_ts_pi_file_nested_1000_levels_deep_loads_intact() {
    use pi_ai::json_depth::{MAX_ARGUMENT_DEPTH, value_depth};
    use pi_ai::{AssistantContent, UserContent};
    let run = || {
        let (_d, p) = copy_to_temp("ts-pi-0.85.0-deep-1000.jsonl");
        let original = fs::read_to_string(&p).unwrap();
        let s = SessionStore::open(&p, "/w").unwrap();
        assert!(s.warnings().is_empty(), "{:?}", s.warnings());
        let entries = s.entries().unwrap();
        assert_eq!(entries.len(), 4);
        let mut rewritten = pi_ai::json::to_string(s.header()).unwrap() + "\n";
        for e in entries.iter() {
            rewritten.push_str(&e.to_line());
            rewritten.push('\n');
        }
        assert_eq!(rewritten, original);
        match &entries[3].kind {
            EntryKind::Custom {
                data: Some(data), ..
            } => assert_eq!(value_depth(data), 1_000),
            other => panic!("{other:?}"),
        }
        let ctx = build_session_context(&s).unwrap();
        assert_eq!(roles(&ctx.messages), ["user", "assistant", "toolResult"]);
        let Some(AgentMessage::Assistant(a)) = ctx.messages.get(1) else {
            panic!("no assistant message")
        };
        let [AssistantContent::ToolCall(call)] = a.content.as_slice() else {
            panic!("{:?}", a.content)
        };
        let arguments = serde_json::Value::Object(call.arguments.clone());
        assert_eq!(value_depth(&arguments), MAX_ARGUMENT_DEPTH);
        let Some(AgentMessage::ToolResult(r)) = ctx.messages.get(2) else {
            panic!("no tool result")
        };
        assert!(
            matches!(&r.content[1], UserContent::Image(i) if i.mime_type == "image/png" && i.data.starts_with("iVBORw0KGgo")),
            "{:?}",
            r.content
        );
        pi_ai::json_depth::drop_value(arguments);
    };
    // Deep values are cloned, compared and dropped recursively: give the thread room, as
    // the binary does (8 MiB).
    std::thread::Builder::new()
        .stack_size(8 * 1024 * 1024)
        .spawn(run)
        .unwrap()
        .join()
        .unwrap();
}

/// The session entry points check a caller's id as pi's `SessionManager` does
/// (`assertValidSessionId` in `newSession` and `forkFrom`), with pi's text: an id is part of
/// the file name, so `../x` would write outside the session directory. Nothing is written.
#[test]
fn session_ids_are_checked_at_every_entry() {
    use pi_coding_agent::storage::fork::fork_from_with_id;
    let dir = tempfile::tempdir().unwrap();
    let text = "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";
    for bad in [
        "",
        "../escape",
        "a/b",
        ".hidden",
        "trailing-",
        "sp ace",
        "é",
    ] {
        let e = SessionStore::create(dir.path(), "/w", Some(bad.into())).unwrap_err();
        assert!(matches!(e, StoreError::InvalidSessionId), "{bad:?}");
        assert_eq!(e.to_string(), text);
    }
    for good in ["a", "a.b-c_1", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"] {
        let s = SessionStore::create(dir.path(), "/w", Some(good.into())).unwrap();
        assert_eq!(s.header().id, good);
    }
    let (_src_dir, src) = copy_to_temp("ts-pi-0.85.0-session_tool_read.jsonl");
    let target = dir.path().join("forks");
    fs::create_dir(&target).unwrap();
    let e = fork_from_with_id(&src, &target, "/w", Some("../../escape".into())).unwrap_err();
    assert_eq!(e.to_string(), text);
    // The source is checked first, as in pi.
    let missing = dir.path().join("missing.jsonl");
    let e = fork_from_with_id(&missing, &target, "/w", Some("../x".into())).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Cannot fork: source session file is empty or invalid")
    );
    assert_eq!(fs::read_dir(&target).unwrap().count(), 0);
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only the forks directory"
    );
    let forked = fork_from_with_id(&src, &target, "/w", Some("fork-1".into())).unwrap();
    assert_eq!(forked.header().id, "fork-1");
}
