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

use std::io::Write;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::session::StoreBarrier;

/// One line (without `\n`) and what must be in the session file before it is printed.
pub type Line = (String, StoreBarrier);

/// The sending half, cloned into listeners.
pub type LineSender = UnboundedSender<Line>;

/// A line channel.
pub fn line_channel() -> (LineSender, UnboundedReceiver<Line>) {
    unbounded_channel()
}

/// Writes one line and flushes; a closed stdout (EPIPE) is ignored, as pi does.
pub fn write_line(out: &mut dyn Write, line: &str) {
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// Bytes gathered at most before they are written: bounds what a batch holds while it is
/// built.
const BATCH_BYTES: usize = 256 * 1024;

/// Writes `first` and every line queued behind it, each once its barrier is passed, in one
/// write and one flush per batch rather than per line (a streamed answer queues thousands of
/// short lines faster than a pipe takes one syscall each). Lines are written in order, and
/// what was gathered is written before waiting for a barrier, so nothing sits unwritten
/// behind a wait.
pub async fn write_batch(out: &mut dyn Write, first: Line, rx: &mut UnboundedReceiver<Line>) {
    let mut buf: Vec<u8> = Vec::new();
    let mut next = Some(first);
    while let Some((line, barrier)) = next.take() {
        if !barrier.is_passed() {
            write_out(out, &mut buf);
            barrier.wait().await;
        }
        if line.len() >= BATCH_BYTES {
            // A long line (a finished message) is written from where it is, not copied.
            write_out(out, &mut buf);
            let _ = out.write_all(line.as_bytes());
            buf.push(b'\n');
        } else {
            buf.extend_from_slice(line.as_bytes());
            buf.push(b'\n');
        }
        if buf.len() >= BATCH_BYTES {
            write_out(out, &mut buf);
        }
        next = rx.try_recv().ok();
    }
    write_out(out, &mut buf);
}

/// Writes what `buf` gathered and flushes; a closed stdout (EPIPE) is ignored, as pi does.
fn write_out(out: &mut dyn Write, buf: &mut Vec<u8>) {
    if !buf.is_empty() {
        let _ = out.write_all(buf);
        buf.clear();
    }
    let _ = out.flush();
}

/// Writes every line already queued, each once its barrier is passed.
pub async fn drain(rx: &mut UnboundedReceiver<Line>, out: &mut dyn Write) {
    if let Ok(first) = rx.try_recv() {
        write_batch(out, first, rx).await;
    }
}
