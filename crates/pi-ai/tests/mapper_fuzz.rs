//! Property tests of the Anthropic and Google mappers: arbitrary event names and payloads
//! (random text, and recorded payloads cut or with bytes flipped) never panic and always end
//! in `Ok` or `Err`; random read boundaries of every recorded stream give the whole-body result.

use crate::anthropic_google_support;

use anthropic_google_support::{Chunking, data, message_json, model, normalize_google_ids, replay};
use pi_ai::providers::{AnthropicMessages, GoogleGenerativeAi, WireApi};
use pi_ai::sse::{SseEvent, SseParser, parse_all};
use pi_ai::{AssistantMessage, PartialMessage, StreamOptions};
use proptest::prelude::*;

const EVENT_NAMES: [&str; 9] = [
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "error",
    "ping",
    "",
];

fn recorded_payloads() -> Vec<SseEvent> {
    [
        "streams/anthropic-messages/server-tool-then-client-tool-split-args.sse",
        "streams/anthropic-messages/redacted-thinking-two-blocks.sse",
        "streams/google-generative-ai/function-call-with-signature-then-empty-text.sse",
        "streams/google-generative-ai/thought-parts-then-text.sse",
    ]
    .iter()
    .flat_map(|p| parse_all(&data(p)))
    .collect()
}

/// Every vendored stream of both APIs with its API and replay provider.
fn all_streams() -> Vec<(&'static dyn WireApi, String, &'static str)> {
    let mut out: Vec<(&'static dyn WireApi, String, &'static str)> = Vec::new();
    for (api, folder, provider) in [
        (
            &AnthropicMessages as &'static dyn WireApi,
            "anthropic-messages",
            "anthropic",
        ),
        (
            &GoogleGenerativeAi as &'static dyn WireApi,
            "google-generative-ai",
            "google",
        ),
    ] {
        let dir = format!("{}/tests/data/streams/{folder}", env!("CARGO_MANIFEST_DIR"));
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".sse"))
            .collect();
        names.sort();
        out.extend(
            names
                .into_iter()
                .map(|n| (api, format!("streams/{folder}/{n}"), provider)),
        );
    }
    out
}

fn drive(api: &dyn WireApi, events: &[SseEvent]) {
    let m = model(api.api(), "p", "m");
    let partial = PartialMessage::new(AssistantMessage::empty(api.api(), "p", "m"));
    let mut mapper = api.new_mapper(&m, partial.clone(), &StreamOptions::default());
    let mut out = Vec::new();
    for e in events {
        if mapper.on_event(e, &mut out).is_err() {
            return;
        }
    }
    let _ = mapper.on_end(&mut out);
    // Every event's index points into the message.
    let len = partial.read().content.len();
    assert!(
        out.iter()
            .filter_map(|e| e.content_index())
            .all(|i| i < len)
    );
}

fn arb_event(payloads: Vec<SseEvent>) -> impl Strategy<Value = SseEvent> {
    let n = payloads.len();
    (
        0..EVENT_NAMES.len(),
        0..n,
        any::<u16>(),
        any::<u8>(),
        ".{0,40}",
        any::<bool>(),
    )
        .prop_map(move |(name, pick, cut, flip, noise, use_noise)| {
            let mut data = payloads[pick].data.clone().into_bytes();
            if use_noise {
                data = noise.into_bytes();
            } else if !data.is_empty() {
                let at = cut as usize % data.len();
                if flip % 3 == 0 {
                    data.truncate(at);
                } else if flip % 3 == 1 {
                    data[at] = flip;
                }
            }
            SseEvent {
                event: Some(EVENT_NAMES[name].to_owned()).filter(|s| !s.is_empty()),
                data: String::from_utf8_lossy(&data).into_owned(),
                ..Default::default()
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn arbitrary_events_never_panic(events in prop::collection::vec(arb_event(recorded_payloads()), 0..40)) {
        drive(&AnthropicMessages, &events);
        drive(&GoogleGenerativeAi, &events);
    }

    #[test]
    fn random_read_boundaries_match_the_whole_body(cuts in prop::collection::vec(1usize..64, 1..200)) {
        for (api, path, provider) in all_streams() {
            let body = data(&path);
            let m = model(api.api(), provider, "m");
            let mut whole = message_json(&replay(api, &m, &body, Chunking::Whole).message);
            // Feed the same body with the random boundaries.
            let partial = PartialMessage::new(AssistantMessage::empty(api.api(), provider, "m"));
            let mut mapper = api.new_mapper(&m, partial.clone(), &StreamOptions::default());
            let mut parser = SseParser::new();
            let (mut sse, mut out) = (Vec::new(), Vec::new());
            let mut rest: &[u8] = &body;
            let mut i = 0;
            while !rest.is_empty() {
                let n = cuts[i % cuts.len()].min(rest.len());
                parser.feed(&rest[..n], &mut sse).unwrap();
                rest = &rest[n..];
                i += 1;
            }
            parser.finish(&mut sse).unwrap();
            let mut result = Ok(());
            for e in &sse {
                result = mapper.on_event(e, &mut out);
                if result.is_err() {
                    break;
                }
            }
            if result.is_ok() {
                result = mapper.on_end(&mut out);
            }
            if let Err(text) = result {
                partial.update(|m| {
                    m.stop_reason = pi_ai::StopReason::Error;
                    m.error_message = Some(text.to_string());
                });
            }
            let mut got = message_json(&partial.snapshot());
            for v in [&mut whole, &mut got] {
                v.as_object_mut().unwrap().remove("timestamp");
                normalize_google_ids(v, |_, _| "<id>".into());
            }
            prop_assert_eq!(got, whole, "{}", path);
        }
    }
}
