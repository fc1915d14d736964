//! A cross-process lock beside a file, as `proper-lockfile` makes it.
//!
//! Mirrors the lock pi 0.85.0 takes around `settings.json`, `auth.json` and `trust.json`: the
//! directory `<file>.lock` is created atomically (`mkdir`); acquisition is tried 10 times,
//! 20 ms apart; a lock older than 10 s is stale and taken over. Dropping the guard removes it.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Attempts before giving up.
const MAX_ATTEMPTS: u32 = 10;
/// Pause between attempts.
const RETRY_DELAY: Duration = Duration::from_millis(20);
/// A lock directory older than this is considered abandoned.
const STALE_AFTER: Duration = Duration::from_secs(10);

/// A held lock; released on drop.
#[derive(Debug)]
pub struct FileLock {
    lock_dir: PathBuf,
}

impl FileLock {
    /// Locks `path` (which need not exist; its parent must).
    ///
    /// Errors: `WouldBlock` when another holder keeps the lock through every attempt, or the
    /// I/O error of creating the lock directory.
    pub fn acquire(path: &Path) -> io::Result<FileLock> {
        let mut lock_name = path.as_os_str().to_owned();
        lock_name.push(".lock");
        let lock_dir = PathBuf::from(lock_name);
        for attempt in 1..=MAX_ATTEMPTS {
            match std::fs::create_dir(&lock_dir) {
                Ok(()) => return Ok(FileLock { lock_dir }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if is_stale(&lock_dir) {
                        let _ = std::fs::remove_dir(&lock_dir);
                        continue;
                    }
                    if attempt < MAX_ATTEMPTS {
                        std::thread::sleep(RETRY_DELAY);
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            "Lock file is already being held",
        ))
    }
}

fn is_stale(lock_dir: &Path) -> bool {
    std::fs::metadata(lock_dir)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age > STALE_AFTER)
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.lock_dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_is_exclusive_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let guard = FileLock::acquire(&file).unwrap();
        assert!(dir.path().join("settings.json.lock").is_dir());
        let err = FileLock::acquire(&file).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        drop(guard);
        assert!(!dir.path().join("settings.json.lock").exists());
        FileLock::acquire(&file).unwrap();
    }
}
