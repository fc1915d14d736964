//! The partial-JSON parsers on arbitrary text pushed in arbitrary fragments.
//!
//! Input: one seed byte choosing fragment sizes, then the text (lossy UTF-8). Properties: no
//! panic; `PartialJsonParser::value` equals `parse_streaming_json` of the buffer after every
//! push; when serde_json accepts the whole text as one object, `finish` returns exactly it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::partial_json::{
    PartialJsonParser, parse_json_with_repair, parse_streaming_json, parse_streaming_value,
};
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
        assert_eq!(
            parser.value(),
            parse_streaming_json(parser.buffer()),
            "incremental value differs from the cascade on {:?}",
            parser.buffer()
        );
    }
    let _ = parse_streaming_value(&text);
    let _ = parse_json_with_repair(&text);
    let finished = parser.finish();
    if let Ok(serde_json::Value::Object(expected)) =
        serde_json::from_str::<serde_json::Value>(&text)
    {
        assert_eq!(
            finished.as_ref().ok(),
            Some(&expected),
            "finish rejects or changes a valid object"
        );
    }
});
