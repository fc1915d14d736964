//! The partial-JSON parsers on arbitrary text pushed in arbitrary fragments.
//!
//! Input: one seed byte choosing fragment sizes, then the text (lossy UTF-8). Properties: no
//! panic; `PartialJsonParser::value` equals `parse_streaming_json` of the buffer after every
//! push, and so does the published `arguments()` while it is current (always up to
//! `EXACT_BYTES`); when the text is one JSON object (read with the project's deep parse, nested at most
//! `MAX_ARGUMENT_DEPTH`), `finish` returns exactly it; deeper text is refused with `TooDeep`;
//! the final arguments either carry no error and equal `finish`'s object (round trip), or carry
//! an error (refused, never a changed object that would be executed).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::partial_json::{
    EXACT_BYTES, PartialJsonParser, parse_json_with_repair, parse_streaming_json,
    parse_streaming_value,
};
use pi_ai::json_depth::{MAX_ARGUMENT_DEPTH, MAX_DOCUMENT_DEPTH, exceeds_depth, from_str};
use pi_ai::partial_json::FinishError;
use pi_rs_fuzz::chunk_sizes;

fuzz_target!(|data: &[u8]| {
    let Some((&seed, body)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(body);
    let mut parser = PartialJsonParser::new();
    let mut fed = 0;
    for piece in chunk_sizes(text.as_bytes(), seed) {
        // Cut at char boundaries: extend the piece to the next boundary.
        let mut end = (fed + piece.len()).min(text.len());
        while end < text.len() && !text.is_char_boundary(end) {
            end += 1;
        }
        if end <= fed {
            continue;
        }
        parser.push(&text[fed..end]);
        fed = end;
        let reference = parse_streaming_json(parser.buffer());
        assert_eq!(
            parser.value(),
            reference,
            "incremental value differs from the cascade on {:?}",
            parser.buffer()
        );
        // What a mapper publishes is exact up to `EXACT_BYTES`, and whenever it says so.
        assert!(parser.is_current() || parser.buffer().len() > EXACT_BYTES);
        if parser.is_current() {
            assert_eq!(parser.arguments(), &reference, "published value differs");
        }
    }
    let _ = parse_streaming_value(&text);
    let _ = parse_json_with_repair(&text);
    let finished = parser.finish();
    let too_deep = exceeds_depth(&text, MAX_ARGUMENT_DEPTH);
    if too_deep {
        assert_eq!(
            finished,
            Err(FinishError::TooDeep {
                limit: MAX_ARGUMENT_DEPTH
            }),
            "arguments past the depth limit are not refused"
        );
    } else if let Ok(serde_json::Value::Object(expected)) =
        from_str::<serde_json::Value>(&text, MAX_DOCUMENT_DEPTH)
    {
        assert_eq!(
            finished.as_ref().ok(),
            Some(&expected),
            "finish rejects or changes a valid object"
        );
    }
    let (args, error) = parser.final_arguments();
    match (&finished, error) {
        (Ok(map), None) => assert_eq!(&args, map, "executed arguments differ from the text"),
        (Err(e), Some(f)) => assert_eq!(*e, f),
        _ => panic!("final_arguments disagrees with finish"),
    }
});
