//! Every wire API ported from pi-ai 0.85.1 answers a prompt with a tool call through the `pi`
//! binary: `pi --provider <p> --model <id> -p --mode json` against the test kit's replay
//! server (the built-in provider's `baseUrl` moved there in `models.json`), the key from the
//! provider's environment variable. The first reply calls `read`, pi runs it, and the second
//! request carries the file's text back; the answer is the second reply's text.

use crate::support;

use pi_ai::testkit::{RecordedRequest, ReplayServer, Reply, SseBuilder};
use serde_json::{Value, json};
use support::binary_rig::Rig;

const FILE_TEXT: &str = "pi-rs provider check 7431";

/// Runs the prompt for `provider`/`model` with `env`, the replies `first` (a `read` call of
/// `hello.txt`) and `second` (text `Done.`); checks the run and returns the two requests.
async fn answer_with_tool_call(
    provider: &str,
    model: &str,
    env: &[(&str, &str)],
    first: Reply,
    second: Reply,
) -> Vec<RecordedRequest> {
    let (_, server) = ReplayServer::start(vec![first, second]).await.unwrap();
    let models = json!({"providers": {provider: {"baseUrl": server.base_url()}}});
    let mut rig = Rig::with_models(&models, &json!({"retry": {"enabled": false}}));
    for (k, v) in env {
        rig.env.push(((*k).into(), (*v).into()));
    }
    std::fs::write(rig.path("work/hello.txt"), FILE_TEXT).unwrap();
    let args = [
        "--no-session",
        "--provider",
        provider,
        "--model",
        model,
        "--mode",
        "json",
        "-p",
        "What does hello.txt say?",
    ];
    let run = rig.run(&args).await;
    assert_eq!(run.code, 0, "{provider}: {run:?}");
    let records = run.records();
    let tool_end = records
        .iter()
        .find(|r| r["type"] == "tool_execution_end")
        .unwrap_or_else(|| panic!("{provider}: no tool execution: {}", run.stdout));
    assert_eq!(tool_end["toolName"], "read", "{provider}");
    assert_eq!(tool_end["isError"], false, "{provider}: {tool_end}");
    let last = records
        .iter()
        .rev()
        .find(|r| r["type"] == "message_end" && r["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(last["message"]["content"][0]["text"], "Done.", "{provider}");
    assert_eq!(last["message"]["stopReason"], "stop", "{provider}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{provider}");
    let second_body = String::from_utf8_lossy(&requests[1].body).into_owned();
    assert!(second_body.contains(FILE_TEXT), "{provider}: {second_body}");
    requests
}

fn responses_tool_call() -> Reply {
    let args = r#"{"path":"hello.txt"}"#;
    let item = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": ""});
    let mut done = item.clone();
    done["arguments"] = json!(args);
    done["status"] = json!("completed");
    Reply::sse(
        SseBuilder::new()
            .event("response.created", &json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}))
            .event("response.output_item.added", &json!({"type": "response.output_item.added", "output_index": 0, "item": item}))
            .event("response.function_call_arguments.delta", &json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": args}))
            .event("response.output_item.done", &json!({"type": "response.output_item.done", "output_index": 0, "item": done}))
            .event("response.completed", &json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "usage": {"input_tokens": 20, "output_tokens": 5, "total_tokens": 25}}}))
            .build_bytes(),
    )
}

fn responses_text() -> Reply {
    let msg = json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []});
    let part = json!({"type": "output_text", "text": "", "annotations": []});
    let mut done = msg.clone();
    done["status"] = json!("completed");
    done["content"] = json!([{"type": "output_text", "text": "Done.", "annotations": []}]);
    Reply::sse(
        SseBuilder::new()
            .event("response.created", &json!({"type": "response.created", "response": {"id": "resp_2", "status": "in_progress"}}))
            .event("response.output_item.added", &json!({"type": "response.output_item.added", "output_index": 0, "item": msg}))
            .event("response.content_part.added", &json!({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 0, "content_index": 0, "part": part}))
            .event("response.output_text.delta", &json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Done."}))
            .event("response.output_item.done", &json!({"type": "response.output_item.done", "output_index": 0, "item": done}))
            .event("response.completed", &json!({"type": "response.completed", "response": {"id": "resp_2", "status": "completed", "usage": {"input_tokens": 40, "output_tokens": 2, "total_tokens": 42}}}))
            .build_bytes(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn azure_openai_responses_through_the_binary() {
    let requests = answer_with_tool_call(
        "azure-openai-responses",
        "gpt-4.1",
        &[("AZURE_OPENAI_API_KEY", "azure-test-key")],
        responses_tool_call(),
        responses_text(),
    )
    .await;
    for r in &requests {
        assert_eq!(
            (r.path.as_str(), r.query.as_str()),
            ("/responses", "api-version=v1")
        );
        assert_eq!(r.header("api-key"), Some("azure-test-key"));
        assert_eq!(r.header("authorization"), None);
    }
    let body: Value = requests[1].body_json().unwrap();
    assert_eq!(body["model"], "gpt-4.1");
}

fn mistral_chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"id": "cmpl-1", "object": "chat.completion.chunk", "model": "devstral-latest",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
           "usage": {"prompt_tokens": 30, "completion_tokens": 4, "total_tokens": 34}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mistral_conversations_through_the_binary() {
    let call = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "abcDEF123", "function": {"name": "read", "arguments": "{\"path\": \"hello.txt\"}"}}]});
    let first = SseBuilder::new()
        .data(&mistral_chunk(call, Some("tool_calls")))
        .data_raw("[DONE]")
        .build_bytes();
    let second = SseBuilder::new()
        .data(&mistral_chunk(
            json!({"role": "assistant", "content": "Done."}),
            None,
        ))
        .data(&mistral_chunk(json!({"content": ""}), Some("stop")))
        .data_raw("[DONE]")
        .build_bytes();
    let requests = answer_with_tool_call(
        "mistral",
        "devstral-latest",
        &[("MISTRAL_API_KEY", "mistral-test-key")],
        Reply::sse(first),
        Reply::sse(second),
    )
    .await;
    for r in &requests {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.header("authorization"), Some("Bearer mistral-test-key"));
    }
    let body: Value = requests[1].body_json().unwrap();
    let tool = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(tool["tool_call_id"], "abcDEF123");
    assert_eq!(tool["name"], "read");
}

fn gemini_chunk(parts: Value) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
           "usageMetadata": {"promptTokenCount": 25, "candidatesTokenCount": 3, "totalTokenCount": 28},
           "responseId": "r-1"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn google_vertex_through_the_binary() {
    let first = SseBuilder::new()
        .data(&gemini_chunk(
            json!([{"functionCall": {"name": "read", "args": {"path": "hello.txt"}}}]),
        ))
        .build_bytes();
    let second = SseBuilder::new()
        .data(&gemini_chunk(json!([{"text": "Done."}])))
        .build_bytes();
    let requests = answer_with_tool_call(
        "google-vertex",
        "gemini-2.5-flash",
        &[("GOOGLE_CLOUD_API_KEY", "vertex-test-key")],
        Reply::sse(first),
        Reply::sse(second),
    )
    .await;
    for r in &requests {
        assert_eq!(
            r.path,
            "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
        );
        assert_eq!(r.query, "alt=sse");
        assert_eq!(r.header("x-goog-api-key"), Some("vertex-test-key"));
    }
}

fn mistral_text(text: &str) -> Reply {
    Reply::sse(
        SseBuilder::new()
            .data(&mistral_chunk(
                json!({"role": "assistant", "content": text}),
                Some("stop"),
            ))
            .data_raw("[DONE]")
            .build_bytes(),
    )
}

const MISTRAL_ARGS: [&str; 7] = [
    "--no-session",
    "--provider",
    "mistral",
    "--model",
    "devstral-latest",
    "-p",
    "hi",
];

/// `HTTP_PROXY` carries a request for an `http://` provider to the proxy (here the replay
/// server, which answers the absolute-form request); `NO_PROXY` naming the host sends it
/// direct, which fails for a host that does not exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_proxy_and_no_proxy_are_honoured() {
    let (_, proxy) = ReplayServer::start(vec![mistral_text("Proxied.")])
        .await
        .unwrap();
    let models = json!({"providers": {"mistral": {"baseUrl": "http://pi-provider.invalid:9"}}});
    let mut rig = Rig::with_models(&models, &json!({"retry": {"enabled": false}}));
    rig.env.push(("MISTRAL_API_KEY".into(), "k".into()));
    rig.env.push(("HTTP_PROXY".into(), proxy.base_url()));
    let run = rig.run(&MISTRAL_ARGS).await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "Proxied.\n"),
        "{run:?}"
    );
    let requests = proxy.requests();
    assert_eq!(
        requests[0].path,
        "http://pi-provider.invalid:9/v1/chat/completions"
    );
    rig.env
        .push(("no_proxy".into(), "other.example, .invalid".into()));
    let run = rig.run(&MISTRAL_ARGS).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(run.stderr, "fetch failed\n");
    assert_eq!(proxy.request_count(), 1);
    rig.env.retain(|(k, _)| k != "no_proxy");
    rig.env
        .push(("HTTP_PROXY".into(), "socks5://127.0.0.1:1".into()));
    let run = rig.run(&MISTRAL_ARGS).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.starts_with("Unsupported proxy protocol."),
        "{run:?}"
    );
    assert_eq!(proxy.request_count(), 1);
}

fn tls_data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tls")
        .join(name)
}

/// A TLS front on a loopback port that forwards each decrypted connection to `backend`.
async fn tls_front(backend: std::net::SocketAddr) -> u16 {
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(tls_data("server.pem"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let key = PrivateKeyDer::from_pem_file(tls_data("server-key.pem")).unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return;
                };
                let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    port
}

/// A provider behind a certificate from a private CA: refused until `SSL_CERT_FILE` names
/// the CA, as a corporate TLS-intercepting proxy is for Node users without their CA.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_cert_file_adds_a_trusted_root() {
    let (addr, server) = ReplayServer::start(vec![mistral_text("Trusted.")])
        .await
        .unwrap();
    let port = tls_front(addr).await;
    let models =
        json!({"providers": {"mistral": {"baseUrl": format!("https://127.0.0.1:{port}")}}});
    let mut rig = Rig::with_models(&models, &json!({"retry": {"enabled": false}}));
    rig.env.push(("MISTRAL_API_KEY".into(), "k".into()));
    let run = rig.run(&MISTRAL_ARGS).await;
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (1, "fetch failed\n"),
        "{run:?}"
    );
    assert_eq!(server.request_count(), 0);
    rig.env.push((
        "SSL_CERT_FILE".into(),
        tls_data("ca.pem").display().to_string(),
    ));
    let run = rig.run(&MISTRAL_ARGS).await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "Trusted.\n"),
        "{run:?}"
    );
    assert_eq!(server.request_count(), 1);
}

fn bedrock_turn(blocks: pi_ai::testkit::EventStreamBuilder, stop: &str) -> Reply {
    Reply::event_stream(
        blocks
            .event("messageStop", &json!({"stopReason": stop}))
            .event(
                "metadata",
                &json!({"usage": {"inputTokens": 30, "outputTokens": 4, "totalTokens": 34}}),
            )
            .build(),
    )
}

/// Bedrock over the binary event stream, SigV4-signed with the environment's keys: the
/// server side re-makes each request's `Authorization` from the recorded headers, body and
/// `x-amz-date`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bedrock_converse_stream_through_the_binary() {
    use pi_ai::providers::bedrock::{AwsKeys, sign_request};
    use pi_ai::testkit::EventStreamBuilder;

    let start = EventStreamBuilder::new().event("messageStart", &json!({"role": "assistant"}));
    let first = start
        .clone()
        .event(
            "contentBlockStart",
            &json!({"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "read"}}}),
        )
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{\"path\":\"hello.txt\"}"}}}),
        )
        .event("contentBlockStop", &json!({"contentBlockIndex": 0}));
    let second = start
        .event(
            "contentBlockDelta",
            &json!({"contentBlockIndex": 0, "delta": {"text": "Done."}}),
        )
        .event("contentBlockStop", &json!({"contentBlockIndex": 0}));
    let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    let requests = answer_with_tool_call(
        "amazon-bedrock",
        "us.anthropic.claude-opus-4-6-v1",
        &[
            ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
            ("AWS_SECRET_ACCESS_KEY", secret),
        ],
        bedrock_turn(first, "tool_use"),
        bedrock_turn(second, "end_turn"),
    )
    .await;
    let keys = AwsKeys {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: secret.into(),
        session_token: None,
    };
    for r in &requests {
        assert_eq!(
            r.path,
            "/model/us.anthropic.claude-opus-4-6-v1/converse-stream"
        );
        let sent = r.header("authorization").unwrap();
        let signed = sent
            .split("SignedHeaders=")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .unwrap();
        assert!(
            signed.contains("content-length;content-type;host"),
            "{sent}"
        );
        let headers: Vec<(String, String)> = signed
            .split(';')
            .filter(|h| !["x-amz-date", "x-amz-content-sha256"].contains(h))
            .map(|h| (h.to_owned(), r.header(h).unwrap().to_owned()))
            .collect();
        let date = r.header("x-amz-date").unwrap();
        let time = chrono::NaiveDateTime::parse_from_str(date, "%Y%m%dT%H%M%SZ")
            .unwrap()
            .and_utc();
        let time = std::time::UNIX_EPOCH
            + std::time::Duration::from_secs(u64::try_from(time.timestamp()).unwrap());
        let url = format!("http://{}{}", r.header("host").unwrap(), r.path);
        let again = sign_request(&keys, "us-east-1", &url, &headers, &r.body, time).unwrap();
        let expected = again
            .iter()
            .find(|(k, _)| k == "authorization")
            .map(|(_, v)| v.as_str());
        assert_eq!(expected, Some(sent));
    }
    let body: Value = requests[1].body_json().unwrap();
    let result = &body["messages"][2]["content"][0]["toolResult"];
    assert_eq!(result["toolUseId"], "tooluse_1");
    assert_eq!(result["status"], "success");
}

/// pi-ai's vendored recordings.
fn recording(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../pi-ai/tests/data/streams")
        .join(rel)
}

/// Runs `replies` through `pi --provider <p> --model <m> -p --mode json` (exit 0); the
/// json records.
async fn run_records(
    provider: &str,
    model: &str,
    env: &[(&str, &str)],
    replies: Vec<Reply>,
) -> Vec<Value> {
    let (_, server) = ReplayServer::start(replies).await.unwrap();
    let models = json!({"providers": {provider: {"baseUrl": server.base_url()}}});
    let mut rig = Rig::with_models(&models, &json!({"retry": {"enabled": false}}));
    for (k, v) in env {
        rig.env.push(((*k).into(), (*v).into()));
    }
    std::fs::write(rig.path("work/hello.txt"), FILE_TEXT).unwrap();
    let args = [
        "--no-session",
        "--provider",
        provider,
        "--model",
        model,
        "--mode",
        "json",
        "-p",
        "go",
    ];
    let run = rig.run(&args).await;
    assert_eq!(run.code, 0, "{provider}: {run:?}");
    run.records()
}

/// Runs `first` (a recorded tool-call stream) then `second` (text) through the binary; the
/// first assistant `message_end`.
async fn first_answer(
    provider: &str,
    model: &str,
    env: &[(&str, &str)],
    first: Reply,
    second: Reply,
) -> Value {
    run_records(provider, model, env, vec![first, second])
        .await
        .into_iter()
        .find(|r| r["type"] == "message_end" && r["message"]["role"] == "assistant")
        .map(|r| r["message"].clone())
        .unwrap_or_else(|| panic!("{provider}: no assistant message"))
}

/// Token counts of a message's usage (cost and reasoning left out).
fn tokens(message: &Value) -> Value {
    let u = &message["usage"];
    json!([
        u["input"],
        u["output"],
        u["cacheRead"],
        u["cacheWrite"],
        u["totalTokens"]
    ])
}

/// One recorded tool-call stream of each new API as the binary's first reply: the
/// `message_end` carries the content, stopReason, usage and response id pi-ai 0.85.1 gives
/// for it (`<api>/tool-call.expected.json`; Bedrock's recording has the values pi-ai's
/// test asserts), so the binary path maps recordings as the library does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_tool_call_streams_through_the_binary() {
    let sse = |rel: &str| Reply::sse(std::fs::read(recording(rel)).unwrap());
    let gemini_text = Reply::sse(
        SseBuilder::new()
            .data(&gemini_chunk(json!([{"text": "ok"}])))
            .build_bytes(),
    );
    let cases = [
        (
            "mistral",
            "mistral-small-latest",
            ("MISTRAL_API_KEY", "k"),
            "mistral-conversations",
            mistral_text("ok"),
        ),
        (
            "azure-openai-responses",
            "gpt-5.1",
            ("AZURE_OPENAI_API_KEY", "k"),
            "azure-openai-responses",
            responses_text(),
        ),
        (
            "google-vertex",
            "gemini-2.5-flash",
            ("GOOGLE_CLOUD_API_KEY", "k"),
            "google-vertex",
            gemini_text,
        ),
    ];
    for (provider, model, env, dir, second) in cases {
        let expected: Value = serde_json::from_slice(
            &std::fs::read(recording(&format!("{dir}/tool-call.expected.json"))).unwrap(),
        )
        .unwrap();
        let want = &expected["message"];
        let first = sse(&format!("{dir}/tool-call.sse"));
        let mut got = first_answer(provider, model, &[env], first, second).await;
        for (block, want_block) in got["content"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .zip(want["content"].as_array().unwrap())
        {
            if want_block["id"] == "<generated>" {
                block["id"] = json!("<generated>");
            }
        }
        assert_eq!(got["content"], want["content"], "{provider}");
        assert_eq!(got["stopReason"], want["stopReason"], "{provider}");
        assert_eq!(got["responseId"], want["responseId"], "{provider}");
        assert_eq!(tokens(&got), tokens(want), "{provider}");
    }

    // Bedrock: vercel/ai's decoded events, one `{"<event type>": payload}` per line, framed.
    let text = std::fs::read_to_string(recording("amazon-bedrock/bedrock-tool-call.1.chunks.txt"))
        .unwrap();
    let mut body = pi_ai::testkit::EventStreamBuilder::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let event: Value = serde_json::from_str(line).unwrap();
        let (name, payload) = event.as_object().unwrap().iter().next().unwrap();
        body = body.event(name, payload);
    }
    let second = bedrock_turn(
        pi_ai::testkit::EventStreamBuilder::new()
            .event("messageStart", &json!({"role": "assistant"}))
            .event(
                "contentBlockDelta",
                &json!({"contentBlockIndex": 0, "delta": {"text": "ok"}}),
            ),
        "end_turn",
    );
    let got = first_answer(
        "amazon-bedrock",
        "us.anthropic.claude-opus-4-6-v1",
        &[("AWS_BEARER_TOKEN_BEDROCK", "bedrock-key")],
        Reply::event_stream(body.build()).chunk_size(7),
        second,
    )
    .await;
    assert_eq!(got["stopReason"], "toolUse");
    let call = got["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "toolCall")
        .unwrap();
    assert_eq!(
        (&call["id"], &call["name"]),
        (&json!("tool-use-id"), &json!("test-tool"))
    );
    assert_eq!(call["arguments"]["value"], "Sparkle Day");
    assert_eq!(tokens(&got), json!([125, 45, 0, 0, 170]));
}

/// A Bedrock throttling error through the binary: the failed assistant message carries pi's
/// text and, as its last key, the `bedrock_response_failure` diagnostic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bedrock_failure_diagnostic_through_the_binary() {
    let reply = Reply::json(
        429,
        &json!({"message": "Too many requests, please wait before trying again."}),
    )
    .header("x-amzn-errortype", "ThrottlingException")
    .header("x-amzn-requestid", "req-429");
    let (_, server) = ReplayServer::start(vec![reply]).await.unwrap();
    let models = json!({"providers": {"amazon-bedrock": {"baseUrl": server.base_url()}}});
    let mut rig = Rig::with_models(&models, &json!({"retry": {"enabled": false}}));
    rig.env
        .push(("AWS_BEARER_TOKEN_BEDROCK".into(), "bedrock-key".into()));
    let args = [
        "--no-session",
        "--provider",
        "amazon-bedrock",
        "--model",
        "us.anthropic.claude-opus-4-6-v1",
        "--mode",
        "json",
        "-p",
        "go",
    ];
    let run = rig.run(&args).await;
    let end = run
        .records()
        .into_iter()
        .find(|r| r["type"] == "message_end" && r["message"]["role"] == "assistant")
        .unwrap_or_else(|| panic!("no assistant message: {}", run.stdout));
    let message = &end["message"];
    assert_eq!(message["stopReason"], "error");
    assert_eq!(
        message["errorMessage"],
        "Throttling error: Too many requests, please wait before trying again."
    );
    assert_eq!(
        message["diagnostics"][0]["details"],
        json!({"status": 429, "errorCode": "ThrottlingException", "requestId": "req-429"})
    );
    let keys: Vec<&String> = message.as_object().unwrap().keys().collect();
    assert_eq!(
        keys.last().map(|k| k.as_str()),
        Some("diagnostics"),
        "{keys:?}"
    );
}

/// Mistral and Bedrock tool calls whose arguments are not exactly one JSON object are not run:
/// the tool result is the error the model can act on, and the turn goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_that_are_not_one_object_are_refused_on_mistral_and_bedrock() {
    use pi_ai::testkit::EventStreamBuilder;
    for args in [
        r#"{"path":"hello.txt"}{"path":"x.txt"}"#,
        r#"{"path":"hello.txt"#,
    ] {
        let call = json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "abcDEF123", "function": {"name": "read", "arguments": args}}]});
        let mistral = Reply::sse(
            SseBuilder::new()
                .data(&mistral_chunk(call, Some("tool_calls")))
                .data_raw("[DONE]")
                .build_bytes(),
        );
        let bedrock = bedrock_turn(
            EventStreamBuilder::new()
                .event("messageStart", &json!({"role": "assistant"}))
                .event(
                    "contentBlockStart",
                    &json!({"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "read"}}}),
                )
                .event(
                    "contentBlockDelta",
                    &json!({"contentBlockIndex": 0, "delta": {"toolUse": {"input": args}}}),
                )
                .event("contentBlockStop", &json!({"contentBlockIndex": 0})),
            "tool_use",
        );
        let bedrock_done = bedrock_turn(
            EventStreamBuilder::new()
                .event("messageStart", &json!({"role": "assistant"}))
                .event(
                    "contentBlockDelta",
                    &json!({"contentBlockIndex": 0, "delta": {"text": "Done."}}),
                ),
            "end_turn",
        );
        let cases = [
            (
                "mistral",
                "devstral-latest",
                ("MISTRAL_API_KEY", "k"),
                vec![mistral, mistral_text("Done.")],
            ),
            (
                "amazon-bedrock",
                "us.anthropic.claude-opus-4-6-v1",
                ("AWS_BEARER_TOKEN_BEDROCK", "k"),
                vec![bedrock, bedrock_done],
            ),
        ];
        for (provider, model, env, replies) in cases {
            let records = run_records(provider, model, &[env], replies).await;
            let end = records
                .iter()
                .find(|r| r["type"] == "tool_execution_end")
                .unwrap_or_else(|| panic!("{provider}: no tool execution"));
            assert_eq!(end["isError"], true, "{provider} {args}");
            assert_eq!(
                end["result"]["content"][0]["text"],
                "Tool call \"read\" was not executed: its arguments are not exactly one valid JSON object. Re-issue the tool call with its arguments as one complete JSON object.",
                "{provider} {args}"
            );
            let last = records
                .iter()
                .rev()
                .find(|r| r["type"] == "message_end" && r["message"]["role"] == "assistant")
                .unwrap();
            assert_eq!(last["message"]["content"][0]["text"], "Done.", "{provider}");
        }
    }
}
