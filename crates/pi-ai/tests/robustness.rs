//! Robustness properties (the proptest side of the `fuzz/` targets):
//!
//! - every wire API's mapper, fed arbitrary events (recorded payloads of all four APIs, cut,
//!   with a byte flipped, or replaced by noise, under every event name the APIs use), never
//!   panics, and its block events are well formed: every `contentIndex` points into the
//!   message, per block no delta or end comes before its start, no block starts twice, and
//!   after a successful `on_end` no block is left open;
//! - tool-argument validation never panics and is deterministic on arbitrary arguments
//!   against the recorded schemas and on arbitrary schemas.
//!
//! SSE chunking-invariance lives in `tests/sse.rs`, the Anthropic/Google read-boundary
//! property in `tests/mapper_fuzz.rs`.

use crate::anthropic_google_support;
use anthropic_google_support as common;

use common::data;
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::providers::{
    AnthropicMessages, AzureOpenAiResponses, GoogleGenerativeAi, GoogleVertex,
    MistralConversations, WireApi,
};
use pi_ai::sse::{SseEvent, parse_all};
use pi_ai::validation::{check, validate_arguments, validation_issues};
use pi_ai::{AssistantMessage, AssistantMessageEvent, Model, PartialMessage, StreamOptions};
use proptest::prelude::*;
use serde_json::Value;

static AZURE: std::sync::LazyLock<AzureOpenAiResponses> =
    std::sync::LazyLock::new(AzureOpenAiResponses::default);
static VERTEX: std::sync::LazyLock<GoogleVertex> = std::sync::LazyLock::new(GoogleVertex::default);

fn apis() -> [&'static dyn WireApi; 7] {
    [
        &AnthropicMessages,
        &GoogleGenerativeAi,
        &OpenAiCompletions,
        &OpenAiResponses,
        &MistralConversations,
        &*AZURE,
        &*VERTEX,
    ]
}

const EVENT_NAMES: [&str; 13] = [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "error",
    "response.output_item.added",
    "response.output_text.delta",
    "response.function_call_arguments.delta",
    "response.output_item.done",
    "response.completed",
    "",
];

const RECORDED: [&str; 10] = [
    "sse/streams/openai-completions/parallel-tool-calls-usage-chunk.sse",
    "sse/streams/openai-completions/groq-reasoning-then-whole-tool-call.sse",
    "sse/streams/openai-responses/reasoning-summary-then-text-utf8.sse",
    "sse/streams/openai-responses/function-call-basic.sse",
    "streams/anthropic-messages/server-tool-then-client-tool-split-args.sse",
    "streams/google-generative-ai/function-call-with-signature-then-empty-text.sse",
    "streams/mistral-conversations/incremental-tool-call.sse",
    "streams/mistral-conversations/reasoning.sse",
    "streams/azure-openai-responses/reasoning-encrypted-content.sse",
    "streams/google-vertex/tool-call-arguments-in-parts.sse",
];

fn recorded_payloads() -> Vec<SseEvent> {
    RECORDED.iter().flat_map(|p| parse_all(&data(p))).collect()
}

/// The block-event invariants (also asserted by the `fuzz/` mapper targets).
fn check_block_events(events: &[AssistantMessageEvent], blocks: usize, ended_ok: bool) {
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

fn drive(api: &dyn WireApi, reasoning: bool, events: &[SseEvent]) {
    let model = Model {
        id: "m".into(),
        name: "m".into(),
        api: api.api().into(),
        provider: "p".into(),
        reasoning,
        ..Default::default()
    };
    let partial = PartialMessage::new(AssistantMessage::empty(api.api(), "p", "m"));
    let mut mapper = api.new_mapper(&model, partial.clone(), &StreamOptions::default());
    let mut out = Vec::new();
    let mut result = Ok(());
    for e in events {
        result = mapper.on_event(e, &mut out);
        if result.is_err() {
            break;
        }
    }
    if result.is_ok() {
        result = mapper.on_end(&mut out);
    }
    check_block_events(&out, partial.read().content.len(), result.is_ok());
}

fn arb_event(payloads: Vec<SseEvent>) -> impl Strategy<Value = SseEvent> {
    let n = payloads.len();
    (
        0..EVENT_NAMES.len(),
        0..n,
        any::<u16>(),
        any::<u8>(),
        ".{0,40}",
        0..8u8,
    )
        .prop_map(move |(name, pick, cut, byte, noise, how)| {
            let original = &payloads[pick];
            let mut data = original.data.clone().into_bytes();
            match how {
                0 => data = noise.into_bytes(),
                1 if !data.is_empty() => data.truncate(cut as usize % data.len()),
                2 if !data.is_empty() => {
                    let at = cut as usize % data.len();
                    data[at] = byte;
                }
                _ => {}
            }
            // Half the time the event keeps its recorded name (the mapper's own protocol).
            let event = if how < 4 {
                Some(EVENT_NAMES[name].to_owned()).filter(|s| !s.is_empty())
            } else {
                original.event.clone()
            };
            SseEvent {
                event,
                data: String::from_utf8_lossy(&data).into_owned(),
                ..Default::default()
            }
        })
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z0-9 .-]{0,6}".prop_map(Value::from),
        prop::sample::select(vec![
            "string", "number", "integer", "boolean", "object", "array", "null"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "type",
                    "properties",
                    "required",
                    "items",
                    "anyOf",
                    "oneOf",
                    "allOf",
                    "not",
                    "enum",
                    "const",
                    "minimum",
                    "maximum",
                    "pattern",
                    "minLength",
                    "maxItems",
                    "uniqueItems",
                    "additionalProperties",
                    "multipleOf",
                    "path",
                    "a",
                ]),
                inner,
                0..5,
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn recorded_schemas() -> Vec<Value> {
    let cases: Value = common::data_json("validation_cases.json");
    cases
        .as_array()
        .map(|a| a.iter().map(|c| c["schema"].clone()).collect())
        .unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_mapper_survives_arbitrary_events(
        events in prop::collection::vec(arb_event(recorded_payloads()), 0..40),
        reasoning in any::<bool>(),
    ) {
        for api in apis() {
            drive(api, reasoning, &events);
        }
    }

    #[test]
    fn validation_of_arbitrary_arguments_never_panics(
        pick in any::<prop::sample::Index>(),
        args in json_value(),
    ) {
        let schemas = recorded_schemas();
        let schema = pick.get(&schemas);
        let first = validate_arguments("t", schema, &args);
        prop_assert_eq!(&first, &validate_arguments("t", schema, &args));
        if let Err(text) = &first {
            prop_assert!(text.message.starts_with("Validation failed for tool \"t\":\n"), "{}", text);
        }
        prop_assert_eq!(check(schema, &args), validation_issues(schema, &args).is_empty());
    }

    #[test]
    fn validation_against_arbitrary_schemas_never_panics(schema in json_value(), args in json_value()) {
        let first = validate_arguments("t", &schema, &args);
        prop_assert_eq!(&first, &validate_arguments("t", &schema, &args));
        let _ = check(&schema, &args);
        let _ = validation_issues(&schema, &args);
    }
}

/// The recorded streams of every API pass the block invariants unchanged.
#[test]
fn recorded_streams_satisfy_the_block_invariants() {
    let apis = apis();
    for (api, path) in [
        (apis[2], RECORDED[0]),
        (apis[2], RECORDED[1]),
        (apis[3], RECORDED[2]),
        (apis[3], RECORDED[3]),
        (apis[0], RECORDED[4]),
        (apis[1], RECORDED[5]),
        (apis[4], RECORDED[6]),
        (apis[4], RECORDED[7]),
        (apis[5], RECORDED[8]),
        (apis[6], RECORDED[9]),
    ] {
        let events = parse_all(&data(path));
        assert!(!events.is_empty(), "{path}");
        drive(api, true, &events);
    }
}
