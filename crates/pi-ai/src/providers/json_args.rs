//! Tool-argument JSON for the wire mappers: a per-call buffer of streamed fragments with a
//! best-effort parse after each fragment and a final parse at the block's end, and pi's
//! `parseJsonWithRepair` for whole SSE payloads with JavaScript-like error texts.
//!
//! Built on [`crate::partial_json`]: pushes cost O(fragment); the values equal pi's
//! `parseStreamingJson` of the text so far.

use serde_json::{Map, Value};

use crate::partial_json::{FinishError, PartialJsonParser};
use crate::providers::StreamError;

/// Raw argument JSON of one streamed tool call.
#[derive(Debug, Default)]
pub(crate) struct ArgumentBuffer {
    parser: PartialJsonParser,
}

impl ArgumentBuffer {
    /// Appends a raw fragment.
    pub fn push(&mut self, fragment: &str) {
        self.parser.push(fragment);
    }

    /// Best-effort arguments of the JSON received so far (`{}` when nothing parses).
    pub fn parse_partial(&self) -> Map<String, Value> {
        self.parser.value()
    }

    /// The final arguments ([`PartialJsonParser::final_arguments`]): pi's lenient value of the
    /// whole text (`{}` when empty) and why the call must not run when the text is not exactly
    /// one JSON object.
    pub fn parse_final(self) -> (Map<String, Value>, Option<FinishError>) {
        self.parser.final_arguments()
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
        assert!(b.parse_partial().is_empty());
        b.push(r#"{"path":"a.t"#);
        assert_eq!(b.parse_partial().get("path"), Some(&json!("a.t")));
        b.push(r#"xt","n":[1,"#);
        assert_eq!(b.parse_partial().get("n"), Some(&json!([1])));
        b.push("2]}");
        let (args, error) = b.parse_final();
        assert_eq!(Value::Object(args), json!({"path": "a.txt", "n": [1, 2]}));
        assert_eq!(error, None);
        assert_eq!(ArgumentBuffer::default().parse_final(), (Map::new(), None));
        let mut two = ArgumentBuffer::default();
        two.push(r#"{"a":"x"}{"b":2}"#);
        let (args, error) = two.parse_final();
        assert_eq!(Value::Object(args), json!({"a": "x"}));
        assert_eq!(error, Some(FinishError::Invalid));
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
