//! Null normalization and primitive coercion by declared type (pi's
//! `normalizeOptionalNulls` and `coerceWithJsonSchema`).

use serde_json::Value;

use super::check::{check, js_number, type_matches};

/// Deletes `null` values of optional properties whose schema rejects `null` (pi's
/// `normalizeOptionalNulls`), recursing into nested objects and arrays.
pub(super) fn normalize_optional_nulls(value: &mut Value, schema: &Value) {
    match value {
        Value::Array(items) => match schema.get("items") {
            Some(Value::Array(tuple)) => {
                for (v, s) in items.iter_mut().zip(tuple) {
                    normalize_optional_nulls(v, s);
                }
            }
            Some(s) => {
                for v in items.iter_mut() {
                    normalize_optional_nulls(v, s);
                }
            }
            None => {}
        },
        Value::Object(obj) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for (key, sub) in props {
                let Some(v) = obj.get_mut(key) else {
                    continue;
                };
                if v.is_null()
                    && !required.contains(&key.as_str())
                    && !sub.get("$ref").is_some_and(Value::is_string)
                    && !check(sub, &Value::Null)
                {
                    obj.remove(key);
                } else {
                    normalize_optional_nulls(v, sub);
                }
            }
        }
        _ => {}
    }
}

fn schema_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// JavaScript `Number(text)` for a non-blank string; `None` when not a finite number.
fn js_parse_number(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    let radix = |p: &str, r: u32| u64::from_str_radix(p, r).ok().map(|n| n as f64);
    let lower = t.to_ascii_lowercase();
    let parsed = if let Some(h) = lower.strip_prefix("0x") {
        radix(h, 16)
    } else if let Some(o) = lower.strip_prefix("0o") {
        radix(o, 8)
    } else if let Some(b) = lower.strip_prefix("0b") {
        radix(b, 2)
    } else if lower.contains("inf") || lower.contains("nan") || t.contains('_') {
        None
    } else {
        t.parse::<f64>().ok()
    };
    parsed.filter(|f| f.is_finite())
}

/// A JSON number from an `f64` (integral values as integers, as JavaScript prints them).
fn number_value(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// JavaScript `String(n)` for a JSON number.
fn js_string_of(v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        other => js_number(other),
    }
}

/// pi's `coercePrimitiveByType`.
fn coerce_primitive(value: &Value, type_name: &str) -> Value {
    match type_name {
        "number" | "integer" => match value {
            Value::Null => Value::from(0),
            Value::String(s) => match js_parse_number(s) {
                Some(f) if type_name == "number" || f.fract() == 0.0 => number_value(f),
                _ => value.clone(),
            },
            Value::Bool(b) => Value::from(u8::from(*b)),
            _ => value.clone(),
        },
        "boolean" => match value {
            Value::Null => Value::Bool(false),
            Value::String(s) if s == "true" => Value::Bool(true),
            Value::String(s) if s == "false" => Value::Bool(false),
            Value::Number(n) if n.as_f64() == Some(1.0) => Value::Bool(true),
            Value::Number(n) if n.as_f64() == Some(0.0) => Value::Bool(false),
            _ => value.clone(),
        },
        "string" => match value {
            Value::Null => Value::String(String::new()),
            Value::Number(_) | Value::Bool(_) => Value::String(js_string_of(value)),
            _ => value.clone(),
        },
        "null" => match value {
            Value::String(s) if s.is_empty() => Value::Null,
            Value::Number(n) if n.as_f64() == Some(0.0) => Value::Null,
            Value::Bool(false) => Value::Null,
            _ => value.clone(),
        },
        _ => value.clone(),
    }
}

/// pi's `coerceWithUnionSchema`: a member accepting the value as is, else the first member
/// accepting its coerced copy, else the value unchanged.
fn coerce_union(value: Value, members: &[Value]) -> Value {
    if members.iter().any(|m| check(m, &value)) {
        return value;
    }
    for m in members {
        let candidate = coerce(value.clone(), m);
        if check(m, &candidate) {
            return candidate;
        }
    }
    value
}

/// pi's `coerceWithJsonSchema`.
pub(super) fn coerce(value: Value, schema: &Value) -> Value {
    let mut v = value;
    if let Some(Value::Array(all)) = schema.get("allOf") {
        for s in all {
            v = coerce(v, s);
        }
    }
    if let Some(Value::Array(any)) = schema.get("anyOf") {
        v = coerce_union(v, any);
    }
    if let Some(Value::Array(one)) = schema.get("oneOf") {
        v = coerce_union(v, one);
    }
    let types = schema_types(schema);
    let matches_member = types.len() > 1 && types.iter().any(|t| type_matches(t, &v));
    if !types.is_empty() && !matches_member {
        for t in &types {
            let candidate = coerce_primitive(&v, t);
            if !json_identical(&candidate, &v) {
                v = candidate;
                break;
            }
        }
    }
    if types.contains(&"object")
        && let Value::Object(obj) = &mut v
    {
        let props = schema.get("properties").and_then(Value::as_object);
        if let Some(props) = props {
            for (key, sub) in props {
                if let Some(slot) = obj.get_mut(key) {
                    *slot = coerce(std::mem::take(slot), sub);
                }
            }
        }
        if let Some(additional @ Value::Object(_)) = schema.get("additionalProperties") {
            for (key, slot) in obj.iter_mut() {
                if props.is_some_and(|p| p.contains_key(key)) {
                    continue;
                }
                *slot = coerce(std::mem::take(slot), additional);
            }
        }
    }
    if types.contains(&"array")
        && let Value::Array(items) = &mut v
    {
        match schema.get("items") {
            Some(Value::Array(tuple)) => {
                for (slot, s) in items.iter_mut().zip(tuple) {
                    *slot = coerce(std::mem::take(slot), s);
                }
            }
            Some(s @ Value::Object(_)) => {
                for slot in items.iter_mut() {
                    *slot = coerce(std::mem::take(slot), s);
                }
            }
            _ => {}
        }
    }
    v
}

/// JavaScript `===` on coercion results: primitives by value and type (`1` vs `1.0` are the
/// same number), containers never replaced by `coerce_primitive`.
fn json_identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Object(_), Value::Object(_)) | (Value::Array(_), Value::Array(_)) => true,
        _ => a == b,
    }
}
