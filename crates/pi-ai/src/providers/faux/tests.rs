//! Faux provider tests.

use std::sync::Arc;
use std::sync::Mutex as StdMutex;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::types::{CacheRetention, Message, Tool, UserContent, UserMessage, UserMessageContent};

fn provider() -> FauxProvider {
    FauxProvider::new(FauxOptions {
        token_size: Some((1, 1)),
        ..Default::default()
    })
}

fn context(text: &str) -> Context {
    Context {
        system_prompt: Some("sys".into()),
        messages: vec![Message::User(UserMessage {
            content: UserMessageContent::Text(text.into()),
            timestamp: 1,
        })],
        tools: Some(vec![Tool {
            name: "t".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
            constrained_sampling: None,
        }]),
    }
}

async fn collect(mut stream: AssistantMessageEventStream) -> Vec<AssistantMessageEvent> {
    let mut events = Vec::new();
    while let Some(e) = stream.next_event().await {
        events.push(e);
    }
    events
}

fn kinds(events: &[AssistantMessageEvent]) -> Vec<&'static str> {
    events.iter().map(AssistantMessageEvent::kind).collect()
}

fn deltas(events: &[AssistantMessageEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::TextDelta { delta, .. }
            | AssistantMessageEvent::ThinkingDelta { delta, .. }
            | AssistantMessageEvent::ToolcallDelta { delta, .. } => Some(delta.clone()),
            _ => None,
        })
        .collect()
}

fn text_message(text: &str) -> FauxStep {
    faux_assistant_message(vec![faux_text(text)], Default::default()).into()
}

fn last(events: &[AssistantMessageEvent]) -> (StopReason, AssistantMessage) {
    match events.last() {
        Some(AssistantMessageEvent::Done { reason, message }) => (*reason, (**message).clone()),
        Some(AssistantMessageEvent::Error { reason, error }) => (*reason, (**error).clone()),
        other => panic!("no terminal event: {other:?}"),
    }
}

#[tokio::test]
async fn streams_text_in_token_chunks_with_a_usage_estimate() {
    let faux = provider();
    faux.set_responses(vec![text_message("Hello world!")]);
    let model = faux.model();
    let events = collect(faux.stream(&model, &context("hello"), StreamOptions::default())).await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "text_start",
            "text_delta",
            "text_delta",
            "text_delta",
            "text_end",
            "done"
        ]
    );
    assert_eq!(deltas(&events), ["Hell", "o wo", "rld!"]);
    let (reason, message) = last(&events);
    assert_eq!(reason, StopReason::Stop);
    assert_eq!(message.text(), "Hello world!");
    assert_eq!(message.api, faux.api());
    assert_eq!(message.provider, "faux");
    assert_eq!(message.model, "faux-1");
    // system:sys \n\n user:hello \n\n tools:[{"name":"t","description":"d","parameters":{"type":"object"}}]
    let prompt = "system:sys\n\nuser:hello\n\ntools:[{\"name\":\"t\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}]";
    assert_eq!(prompt.len(), 93);
    assert_eq!(message.usage.input, 24.0);
    assert_eq!(message.usage.output, 3.0);
    assert_eq!(message.usage.cache_read, 0.0);
    assert_eq!(message.usage.cache_write, 0.0);
    assert_eq!(message.usage.total_tokens, 27.0);
    assert_eq!(faux.call_count(), 1);
}

#[tokio::test]
async fn blocks_stream_in_order_and_tool_arguments_arrive_as_json_chunks() {
    let faux = provider();
    let mut args = Map::new();
    args.insert("path".into(), json!("a.txt"));
    faux.set_responses(vec![
        faux_assistant_message(
            vec![
                faux_thinking("hmm"),
                faux_text(""),
                faux_tool_call("read", args.clone(), Some("call_1")),
            ],
            FauxMessageOptions {
                stop_reason: Some(StopReason::ToolUse),
                ..Default::default()
            },
        )
        .into(),
    ]);
    let model = faux.model();
    let events = collect(faux.stream(&model, &Context::default(), StreamOptions::default())).await;
    assert_eq!(
        kinds(&events),
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_end",
            "done"
        ]
    );
    let indices: Vec<Option<usize>> = events.iter().map(|e| e.content_index()).collect();
    assert_eq!(indices[1..4], [Some(0), Some(0), Some(0)]);
    assert_eq!(indices[4..7], [Some(1), Some(1), Some(1)]);
    assert_eq!(indices[7], Some(2));
    let all = deltas(&events);
    assert_eq!(all[0], "hmm");
    assert_eq!(all[1], "", "empty text streams one empty delta");
    assert_eq!(all[2..].concat(), "{\"path\":\"a.txt\"}");
    let AssistantMessageEvent::ToolcallEnd { tool_call, .. } = &events[12] else {
        unreachable!()
    };
    assert_eq!(tool_call.id, "call_1");
    assert_eq!(tool_call.arguments, args);
    let (reason, message) = last(&events);
    assert_eq!(reason, StopReason::ToolUse);
    assert_eq!(message.tool_calls().count(), 1);
    // output = ceil(len("hmm\n\nread:{\"path\":\"a.txt\"}") / 4) = ceil(26 / 4)
    assert_eq!(message.usage.output, 7.0);
}

#[tokio::test]
async fn an_empty_queue_is_an_error_with_a_usage_estimate() {
    let faux = provider();
    faux.set_responses(vec![text_message("one")]);
    faux.append_responses(vec![text_message("two")]);
    assert_eq!(faux.pending_response_count(), 2);
    let model = faux.model();
    let ctx = context("hello");
    for expected in ["one", "two"] {
        let events = collect(faux.stream(&model, &ctx, StreamOptions::default())).await;
        assert_eq!(last(&events).1.text(), expected);
    }
    let events = collect(faux.stream(&model, &ctx, StreamOptions::default())).await;
    assert_eq!(kinds(&events), ["error"]);
    let (reason, error) = last(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(
        error.error_message.as_deref(),
        Some("No more faux responses queued")
    );
    assert_eq!(error.usage.input, 24.0);
    assert!(error.content.is_empty());
    assert_eq!(faux.call_count(), 3);
    assert_eq!(faux.pending_response_count(), 0);
}

#[tokio::test]
async fn factories_see_the_request_and_may_fail() {
    let faux = provider();
    let seen_max = Arc::new(StdMutex::new(None));
    let seen = seen_max.clone();
    faux.set_responses(vec![
        FauxStep::factory(move |ctx, options, state, model| {
            *seen.lock().unwrap() = options.max_tokens;
            let text = format!(
                "call {} on {} with {} messages",
                state.call_count,
                model.id,
                ctx.messages.len()
            );
            Ok(faux_assistant_message(
                vec![faux_text(text)],
                Default::default(),
            ))
        }),
        FauxStep::factory(|_, _, _, _| Err("factory exploded".into())),
    ]);
    let model = faux.model();
    let opts = StreamOptions {
        max_tokens: Some(77),
        ..Default::default()
    };
    let events = collect(faux.stream(&model, &context("x"), opts)).await;
    assert_eq!(last(&events).1.text(), "call 1 on faux-1 with 1 messages");
    assert_eq!(*seen_max.lock().unwrap(), Some(77));
    let events = collect(faux.stream(&model, &context("x"), StreamOptions::default())).await;
    assert_eq!(kinds(&events), ["error"]);
    let (_, error) = last(&events);
    assert_eq!(error.error_message.as_deref(), Some("factory exploded"));
    assert_eq!(error.usage, Usage::default());
}

#[tokio::test]
async fn a_pre_cancelled_token_yields_a_lone_aborted_error() {
    let faux = provider();
    faux.set_responses(vec![text_message("never")]);
    let token = CancellationToken::new();
    token.cancel();
    let opts = StreamOptions {
        signal: Some(token),
        ..Default::default()
    };
    let model = faux.model();
    let events = collect(faux.stream(&model, &Context::default(), opts)).await;
    assert_eq!(kinds(&events), ["error"]);
    let (reason, error) = last(&events);
    assert_eq!(reason, StopReason::Aborted);
    assert_eq!(error.stop_reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
    assert!(error.content.is_empty());
}

#[tokio::test]
async fn cancelling_mid_stream_keeps_the_partial() {
    let faux = FauxProvider::new(FauxOptions {
        token_size: Some((1, 1)),
        tokens_per_second: Some(1000.0),
        ..Default::default()
    });
    let full = "abcd".repeat(500);
    faux.set_responses(vec![text_message(&full)]);
    let token = CancellationToken::new();
    let opts = StreamOptions {
        signal: Some(token.clone()),
        ..Default::default()
    };
    let model = faux.model();
    let mut stream = faux.stream(&model, &Context::default(), opts);
    let mut events = Vec::new();
    while let Some(e) = stream.next_event().await {
        let delta = e.kind() == "text_delta";
        events.push(e);
        if delta {
            token.cancel();
        }
    }
    let (reason, error) = last(&events);
    assert_eq!(reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
    let text = error.text();
    assert!(!text.is_empty() && text.len() < full.len() && full.starts_with(&text));
    assert!(!kinds(&events).contains(&"text_end"));
}

#[tokio::test]
async fn scripted_failures_and_pending_messages() {
    let faux = provider();
    faux.set_responses(vec![
        faux_assistant_message(
            vec![faux_text("oops")],
            FauxMessageOptions {
                stop_reason: Some(StopReason::Error),
                error_message: Some("boom".into()),
                ..Default::default()
            },
        )
        .into(),
        faux_assistant_message(
            vec![faux_text("wait")],
            FauxMessageOptions {
                stop_reason: Some(StopReason::Pending),
                ..Default::default()
            },
        )
        .into(),
    ]);
    let model = faux.model();
    let events = collect(faux.stream(&model, &Context::default(), StreamOptions::default())).await;
    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "text_end", "error"]
    );
    let (reason, error) = last(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(error.error_message.as_deref(), Some("boom"));
    assert_eq!(error.text(), "oops");

    let events = collect(faux.stream(&model, &Context::default(), StreamOptions::default())).await;
    assert_eq!(
        kinds(&events),
        ["start", "text_start", "text_delta", "text_end", "error"]
    );
    let (reason, error) = last(&events);
    assert_eq!(reason, StopReason::Error);
    assert_eq!(
        error.error_message.as_deref(),
        Some("Faux response ended without a stop reason")
    );
    assert!(error.content.is_empty());
}

#[tokio::test]
async fn a_session_id_turns_the_shared_prompt_prefix_into_cache_reads() {
    let faux = provider();
    faux.set_responses(vec![
        text_message("a"),
        text_message("b"),
        text_message("c"),
    ]);
    let model = faux.model();
    let opts = StreamOptions {
        session_id: Some("s1".into()),
        ..Default::default()
    };
    let first_ctx = context("hello");
    let first = last(&collect(faux.stream(&model, &first_ctx, opts.clone())).await).1;
    assert_eq!(
        (
            first.usage.input,
            first.usage.cache_read,
            first.usage.cache_write
        ),
        (24.0, 0.0, 24.0)
    );
    // The new prompt inserts "\n\nassistant:a" before the tools: the shared prefix is
    // "system:sys\n\nuser:hello\n\n" (24 chars).
    let mut second_ctx = first_ctx.clone();
    second_ctx.messages.push(Message::Assistant(first.clone()));
    let second = last(&collect(faux.stream(&model, &second_ctx, opts.clone())).await).1;
    let new_len = 93 + "\n\nassistant:a".len() as u64;
    assert_eq!(new_len, 106);
    assert_eq!(second.usage.cache_read, 6.0); // ceil(24 / 4)
    assert_eq!(second.usage.cache_write, 21.0); // ceil((106 - 24) / 4)
    assert_eq!(second.usage.input, 21.0); // ceil(106 / 4) - 6
    // Retention none: no cache accounting.
    let none = StreamOptions {
        cache_retention: Some(CacheRetention::None),
        ..opts
    };
    let third = last(&collect(faux.stream(&model, &second_ctx, none)).await).1;
    assert_eq!(
        (third.usage.cache_read, third.usage.cache_write),
        (0.0, 0.0)
    );
}

#[tokio::test]
async fn on_response_runs_first_and_can_fail_the_request() {
    let faux = provider();
    faux.set_responses(vec![text_message("x"), text_message("y")]);
    let statuses = Arc::new(StdMutex::new(Vec::new()));
    let log = statuses.clone();
    let opts = StreamOptions {
        on_response: Some(Arc::new(move |info, _| {
            log.lock().unwrap().push(info.status);
            Box::pin(async { Ok(()) })
        })),
        ..Default::default()
    };
    let model = faux.model();
    collect(faux.stream(&model, &Context::default(), opts)).await;
    assert_eq!(*statuses.lock().unwrap(), [200]);
    let failing = StreamOptions {
        on_response: Some(Arc::new(|_, _| Box::pin(async { Err("hook".into()) }))),
        ..Default::default()
    };
    let events = collect(faux.stream(&model, &Context::default(), failing)).await;
    assert_eq!(kinds(&events), ["error"]);
    assert_eq!(last(&events).1.error_message.as_deref(), Some("hook"));
}

#[test]
fn chunks_follow_the_token_size_range() {
    let faux = FauxProvider::new(FauxOptions {
        token_size: Some((3, 5)),
        ..Default::default()
    });
    let text = "x".repeat(1000);
    let chunks = faux.core.chunks(&text);
    assert_eq!(chunks.concat(), text);
    for c in &chunks[..chunks.len() - 1] {
        assert!([12, 16, 20].contains(&c.len()), "{}", c.len());
    }
    // Multi-byte characters are never split; "😀" counts 2 UTF-16 units.
    let one = provider();
    assert_eq!(one.core.chunks("😀😀😀"), ["😀😀", "😀"]);
    assert_eq!(one.core.chunks(""), [""]);
}

#[test]
fn models_take_pis_defaults() {
    let faux = FauxProvider::default();
    let m = faux.model();
    assert!(faux.api().starts_with("faux:"));
    assert_eq!(m.id, "faux-1");
    assert_eq!(m.name, "Faux Model");
    assert_eq!(m.provider, "faux");
    assert_eq!(m.api, faux.api());
    assert_eq!(m.base_url, "http://localhost:0");
    assert_eq!(m.context_window, 128_000);
    assert_eq!(m.max_tokens, 16_384);
    assert_eq!(m.input, [InputKind::Text, InputKind::Image]);
    let custom = FauxProvider::new(FauxOptions {
        api: Some("my-api".into()),
        models: vec![FauxModelDefinition {
            id: "small".into(),
            context_window: Some(1000),
            ..Default::default()
        }],
        ..Default::default()
    });
    assert_eq!(custom.api(), "my-api");
    assert_eq!(
        custom.get_model("small").map(|m| m.name),
        Some("small".into())
    );
    assert!(custom.get_model("faux-1").is_none());
}

#[test]
fn serializes_tool_results_and_images_like_pi() {
    let ctx = Context {
        system_prompt: None,
        messages: vec![
            Message::User(UserMessage {
                content: UserMessageContent::Blocks(vec![
                    UserContent::text("look"),
                    UserContent::Image(crate::types::ImageContent {
                        data: "QUJD".into(),
                        mime_type: "image/png".into(),
                    }),
                ]),
                timestamp: 0,
            }),
            Message::ToolResult(crate::types::ToolResultMessage {
                tool_call_id: "c".into(),
                tool_name: "read".into(),
                content: vec![UserContent::text("line")],
                ..Default::default()
            }),
        ],
        tools: Some(vec![]),
    };
    assert_eq!(
        usage::serialize_context(&ctx),
        "user:look\n[image:image/png:4]\n\ntoolResult:read\nline"
    );
}

/// pi's `fauxAssistantMessage` literal puts `deferred`, `errorMessage` and `responseId` before
/// `timestamp`; the texts are the reference's own `JSON.stringify` output (pi-ai 0.85.1).
#[test]
fn faux_messages_have_pi_key_order() {
    let text = || vec![crate::types::AssistantContent::text("hi")];
    let full = faux_assistant_message(
        text(),
        FauxMessageOptions {
            stop_reason: Some(StopReason::Error),
            deferred: Some(json!({"id": "d"})),
            error_message: Some("x".into()),
            response_id: Some("r".into()),
            timestamp: Some(5),
        },
    );
    let usage = r#""usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;
    let head = r#"{"role":"assistant","content":[{"type":"text","text":"hi"}],"api":"faux","provider":"faux","model":"faux-1","#;
    let written = crate::json::to_string(&Message::Assistant(full)).unwrap();
    assert_eq!(
        written,
        format!(
            r#"{head}{usage},"stopReason":"error","deferred":{{"id":"d"}},"errorMessage":"x","responseId":"r","timestamp":5}}"#
        )
    );
    // Read back, it keeps the order.
    let back: Message = serde_json::from_str(&written).unwrap();
    assert_eq!(crate::json::to_string(&back).unwrap(), written);

    let plain = faux_assistant_message(
        text(),
        FauxMessageOptions {
            response_id: Some("r".into()),
            timestamp: Some(5),
            ..Default::default()
        },
    );
    assert_eq!(
        crate::json::to_string(&Message::Assistant(plain)).unwrap(),
        format!(r#"{head}{usage},"stopReason":"stop","responseId":"r","timestamp":5}}"#)
    );
}
