//! Best-effort parsing of streamed (incomplete) JSON: pi's `parseStreamingJson`.
//!
//! Mirrors pi-ai 0.85.1 `utils/json-parse.js`. Tool-call arguments arrive as JSON
//! fragments; after each fragment the partial message shows the best parse so far:
//!
//! 1. empty or whitespace-only text → `{}`;
//! 2. otherwise the first success of: strict parse; strict parse of the **repaired** text
//!    (only if repair changed it); lenient partial parse of the raw text; of the repaired text;
//! 3. `{}`.
//!
//! Repair touches string literals only: raw control characters are escaped, a backslash
//! before an invalid escape (or at the end) is doubled. The lenient parse closes open
//! strings, arrays and objects and drops incomplete tokens (see the `lenient` module for the
//! exact rules of the `partial-json` package pi uses; note it trims the whole text first, so
//! an unterminated string loses its trailing spaces until more text arrives).
//!
//! Differences from pi, deliberate: unpaired UTF-16 surrogate escapes (`"\ud83d"`) are dropped
//! (Rust strings cannot hold them); [`PartialJsonParser::finish`] offers the strict final parse
//! pi lacks, rejecting concatenated objects and truncated text (see earendil-works/pi#5964); arguments nested deeper than
//! [`MAX_ARGUMENT_DEPTH`] are `{}` while streaming and refused at the end. pi re-parses the whole
//! text for every fragment (quadratic in the number of fragments); [`PartialJsonState`] updates
//! the value in place, so a stream costs time linear in its text (see [`EXACT_BYTES`] for the
//! one place where a partial value may lag).

mod incremental;
mod lenient;
mod repair;

use serde_json::{Map, Value};

use crate::json_depth::{MAX_ARGUMENT_DEPTH, exceeds_depth};

pub use incremental::{EXACT_BYTES, PartialJsonParser, PartialJsonState};
pub(crate) use repair::{drop_lone_surrogate_escapes, js_trim};

/// Why the strict final parse ([`PartialJsonParser::finish`]) rejected the arguments. The
/// texts are written for the model (they end a sentence that names the tool).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FinishError {
    /// Not exactly one complete JSON value, even after repair (truncated, concatenated,
    /// malformed).
    #[error("its arguments are not exactly one valid JSON object")]
    Invalid,
    /// Valid JSON, but not an object.
    #[error("its arguments are not a JSON object")]
    NotAnObject,
    /// Nested deeper than the limit ([`crate::json_depth::MAX_ARGUMENT_DEPTH`]).
    #[error("its arguments nest deeper than {limit} levels, the limit")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
}

/// pi's `parseJsonWithRepair` (used on whole SSE payloads): a strict parse, else a strict parse
/// of the repaired text (only when repair changed it); `None` when both fail.
pub fn parse_json_with_repair(text: &str) -> Option<Value> {
    repair::strict_parse(text).or_else(|| {
        let repaired = repair::repair_json(text);
        (repaired != text)
            .then(|| repair::strict_parse(&repaired))
            .flatten()
    })
}

/// `parseStreamingJson` as a map: the result when it is an object, else `{}` (a tool call's
/// arguments are always an object; pi would pass a top-level array or scalar through).
pub fn parse_streaming_json(text: &str) -> Map<String, Value> {
    match parse_streaming_value(text) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// `parseStreamingJson` returning whatever value the cascade produced (`["par"` → `["par"]`).
/// `{}` for empty input and when every stage fails; a lenient `null` also becomes `{}`.
///
/// Text nested deeper than [`MAX_ARGUMENT_DEPTH`] is `{}` (found in one linear pass, before
/// any parse; such arguments are refused by [`PartialJsonParser::finish`]). pi parses any depth
/// its stack holds.
pub fn parse_streaming_value(text: &str) -> Value {
    if repair::js_trim(text).is_empty() || exceeds_depth(text, MAX_ARGUMENT_DEPTH) {
        return Value::Object(Map::new());
    }
    if let Some(value) = repair::strict_parse(text) {
        return value;
    }
    let repaired = repair::repair_json(text);
    if repaired != text
        && let Some(value) = repair::strict_parse(&repaired)
    {
        return value;
    }
    let lenient = lenient::partial_parse(text).or_else(|_| lenient::partial_parse(&repaired));
    match lenient {
        Ok(Some(value)) => value,
        Ok(None) | Err(_) => Value::Object(Map::new()),
    }
}

#[cfg(test)]
mod tests;
