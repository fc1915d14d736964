//! Nesting limits for JSON from outside the process, and a parse that honours them.
//!
//! `serde_json` refuses documents nested deeper than 128 levels, and its `Value` is cloned,
//! compared, serialized and dropped recursively. pi (JavaScript) keeps tool arguments 1,000
//! levels deep intact, so pi-rs parses outside JSON with [`from_str`]: a linear scan first
//! refuses text nested deeper than the caller's limit (O(1) stack, whatever the input), then
//! `serde_json` parses without its own limit on a stack that grows on the heap
//! (`serde_stacker`). The limits are chosen so that every recursive operation on a value that
//! passed them holds on tokio's 2 MiB worker stacks in debug builds (measured by the
//! `deep_values_hold_on_a_2_mib_stack` test): cloning an object nested 1,064 levels deep takes
//! about 1.5 MiB there.
//!
//! Depth counts containers: `1` and `"x"` are depth 0, `{}` and `[1]` depth 1, `{"a":[1]}`
//! depth 2.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::providers::StreamError;

/// Deepest tool-call arguments pi-rs passes to a tool (the arguments object itself is level 1).
/// Deeper arguments are refused with a tool error naming this limit.
pub const MAX_ARGUMENT_DEPTH: usize = 1_000;

/// Deepest whole JSON document pi-rs reads from outside: an SSE event's data, a session line,
/// an RPC command, a settings or models file. Room for arguments at [`MAX_ARGUMENT_DEPTH`]
/// plus 64 levels of envelope around them.
pub const MAX_DOCUMENT_DEPTH: usize = MAX_ARGUMENT_DEPTH + 64;

/// Why [`from_str`] failed.
#[derive(Debug, thiserror::Error)]
pub enum DeepJsonError {
    /// The text nests containers deeper than the limit.
    #[error("JSON nested deeper than {limit} levels")]
    TooDeep {
        /// The limit that was exceeded.
        limit: usize,
    },
    /// Not valid JSON for the target type (`serde_json`'s message).
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Whether `text` opens more than `limit` containers at once, looking only at brackets outside
/// string literals (so it is also right for text that is not valid JSON). One pass, O(1) memory.
pub fn exceeds_depth(text: &str, limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text.as_bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The nesting depth of a value, computed without recursion.
pub fn value_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::Array(items) => {
                deepest = deepest.max(depth + 1);
                stack.extend(items.iter().map(|i| (i, depth + 1)));
            }
            Value::Object(map) => {
                deepest = deepest.max(depth + 1);
                stack.extend(map.values().map(|i| (i, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// Drops a value of any depth without recursion (`Value`'s own `Drop` recurses once per level).
pub fn drop_value(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Parses `text` as one `T` (surrounding whitespace allowed), refusing nesting deeper than
/// `limit` before parsing.
///
/// # Errors
/// [`DeepJsonError::TooDeep`] past the limit; [`DeepJsonError::Json`] for invalid JSON,
/// trailing characters, or a shape `T` does not accept.
pub fn from_str<T: DeserializeOwned>(text: &str, limit: usize) -> Result<T, DeepJsonError> {
    if exceeds_depth(text, limit) {
        return Err(DeepJsonError::TooDeep { limit });
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = T::deserialize(serde_stacker::Deserializer::new(&mut de))?;
    de.end()?;
    Ok(value)
}

/// [`from_str`] over bytes (which must be UTF-8).
///
/// # Errors
/// As [`from_str`]; invalid UTF-8 is a [`DeepJsonError::Json`] error.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8], limit: usize) -> Result<T, DeepJsonError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => from_str(text, limit),
        // Let serde_json word the UTF-8 error (with its position).
        Err(_) => Ok(serde_json::from_slice(bytes)?),
    }
}

/// An SSE event's `data` as pi's `JSON.parse` reads it: one value nested at most
/// [`MAX_DOCUMENT_DEPTH`] levels. `Err` is a [`StreamError::Json`] with the text of the
/// failure: `JSON nested deeper than 1064 levels`, or `JSON.parse`'s message as Node 22 words
/// it ([`crate::js_json_error`]).
pub(crate) fn parse_event_data(data: &str) -> Result<Value, StreamError> {
    match from_str(data, MAX_DOCUMENT_DEPTH) {
        Ok(v) => Ok(v),
        Err(e @ DeepJsonError::TooDeep { .. }) => Err(StreamError::Json(e.to_string())),
        Err(DeepJsonError::Json(e)) => Err(StreamError::Json(
            crate::js_json_error::json_parse_message(data, &e),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested_objects(levels: usize) -> String {
        format!("{}1{}", "{\"a\":".repeat(levels), "}".repeat(levels))
    }

    fn nested_mixed(levels: usize) -> String {
        let pairs = levels / 2;
        format!("{}1{}", "{\"a\":[".repeat(pairs), "]}".repeat(pairs))
    }

    #[test]
    fn depth_counts_containers_outside_strings() {
        assert!(!exceeds_depth("1", 0));
        assert!(exceeds_depth("{}", 0));
        assert!(!exceeds_depth("{\"a\":[1]}", 2));
        assert!(exceeds_depth("{\"a\":[1]}", 1));
        assert!(!exceeds_depth(r#"{"a":"[[[[\"[[["}"#, 1));
        assert!(!exceeds_depth(&nested_objects(1_000), 1_000));
        assert!(exceeds_depth(&nested_objects(1_001), 1_000));
        // Unbalanced and invalid text is still measured.
        assert!(exceeds_depth(&"[".repeat(5), 4));
        assert_eq!(value_depth(&serde_json::json!({"a": [1, {"b": []}]})), 4);
        assert_eq!(value_depth(&serde_json::json!(1)), 0);
    }

    #[test]
    fn parses_up_to_the_limit_exactly_and_refuses_past_it() {
        let text = nested_objects(MAX_DOCUMENT_DEPTH);
        let v: Value = from_str(&text, MAX_DOCUMENT_DEPTH).unwrap();
        assert_eq!(value_depth(&v), MAX_DOCUMENT_DEPTH);
        assert_eq!(crate::json::to_string(&v).unwrap(), text);
        drop_value(v);
        let err = from_str::<Value>(&nested_objects(MAX_DOCUMENT_DEPTH + 1), MAX_DOCUMENT_DEPTH)
            .unwrap_err();
        assert_eq!(err.to_string(), "JSON nested deeper than 1064 levels");
        assert!(from_str::<Value>("{\"a\":1}{\"b\":2}", 10).is_err());
        assert!(from_str::<Value>(" {\"a\":1}\n", 10).is_ok());
        assert!(from_slice::<Value>(b"\xff", 10).is_err());
    }

    /// A million levels (2 MB) are refused in one linear pass, with no stack or heap growth.
    #[test]
    fn pathological_depth_is_refused_without_parsing() {
        let text = "[".repeat(1_000_000);
        assert!(matches!(
            from_str::<Value>(&text, MAX_DOCUMENT_DEPTH),
            Err(DeepJsonError::TooDeep { limit: 1_064 })
        ));
    }

    /// Every recursive operation the product performs on values (parse, clone, compare,
    /// serialize, debug-print, drop, schema validation) holds at the document limit on a thread
    /// with tokio's default 2 MiB worker stack, in the build the tests run in (debug in CI).
    #[test]
    fn deep_values_hold_on_a_2_mib_stack() {
        let run = || {
            for text in [
                nested_objects(MAX_DOCUMENT_DEPTH),
                nested_mixed(MAX_DOCUMENT_DEPTH),
            ] {
                let v: Value = from_str(&text, MAX_DOCUMENT_DEPTH).unwrap();
                let c = v.clone();
                assert!(v == c);
                assert_eq!(crate::json::to_string(&c).unwrap(), text);
                assert!(!format!("{c:?}").is_empty());
                let schema = serde_json::json!({"type": "object", "properties": {"a": {}}});
                crate::validation::validate_arguments("t", &schema, &c).unwrap();
                drop(c);
                drop(v);
            }
        };
        std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
    }
}
