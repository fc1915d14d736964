//! `JSON.parse` error texts, as Node 22 words them, for the files pi reports on.
//!
//! pi quotes the message of `JSON.parse` in its diagnostics (e.g. `Invalid settings file <path>:
//! Expected double-quoted property name in JSON at position 27 (line 3 column 3)`). We parse with
//! serde_json and take the message from [`pi_ai::js_json_error`], which follows V8's parser to
//! the first error: the position is the offending character's UTF-16 index; Node appends
//! `(line L column C)`; `Unexpected token` messages show the source (whole up to 21
//! characters, else 10 characters of context on each side).

/// The `JSON.parse` message for `text`, given serde_json's error on the same text.
pub(crate) fn js_json_parse_message(text: &str, err: &serde_json::Error) -> String {
    pi_ai::js_json_error::json_parse_message(text, err)
}

/// A file's text that is not JSON: the text is `JSON.parse`'s message (or the depth limit's),
/// which the settings, auth, trust and models diagnostics quote after their own prefix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JsonParseError(String);

/// Parses JSON nested at most [`pi_ai::json_depth::MAX_DOCUMENT_DEPTH`] levels; on failure
/// returns the `JSON.parse` message, or `JSON nested deeper than 1064 levels`.
pub(crate) fn parse_json(text: &str) -> Result<serde_json::Value, JsonParseError> {
    use pi_ai::json_depth::DeepJsonError;
    match pi_ai::json_depth::from_str(text, pi_ai::json_depth::MAX_DOCUMENT_DEPTH) {
        Ok(v) => Ok(v),
        Err(DeepJsonError::Json(e)) => Err(JsonParseError(js_json_parse_message(text, &e))),
        Err(e) => Err(JsonParseError(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(text: &str) -> String {
        parse_json(text).unwrap_err().to_string()
    }

    /// Settings, models and auth files nested up to the document limit parse; deeper ones fail
    /// with a text naming the limit.
    #[test]
    fn files_parse_up_to_the_document_depth_limit() {
        let limit = pi_ai::json_depth::MAX_DOCUMENT_DEPTH;
        let text = |levels: usize| format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
        assert!(parse_json(&text(limit)).is_ok());
        assert_eq!(msg(&text(limit + 1)), "JSON nested deeper than 1064 levels");
    }

    // Expected texts: Node 22 (`JSON.parse`) on the same inputs.
    #[test]
    fn node_22_messages() {
        let cases = [
            (
                "{\n  \"a\": \"x\",\n  oops\n}",
                "Expected double-quoted property name in JSON at position 16 (line 3 column 3)",
            ),
            (
                "{\"a\":1,}",
                "Expected double-quoted property name in JSON at position 7 (line 1 column 8)",
            ),
            ("[1,]", "Unexpected token ']', \"[1,]\" is not valid JSON"),
            ("{\"a\":", "Unexpected end of JSON input"),
            ("", "Unexpected end of JSON input"),
            (
                "{\"a\" 1}",
                "Expected ':' after property name in JSON at position 5 (line 1 column 6)",
            ),
            (
                "{\"a\":1}}",
                "Unexpected non-whitespace character after JSON at position 7 (line 1 column 8)",
            ),
            (
                "{\"a\":tru}",
                "Unexpected token '}', \"{\"a\":tru}\" is not valid JSON",
            ),
            (
                "{\"a\":\"x}",
                "Unterminated string in JSON at position 8 (line 1 column 9)",
            ),
            (
                "{\"a\":1 \"b\":2}",
                "Expected ',' or '}' after property value in JSON at position 7 (line 1 column 8)",
            ),
            (
                "[1 2]",
                "Expected ',' or ']' after array element in JSON at position 3 (line 1 column 4)",
            ),
            (
                "{\"key\": [1, 2, 3], \"other\": value}",
                "Unexpected token 'v', ...\" \"other\": value}\" is not valid JSON",
            ),
            (
                "{\"key\": [1, 2, 3], \"other\": 1, \"more\": x, \"tail\": 2222222}",
                "Unexpected token 'x', ...\", \"more\": x, \"tail\":\"... is not valid JSON",
            ),
            (
                "{\"a\":\"\u{1}\"}",
                "Bad control character in string literal in JSON at position 6 (line 1 column 7)",
            ),
            (
                "{\"é\": 1,, }",
                "Expected double-quoted property name in JSON at position 8 (line 1 column 9)",
            ),
            (
                "{\n\"a\": 1,\n}",
                "Expected double-quoted property name in JSON at position 10 (line 3 column 1)",
            ),
            (
                "{oops}",
                "Expected property name or '}' in JSON at position 1 (line 1 column 2)",
            ),
            (
                "{\n  \"defaultModel\": \"x\",\n  oops\n}",
                "Expected double-quoted property name in JSON at position 27 (line 3 column 3)",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(msg(input), expected, "input {input:?}");
        }
    }
}
