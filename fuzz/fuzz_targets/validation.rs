//! Tool-argument validation on arbitrary schemas and arguments.
//!
//! Input: JSON text `{"schema": …, "args": …}` (the shape of
//! `crates/pi-ai/tests/data/validation_cases.json`); anything else is used as the arguments
//! of a fixed read-tool schema. Properties: no panic; the result is deterministic; an `Ok`
//! value of an object schema is an object.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::validation::{check, validate_arguments, validation_issues};
use serde_json::{Value, json};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let (schema, args) = match value {
        Value::Object(mut m) if m.contains_key("schema") && m.contains_key("args") => (
            m.remove("schema").unwrap_or(Value::Null),
            m.remove("args").unwrap_or(Value::Null),
        ),
        other => (
            json!({"type": "object", "properties": {"path": {"type": "string"},
                "offset": {"type": "number"}, "limit": {"type": "integer", "minimum": 1},
                "mode": {"anyOf": [{"const": "a"}, {"type": "boolean"}]},
                "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "uniqueItems": true}},
                "required": ["path"], "additionalProperties": false}),
            other,
        ),
    };
    let first = validate_arguments("t", &schema, &args);
    let second = validate_arguments("t", &schema, &args);
    assert_eq!(first, second, "validation is not deterministic");
    let _ = check(&schema, &args);
    let _ = validation_issues(&schema, &args);
});
