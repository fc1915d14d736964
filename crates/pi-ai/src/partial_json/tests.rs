//! Unit tests: one per cascade stage, repair rule and lenient rule, plus the incremental parser.

use serde_json::{Value, json};

use super::repair::{drop_lone_surrogate_escapes, repair_json};
use super::*;

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// Pushes `text` one char at a time and checks `value()` against `parse_streaming_json` at
/// every prefix.
fn assert_incremental_matches(text: &str) {
    let mut parser = PartialJsonParser::new();
    let mut prefix = String::new();
    for c in text.chars() {
        parser.push(c.encode_utf8(&mut [0; 4]));
        prefix.push(c);
        assert_eq!(
            parser.value(),
            parse_streaming_json(&prefix),
            "prefix {prefix:?}"
        );
    }
}

#[test]
fn empty_and_whitespace_are_empty_objects() {
    assert_eq!(parse_streaming_json(""), Map::new());
    assert_eq!(parse_streaming_json(" \n\t "), Map::new());
    assert_eq!(parse_streaming_json("\u{FEFF}"), Map::new());
}

#[test]
fn strict_parse_wins_for_complete_json() {
    assert_eq!(
        parse_streaming_json(r#"{"a": [1, 2.5, "x"]}"#),
        obj(json!({"a": [1, 2.5, "x"]}))
    );
}

#[test]
fn repaired_strict_parse_escapes_raw_control_characters() {
    assert_eq!(
        parse_streaming_json("{\"a\":\"l1\nl2\tt\u{1}\"}"),
        obj(json!({"a": "l1\nl2\tt\u{1}"}))
    );
}

#[test]
fn repaired_strict_parse_doubles_invalid_escape_backslashes() {
    assert_eq!(
        parse_streaming_json(r#"{"p":"C:\Users\x"}"#),
        obj(json!({"p": "C:\\Users\\x"}))
    );
}

#[test]
fn repair_rules() {
    assert_eq!(
        repair_json("{\"a\":\"\n\r\t\u{8}\u{c}\u{1f}\"}"),
        r#"{"a":"\n\r\t\b\f\u001f"}"#
    );
    assert_eq!(
        repair_json(r#"{"a":"\q\n\u12zz\u00e9"}"#),
        r#"{"a":"\\q\n\u12zz\u00e9"}"#
    );
    assert_eq!(repair_json("{\"a\":\"x\\"), "{\"a\":\"x\\\\");
    // Outside strings nothing changes, not even control characters.
    assert_eq!(repair_json("{\n\"a\" : 1}"), "{\n\"a\" : 1}");
}

#[test]
fn lenient_parse_of_raw_text_comes_before_repaired_text() {
    // Raw control character in an unterminated string: the raw lenient parse cannot decode
    // the string and drops the member; it succeeds (with `{"k":1}`), so the repaired text is
    // not tried.
    assert_eq!(
        parse_streaming_json("{\"k\":1,\"a\":\"x\ny"),
        obj(json!({"k": 1}))
    );
}

#[test]
fn lenient_incomplete_strings_keep_their_decoded_prefix() {
    assert_eq!(
        parse_streaming_json(r#"{"a":"hel"#),
        obj(json!({"a": "hel"}))
    );
    assert_eq!(parse_streaming_json(r#"{"a":"x\"#), obj(json!({"a": "x"})));
    assert_eq!(
        parse_streaming_json(r#"{"a":"x\u00"#),
        obj(json!({"a": "x"}))
    );
    assert_eq!(
        parse_streaming_json(r#"{"a":"x\\"#),
        obj(json!({"a": "x\\"}))
    );
}

#[test]
fn lenient_dangling_keys_and_colons_are_dropped() {
    assert_eq!(parse_streaming_json(r#"{"a":1,"b"#), obj(json!({"a": 1})));
    assert_eq!(parse_streaming_json(r#"{"a":1,"b":"#), obj(json!({"a": 1})));
    assert_eq!(parse_streaming_json(r#"{"a":1,"#), obj(json!({"a": 1})));
}

#[test]
fn lenient_numbers() {
    assert_eq!(parse_streaming_json(r#"{"a":12"#), obj(json!({"a": 12})));
    assert_eq!(parse_streaming_json(r#"{"a":1e"#), obj(json!({"a": 1})));
    assert_eq!(
        parse_streaming_json(r#"{"a":1.5e-"#),
        obj(json!({"a": 1.5}))
    );
    assert_eq!(parse_streaming_json(r#"{"a":12."#), Map::new());
    assert_eq!(parse_streaming_json(r#"{"a":1E"#), Map::new());
    assert_eq!(parse_streaming_json(r#"{"a":-"#), Map::new());
}

#[test]
fn lenient_partial_literals_at_the_end() {
    assert_eq!(parse_streaming_json(r#"{"a":t"#), obj(json!({"a": true})));
    assert_eq!(
        parse_streaming_json(r#"{"a":fal"#),
        obj(json!({"a": false}))
    );
    assert_eq!(parse_streaming_json(r#"{"a":nu"#), obj(json!({"a": null})));
    assert_eq!(
        parse_streaming_json(r#"{"a":[NaN,Infinity,-Inf"#),
        obj(json!({"a": [null, null, null]}))
    );
}

#[test]
fn lenient_ignores_text_after_the_first_value() {
    assert_eq!(
        parse_streaming_json(r#"{"a":"x"}{"b":2}"#),
        obj(json!({"a": "x"}))
    );
}

#[test]
fn non_objects_are_empty_maps_but_visible_as_values() {
    assert_eq!(parse_streaming_json(r#"["par"#), Map::new());
    assert_eq!(parse_streaming_value(r#"["par"#), json!(["par"]));
    assert_eq!(parse_streaming_value("null"), Value::Null);
    assert_eq!(parse_streaming_value("nul"), json!({}));
    assert_eq!(parse_streaming_value("-"), json!({}));
}

#[test]
fn lone_surrogate_escapes_are_dropped_pairs_kept() {
    assert_eq!(
        parse_streaming_json(r#"{"a":"\ud83d"}"#),
        obj(json!({"a": ""}))
    );
    assert_eq!(
        parse_streaming_json(r#"{"a":"x\udc00y"#),
        obj(json!({"a": "xy"}))
    );
    assert_eq!(
        parse_streaming_json(r#"{"a":"\ud83d\ude00"}"#),
        obj(json!({"a": "😀"}))
    );
    assert_eq!(
        drop_lone_surrogate_escapes(r#"["\ud83d\ude00"]"#),
        r#"["\ud83d\ude00"]"#
    );
    assert_eq!(
        drop_lone_surrogate_escapes(r#"["\\ud83d"]"#),
        r#"["\\ud83d"]"#
    );
}

/// Arguments nested past the limit are `{}` while streaming and refused at the end, in one
/// linear pass whatever the depth; never rebuilt in another shape.
#[test]
fn deep_nesting_past_the_limit_is_refused_not_reshaped() {
    use crate::json_depth::MAX_ARGUMENT_DEPTH;
    use crate::partial_json::FinishError;
    let deep = "{\"a\":".repeat(1_000_000);
    assert!(parse_streaming_json(&deep).is_empty());
    let mut parser = PartialJsonParser::new();
    for (i, chunk) in deep.as_bytes().chunks(4096).enumerate() {
        parser.push(std::str::from_utf8(chunk).unwrap());
        // Past 1,000 levels (the second chunk) nothing more is built.
        assert_eq!(parser.value().is_empty(), i > 0);
    }
    let too_deep = FinishError::TooDeep {
        limit: MAX_ARGUMENT_DEPTH,
    };
    assert_eq!(parser.finish(), Err(too_deep));
    assert_eq!(parser.final_arguments(), (Map::new(), Some(too_deep)));
    // 129 levels (past serde_json's own limit) and 1,000 arrive exactly, whole or streamed.
    for levels in [129, 1_000] {
        let text = format!("{}1{}", "{\"a\":".repeat(levels), "}".repeat(levels));
        let mut p = PartialJsonParser::new();
        for chunk in text.as_bytes().chunks(7) {
            p.push(std::str::from_utf8(chunk).unwrap());
        }
        let (args, error) = p.final_arguments();
        assert_eq!(error, None, "{levels}");
        assert_eq!(crate::json::to_string(&args).unwrap(), text);
        assert_eq!(parse_streaming_value(&text), Value::Object(args));
    }
    let over = format!("{}1{}", "{\"a\":".repeat(1_001), "}".repeat(1_001));
    assert!(parse_streaming_json(&over).is_empty());
    let mut p = PartialJsonParser::new();
    p.push(&over);
    assert_eq!(p.finish(), Err(too_deep));
    // The cascade path (a raw newline makes the text irregular) refuses the same way.
    let irregular = format!("{}\"x\n\"{}", "[".repeat(1_001), "]".repeat(1_001));
    let mut p = PartialJsonParser::new();
    p.push("{\"a\":");
    p.push(&irregular);
    p.push("}");
    assert_eq!(p.finish(), Err(too_deep));
}

/// The strict final parse on every wire: concatenated values, truncated text and non-objects
/// are refused; the message keeps pi's lenient value.
#[test]
fn final_arguments_refuse_anything_but_one_object() {
    use crate::partial_json::FinishError;
    for (text, lenient, error) in [
        (
            r#"{"a":"x"}{"b":2}"#,
            json!({"a": "x"}),
            Some(FinishError::Invalid),
        ),
        (
            r#"{"a":"x"} {"#,
            json!({"a": "x"}),
            Some(FinishError::Invalid),
        ),
        (r#"{"a":"x"#, json!({"a": "x"}), Some(FinishError::Invalid)),
        (r#"[1]"#, json!({}), Some(FinishError::NotAnObject)),
        (r#"{"a":1}"#, json!({"a": 1}), None),
        ("  ", json!({}), None),
    ] {
        let mut p = PartialJsonParser::new();
        p.push(text);
        let (args, e) = p.final_arguments();
        assert_eq!(Value::Object(args), lenient, "{text}");
        assert_eq!(e, error, "{text}");
    }
}

#[test]
fn incremental_matches_reference_on_every_prefix() {
    for text in [
        r#"{"path":"/tmp/a.txt","content":"l1\nl2 \"q\" \\ \/ \b\f\r\t \u00e9 \ud83d\ude00 \ud83d!"}"#,
        r#"{ "a" : [ 1 , -2.5e+3 , 0 , true , false , null , [ ] , { } ] , "b" : { "c" : "d" } }"#,
        "{\n  \"x\": {\"y\": [[1], [2, [3]]]},\n  \"z\": \"24°C\"\n}",
        r#"{"a":1,"a":"dup"}"#,
    ] {
        assert_incremental_matches(text);
    }
}

#[test]
fn incremental_falls_back_to_the_cascade_on_irregular_input() {
    for text in [
        "{\"raw\":\"a\nb\",\"k\":1}",
        r#"{"bad":"C:\Users","k":1}"#,
        r#"["top", "level"]"#,
        r#"{"a":01}"#,
        r#"{"a":tru}"#,
        r#"{"a" 1}"#,
    ] {
        assert_incremental_matches(text);
    }
}

#[test]
fn incremental_keeps_the_first_of_concatenated_objects_until_finish() {
    let mut parser = PartialJsonParser::new();
    parser.push(r#"{"a":"x"}"#);
    assert_eq!(parser.finish(), Ok(obj(json!({"a": "x"}))));
    parser.push(r#"{"b":2}"#);
    assert_eq!(parser.value(), obj(json!({"a": "x"})));
    assert_eq!(parser.finish(), Err(FinishError::Invalid));
}

#[test]
fn finish_is_strict() {
    let finish = |text: &str| {
        let mut parser = PartialJsonParser::new();
        parser.push(text);
        parser.finish()
    };
    assert_eq!(finish(""), Ok(Map::new()));
    assert_eq!(finish("  "), Ok(Map::new()));
    assert_eq!(finish(r#"{"a":1}  "#), Ok(obj(json!({"a": 1}))));
    assert_eq!(
        finish("{\"a\":\"l1\nl2\"}"),
        Ok(obj(json!({"a": "l1\nl2"})))
    );
    assert_eq!(finish(r#"{"a":"trunc"#), Err(FinishError::Invalid));
    assert_eq!(finish(r#"[1]"#), Err(FinishError::NotAnObject));
    assert_eq!(finish(r#"{"a":"\ud83d"}"#), Ok(obj(json!({"a": ""}))));
}

#[test]
fn buffer_keeps_the_raw_text() {
    let mut parser = PartialJsonParser::new();
    parser.push("{\"a\"");
    parser.push(":1}");
    assert_eq!(parser.buffer(), "{\"a\":1}");
}
