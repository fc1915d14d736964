//! Tool-argument validation against outputs of the reference (pi-ai 0.85.1
//! `validateToolArguments` run under Node on the same schemas and arguments; generated into
//! `data/validation_cases.json`). One test per case: each keyword, each coercion, the error
//! cap, path rules and the exact message text.

use pi_ai::validation::{validate_arguments, validate_tool_arguments, validate_tool_call};
use pi_ai::{Tool, ToolCall};
use serde_json::{Value, json};

const CASES: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/validation_cases.json"
));

fn run_case(name: &str) {
    let cases: Vec<Value> = serde_json::from_str(CASES).unwrap();
    let case = cases.iter().find(|c| c["name"] == name).unwrap();
    let got = validate_arguments("t", &case["schema"], &case["args"]);
    match (case.get("ok"), case.get("error")) {
        (Some(ok), _) => {
            let v = got.unwrap_or_else(|e| panic!("{name}: unexpected error {e}"));
            assert_eq!(
                pi_ai::json::to_string(&v).unwrap(),
                pi_ai::json::to_string(ok).unwrap(),
                "{name}"
            );
        }
        (None, Some(Value::String(err))) => {
            assert_eq!(got.unwrap_err().message, *err, "{name}");
        }
        _ => panic!("bad case {name}"),
    }
}

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run_case(stringify!($name));
            }
        )*
    };
}

cases!(
    read_golden,
    coerce_number,
    coerce_number_from_bool,
    coerce_string_from_number,
    coerce_string_from_bool,
    null_optional_removed,
    null_required_string,
    boolean_coercion,
    boolean_invalid,
    integer,
    integer_ok,
    integer_float,
    required_two,
    nested_required,
    array_items,
    array_type,
    min_items,
    max_items,
    unique_items,
    enum_keyword,
    const_keyword,
    minimum,
    maximum,
    exclusive,
    exclusive_min,
    multiple_of,
    min_length,
    max_length,
    pattern,
    additional_false,
    additional_schema,
    anyof_coerce,
    anyof_first,
    anyof_fail,
    oneof_fail,
    type_union,
    type_union_coerce,
    not_keyword,
    allof,
    root_type,
    many_errors,
    null_to_zero_required,
    nested_null_optional,
    unicode_args,
    number_hex,
    number_exp,
    number_big,
);

#[test]
fn every_case_has_a_test() {
    let cases: Vec<Value> = serde_json::from_str(CASES).unwrap();
    assert_eq!(cases.len(), 47);
}

fn tool() -> Tool {
    Tool {
        name: "read".into(),
        description: "Read".into(),
        parameters: json!({"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}),
        constrained_sampling: None,
    }
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments: args.as_object().cloned().unwrap(),
        ..Default::default()
    }
}

#[test]
fn validate_tool_call_reports_a_missing_tool() {
    let err = validate_tool_call(&[tool()], &call("write", json!({}))).unwrap_err();
    assert_eq!(err.to_string(), "Tool \"write\" not found");
}

#[test]
fn validate_tool_call_validates_with_the_named_tool() {
    let v = validate_tool_call(&[tool()], &call("read", json!({"path": 3}))).unwrap();
    assert_eq!(v, json!({"path": "3"}));
    let err = validate_tool_arguments(&tool(), &call("read", json!({}))).unwrap_err();
    assert!(err.to_string().starts_with(
        "Validation failed for tool \"read\":\n  - path: must have required properties path"
    ));
}

#[test]
fn received_arguments_are_the_originals_not_the_coerced_copy() {
    let schema = json!({"type":"object","properties":{"n":{"type":"number"},"s":{"type":"string","minLength":2}}});
    let err = validate_arguments("t", &schema, &json!({"n": "5", "s": "x"}))
        .unwrap_err()
        .message;
    assert!(
        err.ends_with("{\n  \"n\": \"5\",\n  \"s\": \"x\"\n}"),
        "{err}"
    );
}
