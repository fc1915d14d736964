//! Robustness properties of session files (the proptest side of
//! the `fuzz/` session targets):
//!
//! - `probe_line` (the cheap index) never panics, and on every line serde_json accepts as an
//!   object it reads the same `type`, `id` and `parentId` as the full parse;
//! - an entry `SessionEntry::parse` accepts round-trips through `to_line`;
//! - `SessionStore::open` on mutated session files (lines cut, dropped, duplicated, bytes
//!   flipped) never panics; a store that opens can be read (context and tree build) and
//!   appended to, and the file then reopens with the appended entry as its leaf.

use std::fs;
use std::path::Path;

use pi_coding_agent::storage::index::{ProbedLine, probe_line};
use pi_coding_agent::storage::{
    EntryKind, SessionEntry, SessionStore, build_session_context, get_tree,
};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn fixture(name: &str) -> Vec<u8> {
    fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/sessions")
            .join(name),
    )
    .unwrap()
}

const FIXTURES: [&str; 5] = [
    "ts-pi-0.85.0-session_tool_read.jsonl",
    "session-torn-line.jsonl",
    "session-recreated-without-header.jsonl",
    "session-orphaned-toolcall-no-result.jsonl",
    "compaction-kept-boundary-at-tool-result.jsonl",
];

fn fixture_lines() -> Vec<Vec<u8>> {
    FIXTURES
        .iter()
        .flat_map(|f| {
            fixture(f)
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(<[u8]>::to_vec)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The agreement property between the index and serde (see the module doc).
fn check_line(line: &[u8]) {
    let probed = probe_line(line);
    let Ok(text) = std::str::from_utf8(line) else {
        return;
    };
    if let Ok(map) = serde_json::from_str::<Map<String, Value>>(text) {
        let kind = map.get("type").and_then(Value::as_str);
        let id = map.get("id").and_then(Value::as_str);
        match (&probed, kind, id) {
            (ProbedLine::Header, Some("session"), Some(_)) => {}
            (
                ProbedLine::Entry {
                    kind: k,
                    id: i,
                    parent_id,
                },
                Some(kind),
                Some(id),
            ) => {
                assert_eq!((&**k, &**i), (kind, id));
                assert_eq!(
                    parent_id.as_deref(),
                    map.get("parentId").and_then(Value::as_str)
                );
            }
            (ProbedLine::NotAnEntry, k, i) => {
                assert!(k.is_none() || i.is_none(), "{probed:?} of {text}")
            }
            _ => panic!("probe_line says {probed:?} of a valid object line {text}"),
        }
    }
    if let Ok(entry) = SessionEntry::parse(text) {
        let line = entry.to_line();
        let again = SessionEntry::parse(&line).expect("to_line output parses");
        assert_eq!(again.to_line(), line, "to_line is not stable");
    }
}

/// Opens `bytes` as a session file and exercises a resume (see the module doc).
fn check_open(bytes: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    fs::write(&path, bytes).unwrap();
    let Ok(mut store) = SessionStore::open(&path, "/w") else {
        return;
    };
    let _ = store.entries();
    build_session_context(&store).expect("the context of an opened store builds");
    get_tree(&store).expect("the tree of an opened store builds");
    let before = store.len();
    let id = store
        .append(EntryKind::SessionInfo {
            name: Some("fuzz".into()),
        })
        .unwrap();
    assert_eq!(store.len(), before + 1);
    drop(store);
    let reopened = SessionStore::open(&path, "/w").unwrap();
    assert_eq!(reopened.leaf_id(), Some(id.as_str()));
    assert!(reopened.get(&id).is_ok());
}

#[derive(Clone, Debug)]
enum Mutation {
    Cut(usize, usize),
    Drop(usize),
    Duplicate(usize),
    Flip(usize, u8),
    Swap(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(l, at)| Mutation::Cut(l, at)),
        any::<usize>().prop_map(Mutation::Drop),
        any::<usize>().prop_map(Mutation::Duplicate),
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Flip(at, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
    ]
}

fn mutate(file: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = file.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    for m in mutations {
        let n = lines.len();
        match *m {
            Mutation::Cut(l, at) => {
                let line = &mut lines[l % n];
                let keep = at % (line.len() + 1);
                line.truncate(keep);
            }
            Mutation::Drop(l) if n > 1 => {
                lines.remove(l % n);
            }
            Mutation::Duplicate(l) => {
                let copy = lines[l % n].clone();
                lines.insert(l % n, copy);
            }
            Mutation::Flip(at, b) => {
                let total: usize = lines.iter().map(Vec::len).sum();
                if total > 0 {
                    let mut at = at % total;
                    for line in &mut lines {
                        if at < line.len() {
                            line[at] = b;
                            break;
                        }
                        at -= line.len();
                    }
                }
            }
            Mutation::Swap(a, b) => lines.swap(a % n, b % n),
            Mutation::Drop(_) => {}
        }
    }
    lines.join(&b'\n')
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn probe_line_agrees_with_the_full_parse_on_mutated_lines(
        pick in any::<prop::sample::Index>(),
        cut in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        how in 0..3u8,
    ) {
        let lines = fixture_lines();
        let mut line = pick.get(&lines).clone();
        match how {
            0 => line.truncate(cut.index(line.len() + 1)),
            1 => {
                let i = at.index(line.len());
                line[i] = byte;
            }
            _ => {}
        }
        check_line(&line);
    }

    #[test]
    fn probe_line_agrees_with_the_full_parse_on_generated_objects(
        kind in prop::option::of("[a-z_\"\\\\]{0,8}"),
        id in prop::option::of("[a-f0-9\"\\\\é]{0,8}"),
        parent in prop::option::of(prop::option::of("[a-f0-9\"]{0,8}")),
        extra in prop::collection::vec(("[a-zA-Z\"{}]{1,6}", "[ -~]{0,10}"), 0..4),
        spaces in any::<bool>(),
    ) {
        let mut map = Map::new();
        for (k, v) in extra {
            map.insert(k, Value::String(v));
        }
        if let Some(k) = kind {
            map.insert("type".into(), Value::String(k));
        }
        if let Some(i) = id {
            map.insert("id".into(), Value::String(i));
        }
        if let Some(p) = parent {
            map.insert("parentId".into(), p.map_or(Value::Null, Value::String));
        }
        let text = if spaces {
            serde_json::to_string_pretty(&map).unwrap().replace('\n', " ")
        } else {
            serde_json::to_string(&map).unwrap()
        };
        check_line(text.as_bytes());
    }

    #[test]
    fn open_survives_mutated_session_files(
        pick in 0..FIXTURES.len(),
        mutations in prop::collection::vec(mutation(), 1..5),
    ) {
        check_open(&mutate(&fixture(FIXTURES[pick]), &mutations));
    }
}

/// The unmutated fixtures that open also pass the append-and-reopen check.
#[test]
fn fixtures_pass_the_open_check() {
    for f in FIXTURES {
        check_open(&fixture(f));
    }
    for line in fixture_lines() {
        check_line(&line);
    }
}

/// Regression (found by `probe_line_agrees_with_the_full_parse_on_mutated_lines`): parsing
/// removed known keys with `Map::remove`, which under `preserve_order` is a swap-remove, so
/// the unknown fields of an entry or header from a newer pi came back in another order.
#[test]
fn unknown_fields_keep_their_order_through_a_round_trip() {
    let lines = [
        r#"{"type":"hologram","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","z":1,"y":{"b":2,"a":1},"x":[3],"w":"v"}"#,
        r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1},"q":1,"p":2,"o":3}"#,
        r#"{"type":"custom","customType":"ext","data":{"n":1},"m":1,"l":2,"id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:02.000Z"}"#,
    ];
    for line in lines {
        let entry = SessionEntry::parse(line).unwrap();
        assert_eq!(entry.to_line(), line);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let header = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w","k3":1,"k2":2,"k1":3}"#;
    fs::write(&path, format!("{header}\n")).unwrap();
    let store = SessionStore::open(&path, "/w").unwrap();
    assert_eq!(pi_ai::json::to_string(store.header()).unwrap(), header);
}
