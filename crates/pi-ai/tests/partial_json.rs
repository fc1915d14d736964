//! `parseStreamingJson` against the repair vectors, against pi 0.85.1's own output on every
//! prefix of a set of texts (`tests/data/partial-json/generate.mjs`), and the incremental
//! parser against the whole-buffer function on random JSON.

use pi_ai::partial_json::{
    FinishError, PartialJsonParser, parse_streaming_json, parse_streaming_value,
};
use proptest::prelude::*;
use serde_json::{Map, Value};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");

/// JSON as pi writes it (JavaScript number spelling), for comparing values across sources.
fn js(value: &Value) -> String {
    pi_ai::json::to_string(value).unwrap()
}

fn incremental(chunks: &[&str]) -> PartialJsonParser {
    let mut parser = PartialJsonParser::new();
    for chunk in chunks {
        parser.push(chunk);
    }
    parser
}

#[test]
fn partial_json_prefix_vectors() {
    let text = std::fs::read_to_string(format!("{DATA}/bugs/partial-json-prefixes.jsonl")).unwrap();
    // pi's output for `{"a":"\ud83d` is a lone surrogate, which serde_json cannot hold (and
    // which is not what pi-rs returns); blank it before parsing the file.
    let vectors: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(&l.replace(r#""\ud83d""#, r#""""#)).unwrap())
        .collect();
    assert_eq!(vectors.len(), 16);
    for vector in &vectors {
        let input = vector["input"].as_str().unwrap();
        let expected = &vector["expected_partial"];
        let parser = incremental(&[input]);
        if expected.is_null() {
            // Concatenated objects: the strict final parse must fail.
            assert_eq!(parser.finish(), Err(FinishError::Invalid), "{input:?}");
            continue;
        }
        assert_eq!(js(&parse_streaming_value(input)), js(expected), "{input:?}");
        let expected_map = match expected {
            Value::Object(map) => map.clone(),
            _ => Map::new(), // a top-level array is not tool arguments
        };
        assert_eq!(parse_streaming_json(input), expected_map, "{input:?}");
        assert_eq!(parser.value(), expected_map, "{input:?} incremental");
        // The same input delivered one character at a time.
        let chars: Vec<String> = input.chars().map(String::from).collect();
        let chars: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(
            incremental(&chars).value(),
            expected_map,
            "{input:?} by chars"
        );
    }
}

/// The first `units` UTF-16 code units of `text`.
fn utf16_prefix(text: &str, units: usize) -> &str {
    let mut seen = 0;
    for (index, c) in text.char_indices() {
        if seen >= units {
            return &text[..index];
        }
        seen += c.len_utf16();
    }
    text
}

/// Removes `\uD800`–`\uDFFF` escapes from JSON text. `JSON.stringify` writes paired
/// surrogates as characters, so every such escape in its output is a lone surrogate.
fn drop_surrogate_escapes(json: &str) -> String {
    let mut out = String::new();
    let mut chars = json.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let rest: String = chars.clone().take(5).collect();
        let lower = rest.to_ascii_lowercase();
        if lower.len() == 5
            && lower.starts_with("ud")
            && matches!(&lower[2..3], "8" | "9" | "a" | "b" | "c" | "d" | "e" | "f")
        {
            chars.nth(4);
        } else {
            out.push(c);
            out.extend(chars.next());
        }
    }
    out
}

/// A reference record (`"pi"` is its last field) with the lone surrogates of pi's output
/// removed: pi-rs drops unpaired surrogates.
fn reference_record(line: &str) -> Value {
    let (head, pi) = line.split_once(",\"pi\":").unwrap();
    serde_json::from_str(&format!("{head},\"pi\":{}", drop_surrogate_escapes(pi))).unwrap()
}

#[test]
fn every_prefix_matches_pi_0_85_1() {
    let text =
        std::fs::read_to_string(format!("{DATA}/partial-json/reference-prefixes.jsonl")).unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let record = reference_record(line);
        let full = record["text"].as_str().unwrap();
        let prefix = utf16_prefix(full, record["cut"].as_u64().unwrap() as usize);
        let expected = record["pi"].clone();
        assert_eq!(
            js(&parse_streaming_value(prefix)),
            js(&expected),
            "{prefix:?}"
        );
        let expected_map = match expected {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        assert_eq!(
            js(&Value::Object(incremental(&[prefix]).value())),
            js(&Value::Object(expected_map)),
            "{prefix:?} incremental"
        );
        checked += 1;
    }
    assert_eq!(checked, 677);
}

/// Random, mostly malformed texts (`tests/data/partial-json/fuzz.py`): the whole cascade,
/// including every quirk of the lenient parser, against pi's output.
#[test]
fn malformed_texts_match_pi_0_85_1() {
    let text = std::fs::read_to_string(format!("{DATA}/partial-json/lenient-fuzz.jsonl")).unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let record = reference_record(line);
        let input = record["text"].as_str().unwrap();
        assert_eq!(
            js(&parse_streaming_value(input)),
            js(&record["pi"]),
            "{input:?}"
        );
        let expected_map = match &record["pi"] {
            Value::Object(map) => map.clone(),
            _ => Map::new(),
        };
        assert_eq!(
            incremental(&[input]).value(),
            expected_map,
            "{input:?} incremental"
        );
        checked += 1;
    }
    assert_eq!(checked, 1000);
}

/// Random JSON objects: strings with escapes and non-ASCII, numbers, literals, nesting.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z \"\\\\/\\n\\t°😀\u{1}]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,6}", inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Value> {
    prop::collection::vec(("[a-z_]{1,6}", json_value()), 0..5)
        .prop_map(|kv| Value::Object(kv.into_iter().collect()))
}

/// Char-boundary cut points of `text` from arbitrary numbers.
fn boundaries(text: &str, cuts: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = cuts
        .iter()
        .map(|c| {
            let mut at = c % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            at
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// At every read boundary the incremental value equals the whole-buffer function, and the
    /// final strict parse returns the original object.
    #[test]
    fn incremental_equals_whole_buffer(
        value in json_object(),
        pretty in any::<bool>(),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        let text = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            serde_json::to_string(&value).unwrap()
        };
        let mut parser = PartialJsonParser::new();
        let mut start = 0;
        for cut in boundaries(&text, &cuts).into_iter().chain([text.len()]) {
            parser.push(&text[start..cut]);
            start = cut;
            prop_assert_eq!(parser.value(), parse_streaming_json(&text[..cut]), "{:?}", &text[..cut]);
        }
        prop_assert_eq!(Value::Object(parser.finish().unwrap()), value);
    }

    /// Arbitrary text never panics and the incremental parser agrees with the whole buffer.
    #[test]
    fn arbitrary_text_is_handled(text in "[{}\\[\\]\",:0-9eE.+\\- a-z\\\\\n]{0,60}") {
        let parser = incremental(&[&text]);
        prop_assert_eq!(parser.value(), parse_streaming_json(&text));
        let _ = parser.finish();
    }
}
