//! Registry tests: dispatch, early failures, the `max_tokens` cap and the estimate.

use std::sync::{Arc, Mutex};

use serde_json::{Map, json};

use super::*;
use crate::event::{AssistantMessageEvent, PartialMessage};
use crate::providers::faux::{
    FauxOptions, FauxProvider, FauxStep, faux_assistant_message, faux_text,
};
use crate::providers::{StreamMapper, WireRequest};
use crate::types::{
    AssistantContent, ImageContent, Message, StopReason, Tool, ToolCall, ToolResultMessage, Usage,
    UserContent, UserMessage, UserMessageContent,
};

fn user(text: &str, timestamp: i64) -> Message {
    Message::User(UserMessage {
        content: UserMessageContent::Text(text.into()),
        timestamp,
    })
}

fn assistant(total: u64, stop: StopReason, timestamp: i64) -> Message {
    Message::Assistant(AssistantMessage {
        content: vec![AssistantContent::text("abcd")],
        usage: Usage {
            total_tokens: total as f64,
            ..Default::default()
        },
        stop_reason: stop,
        timestamp,
        ..Default::default()
    })
}

fn tool(name: &str) -> Tool {
    Tool {
        name: name.into(),
        description: "d".into(),
        parameters: json!({}),
        constrained_sampling: None,
    }
}

#[test]
fn without_usage_everything_is_counted_by_characters() {
    let mut args = Map::new();
    args.insert("a".into(), json!(1));
    let ctx = Context {
        system_prompt: Some("12345".into()), // 2
        messages: vec![
            user("hello world!", 1), // 3
            Message::User(UserMessage {
                content: UserMessageContent::Blocks(vec![
                    UserContent::text("ab"),
                    UserContent::Image(ImageContent::default()),
                ]),
                timestamp: 2,
            }), // ceil(4802 / 4) = 1201
            Message::Assistant(AssistantMessage {
                content: vec![AssistantContent::ToolCall(ToolCall {
                    name: "read".into(),
                    arguments: args,
                    ..Default::default()
                })],
                stop_reason: StopReason::Error,
                ..Default::default()
            }), // "read" + {"a":1} = 11 → 3
        ],
        // [{"name":"t","description":"d","parameters":{}}] = 48 chars → 12
        tools: Some(vec![tool("t")]),
    };
    assert_eq!(estimate_context_tokens(&ctx), 2 + 3 + 1201 + 3 + 12);
}

#[test]
fn the_latest_usable_usage_anchors_the_estimate() {
    let ctx = Context {
        system_prompt: Some("a long system prompt that is ignored".into()),
        messages: vec![
            user("x", 1),
            assistant(500, StopReason::Stop, 2),
            user("12345678", 3),                  // 2
            assistant(900, StopReason::Error, 4), // unusable: counted by chars (1)
            user("1234", 5),                      // 1
        ],
        tools: Some(vec![tool("t")]),
    };
    assert_eq!(estimate_context_tokens(&ctx), 500 + 2 + 1 + 1);
}

#[test]
fn usage_older_than_an_earlier_message_is_ignored() {
    // A compaction summary inserted later than the response: its usage no longer applies.
    let ctx = Context {
        messages: vec![user("summary!", 10), assistant(500, StopReason::Stop, 5)],
        ..Default::default()
    };
    assert_eq!(estimate_context_tokens(&ctx), 2 + 1);
}

#[test]
fn tools_added_after_the_anchor_are_counted() {
    let ctx = Context {
        messages: vec![
            assistant(100, StopReason::ToolUse, 1),
            Message::ToolResult(ToolResultMessage {
                tool_name: "load".into(),
                content: vec![UserContent::text("ok")], // 1
                added_tool_names: Some(vec!["t".into()]),
                timestamp: 2,
                ..Default::default()
            }),
        ],
        tools: Some(vec![tool("t"), tool("other")]),
        ..Default::default()
    };
    assert_eq!(estimate_context_tokens(&ctx), 100 + 1 + 12);
}

#[test]
fn max_tokens_is_capped_below_the_context_window() {
    let mut model = Model {
        context_window: 10_000,
        max_tokens: 16_384,
        ..Default::default()
    };
    let ctx = Context {
        messages: vec![user(&"x".repeat(4000), 1)], // 1000
        ..Default::default()
    };
    assert_eq!(clamp_max_tokens_to_context(&model, &ctx, 16_384), 4_904);
    assert_eq!(clamp_max_tokens_to_context(&model, &ctx, 100), 100);
    model.context_window = 5_000;
    assert_eq!(clamp_max_tokens_to_context(&model, &ctx, 100), 1);
    model.context_window = 0;
    assert_eq!(clamp_max_tokens_to_context(&model, &ctx, 0), 1);
    assert_eq!(clamp_max_tokens_to_context(&model, &ctx, 123), 123);
}

#[tokio::test]
async fn unknown_apis_fail_inside_the_stream_or_early() {
    let model = Model {
        id: "m".into(),
        api: "no-such-api".into(),
        provider: "p".into(),
        ..Default::default()
    };
    let message = stream(&model, &Context::default(), StreamOptions::default())
        .result()
        .await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(
        message.error_message.as_deref(),
        Some("No API provider registered for api: no-such-api")
    );
    let early = stream_simple(&model, &Context::default(), StreamOptions::default());
    assert_eq!(
        early.err().map(|e| e.to_string()).as_deref(),
        Some("No API provider registered for api: no-such-api")
    );
}

#[tokio::test]
async fn registered_providers_serve_their_api_with_the_capped_max_tokens() {
    let faux = FauxProvider::new(FauxOptions::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let factory = FauxStep::factory(move |_, options, _, _| {
        log.lock().unwrap().push(options.max_tokens);
        Ok(faux_assistant_message(
            vec![faux_text("hi")],
            Default::default(),
        ))
    });
    faux.set_responses(vec![factory.clone(), factory]);
    register_api_provider(Arc::new(faux.clone()));
    assert!(registered_apis().contains(&faux.api().to_owned()));
    let mut model = faux.model();
    model.context_window = 10_000;
    let ctx = Context {
        messages: vec![user(&"x".repeat(4000), 1)],
        ..Default::default()
    };
    let plain = stream(&model, &ctx, StreamOptions::default())
        .result()
        .await;
    assert_eq!(plain.text(), "hi");
    // The faux provider needs no key.
    let simple = stream_simple(&model, &ctx, StreamOptions::default())
        .unwrap()
        .result()
        .await;
    assert_eq!(simple.text(), "hi");
    assert_eq!(*seen.lock().unwrap(), [None, Some(4_904)]);
    assert!(unregister_api(faux.api()));
    assert!(!unregister_api(faux.api()));
}

struct NullWire;

struct NullMapper;

impl StreamMapper for NullMapper {
    fn on_event(
        &mut self,
        _: &crate::sse::SseEvent,
        _: &mut Vec<AssistantMessageEvent>,
    ) -> std::result::Result<(), crate::providers::StreamError> {
        Ok(())
    }
    fn on_end(
        &mut self,
        _: &mut Vec<AssistantMessageEvent>,
    ) -> std::result::Result<(), crate::providers::StreamError> {
        Ok(())
    }
}

impl WireApi for NullWire {
    fn api(&self) -> &'static str {
        "registry-test-wire"
    }
    fn build_request(
        &self,
        _: &Model,
        _: &Context,
        _: &StreamOptions,
        _: &str,
    ) -> std::result::Result<WireRequest, crate::providers::StreamError> {
        Err(crate::providers::StreamError::Provider(
            "not sent in this test".into(),
        ))
    }
    fn new_mapper(&self, _: &Model, _: PartialMessage, _: &StreamOptions) -> Box<dyn StreamMapper> {
        Box::new(NullMapper)
    }
    fn format_http_error(&self, status: u16, body: &str) -> String {
        format!("{status}: {body}")
    }
    fn abort_text(&self) -> &'static str {
        "aborted"
    }
}

#[tokio::test]
async fn stream_simple_needs_a_key_or_an_auth_header() {
    register_api(Arc::new(NullWire));
    let model = Model {
        id: "m".into(),
        api: "registry-test-wire".into(),
        provider: "registry-test-provider".into(),
        ..Default::default()
    };
    let ctx = Context::default();
    let err = stream_simple(&model, &ctx, StreamOptions::default()).err();
    assert_eq!(
        err.map(|e| e.to_string()).as_deref(),
        Some("No API key for provider: registry-test-provider")
    );
    let with_key = StreamOptions {
        api_key: Some("k".into()),
        ..Default::default()
    };
    let message = stream_simple(&model, &ctx, with_key)
        .unwrap()
        .result()
        .await;
    assert_eq!(
        message.error_message.as_deref(),
        Some("not sent in this test")
    );
    let with_header = StreamOptions {
        headers: vec![("Authorization".into(), Some("Bearer t".into()))],
        ..Default::default()
    };
    assert!(stream_simple(&model, &ctx, with_header).is_ok());
    // A deleted header does not count.
    let mut headers = Map::new();
    headers.insert("authorization".into(), json!("Bearer t"));
    let model_with_header = Model {
        headers: Some(headers),
        ..model.clone()
    };
    let deleted = StreamOptions {
        headers: vec![("Authorization".into(), None)],
        ..Default::default()
    };
    assert!(stream_simple(&model_with_header, &ctx, deleted).is_err());
    assert!(stream_simple(&model_with_header, &ctx, StreamOptions::default()).is_ok());
}

#[test]
fn x_api_key_counts_only_for_anthropic() {
    let opts = StreamOptions {
        headers: vec![("X-Api-Key".into(), Some("k".into()))],
        ..Default::default()
    };
    let mut model = Model {
        api: "openai-completions".into(),
        ..Default::default()
    };
    assert!(!has_auth_header(&model, &opts));
    model.api = "anthropic-messages".into();
    assert!(has_auth_header(&model, &opts));
    let cf = StreamOptions {
        headers: vec![("cf-aig-authorization".into(), Some("t".into()))],
        ..Default::default()
    };
    model.api = "google-generative-ai".into();
    assert!(has_auth_header(&model, &cf));
}
