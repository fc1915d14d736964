use super::*;

/// `[input, message or null]` pairs: Node 22's `JSON.parse` (the reference's runtime) on each
/// input, generated with `node -e` from the reference's bundled Node.
const NODE_22: &str = include_str!("node22.json");

#[test]
fn messages_match_node_22() {
    let cases: Vec<(String, Option<String>)> = serde_json::from_str(NODE_22).unwrap();
    assert!(cases.len() > 50);
    let mut wrong = Vec::new();
    for (input, expected) in cases {
        let actual = json_parse_error(&input);
        if actual != expected {
            wrong.push(format!(
                "{input:?}\n  node: {expected:?}\n  ours: {actual:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn deep_nesting_does_not_use_the_stack() {
    let deep = "[".repeat(1_000_000);
    assert_eq!(
        json_parse_error(&deep).as_deref(),
        Some("Unexpected end of JSON input")
    );
    let closed = format!("{}{}x", "[".repeat(200_000), "]".repeat(200_000));
    assert_eq!(
        json_parse_error(&closed).as_deref(),
        Some(
            "Unexpected non-whitespace character after JSON at position 400000 (line 1 column 400001)"
        )
    );
}

#[test]
fn serde_rejections_javascript_accepts_keep_serdes_text() {
    // serde_json refuses a lone surrogate escape; JSON.parse takes it.
    let text = r#"{"a":"\ud800"}"#;
    let err = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
    assert_eq!(json_parse_message(text, &err), err.to_string());
    let text = "{nope}";
    let err = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
    assert_eq!(
        json_parse_message(text, &err),
        "Expected property name or '}' in JSON at position 1 (line 1 column 2)"
    );
}
