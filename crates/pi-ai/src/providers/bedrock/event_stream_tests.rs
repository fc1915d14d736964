use serde_json::json;

use super::*;
use crate::testkit::{EventStreamBuilder, event_stream_frame};

/// Feeds `body` in `chunk`-byte reads, then finishes: the events and the first failure.
fn decode(body: &[u8], chunk: usize) -> (Vec<SseEvent>, Option<String>) {
    let mut decoder = EventStreamDecoder::new();
    let mut out = Vec::new();
    for piece in body.chunks(chunk.max(1)) {
        if let Err(e) = decoder.feed(piece, &mut out) {
            return (out, Some(e.to_string()));
        }
    }
    let end = decoder.finish(&mut out).err().map(|e| e.to_string());
    (out, end)
}

fn names(events: &[SseEvent]) -> Vec<&str> {
    events.iter().filter_map(|e| e.event.as_deref()).collect()
}

#[test]
fn events_are_named_by_event_type_in_any_read_size() {
    let body = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"text": "héllo"}}),
        )
        .event("messageStop", &json!({"stopReason": "end_turn"}))
        .build();
    let (whole, err) = decode(&body, body.len());
    assert_eq!(err, None);
    assert_eq!(
        names(&whole),
        ["messageStart", "contentBlockDelta", "messageStop"]
    );
    assert_eq!(
        whole[1].data,
        r#"{"contentBlockIndex":0,"delta":{"text":"héllo"}}"#
    );
    for size in [1, 7] {
        let (events, err) = decode(&body, size);
        assert_eq!(err, None);
        assert_eq!(events, whole, "{size}-byte reads");
    }
}

#[test]
fn a_cut_frame_is_truncated() {
    let body = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .build();
    let cut = EventStreamBuilder::new()
        .raw(&body)
        .raw(&body[..body.len() - 3])
        .build();
    for size in [1, 7, cut.len()] {
        let (events, err) = decode(&cut, size);
        assert_eq!(names(&events), ["messageStart"]);
        assert_eq!(err.as_deref(), Some("Truncated event message received."));
    }
    // Fewer bytes than a length prefix are reported too (the SDK drops them).
    let (_, err) = decode(&[0, 0], 1);
    assert_eq!(err.as_deref(), Some("Truncated event message received."));
}

#[test]
fn checksum_mismatches_use_the_sdk_texts() {
    let mut body = event_stream_frame(&[(":message-type", "event")], b"{}");
    let last = body.len() - 1;
    body[last] ^= 0xff;
    let (events, err) = decode(&body, 7);
    assert!(events.is_empty());
    let err = err.unwrap();
    assert!(
        err.starts_with("The message checksum (")
            && err.contains(") did not match the expected value of "),
        "{err}"
    );

    let mut body = event_stream_frame(&[(":message-type", "event")], b"{}");
    body[9] ^= 0x01;
    let (_, err) = decode(&body, 1);
    assert!(
        err.unwrap()
            .starts_with("The prelude checksum specified in the message ("),
    );
}

#[test]
fn exceptions_and_errors_end_the_stream_after_earlier_events() {
    let body = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .exception(
            "throttlingException",
            &json!({"message": "Too many requests"}),
        )
        .event("messageStop", &json!({"stopReason": "end_turn"}))
        .build();
    for size in [1, 7, body.len()] {
        let (events, err) = decode(&body, size);
        assert_eq!(names(&events), ["messageStart"]);
        assert_eq!(err.as_deref(), Some("Throttling error: Too many requests"));
    }
    let body = event_stream_frame(
        &[
            (":message-type", "error"),
            (":error-code", "InternalFailure"),
            (":error-message", "went wrong"),
        ],
        b"",
    );
    assert_eq!(decode(&body, 7).1.as_deref(), Some("went wrong"));
    let body = event_stream_frame(&[(":message-type", "error")], b"");
    assert_eq!(decode(&body, 7).1.as_deref(), Some("UnknownError"));
    let body = event_stream_frame(&[(":message-type", "weird"), (":event-type", "x")], b"");
    assert_eq!(
        decode(&body, 7).1.as_deref(),
        Some("Unrecognizable event type: x")
    );
}

#[test]
fn nothing_is_read_after_a_failure() {
    let mut decoder = EventStreamDecoder::new();
    let mut out = Vec::new();
    let bad = EventStreamBuilder::new()
        .exception("validationException", &json!({"message": "bad"}))
        .build();
    assert!(decoder.feed(&bad, &mut out).is_err());
    let good = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .build();
    assert!(decoder.feed(&good, &mut out).is_ok());
    assert!(decoder.finish(&mut out).is_ok());
    assert!(out.is_empty());
}

/// The frames shipped with `aws-smithy-eventstream` (see `testdata/`): the valid ones pass
/// the framing checks (they carry no `:message-type`, so they are unrecognizable events),
/// every invalid one fails with a text and no event, in any read size.
#[test]
fn smithy_frames() {
    macro_rules! data {
        ($name:literal) => {
            (
                $name,
                &include_bytes!(concat!("testdata/aws-smithy-eventstream/", $name))[..],
            )
        };
    }
    let valid = [
        data!("valid_empty_payload"),
        data!("valid_no_headers"),
        data!("valid_with_all_headers_and_payload"),
    ];
    for (name, bytes) in valid {
        for size in [1, 7, bytes.len()] {
            let (events, err) = decode(bytes, size);
            assert!(events.is_empty(), "{name}");
            assert_eq!(
                err.as_deref(),
                Some("Unrecognizable event type: undefined"),
                "{name}"
            );
        }
    }
    let invalid = [
        // The header-corrupting frames also carry the original message CRC.
        (data!("invalid_header_name_length"), "The message checksum"),
        (
            data!("invalid_header_name_length_too_long"),
            "The message checksum",
        ),
        (
            data!("invalid_header_string_length_cut_off"),
            "The message checksum",
        ),
        (
            data!("invalid_header_string_value_length"),
            "The message checksum",
        ),
        (data!("invalid_header_value_type"), "The message checksum"),
        (
            data!("invalid_headers_length"),
            "Reported message length does not match received message length",
        ),
        (data!("invalid_message_checksum"), "The message checksum"),
        (data!("invalid_prelude_checksum"), "The prelude checksum"),
    ];
    for ((name, bytes), expected) in invalid {
        for size in [1, 7, bytes.len()] {
            let (events, err) = decode(bytes, size);
            assert!(events.is_empty(), "{name}");
            let err = err.unwrap_or_default();
            assert!(err.starts_with(expected), "{name}: {err}");
        }
    }
}

/// With the checksums made to match, the corrupt headers are the crate's to reject.
#[test]
fn corrupt_headers_under_valid_checksums_fail() {
    for bytes in [
        &include_bytes!("testdata/aws-smithy-eventstream/invalid_header_value_type")[..],
        &include_bytes!("testdata/aws-smithy-eventstream/invalid_header_name_length")[..],
        &include_bytes!("testdata/aws-smithy-eventstream/invalid_header_string_value_length")[..],
    ] {
        let mut frame = bytes.to_vec();
        let crc_at = frame.len() - 4;
        let crc = crc32fast::hash(&frame[..crc_at]);
        frame[crc_at..].copy_from_slice(&crc.to_be_bytes());
        for size in [1, 7] {
            let (events, err) = decode(&frame, size);
            assert!(events.is_empty());
            let err = err.unwrap_or_default();
            assert!(err.starts_with("Invalid event stream message: "), "{err}");
        }
    }
}

proptest::proptest! {
    /// Any bytes, and any one-byte corruption or cut of a valid body, decode without a panic
    /// into events and at most one failure, the same in 1- and 7-byte reads.
    #[test]
    fn arbitrary_input_never_panics(
        noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
        flip in 0usize..400,
        cut in 0usize..400,
    ) {
        let (a, ea) = decode(&noise, 1);
        let (b, eb) = decode(&noise, 7);
        proptest::prop_assert_eq!((a, ea), (b, eb));
        let mut body = EventStreamBuilder::new()
            .event("messageStart", &json!({"role": "assistant"}))
            .event("contentBlockDelta", &json!({"contentBlockIndex": 0, "delta": {"text": "hi"}}))
            .event("messageStop", &json!({"stopReason": "end_turn"}))
            .build();
        let at = flip % body.len();
        body[at] ^= 0x5a;
        let (a, ea) = decode(&body, 1);
        let (b, eb) = decode(&body, 7);
        proptest::prop_assert!(ea.is_some());
        proptest::prop_assert_eq!((a, ea), (b, eb));
        body[at] ^= 0x5a;
        // Message boundaries: each message starts with its total length.
        let mut boundaries = vec![0];
        let mut at = 0;
        while at < body.len() {
            let len = u32::from_be_bytes([body[at], body[at + 1], body[at + 2], body[at + 3]]);
            at += len as usize;
            boundaries.push(at);
        }
        body.truncate(cut % body.len());
        let (_, e) = decode(&body, 7);
        proptest::prop_assert_eq!(e.is_some(), !boundaries.contains(&body.len()));
    }
}
