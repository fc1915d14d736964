//! Function-call arguments streamed in parts (Vertex AI's `streamFunctionCallArguments`):
//! a `functionCall` with `willContinue: true` opens the call, later `functionCall` parts carry
//! `partialArgs` — `{jsonPath, stringValue | numberValue | boolValue | nullValue, willContinue}`
//! — and one without `willContinue` closes it. A string value with `willContinue` is continued
//! by the next fragment of the same path.
//!
//! pi-ai 0.85.1 has no such case: it turns every part into a separate tool call with empty
//! arguments. pi-rs assembles the one call the model made.

use serde_json::{Map, Value};

/// Paths nest at most this deep and array indexes grow one at a time, so a hostile stream
/// cannot make the arguments cost more than the bytes it sent.
const MAX_DEPTH: usize = 64;

#[derive(Debug, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Why one `partialArgs` entry could not be applied; the text is what the stream error shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum PartialArgsError {
    /// The `jsonPath` is not `$` followed by `.key`, `[n]` or `['key']` steps (or nests
    /// deeper than [`MAX_DEPTH`]).
    #[error("Invalid partialArgs jsonPath: {0}")]
    InvalidPath(String),
    /// An array index skips past the next free slot.
    #[error("partialArgs index out of order: {0}")]
    IndexOutOfOrder(String),
    /// The entry has no `jsonPath` string.
    #[error("partialArgs entry without jsonPath")]
    MissingPath,
    /// The entry carries none of the `*Value` fields.
    #[error("partialArgs entry without a value: {0}")]
    MissingValue(String),
}

fn bad(path: &str) -> PartialArgsError {
    PartialArgsError::InvalidPath(path.to_owned())
}

/// `$.a.b[0]['c d']` → segments.
fn parse_path(path: &str) -> Result<Vec<Segment>, PartialArgsError> {
    let mut rest = path.strip_prefix('$').ok_or_else(|| bad(path))?;
    let mut out = Vec::new();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            if end == 0 {
                return Err(bad(path));
            }
            out.push(Segment::Key(r[..end].to_owned()));
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let close = r.find(']').ok_or_else(|| bad(path))?;
            let inner = &r[..close];
            let quoted = inner
                .strip_prefix('\'')
                .and_then(|s| s.strip_suffix('\''))
                .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')));
            match quoted {
                Some(key) => out.push(Segment::Key(key.to_owned())),
                None => out.push(Segment::Index(inner.parse().map_err(|_| bad(path))?)),
            }
            rest = &r[close + 1..];
        } else {
            return Err(bad(path));
        }
        if out.len() > MAX_DEPTH {
            return Err(bad(path));
        }
    }
    Ok(out)
}

/// The slot at `segments` under `root`, created as needed.
fn slot<'a>(
    root: &'a mut Value,
    segments: &[Segment],
    path: &str,
) -> Result<&'a mut Value, PartialArgsError> {
    let mut node = root;
    for segment in segments {
        node = match segment {
            Segment::Key(k) => {
                if !node.is_object() {
                    *node = Value::Object(Map::new());
                }
                let Value::Object(map) = node else {
                    return Err(bad(path));
                };
                map.entry(k.clone()).or_insert(Value::Null)
            }
            Segment::Index(i) => {
                if !node.is_array() {
                    *node = Value::Array(Vec::new());
                }
                let Value::Array(items) = node else {
                    return Err(bad(path));
                };
                if *i > items.len() {
                    return Err(PartialArgsError::IndexOutOfOrder(path.to_owned()));
                }
                if *i == items.len() {
                    items.push(Value::Null);
                }
                &mut items[*i]
            }
        };
    }
    Ok(node)
}

/// Applies one `partialArgs` entry to `args`. `continuing` is the path of a string still
/// being streamed.
pub(super) fn apply(
    args: &mut Map<String, Value>,
    fragment: &Value,
    continuing: &mut Option<String>,
) -> Result<(), PartialArgsError> {
    let path = fragment
        .get("jsonPath")
        .and_then(Value::as_str)
        .ok_or(PartialArgsError::MissingPath)?;
    let segments = parse_path(path)?;
    let more = fragment.get("willContinue") == Some(&Value::Bool(true));
    let mut root = Value::Object(std::mem::take(args));
    let result = (|| {
        let target = if segments.is_empty() {
            &mut root
        } else {
            slot(&mut root, &segments, path)?
        };
        if let Some(s) = fragment.get("stringValue").and_then(Value::as_str) {
            match target {
                Value::String(existing) if continuing.as_deref() == Some(path) => {
                    existing.push_str(s)
                }
                _ => *target = Value::String(s.to_owned()),
            }
        } else if let Some(n) = fragment.get("numberValue").filter(|v| v.is_number()) {
            *target = n.clone();
        } else if let Some(b) = fragment.get("boolValue").filter(|v| v.is_boolean()) {
            *target = b.clone();
        } else if fragment.get("nullValue").is_some() {
            *target = Value::Null;
        } else {
            return Err(PartialArgsError::MissingValue(path.to_owned()));
        }
        Ok(())
    })();
    *continuing = (more && fragment.get("stringValue").is_some()).then(|| path.to_owned());
    *args = match root {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(fragments: &[Value]) -> Result<Value, PartialArgsError> {
        let mut args = Map::new();
        let mut continuing = None;
        for f in fragments {
            apply(&mut args, f, &mut continuing)?;
        }
        Ok(Value::Object(args))
    }

    #[test]
    fn nested_paths_strings_in_pieces_and_scalars() {
        let got = run(&[
            json!({"jsonPath": "$.recipe.ingredients[0].name", "stringValue": "Lasagna", "willContinue": true}),
            json!({"jsonPath": "$.recipe.ingredients[0].name", "stringValue": " noodles"}),
            json!({"jsonPath": "$.recipe.ingredients[1]['the amount']", "numberValue": 2}),
            json!({"jsonPath": "$.recipe.vegan", "boolValue": false}),
            json!({"jsonPath": "$.recipe.note", "nullValue": null}),
            json!({"jsonPath": "$.recipe.ingredients[0].name", "stringValue": "Pasta"}),
        ])
        .unwrap();
        assert_eq!(
            got,
            json!({"recipe": {"ingredients": [{"name": "Pasta"}, {"the amount": 2}], "vegan": false, "note": null}})
        );
    }

    #[test]
    fn bad_paths_and_gaps_fail() {
        assert_eq!(
            run(&[json!({"jsonPath": "a.b", "stringValue": "x"})])
                .unwrap_err()
                .to_string(),
            "Invalid partialArgs jsonPath: a.b"
        );
        assert_eq!(
            run(&[json!({"jsonPath": "$.list[5]", "numberValue": 1})])
                .unwrap_err()
                .to_string(),
            "partialArgs index out of order: $.list[5]"
        );
        assert_eq!(
            run(&[json!({"jsonPath": "$.x"})]).unwrap_err().to_string(),
            "partialArgs entry without a value: $.x"
        );
        assert_eq!(
            run(&[json!({"stringValue": "x"})]).unwrap_err().to_string(),
            "partialArgs entry without jsonPath"
        );
        let deep = format!("${}", ".a".repeat(65));
        assert!(matches!(
            run(&[json!({"jsonPath": deep, "numberValue": 1})]),
            Err(PartialArgsError::InvalidPath(_))
        ));
    }
}
