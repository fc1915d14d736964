//! The event stream container: a single-producer queue of [`AssistantMessageEvent`]s with a
//! final result.
//!
//! Mirrors pi-ai 0.85.1 `EventStream` / `AssistantMessageEventStream`, with one
//! deliberate difference: the queue is bounded (capacity [`STREAM_CAPACITY`]), so a slow
//! consumer applies back-pressure to the producer instead of growing memory. Dropping the
//! stream cancels the producer (its `CancellationToken`), which aborts the HTTP request.
//!
//! The consumer takes all queued events at once and then hands them out without locking
//! (`event_queue`), so the per-event cost of the hop is one uncontended lock on the producer
//! side and the tasks wake each other once per batch, not once per event.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use futures::Stream;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::event::AssistantMessageEvent;
use crate::event_queue::{Consumer, Producer, queue};
use crate::types::{AssistantMessage, StopReason};

/// Events queued between producer and consumer before the producer waits (the consumer may
/// hold up to as many again in the batch it is working through).
pub const STREAM_CAPACITY: usize = 256;

/// The producer side. Pushes after the terminal event are ignored.
#[derive(Debug)]
pub struct EventSink {
    tx: Producer<AssistantMessageEvent>,
    finished: bool,
}

impl EventSink {
    /// Delivers one event, waiting while the buffer is full. Returns `false` when the consumer
    /// is gone or the stream already finished (the producer should stop).
    pub async fn push(&mut self, event: AssistantMessageEvent) -> bool {
        if self.finished {
            return false;
        }
        if event.is_terminal() {
            self.finished = true;
        }
        // Wait for room first, so the event is moved once, into the queue.
        std::future::poll_fn(|cx| self.tx.poll_ready(cx)).await && self.tx.push(event)
    }

    /// Whether a terminal event was pushed.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Whether the consumer dropped the stream.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// The consumer side: a [`Stream`] of events ending after `done`/`error`, plus
/// [`AssistantMessageEventStream::result`].
#[derive(Debug)]
pub struct AssistantMessageEventStream {
    rx: Consumer<AssistantMessageEvent>,
    finished: bool,
    /// The live accumulator of the events seen so far (a handle, O(1) to keep).
    last_partial: Option<crate::event::PartialMessage>,
    _cancel_on_drop: Option<DropGuard>,
}

/// Creates a connected producer/consumer pair. When `cancel_on_drop` is given, dropping the
/// consumer cancels that token.
pub fn event_channel(
    cancel_on_drop: Option<CancellationToken>,
) -> (EventSink, AssistantMessageEventStream) {
    let (tx, rx) = queue(STREAM_CAPACITY);
    (
        EventSink {
            tx,
            finished: false,
        },
        AssistantMessageEventStream {
            rx,
            finished: false,
            last_partial: None,
            _cancel_on_drop: cancel_on_drop.map(CancellationToken::drop_guard),
        },
    )
}

impl AssistantMessageEventStream {
    /// A stream that yields the given events (which should end with a terminal one).
    pub fn from_events(events: Vec<AssistantMessageEvent>) -> Self {
        AssistantMessageEventStream {
            rx: Consumer::from_items(events),
            finished: false,
            last_partial: None,
            _cancel_on_drop: None,
        }
    }

    /// A stream holding a lone `error` event for `message` (whose `stop_reason` should be
    /// `error` or `aborted`).
    pub fn error_only(message: AssistantMessage) -> Self {
        let reason = if message.stop_reason == StopReason::Aborted {
            StopReason::Aborted
        } else {
            StopReason::Error
        };
        Self::from_events(vec![AssistantMessageEvent::Error {
            reason,
            error: Box::new(message),
        }])
    }

    /// The next event; `None` after the terminal event or when the producer vanished.
    pub async fn next_event(&mut self) -> Option<AssistantMessageEvent> {
        std::future::poll_fn(|cx| self.poll_event(cx)).await
    }

    /// Polls for the next event, keeping the terminal bookkeeping and the partial's handle.
    fn poll_event(&mut self, cx: &mut TaskContext<'_>) -> Poll<Option<AssistantMessageEvent>> {
        if self.finished {
            return Poll::Ready(None);
        }
        let polled = self.rx.poll_recv(cx);
        if let Poll::Ready(ev) = &polled {
            match ev {
                Some(e) if e.is_terminal() => {
                    self.finished = true;
                    self.rx.close();
                }
                Some(e) => {
                    if self.last_partial.is_none()
                        && let Some(p) = e.partial()
                    {
                        self.last_partial = Some(p.clone());
                    }
                }
                None => self.finished = true,
            }
        }
        polled
    }

    /// Drains the stream and returns the final message (`done.message` or `error.error`).
    /// A producer that vanished without a terminal event yields an `error` message
    /// `Stream ended without a terminal event`.
    pub async fn result(mut self) -> AssistantMessage {
        let mut last: Option<crate::event::PartialMessage> = None;
        while let Some(ev) = self.next_event().await {
            match ev {
                AssistantMessageEvent::Done { message, .. } => return *message,
                AssistantMessageEvent::Error { error, .. } => return *error,
                other => {
                    if let Some(p) = other.partial() {
                        last = Some(p.clone());
                    }
                }
            }
        }
        let mut m = last
            .or(self.last_partial.take())
            .map(|p| p.snapshot())
            .unwrap_or_default();
        m.stop_reason = StopReason::Error;
        m.error_message = Some("Stream ended without a terminal event".into());
        m
    }
}

impl Stream for AssistantMessageEventStream {
    type Item = AssistantMessageEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        self.poll_event(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::PartialMessage;
    use crate::types::{AssistantContent, TextContent};
    use futures::StreamExt;

    fn text_partial(text: &str) -> PartialMessage {
        let mut m = AssistantMessage::empty("api", "provider", "model");
        m.content
            .push(AssistantContent::Text(TextContent::new(text)));
        PartialMessage::new(m)
    }

    fn delta(partial: &PartialMessage, d: &str) -> AssistantMessageEvent {
        partial.update(|m| {
            if let Some(AssistantContent::Text(t)) = m.content.first_mut() {
                t.text.push_str(d);
            }
        });
        AssistantMessageEvent::TextDelta {
            content_index: 0,
            delta: d.into(),
            partial: partial.clone(),
        }
    }

    fn text_of(m: &AssistantMessage) -> String {
        match m.content.first() {
            Some(AssistantContent::Text(t)) => t.text.clone(),
            _ => String::new(),
        }
    }

    #[tokio::test]
    async fn events_arrive_in_order_and_the_stream_ends_after_the_terminal_one() {
        let (mut sink, mut stream) = event_channel(None);
        let producer = tokio::spawn(async move {
            let p = text_partial("");
            assert!(
                sink.push(AssistantMessageEvent::Start { partial: p.clone() })
                    .await
            );
            for i in 0..1000 {
                assert!(sink.push(delta(&p, &i.to_string())).await);
            }
            let mut done = p.snapshot();
            done.stop_reason = StopReason::Stop;
            assert!(
                sink.push(AssistantMessageEvent::Done {
                    reason: StopReason::Stop,
                    message: Box::new(done),
                })
                .await
            );
            assert!(sink.is_finished());
            // Pushes after the terminal event are ignored.
            assert!(!sink.push(delta(&p, "late")).await);
        });
        let mut kinds = Vec::new();
        let mut deltas = String::new();
        while let Some(ev) = stream.next_event().await {
            if let AssistantMessageEvent::TextDelta { delta, .. } = &ev {
                deltas.push_str(delta);
            }
            kinds.push(ev.kind());
        }
        producer.await.unwrap();
        assert_eq!(kinds.len(), 1002);
        assert_eq!((kinds[0], kinds[1001]), ("start", "done"));
        assert_eq!(deltas, (0..1000).map(|i| i.to_string()).collect::<String>());
        assert!(stream.next_event().await.is_none());
    }

    #[tokio::test]
    async fn a_slow_consumer_holds_the_producer_at_the_capacity() {
        let (mut sink, mut stream) = event_channel(None);
        let p = text_partial("");
        let pushed = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = std::sync::Arc::clone(&pushed);
        let producer = tokio::spawn(async move {
            for _ in 0..10 * STREAM_CAPACITY {
                if !sink.push(delta(&p, "x")).await {
                    break;
                }
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            pushed.load(std::sync::atomic::Ordering::SeqCst),
            STREAM_CAPACITY
        );
        assert!(stream.next_event().await.is_some());
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        // One batch taken (the capacity), the queue refilled: never more than twice it.
        assert_eq!(
            pushed.load(std::sync::atomic::Ordering::SeqCst),
            2 * STREAM_CAPACITY
        );
        drop(stream);
        producer.await.unwrap();
    }

    #[tokio::test]
    async fn dropping_the_stream_cancels_the_token_and_fails_pushes() {
        let token = CancellationToken::new();
        let (mut sink, stream) = event_channel(Some(token.clone()));
        assert!(!sink.is_closed());
        drop(stream);
        assert!(token.is_cancelled());
        assert!(sink.is_closed());
        assert!(!sink.push(delta(&text_partial(""), "x")).await);
    }

    #[tokio::test]
    async fn a_vanished_producer_yields_an_error_with_the_latest_partial() {
        let (mut sink, stream) = event_channel(None);
        let p = text_partial("a");
        sink.push(AssistantMessageEvent::Start { partial: p.clone() })
            .await;
        sink.push(delta(&p, "b")).await;
        drop(sink);
        // A change after the last event still shows (the partial is shared, as in pi).
        p.update(|m| m.model = "late".into());
        let m = stream.result().await;
        assert_eq!(m.stop_reason, StopReason::Error);
        assert_eq!(
            m.error_message.as_deref(),
            Some("Stream ended without a terminal event")
        );
        assert_eq!(text_of(&m), "ab");
        assert_eq!(m.model, "late");
    }

    #[tokio::test]
    async fn result_after_next_event_consumed_everything_uses_the_partial_seen() {
        let (mut sink, mut stream) = event_channel(None);
        let p = text_partial("");
        sink.push(AssistantMessageEvent::Start { partial: p.clone() })
            .await;
        sink.push(delta(&p, "xyz")).await;
        drop(sink);
        while stream.next_event().await.is_some() {}
        let m = stream.result().await;
        assert_eq!(text_of(&m), "xyz");
        assert_eq!(m.stop_reason, StopReason::Error);
    }

    #[tokio::test]
    async fn from_events_and_the_stream_trait_end_after_the_terminal_event() {
        let p = text_partial("");
        let events = vec![
            AssistantMessageEvent::Start { partial: p.clone() },
            delta(&p, "x"),
            AssistantMessageEvent::Done {
                reason: StopReason::Stop,
                message: Box::new(p.snapshot()),
            },
            delta(&p, "after the end"),
        ];
        let kinds: Vec<_> = AssistantMessageEventStream::from_events(events)
            .map(|e| e.kind())
            .collect()
            .await;
        assert_eq!(kinds, ["start", "text_delta", "done"]);
        let mut aborted = AssistantMessage::empty("api", "provider", "model");
        aborted.stop_reason = StopReason::Aborted;
        aborted.error_message = Some("Request was aborted".into());
        let mut lone = AssistantMessageEventStream::error_only(aborted.clone());
        match lone.next_event().await {
            Some(AssistantMessageEvent::Error { reason, error }) => {
                assert_eq!(reason, StopReason::Aborted);
                assert_eq!(*error, aborted);
            }
            other => panic!("expected a lone error, got {other:?}"),
        }
        assert!(lone.next_event().await.is_none());
    }
}
