//! Where the modes' output goes while the session runs.
//!
//! Session listeners run on the runtime's threads; the caller's stdout is a
//! `&mut dyn Write` owned by the thread that drives the mode. Lines therefore travel over a
//! channel, in emission order, and the driver writes them (each followed by `\n` and a
//! flush, as `console.log` does).

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

/// Writes `line` once its barrier is passed.
pub async fn write_after(out: &mut dyn Write, (line, barrier): Line) {
    barrier.wait().await;
    write_line(out, &line);
}

/// Writes every line already queued, each once its barrier is passed.
pub async fn drain(rx: &mut UnboundedReceiver<Line>, out: &mut dyn Write) {
    while let Ok(line) = rx.try_recv() {
        write_after(out, line).await;
    }
}
