//! Json mode: the session header line, then every session event in the
//! json-mode projection, ending with `agent_settled`.
//!
//! Mirrors pi-coding-agent 0.85.0 `modes/print-mode.js` with `mode: "json"`: the stored
//! session header object comes first (also with `--no-session`), each event is written as
//! it is emitted (`message_update` without `partial` and with `usage`; `toolcall_start`
//! with the call's `id` and `toolName`; see [`AgentSessionEvent::to_json_mode`]). The exit
//! status is 0 even when the final assistant message failed.

use super::output::{LineBody, LineSender};
use crate::session::{AgentSession, AgentSessionEvent};

/// The first stdout line: the session header as stored (`{"type":"session","version":3,…}`).
pub(crate) fn header_line(session: &AgentSession) -> String {
    let store = crate::sync::lock(session.store());
    pi_ai::json::to_string(store.header()).unwrap_or_default()
}

/// Subscribes a listener sending every event to `lines`, to be written by the driver without
/// an intermediate string (a `message_update` with its partial's usage as at the event). A
/// `message_end` line
/// carries the barrier of its entry's append, so the driver prints it once the entry is in
/// the session file.
pub(crate) fn forward_events(session: &AgentSession, lines: LineSender) {
    let durability = session.durability();
    session.subscribe(move |event: &AgentSessionEvent| {
        let body = LineBody::Event(event.clone(), event.live_usage());
        let _ = lines.send((body, durability.barrier()));
        Ok(())
    });
}
