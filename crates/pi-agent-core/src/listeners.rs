//! Listener registry and awaited, in-order delivery.
//!
//! Mirrors pi-agent-core 0.85.1 `Agent.subscribe` / `processEvents` (spec §4.6 "Listener
//! delivery", seed §3): listeners are called in subscription order with `(event, signal)`,
//! each awaited before the next one and before the loop proceeds. Iteration follows JS `Set`
//! semantics: a listener removed before its turn is skipped, one added during a delivery also
//! receives the event. There is no per-listener catch: the first failure (an `Err` or a
//! panic) stops the delivery of that event and is returned.
//!
//! Nothing is queued: a delivery is a plain `async` call chain, so a slow listener delays the
//! next listener and the producer (back-pressure instead of buffering).
//!
//! Cost: the list is copy-on-write (`Arc<[..]>`, rebuilt by `add`/`remove`), so a delivery
//! takes one lock to snapshot it and then walks the snapshot without locking, as long as the
//! set's version did not move; after a change during the delivery it continues from the live
//! list (one lock per listener), which gives the `Set` semantics above.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::error::{ListenerError, guarded};
use crate::event::AgentEvent;

/// An awaited listener: `(event, run signal) → future`. Events are shared (`Arc`) so that
/// delivering one event to N listeners costs N reference-count increments, not N copies.
pub type Listener = Arc<
    dyn Fn(Arc<AgentEvent>, CancellationToken) -> BoxFuture<'static, Result<(), ListenerError>>
        + Send
        + Sync,
>;

/// `(id, listener)` pairs sorted by id (ids increase with insertion).
type Entries = Arc<[(u64, Listener)]>;

/// The ordered set of listeners.
#[derive(Default)]
pub struct ListenerSet {
    inner: Mutex<Inner>,
    /// Bumped (under the lock) by every `add`/`remove`: a delivery whose snapshot carries the
    /// current version knows the snapshot equals the live list.
    version: AtomicU64,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    entries: Entries,
}

impl std::fmt::Debug for ListenerSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenerSet")
            .field("len", &self.lock().entries.len())
            .finish()
    }
}

impl ListenerSet {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Installs a new list; the caller holds the lock.
    fn replace(&self, g: &mut Inner, entries: Vec<(u64, Listener)>) {
        g.entries = entries.into();
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Adds a listener at the end; returns its id. O(listeners) (copy-on-write).
    pub fn add(&self, listener: Listener) -> u64 {
        let mut g = self.lock();
        g.next_id += 1;
        let id = g.next_id;
        let mut entries = Vec::with_capacity(g.entries.len() + 1);
        entries.extend(g.entries.iter().cloned());
        entries.push((id, listener));
        self.replace(&mut g, entries);
        id
    }

    /// Removes a listener; `false` if it was already gone. O(listeners) (copy-on-write).
    pub fn remove(&self, id: u64) -> bool {
        let mut g = self.lock();
        if g.entries.binary_search_by_key(&id, |(i, _)| *i).is_err() {
            return false;
        }
        let entries = g
            .entries
            .iter()
            .filter(|(i, _)| *i != id)
            .cloned()
            .collect();
        self.replace(&mut g, entries);
        true
    }

    /// Number of listeners.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether there is no listener.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The current list and its version.
    fn snapshot(&self) -> (Entries, u64) {
        let g = self.lock();
        (Arc::clone(&g.entries), self.version.load(Ordering::Acquire))
    }

    /// The first listener inserted after `after` in the live list (JS `Set` iteration step).
    fn next_after(&self, after: u64) -> Option<(u64, Listener)> {
        let g = self.lock();
        let pos = match g.entries.binary_search_by_key(&(after + 1), |(i, _)| *i) {
            Ok(p) | Err(p) => p,
        };
        g.entries.get(pos).map(|(i, l)| (*i, Arc::clone(l)))
    }

    /// Delivers `event` to every listener in order, awaiting each. Stops at the first failure
    /// (error or panic) and returns it.
    pub async fn deliver(
        &self,
        event: Arc<AgentEvent>,
        signal: &CancellationToken,
    ) -> Result<(), ListenerError> {
        let (snapshot, version) = self.snapshot();
        // Fast path: walk the snapshot while nobody subscribed or unsubscribed.
        let mut after = 0;
        for (id, listener) in snapshot.iter() {
            if self.version.load(Ordering::Acquire) != version {
                break;
            }
            after = *id;
            let ev = Arc::clone(&event);
            let sig = signal.clone();
            guarded(move || listener(ev, sig)).await?;
        }
        if self.version.load(Ordering::Acquire) == version {
            return Ok(());
        }
        // The set changed during this delivery: continue from the live list.
        while let Some((id, listener)) = self.next_after(after) {
            after = id;
            let ev = Arc::clone(&event);
            let sig = signal.clone();
            guarded(move || listener(ev, sig)).await?;
        }
        Ok(())
    }
}

/// Removes its listener when [`Subscription::unsubscribe`] is called (pi: the function
/// `subscribe` returns). Dropping the handle keeps the listener subscribed.
#[derive(Debug)]
pub struct Subscription {
    set: std::sync::Weak<ListenerSet>,
    id: u64,
}

impl Subscription {
    pub(crate) fn new(set: &Arc<ListenerSet>, id: u64) -> Self {
        Subscription {
            set: Arc::downgrade(set),
            id,
        }
    }

    /// Removes the listener; returns `false` if it was already removed.
    pub fn unsubscribe(&self) -> bool {
        self.set.upgrade().is_some_and(|s| s.remove(self.id))
    }
}
