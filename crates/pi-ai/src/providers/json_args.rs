//! Tool-argument JSON for the wire mappers: a per-call buffer of streamed fragments with a
//! best-effort parse after each fragment and a final parse at the block's end, and pi's
//! `parseJsonWithRepair` for whole SSE payloads.
//!
//! Interim: until the shared `partial_json.rs` lands, the partial parse is a strict parse
//! (an incomplete prefix yields `{}`); the final values of complete arguments are exact.

use serde_json::{Map, Value};

/// Raw argument JSON of one streamed tool call.
#[derive(Clone, Debug, Default)]
pub(crate) struct ArgumentBuffer {
    raw: String,
}

impl ArgumentBuffer {
    /// Appends a raw fragment.
    pub fn push(&mut self, fragment: &str) {
        self.raw.push_str(fragment);
    }

    /// Best-effort arguments of the JSON received so far (`{}` when nothing parses).
    pub fn parse_partial(&self) -> Map<String, Value> {
        parse_object(&self.raw)
    }

    /// The final arguments (`{}` when empty or not an object).
    pub fn parse_final(self) -> Map<String, Value> {
        parse_object(&self.raw)
    }
}

fn parse_object(raw: &str) -> Map<String, Value> {
    if raw.trim().is_empty() {
        return Map::new();
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// Parses a complete JSON payload; `Err` carries the parser's message (`Unexpected end of
/// JSON input` for empty input, as JavaScript's `JSON.parse` says).
pub(crate) fn parse_json_with_repair(data: &str) -> Result<Value, String> {
    if data.trim().is_empty() {
        return Err("Unexpected end of JSON input".into());
    }
    serde_json::from_str(data).map_err(|e| e.to_string())
}
