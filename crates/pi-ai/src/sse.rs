//! Our SSE parser: bytes → events, linear whatever the chunking.
//!
//! (Being written; see the pi-ai core issue.)

/// One dispatched server-sent event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `None` when absent.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last `id:` field seen.
    pub id: Option<String>,
    /// The `retry:` field (digits only).
    pub retry: Option<u64>,
}
