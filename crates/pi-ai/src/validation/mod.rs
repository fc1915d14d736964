//! Tool-argument validation: coercion, JSON-Schema checking and pi's error text.
//!
//! Mirrors pi-ai 0.85.1 `utils/validation.ts`:
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

mod check;
mod coerce;

use serde_json::Value;

use crate::error::Error;
use crate::types::{Tool, ToolCall};

use check::collect;
pub use check::{check, json_equal, validation_issues};
use coerce::{coerce, normalize_optional_nulls};

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
    .map_err(|e| Error::Validation(e.message))
}

/// Arguments that do not match their tool's schema; `Display` is pi's whole text
/// (`Validation failed for tool "<name>":` the issues, then `Received arguments:` and the
/// arguments as received, pretty-printed).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    /// The formatted text the model sees in the error tool result.
    pub message: String,
}

/// Most bytes of the pretty-printed arguments a validation error echoes after
/// `Received arguments:`; below it the text is pi's exactly, above it the echo is cut there and
/// a line says so (pi echoes arguments of any size).
pub const MAX_RECEIVED_BYTES: usize = 16 * 1024;

/// Validates `args` against `schema` for the tool `tool_name`; returns the coerced copy.
///
/// # Errors
/// [`ValidationError`] with the full `Validation failed for tool …` text (the echoed arguments
/// capped at [`MAX_RECEIVED_BYTES`]).
pub fn validate_arguments(
    tool_name: &str,
    schema: &Value,
    args: &Value,
) -> Result<Value, ValidationError> {
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
    let (mut received, cut) = crate::json::to_string_pretty_capped(args, MAX_RECEIVED_BYTES);
    if cut {
        received.push_str(&format!(
            "\n… (cut: the arguments are longer than {MAX_RECEIVED_BYTES} bytes of JSON)"
        ));
    }
    Err(ValidationError {
        message: format!(
            "Validation failed for tool \"{tool_name}\":\n{list}\n\nReceived arguments:\n{received}"
        ),
    })
}
