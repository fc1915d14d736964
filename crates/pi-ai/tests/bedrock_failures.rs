//! Bedrock failures as pi-ai 0.85.1 reports them: each case of
//! `data/bedrock-failures.json` (an HTTP error, or an event-stream body with an exception, a
//! bad frame, an error stop reason, …) with the terminal message pi-ai's own `stream` gave
//! for it (captured by `xtask/reference/capture-bedrock-failures.mjs`). The same response,
//! served whole and in 1- and 7-byte reads, must end in one terminal event with pi's
//! stopReason, `errorMessage`, `bedrock_response_failure` diagnostic, content and key order
//! (the diagnostic after `errorMessage`) — except
//! where pi-rs differs on purpose, listed in [`PI_RS`] and docs/providers.md.

use std::sync::Arc;

use pi_ai::AssistantMessageEvent;
use pi_ai::providers::driver::stream_wire;
use pi_ai::providers::{BedrockConverseStream, ProviderEnv, WireApi};
use pi_ai::testkit::{EventStreamBuilder, ReplayServer, Reply};
use pi_ai::types::{Context, Message, Model, StreamOptions, UserMessage, UserMessageContent};
use serde_json::{Value, json};

/// Where pi-rs differs (docs/providers.md): the `errorMessage` and diagnostic details it gives.
/// - pi's SDK drops the body of a failed response (a JSON parse error of its own, or
///   `Unknown: UnknownError`); pi-rs shows `<status>: <body>` and keeps the error code the
///   response named.
/// - A frame that fails before the first event reaches pi fails inside the SDK's request
///   step, which appends its JavaScript hint (`Deserialization error: … {error}.$response …`)
///   and reports the 200 status; pi-rs gives the framing text alone, as for any later frame.
/// - The request id of a stream whose first message fails: pi loses it, pi-rs keeps it.
const PI_RS: &[(&str, &str, &str)] = &[
    (
        "exception as the first message",
        "Throttling error: Too many tokens",
        r#"{"errorCode":"ThrottlingException","requestId":"req-stream-1"}"#,
    ),
    (
        "http 502 html page",
        "Unknown: 502: <html>bad gateway</html>",
        r#"{"status":502}"#,
    ),
    (
        "http 403 gateway json",
        r#"Unknown: 403: {"error":"forbidden by gateway"}"#,
        r#"{"status":403}"#,
    ),
    (
        "http 400 typed, text body",
        "Validation error: 400: oops",
        r#"{"status":400,"errorCode":"ValidationException"}"#,
    ),
    (
        "prelude crc mismatch",
        "The prelude checksum specified in the message (2530540254) does not match the calculated CRC32 checksum (2530605790)",
        r#"{"requestId":"req-stream-1"}"#,
    ),
];

fn cases() -> Vec<Value> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bedrock-failures.json");
    let record: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    record["cases"].as_array().unwrap().clone()
}

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

/// The case's event-stream body, framed by the test kit's own encoder.
fn body(case: &Value) -> Vec<u8> {
    let mut b = EventStreamBuilder::new();
    for f in case["frames"].as_array().unwrap() {
        let s = |k: &str| f[k].as_str().unwrap();
        b = if f.get("event").is_some() {
            b.event(s("event"), &f["payload"])
        } else if f.get("exception").is_some() {
            b.raw_message(
                &[
                    (":exception-type", s("exception")),
                    (":content-type", "application/json"),
                    (":message-type", "exception"),
                ],
                s("payload").as_bytes(),
            )
        } else if f.get("error").is_some() {
            b.raw_message(
                &[
                    (":message-type", "error"),
                    (":error-code", s("error")),
                    (":error-message", s("message")),
                ],
                b"",
            )
        } else {
            b.raw_message(
                &[(":event-type", "x"), (":message-type", s("messageType"))],
                b"{}",
            )
        };
    }
    let mut bytes = b.build();
    if let Some(cut) = case["cut"].as_u64() {
        bytes.truncate(bytes.len() - cut as usize);
    }
    if let Some(flip) = case["flip"].as_i64() {
        let at = bytes.len() - flip.unsigned_abs() as usize;
        bytes[at] ^= 1;
    }
    if let Some(at) = case["flipAt"].as_u64() {
        bytes[at as usize] ^= 1;
    }
    if let Some(raw) = case["raw"].as_str() {
        // A prelude (total length, headers length) with its CRC32, then eight zero bytes.
        use base64::Engine as _;
        let prelude = base64::engine::general_purpose::STANDARD
            .decode(raw)
            .unwrap();
        bytes.extend_from_slice(&prelude);
        bytes.extend_from_slice(&crc32fast::hash(&prelude).to_be_bytes());
        bytes.extend_from_slice(&[0; 8]);
    }
    bytes
}

fn reply(case: &Value, chunk: Option<usize>) -> Reply {
    let mut reply = if case.get("frames").is_some() {
        Reply::event_stream(body(case)).header("x-amzn-requestid", "req-stream-1")
    } else {
        let status = u16::try_from(case["status"].as_u64().unwrap()).unwrap();
        let mut r = Reply::text(status, case["body"].as_str().unwrap());
        for (k, v) in case["headers"].as_object().unwrap() {
            if k != "content-type" {
                r = r.header(k, v.as_str().unwrap());
            }
        }
        r
    };
    if let Some(n) = chunk {
        reply = reply.chunk_size(n);
    }
    reply
}

/// The terminal message as pi writes its fields, diagnostics' timestamps zeroed.
async fn outcome(reply: Reply) -> Value {
    let (_, server) = ReplayServer::start(vec![reply]).await.unwrap();
    let api: Arc<dyn WireApi> = Arc::new(BedrockConverseStream::with_env(ProviderEnv::fixed([
        ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
        (
            "AWS_SECRET_ACCESS_KEY",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        ),
    ])));
    let context = Context {
        messages: vec![Message::User(UserMessage {
            content: UserMessageContent::Text("hi".into()),
            timestamp: 1,
        })],
        ..Default::default()
    };
    let model = model(&server.base_url());
    let mut stream = stream_wire(api, &model, &context, StreamOptions::default());
    let mut terminals = Vec::new();
    while let Some(event) = stream.next_event().await {
        match event {
            AssistantMessageEvent::Done { message, .. } => terminals.push(("done", *message)),
            AssistantMessageEvent::Error { error, .. } => terminals.push(("error", *error)),
            _ => {}
        }
    }
    assert_eq!(terminals.len(), 1, "one terminal event");
    let (kind, mut message) = terminals.remove(0);
    for d in message.diagnostics.iter_mut().flatten() {
        d.timestamp = 0;
    }
    let m = serde_json::to_value(&message).unwrap();
    let keys: Vec<&String> = m.as_object().unwrap().keys().collect();
    json!({
        "keys": keys,
        "type": kind,
        "stopReason": m["stopReason"],
        "errorMessage": m.get("errorMessage").cloned().unwrap_or(Value::Null),
        "diagnostics": m.get("diagnostics").cloned().unwrap_or(json!([])),
        "content": m["content"],
    })
}

#[tokio::test]
async fn failures_read_as_pi_reports_them() {
    let cases = cases();
    assert!(cases.len() >= 25);
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let mut want = case["pi"].clone();
        if let Some((_, text, details)) = PI_RS.iter().find(|(n, ..)| *n == name) {
            want["errorMessage"] = json!(text);
            want["diagnostics"][0]["details"] = serde_json::from_str(details).unwrap();
        }
        for chunk in [None, Some(1), Some(7)] {
            let got = outcome(reply(case, chunk)).await;
            assert_eq!(got, want, "{name} (chunks {chunk:?})");
        }
    }
}

/// The partial message kept on a failure carries encrypted reasoning as the same base64 a
/// completed block has.
#[test]
fn encrypted_reasoning_is_the_same_base64_on_failure_and_success() {
    let cases = cases();
    let signature = |name: &str| {
        let case = cases.iter().find(|c| c["name"] == name).unwrap();
        case["pi"]["content"][0]["thinkingSignature"].clone()
    };
    assert_eq!(
        signature("encrypted reasoning completed"),
        json!("AAEC/w==")
    );
    assert_eq!(
        signature("encrypted reasoning then an exception"),
        json!("AAEC/w==")
    );
    assert_eq!(
        signature("encrypted reasoning then a cut body"),
        json!("AAEC/w==")
    );
}
