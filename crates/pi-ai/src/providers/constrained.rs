//! JSON-schema constrained sampling for tools (`Tool::constrained_sampling` of type
//! `json_schema`): whether a tool is sent strict, and its strictified schema.
//!
//! Mirrors pi-ai 0.85.1 `api/constrained-sampling.ts` (`makeStrictJsonSchema`,
//! `resolveJsonSchemaStrictSampling`, `getJsonSchemaToolParameters`): a strict schema has
//! every property required, optional ones made nullable (`anyOf: [schema, {type:"null"}]`),
//! `additionalProperties: false` on every object, and none of the unsupported keywords.

use crate::providers::{StreamError, StrictSchemaError};
use serde_json::{Map, Value, json};

use crate::types::Tool;

/// Keywords a strict schema may not use.
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

/// `Some(true)` when `tool` is sent with strict sampling; `None` when not (no JSON-schema
/// request, or `prefer` on a provider or schema that cannot do it).
///
/// `Err` with pi's text when the tool says `strict: "require"` and it cannot be honoured:
/// `Tool "<name>" requires JSON-schema constrained sampling, but <reason>.`
pub(crate) fn resolve_strict(
    tool: &Tool,
    supports_strict: bool,
) -> Result<Option<bool>, StreamError> {
    let Some(config) = &tool.constrained_sampling else {
        return Ok(None);
    };
    if config.get("type").and_then(Value::as_str) != Some("json_schema") {
        return Ok(None);
    }
    let require = config.get("strict").and_then(Value::as_str) == Some("require");
    let fail = |reason: StrictSchemaError| {
        Err(StreamError::ConstrainedSampling {
            tool: tool.name.clone(),
            reason,
        })
    };
    if supports_strict {
        return match make_strict_json_schema(&tool.parameters) {
            Ok(_) => Ok(Some(true)),
            Err(_) if !require => Ok(None),
            Err(reason) => fail(reason),
        };
    }
    if require {
        return fail(StrictSchemaError::StrictToolsUnsupported);
    }
    Ok(None)
}

/// The parameters to send: the strict schema when `strict`, else the tool's own.
pub(crate) fn tool_parameters(tool: &Tool, strict: Option<bool>) -> Value {
    if strict == Some(true) {
        // `resolve_strict` succeeded on the same schema, so this cannot fail.
        make_strict_json_schema(&tool.parameters).unwrap_or_else(|_| tool.parameters.clone())
    } else {
        tool.parameters.clone()
    }
}

/// The strict form of `schema`; `Err(reason)` when it has no strict form.
pub(crate) fn make_strict_json_schema(schema: &Value) -> Result<Value, StrictSchemaError> {
    let mut cloned = schema.clone();
    if !cloned.is_object() {
        return Err(StrictSchemaError::RootNotObject);
    }
    strict_node(&mut cloned)?;
    if cloned.get("type").and_then(Value::as_str) != Some("object") {
        return Err(StrictSchemaError::RootNotObject);
    }
    Ok(cloned)
}

fn is_structured(schema: &Value) -> bool {
    let Some(obj) = schema.as_object() else {
        return false;
    };
    let types: Vec<&str> = match obj.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    types.contains(&"object")
        || types.contains(&"array")
        || obj.contains_key("properties")
        || obj.contains_key("items")
}

fn allows_null(schema: &Value) -> bool {
    let Some(obj) = schema.as_object() else {
        return false;
    };
    let null_type = match obj.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        _ => false,
    };
    null_type
        || obj.get("const") == Some(&Value::Null)
        || obj
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.contains(&Value::Null))
        || obj
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|vs| vs.iter().any(allows_null))
}

fn strict_node(schema: &mut Value) -> Result<(), StrictSchemaError> {
    let Some(obj) = schema.as_object_mut() else {
        return Err(StrictSchemaError::BooleanSchema);
    };
    if let Some(key) = UNSUPPORTED_KEYS.iter().find(|k| obj.contains_key(**k)) {
        return Err(StrictSchemaError::UnsupportedKeyword(key));
    }
    if let Some(any_of) = obj.get_mut("anyOf") {
        let variants = any_of
            .as_array_mut()
            .filter(|v| !v.is_empty())
            .ok_or(StrictSchemaError::EmptyAnyOf)?;
        for variant in variants {
            if is_structured(variant) {
                return Err(StrictSchemaError::StructuredUnion);
            }
            strict_node(variant)?;
        }
    }
    if let Some(items) = obj.get_mut("items") {
        if items.is_array() {
            return Err(StrictSchemaError::TupleSchema);
        }
        strict_node(items)?;
    }
    let is_object = obj.get("type").and_then(Value::as_str) == Some("object");
    if obj.contains_key("properties") && !is_object {
        return Err(StrictSchemaError::PropertiesWithoutObject);
    }
    if !is_object {
        return Ok(());
    }
    if obj
        .get("additionalProperties")
        .is_some_and(|a| a != &Value::Bool(false))
    {
        return Err(StrictSchemaError::AdditionalProperties);
    }
    if obj.get("properties").is_some_and(|p| !p.is_object()) {
        return Err(StrictSchemaError::PropertiesNotMap);
    }
    let required: Vec<String> = match obj.get("required") {
        None => Vec::new(),
        Some(Value::Array(r)) if r.iter().all(Value::is_string) => r
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(_) => return Err(StrictSchemaError::RequiredNotStrings),
    };
    let mut detached = Map::new();
    let properties = match obj.get_mut("properties") {
        Some(Value::Object(p)) => p,
        _ => &mut detached,
    };
    if required.iter().any(|k| !properties.contains_key(k)) {
        return Err(StrictSchemaError::RequiredUnknown);
    }
    let names: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
    for (key, property) in properties.iter_mut() {
        strict_node(property)?;
        if !required.contains(key) && !allows_null(property) {
            let inner = property.take();
            *property = json!({ "anyOf": [inner, { "type": "null" }] });
        }
    }
    obj.insert("required".into(), Value::Array(names));
    obj.insert("additionalProperties".into(), Value::Bool(false));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(parameters: Value, strict: &str) -> Tool {
        Tool {
            name: "t".into(),
            description: "d".into(),
            parameters,
            constrained_sampling: Some(json!({"type": "json_schema", "strict": strict})),
        }
    }

    #[test]
    fn optional_properties_become_nullable_and_all_required() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string"},
            "b": {"type": "integer"},
            "c": {"type": ["string", "null"]},
            "d": {"type": "object", "properties": {"x": {"type": "number"}}},
            "e": {"type": "array", "items": {"type": "object"}}
        }, "required": ["a"]});
        assert_eq!(
            make_strict_json_schema(&schema).unwrap(),
            json!({"type": "object", "properties": {
                "a": {"type": "string"},
                "b": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "c": {"type": ["string", "null"]},
                "d": {"anyOf": [{"type": "object", "properties": {"x": {"anyOf": [{"type": "number"}, {"type": "null"}]}},
                                 "required": ["x"], "additionalProperties": false}, {"type": "null"}]},
                "e": {"anyOf": [{"type": "array", "items": {"type": "object", "required": [], "additionalProperties": false}},
                                {"type": "null"}]}
            }, "required": ["a", "b", "c", "d", "e"], "additionalProperties": false})
        );
    }

    #[test]
    fn unsupported_schemas_give_pis_reasons() {
        let cases = [
            (json!(true), "root schema must have type object"),
            (
                json!({"type": "string"}),
                "root schema must have type object",
            ),
            (
                json!({"type": "object", "oneOf": []}),
                "oneOf schemas are unsupported",
            ),
            (
                json!({"type": "object", "properties": {"a": {"anyOf": []}}}),
                "anyOf must contain at least one schema",
            ),
            (
                json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "object"}]}}}),
                "object and array unions are unsupported",
            ),
            (
                json!({"type": "object", "properties": {"a": {"items": [{}]}}}),
                "tuple schemas are unsupported",
            ),
            (json!({"properties": {}}), "properties require type object"),
            (
                json!({"type": "object", "additionalProperties": true}),
                "schema-valued or true additionalProperties is unsupported",
            ),
            (
                json!({"type": "object", "required": ["zz"]}),
                "required contains an unknown property",
            ),
            (
                json!({"type": "object", "required": [1]}),
                "object required must be a string array",
            ),
        ];
        for (schema, reason) in cases {
            assert_eq!(
                make_strict_json_schema(&schema).unwrap_err().to_string(),
                reason,
                "{schema}"
            );
        }
    }

    #[test]
    fn resolution_prefer_and_require() {
        let ok = json!({"type": "object", "properties": {}});
        let bad = json!({"type": "object", "allOf": []});
        assert_eq!(
            resolve_strict(&tool(ok.clone(), "prefer"), true),
            Ok(Some(true))
        );
        assert_eq!(resolve_strict(&tool(bad.clone(), "prefer"), true), Ok(None));
        assert_eq!(resolve_strict(&tool(ok.clone(), "prefer"), false), Ok(None));
        assert_eq!(
            resolve_strict(&tool(bad, "require"), true).map_err(|e| e.to_string()),
            Err("Tool \"t\" requires JSON-schema constrained sampling, but allOf schemas are unsupported.".into())
        );
        assert_eq!(
            resolve_strict(&tool(ok.clone(), "require"), false).map_err(|e| e.to_string()),
            Err("Tool \"t\" requires JSON-schema constrained sampling, but strict tools are unsupported.".into())
        );
        let mut plain = tool(ok, "require");
        plain.constrained_sampling = None;
        assert_eq!(resolve_strict(&plain, true), Ok(None));
    }
}
