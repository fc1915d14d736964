//! Per-file serialization of mutations (edit, write).
//!
//! Mirrors pi 0.85.0 `core/tools/file-mutation-queue.ts` (`withFileMutationQueue`): operations
//! on the same file run one after another in call order; operations on different files run in
//! parallel. The key is the file's real path (symlinks resolved), or the absolute path itself
//! while the file does not exist yet. Entries are removed when their last user is done.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

type Queue = Arc<tokio::sync::Mutex<()>>;

static QUEUES: LazyLock<Mutex<HashMap<PathBuf, Queue>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The queue key of `path`: its canonical path, or `path` itself when it cannot be
/// canonicalized (pi only falls back for ENOENT/ENOTDIR and throws otherwise; pi-rs falls back
/// for every error and lets the operation itself report it).
fn queue_key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Removes the map entry once nobody else holds or waits for its queue.
struct Registration {
    key: PathBuf,
    queue: Option<Queue>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let Some(queue) = self.queue.take() else {
            return;
        };
        let mut map = crate::sync::lock(&QUEUES);
        // One reference in the map plus ours: nobody else is queued.
        if Arc::strong_count(&queue) == 2
            && map.get(&self.key).is_some_and(|q| Arc::ptr_eq(q, &queue))
        {
            map.remove(&self.key);
        }
    }
}

/// Runs `operation` once every earlier mutation of the same file has finished, and holds the
/// file's turn until `operation` completes (or is dropped).
pub(crate) async fn with_file_mutation<F, T>(path: &Path, operation: F) -> T
where
    F: Future<Output = T>,
{
    let key = queue_key(path);
    let queue = {
        let mut map = crate::sync::lock(&QUEUES);
        Arc::clone(map.entry(key.clone()).or_default())
    };
    let registration = Registration {
        key,
        queue: Some(Arc::clone(&queue)),
    };
    let turn = queue.lock().await;
    let out = operation.await;
    drop(turn);
    drop(queue);
    drop(registration);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex as StdMutex;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn same_file_operations_never_interleave() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        let log = Arc::new(StdMutex::new(Vec::new()));
        let mut handles = Vec::new();
        for i in 0..8 {
            let log = Arc::clone(&log);
            let file = file.clone();
            handles.push(tokio::spawn(async move {
                with_file_mutation(&file, async {
                    log.lock().unwrap().push(format!("start {i}"));
                    for _ in 0..5 {
                        tokio::task::yield_now().await;
                    }
                    log.lock().unwrap().push(format!("end {i}"));
                })
                .await
            }));
            tokio::task::yield_now().await;
        }
        for h in handles {
            h.await.unwrap();
        }
        let log = log.lock().unwrap();
        for pair in log.chunks(2) {
            let a = pair[0].strip_prefix("start ").unwrap();
            let b = pair[1].strip_prefix("end ").unwrap();
            assert_eq!(a, b, "operations interleaved: {log:?}");
        }
    }

    #[tokio::test]
    async fn symlinked_paths_share_one_queue_and_entries_are_released() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("real.txt");
        std::fs::write(&file, "x").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(queue_key(&link), queue_key(&file));
        assert_eq!(
            queue_key(&dir.path().join("missing")),
            dir.path().join("missing")
        );

        let value = with_file_mutation(&file, async { 7 }).await;
        assert_eq!(value, 7);
        // Other tests may hold queues concurrently; ours must be gone.
        assert!(
            !QUEUES
                .lock()
                .unwrap()
                .contains_key(&std::fs::canonicalize(&file).unwrap())
        );
    }
}
