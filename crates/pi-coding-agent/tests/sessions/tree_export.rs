//! Session tree, labels, names, export, forks and discovery.

use std::fs;
use std::path::Path;

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantContent, AssistantMessage, Message, StopReason, ToolCall, UserMessage};
use pi_coding_agent::storage::discovery::{find_by_id, looks_like_path, most_recent};
use pi_coding_agent::storage::export::{ExportedTool, HtmlExtras, export_html, export_jsonl};
use pi_coding_agent::storage::fork::{create_branched_session, fork_from};
use pi_coding_agent::storage::{
    EntryKind, SessionStore, build_session_context, get_tree, session_name,
};

fn user(text: &str) -> EntryKind {
    EntryKind::Message {
        message: AgentMessage::from(Message::User(UserMessage::text(text))),
    }
}

fn assistant(text: &str) -> EntryKind {
    let mut a = AssistantMessage::empty("anthropic-messages", "anthropic", "m");
    a.content.push(AssistantContent::text(text));
    a.stop_reason = StopReason::Stop;
    EntryKind::Message {
        message: AgentMessage::from(a),
    }
}

fn label(target: &str, l: Option<&str>) -> EntryKind {
    EntryKind::Label {
        target_id: target.into(),
        label: l.map(str::to_owned),
    }
}

#[test]
fn tree_has_branches_sorted_children_and_latest_labels() {
    let mut s = SessionStore::in_memory("/w");
    let a = s.append(user("a")).unwrap();
    let b = s.append(assistant("b")).unwrap();
    s.branch(&a).unwrap();
    let c = s.append(assistant("c")).unwrap();
    s.append(label(&b, Some("first"))).unwrap();
    s.append(label(&b, Some("second"))).unwrap();
    s.append(label(&c, Some("x"))).unwrap();
    s.append(label(&c, None)).unwrap();
    let tree = get_tree(&s).unwrap();
    assert_eq!(tree.len(), 1);
    let root = &tree[0];
    assert_eq!(root.entry.id, a);
    let kids: Vec<&str> = root.children.iter().map(|n| n.entry.id.as_str()).collect();
    assert_eq!(kids, [b.as_str(), c.as_str()]);
    assert_eq!(root.children[0].label.as_deref(), Some("second"));
    assert_eq!(root.children[1].label, None, "an absent label clears it");
}

#[test]
fn deep_chains_do_not_overflow_the_stack() {
    let mut s = SessionStore::in_memory("/w");
    for i in 0..50_000 {
        s.append(user(&i.to_string())).unwrap();
    }
    let tree = get_tree(&s).unwrap();
    let mut depth = 0;
    let mut node = &tree[0];
    while let Some(next) = node.children.first() {
        depth += 1;
        node = next;
    }
    assert_eq!(depth, 49_999);
}

#[test]
fn session_name_is_the_latest_and_can_be_cleared() {
    let mut s = SessionStore::in_memory("/w");
    assert_eq!(session_name(&s).unwrap(), None);
    s.append(EntryKind::SessionInfo {
        name: Some("one".into()),
    })
    .unwrap();
    s.append(EntryKind::SessionInfo {
        name: Some("two".into()),
    })
    .unwrap();
    assert_eq!(session_name(&s).unwrap().as_deref(), Some("two"));
    s.append(EntryKind::SessionInfo { name: None }).unwrap();
    assert_eq!(session_name(&s).unwrap(), None);
}

#[test]
fn jsonl_export_holds_the_branch_rechained() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionStore::in_memory("/w");
    let a = s.append(user("a")).unwrap();
    s.append(assistant("dropped branch")).unwrap();
    s.branch(&a).unwrap();
    s.append(assistant("kept")).unwrap();
    let out = export_jsonl(&s, Some(&dir.path().join("x.jsonl"))).unwrap();
    let text = fs::read_to_string(out).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["id"], s.session_id());
    assert_eq!(lines[1]["parentId"], serde_json::Value::Null);
    assert_eq!(lines[2]["parentId"], lines[1]["id"]);
    assert!(!text.contains("dropped branch"));
    let reopened = SessionStore::open(&dir.path().join("x.jsonl"), "/w").unwrap();
    assert_eq!(build_session_context(&reopened).unwrap().messages.len(), 2);
}

#[test]
fn html_export_is_self_contained_and_shows_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionStore::create(dir.path(), "/w", None).unwrap();
    s.append(user("question <b>")).unwrap();
    let mut a = AssistantMessage::empty("anthropic-messages", "anthropic", "m");
    a.content
        .push(AssistantContent::Thinking(pi_ai::ThinkingContent {
            thinking: "pondering".into(),
            ..Default::default()
        }));
    let mut args = serde_json::Map::new();
    args.insert("path".into(), "hello.txt".into());
    a.content.push(AssistantContent::ToolCall(ToolCall {
        id: "t1".into(),
        name: "read".into(),
        arguments: args,
        ..Default::default()
    }));
    a.stop_reason = StopReason::ToolUse;
    s.append(EntryKind::Message {
        message: AgentMessage::from(a),
    })
    .unwrap();
    s.append(EntryKind::Message {
        message: AgentMessage::from(Message::ToolResult(pi_ai::ToolResultMessage {
            tool_call_id: "t1".into(),
            tool_name: "read".into(),
            content: vec![pi_ai::UserContent::text("file body")],
            ..Default::default()
        })),
    })
    .unwrap();
    s.append(user("</script><script>window.pwned=1</script><!--"))
        .unwrap();
    let extras = HtmlExtras {
        system_prompt: Some("You are <helpful>.".into()),
        tools: vec![ExportedTool {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: serde_json::json!({"type": "object"}),
        }],
    };
    let out = export_html(&s, Some(&dir.path().join("out.html")), &extras).unwrap();
    let html = fs::read_to_string(out).unwrap();
    // The session travels as JSON inside one script element; no `<` of it is raw, so a message
    // cannot close that element (two closing tags: the data's and the viewer's).
    assert_eq!(html.matches("</script>").count(), 2, "{html}");
    assert!(!html.contains("<b>") && !html.contains("<helpful>"));
    let start = html.find("id=\"pi-session-data\">").unwrap() + "id=\"pi-session-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    assert_eq!(data["header"]["id"], s.session_id());
    assert_eq!(data["leafId"], s.leaf_id().unwrap());
    assert_eq!(data["systemPrompt"], "You are <helpful>.");
    assert_eq!(data["tools"][0]["name"], "read");
    let ids: Vec<&str> = data["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    let stored: Vec<String> = s.entries().unwrap().iter().map(|e| e.id.clone()).collect();
    assert_eq!(ids, stored);
    assert!(
        data["entries"][0]["message"]["content"]
            .to_string()
            .contains("question <b>"),
        "entries are the file's lines, unchanged"
    );
    for needle in [
        "question \\u003cb>",
        "pondering",
        "hello.txt",
        "read",
        "file body",
        s.session_id(),
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    for remote in ["http://", "https://", "<script src", "<link"] {
        assert!(!html.contains(remote), "network asset: {remote}");
    }
    // Default name: pi-session-<file stem>.html (in the working directory).
    let stem = s
        .path()
        .unwrap()
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let expected_default = format!("pi-session-{stem}.html");
    assert!(expected_default.starts_with("pi-session-20"));
}

#[test]
fn branched_session_drops_labels_rechains_and_readds_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionStore::create(dir.path(), "/w", None).unwrap();
    let a = s.append(user("a")).unwrap();
    let l = s.append(label(&a, Some("start"))).unwrap();
    let b = s.append(assistant("b")).unwrap();
    s.append(user("other branch")).unwrap();
    let n = create_branched_session(&s, &b).unwrap();
    assert_ne!(n.session_id(), s.session_id());
    assert_eq!(
        n.header().parent_session.as_deref(),
        Some(s.path().unwrap().to_str().unwrap())
    );
    let ids: Vec<(String, Option<String>, String)> = n
        .index()
        .map(|(i, p, k)| (i.to_owned(), p.map(str::to_owned), k.to_owned()))
        .collect();
    assert_eq!(ids.len(), 3);
    assert_eq!(ids[0], (a.clone(), None, "message".into()));
    assert_eq!(ids[1], (b.clone(), Some(a.clone()), "message".into()));
    assert_eq!(ids[2], (l.clone(), Some(b.clone()), "label".into()));
    assert!(
        n.is_persisted(),
        "it holds an assistant message, so it is written"
    );
}

#[test]
fn fork_copies_every_entry_and_rejects_empty_sources() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = SessionStore::create(&dir.path().join("a"), "/a", None).unwrap();
    s.append(user("x")).unwrap();
    s.append(assistant("y")).unwrap();
    let target = dir.path().join("b");
    let f = fork_from(s.path().unwrap(), &target, "/b").unwrap();
    assert_eq!(f.header().cwd, "/b");
    assert_eq!(f.len(), 2);
    assert!(f.path().unwrap().starts_with(&target));
    let empty = dir.path().join("empty.jsonl");
    fs::write(&empty, "").unwrap();
    assert_eq!(
        fork_from(&empty, &target, "/b").unwrap_err().to_string(),
        format!(
            "Cannot fork: source session file is empty or invalid: {}",
            empty.display()
        )
    );
}

#[test]
fn discovery_finds_the_most_recent_and_ids_by_prefix() {
    let root = tempfile::tempdir().unwrap();
    let d1 = root.path().join("--p1--");
    let d2 = root.path().join("--p2--");
    let mut s1 = SessionStore::create(&d1, "/p1", Some("aaaa-1111".into())).unwrap();
    s1.append(assistant("1")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut s2 = SessionStore::create(&d1, "/p1", Some("bbbb-2222".into())).unwrap();
    s2.append(assistant("2")).unwrap();
    let mut s3 = SessionStore::create(&d2, "/p2", Some("cccc-3333".into())).unwrap();
    s3.append(assistant("3")).unwrap();
    fs::write(d1.join("junk.jsonl"), "not json\n").unwrap();
    assert_eq!(most_recent(&d1).as_deref(), s2.path());
    assert_eq!(
        find_by_id(&d1, root.path(), "aaaa-1111").unwrap(),
        s1.path().unwrap()
    );
    assert_eq!(
        find_by_id(&d1, root.path(), "bbbb").unwrap(),
        s2.path().unwrap()
    );
    assert_eq!(
        find_by_id(&d1, root.path(), "cccc").unwrap(),
        s3.path().unwrap()
    );
    assert_eq!(
        find_by_id(&d1, root.path(), "zzzz")
            .unwrap_err()
            .to_string(),
        "No session found matching 'zzzz'"
    );
    assert!(looks_like_path("a/b") && looks_like_path("x.jsonl") && !looks_like_path("abc"));
    let _ = Path::new("");
}
