//! Property tests of the OpenAI mappers: arbitrary payloads (recorded chunks cut, with a byte
//! flipped, or replaced by noise) never panic, every event's content index points into the
//! message; random read boundaries of recorded streams give the whole-body result.

use crate::openai_support;

use openai_support::{Chunking, data, replay_model, run_stream};
use pi_ai::event::PartialMessage;
use pi_ai::providers::WireApi;
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::sse::{SseEvent, SseParser, parse_all};
use pi_ai::types::{AssistantMessage, StreamOptions};
use proptest::prelude::*;

const STREAMS: [&str; 6] = [
    "sse/streams/openai-completions/openrouter-reasoning-details-keepalive-comments.sse",
    "sse/streams/openai-completions/parallel-tool-calls-usage-chunk.sse",
    "sse/streams/openai-completions/groq-event-error-mid-stream.sse",
    "sse/streams/openai-responses/function-call-basic.sse",
    "sse/streams/openai-responses/encrypted-reasoning-no-summary-then-function-call.sse",
    "bugs/ollama-same-index-parallel-tool-calls.sse",
];

fn recorded_payloads() -> Vec<SseEvent> {
    STREAMS
        .iter()
        .flat_map(|p| parse_all(&std::fs::read(data(p)).unwrap()))
        .collect()
}

fn drive(api: &dyn WireApi, events: &[SseEvent]) {
    let m = replay_model(api.api(), "p", "m");
    let partial = PartialMessage::new(AssistantMessage::empty(api.api(), "p", "m"));
    let mut mapper = api.new_mapper(&m, partial.clone(), &StreamOptions::default());
    let mut out = Vec::new();
    let mut failed = false;
    for e in events {
        if mapper.on_event(e, &mut out).is_err() {
            failed = true;
            break;
        }
    }
    if !failed {
        let _ = mapper.on_end(&mut out);
    }
    let len = partial.read().content.len();
    assert!(
        out.iter()
            .filter_map(|e| e.content_index())
            .all(|i| i < len)
    );
}

fn arb_event(payloads: Vec<SseEvent>) -> impl Strategy<Value = SseEvent> {
    let n = payloads.len();
    (0..n, any::<u16>(), any::<u8>(), ".{0,40}", any::<bool>()).prop_map(
        move |(pick, cut, flip, noise, use_noise)| {
            let mut data = payloads[pick].data.clone().into_bytes();
            if use_noise {
                data = noise.into_bytes();
            } else if !data.is_empty() {
                let at = cut as usize % data.len();
                match flip % 3 {
                    0 => data.truncate(at),
                    1 => data[at] = flip,
                    _ => {}
                }
            }
            SseEvent {
                event: payloads[pick].event.clone(),
                data: String::from_utf8_lossy(&data).into_owned(),
                ..Default::default()
            }
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_events_never_panic(events in prop::collection::vec(arb_event(recorded_payloads()), 0..40)) {
        drive(&OpenAiCompletions, &events);
        drive(&OpenAiResponses, &events);
    }

    #[test]
    fn random_read_boundaries_match_the_whole_body(cuts in prop::collection::vec(1usize..64, 1..200)) {
        for (api, path) in [
            (&OpenAiCompletions as &dyn WireApi, STREAMS[0]),
            (&OpenAiCompletions as &dyn WireApi, STREAMS[5]),
            (&OpenAiResponses as &dyn WireApi, STREAMS[4]),
        ] {
            let body = std::fs::read(data(path)).unwrap();
            let m = replay_model(api.api(), "p", "m");
            let mut whole = run_stream(api, &m, &body, Chunking::Whole).message;
            let partial = PartialMessage::new(AssistantMessage::empty(api.api(), "p", "m"));
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
            for e in &sse {
                mapper.on_event(e, &mut out).unwrap();
            }
            mapper.on_end(&mut out).unwrap();
            let mut got = partial.snapshot();
            whole.timestamp = 0;
            got.timestamp = 0;
            prop_assert_eq!(got, whole);
        }
    }
}
