//! The SSE framer on arbitrary bytes in arbitrary reads.
//!
//! Input: one seed byte choosing the read sizes, then the stream. Properties: no panic; the
//! events do not depend on the chunking; `finish` on a fresh parser yields nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::sse::SseParser;
use pi_rs_fuzz::{chunk_sizes, parse_whole};

fuzz_target!(|data: &[u8]| {
    let Some((&seed, body)) = data.split_first() else {
        return;
    };
    let whole = parse_whole(body);
    let mut parser = SseParser::new();
    let mut chunked = Vec::new();
    for read in chunk_sizes(body, seed) {
        parser.feed(read, &mut chunked).unwrap();
    }
    parser.finish(&mut chunked).unwrap();
    assert_eq!(whole, chunked, "events depend on the chunking");
    let mut none = Vec::new();
    SseParser::new().finish(&mut none).unwrap();
    assert!(none.is_empty());
});
