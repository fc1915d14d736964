//! The event stream container: a single-producer queue of [`AssistantMessageEvent`]s with a
//! final result.
//!
//! Mirrors pi-ai 0.85.1 `EventStream` / `AssistantMessageEventStream` (spec §2.2), with one
//! deliberate difference: the queue is bounded (capacity [`STREAM_CAPACITY`]), so a slow
//! consumer applies back-pressure to the producer instead of growing memory. Dropping the
//! stream cancels the producer (its `CancellationToken`), which aborts the HTTP request.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use futures::Stream;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::event::AssistantMessageEvent;
use crate::types::{AssistantMessage, StopReason};

/// Events buffered between producer and consumer before the producer waits.
pub const STREAM_CAPACITY: usize = 256;

/// The producer side. Pushes after the terminal event are ignored.
#[derive(Debug)]
pub struct EventSink {
    tx: mpsc::Sender<AssistantMessageEvent>,
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
        // `reserve` then `send`: the event is moved once, into the channel's slot.
        match self.tx.reserve().await {
            Ok(permit) => {
                permit.send(event);
                true
            }
            Err(_) => false,
        }
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
    rx: mpsc::Receiver<AssistantMessageEvent>,
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
    let (tx, rx) = mpsc::channel(STREAM_CAPACITY);
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
        let (tx, rx) = mpsc::channel(events.len().max(1));
        for e in events {
            // Capacity equals the number of events: never full.
            let _ = tx.try_send(e);
        }
        AssistantMessageEventStream {
            rx,
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
            error: message,
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
                AssistantMessageEvent::Done { message, .. } => return message,
                AssistantMessageEvent::Error { error, .. } => return error,
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
