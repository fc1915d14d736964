//! Unit tests for the SSE parser: one per framing and field rule.

use super::*;

/// Feeds `chunks` one read at a time, then finishes.
fn run(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    for chunk in chunks {
        parser.feed(chunk, &mut out).unwrap();
    }
    parser.finish(&mut out).unwrap();
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
    parser.feed(b"data: x\r\r", &mut out).unwrap();
    assert_eq!(pairs(&out), [(None, "x")]);
    // The trailing CR of the blank line is still undecided; an LF must not dispatch again.
    parser.feed(b"\n", &mut out).unwrap();
    parser.finish(&mut out).unwrap();
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
    parser
        .feed(
            b": OPENROUTER PROCESSING\n\n:\ndata: x\n: inside\n\n",
            &mut out,
        )
        .unwrap();
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
    ).unwrap();
    let retries: Vec<_> = out.iter().map(|e| e.retry).collect();
    assert_eq!(retries, [Some(3000), None, None, None]);
    assert_eq!(parser.reconnection_ms(), Some(3000));
    parser
        .feed(b"retry: 99999999999999999999999\n\nretry: 7\n\n", &mut out)
        .unwrap();
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
    parser.feed(b"id: 5\ndata: a\r", &mut out).unwrap();
    parser.finish(&mut out).unwrap();
    parser.feed(b"\xEF\xBB\xBF\ndata: b\n\n", &mut out).unwrap();
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

// Streaming paths: a line cut by reads at every position.

/// Every split of `bytes` into two reads, and 1-byte reads, give `expected`.
fn assert_all_splits(bytes: &[u8], expected: &[SseEvent]) {
    for split in 0..=bytes.len() {
        assert_eq!(
            run(&[&bytes[..split], &bytes[split..]]),
            expected,
            "split at {split}"
        );
    }
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(run(&singles), expected, "1-byte reads");
}

#[test]
fn data_field_name_space_and_value_cut_anywhere() {
    let expected = [SseEvent {
        data: "ab\n c".into(),
        ..SseEvent::default()
    }];
    assert_all_splits(b"data: ab\r\ndata:  c\r\n\r\n", &expected);
    assert_all_splits(
        b"data:ab\ndata: c\n\n",
        &[SseEvent {
            data: "ab\nc".into(),
            ..SseEvent::default()
        }],
    );
}

#[test]
fn event_id_and_retry_values_cut_anywhere() {
    let expected = [SseEvent {
        event: Some("delta".into()),
        data: "x".into(),
        id: Some("42".into()),
        retry: Some(1500),
    }];
    assert_all_splits(b"event: delta\nid: 42\nretry: 1500\ndata: x\n\n", &expected);
}

#[test]
fn comment_and_unknown_field_cut_anywhere() {
    let bytes = b": keep-alive\nfoo: bar\ndata: x\n\n";
    for split in 0..=bytes.len() {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        parser.feed(&bytes[..split], &mut out).unwrap();
        parser.feed(&bytes[split..], &mut out).unwrap();
        parser.finish(&mut out).unwrap();
        assert_eq!(pairs(&out), [(None, "x")], "split at {split}");
        assert_eq!(parser.comments_seen(), 1, "split at {split}");
    }
}

#[test]
fn fields_without_colon_cut_anywhere() {
    let expected = [SseEvent {
        data: "\na".into(),
        id: Some(String::new()),
        ..SseEvent::default()
    }];
    assert_all_splits(b"id: 1\nevent: e\ndata\ndata: a\nevent\nid\n\n", &expected);
}

#[test]
fn utf8_split_inside_a_streamed_data_line_and_across_data_lines() {
    let bytes = "data: é😀\ndata: ü\n\n".as_bytes();
    assert_all_splits(
        bytes,
        &[SseEvent {
            data: "é😀\nü".into(),
            ..SseEvent::default()
        }],
    );
}

#[test]
fn invalid_utf8_in_a_streamed_data_line_is_replaced_per_line() {
    // A sequence cut short by the end of its line stays one U+FFFD: the joining LF ends it.
    let bytes = b"data: a\xF0\x9F\ndata: \x98\x80b\xff\n\n";
    let expected = [SseEvent {
        data: "a\u{FFFD}\n\u{FFFD}\u{FFFD}b\u{FFFD}".into(),
        ..SseEvent::default()
    }];
    assert_eq!(parse_all(bytes), expected);
    assert_all_splits(bytes, &expected);
}

#[test]
fn bom_before_a_comment_or_a_field_without_colon() {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.feed(b"\xEF\xBB", &mut out).unwrap();
    parser.feed(b"\xBF: hi\ndata: x\n\n", &mut out).unwrap();
    assert_eq!(parser.comments_seen(), 1);
    assert_eq!(pairs(&out), [(None, "x")]);
    assert_all_splits(b"\xEF\xBB\xBFdata\n\n", &[SseEvent::default()]);
}

#[test]
fn unterminated_streamed_data_line_is_flushed_by_finish() {
    let events = run(&[b"data: par", b"tial", b" line"]);
    assert_eq!(pairs(&events), [(None, "partial line")]);
    let events = run(&[b"data: a\ndata:", b" "]);
    assert_eq!(pairs(&events), [(None, "a\n")]);
}

// The size limit.

/// Feeds `chunks` to a parser limited to `limit` bytes, stopping at the first error; returns
/// the events delivered and the outcome (`finish` when every read succeeded).
fn run_limited(chunks: &[&[u8]], limit: usize) -> (Vec<SseEvent>, Result<(), SseError>) {
    let mut parser = SseParser::with_options(SseOptions {
        max_event_bytes: limit,
    });
    let mut out = Vec::new();
    for chunk in chunks {
        if let Err(error) = parser.feed(chunk, &mut out) {
            return (out, Err(error));
        }
    }
    let finished = parser.finish(&mut out);
    (out, finished)
}

const TOO_LARGE: Result<(), SseError> = Err(SseError::EventTooLarge { limit: 8 });

#[test]
fn default_limit_is_64_mib() {
    assert_eq!(SseOptions::default().max_event_bytes, 64 * 1024 * 1024);
    assert_eq!(DEFAULT_MAX_EVENT_BYTES, 64 * 1024 * 1024);
}

#[test]
fn data_up_to_the_limit_passes_and_one_byte_more_fails() {
    for size in [1, 3, 100] {
        let ok: Vec<&[u8]> = b"data: 12345678\n\n".chunks(size).collect();
        let (events, outcome) = run_limited(&ok, 8);
        assert_eq!(
            (pairs(&events), outcome),
            (vec![(None, "12345678")], Ok(()))
        );
        // Joined lines count with their LF: 4 + 1 + 4 = 9 bytes.
        for bytes in [&b"data: 123456789\n\n"[..], b"data: 1234\ndata: 5678\n\n"] {
            let chunks: Vec<&[u8]> = bytes.chunks(size).collect();
            assert_eq!(run_limited(&chunks, 8), (vec![], TOO_LARGE), "{bytes:?}");
        }
    }
}

#[test]
fn events_before_the_oversized_one_are_delivered_and_the_parser_stays_failed() {
    let mut parser = SseParser::with_options(SseOptions { max_event_bytes: 8 });
    let mut out = Vec::new();
    let fed = parser.feed(
        b"data: a\n\ndata: b\n\ndata: 0123456789\n\ndata: c\n\n",
        &mut out,
    );
    assert_eq!(fed, TOO_LARGE);
    assert_eq!(pairs(&out), [(None, "a"), (None, "b")]);
    assert_eq!(parser.feed(b"data: d\n\n", &mut out), TOO_LARGE);
    assert_eq!(parser.finish(&mut out), TOO_LARGE);
    assert_eq!(out.len(), 2, "nothing after the failure");
    // finish resets: the limit stays, the failure does not.
    parser.feed(b"data: e\n\n", &mut out).unwrap();
    assert_eq!(parser.feed(b"data: 0123456789", &mut out), TOO_LARGE);
    assert_eq!(pairs(&out), [(None, "a"), (None, "b"), (None, "e")]);
}

#[test]
fn a_flood_of_empty_data_lines_hits_the_limit() {
    let flood = b"data\n".repeat(20);
    assert_eq!(run_limited(&[&flood], 8), (vec![], TOO_LARGE));
    // Five empty lines are four joining LFs; the sixth line's name (4 bytes) still fits
    // beside them, the seventh's does not (held bytes = pending data + current field name).
    for (lines, data) in [(5, Some(4)), (6, Some(5)), (7, None)] {
        let (events, outcome) = run_limited(&[&b"data\n".repeat(lines)], 8);
        match data {
            Some(n) => assert_eq!((events[0].data.clone(), outcome), ("\n".repeat(n), Ok(()))),
            None => assert_eq!((events, outcome), (vec![], TOO_LARGE)),
        }
    }
}

#[test]
fn a_long_field_name_or_value_hits_the_limit_in_any_chunking() {
    for bytes in [
        &b"0123456789\n"[..],
        b"0123456789: x\n",
        b"event: 0123456789\n",
        b"id: 0123456789\n",
        b"retry: 0123456789\n",
        b"0123456789",
    ] {
        for size in [1, 4, bytes.len()] {
            let chunks: Vec<&[u8]> = bytes.chunks(size).collect();
            assert_eq!(
                run_limited(&chunks, 8),
                (vec![], TOO_LARGE),
                "{bytes:?} in {size}s"
            );
        }
    }
}

#[test]
fn pending_data_and_the_current_line_count_together() {
    // 4 bytes of data pending, then a 6-byte event value: 10 > 8.
    assert_eq!(
        run_limited(&[b"data: 1234\nevent: abcde\n\n"], 8),
        (vec![], TOO_LARGE)
    );
    // Each alone fits.
    let (events, outcome) = run_limited(&[b"event: abcde\ndata: 1234\n\n"], 8);
    assert_eq!(
        (pairs(&events), outcome),
        (vec![(Some("abcde"), "1234")], Ok(()))
    );
}

#[test]
fn comments_and_unknown_values_are_skipped_not_held() {
    let long = b"x".repeat(10_000);
    let mut body = b":".to_vec();
    body.extend_from_slice(&long);
    body.extend_from_slice(b"\nfoo:");
    body.extend_from_slice(&long);
    body.extend_from_slice(b"\ndata: ok\n\n");
    let chunks: Vec<&[u8]> = body.chunks(7).collect();
    let (events, outcome) = run_limited(&chunks, 8);
    assert_eq!((pairs(&events), outcome), (vec![(None, "ok")], Ok(())));
}

#[test]
fn finish_fails_when_the_last_lines_join_passes_the_limit() {
    assert_eq!(
        run_limited(&[b"data: 12345678\ndata"], 8),
        (vec![], TOO_LARGE)
    );
}

#[test]
fn parse_all_returns_the_events_before_an_oversized_one() {
    let mut body = b"data: small\n\ndata: ".to_vec();
    body.resize(body.len() + DEFAULT_MAX_EVENT_BYTES + 1, b'x');
    body.extend_from_slice(b"\n\ndata: never\n\n");
    assert_eq!(pairs(&parse_all(&body)), [(None, "small")]);
}

#[test]
fn buffers_never_grow_past_the_limit() {
    let mut parser = SseParser::with_options(SseOptions {
        max_event_bytes: 1000,
    });
    let mut out = Vec::new();
    parser.feed(b"data: ", &mut out).unwrap();
    for _ in 0..99 {
        parser.feed(b"0123456789", &mut out).unwrap();
    }
    assert!(parser.data.capacity() <= 1000, "{}", parser.data.capacity());
    parser.feed(b"0123456789", &mut out).unwrap();
    assert_eq!(parser.data.capacity(), 1000);
    assert_eq!(
        parser.feed(b"!", &mut out),
        Err(SseError::EventTooLarge { limit: 1000 })
    );
    assert_eq!(parser.data.capacity(), 0, "memory freed on failure");
}

#[test]
fn an_event_left_unterminated_at_the_end_is_reported() {
    let state = |chunks: &[&[u8]]| {
        let mut parser = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            parser.feed(c, &mut out).unwrap();
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
    parser.feed(b"data: x", &mut out).unwrap();
    parser.finish(&mut out).unwrap();
    assert!(!parser.has_unterminated_event());
    assert_eq!(out.len(), 1);
}
