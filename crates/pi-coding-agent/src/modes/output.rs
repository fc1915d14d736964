//! Where the modes' output goes while the session runs.
//!
//! Session listeners run on the runtime's threads; the caller's stdout is a
//! `&mut dyn Write` owned by the thread that drives the mode. Lines therefore travel over a
//! channel, in emission order, and the driver writes them, each followed by `\n`: whatever
//! is queued at once goes out in one write and flush, so the output is as prompt as
//! `console.log`'s without a syscall per line.

//!
//! Each line carries a [`StoreBarrier`]: the driver writes it only once the barrier is
//! passed, so a `message_end` is printed after its entry is in the session file (see
//! [`crate::session::durability`]).

use std::io::{BufWriter, Write};

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use pi_ai::Usage;

use crate::session::{AgentSessionEvent, StoreBarrier};

/// What a line holds: its text, or an event to write in the json-mode projection.
// Lines are moved once, into the channel; boxing the event would allocate for every line.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum LineBody {
    /// The line's text (without `\n`); the tests' plain lines.
    #[cfg(test)]
    Text(String),
    /// An event, written straight to the output when its turn comes (a finished message of
    /// megabytes is then never held as a JSON string as well), with a `message_update`'s
    /// usage as it was at the event ([`AgentSessionEvent::live_usage`]).
    Event(AgentSessionEvent, Option<Usage>),
}

/// One line and what must be in the session file before it is printed.
pub(crate) type Line = (LineBody, StoreBarrier);

/// The sending half, cloned into listeners.
pub(crate) type LineSender = UnboundedSender<Line>;

/// A line channel.
pub(crate) fn line_channel() -> (LineSender, UnboundedReceiver<Line>) {
    unbounded_channel()
}

/// Writes one line and flushes; a closed stdout (EPIPE) is ignored, as pi does.
pub(crate) fn write_line(out: &mut dyn Write, line: &str) {
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// Bytes gathered at most before they are written.
const BATCH_BYTES: usize = 64 * 1024;

/// Writes `first` and every line queued behind it, each once its barrier is passed, with one
/// flush per batch rather than per line (a streamed answer queues thousands of short lines
/// faster than a pipe takes one syscall each). Lines are written in order, and what was
/// gathered is flushed before waiting for a barrier, so nothing sits unwritten behind a wait.
pub(crate) async fn write_batch(
    out: &mut dyn Write,
    first: Line,
    rx: &mut UnboundedReceiver<Line>,
) {
    let mut w = BufWriter::with_capacity(BATCH_BYTES, out);
    let mut next = Some(first);
    while let Some((body, barrier)) = next.take() {
        if !barrier.is_passed() {
            let _ = w.flush();
            barrier.wait().await;
        }
        // A closed stdout (EPIPE) is ignored, as pi does.
        let _ = match &body {
            #[cfg(test)]
            LineBody::Text(line) => w.write_all(line.as_bytes()),
            LineBody::Event(event, usage) => event.write_json_line_with(&mut w, usage.as_ref()),
        };
        let _ = w.write_all(b"\n");
        next = rx.try_recv().ok();
    }
    let _ = w.flush();
}

/// Writes every line already queued, each once its barrier is passed.
pub(crate) async fn drain(rx: &mut UnboundedReceiver<Line>, out: &mut dyn Write) {
    if let Ok(first) = rx.try_recv() {
        write_batch(out, first, rx).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Line {
        (LineBody::Text(s.to_owned()), StoreBarrier::passed())
    }

    #[tokio::test]
    async fn queued_lines_and_events_are_written_in_order_with_one_flush() {
        struct Counting(Vec<u8>, usize);
        impl Write for Counting {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                self.1 += 1;
                Ok(())
            }
        }
        let (tx, mut rx) = line_channel();
        tx.send((
            LineBody::Event(AgentSessionEvent::AgentSettled, None),
            StoreBarrier::passed(),
        ))
        .unwrap();
        tx.send(text("{\"b\":2}")).unwrap();
        let mut out = Counting(Vec::new(), 0);
        write_batch(&mut out, text("{\"a\":1}"), &mut rx).await;
        assert_eq!(
            String::from_utf8(out.0).unwrap(),
            "{\"a\":1}\n{\"type\":\"agent_settled\"}\n{\"b\":2}\n"
        );
        assert_eq!(out.1, 1);
        drain(&mut rx, &mut Counting(Vec::new(), 0)).await;
        assert!(rx.try_recv().is_err());
    }
}
