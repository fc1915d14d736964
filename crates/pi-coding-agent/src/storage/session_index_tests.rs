//! A session opened through its index gives exactly what a full parse gives: the context, the
//! name, the totals, the leaf, the warnings and (last, loading the prefix) the whole tree;
//! whatever happened to the file or the index in between.

use std::io::Write;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use crate::storage::tree::session_name;
use crate::storage::{SessionStore, build_session_context};

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

/// One generated line.
#[derive(Clone, Debug)]
enum Op {
    User,
    Assistant,
    Model,
    Thinking,
    Name,
    /// A compaction keeping from the entry this many entries back.
    Compaction(usize),
    Label,
    Future,
    /// The next entry's parent is this many entries back.
    Branch(usize),
    Torn,
    Blank,
}

/// Lines for `ops`, entry ids `e<first>…`.
fn lines(ops: &[Op], first: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut n = first;
    let mut back = 1;
    for op in ops {
        let parent = match n.checked_sub(back) {
            Some(p) if n > 0 => format!("\"e{p}\""),
            _ => "null".into(),
        };
        let body = match op {
            Op::User => format!(
                r#""message":{{"role":"user","content":[{{"type":"text","text":"u{n}"}}],"timestamp":1}}"#
            ),
            Op::Assistant => format!(
                r#""message":{{"role":"assistant","content":[{{"type":"text","text":"a{n}"}}],"api":"anthropic-messages","provider":"p","model":"m{}","usage":{{"input":1.1,"output":2,"cacheRead":0.3,"cacheWrite":0,"totalTokens":3,"cost":{{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.7}}}},"stopReason":"stop","timestamp":1}}"#,
                n % 3
            ),
            Op::Model => format!(r#""provider":"p","modelId":"mc{n}""#),
            Op::Thinking => [r#""thinkingLevel":"high""#, r#""thinkingLevel":"low""#][n % 2].into(),
            Op::Name => format!(r#""name":"name {n}""#),
            Op::Compaction(k) => format!(
                r#""summary":"s{n}","firstKeptEntryId":"e{}","tokensBefore":10,"usage":{{"input":5,"output":1}}"#,
                n.saturating_sub(*k)
            ),
            Op::Label => format!(r#""targetId":"e{}","label":"l{n}""#, n / 2),
            Op::Future => r#""data":1"#.into(),
            Op::Branch(k) => {
                back = (*k).max(1);
                continue;
            }
            Op::Torn => {
                out.push(r#"{"type":"message","id":"torn"#.into());
                continue;
            }
            Op::Blank => {
                out.push(String::new());
                continue;
            }
        };
        let kind = match op {
            Op::User | Op::Assistant => "message",
            Op::Model => "model_change",
            Op::Thinking => "thinking_level_change",
            Op::Name => "session_info",
            Op::Compaction(_) => "compaction",
            Op::Label => "label",
            _ => "x-future",
        };
        out.push(format!(
            r#"{{"type":"{kind}","id":"e{n}","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z",{body}}}"#
        ));
        back = 1;
        n += 1;
    }
    out
}

/// The number of entries `ops` write.
fn entries(ops: &[Op]) -> usize {
    ops.iter()
        .filter(|o| !matches!(o, Op::Branch(_) | Op::Torn | Op::Blank))
        .count()
}

fn file_of(lines: &[String]) -> Vec<u8> {
    let mut out = format!("{HEADER}\n").into_bytes();
    for l in lines {
        out.extend_from_slice(l.as_bytes());
        out.push(b'\n');
    }
    out
}

/// A session with a long prefix: model, thinking and name set early, two compactions.
fn base_ops(rounds: usize) -> Vec<Op> {
    let mut ops = vec![Op::Model, Op::Thinking, Op::Name, Op::Future];
    for r in 0..rounds {
        ops.extend([Op::User, Op::Assistant, Op::User, Op::Assistant]);
        if r % 3 == 1 {
            ops.push(Op::Label);
        }
        if r == rounds / 2 {
            ops.extend([Op::Torn, Op::Blank, Op::Model]);
        }
    }
    ops.push(Op::Compaction(4));
    ops.extend([
        Op::User,
        Op::Assistant,
        Op::Compaction(2),
        Op::User,
        Op::Assistant,
    ]);
    ops
}

/// Everything a caller sees of an open, the path shown as `F`.
fn what(store: &SessionStore, path: &Path) -> String {
    let shown = path.display().to_string();
    let ctx = build_session_context(store).map_err(|e| e.to_string());
    let name = session_name(store).map_err(|e| e.to_string());
    let stats = store.entry_stats().map_err(|e| e.to_string());
    let warnings: Vec<String> = store
        .warnings()
        .iter()
        .map(|w| w.replace(&shown, "F"))
        .collect();
    let head = format!(
        "{ctx:?}\nname={name:?}\nstats={stats:?}\nleaf={:?} len={}\nwarnings={warnings:?}",
        store.leaf_id(),
        store.len()
    );
    let index: Vec<String> = store
        .index()
        .map(|(id, parent, kind)| format!("{id}<{parent:?}:{kind}"))
        .collect();
    format!("{head}\nindex={index:?}")
}

/// The outcome of a full parse of `bytes` (no index).
fn full(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ref.jsonl");
    std::fs::write(&path, bytes).unwrap();
    match SessionStore::open_indexed(&path, "/w", None) {
        Ok(store) => what(&store, &path),
        Err(e) => format!(
            "error {}",
            e.to_string().replace(&path.display().to_string(), "F")
        ),
    }
}

/// A session file and an index directory.
struct Case {
    _dir: tempfile::TempDir,
    path: PathBuf,
    index: PathBuf,
}

impl Case {
    fn new(bytes: &[u8]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let index = dir.path().join("cache");
        std::fs::write(&path, bytes).unwrap();
        Case {
            _dir: dir,
            path,
            index,
        }
    }

    /// Opens through the index: its outcome, the full parse of the same bytes, and the window
    /// base it was opened with.
    fn open(&self) -> (String, String, usize) {
        let expected = full(&std::fs::read(&self.path).unwrap());
        match SessionStore::open_indexed(&self.path, "/w", Some(&self.index)) {
            Ok(store) => {
                let base = store.window_base();
                (what(&store, &self.path), expected, base)
            }
            Err(e) => (
                format!(
                    "error {}",
                    e.to_string().replace(&self.path.display().to_string(), "F")
                ),
                expected,
                0,
            ),
        }
    }

    /// Asserts that opening through the index gives the full parse; returns the base.
    fn check(&self, what: &str) -> usize {
        let (got, expected, base) = self.open();
        assert_eq!(got, expected, "{what}");
        base
    }

    fn append(&self, lines: &[String]) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
    }

    fn index_files(&self) -> Vec<PathBuf> {
        std::fs::read_dir(&self.index)
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default()
    }
}

#[test]
fn a_resume_through_the_index_reads_a_window_and_gives_the_full_context() {
    let ops = base_ops(30);
    let n_entries = entries(&ops);
    let case = Case::new(&file_of(&lines(&ops, 0)));
    assert_eq!(case.check("first open (full scan)"), 0);
    assert_eq!(case.index_files().len(), 1);
    let base = case.check("second open (index)");
    assert!(base > n_entries / 2, "window base {base} of {n_entries}");
    // The window alone answered the context, the name and the totals.
    let store = SessionStore::open_indexed(&case.path, "/w", Some(&case.index)).unwrap();
    let ctx = build_session_context(&store).unwrap();
    assert_eq!(ctx.thinking_level, "low");
    assert!(session_name(&store).unwrap().is_some());
    store.entry_stats().unwrap();
    assert!(store.prefix_unloaded());
    // Every prefix id counts as taken for a new id, still without loading the prefix.
    let full_store = SessionStore::open_indexed(&case.path, "/w", None).unwrap();
    for (id, _, _) in full_store.index() {
        assert!(store.slots_maybe_taken(id), "{id}");
    }
    assert!(store.prefix_unloaded());
}

#[test]
fn appends_by_another_program_extend_the_index() {
    let ops = base_ops(20);
    let first = lines(&ops, 0);
    let n = entries(&ops);
    let case = Case::new(&file_of(&first));
    case.check("cold");
    // The TS pi continues the session: the leaf's chain, a new compaction, a name.
    case.append(&lines(&[Op::User, Op::Assistant, Op::Name], n));
    assert!(case.check("appended") > 0);
    case.append(&lines(
        &[
            Op::User,
            Op::Assistant,
            Op::Compaction(1),
            Op::Thinking,
            Op::User,
        ],
        n + 3,
    ));
    assert!(case.check("appended again") > 0);
    // A branch from an entry before the window: the prefix is loaded to resolve it.
    case.append(&lines(&[Op::Branch(60), Op::User, Op::Assistant], n + 8));
    case.check("branched into the prefix");
    case.check("after the branch");
    // A torn last line, repaired by the open.
    case.append(&[r#"{"type":"message","id":"cut"#.to_owned()]);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&case.path)
        .unwrap();
    f.write_all(br#"{"type":"message","id":"cut2""#).unwrap();
    drop(f);
    case.check("torn tail");
    case.check("after the repair");
}

#[test]
fn entries_appended_by_this_store_are_found_on_the_next_resume() {
    let ops = base_ops(12);
    let case = Case::new(&file_of(&lines(&ops, 0)));
    case.check("cold");
    {
        let mut store = SessionStore::open_indexed(&case.path, "/w", Some(&case.index)).unwrap();
        assert!(store.window_base() > 0);
        let kind = crate::storage::SessionEntry::parse(&lines(&[Op::User], 500)[0])
            .unwrap()
            .kind;
        for _ in 0..3 {
            store.append(kind.clone()).unwrap();
        }
        assert!(store.prefix_unloaded());
    }
    assert!(case.check("after appending") > 0);
}

#[test]
fn a_corrupt_index_is_ignored_and_rebuilt() {
    let case = Case::new(&file_of(&lines(&base_ops(15), 0)));
    case.check("cold");
    let index = case.index_files().remove(0);
    let good = std::fs::read(&index).unwrap();
    for at in [
        0,
        9,
        good.len() / 3,
        good.len() / 2,
        good.len() - 5,
        good.len() - 1,
    ] {
        let mut bad = good.clone();
        bad[at] ^= 0x21;
        std::fs::write(&index, &bad).unwrap();
        assert_eq!(case.check(&format!("byte {at} flipped")), 0);
        // The open wrote a good index again.
        assert!(case.check("rebuilt") > 0);
    }
    for bad in [
        &good[..good.len() / 2],
        b"garbage".as_slice(),
        b"".as_slice(),
    ] {
        std::fs::write(&index, bad).unwrap();
        assert_eq!(case.check("cut or garbage"), 0);
    }
}

#[test]
fn a_file_edited_truncated_or_replaced_is_scanned_in_full() {
    let ops = base_ops(25);
    let bytes = file_of(&lines(&ops, 0));
    // Edited in place by another program, same length: a model id changed in the prefix.
    let case = Case::new(&bytes);
    case.check("cold");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let text = String::from_utf8(std::fs::read(&case.path).unwrap()).unwrap();
    let edited = text.replacen("\"modelId\":\"mc0\"", "\"modelId\":\"mX0\"", 1);
    assert_ne!(text, edited);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&case.path)
        .unwrap()
        .write_all(edited.as_bytes())
        .unwrap();
    assert_eq!(case.check("edited in place"), 0);
    // Truncated, at a line end and in a line.
    for cut in [bytes.len() * 3 / 4, bytes.len() / 2 + 7] {
        let case = Case::new(&bytes);
        case.check("cold");
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&case.path)
            .unwrap();
        f.set_len(cut as u64).unwrap();
        drop(f);
        assert_eq!(case.check("truncated"), 0);
    }
    // Another session at the same path: a new file, or the same inode rewritten.
    let other = file_of(&lines(&base_ops(18), 7));
    let case = Case::new(&bytes);
    case.check("cold");
    std::fs::remove_file(&case.path).unwrap();
    std::fs::write(&case.path, &other).unwrap();
    assert_eq!(case.check("replaced by another file"), 0);
    let case = Case::new(&bytes);
    case.check("cold");
    std::fs::write(&case.path, &other).unwrap();
    assert_eq!(case.check("rewritten in place"), 0);
    // The index of another session file copied over this one's.
    let a = Case::new(&bytes);
    let b = Case::new(&other);
    a.check("cold a");
    b.check("cold b");
    let theirs = b.index_files().remove(0);
    let ours = a.index_files().remove(0);
    std::fs::copy(&theirs, &ours).unwrap();
    assert_eq!(a.check("index of another file"), 0);
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => Just(Op::User),
        6 => Just(Op::Assistant),
        1 => Just(Op::Model),
        1 => Just(Op::Thinking),
        1 => Just(Op::Name),
        1 => (0usize..12).prop_map(Op::Compaction),
        1 => Just(Op::Label),
        1 => Just(Op::Future),
        1 => (1usize..15).prop_map(Op::Branch),
        1 => Just(Op::Torn),
        1 => Just(Op::Blank),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random sessions, appended to between opens or with the file cut: every open through
    /// the index gives the full parse.
    #[test]
    fn random_sessions_resume_as_a_full_parse(
        first in prop::collection::vec(op(), 1..80),
        more in prop::collection::vec(prop::collection::vec(op(), 0..12), 0..4),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let mut ops = first;
        ops.push(Op::Compaction(3));
        ops.push(Op::User);
        let case = Case::new(&file_of(&lines(&ops, 0)));
        let mut next = entries(&ops);
        let (got, expected, _) = case.open();
        prop_assert_eq!(got, expected);
        for extra in &more {
            case.append(&lines(extra, next));
            next += entries(extra);
            let (got, expected, _) = case.open();
            prop_assert_eq!(got, expected);
        }
        if let Some(cut) = cut {
            let len = std::fs::metadata(&case.path).unwrap().len();
            let f = std::fs::OpenOptions::new().write(true).open(&case.path).unwrap();
            f.set_len(cut.index(len as usize + 1) as u64).unwrap();
            drop(f);
            let (got, expected, _) = case.open();
            prop_assert_eq!(got, expected);
        }
    }
}
