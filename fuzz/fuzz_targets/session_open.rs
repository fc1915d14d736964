//! `SessionStore::open` on arbitrary file bytes, then everything a resume reads.
//!
//! Properties: no panic; an opened store's context, tree, labels and name can be read; a store
//! that opened accepts an append, and the file then reopens with that entry as its leaf.
//!
//! Speed: the store only opens paths, so every input is written to one file that is reused
//! for the whole run, in a directory on tmpfs (`/dev/shm`) when there is one. Creating and
//! removing a temporary directory per input and `fsync` on a disk made this target about
//! 160 executions per second; the file is the same either way (truncated and rewritten).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use pi_coding_agent::storage::{EntryKind, SessionStore, build_session_context, get_tree};

/// The run's scratch directory (removed when the process exits normally).
fn scratch() -> Option<&'static PathBuf> {
    static DIR: OnceLock<Option<(tempfile::TempDir, PathBuf)>> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            tempfile::tempdir_in(shm).or_else(|_| tempfile::tempdir())
        } else {
            tempfile::tempdir()
        }
        .ok()?;
        let path = dir.path().join("s.jsonl");
        Some((dir, path))
    })
    .as_ref()
    .map(|(_, path)| path)
}

fuzz_target!(|data: &[u8]| {
    let Some(path) = scratch() else { return };
    let path = path.as_path();
    if std::fs::write(path, data).is_err() {
        return;
    }
    let Ok(mut store) = SessionStore::open(path, "/w") else {
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
    let reopened = SessionStore::open(path, "/w").expect("a file we appended to reopens");
    assert_eq!(
        reopened.leaf_id(),
        Some(id.as_str()),
        "the appended entry is not the leaf"
    );
    assert!(reopened.get(&id).is_ok());
});
