//! Vertex AI with Application Default Credentials, end to end against a loopback server: the
//! service-account assertion (verified with the key's public half), the token sent as
//! `Authorization: Bearer`, the token reused from the cache, the authorized-user refresh
//! grant, and the failures (expired grant, unreadable or missing file) as one `error` event
//! with nothing sent to the model endpoint.

use std::path::PathBuf;
use std::sync::Arc;

use pi_ai::providers::driver::stream_wire;
use pi_ai::providers::{GoogleVertex, ProviderEnv, WireApi};
use pi_ai::testkit::{ReplayServer, Reply};
use pi_ai::types::{Context, Message, Model, StopReason, StreamOptions, UserMessage};
use pi_ai::{AssistantMessage, AssistantMessageEvent};
use serde_json::{Value, json};

use crate::anthropic_google_support::data;

const TEXT: &str = "streams/google-vertex/text.sse";

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pi-vertex-adc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn service_account(dir: &std::path::Path, token_uri: &str) -> PathBuf {
    let key = String::from_utf8(data("credentials/sa-key.pem")).unwrap();
    let path = dir.join("sa.json");
    let file = json!({
        "type": "service_account",
        "project_id": "sa-project",
        "private_key_id": "kid1",
        "private_key": key,
        "client_email": "pi-test@sa-project.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": token_uri,
    });
    std::fs::write(&path, file.to_string()).unwrap();
    path
}

fn model(base: &str) -> Model {
    Model {
        id: "gemini-2.5-flash".into(),
        name: "gemini-2.5-flash".into(),
        api: "google-vertex".into(),
        provider: "google-vertex".into(),
        base_url: base.into(),
        max_tokens: 1000,
        context_window: 100_000,
        ..Default::default()
    }
}

fn context() -> Context {
    Context {
        system_prompt: None,
        messages: vec![Message::User(UserMessage {
            content: pi_ai::types::UserMessageContent::Text("hi".into()),
            timestamp: 0,
        })],
        tools: None,
    }
}

/// Runs one request; returns the terminal message.
async fn run(api: &Arc<dyn WireApi>, model: &Model, key: Option<&str>) -> AssistantMessage {
    let options = StreamOptions {
        api_key: key.map(str::to_owned),
        ..Default::default()
    };
    let mut stream = stream_wire(api.clone(), model, &context(), options);
    let mut terminal = None;
    let mut errors = 0;
    while let Some(event) = stream.next_event().await {
        match event {
            AssistantMessageEvent::Done { message, .. } => terminal = Some(*message),
            AssistantMessageEvent::Error { error, .. } => {
                errors += 1;
                terminal = Some(*error)
            }
            _ => {}
        }
    }
    assert!(errors <= 1);
    terminal.expect("a terminal event")
}

fn env(pairs: &[(&str, &str)]) -> ProviderEnv {
    ProviderEnv::fixed(pairs.iter().copied())
}

fn form(body: &[u8]) -> Vec<(String, String)> {
    String::from_utf8(body.to_vec())
        .unwrap()
        .split('&')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            let v = v.replace('+', " ");
            let mut out = Vec::new();
            let bytes = v.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                if bytes[i] == b'%' {
                    out.push(u8::from_str_radix(&v[i + 1..i + 3], 16).unwrap());
                    i += 3;
                } else {
                    out.push(bytes[i]);
                    i += 1;
                }
            }
            (k.to_owned(), String::from_utf8(out).unwrap())
        })
        .collect()
}

#[tokio::test]
async fn service_account_token_is_exchanged_once_and_sent_as_bearer() {
    let token = json!({"access_token": "ya29.first", "expires_in": 3599, "token_type": "Bearer"});
    let (_, server) = ReplayServer::start(vec![
        Reply::json(200, &token),
        Reply::sse(data(TEXT)),
        Reply::sse(data(TEXT)),
    ])
    .await
    .unwrap();
    let d = dir("sa");
    let token_uri = format!("{}/token", server.base_url());
    let sa = service_account(&d, &token_uri);
    let api: Arc<dyn WireApi> = Arc::new(GoogleVertex::with_env(env(&[
        ("GOOGLE_APPLICATION_CREDENTIALS", sa.to_str().unwrap()),
        ("GOOGLE_CLOUD_PROJECT", "my-project"),
        ("GOOGLE_CLOUD_LOCATION", "us-central1"),
    ])));
    let m = model(&server.base_url());
    for _ in 0..2 {
        let message = run(&api, &m, Some("<authenticated>")).await;
        assert_eq!(
            message.stop_reason,
            StopReason::Stop,
            "{:?}",
            message.error_message
        );
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "one token exchange for two requests");
    let t = &requests[0];
    assert_eq!((t.method.as_str(), t.path.as_str()), ("POST", "/token"));
    assert_eq!(
        t.header("content-type"),
        Some("application/x-www-form-urlencoded;charset=UTF-8")
    );
    let fields = form(&t.body);
    assert_eq!(
        fields[0],
        (
            "grant_type".into(),
            "urn:ietf:params:oauth:grant-type:jwt-bearer".into()
        )
    );
    assert_eq!(fields[1].0, "assertion");
    let public = data("credentials/sa-key.pub.pem");
    let key = jsonwebtoken::DecodingKey::from_rsa_pem(&public).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.set_audience(&[token_uri.as_str()]);
    let decoded = jsonwebtoken::decode::<Value>(&fields[1].1, &key, &validation).unwrap();
    assert_eq!(
        decoded.header.typ, None,
        "pi's assertion header is alg alone"
    );
    let c = decoded.claims;
    assert_eq!(c["iss"], "pi-test@sa-project.iam.gserviceaccount.com");
    assert_eq!(c["scope"], "https://www.googleapis.com/auth/cloud-platform");
    assert_eq!(
        c["exp"].as_u64().unwrap() - c["iat"].as_u64().unwrap(),
        3600
    );
    for r in &requests[1..] {
        assert_eq!(
            r.path,
            "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
        );
        assert_eq!(r.header("authorization"), Some("Bearer ya29.first"));
        assert_eq!(r.header("x-goog-api-key"), None);
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[tokio::test]
async fn authorized_user_refresh_grant_and_an_expired_grant() {
    let (_, server) = ReplayServer::start(vec![
        Reply::json(200, &json!({"access_token": "ya29.user", "expires_in": 3600})),
        Reply::sse(data(TEXT)),
        Reply::json(
            400,
            &json!({"error": "invalid_grant", "error_description": "Token has been expired or revoked."}),
        ),
    ])
    .await
    .unwrap();
    let d = dir("user");
    let gcloud = d.join("gcloud");
    std::fs::create_dir_all(&gcloud).unwrap();
    let file = gcloud.join("application_default_credentials.json");
    let write = |refresh: &str| {
        let user = json!({
            "type": "authorized_user",
            "client_id": "id.apps.googleusercontent.com",
            "client_secret": "s3cret",
            "refresh_token": refresh,
            "token_uri": format!("{}/token", server.base_url()),
        });
        std::fs::write(&file, user.to_string()).unwrap();
    };
    write("1//refresh-a");
    let api: Arc<dyn WireApi> = Arc::new(GoogleVertex::with_env(env(&[
        ("CLOUDSDK_CONFIG", gcloud.to_str().unwrap()),
        ("GOOGLE_CLOUD_PROJECT", "p"),
        ("GOOGLE_CLOUD_LOCATION", "global"),
    ])));
    let m = model(&server.base_url());
    let ok = run(&api, &m, None).await;
    assert_eq!(ok.stop_reason, StopReason::Stop, "{:?}", ok.error_message);
    let requests = server.requests();
    assert_eq!(
        form(&requests[0].body),
        [
            (
                "client_id".to_owned(),
                "id.apps.googleusercontent.com".to_owned()
            ),
            ("client_secret".to_owned(), "s3cret".to_owned()),
            ("refresh_token".to_owned(), "1//refresh-a".to_owned()),
            ("grant_type".to_owned(), "refresh_token".to_owned()),
        ]
    );
    assert_eq!(
        requests[1].header("authorization"),
        Some("Bearer ya29.user")
    );
    // A changed file is exchanged again; the server says the grant has expired.
    write("1//refresh-b");
    let failed = run(&api, &m, None).await;
    assert_eq!(failed.stop_reason, StopReason::Error);
    assert_eq!(
        failed.error_message.as_deref(),
        Some("invalid_grant: Token has been expired or revoked.")
    );
    assert_eq!(
        server.request_count(),
        3,
        "nothing is sent to the model after a failed exchange"
    );
    std::fs::remove_dir_all(d).unwrap();
}

#[tokio::test]
async fn unreadable_missing_and_unsupported_credentials_fail_cleanly() {
    let (_, server) = ReplayServer::start(vec![]).await.unwrap();
    let m = model(&server.base_url());
    let d = dir("bad");
    let bad_json = d.join("bad.json");
    std::fs::write(&bad_json, "{not json").unwrap();
    let external = d.join("external.json");
    std::fs::write(&external, r#"{"type":"external_account"}"#).unwrap();
    let no_key = d.join("no-key.json");
    std::fs::write(
        &no_key,
        r#"{"type":"service_account","client_email":"a@b"}"#,
    )
    .unwrap();
    let base = [
        ("GOOGLE_CLOUD_PROJECT", "p"),
        ("GOOGLE_CLOUD_LOCATION", "l"),
    ];
    let cases: Vec<(Vec<(&str, String)>, String)> = vec![
        (
            vec![(
                "GOOGLE_APPLICATION_CREDENTIALS",
                "/nonexistent/adc.json".into(),
            )],
            "The file at /nonexistent/adc.json does not exist, or it is not a file.".into(),
        ),
        (
            vec![(
                "GOOGLE_APPLICATION_CREDENTIALS",
                bad_json.display().to_string(),
            )],
            format!(
                "The Google credentials file {} is not valid JSON",
                bad_json.display()
            ),
        ),
        (
            vec![(
                "GOOGLE_APPLICATION_CREDENTIALS",
                external.display().to_string(),
            )],
            "Unsupported Google credentials type \"external_account\"".into(),
        ),
        (
            vec![(
                "GOOGLE_APPLICATION_CREDENTIALS",
                no_key.display().to_string(),
            )],
            format!(
                "The Google credentials file {} has no \"private_key\"",
                no_key.display()
            ),
        ),
        (
            vec![("HOME", d.display().to_string())],
            "Could not load the default credentials.".into(),
        ),
    ];
    for (vars, want) in cases {
        let mut pairs: Vec<(String, String)> = base
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        pairs.extend(vars.into_iter().map(|(k, v)| (k.to_owned(), v)));
        let api: Arc<dyn WireApi> = Arc::new(GoogleVertex::with_env(ProviderEnv::fixed(pairs)));
        let message = run(&api, &m, None).await;
        assert_eq!(message.stop_reason, StopReason::Error);
        let text = message.error_message.unwrap_or_default();
        assert!(
            text.starts_with(&want),
            "{text:?} should start with {want:?}"
        );
    }
    assert_eq!(server.request_count(), 0);
    std::fs::remove_dir_all(d).unwrap();
}
