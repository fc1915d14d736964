//! When an entry an event reports is in the session file, relative to the event.
//!
//! The session delivers `message_end` to its listeners *before* it appends the message to
//! the store (pi 0.85.0 `AgentSession._handleAgentEvent`: listeners, then
//! `sessionManager.appendMessage`), so a listener that forwards the event elsewhere (stdout
//! in json and rpc modes, a socket, a UI's "done" mark) could publish it before the entry is
//! written. pi itself avoids that by accident of its event loop: its output writes are
//! queued promises (`dist/core/output-guard.js`, `writeRawStdout`) that run only after the
//! synchronous append has returned.
//!
//! pi-rs makes it explicit. While a session listener runs for an event whose entry is still
//! to be written, the session holds it as a pending write; a listener takes a [`StoreBarrier`]
//! ([`AgentSession::store_barrier`], or [`Durability::barrier`] from a handle captured
//! without keeping the session alive) and whoever publishes the event waits on it
//! ([`StoreBarrier::wait`], [`StoreBarrier::wait_blocking`]). The barrier is passed once every
//! write pending when it was taken has finished: the entry's `write` returned (and its
//! `fdatasync`, for the entries the store syncs), or the append failed or was skipped (the
//! run then fails with that error; a barrier never waits forever).
//!
//! Taking a barrier when nothing is pending (every event but a persisted `message_end`)
//! costs one atomic load and allocates nothing; the events themselves are not copied.
//!
//! [`AgentSession::store_barrier`]: super::AgentSession::store_barrier

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use tokio::sync::Notify;

#[derive(Debug, Default)]
struct Shared {
    /// How many writes are pending (the lock-free fast path of [`Durability::barrier`]).
    pending_count: AtomicUsize,
    state: Mutex<State>,
    /// Wakes async waiters at every finished write.
    notify: Notify,
    /// Wakes blocking waiters at every finished write.
    cond: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// The ticket of the last write begun (tickets start at 1).
    last: u64,
    /// Tickets begun and not yet finished.
    pending: BTreeSet<u64>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl State {
    fn passed(&self, ticket: u64) -> bool {
        self.pending.first().is_none_or(|&first| first > ticket)
    }
}

/// The session's record of entry writes in progress (a cheap, cloneable handle).
#[derive(Clone, Debug, Default)]
pub struct Durability {
    shared: Arc<Shared>,
}

impl Durability {
    /// A record with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks a write as pending until the returned guard is dropped (written, failed or
    /// skipped alike).
    pub(crate) fn begin(&self) -> PendingWrite {
        let mut st = self.shared.state();
        st.last += 1;
        let ticket = st.last;
        st.pending.insert(ticket);
        self.shared.pending_count.fetch_add(1, Ordering::SeqCst);
        PendingWrite {
            shared: Arc::clone(&self.shared),
            ticket,
        }
    }

    /// A barrier passed once every write pending now has finished.
    pub fn barrier(&self) -> StoreBarrier {
        if self.shared.pending_count.load(Ordering::SeqCst) == 0 {
            return StoreBarrier { wait_for: None };
        }
        let st = self.shared.state();
        if st.pending.is_empty() {
            return StoreBarrier { wait_for: None };
        }
        StoreBarrier {
            wait_for: Some((Arc::clone(&self.shared), st.last)),
        }
    }

    /// Whether a write is pending right now.
    pub fn is_pending(&self) -> bool {
        self.shared.pending_count.load(Ordering::SeqCst) > 0
    }
}

/// A write in progress; dropping it finishes the write.
#[derive(Debug)]
pub(crate) struct PendingWrite {
    shared: Arc<Shared>,
    ticket: u64,
}

impl Drop for PendingWrite {
    fn drop(&mut self) {
        {
            let mut st = self.shared.state();
            st.pending.remove(&self.ticket);
            self.shared.pending_count.fetch_sub(1, Ordering::SeqCst);
        }
        self.shared.notify.notify_waiters();
        self.shared.cond.notify_all();
    }
}

/// A point in the session's writes: passed once every entry write pending when it was taken
/// has finished. Cheap to clone, `Send`, and independent of the session's lifetime.
#[derive(Clone, Debug, Default)]
pub struct StoreBarrier {
    /// `None`: nothing was pending (already passed).
    wait_for: Option<(Arc<Shared>, u64)>,
}

impl StoreBarrier {
    /// A barrier that is already passed.
    pub fn passed() -> Self {
        Self::default()
    }

    /// Whether every write pending when the barrier was taken has finished.
    pub fn is_passed(&self) -> bool {
        match &self.wait_for {
            None => true,
            Some((shared, ticket)) => {
                shared.pending_count.load(Ordering::SeqCst) == 0 || shared.state().passed(*ticket)
            }
        }
    }

    /// Waits until the barrier is passed.
    pub async fn wait(&self) {
        let Some((shared, ticket)) = &self.wait_for else {
            return;
        };
        loop {
            let notified = shared.notify.notified();
            tokio::pin!(notified);
            // Registered before the check, so a write finishing in between still wakes us.
            notified.as_mut().enable();
            if shared.state().passed(*ticket) {
                return;
            }
            notified.await;
        }
    }

    /// Blocks the thread until the barrier is passed (for callers outside an async
    /// context; never call it from inside a session listener, which would wait for itself).
    pub fn wait_blocking(&self) {
        let Some((shared, ticket)) = &self.wait_for else {
            return;
        };
        let mut st = shared.state();
        while !st.passed(*ticket) {
            st = shared.cond.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_barrier_taken_with_nothing_pending_is_passed() {
        let d = Durability::new();
        let b = d.barrier();
        assert!(b.is_passed());
        assert!(b.wait_for.is_none(), "no allocation, no handle");
        b.wait_blocking();
    }

    #[test]
    fn a_barrier_waits_for_the_writes_pending_when_it_was_taken_only() {
        let d = Durability::new();
        let first = d.begin();
        let b1 = d.barrier();
        let second = d.begin();
        let b2 = d.barrier();
        assert!(!b1.is_passed() && !b2.is_passed());
        // The later write finishing first does not pass the earlier barrier.
        drop(second);
        assert!(!b1.is_passed() && !b2.is_passed());
        drop(first);
        assert!(b1.is_passed() && b2.is_passed());
        // A write begun after a barrier does not hold it back.
        let b3 = d.barrier();
        let _third = d.begin();
        assert!(b3.is_passed());
        assert!(!d.barrier().is_passed());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn wait_returns_when_the_write_finishes_on_another_thread() {
        let d = Durability::new();
        let write = d.begin();
        let barrier = d.barrier();
        let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let f = Arc::clone(&finished);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            f.store(true, Ordering::SeqCst);
            drop(write);
        });
        barrier.wait().await;
        assert!(finished.load(Ordering::SeqCst));
        t.join().unwrap();
    }

    #[test]
    fn wait_blocking_returns_when_the_write_finishes_on_another_thread() {
        let d = Durability::new();
        let write = d.begin();
        let barrier = d.barrier();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            drop(write);
        });
        barrier.wait_blocking();
        assert!(barrier.is_passed());
        t.join().unwrap();
    }

    #[test]
    fn a_write_abandoned_by_a_panic_still_passes_the_barrier() {
        let d = Durability::new();
        let d2 = d.clone();
        let barrier = std::thread::spawn(move || {
            let _w = d2.begin();
            let b = d2.barrier();
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _w = _w;
                panic!("append panicked");
            }))
            .unwrap_err();
            b
        })
        .join()
        .unwrap();
        assert!(barrier.is_passed());
        assert!(!d.is_pending());
    }
}
