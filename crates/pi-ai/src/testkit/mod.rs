//! Test helpers shared by every crate's tests (cargo feature `testkit`).
//!
//! - [`SseBuilder`]: writes SSE bodies (`event:`/`data:` frames) from JSON values.
//! - [`EventStreamBuilder`]: writes AWS binary event-stream bodies (Bedrock).
//! - [`ReplayServer`]: a scripted HTTP/1.1 server on raw Tokio TCP, the Rust twin of the
//!   conformance harness's `replay_server.py`: the N-th request gets the N-th [`Reply`]
//!   whatever its route, with chunking, per-event delays, cuts, resets and stalls, and a
//!   request log; [`Reply::load_script`] reads the Python server's `script.json` files.

mod event_stream;
mod replay;
mod script;
mod sse;

pub use event_stream::{EventStreamBuilder, frame as event_stream_frame};
pub use replay::{RecordedRequest, ReplayHandle, ReplayServer, Reply};
pub use script::SCRIPT_DEFAULT_DELAY_MS;
pub use sse::SseBuilder;
