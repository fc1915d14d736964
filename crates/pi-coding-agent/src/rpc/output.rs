//! The RPC output channel: every record (responses, events, UI requests, extension errors)
//! goes through one queue to one writer task, so records never interleave mid-line.
//!
//! Mirrors pi-coding-agent 0.85.0 `serializeJsonLine` + `writeRawStdout`: one compact JSON
//! record and a LF per line; the writer flushes after each record.
//!
//! A record may carry a [`StoreBarrier`] ([`Output::send_after`]): the writer writes it, and
//! so everything queued after it, only once the barrier is passed — an event reporting a
//! session entry reaches the client after the entry is in the file (pi's `writeRawStdout`
//! queue runs after the synchronous session append, `dist/core/output-guard.js`).

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::session::StoreBarrier;

/// One queued record: its text (without LF) and what must be written to the session file
/// first.
type Record = (String, StoreBarrier);

/// A cheap, cloneable handle to the writer task. Sending after the writer ended is a no-op.
#[derive(Clone, Debug)]
pub(crate) struct Output {
    tx: mpsc::UnboundedSender<Option<Record>>,
}

impl Output {
    /// Queues one record (JSON text without LF).
    pub(crate) fn send(&self, line: String) {
        self.send_after(line, StoreBarrier::passed());
    }

    /// Queues one record to be written once `barrier` is passed (records queued later wait
    /// behind it, so the order stays).
    pub(crate) fn send_after(&self, line: String, barrier: StoreBarrier) {
        let _ = self.tx.send(Some((line, barrier)));
    }

    /// Ends the writer after the records queued so far (later records are dropped).
    pub(crate) fn close(&self) {
        let _ = self.tx.send(None);
    }

    /// Queues a JSON value as one record (numbers spelled as JavaScript writes them).
    pub(crate) fn send_value(&self, value: &serde_json::Value) {
        if let Ok(line) = pi_ai::json::to_string(value) {
            self.send(line);
        }
    }
}

/// Starts the writer: records sent to the returned [`Output`] are written to `writer`, each
/// followed by LF and a flush. The task ends (after writing everything queued before) at
/// [`Output::close`], once every `Output` clone is dropped, or at the first write error.
pub(crate) fn spawn_writer<W>(writer: W) -> (Output, tokio::task::JoinHandle<()>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Option<Record>>();
    let task = tokio::spawn(async move {
        let mut writer = writer;
        'outer: while let Some(Some((mut line, barrier))) = rx.recv().await {
            barrier.wait().await;
            line.push('\n');
            if writer.write_all(line.as_bytes()).await.is_err() {
                return;
            }
            // Drain what is already queued before flushing (fewer syscalls under load).
            while let Ok(more) = rx.try_recv() {
                let Some((mut more, barrier)) = more else {
                    break 'outer;
                };
                if !barrier.is_passed() {
                    // What is written so far goes out while the entry is being written.
                    if writer.flush().await.is_err() {
                        return;
                    }
                    barrier.wait().await;
                }
                more.push('\n');
                if writer.write_all(more.as_bytes()).await.is_err() {
                    return;
                }
            }
            if writer.flush().await.is_err() {
                return;
            }
        }
        let _ = writer.flush().await;
        let _ = writer.shutdown().await;
    });
    (Output { tx }, task)
}
