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

/// The ordered set of listeners. Ids increase with insertion, so the list is sorted by id.
#[derive(Default)]
pub struct ListenerSet {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    entries: Vec<(u64, Listener)>,
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

    /// Adds a listener at the end; returns its id.
    pub fn add(&self, listener: Listener) -> u64 {
        let mut g = self.lock();
        g.next_id += 1;
        let id = g.next_id;
        g.entries.push((id, listener));
        id
    }

    /// Removes a listener; `false` if it was already gone.
    pub fn remove(&self, id: u64) -> bool {
        let mut g = self.lock();
        match g.entries.binary_search_by_key(&id, |(i, _)| *i) {
            Ok(pos) => {
                g.entries.remove(pos);
                true
            }
            Err(_) => false,
        }
    }

    /// Number of listeners.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether there is no listener.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first listener inserted after `after` (JS `Set` iteration step).
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
        let mut after = 0;
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
