//! Tool-argument JSON for the wire mappers: a per-call buffer of streamed fragments with a
//! best-effort parse after each fragment and a final parse at the block's end, and pi's
//! `parseJsonWithRepair` for whole SSE payloads with JavaScript-like error texts.
//!
//! Built on [`crate::partial_json::PartialJsonState`]: a fragment costs O(fragment), the
//! tool call's arguments in the partial message are updated in place, and they equal pi's
//! `parseStreamingJson` of the text so far.

use serde_json::{Map, Value};

use crate::partial_json::{FinishError, PartialJsonState};
use crate::providers::StreamError;

/// Raw argument JSON of one streamed tool call; its value lives in the tool call's
/// `arguments` in the partial message, which only this buffer writes while the call streams.
#[derive(Clone, Debug, Default)]
pub(crate) struct ArgumentBuffer {
    state: PartialJsonState,
    /// The value of text the message does not show yet ([`ArgumentBuffer::holding`]); it
    /// moves into the message with the next fragment.
    held: Option<Map<String, Value>>,
}

impl ArgumentBuffer {
    /// A buffer already holding `text` whose value the message does not show yet (pi keeps
    /// `{}` until the first delta).
    pub(crate) fn holding(text: &str) -> Self {
        let mut state = PartialJsonState::new();
        let mut held = Map::new();
        state.push_into(text, &mut held);
        ArgumentBuffer {
            state,
            held: Some(held),
        }
    }

    /// The raw text so far.
    pub(crate) fn buffer(&self) -> &str {
        self.state.buffer()
    }

    /// Appends a raw fragment and brings `arguments` (the tool call's arguments, as the
    /// previous push left them) up to date: best-effort arguments of the JSON received so
    /// far (`{}` when nothing parses).
    pub(crate) fn push(&mut self, fragment: &str, arguments: &mut Map<String, Value>) {
        match self.held.take() {
            Some(mut held) => {
                self.state.push_into(fragment, &mut held);
                *arguments = held;
            }
            None => self.state.push_into(fragment, arguments),
        }
    }

    /// The final arguments ([`PartialJsonState::final_arguments`]) from the tool call's
    /// `arguments`: pi's lenient value of the whole text (`{}` when empty) and why the call
    /// must not run when the text is not exactly one JSON object.
    pub(crate) fn finish(
        &mut self,
        arguments: Map<String, Value>,
    ) -> (Map<String, Value>, Option<FinishError>) {
        let value = self.held.take().unwrap_or(arguments);
        self.state.final_arguments(value)
    }

    /// pi's lenient value of the whole text, from the tool call's `arguments`.
    pub(crate) fn lenient(&mut self, arguments: Map<String, Value>) -> Map<String, Value> {
        let value = self.held.take().unwrap_or(arguments);
        self.state.lenient(value)
    }
}

/// `parseJsonWithRepair`; `Err` carries the message of `JSON.parse` on the original text, as
/// Node 22 words it ([`crate::js_json_error`]), as [`StreamError::Json`].
///
/// Text nested deeper than [`crate::json_depth::MAX_DOCUMENT_DEPTH`] fails with
/// `JSON nested deeper than 1064 levels`.
pub(crate) fn parse_json_with_repair(data: &str) -> Result<Value, StreamError> {
    use crate::json_depth::{MAX_DOCUMENT_DEPTH, exceeds_depth};
    if exceeds_depth(data, MAX_DOCUMENT_DEPTH) {
        return Err(StreamError::Json(
            crate::json_depth::DeepJsonError::TooDeep {
                limit: MAX_DOCUMENT_DEPTH,
            }
            .to_string(),
        ));
    }
    if let Some(v) = crate::partial_json::parse_json_with_repair(data) {
        return Ok(v);
    }
    match serde_json::from_str::<Value>(data) {
        Err(e) => Err(StreamError::Json(crate::js_json_error::json_parse_message(
            data, &e,
        ))),
        // Parsed after all (cannot happen: the strict parse above failed).
        Ok(_) => Err(StreamError::Json("Unexpected end of JSON input".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn partial_then_final_arguments() {
        let mut b = ArgumentBuffer::default();
        let mut args = Map::new();
        b.push(r#"{"path":"a.t"#, &mut args);
        assert_eq!(args.get("path"), Some(&json!("a.t")));
        b.push(r#"xt","n":[1,"#, &mut args);
        assert_eq!(args.get("n"), Some(&json!([1])));
        b.push("2]}", &mut args);
        let (args, error) = b.finish(args);
        assert_eq!(Value::Object(args), json!({"path": "a.txt", "n": [1, 2]}));
        assert_eq!(error, None);
        assert_eq!(
            ArgumentBuffer::default().finish(Map::new()),
            (Map::new(), None)
        );
        let mut two = ArgumentBuffer::default();
        let mut args = Map::new();
        two.push(r#"{"a":"x"}{"b":2}"#, &mut args);
        let (args, error) = two.finish(args);
        assert_eq!(Value::Object(args), json!({"a": "x"}));
        assert_eq!(error, Some(FinishError::Invalid));
    }

    /// Text held before the message shows it moves in with the next fragment.
    #[test]
    fn held_text_moves_in_with_the_next_fragment() {
        let mut b = ArgumentBuffer::holding(r#"{"a":1"#);
        let mut shown = Map::new();
        assert_eq!(b.buffer(), r#"{"a":1"#);
        b.push(r#","b":2}"#, &mut shown);
        assert_eq!(Value::Object(shown.clone()), json!({"a": 1, "b": 2}));
        assert_eq!(
            b.finish(shown),
            (json!({"a": 1, "b": 2}).as_object().unwrap().clone(), None)
        );
        let mut unpushed = ArgumentBuffer::holding(r#"{"a":1}"#);
        assert_eq!(
            unpushed.finish(Map::new()),
            (json!({"a": 1}).as_object().unwrap().clone(), None)
        );
    }

    #[test]
    fn whole_payloads_are_repaired_or_rejected() {
        assert_eq!(parse_json_with_repair(r#"{"a":1}   "#), Ok(json!({"a": 1})));
        // A raw newline inside a string is escaped by the repair.
        assert_eq!(
            parse_json_with_repair("{\"t\":\"a\nb\"}"),
            Ok(json!({"t": "a\nb"}))
        );
        assert_eq!(
            parse_json_with_repair(""),
            Err(StreamError::Json("Unexpected end of JSON input".into()))
        );
        assert_eq!(
            parse_json_with_repair("{\"a\":"),
            Err(StreamError::Json("Unexpected end of JSON input".into()))
        );
        assert_eq!(
            parse_json_with_repair("{nope}"),
            Err(StreamError::Json(
                "Expected property name or '}' in JSON at position 1 (line 1 column 2)".into()
            ))
        );
    }
}
