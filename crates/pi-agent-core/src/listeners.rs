//! Listener registry and awaited, in-order delivery.
//!
//! Mirrors pi-agent-core 0.85.1 `Agent.subscribe` / `processEvents`: listeners are called in
//! subscription order with `(event, signal)`, each awaited before the next one and before the loop
//! proceeds. Iteration follows JS `Set` semantics: a listener removed before its turn is skipped,
//! one added during a delivery also receives the event. There is no per-listener catch: the first
//! failure (an `Err` or a panic) stops the delivery of that event and is returned.
//!
//! Nothing is queued: a delivery ([`Delivery`]) is a future that calls one listener and awaits
//! it before calling the next, so a slow listener delays the next listener and the producer
//! (back-pressure instead of buffering).
//!
//! Cost: the list is copy-on-write (`Arc<[..]>`, rebuilt by `add`/`remove`), so a delivery
//! takes one lock to snapshot it and then walks the snapshot without locking, as long as the
//! set's version did not move; after a change during the delivery it continues from the live
//! list (one lock per listener), which gives the `Set` semantics above.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::error::{HookError, ListenerError, panic_message};
use crate::event::AgentEvent;

/// An awaited listener: `(event, run signal) → future`. Events are shared (`Arc`) so that
/// delivering one event to N listeners costs N reference-count increments, not N copies.
/// The signal is lent (pi passes the run's `AbortSignal`): a listener that needs it after
/// returning its future clones it (cloning a `CancellationToken` locks its tree, which per
/// listener and event was a tenth of the delivery's cost).
pub type Listener = Arc<
    dyn Fn(Arc<AgentEvent>, &CancellationToken) -> BoxFuture<'static, Result<(), ListenerError>>
        + Send
        + Sync,
>;

/// What a listener returns.
type ListenerFuture = BoxFuture<'static, Result<(), ListenerError>>;

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
        crate::sync::lock(&self.inner)
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

    /// The delivery of `event` to every listener in order, each awaited, with `signal`; it
    /// stops at the first failure (error or panic) and returns it. Nothing runs until the
    /// returned future is polled.
    pub fn deliver(
        self: &Arc<Self>,
        event: Arc<AgentEvent>,
        signal: Arc<CancellationToken>,
    ) -> Delivery {
        let (snapshot, version) = self.snapshot();
        Delivery {
            set: Arc::clone(self),
            signal,
            event,
            snapshot,
            version,
            next: 0,
            after: 0,
            live: false,
            pending: None,
            done: false,
        }
    }
}

/// One event's delivery ([`ListenerSet::deliver`]): a future that calls the listeners one at
/// a time, awaiting each listener's future before calling the next.
///
/// Hand-written rather than an `async fn` so that it can be polled once where the event is
/// emitted and only boxed when a listener is still pending (see `Agent`'s sink). A panic in
/// a listener (building or polling its future) is caught and returned as its failure.
#[must_use = "a delivery does nothing unless polled"]
pub struct Delivery {
    set: Arc<ListenerSet>,
    signal: Arc<CancellationToken>,
    event: Arc<AgentEvent>,
    /// The list when the delivery began, walked while the set's version is `version`.
    snapshot: Entries,
    version: u64,
    /// Index of the next listener in `snapshot`.
    next: usize,
    /// Id of the last listener called (the position in the live list).
    after: u64,
    /// Whether the set changed during the delivery (walking the live list from then on).
    live: bool,
    /// The future of the listener being awaited.
    pending: Option<ListenerFuture>,
    done: bool,
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delivery")
            .field("event", &self.event.kind())
            .field("after", &self.after)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl Delivery {
    /// Calls the next listener (JS `Set` order); `None` when there is none left.
    fn call_next(&mut self) -> Option<Result<ListenerFuture, ListenerError>> {
        if !self.live && self.set.version.load(Ordering::Acquire) != self.version {
            self.live = true;
        }
        let live;
        let listener = if self.live {
            let (id, listener) = self.set.next_after(self.after)?;
            self.after = id;
            live = listener;
            &live
        } else {
            let (id, listener) = self.snapshot.get(self.next)?;
            self.next += 1;
            self.after = *id;
            listener
        };
        let event = Arc::clone(&self.event);
        let signal: &CancellationToken = &self.signal;
        Some(
            catch_unwind(AssertUnwindSafe(|| listener(event, signal)))
                .map_err(|p| HookError(panic_message(p))),
        )
    }
}

impl Future for Delivery {
    type Output = Result<(), ListenerError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(Ok(()));
        }
        loop {
            if let Some(fut) = &mut this.pending {
                let polled = catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx)))
                    .unwrap_or_else(|p| Poll::Ready(Err(HookError(panic_message(p)))));
                match polled {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Ok(())) => this.pending = None,
                    Poll::Ready(Err(e)) => {
                        this.pending = None;
                        this.done = true;
                        return Poll::Ready(Err(e));
                    }
                }
            }
            match this.call_next() {
                Some(Ok(fut)) => this.pending = Some(fut),
                Some(Err(e)) => {
                    this.done = true;
                    return Poll::Ready(Err(e));
                }
                None => {
                    this.done = true;
                    return Poll::Ready(Ok(()));
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::Mutex;

    use futures::FutureExt;
    use tokio::sync::oneshot;

    type Log = Arc<Mutex<Vec<String>>>;

    fn logging(log: &Log, name: &'static str) -> Listener {
        let log = Arc::clone(log);
        Arc::new(move |e, _| {
            log.lock().unwrap().push(format!("{name} {}", e.kind()));
            async { Ok(()) }.boxed()
        })
    }

    fn deliver(set: &Arc<ListenerSet>) -> Delivery {
        set.deliver(
            Arc::new(AgentEvent::TurnStart),
            Arc::new(CancellationToken::new()),
        )
    }

    #[tokio::test]
    async fn a_pending_listener_holds_back_the_next_until_it_finishes() {
        let set = Arc::new(ListenerSet::default());
        let log: Log = Arc::default();
        let (tx, rx) = oneshot::channel::<()>();
        let rx = Arc::new(Mutex::new(Some(rx)));
        let l = Arc::clone(&log);
        set.add(Arc::new(move |_, _| {
            let rx = rx.lock().unwrap().take();
            let l = Arc::clone(&l);
            async move {
                if let Some(rx) = rx {
                    let _ = rx.await;
                }
                l.lock().unwrap().push("A done".into());
                Ok(())
            }
            .boxed()
        }));
        set.add(logging(&log, "B"));
        let mut delivery = deliver(&set);
        assert!((&mut delivery).now_or_never().is_none(), "A is waiting");
        assert!(
            log.lock().unwrap().is_empty(),
            "B not called before A finished"
        );
        tx.send(()).unwrap();
        delivery.await.unwrap();
        assert_eq!(*log.lock().unwrap(), ["A done", "B turn_start"]);
    }

    #[tokio::test]
    async fn the_first_failure_or_panic_stops_the_delivery() {
        fn listener(
            f: impl Fn(Arc<AgentEvent>, &CancellationToken) -> ListenerFuture + Send + Sync + 'static,
        ) -> Listener {
            Arc::new(f)
        }
        for failing in [
            listener(|_, _| async { Err(HookError::new("nope")) }.boxed()),
            listener(|_, _| panic!("nope")),
            listener(|_, _| async { panic!("nope") }.boxed()),
        ] {
            let set = Arc::new(ListenerSet::default());
            let log: Log = Arc::default();
            set.add(logging(&log, "A"));
            set.add(failing);
            set.add(logging(&log, "C"));
            let mut delivery = deliver(&set);
            assert_eq!((&mut delivery).await, Err(HookError::new("nope")));
            assert_eq!(*log.lock().unwrap(), ["A turn_start"]);
            // Polled again after it finished: nothing more runs.
            assert_eq!(delivery.await, Ok(()));
            assert_eq!(log.lock().unwrap().len(), 1);
        }
    }

    #[tokio::test]
    async fn changes_during_a_delivery_follow_set_iteration() {
        let set = Arc::new(ListenerSet::default());
        let log: Log = Arc::default();
        let ids: Arc<Mutex<Vec<u64>>> = Arc::default();
        let (s, l, i) = (Arc::downgrade(&set), Arc::clone(&log), Arc::clone(&ids));
        set.add(Arc::new(move |e, _| {
            if let Some(set) = s.upgrade() {
                // Remove C (before its turn) and add D (after everyone).
                let c = i.lock().unwrap()[1];
                set.remove(c);
                i.lock().unwrap().push(set.add(logging(&l, "D")));
            }
            l.lock().unwrap().push(format!("A {}", e.kind()));
            async { Ok(()) }.boxed()
        }));
        ids.lock().unwrap().push(set.add(logging(&log, "B")));
        ids.lock().unwrap().push(set.add(logging(&log, "C")));
        deliver(&set).await.unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            ["A turn_start", "B turn_start", "D turn_start"]
        );
        assert_eq!(set.len(), 3);
        // Removing a listener that already ran (B, during D's turn) changes nothing for this
        // event; the next delivery sees the new list.
        log.lock().unwrap().clear();
        let set2 = Arc::new(ListenerSet::default());
        let (s, l) = (Arc::downgrade(&set2), Arc::clone(&log));
        let first = set2.add(logging(&log, "X"));
        set2.add(Arc::new(move |_, _| {
            if let Some(set) = s.upgrade() {
                set.remove(first);
            }
            l.lock().unwrap().push("Y".into());
            async { Ok(()) }.boxed()
        }));
        set2.add(logging(&log, "Z"));
        deliver(&set2).await.unwrap();
        deliver(&set2).await.unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            ["X turn_start", "Y", "Z turn_start", "Y", "Z turn_start"]
        );
    }

    #[test]
    fn add_and_remove_keep_insertion_order() {
        let set = ListenerSet::default();
        let log: Log = Arc::default();
        let a = set.add(logging(&log, "A"));
        let b = set.add(logging(&log, "B"));
        assert!(b > a);
        assert!(set.remove(a));
        assert!(!set.remove(a));
        assert_eq!(set.len(), 1);
        assert!(!set.is_empty());
        assert!(set.remove(b));
        assert!(set.is_empty());
    }
}
