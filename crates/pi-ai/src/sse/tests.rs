//! Unit tests for the SSE parser: one per framing and field rule.

use super::*;

/// Feeds `chunks` one read at a time, then finishes.
fn run(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    for chunk in chunks {
        parser.feed(chunk, &mut out);
    }
    parser.finish(&mut out);
    out
}

/// `(event, data)` pairs, the part most tests compare.
fn pairs(events: &[SseEvent]) -> Vec<(Option<&str>, &str)> {
    events
        .iter()
        .map(|e| (e.event.as_deref(), e.data.as_str()))
        .collect()
}

#[test]
fn lf_crlf_and_cr_terminators_are_equivalent() {
    for input in [
        &b"event: a\ndata: 1\n\n"[..],
        b"event: a\r\ndata: 1\r\n\r\n",
        b"event: a\rdata: 1\r\r",
        b"event: a\r\ndata: 1\n\r",
    ] {
        assert_eq!(pairs(&parse_all(input)), [(Some("a"), "1")], "{input:?}");
    }
}

#[test]
fn cr_at_end_of_read_with_lf_at_start_of_next_is_one_terminator() {
    let events = run(&[b"data: A\r", b"\n", b"data: B\r", b"\n\r", b"\n"]);
    assert_eq!(pairs(&events), [(None, "A\nB")]);
}

#[test]
fn cr_at_end_of_read_followed_by_other_byte_is_a_terminator() {
    let events = run(&[b"data: A\r", b"data: B\r", b"\r"]);
    assert_eq!(pairs(&events), [(None, "A\nB")]);
}

#[test]
fn empty_read_between_cr_and_lf_keeps_them_together() {
    let events = run(&[b"data: A\r", b"", b"\ndata: B\n\n"]);
    assert_eq!(pairs(&events), [(None, "A\nB")]);
}

#[test]
fn event_is_dispatched_when_its_blank_line_arrives_not_later() {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.feed(b"data: x\r\r", &mut out);
    assert_eq!(pairs(&out), [(None, "x")]);
    // The trailing CR of the blank line is still undecided; an LF must not dispatch again.
    parser.feed(b"\n", &mut out);
    parser.finish(&mut out);
    assert_eq!(out.len(), 1);
}

#[test]
fn utf8_character_split_across_reads_is_reassembled() {
    let bytes = "data: 24°C 😀\n\n".as_bytes();
    for split in 0..bytes.len() {
        let events = run(&[&bytes[..split], &bytes[split..]]);
        assert_eq!(pairs(&events), [(None, "24°C 😀")], "split at {split}");
    }
}

#[test]
fn invalid_utf8_is_replaced_and_later_events_still_arrive() {
    let events = parse_all(b"data: a\xffb\n\ndata: next\n\n");
    assert_eq!(pairs(&events), [(None, "a\u{FFFD}b"), (None, "next")]);
}

#[test]
fn truncated_utf8_sequence_before_terminator_is_replaced() {
    let events = parse_all(b"data: \xE2\x82\n\n");
    assert_eq!(pairs(&events), [(None, "\u{FFFD}")]);
}

#[test]
fn one_leading_bom_is_stripped_even_when_split() {
    let events = run(&[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]);
    assert_eq!(pairs(&events), [(None, "x")]);
}

#[test]
fn only_the_first_bom_is_stripped() {
    // A second BOM makes the field name "\u{FEFF}data", an unknown field: nothing dispatched.
    let events = parse_all(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\n");
    assert!(events.is_empty());
    // A BOM on a later line is not stripped either.
    let events = parse_all(b"data: a\n\xEF\xBB\xBFdata: b\n\n");
    assert_eq!(pairs(&events), [(None, "a")]);
}

#[test]
fn event_field_absent_empty_and_present() {
    let events = parse_all(b"data: 1\n\nevent:\ndata: 2\n\nevent: x\ndata: 3\n\ndata: 4\n\n");
    assert_eq!(
        pairs(&events),
        [(None, "1"), (None, "2"), (Some("x"), "3"), (None, "4")]
    );
}

#[test]
fn multi_line_data_is_joined_with_lf() {
    let events = parse_all(b"data: a\ndata:\ndata: c\n\n");
    assert_eq!(pairs(&events), [(None, "a\n\nc")]);
}

#[test]
fn only_one_leading_space_is_removed() {
    let events = parse_all(b"data:no-space\n\ndata:  two\n\ndata\n\n");
    assert_eq!(
        pairs(&events),
        [(None, "no-space"), (None, " two"), (None, "")]
    );
}

#[test]
fn value_keeps_later_colons() {
    let events = parse_all(b"data: {\"a\":\"b:c\"}\n\n");
    assert_eq!(events[0].data, "{\"a\":\"b:c\"}");
}

#[test]
fn event_without_data_is_not_dispatched_and_its_type_is_reset() {
    let events = parse_all(b"event: ping\n\ndata: x\n\n");
    assert_eq!(pairs(&events), [(None, "x")]);
}

#[test]
fn comments_are_ignored_and_counted() {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.feed(
        b": OPENROUTER PROCESSING\n\n:\ndata: x\n: inside\n\n",
        &mut out,
    );
    assert_eq!(pairs(&out), [(None, "x")]);
    assert_eq!(parser.comments_seen(), 3);
}

#[test]
fn unknown_fields_are_ignored() {
    let events = parse_all(b"foo: bar\ndata: x\nData: y\n\n");
    assert_eq!(pairs(&events), [(None, "x")]);
}

#[test]
fn id_persists_across_events_and_nul_ids_are_ignored() {
    let events = parse_all(b"id: 1\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\nid\ndata: d\n\n");
    let ids: Vec<_> = events.iter().map(|e| e.id.as_deref()).collect();
    assert_eq!(ids, [Some("1"), Some("1"), Some("1"), Some("")]);
}

#[test]
fn retry_accepts_digits_only() {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.feed(
        b"retry: 3000\ndata: a\n\nretry: 12x\ndata: b\n\nretry: -1\ndata: c\n\nretry:\ndata: d\n\n",
        &mut out,
    );
    let retries: Vec<_> = out.iter().map(|e| e.retry).collect();
    assert_eq!(retries, [Some(3000), None, None, None]);
    assert_eq!(parser.reconnection_ms(), Some(3000));
    parser.feed(b"retry: 99999999999999999999999\n\nretry: 7\n\n", &mut out);
    assert_eq!(out.len(), 4, "retry alone dispatches nothing");
    assert_eq!(parser.reconnection_ms(), Some(7));
}

#[test]
fn finish_flushes_a_pending_event_and_an_unterminated_line() {
    assert_eq!(pairs(&parse_all(b"data: a\n")), [(None, "a")]);
    assert_eq!(pairs(&parse_all(b"event: e\ndata: a")), [(Some("e"), "a")]);
    assert!(parse_all(b"event: e\n").is_empty());
}

#[test]
fn trailing_cr_at_eof_creates_no_extra_event() {
    assert_eq!(pairs(&run(&[b"data: z\n\n", b"\r"])), [(None, "z")]);
}

#[test]
fn finish_resets_the_parser_for_a_new_stream() {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.feed(b"id: 5\ndata: a\r", &mut out);
    parser.finish(&mut out);
    parser.feed(b"\xEF\xBB\xBF\ndata: b\n\n", &mut out);
    assert_eq!(pairs(&out), [(None, "a"), (None, "b")]);
    assert_eq!(out[1].id, None);
}

#[test]
fn many_lines_in_one_read_and_one_line_over_many_reads() {
    let mut whole = Vec::new();
    for i in 0..1000 {
        whole.extend_from_slice(format!("data: {i}\n\n").as_bytes());
    }
    assert_eq!(parse_all(&whole).len(), 1000);

    let long = "x".repeat(100_000);
    let body = format!("data: {long}\n\n");
    let chunks: Vec<&[u8]> = body.as_bytes().chunks(3).collect();
    let events = run(&chunks);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].data.len(), 100_000);
}

#[test]
fn arbitrary_bytes_do_not_panic() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    for size in [1, 2, 3, 5, 64, 4096] {
        let chunks: Vec<&[u8]> = bytes.chunks(size).collect();
        assert_eq!(run(&chunks), parse_all(&bytes), "size {size}");
    }
}

#[test]
fn an_event_left_unterminated_at_the_end_is_reported() {
    let state = |chunks: &[&[u8]]| {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            parser.feed(c, &mut out);
        }
        parser.has_unterminated_event()
    };
    assert!(!state(&[]));
    assert!(!state(&[b"data: a\n\n"]));
    assert!(!state(&[b"data: a\r\n\r\n  \n\t"]));
    assert!(state(&[b"data: a\n\ndata: b"]));
    assert!(state(&[b"data: a\n\ndata: b\n"]));
    assert!(state(&[b"<html>hello</html>"]));
    assert!(state(&[b": ping\n"]));
    assert!(!state(&[b"data: a\r", b"\r"]));
    // finish() starts a new stream.
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.feed(b"data: x", &mut out);
    parser.finish(&mut out);
    assert!(!parser.has_unterminated_event());
    assert_eq!(out.len(), 1);
}
