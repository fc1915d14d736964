//! Shared helpers of the fuzz targets.

use pi_ai::providers::WireApi;
use pi_ai::sse::{SseEvent, SseParser};
use pi_ai::{AssistantMessage, AssistantMessageEvent, Model, PartialMessage, StreamOptions};

/// Splits `body` into reads whose sizes follow `seed` (1..=64 bytes, a deterministic
/// xorshift sequence), so one input exercises many read boundaries.
pub fn chunk_sizes(body: &[u8], seed: u8) -> Vec<&[u8]> {
    let mut state = u32::from(seed) | 0x9e37_0000;
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let n = (state % 64 + 1) as usize;
        let (head, tail) = rest.split_at(n.min(rest.len()));
        out.push(head);
        rest = tail;
    }
    out
}

/// Parses `body` as one whole read (plus `finish`).
pub fn parse_whole(body: &[u8]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    // The default 64 MiB limit is far above any fuzz input.
    parser.feed(body, &mut out).unwrap();
    parser.finish(&mut out).unwrap();
    out
}

/// Fuzzes one wire API's mapper. Input: one control byte (bit 0: the model reasons) followed
/// by an SSE body, framed by our SSE parser (chunking-invariance is the `sse` target's
/// property) and fed event by event to a fresh mapper, then `on_end`.
///
/// Properties: no panic; every block event's `contentIndex` points into the partial message;
/// per index, no delta or end comes before its start, and after a successful `on_end` every
/// started block has been ended.
pub fn fuzz_mapper(api: &dyn WireApi, data: &[u8]) {
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    let model = Model {
        id: "m".into(),
        name: "m".into(),
        api: api.api().into(),
        provider: "p".into(),
        reasoning: control & 1 == 1,
        ..Default::default()
    };
    let partial = PartialMessage::new(AssistantMessage::empty(api.api(), "p", "m"));
    let mut mapper = api.new_mapper(&model, partial.clone(), &StreamOptions::default());
    let mut out = Vec::new();
    let mut result = Ok(());
    for e in parse_whole(body) {
        result = mapper.on_event(&e, &mut out);
        if result.is_err() {
            break;
        }
    }
    if result.is_ok() {
        result = mapper.on_end(&mut out);
    }
    check_block_events(&out, partial.read().content.len(), result.is_ok());
}

/// The block-event invariants of [`fuzz_mapper`].
pub fn check_block_events(events: &[AssistantMessageEvent], blocks: usize, ended_ok: bool) {
    // Per index: 0 = not started, 1 = open, 2 = ended.
    let mut state = vec![0u8; blocks];
    for e in events {
        let Some(i) = e.content_index() else { continue };
        assert!(
            i < blocks,
            "contentIndex {i} out of range ({blocks} blocks)"
        );
        let kind = e.kind();
        if kind.ends_with("_start") {
            assert_eq!(state[i], 0, "second {kind} for block {i}");
            state[i] = 1;
        } else {
            assert_ne!(state[i], 0, "{kind} before the start of block {i}");
            if kind.ends_with("_end") {
                state[i] = 2;
            }
        }
    }
    if ended_ok {
        assert!(
            !state.contains(&1),
            "a block left open after a successful end"
        );
    }
}
