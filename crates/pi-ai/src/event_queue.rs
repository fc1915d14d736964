//! The bounded single-producer, single-consumer queue under [`crate::event_channel`].
//!
//! Built for a stream of small, frequent items (one per SSE delta) whose consumer does real
//! work per item: the consumer takes *everything* queued in one lock (swapping the queue with
//! its own, drained buffer) and then pops items without any synchronization, so the per-item
//! cost is one lock on the producer side and a `VecDeque` pop on the consumer side, and the
//! two tasks wake each other once per batch, not once per item.
//!
//! Back-pressure, no loss: the producer waits ([`Producer::poll_ready`]) while `capacity` items
//! are queued, so at most `capacity` items wait in the queue plus at most `capacity` in the
//! consumer's current batch. Nothing is dropped while the consumer exists; once it is gone
//! (dropped or [`Consumer::close`]d) pushes fail. When the producer is dropped the consumer
//! still receives every queued item, then `None`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// Creates a connected pair holding at most `capacity` (≥ 1) queued items.
pub(crate) fn queue<T>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    let capacity = capacity.max(1);
    let shared = Shared::new(capacity, false);
    (
        Producer {
            shared: Arc::clone(&shared),
            room: capacity,
        },
        Consumer {
            shared,
            batch: VecDeque::new(),
        },
    )
}

struct Shared<T> {
    capacity: usize,
    state: Mutex<State<T>>,
}

struct State<T> {
    items: VecDeque<T>,
    /// The consumer, waiting for an item.
    consumer_waker: Option<Waker>,
    /// The producer, waiting for room.
    producer_waker: Option<Waker>,
    consumer_gone: bool,
    producer_gone: bool,
}

impl<T> Shared<T> {
    fn new(capacity: usize, producer_gone: bool) -> Arc<Self> {
        Arc::new(Shared {
            capacity,
            state: Mutex::new(State {
                items: VecDeque::new(),
                consumer_waker: None,
                producer_waker: None,
                consumer_gone: false,
                producer_gone,
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // Nothing panics while the lock is held but a waker clone; the state stays valid.
        crate::sync::lock(&self.state)
    }
}

/// Stores `cx`'s waker in `slot` unless it already holds one that wakes the same task.
fn register(slot: &mut Option<Waker>, cx: &Context<'_>) {
    match slot {
        Some(w) if w.will_wake(cx.waker()) => {}
        _ => *slot = Some(cx.waker().clone()),
    }
}

/// The sending half.
pub(crate) struct Producer<T> {
    shared: Arc<Shared<T>>,
    /// Items that can be pushed before the queue must be looked at again (the room seen at
    /// the last look minus the pushes since; the consumer only ever makes more room).
    room: usize,
}

impl<T> Producer<T> {
    /// `Ready(true)` when an item can be pushed, `Ready(false)` when the consumer is gone,
    /// `Pending` (waking the task later) while the queue is full.
    pub(crate) fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        if self.room > 0 {
            return Poll::Ready(true);
        }
        let mut s = self.shared.lock();
        if s.consumer_gone {
            return Poll::Ready(false);
        }
        self.room = self.shared.capacity.saturating_sub(s.items.len());
        if self.room > 0 {
            return Poll::Ready(true);
        }
        register(&mut s.producer_waker, cx);
        Poll::Pending
    }

    /// Appends `item` (call after [`Producer::poll_ready`] returned `Ready(true)`; without it
    /// the queue may exceed its capacity). `false` when the consumer is gone (the item is
    /// dropped).
    pub(crate) fn push(&mut self, item: T) -> bool {
        let waker = {
            let mut s = self.shared.lock();
            if s.consumer_gone {
                return false;
            }
            s.items.push_back(item);
            s.consumer_waker.take()
        };
        self.room = self.room.saturating_sub(1);
        if let Some(w) = waker {
            w.wake();
        }
        true
    }

    /// Whether the consumer is gone.
    pub(crate) fn is_closed(&self) -> bool {
        self.shared.lock().consumer_gone
    }
}

impl<T> Drop for Producer<T> {
    fn drop(&mut self) {
        let waker = {
            let mut s = self.shared.lock();
            s.producer_gone = true;
            s.consumer_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T> std::fmt::Debug for Producer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("capacity", &self.shared.capacity)
            .finish_non_exhaustive()
    }
}

/// The receiving half.
pub(crate) struct Consumer<T> {
    shared: Arc<Shared<T>>,
    /// The batch taken from the queue, handed out without locking.
    batch: VecDeque<T>,
}

impl<T> Consumer<T> {
    /// A consumer of `items` whose producer is already gone.
    pub(crate) fn from_items(items: Vec<T>) -> Self {
        Consumer {
            shared: Shared::new(1, true),
            batch: items.into(),
        }
    }

    /// The next item; `None` once the producer is gone and everything was received.
    pub(crate) fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if let Some(item) = self.batch.pop_front() {
            return Poll::Ready(Some(item));
        }
        let waker = {
            let mut s = self.shared.lock();
            if s.items.is_empty() {
                if s.producer_gone {
                    return Poll::Ready(None);
                }
                register(&mut s.consumer_waker, cx);
                return Poll::Pending;
            }
            // Take the whole queue; the producer gets the drained buffer (and its
            // allocation) back.
            std::mem::swap(&mut self.batch, &mut s.items);
            s.producer_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Poll::Ready(self.batch.pop_front())
    }

    /// Stops the producer: later pushes fail, a producer waiting for room is woken.
    pub(crate) fn close(&mut self) {
        let waker = {
            let mut s = self.shared.lock();
            s.consumer_gone = true;
            s.producer_waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

impl<T> Drop for Consumer<T> {
    fn drop(&mut self) {
        self.close();
    }
}

impl<T> std::fmt::Debug for Consumer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field("batch", &self.batch.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::future::poll_fn;
    use std::sync::atomic::{AtomicUsize, Ordering};

    async fn send(p: &mut Producer<u32>, item: u32) -> bool {
        poll_fn(|cx| p.poll_ready(cx)).await && p.push(item)
    }

    async fn recv(c: &mut Consumer<u32>) -> Option<u32> {
        poll_fn(|cx| c.poll_recv(cx)).await
    }

    #[tokio::test]
    async fn items_arrive_in_order_then_none_after_the_producer_is_gone() {
        let (mut p, mut c) = queue(4);
        let producer = tokio::spawn(async move {
            for i in 0..1000 {
                assert!(send(&mut p, i).await);
            }
        });
        let mut got = Vec::new();
        while let Some(i) = recv(&mut c).await {
            got.push(i);
        }
        producer.await.unwrap();
        assert_eq!(got, (0..1000).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_full_queue_makes_the_producer_wait_until_the_consumer_takes_a_batch() {
        let (mut p, mut c) = queue(3);
        let sent = Arc::new(AtomicUsize::new(0));
        let s = Arc::clone(&sent);
        let producer = tokio::spawn(async move {
            for i in 0..10 {
                send(&mut p, i).await;
                s.fetch_add(1, Ordering::SeqCst);
            }
        });
        for _ in 0..5 {
            tokio::task::yield_now().await;
        }
        assert_eq!(sent.load(Ordering::SeqCst), 3, "bounded at the capacity");
        assert_eq!(recv(&mut c).await, Some(0));
        for _ in 0..5 {
            tokio::task::yield_now().await;
        }
        // The consumer holds items 1 and 2 in its batch; the queue refilled to 3.
        assert_eq!(sent.load(Ordering::SeqCst), 6);
        let mut rest = Vec::new();
        while let Some(i) = recv(&mut c).await {
            rest.push(i);
        }
        producer.await.unwrap();
        assert_eq!(rest, (1..10).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn closing_wakes_a_waiting_producer_and_fails_its_pushes() {
        let (mut p, mut c) = queue(1);
        assert!(send(&mut p, 1).await);
        let producer = tokio::spawn(async move {
            let second = send(&mut p, 2).await;
            (second, p.is_closed())
        });
        tokio::task::yield_now().await;
        c.close();
        assert_eq!(producer.await.unwrap(), (false, true));
    }

    #[tokio::test]
    async fn dropping_the_consumer_fails_pushes() {
        let (mut p, c) = queue(8);
        assert!(!p.is_closed());
        drop(c);
        assert!(p.is_closed());
        assert!(!send(&mut p, 1).await);
    }

    #[tokio::test]
    async fn from_items_yields_the_items_then_none() {
        let mut c = Consumer::from_items(vec![7, 8]);
        assert_eq!(recv(&mut c).await, Some(7));
        assert_eq!(recv(&mut c).await, Some(8));
        assert_eq!(recv(&mut c).await, None);
    }

    #[test]
    fn works_across_threads() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        rt.block_on(async {
            let (mut p, mut c) = queue(16);
            let producer = tokio::spawn(async move {
                for i in 0..20_000 {
                    assert!(send(&mut p, i).await);
                }
            });
            let consumer = tokio::spawn(async move {
                let mut next = 0;
                while let Some(i) = recv(&mut c).await {
                    assert_eq!(i, next);
                    next += 1;
                }
                next
            });
            producer.await.unwrap();
            assert_eq!(consumer.await.unwrap(), 20_000);
        });
    }
}
