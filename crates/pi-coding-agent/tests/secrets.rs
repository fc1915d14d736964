//! Secrets at the library level: API keys given through
//! `StreamOptions.api_key`, `models.json` (`apiKey`, headers), `auth.json` and the environment
//! never appear in `Debug` output, error texts, tracing logs (captured at TRACE) or session
//! entries, and reach the provider only in its auth header (checked on the replay server's
//! request log).

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_ai::providers::driver::stream_wire;
use pi_ai::providers::openai_completions::OpenAiCompletions;
use pi_ai::providers::openai_responses::OpenAiResponses;
use pi_ai::providers::{AnthropicMessages, GoogleGenerativeAi, WireApi};
use pi_ai::testkit::{RecordedRequest, ReplayServer, Reply};
use pi_ai::{
    AssistantMessage, AssistantMessageEvent, Context, Message, Model, StreamOptions, UserMessage,
};
use pi_coding_agent::config::auth::AuthStorage;
use pi_coding_agent::config::models_json::ModelsConfig;
use pi_coding_agent::config::registry::ModelRegistry;
use pi_coding_agent::storage::{EntryKind, SessionStore};

/// Every secret of these tests contains this marker; nothing we write may contain it.
const MARK: &str = "S3CR3T";

fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(MARK), "{what} leaks a secret: {text}");
}

fn data(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/secrets")
            .join(name),
    )
    .unwrap()
}

/// A `tracing` subscriber at TRACE writing into a buffer, for the current thread.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capture {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
    fn install(&self) -> tracing::subscriber::DefaultGuard {
        let writer = self.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::set_default(subscriber)
    }
}

const MODELS_JSON: &str = r#"{
  "providers": {
    "mine": {
      "baseUrl": "http://127.0.0.1:9/v1",
      "api": "openai-completions",
      "apiKey": "mk-S3CR3T-models",
      "headers": {"X-Team-Token": "hdr-S3CR3T-provider"},
      "models": [{"id": "m", "headers": {"X-Model-Token": "hdr-S3CR3T-model"}}],
      "modelOverrides": {"m": {"headers": {"X-Override-Token": "hdr-S3CR3T-override"}}}
    }
  }
}"#;

const AUTH_JSON: &str = r#"{
  "anthropic": {"type": "api_key", "key": "sk-ant-S3CR3T-auth", "env": {"TEAM": "env-S3CR3T"}},
  "openai": {"type": "oauth", "access": "acc-S3CR3T", "refresh": "ref-S3CR3T", "expires": 1e13}
}"#;

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn config_debug_output_and_errors_never_show_keys() {
    let dir = tempfile::tempdir().unwrap();
    let auth_path = dir.path().join("auth.json");
    std::fs::write(&auth_path, AUTH_JSON).unwrap();
    let mut auth = AuthStorage::open(&auth_path);
    assert_eq!(auth.error(), None);
    auth.set_runtime_api_key("groq", "gsk-S3CR3T-flag");
    assert_eq!(
        auth.stored_api_key("anthropic").as_deref(),
        Some("sk-ant-S3CR3T-auth")
    );
    assert_clean("AuthStorage Debug", &format!("{auth:?}"));
    assert_clean(
        "Credential Debug",
        &format!("{:?}", auth.credential("anthropic").unwrap()),
    );
    assert_clean(
        "Credential Debug",
        &format!("{:?}", auth.credential("openai").unwrap()),
    );

    let config = ModelsConfig::parse(MODELS_JSON, &dir.path().join("models.json"));
    assert_eq!(config.error, None);
    assert_clean("ModelsConfig Debug", &format!("{config:?}"));
    let registry = ModelRegistry::new(config, auth).with_env_key_lookup(no_env);
    assert_clean("ModelRegistry Debug", &format!("{registry:?}"));
    let model = registry.find("mine", "m").unwrap().clone();
    assert_clean("Model Debug", &format!("{model:?}"));
    let request_auth = registry.request_auth(&model).unwrap();
    // The values are there (they are sent), but never printed.
    assert_eq!(request_auth.api_key.as_deref(), Some("mk-S3CR3T-models"));
    assert!(
        request_auth
            .headers
            .iter()
            .any(|(_, v)| v.as_deref().is_some_and(|v| v.contains(MARK)))
    );
    assert_clean("RequestAuth Debug", &format!("{request_auth:?}"));
    let options = StreamOptions {
        api_key: request_auth.api_key.clone(),
        headers: request_auth.headers.clone(),
        ..Default::default()
    };
    assert_clean("StreamOptions Debug", &format!("{options:?}"));
    let wire = OpenAiCompletions
        .build_request(&model, &context(), &options, "mk-S3CR3T-models")
        .unwrap();
    assert!(wire.headers.iter().any(|(_, v)| v.contains(MARK)));
    assert_clean("WireRequest Debug", &format!("{wire:?}"));

    // Broken files: the messages name the file and line but never echo the secrets in them.
    let broken_auth = dir.path().join("broken-auth.json");
    std::fs::write(&broken_auth, &AUTH_JSON[..AUTH_JSON.len() - 3]).unwrap();
    let auth = AuthStorage::open(&broken_auth);
    let err = auth.error().unwrap();
    assert!(err.starts_with("Failed to parse auth.json: "), "{err}");
    assert_clean("auth.json error", err);
    assert_clean("AuthStorage Debug", &format!("{auth:?}"));
    let wrong_type = r#"{"anthropic": {"type": "api_key", "key": ["sk-S3CR3T"]}}"#;
    std::fs::write(&broken_auth, wrong_type).unwrap();
    assert_clean(
        "auth.json error",
        AuthStorage::open(&broken_auth).error().unwrap(),
    );
    for text in [
        MODELS_JSON.replace(
            "{\"id\": \"m\", ",
            "{\"id\": \"m\", \"contextWindow\": \"big\", ",
        ),
        MODELS_JSON.replace("\"api\": \"openai-completions\",", "\"api\": 7,"),
        MODELS_JSON[..MODELS_JSON.len() - 4].to_owned(),
    ] {
        let c = ModelsConfig::parse(&text, Path::new("/cfg/models.json"));
        let err = c
            .error
            .clone()
            .unwrap_or_else(|| panic!("no error for {text}"));
        assert_clean("models.json error", &err);
        assert_clean("ModelsConfig Debug", &format!("{c:?}"));
    }
}

fn context() -> Context {
    Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![UserMessage::text("Say hello").into()],
        tools: None,
    }
}

fn model(api: &str, provider: &str, base_url: String) -> Model {
    Model {
        id: "replay-model".into(),
        name: "replay-model".into(),
        api: api.into(),
        provider: provider.into(),
        base_url,
        context_window: 128_000,
        max_tokens: 1024,
        ..Default::default()
    }
}

async fn run(
    api: Arc<dyn WireApi>,
    model: &Model,
    options: StreamOptions,
) -> Vec<AssistantMessageEvent> {
    let mut stream = stream_wire(api, model, &context(), options);
    let mut events = Vec::new();
    while let Some(e) =
        tokio::time::timeout(std::time::Duration::from_secs(20), stream.next_event())
            .await
            .expect("stream hung")
    {
        events.push(e);
    }
    events
}

/// The headers of `request` whose value contains `secret`.
fn headers_with(request: &RecordedRequest, secret: &str) -> Vec<String> {
    request
        .headers
        .iter()
        .filter(|(_, v)| v.contains(secret))
        .map(|(k, _)| k.clone())
        .collect()
}

fn final_message(events: &[AssistantMessageEvent]) -> AssistantMessage {
    match events.last() {
        Some(AssistantMessageEvent::Done { message, .. }) => (**message).clone(),
        Some(AssistantMessageEvent::Error { error, .. }) => (**error).clone(),
        other => panic!("no terminal event: {other:?}"),
    }
}

/// Everything the run produced that pi-rs writes: events (Debug and json projection), the
/// final message as a session entry, its error text.
fn check_outputs(events: &[AssistantMessageEvent], dir: &Path) {
    for e in events {
        assert_clean("event Debug", &format!("{e:?}"));
        assert_clean("event json", &e.to_json_projection().to_string());
    }
    let message = final_message(events);
    assert_clean(
        "errorMessage",
        message.error_message.as_deref().unwrap_or(""),
    );
    let mut store = SessionStore::create(dir, "/w", None).unwrap();
    store
        .append(EntryKind::Message {
            message: AgentMessage::from(Message::User(UserMessage::text("Say hello"))),
        })
        .unwrap();
    store
        .append(EntryKind::Message {
            message: AgentMessage::from(message),
        })
        .unwrap();
    let path = store.path().unwrap().to_owned();
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(file.lines().count() >= 3, "the session was written: {file}");
    assert_clean("session file", &file);
}

/// Wire API, recorded body, provider, auth header, key.
type Case = (
    Arc<dyn WireApi>,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

#[tokio::test(flavor = "current_thread")]
async fn keys_reach_the_provider_only_in_its_auth_header() {
    let capture = Capture::default();
    let _guard = capture.install();
    tracing::trace!("capture probe");
    let dir = tempfile::tempdir().unwrap();
    let cases: [Case; 4] = [
        (
            Arc::new(AnthropicMessages),
            "anthropic.sse",
            "anthropic",
            "x-api-key",
            "sk-ant-S3CR3T-opt",
        ),
        (
            Arc::new(OpenAiCompletions),
            "openai_completions.sse",
            "openai",
            "authorization",
            "sk-S3CR3T-opt-c",
        ),
        (
            Arc::new(OpenAiResponses),
            "openai_responses.sse",
            "openai",
            "authorization",
            "sk-S3CR3T-opt-r",
        ),
        (
            Arc::new(GoogleGenerativeAi),
            "google.sse",
            "google",
            "x-goog-api-key",
            "g-S3CR3T-opt",
        ),
    ];
    for (api, sse, provider, auth_header, key) in cases {
        let (_, handle) = ReplayServer::start(vec![
            Reply::sse(data(sse)),
            Reply::json(
                401,
                &serde_json::json!({"error": {"message": "invalid api key"}}),
            ),
        ])
        .await
        .unwrap();
        let m = model(api.api(), provider, handle.base_url());
        let options = StreamOptions {
            api_key: Some(key.into()),
            headers: vec![("X-Team-Token".into(), Some("hdr-S3CR3T-team".into()))],
            max_retries: Some(0),
            ..Default::default()
        };
        let ok = run(api.clone(), &m, options.clone()).await;
        assert!(
            matches!(ok.last(), Some(AssistantMessageEvent::Done { .. })),
            "{}: {:?}",
            api.api(),
            ok.last()
        );
        check_outputs(&ok, dir.path());
        let failed = run(api.clone(), &m, options).await;
        assert!(matches!(
            failed.last(),
            Some(AssistantMessageEvent::Error { .. })
        ));
        check_outputs(&failed, dir.path());

        let requests = handle.requests();
        assert_eq!(requests.len(), 2);
        for r in &requests {
            assert_eq!(headers_with(r, key), [auth_header], "{}", api.api());
            assert_eq!(headers_with(r, "hdr-S3CR3T-team"), ["x-team-token"]);
            let elsewhere = format!(
                "{} {} {}",
                r.path,
                r.query,
                String::from_utf8_lossy(&r.body)
            );
            assert_clean("request line or body", &elsewhere);
        }
    }
    let logs = capture.text();
    assert!(logs.contains("capture probe"), "the capture works: {logs}");
    assert_clean("tracing log", &logs);
}

#[tokio::test(flavor = "current_thread")]
async fn environment_keys_reach_the_provider_only_in_its_auth_header() {
    let capture = Capture::default();
    let _guard = capture.install();
    // Only this test reads the variable (the others pass keys explicitly).
    unsafe { std::env::set_var("XAI_API_KEY", "xai-S3CR3T-env") };
    let (_, handle) = ReplayServer::start(vec![Reply::sse(data("openai_completions.sse"))])
        .await
        .unwrap();
    let m = model("openai-completions", "xai", handle.base_url());
    let events = run(Arc::new(OpenAiCompletions), &m, StreamOptions::default()).await;
    assert!(matches!(
        events.last(),
        Some(AssistantMessageEvent::Done { .. })
    ));
    let dir = tempfile::tempdir().unwrap();
    check_outputs(&events, dir.path());
    let r = &handle.requests()[0];
    assert_eq!(headers_with(r, "xai-S3CR3T-env"), ["authorization"]);
    assert_clean("request body", &String::from_utf8_lossy(&r.body));
    assert_clean("tracing log", &capture.text());
}
