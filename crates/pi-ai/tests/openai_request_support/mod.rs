//! Builders shared by the OpenAI request-building tests (`openai_requests.rs`,
//! `openai_requests_responses.rs`).

use pi_ai::providers::WireApi;
use pi_ai::types::{
    AssistantContent, AssistantMessage, Context, Message, Model, StopReason, StreamOptions,
    ToolCall, ToolResultMessage, UserContent, UserMessage, UserMessageContent,
};
use serde_json::Value;

pub(crate) fn model(api: &str, provider: &str, base_url: &str, id: &str) -> Model {
    Model {
        id: id.into(),
        name: id.into(),
        api: api.into(),
        provider: provider.into(),
        base_url: base_url.into(),
        max_tokens: 4096,
        context_window: 128_000,
        ..Default::default()
    }
}

pub(crate) fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserMessageContent::Text(text.into()),
        timestamp: 0,
    })
}

pub(crate) fn ctx(messages: Vec<Message>) -> Context {
    Context {
        system_prompt: Some("SYS".into()),
        messages,
        tools: None,
    }
}

pub(crate) fn body(api: &dyn WireApi, m: &Model, c: &Context, o: &StreamOptions) -> Value {
    api.build_request(m, c, o, "sk-test").unwrap().body
}

pub(crate) fn header(
    api: &dyn WireApi,
    m: &Model,
    o: &StreamOptions,
    name: &str,
) -> Option<String> {
    let r = api
        .build_request(m, &ctx(vec![user("hi")]), o, "sk-test")
        .unwrap();
    r.headers
        .iter()
        .rev()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

pub(crate) fn assistant(model: &Model, content: Vec<AssistantContent>) -> Message {
    let mut a = AssistantMessage::empty(&model.api, &model.provider, &model.id);
    a.content = content;
    a.stop_reason = StopReason::Stop;
    Message::Assistant(a)
}

pub(crate) fn tool_result(id: &str, name: &str, content: Vec<UserContent>) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content,
        ..Default::default()
    })
}

pub(crate) fn call(id: &str, name: &str, args: Value) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.as_object().cloned().unwrap_or_default(),
        ..Default::default()
    })
}

pub(crate) fn opts() -> StreamOptions {
    StreamOptions::default()
}
