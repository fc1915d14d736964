//! Bedrock ConverseStream end to end against the replay server: a tool-call turn over the
//! binary event stream (whole and in 1- and 7-byte chunks), the SigV4 `Authorization`
//! re-made on the server side from the recorded request and its `X-Amz-Date`, Bearer keys,
//! and the failures — an exception mid-stream, a cut frame, HTTP errors (expired keys among
//! them), an unreadable credentials file — as exactly one terminal `error` event. Recorded
//! responses (vercel/ai's fixtures, `data/streams/amazon-bedrock/SOURCE.md`) are framed and
//! replayed too.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use pi_ai::providers::bedrock::{BedrockAuth, resolve_auth, sign_request};
use pi_ai::providers::driver::stream_wire;
use pi_ai::providers::{BedrockConverseStream, ProviderEnv, WireApi};
use pi_ai::testkit::{EventStreamBuilder, RecordedRequest, ReplayServer, Reply};
use pi_ai::types::{
    AssistantContent, Context, Message, Model, StopReason, StreamOptions, Tool, UserMessage,
};
use pi_ai::{AssistantMessage, AssistantMessageEvent};
use serde_json::json;

const KEYS: [(&str, &str); 2] = [
    ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
    (
        "AWS_SECRET_ACCESS_KEY",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    ),
];

fn model(base: &str) -> Model {
    let mut m = pi_ai::models::get_builtin_model(
        "amazon-bedrock",
        "anthropic.claude-sonnet-4-5-20250929-v1:0",
    )
    .cloned()
    .unwrap();
    m.base_url = base.into();
    m
}

fn context() -> Context {
    Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![Message::User(UserMessage {
            content: pi_ai::types::UserMessageContent::Text("Read a.txt".into()),
            timestamp: 0,
        })],
        tools: Some(vec![Tool {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            ..Default::default()
        }]),
    }
}

fn tool_turn() -> Vec<u8> {
    EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .event("contentBlockDelta", &json!({"contentBlockIndex": 0, "delta": {"text": "Reading."}}))
        .event("contentBlockStop", &json!({"contentBlockIndex": 0}))
        .event(
            "contentBlockStart",
            &json!({"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "read"}}}),
        )
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{\"path\":\"a.txt\"}"}}}),
        )
        .event("contentBlockStop", &json!({"contentBlockIndex": 1}))
        .event("messageStop", &json!({"stopReason": "tool_use"}))
        .event(
            "metadata",
            &json!({"usage": {"inputTokens": 12, "outputTokens": 8, "totalTokens": 20}, "metrics": {"latencyMs": 5}}),
        )
        .build()
}

/// Runs one request: the event kinds and the terminal message; asserts one terminal event.
async fn run(
    api: BedrockConverseStream,
    model: &Model,
    key: Option<&str>,
) -> (Vec<&'static str>, AssistantMessage) {
    let api: Arc<dyn WireApi> = Arc::new(api);
    let options = StreamOptions {
        api_key: key.map(str::to_owned),
        ..Default::default()
    };
    let mut stream = stream_wire(api, model, &context(), options);
    let mut kinds = Vec::new();
    let mut terminal = None;
    while let Some(event) = stream.next_event().await {
        kinds.push(event.kind());
        match event {
            AssistantMessageEvent::Done { message, .. } => terminal = Some(*message),
            AssistantMessageEvent::Error { error, .. } => terminal = Some(*error),
            _ => {}
        }
    }
    let terminals = kinds
        .iter()
        .filter(|k| **k == "done" || **k == "error")
        .count();
    assert_eq!(terminals, 1, "{kinds:?}");
    (kinds, terminal.unwrap())
}

fn env(extra: &[(&str, &str)]) -> ProviderEnv {
    ProviderEnv::fixed(KEYS.iter().chain(extra).copied())
}

/// `YYYYMMDDTHHMMSSZ` → time.
fn amz_date(text: &str) -> std::time::SystemTime {
    let n = |r: std::ops::Range<usize>| text[r].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(4..6), n(6..8));
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let secs = days * 86_400 + n(9..11) * 3600 + n(11..13) * 60 + n(13..15);
    UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).unwrap())
}

/// What the server computes for the recorded request: the signature over the headers it
/// names, at its `x-amz-date`, with the keys the server knows.
fn server_side_authorization(request: &RecordedRequest, base: &str) -> String {
    let sent = request.header("authorization").unwrap();
    let signed = sent
        .split("SignedHeaders=")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .unwrap();
    let headers: Vec<(String, String)> = signed
        .split(';')
        .filter(|h| !["x-amz-date", "x-amz-content-sha256"].contains(h))
        .map(|h| (h.to_owned(), request.header(h).unwrap().to_owned()))
        .collect();
    let BedrockAuth::SigV4(keys) = resolve_auth("", &env(&[])).unwrap() else {
        panic!("static keys");
    };
    let added = sign_request(
        &keys,
        "us-east-1",
        &format!("{base}{}", request.path),
        &headers,
        &request.body,
        amz_date(request.header("x-amz-date").unwrap()),
    )
    .unwrap();
    added
        .into_iter()
        .find(|(k, _)| k == "authorization")
        .unwrap()
        .1
}

#[tokio::test]
async fn a_tool_turn_is_signed_and_mapped_in_any_chunking() {
    let mut outcomes = Vec::new();
    for chunk in [None, Some(1), Some(7)] {
        let mut reply = Reply::event_stream(tool_turn());
        if let Some(n) = chunk {
            reply = reply.chunk_size(n);
        }
        let (_, server) = ReplayServer::start(vec![reply]).await.unwrap();
        let base = server.base_url();
        let (kinds, message) = run(
            BedrockConverseStream::with_env(env(&[])),
            &model(&base),
            None,
        )
        .await;
        assert_eq!(
            message.stop_reason,
            StopReason::ToolUse,
            "{:?}",
            message.error_message
        );
        let AssistantContent::ToolCall(call) = &message.content[1] else {
            panic!("{:?}", message.content);
        };
        assert_eq!(
            (call.id.as_str(), call.name.as_str()),
            ("tooluse_1", "read")
        );
        assert_eq!(call.arguments.get("path"), Some(&json!("a.txt")));
        assert_eq!((message.usage.input, message.usage.output), (12.0, 8.0));
        let requests = server.requests();
        let request = &requests[0];
        assert_eq!(
            request.path,
            "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
        );
        let sent = request.header("authorization").unwrap();
        assert!(
            sent.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"),
            "{sent}"
        );
        assert!(
            sent.contains("/us-east-1/bedrock/aws4_request, SignedHeaders=amz-sdk-invocation-id;amz-sdk-request;content-length;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-user-agent, Signature="),
            "{sent}"
        );
        assert_eq!(server_side_authorization(request, &base), sent);
        let body = request.body_json().unwrap();
        assert_eq!(body["toolConfig"]["tools"][0]["toolSpec"]["name"], "read");
        outcomes.push((kinds, message.content));
    }
    assert_eq!(outcomes[0], outcomes[1]);
    assert_eq!(outcomes[0], outcomes[2]);
}

#[tokio::test]
async fn a_bearer_key_is_sent_as_is() {
    let (_, server) = ReplayServer::start(vec![Reply::event_stream(tool_turn())])
        .await
        .unwrap();
    let api = BedrockConverseStream::with_env(ProviderEnv::fixed([(
        "AWS_BEARER_TOKEN_BEDROCK",
        "bedrock-key",
    )]));
    let (_, message) = run(api, &model(&server.base_url()), None).await;
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer bedrock-key")
    );
}

#[tokio::test]
async fn failures_end_in_one_error_event() {
    let exception = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"text": "Hal"}}),
        )
        .exception(
            "throttlingException",
            &json!({"message": "Too many tokens, please wait."}),
        )
        .build();
    let full = tool_turn();
    let cut = full[..full.len() - 5].to_vec();
    let cases = [
        (
            Reply::event_stream(exception).chunk_size(7),
            "Throttling error: Too many tokens, please wait.",
        ),
        (
            Reply::event_stream(cut).chunk_size(1),
            "Truncated event message received.",
        ),
        (
            Reply::json(
                400,
                &json!({"message": "The provided model identifier is invalid."}),
            )
            .header(
                "x-amzn-errortype",
                "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/",
            ),
            "Validation error: The provided model identifier is invalid.",
        ),
        (
            Reply::json(
                403,
                &json!({"message": "The security token included in the request is expired"}),
            )
            .header(
                "x-amzn-errortype",
                "ExpiredTokenException:http://internal.amazon.com/coral/com.amazon.coral.service/",
            ),
            "ExpiredTokenException: The security token included in the request is expired",
        ),
    ];
    for (reply, text) in cases {
        let (_, server) = ReplayServer::start(vec![reply]).await.unwrap();
        let (kinds, message) = run(
            BedrockConverseStream::with_env(env(&[])),
            &model(&server.base_url()),
            None,
        )
        .await;
        assert_eq!(kinds.last(), Some(&"error"));
        assert_eq!(message.stop_reason, StopReason::Error);
        assert_eq!(message.error_message.as_deref(), Some(text));
    }
}

#[tokio::test]
async fn an_unreadable_credentials_file_fails_before_sending() {
    let (_, server) = ReplayServer::start(vec![Reply::event_stream(tool_turn())])
        .await
        .unwrap();
    let dir = std::env::temp_dir();
    let api = BedrockConverseStream::with_env(ProviderEnv::fixed([(
        "AWS_SHARED_CREDENTIALS_FILE",
        dir.to_str().unwrap(),
    )]));
    let (kinds, message) = run(api, &model(&server.base_url()), Some("<authenticated>")).await;
    assert_eq!(kinds, ["error"]);
    assert!(
        message
            .error_message
            .as_deref()
            .is_some_and(|m| m.starts_with("Could not read AWS shared file ")),
        "{:?}",
        message.error_message
    );
    assert_eq!(server.request_count(), 0);
}

/// A recorded fixture: one `{"<event type>": payload}` per line, framed as event-stream
/// messages.
fn recorded(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/streams/amazon-bedrock")
        .join(name);
    let text = std::fs::read_to_string(path).unwrap();
    let mut body = EventStreamBuilder::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        let (name, payload) = event.as_object().unwrap().iter().next().unwrap();
        body = body.event(name, payload);
    }
    body.build()
}

/// Replays `body` whole and in 1- and 7-byte chunks; the three outcomes must agree.
async fn replay_all_ways(body: Vec<u8>) -> AssistantMessage {
    let mut outcomes: Vec<(Vec<&'static str>, AssistantMessage)> = Vec::new();
    for chunk in [None, Some(1), Some(7)] {
        let mut reply = Reply::event_stream(body.clone());
        if let Some(n) = chunk {
            reply = reply.chunk_size(n);
        }
        let (_, server) = ReplayServer::start(vec![reply]).await.unwrap();
        let (kinds, message) = run(
            BedrockConverseStream::with_env(env(&[])),
            &model(&server.base_url()),
            None,
        )
        .await;
        outcomes.push((kinds, message));
    }
    for (kinds, message) in &outcomes[1..] {
        assert_eq!(kinds, &outcomes[0].0);
        assert_eq!(message.content, outcomes[0].1.content);
        assert_eq!(message.usage, outcomes[0].1.usage);
        assert_eq!(message.error_message, outcomes[0].1.error_message);
    }
    outcomes.remove(0).1
}

#[tokio::test]
async fn recorded_text_reasoning_and_tool_call_streams() {
    let m = replay_all_ways(recorded("bedrock-text.chunks.txt")).await;
    assert_eq!(m.stop_reason, StopReason::Stop);
    let AssistantContent::Text(t) = &m.content[0] else {
        panic!("{:?}", m.content)
    };
    assert_eq!(
        t.text,
        "Let me count the \"r\"s in \"strawberry\":\n\ns-t-**r**-a-w-b-e-**r**-**r**-y\n\nThere are **3** r's in \"strawberry.\""
    );
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.total_tokens),
        (22.0, 55.0, 77.0)
    );

    let m = replay_all_ways(recorded("bedrock-reasoning.chunks.txt")).await;
    assert_eq!(m.stop_reason, StopReason::Stop);
    let AssistantContent::Thinking(t) = &m.content[0] else {
        panic!("{:?}", m.content)
    };
    assert!(
        t.thinking
            .starts_with("Let me count the r's in \"strawberry\":"),
        "{}",
        t.thinking
    );
    assert!(t.thinking.ends_with("So there are 3 r's."));
    assert!(
        t.thinking_signature
            .as_deref()
            .is_some_and(|s| s.starts_with("Ep0CCkgICxAB"))
    );
    let AssistantContent::Text(text) = &m.content[1] else {
        panic!("{:?}", m.content)
    };
    assert!(text.text.starts_with("There are **3** r's"));

    let m = replay_all_ways(recorded("bedrock-tool-call.1.chunks.txt")).await;
    assert_eq!(m.stop_reason, StopReason::ToolUse);
    let AssistantContent::ToolCall(call) = &m.content[0] else {
        panic!("{:?}", m.content)
    };
    assert_eq!(
        (call.id.as_str(), call.name.as_str()),
        ("tool-use-id", "test-tool")
    );
    assert_eq!(call.arguments.get("value"), Some(&json!("Sparkle Day")));
    assert_eq!(
        (m.usage.input, m.usage.output, m.usage.total_tokens),
        (125.0, 45.0, 170.0)
    );
}

/// A real exception message recorded from Bedrock, after a text delta.
#[tokio::test]
async fn recorded_exception_frame() {
    use base64::Engine as _;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "tests/data/streams/amazon-bedrock/model-stream-error-exception.eventstream.base64.txt",
    );
    let frame = base64::engine::general_purpose::STANDARD
        .decode(std::fs::read_to_string(path).unwrap().trim())
        .unwrap();
    let body = EventStreamBuilder::new()
        .event("messageStart", &json!({"role": "assistant"}))
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"text": "Hel"}}),
        )
        .raw(&frame)
        .build();
    let m = replay_all_ways(body).await;
    assert_eq!(m.stop_reason, StopReason::Error);
    assert_eq!(
        m.error_message.as_deref(),
        Some("Model stream error: Model Stream Error")
    );
    let AssistantContent::Text(t) = &m.content[0] else {
        panic!("{:?}", m.content)
    };
    assert_eq!(t.text, "Hel");
}

/// Without keys in the environment or the shared files, the request fails unsent with the
/// SDK's text; the instance-metadata and container credential endpoints the SDK would ask
/// (pointed at a local server here) get no request.
#[tokio::test]
async fn credentials_never_come_from_a_metadata_service() {
    let (_, metadata) = ReplayServer::start(vec![Reply::json(200, &json!({"Code": "Success"}))])
        .await
        .unwrap();
    let (_, bedrock) = ReplayServer::start(vec![Reply::event_stream(tool_turn())])
        .await
        .unwrap();
    let missing = std::env::temp_dir().join(format!("pi-no-aws-file-{}", std::process::id()));
    let api = BedrockConverseStream::with_env(ProviderEnv::fixed([
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", metadata.base_url()),
        (
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            format!("{}/creds", metadata.base_url()),
        ),
        (
            "AWS_SHARED_CREDENTIALS_FILE",
            missing.to_str().unwrap().to_owned(),
        ),
        ("AWS_CONFIG_FILE", missing.to_str().unwrap().to_owned()),
    ]));
    let (kinds, message) = run(api, &model(&bedrock.base_url()), Some("<authenticated>")).await;
    assert_eq!(kinds, ["error"]);
    assert_eq!(
        message.error_message.as_deref(),
        Some("Could not load credentials from any providers")
    );
    assert_eq!(metadata.request_count(), 0);
    assert_eq!(bedrock.request_count(), 0);
}
