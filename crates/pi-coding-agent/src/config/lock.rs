//! A cross-process lock beside a file, with `proper-lockfile`'s protocol.
//!
//! pi 0.85.0 locks `settings.json`, `auth.json` and `trust.json` with `proper-lockfile`, so the
//! TypeScript pi and pi-rs must follow the same rules to never corrupt each other's files:
//! - the lock is the directory `<file>.lock`, created atomically (`mkdir`);
//! - on acquisition its mtime is set to the next whole second + 5 ms (`mtime-precision.js`
//!   probe), and while it is held the mtime is refreshed every half stale period, after
//!   checking that it is still the one we wrote: a different mtime or a vanished directory
//!   means another process took the lock over (the lock is *compromised*);
//! - a lock whose mtime is older than the stale period is abandoned: it is removed and taken
//!   (once, without a second stale check);
//! - plain reads and writes ([`FileLock::acquire`]) use a 10 s stale period and try 10 times,
//!   20 ms apart (`auth-storage.js` `acquireLockSyncWithRetry`); the OAuth refresh path
//!   ([`FileLock::acquire_for_refresh`]) uses a 30 s stale period and retries with jittered
//!   exponential backoff (10 ms doubling, at most 1 s before jitter) until 30 s have passed
//!   (`auth-storage.js` `acquireLockAsync`), so a refresh that takes up to its 15 s timeout is
//!   never taken over.
//!
//! Dropping the guard stops the mtime keeper and removes the directory (unless the lock was
//! compromised: then it is someone else's).

use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Attempts of a plain acquisition before giving up.
const MAX_ATTEMPTS: u32 = 10;
/// Pause between plain attempts.
const RETRY_DELAY: Duration = Duration::from_millis(20);
/// The stale period of plain reads and writes (`proper-lockfile`'s default).
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(10);
/// The stale period, and the acquisition deadline, of the OAuth refresh path.
pub(crate) const REFRESH_STALE_AFTER: Duration = Duration::from_secs(30);
/// The largest backoff step of the refresh path before jitter (half of pi's `maxDelayMs`).
const REFRESH_MAX_BASE_DELAY_MS: u64 = 1_000;

/// The text of a lock held by someone else through every attempt (`ELOCKED`).
pub(crate) const LOCK_HELD: &str = "Lock file is already being held";
/// The text of a lock another process took over while we held it (`ECOMPROMISED`).
pub(crate) const LOCK_COMPROMISED: &str = "Unable to update lock within the stale threshold";

/// A held lock; released on drop.
#[derive(Debug)]
pub(crate) struct FileLock {
    lock_dir: PathBuf,
    compromised: Arc<AtomicBool>,
    stop: Option<mpsc::Sender<()>>,
    keeper: Option<std::thread::JoinHandle<()>>,
}

/// The lock directory of `path`: `<path>.lock`.
pub(crate) fn lock_dir_of(path: &Path) -> PathBuf {
    let mut lock_name = path.as_os_str().to_owned();
    lock_name.push(".lock");
    PathBuf::from(lock_name)
}

enum Attempt {
    Acquired(SystemTime),
    Held,
}

impl FileLock {
    /// Locks `path` (which need not exist; its parent must) for a plain read or write: 10 s
    /// stale period, 10 attempts 20 ms apart.
    ///
    /// Errors: `WouldBlock` ([`LOCK_HELD`]) when another holder keeps the lock through every
    /// attempt, or the I/O error of creating the lock directory.
    pub(crate) fn acquire(path: &Path) -> io::Result<FileLock> {
        let lock_dir = lock_dir_of(path);
        for attempt in 1..=MAX_ATTEMPTS {
            match try_lock(&lock_dir, STALE_AFTER)? {
                Attempt::Acquired(mtime) => return Ok(Self::held(lock_dir, mtime, STALE_AFTER)),
                Attempt::Held if attempt < MAX_ATTEMPTS => std::thread::sleep(RETRY_DELAY),
                Attempt::Held => {}
            }
        }
        Err(io::Error::new(io::ErrorKind::WouldBlock, LOCK_HELD))
    }

    /// Locks `path` for an OAuth refresh: 30 s stale period, retried with backoff until 30 s
    /// have passed.
    ///
    /// Errors: as [`FileLock::acquire`].
    pub(crate) async fn acquire_for_refresh(path: &Path) -> io::Result<FileLock> {
        Self::acquire_with(path, REFRESH_STALE_AFTER, REFRESH_STALE_AFTER).await
    }

    /// Locks `path` with a stale period of `stale` (at least 2 s, as `proper-lockfile`
    /// clamps it), retrying with jittered exponential backoff until `deadline` has passed.
    ///
    /// Errors: as [`FileLock::acquire`].
    pub(crate) async fn acquire_with(
        path: &Path,
        stale: Duration,
        deadline: Duration,
    ) -> io::Result<FileLock> {
        let stale = stale.max(Duration::from_secs(2));
        let lock_dir = lock_dir_of(path);
        let give_up = std::time::Instant::now() + deadline;
        let mut retry: u32 = 0;
        loop {
            if let Attempt::Acquired(mtime) = try_lock(&lock_dir, stale)? {
                return Ok(Self::held(lock_dir, mtime, stale));
            }
            let remaining = give_up.saturating_duration_since(std::time::Instant::now());
            if remaining.is_zero() {
                return Err(io::Error::new(io::ErrorKind::WouldBlock, LOCK_HELD));
            }
            let base = 10u64
                .saturating_mul(1u64 << retry.min(20))
                .min(REFRESH_MAX_BASE_DELAY_MS);
            retry = retry.saturating_add(1);
            let jitter = base.saturating_mul(random_u64() % 1_000) / 1_000;
            let delay = Duration::from_millis(base.saturating_add(jitter)).min(remaining);
            tokio::time::sleep(delay).await;
        }
    }

    fn held(lock_dir: PathBuf, mtime: SystemTime, stale: Duration) -> FileLock {
        let compromised = Arc::new(AtomicBool::new(false));
        let (stop, stopped) = mpsc::channel::<()>();
        let keeper = {
            let lock_dir = lock_dir.clone();
            let compromised = compromised.clone();
            let update = (stale / 2).max(Duration::from_secs(1));
            std::thread::Builder::new()
                .name("pi-lock-keeper".into())
                .spawn(move || keep_fresh(&lock_dir, mtime, update, &stopped, &compromised))
                .ok()
        };
        FileLock {
            lock_dir,
            compromised,
            stop: Some(stop),
            keeper,
        }
    }

    /// Whether another process took the lock over while we held it.
    pub(crate) fn is_compromised(&self) -> bool {
        self.compromised.load(Ordering::SeqCst)
    }

    /// Fails with [`LOCK_COMPROMISED`] when the lock was taken over.
    pub(crate) fn check(&self) -> io::Result<()> {
        if self.is_compromised() {
            return Err(io::Error::other(LOCK_COMPROMISED));
        }
        Ok(())
    }
}

/// One `proper-lockfile` acquisition attempt (`acquireLock`).
fn try_lock(lock_dir: &Path, stale: Duration) -> io::Result<Attempt> {
    if let Some(mtime) = create_and_probe(lock_dir)? {
        return Ok(Attempt::Acquired(mtime));
    }
    match std::fs::metadata(lock_dir).and_then(|m| m.modified()) {
        // Removed meanwhile: retry once, skipping the stale check.
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
        Ok(mtime) if !is_stale(mtime, stale) => return Ok(Attempt::Held),
        Ok(_) => match std::fs::remove_dir(lock_dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        },
    }
    Ok(match create_and_probe(lock_dir)? {
        Some(mtime) => Attempt::Acquired(mtime),
        None => Attempt::Held,
    })
}

/// `mkdir`, then the mtime probe: the next whole second + 5 ms. `None` when it exists.
fn create_and_probe(lock_dir: &Path) -> io::Result<Option<SystemTime>> {
    match std::fs::create_dir(lock_dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(None),
        Err(e) => return Err(e),
    }
    let now_ms = now_ms();
    let probe = UNIX_EPOCH + Duration::from_millis(now_ms.div_ceil(1_000) * 1_000 + 5);
    let stamped = set_mtime(lock_dir, probe).and_then(|()| std::fs::metadata(lock_dir)?.modified());
    match stamped {
        Ok(mtime) => Ok(Some(mtime)),
        Err(e) => {
            let _ = std::fs::remove_dir(lock_dir);
            Err(e)
        }
    }
}

fn is_stale(mtime: SystemTime, stale: Duration) -> bool {
    SystemTime::now()
        .checked_sub(stale)
        .is_some_and(|limit| mtime < limit)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn set_mtime(dir: &Path, time: SystemTime) -> io::Result<()> {
    let handle = std::fs::File::open(dir)?;
    handle.set_times(
        std::fs::FileTimes::new()
            .set_modified(time)
            .set_accessed(time),
    )
}

fn random_u64() -> u64 {
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

/// `proper-lockfile`'s `updateLock`: every `update`, check that the mtime is still ours, then
/// set it to now. A vanished directory or a foreign mtime marks the lock compromised; a failed
/// update is retried after 1 s until a stale period has passed since the last good one.
fn keep_fresh(
    lock_dir: &Path,
    mut ours: SystemTime,
    update: Duration,
    stop: &mpsc::Receiver<()>,
    compromised: &AtomicBool,
) {
    let stale = update * 2;
    let mut last_update = std::time::Instant::now();
    let mut delay = update;
    loop {
        match stop.recv_timeout(delay) {
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            _ => return,
        }
        let over_threshold = last_update.elapsed() > stale;
        match std::fs::metadata(lock_dir).and_then(|m| m.modified()) {
            Err(e) if e.kind() == io::ErrorKind::NotFound || over_threshold => {
                compromised.store(true, Ordering::SeqCst);
                return;
            }
            Err(_) => {
                delay = Duration::from_secs(1);
                continue;
            }
            Ok(mtime) if mtime != ours => {
                compromised.store(true, Ordering::SeqCst);
                return;
            }
            Ok(_) => {}
        }
        let now = SystemTime::now();
        match set_mtime(lock_dir, now).and_then(|()| std::fs::metadata(lock_dir)?.modified()) {
            Ok(stamped) => {
                ours = stamped;
                last_update = std::time::Instant::now();
                delay = update;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound || last_update.elapsed() > stale => {
                compromised.store(true, Ordering::SeqCst);
                return;
            }
            Err(_) => delay = Duration::from_secs(1),
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.join();
        }
        if !self.is_compromised() {
            let _ = std::fs::remove_dir(&self.lock_dir);
        }
    }
}

/// Serializes the tests (here and elsewhere in the crate) that depend on lock timing.
#[cfg(test)]
pub(crate) static TIMING: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
        assert_eq!(err.to_string(), LOCK_HELD);
        drop(guard);
        assert!(!dir.path().join("settings.json.lock").exists());
        FileLock::acquire(&file).unwrap();
    }

    #[test]
    fn the_probe_mtime_is_five_ms_past_a_whole_second() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        let _guard = FileLock::acquire(&file).unwrap();
        let mtime = std::fs::metadata(lock_dir_of(&file))
            .unwrap()
            .modified()
            .unwrap();
        let ms = mtime.duration_since(UNIX_EPOCH).unwrap().as_millis();
        assert_eq!(ms % 1_000, 5);
    }

    fn backdate(lock_dir: &Path, by: Duration) {
        set_mtime(lock_dir, SystemTime::now() - by).unwrap();
    }

    #[test]
    fn a_lock_left_by_a_dead_process_is_taken_over_after_its_stale_period() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        let lock_dir = lock_dir_of(&file);
        std::fs::create_dir(&lock_dir).unwrap();
        // 11 s old: stale for plain writes, fresh for the refresh path.
        backdate(&lock_dir, Duration::from_secs(11));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let refresh = rt.block_on(FileLock::acquire_with(
            &file,
            REFRESH_STALE_AFTER,
            Duration::from_millis(100),
        ));
        assert_eq!(refresh.unwrap_err().kind(), io::ErrorKind::WouldBlock);
        let guard = FileLock::acquire(&file).unwrap();
        drop(guard);
        std::fs::create_dir(&lock_dir).unwrap();
        backdate(&lock_dir, Duration::from_secs(31));
        let guard = rt.block_on(FileLock::acquire_for_refresh(&file)).unwrap();
        assert!(!guard.is_compromised());
    }

    #[test]
    fn a_waiting_refresh_gets_the_lock_when_it_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        let guard = FileLock::acquire(&file).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            drop(guard);
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let started = std::time::Instant::now();
        let got = rt.block_on(FileLock::acquire_for_refresh(&file)).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(140));
        release.join().unwrap();
        drop(got);
    }

    #[test]
    fn the_keeper_refreshes_the_mtime_and_detects_a_takeover() {
        let _timing = TIMING.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        let lock_dir = lock_dir_of(&file);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        // The shortest period proper-lockfile allows: stale 2 s, update every 1 s.
        let guard = rt
            .block_on(FileLock::acquire_with(
                &file,
                Duration::from_secs(2),
                Duration::ZERO,
            ))
            .unwrap();
        let first = std::fs::metadata(&lock_dir).unwrap().modified().unwrap();
        std::thread::sleep(Duration::from_millis(1_300));
        let second = std::fs::metadata(&lock_dir).unwrap().modified().unwrap();
        assert_ne!(first, second, "refreshed after half the stale period");
        assert!(!guard.is_compromised());
        // Another process takes the lock over (its own mtime).
        set_mtime(&lock_dir, SystemTime::now() - Duration::from_secs(60)).unwrap();
        std::thread::sleep(Duration::from_millis(1_300));
        assert!(guard.is_compromised());
        assert_eq!(guard.check().unwrap_err().to_string(), LOCK_COMPROMISED);
        drop(guard);
        assert!(
            lock_dir.exists(),
            "a compromised lock is not ours to remove"
        );
    }
}
