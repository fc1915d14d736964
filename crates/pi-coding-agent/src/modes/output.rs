//! Where the modes' output goes while the session runs.
//!
//! Session listeners run on the runtime's threads; the caller's stdout is a
//! `&mut dyn Write` owned by the thread that drives the mode. Lines therefore travel over a
//! channel, in emission order, and the driver writes them (each followed by `\n` and a
//! flush, as `console.log` does).

use std::io::Write;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// The sending half, cloned into listeners.
pub type LineSender = UnboundedSender<String>;

/// A line channel.
pub fn line_channel() -> (LineSender, UnboundedReceiver<String>) {
    unbounded_channel()
}

/// Writes one line and flushes; a closed stdout (EPIPE) is ignored, as pi does.
pub fn write_line(out: &mut dyn Write, line: &str) {
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// Writes every line already queued.
pub fn drain(rx: &mut UnboundedReceiver<String>, out: &mut dyn Write) {
    while let Ok(line) = rx.try_recv() {
        write_line(out, &line);
    }
}
