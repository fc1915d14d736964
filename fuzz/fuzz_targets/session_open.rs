//! `SessionStore::open` on arbitrary file bytes, then everything a resume reads.
//!
//! Properties: no panic; an opened store's context, tree, labels and name can be read; a store
//! that opened accepts an append, and the file then reopens with that entry as its leaf.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_coding_agent::storage::{EntryKind, SessionStore, build_session_context, get_tree};

fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else { return };
    let path = dir.path().join("s.jsonl");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let Ok(mut store) = SessionStore::open(&path, "/w") else {
        return;
    };
    let _ = store.entries();
    build_session_context(&store).expect("the context of an opened store builds");
    get_tree(&store).expect("the tree of an opened store builds");
    pi_coding_agent::storage::labels(&store).expect("labels of an opened store");
    pi_coding_agent::storage::session_name(&store).expect("name of an opened store");
    let before = store.len();
    let id = store
        .append(EntryKind::SessionInfo {
            name: Some("fuzz".into()),
        })
        .expect("append to an opened store");
    assert_eq!(store.len(), before + 1);
    let _ = store.sync();
    drop(store);
    let reopened = SessionStore::open(&path, "/w").expect("a file we appended to reopens");
    assert_eq!(
        reopened.leaf_id(),
        Some(id.as_str()),
        "the appended entry is not the leaf"
    );
    assert!(reopened.get(&id).is_ok());
});
