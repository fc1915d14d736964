//! JSON-schema constrained sampling for OpenAI function tools: whether a tool is sent with
//! `strict: true`, and the strictified schema (every property required, optional ones
//! nullable, no additional properties).
//!
//! Mirrors pi 0.85.1 `api/constrained-sampling.ts` `resolveJsonSchemaStrictSampling` /
//! `makeStrictJsonSchema` (spec §1.7).

use serde_json::{Value, json};

use crate::types::Tool;

/// Keywords strict mode cannot express.
const UNSUPPORTED_KEYS: [&str; 16] = [
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
];

/// Whether `tool` goes out strict: `Ok(Some(true))` when it asks for JSON-schema sampling and
/// its schema can be strictified on a strict-capable host; `Ok(None)` when it does not ask or
/// `prefer`s and cannot have it; `Err(text)` when it `require`s and cannot have it.
pub(crate) fn resolve_strict(tool: &Tool, supports_strict: bool) -> Result<Option<bool>, String> {
    let Some(cfg) = tool
        .constrained_sampling
        .as_ref()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("json_schema"))
    else {
        return Ok(None);
    };
    let require = cfg.get("strict").and_then(Value::as_str) == Some("require");
    if supports_strict {
        return match make_strict_schema(&tool.parameters) {
            Ok(_) => Ok(Some(true)),
            Err(_) if !require => Ok(None),
            Err(e) => Err(format!(
                "Tool \"{}\" requires JSON-schema constrained sampling, but {e}.",
                tool.name
            )),
        };
    }
    if require {
        return Err(format!(
            "Tool \"{}\" requires JSON-schema constrained sampling, but strict tools are unsupported.",
            tool.name
        ));
    }
    Ok(None)
}

/// The parameters to send: strictified when `strict`, else as declared.
pub(crate) fn tool_parameters(tool: &Tool, strict: bool) -> Value {
    if strict {
        make_strict_schema(&tool.parameters).unwrap_or_else(|_| tool.parameters.clone())
    } else {
        tool.parameters.clone()
    }
}

/// `makeStrictJsonSchema`: a strictified copy, or why strict mode cannot express the schema.
pub(crate) fn make_strict_schema(schema: &Value) -> Result<Value, &'static str> {
    let mut cloned = schema.clone();
    if !cloned.is_object() {
        return Err("root schema must have type object");
    }
    make_node_strict(&mut cloned)?;
    if cloned.get("type").and_then(Value::as_str) != Some("object") {
        return Err("root schema must have type object");
    }
    Ok(cloned)
}

fn is_structured(schema: &Value) -> bool {
    let Some(o) = schema.as_object() else {
        return false;
    };
    let has_type = |t: &str| match o.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(a)) => a.iter().any(|x| x == t),
        _ => false,
    };
    has_type("object")
        || has_type("array")
        || o.contains_key("properties")
        || o.contains_key("items")
}

fn allows_null(schema: &Value) -> bool {
    let Some(o) = schema.as_object() else {
        return false;
    };
    match o.get("type") {
        Some(Value::String(s)) if s == "null" => return true,
        Some(Value::Array(a)) if a.iter().any(|x| x == "null") => return true,
        _ => {}
    }
    if o.get("const") == Some(&Value::Null)
        || o.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.contains(&Value::Null))
    {
        return true;
    }
    o.get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(allows_null))
}

fn make_node_strict(schema: &mut Value) -> Result<(), &'static str> {
    let Some(o) = schema.as_object_mut() else {
        return Err("boolean schemas are unsupported");
    };
    for key in UNSUPPORTED_KEYS {
        if o.contains_key(key) {
            return Err(match key {
                "$ref" => "$ref schemas are unsupported",
                "$defs" => "$defs schemas are unsupported",
                "definitions" => "definitions schemas are unsupported",
                "allOf" => "allOf schemas are unsupported",
                "oneOf" => "oneOf schemas are unsupported",
                "patternProperties" => "patternProperties schemas are unsupported",
                "dependentSchemas" => "dependentSchemas schemas are unsupported",
                "dependencies" => "dependencies schemas are unsupported",
                "unevaluatedProperties" => "unevaluatedProperties schemas are unsupported",
                "propertyNames" => "propertyNames schemas are unsupported",
                "contains" => "contains schemas are unsupported",
                "prefixItems" => "prefixItems schemas are unsupported",
                "not" => "not schemas are unsupported",
                "if" => "if schemas are unsupported",
                "then" => "then schemas are unsupported",
                _ => "else schemas are unsupported",
            });
        }
    }
    if let Some(any_of) = o.get_mut("anyOf") {
        let Some(variants) = any_of.as_array_mut().filter(|a| !a.is_empty()) else {
            return Err("anyOf must contain at least one schema");
        };
        for v in variants.iter_mut() {
            if is_structured(v) {
                return Err("object and array unions are unsupported");
            }
            make_node_strict(v)?;
        }
    }
    if let Some(items) = o.get_mut("items") {
        if items.is_array() {
            return Err("tuple schemas are unsupported");
        }
        make_node_strict(items)?;
    }
    let is_object = o.get("type").and_then(Value::as_str) == Some("object");
    if o.contains_key("properties") && !is_object {
        return Err("properties require type object");
    }
    if !is_object {
        return Ok(());
    }
    if o.get("additionalProperties")
        .is_some_and(|a| a != &Value::Bool(false))
    {
        return Err("schema-valued or true additionalProperties is unsupported");
    }
    if o.get("properties").is_some_and(|p| !p.is_object()) {
        return Err("object properties must be a schema map");
    }
    let required: Vec<String> = match o.get("required") {
        None => Vec::new(),
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect(),
        Some(_) => return Err("object required must be a string array"),
    };
    let names: Vec<Value> = match o.get_mut("properties") {
        Some(Value::Object(properties)) => {
            if required.iter().any(|k| !properties.contains_key(k)) {
                return Err("required contains an unknown property");
            }
            for (key, prop) in properties.iter_mut() {
                make_node_strict(prop)?;
                if !required.contains(key) && !allows_null(prop) {
                    let inner = prop.take();
                    *prop = json!({"anyOf": [inner, {"type": "null"}]});
                }
            }
            properties
                .keys()
                .map(|k| Value::String(k.clone()))
                .collect()
        }
        _ if !required.is_empty() => return Err("required contains an unknown property"),
        _ => Vec::new(),
    };
    o.insert("required".into(), Value::Array(names));
    o.insert("additionalProperties".into(), Value::Bool(false));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(params: Value, strict: &str) -> Tool {
        Tool {
            name: "t".into(),
            description: String::new(),
            parameters: params,
            constrained_sampling: Some(json!({"type": "json_schema", "strict": strict})),
        }
    }

    #[test]
    fn optional_properties_become_nullable_and_required() {
        let s = make_strict_schema(&json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}
            },
            "required": ["path"]
        }))
        .unwrap();
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "limit": {"anyOf": [{"type": "number"}, {"type": "null"}]},
                    "tags": {"anyOf": [{"type": "array", "items": {"type": "object",
                        "properties": {"k": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
                        "required": ["k"], "additionalProperties": false}}, {"type": "null"}]}
                },
                "required": ["path", "limit", "tags"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn prefer_falls_back_and_require_fails() {
        let bad = json!({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}});
        assert_eq!(resolve_strict(&tool(bad.clone(), "prefer"), true), Ok(None));
        assert_eq!(
            resolve_strict(&tool(bad, "require"), true),
            Err("Tool \"t\" requires JSON-schema constrained sampling, but oneOf schemas are unsupported.".into())
        );
        let ok = json!({"type": "object", "properties": {}});
        assert_eq!(
            resolve_strict(&tool(ok.clone(), "prefer"), true),
            Ok(Some(true))
        );
        assert_eq!(resolve_strict(&tool(ok.clone(), "prefer"), false), Ok(None));
        assert_eq!(
            resolve_strict(&tool(ok, "require"), false),
            Err("Tool \"t\" requires JSON-schema constrained sampling, but strict tools are unsupported.".into())
        );
        let plain = Tool::default();
        assert_eq!(resolve_strict(&plain, true), Ok(None));
    }

    #[test]
    fn unsupported_shapes_are_named() {
        assert_eq!(
            make_strict_schema(&json!({"type": "object", "additionalProperties": true})),
            Err("schema-valued or true additionalProperties is unsupported")
        );
        assert_eq!(
            make_strict_schema(&json!({"type": "object", "required": ["x"]})),
            Err("required contains an unknown property")
        );
        assert_eq!(
            make_strict_schema(&json!({"type": "string"})),
            Err("root schema must have type object")
        );
        assert_eq!(
            make_strict_schema(
                &json!({"type": "object", "properties": {"u": {"anyOf": [{"type": "object"}]}}})
            ),
            Err("object and array unions are unsupported")
        );
    }
}
