//! The JSON-Schema checker: TypeBox 1.x `Errors` keyword order and en_US messages.

use serde_json::{Map, Value};

use super::ValidationIssue;

/// The errors of `value` against `schema` (all of them, in TypeBox's order).
pub fn validation_issues(schema: &Value, value: &Value) -> Vec<ValidationIssue> {
    let mut out = Vec::new();
    collect(schema, value, "", &mut out);
    out
}

/// Whether `value` satisfies `schema`.
pub fn check(schema: &Value, value: &Value) -> bool {
    collect(schema, value, "", &mut Vec::new())
}

fn issue(out: &mut Vec<ValidationIssue>, keyword: &'static str, path: &str, message: String) {
    out.push(ValidationIssue {
        keyword,
        instance_path: path.to_owned(),
        missing: None,
        message,
    });
}

/// JavaScript's spelling of a JSON number (`1`, `1.5`, `0.000001`).
pub(super) fn js_number(v: &Value) -> String {
    match v {
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        other => crate::json::to_string(other).unwrap_or_default(),
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    v.as_f64()
}

pub(super) fn type_matches(type_name: &str, v: &Value) -> bool {
    match type_name {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "boolean" => v.is_boolean(),
        "integer" => v
            .as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "null" => v.is_null(),
        _ => false,
    }
}

/// Deep equality with numbers compared by value (`1 == 1.0`), as JavaScript compares.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn str_len(s: &str) -> usize {
    s.chars().count()
}

/// Checks `value`, appending errors; returns whether it is valid. Keyword order follows
/// TypeBox 1.x `ErrorSchema`; every keyword is evaluated (no short-circuit).
pub(super) fn collect(
    schema: &Value,
    value: &Value,
    path: &str,
    out: &mut Vec<ValidationIssue>,
) -> bool {
    let s = match schema {
        Value::Bool(true) => return true,
        Value::Bool(false) => {
            issue(out, "boolean", path, "schema is false".into());
            return false;
        }
        Value::Object(s) => s,
        _ => return true,
    };
    let mut ok = true;

    if let Some(t) = s.get("type") {
        let valid = match t {
            Value::String(name) => type_matches(name, value),
            Value::Array(names) => names
                .iter()
                .filter_map(Value::as_str)
                .any(|n| type_matches(n, value)),
            _ => true,
        };
        if !valid {
            let message = match t {
                Value::Array(names) => format!(
                    "must be either {}",
                    names
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
                other => format!("must be {}", other.as_str().unwrap_or_default()),
            };
            issue(out, "type", path, message);
            ok = false;
        }
    }

    if let Value::Object(obj) = value {
        ok &= collect_object(s, obj, path, out);
    }
    if let Value::Array(items) = value {
        ok &= collect_array(s, items, path, out);
    }
    if let Value::String(text) = value {
        ok &= collect_string(s, text, path, out);
    }
    if value.is_number() {
        ok &= collect_number(s, value, path, out);
    }

    if let Some(c) = s.get("const")
        && !json_equal(c, value)
    {
        issue(out, "const", path, "must be equal to constant".into());
        ok = false;
    }
    if let Some(Value::Array(allowed)) = s.get("enum")
        && !allowed.iter().any(|a| json_equal(a, value))
    {
        issue(
            out,
            "enum",
            path,
            "must be equal to one of the allowed values".into(),
        );
        ok = false;
    }
    if let Some(not) = s.get("not")
        && check(not, value)
    {
        issue(out, "not", path, "must not be valid".into());
        ok = false;
    }
    if let Some(Value::Array(all)) = s.get("allOf") {
        for sub in all {
            let mut errs = Vec::new();
            if !collect(sub, value, path, &mut errs) {
                out.extend(errs);
                ok = false;
            }
        }
    }
    if let Some(Value::Array(any)) = s.get("anyOf") {
        let mut failed = Vec::new();
        let mut passed = false;
        for sub in any {
            let mut errs = Vec::new();
            if collect(sub, value, path, &mut errs) {
                passed = true;
            } else {
                failed.extend(errs);
            }
        }
        if !passed {
            out.extend(failed);
            issue(out, "anyOf", path, "must match a schema in anyOf".into());
            ok = false;
        }
    }
    if let Some(Value::Array(one)) = s.get("oneOf") {
        let mut failed = Vec::new();
        let mut passing = 0;
        for sub in one {
            let mut errs = Vec::new();
            if collect(sub, value, path, &mut errs) {
                passing += 1;
            } else {
                failed.extend(errs);
            }
        }
        if passing != 1 {
            if passing == 0 {
                out.extend(failed);
            }
            issue(
                out,
                "oneOf",
                path,
                "must match exactly one schema in oneOf".into(),
            );
            ok = false;
        }
    }
    ok
}

fn collect_object(
    s: &Map<String, Value>,
    obj: &Map<String, Value>,
    path: &str,
    out: &mut Vec<ValidationIssue>,
) -> bool {
    let mut ok = true;
    if let Some(Value::Array(required)) = s.get("required") {
        let missing: Vec<&str> = required
            .iter()
            .filter_map(Value::as_str)
            .filter(|k| !obj.contains_key(*k))
            .collect();
        if !missing.is_empty() {
            out.push(ValidationIssue {
                keyword: "required",
                instance_path: path.to_owned(),
                missing: missing.first().map(|m| (*m).to_owned()),
                message: format!("must have required properties {}", missing.join(", ")),
            });
            ok = false;
        }
    }
    let props = s.get("properties").and_then(Value::as_object);
    if let Some(additional) = s.get("additionalProperties") {
        let extra_ok = obj
            .iter()
            .filter(|(k, _)| !props.is_some_and(|p| p.contains_key(*k)))
            .all(|(_, v)| check(additional, v));
        if !extra_ok {
            issue(
                out,
                "additionalProperties",
                path,
                "must not have additional properties".into(),
            );
            ok = false;
        }
    }
    if let Some(props) = props {
        for (key, sub) in props {
            if let Some(v) = obj.get(key) {
                ok &= collect(sub, v, &format!("{path}/{key}"), out);
            }
        }
    }
    if let Some(min) = s.get("minProperties").and_then(Value::as_u64)
        && (obj.len() as u64) < min
    {
        issue(
            out,
            "minProperties",
            path,
            format!("must not have fewer than {min} properties"),
        );
        ok = false;
    }
    if let Some(max) = s.get("maxProperties").and_then(Value::as_u64)
        && (obj.len() as u64) > max
    {
        issue(
            out,
            "maxProperties",
            path,
            format!("must not have more than {max} properties"),
        );
        ok = false;
    }
    ok
}

fn collect_array(
    s: &Map<String, Value>,
    items: &[Value],
    path: &str,
    out: &mut Vec<ValidationIssue>,
) -> bool {
    let mut ok = true;
    match s.get("items") {
        Some(Value::Array(tuple)) => {
            for (i, (sub, v)) in tuple.iter().zip(items).enumerate() {
                ok &= collect(sub, v, &format!("{path}/{i}"), out);
            }
        }
        Some(sub @ (Value::Object(_) | Value::Bool(_))) => {
            for (i, v) in items.iter().enumerate() {
                ok &= collect(sub, v, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
    if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
        && (items.len() as u64) > max
    {
        issue(
            out,
            "maxItems",
            path,
            format!("must not have more than {max} items"),
        );
        ok = false;
    }
    if let Some(min) = s.get("minItems").and_then(Value::as_u64)
        && (items.len() as u64) < min
    {
        issue(
            out,
            "minItems",
            path,
            format!("must not have fewer than {min} items"),
        );
        ok = false;
    }
    if s.get("uniqueItems") == Some(&Value::Bool(true)) {
        let dup = items
            .iter()
            .enumerate()
            .any(|(i, a)| items[..i].iter().any(|b| json_equal(a, b)));
        if dup {
            issue(
                out,
                "uniqueItems",
                path,
                "must not have duplicate items".into(),
            );
            ok = false;
        }
    }
    ok
}

fn collect_string(
    s: &Map<String, Value>,
    text: &str,
    path: &str,
    out: &mut Vec<ValidationIssue>,
) -> bool {
    let mut ok = true;
    if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
        && (str_len(text) as u64) > max
    {
        issue(
            out,
            "maxLength",
            path,
            format!("must not have more than {max} characters"),
        );
        ok = false;
    }
    if let Some(min) = s.get("minLength").and_then(Value::as_u64)
        && (str_len(text) as u64) < min
    {
        issue(
            out,
            "minLength",
            path,
            format!("must not have fewer than {min} characters"),
        );
        ok = false;
    }
    if let Some(pattern) = s.get("pattern").and_then(Value::as_str)
        && let Ok(re) = regex::Regex::new(pattern)
        && !re.is_match(text)
    {
        issue(
            out,
            "pattern",
            path,
            format!("must match pattern \"{pattern}\""),
        );
        ok = false;
    }
    ok
}

fn collect_number(
    s: &Map<String, Value>,
    value: &Value,
    path: &str,
    out: &mut Vec<ValidationIssue>,
) -> bool {
    let Some(x) = as_f64(value) else {
        return true;
    };
    let mut ok = true;
    type Holds = fn(f64, f64) -> bool;
    let limits: [(&'static str, &str, Holds); 4] = [
        ("exclusiveMaximum", "<", |x, l| x < l),
        ("exclusiveMinimum", ">", |x, l| x > l),
        ("maximum", "<=", |x, l| x <= l),
        ("minimum", ">=", |x, l| x >= l),
    ];
    for (keyword, comparison, holds) in limits {
        if let Some(limit) = s.get(keyword)
            && let Some(l) = as_f64(limit)
            && !holds(x, l)
        {
            issue(
                out,
                keyword,
                path,
                format!("must be {comparison} {}", js_number(limit)),
            );
            ok = false;
        }
    }
    if let Some(m) = s.get("multipleOf")
        && let Some(d) = as_f64(m)
        && d != 0.0
        && (x / d).fract() != 0.0
    {
        issue(
            out,
            "multipleOf",
            path,
            format!("must be multiple of {}", js_number(m)),
        );
        ok = false;
    }
    ok
}
