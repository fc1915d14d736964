//! Tool-argument validation: coercion, JSON-Schema checking and pi's error text.
//!
//! Mirrors pi-ai 0.85.1 `utils/validation.ts` (spec §1.7 and its Corrections box):
//! 1. deep-copy the arguments;
//! 2. delete `null` values of optional properties whose schema rejects `null`;
//! 3. coerce primitives by declared type (`"42"`→42, `"true"`→true, number→string,
//!    `null`→0/false/"", unions tried in order: first a member that already accepts the
//!    value, then the first member accepting its coerced copy);
//! 4. check the schema; on failure report at most 8 errors in TypeBox 1.x's order and with
//!    its en_US messages and pi's path rule (dotted instance path, `root` for the root,
//!    `required` errors name the first missing property):
//!
//! ```text
//! Validation failed for tool "<name>":
//!   - <path>: <message>
//!
//! Received arguments:
//! <the arguments as given, JSON with 2-space indentation>
//! ```
//!
//! The checker implements the keywords tool schemas use: `type`, `required`,
//! `additionalProperties`, `properties`, `items` (schema or tuple), `minItems`, `maxItems`,
//! `uniqueItems`, `maxLength`, `minLength`, `pattern`, `exclusiveMaximum`,
//! `exclusiveMinimum`, `maximum`, `minimum`, `multipleOf`, `const`, `enum`, `not`, `allOf`,
//! `anyOf`, `oneOf`; boolean schemas. Other keywords (`format`, `$ref`, …) are accepted
//! without checking.

use serde_json::{Map, Value};

use crate::error::Error;
use crate::types::{Tool, ToolCall};

/// TypeBox's default cap on reported errors.
const MAX_ERRORS: usize = 8;

/// One validation error: TypeBox's keyword, the JSON-pointer instance path and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationIssue {
    /// The failing keyword (`type`, `required`, …).
    pub keyword: &'static str,
    /// JSON-pointer path of the value (`""` for the root, `/a/0/b`).
    pub instance_path: String,
    /// The first missing property of a `required` error.
    pub missing: Option<String>,
    /// The en_US message.
    pub message: String,
}

impl ValidationIssue {
    /// pi's `formatValidationPath`: dotted path; `required` errors append the first missing
    /// property; `root` for the root.
    pub fn display_path(&self) -> String {
        let base = self.instance_path.trim_start_matches('/').replace('/', ".");
        match &self.missing {
            Some(p) if base.is_empty() => p.clone(),
            Some(p) => format!("{base}.{p}"),
            None if base.is_empty() => "root".to_owned(),
            None => base,
        }
    }
}

/// Finds the call's tool and validates its arguments.
///
/// # Errors
/// `Tool "<name>" not found` or the validation text, as [`Error::Validation`].
pub fn validate_tool_call(tools: &[Tool], call: &ToolCall) -> Result<Value, Error> {
    let tool = tools
        .iter()
        .find(|t| t.name == call.name)
        .ok_or_else(|| Error::Validation(format!("Tool \"{}\" not found", call.name)))?;
    validate_tool_arguments(tool, call)
}

/// Validates (and coerces) a call's arguments against its tool's schema.
///
/// # Errors
/// The formatted validation text, as [`Error::Validation`].
pub fn validate_tool_arguments(tool: &Tool, call: &ToolCall) -> Result<Value, Error> {
    validate_arguments(
        &call.name,
        &tool.parameters,
        &Value::Object(call.arguments.clone()),
    )
    .map_err(Error::Validation)
}

/// Validates `args` against `schema` for the tool `tool_name`; returns the coerced copy.
///
/// # Errors
/// The full `Validation failed for tool …` text.
pub fn validate_arguments(tool_name: &str, schema: &Value, args: &Value) -> Result<Value, String> {
    let mut value = args.clone();
    normalize_optional_nulls(&mut value, schema);
    let coerced = coerce(value.clone(), schema);
    if !coerced.is_object() || !value.is_object() {
        // pi: a non-object result of the coercion is returned if it checks, else the input.
        if coerced != value {
            return Ok(if check(schema, &coerced) {
                coerced
            } else {
                value
            });
        }
    }
    let value = coerced;
    let mut issues = Vec::new();
    if collect(schema, &value, "", &mut issues) {
        return Ok(value);
    }
    issues.truncate(MAX_ERRORS);
    let list = if issues.is_empty() {
        "Unknown validation error".to_owned()
    } else {
        issues
            .iter()
            .map(|i| format!("  - {}: {}", i.display_path(), i.message))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let received = crate::json::to_string_pretty(args).unwrap_or_else(|_| "{}".to_owned());
    Err(format!(
        "Validation failed for tool \"{tool_name}\":\n{list}\n\nReceived arguments:\n{received}"
    ))
}

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

// ----- checking --------------------------------------------------------------------------

fn issue(out: &mut Vec<ValidationIssue>, keyword: &'static str, path: &str, message: String) {
    out.push(ValidationIssue {
        keyword,
        instance_path: path.to_owned(),
        missing: None,
        message,
    });
}

/// JavaScript's spelling of a JSON number (`1`, `1.5`, `0.000001`).
fn js_number(v: &Value) -> String {
    match v {
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        other => crate::json::to_string(other).unwrap_or_default(),
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn type_matches(type_name: &str, v: &Value) -> bool {
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
fn collect(schema: &Value, value: &Value, path: &str, out: &mut Vec<ValidationIssue>) -> bool {
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

// ----- null normalization and coercion -----------------------------------------------------

/// Deletes `null` values of optional properties whose schema rejects `null` (pi's
/// `normalizeOptionalNulls`), recursing into nested objects and arrays.
fn normalize_optional_nulls(value: &mut Value, schema: &Value) {
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
fn coerce(value: Value, schema: &Value) -> Value {
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
