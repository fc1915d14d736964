//! `models.json` headers through the `pi` binary: provider `headers`, then the model's (which
//! win), values resolved per request (`$VAR`), sent with every request of the provider
//! (pi 0.85.0 `ModelRuntime.getAuth`: `resolveConfiguredModelHeaders` merged into the
//! request's auth headers). A header value that cannot be resolved ends the request before
//! anything is sent.

use crate::support;

use pi_ai::testkit::ReplayServer;
use serde_json::json;
use support::anthropic_sse::anthropic_text;
use support::binary_rig::{KEY, Rig, models_json};

/// A root whose `replay-anthropic` provider sets `headers` (and its model one more).
fn rig(base_url: &str, provider_headers: serde_json::Value) -> Rig {
    let mut models = models_json(base_url, Some(KEY));
    let p = &mut models["providers"]["replay-anthropic"];
    p["headers"] = provider_headers;
    p["models"][0]["headers"] = json!({"X-Over": "model"});
    let mut rig = Rig::with_models(&models, &json!({"retry": {"enabled": false}}));
    rig.env.push(("TEAM_ID".into(), "team-42".into()));
    rig
}

const ARGS: [&str; 7] = [
    "--no-session",
    "--provider",
    "replay-anthropic",
    "--model",
    "replay-model",
    "-p",
    "hi",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_headers_reach_the_provider() {
    let (_, server) = ReplayServer::start(vec![anthropic_text("Fine."), anthropic_text("Again.")])
        .await
        .unwrap();
    let rig = rig(
        &server.base_url(),
        json!({"X-Team": "$TEAM_ID", "X-Over": "provider", "X-Plain": "literal"}),
    );
    for expected in ["Fine.\n", "Again.\n"] {
        let run = rig.run(&ARGS).await;
        assert_eq!((run.code, run.stdout.as_str()), (0, expected), "{run:?}");
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.header("x-team"), Some("team-42"), "{:?}", r.headers);
        assert_eq!(r.header("x-over"), Some("model"), "{:?}", r.headers);
        assert_eq!(r.header("x-plain"), Some("literal"), "{:?}", r.headers);
        assert_eq!(r.header("x-api-key"), Some(KEY));
    }
}

/// Observed on pi 0.85.0: a provider header is resolved with the provider's key, so its
/// failure is the provider's auth failure; a model header's failure is its own text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_that_cannot_be_resolved_ends_the_request_unsent() {
    let (_, server) = ReplayServer::start(vec![]).await.unwrap();
    let rig = rig(&server.base_url(), json!({"X-Token": "!exit 3"}));
    let run = rig.run(&ARGS).await;
    assert_eq!((run.code, run.stdout.as_str()), (1, ""), "{run:?}");
    assert_eq!(
        run.stderr,
        "API key auth failed for provider replay-anthropic: Failed to resolve provider \
         \"replay-anthropic\" header \"X-Token\" from shell command: exit 3\n"
    );

    let mut models = models_json(&server.base_url(), Some(KEY));
    models["providers"]["replay-anthropic"]["models"][0]["headers"] = json!({"X-Model": "!exit 4"});
    let rig = Rig::with_models(&models, &json!({"retry": {"enabled": false}}));
    let run = rig.run(&ARGS).await;
    assert_eq!((run.code, run.stdout.as_str()), (1, ""), "{run:?}");
    assert_eq!(
        run.stderr,
        "Failed to resolve model \"replay-anthropic/replay-model\" header \"X-Model\" from \
         shell command: exit 4\n"
    );
    assert_eq!(server.request_count(), 0);
}

/// Observed on pi 0.85.0: `ANTHROPIC_AUTH_TOKEN` authenticates the built-in `anthropic`
/// provider as `Authorization: Bearer <token>`, ahead of `ANTHROPIC_API_KEY`, which is then not
/// sent at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_auth_token_is_sent_as_a_bearer_token_alone() {
    let (_, server) = ReplayServer::start(vec![anthropic_text("Token."), anthropic_text("Only.")])
        .await
        .unwrap();
    let mut models = models_json(&server.base_url(), Some(KEY));
    models["providers"]["anthropic"] = json!({"baseUrl": server.base_url()});
    let mut rig = Rig::with_models(&models, &json!({"retry": {"enabled": false}}));
    rig.env
        .push(("ANTHROPIC_AUTH_TOKEN".into(), "tok-123".into()));
    let args = [
        "--no-session",
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
        "-p",
        "hi",
    ];
    let run = rig.run(&args).await;
    assert_eq!((run.code, run.stdout.as_str()), (0, "Token.\n"), "{run:?}");
    rig.env
        .push(("ANTHROPIC_API_KEY".into(), "sk-ant-env".into()));
    let run = rig.run(&args).await;
    assert_eq!((run.code, run.stdout.as_str()), (0, "Only.\n"), "{run:?}");
    for r in server.requests() {
        assert_eq!(
            r.header("authorization"),
            Some("Bearer tok-123"),
            "{:?}",
            r.headers
        );
        assert_eq!(r.header("x-api-key"), None, "{:?}", r.headers);
    }
}

/// A Chat Completions stream answering `text`.
fn completions_text(text: &str) -> pi_ai::testkit::Reply {
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    pi_ai::testkit::Reply::sse(format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        chunk(json!({"role": "assistant", "content": text}), json!(null)),
        chunk(json!({}), json!("stop"))
    ))
}

/// Observed on pi 0.85.0: Cloudflare Workers AI needs `CLOUDFLARE_ACCOUNT_ID` besides
/// `CLOUDFLARE_API_KEY` (without it the provider has no auth), and the id fills the
/// `{CLOUDFLARE_ACCOUNT_ID}` of its base URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cloudflare_workers_ai_needs_its_account_id_and_puts_it_in_the_url() {
    let (_, server) = ReplayServer::start(vec![completions_text("From Cloudflare.")])
        .await
        .unwrap();
    let mut models = models_json(&server.base_url(), Some(KEY));
    models["providers"]["cloudflare-workers-ai"] = json!({
        "baseUrl": format!("{}/accounts/{{CLOUDFLARE_ACCOUNT_ID}}/ai/v1", server.base_url())
    });
    let mut rig = Rig::with_models(&models, &json!({"retry": {"enabled": false}}));
    rig.env.push(("CLOUDFLARE_API_KEY".into(), "cf-key".into()));
    let args = [
        "--no-session",
        "--provider",
        "cloudflare-workers-ai",
        "--model",
        "@cf/deepseek-ai/deepseek-v4-flash-0731",
        "-p",
        "hi",
    ];
    let run = rig.run(&args).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .starts_with("No API key found for cloudflare-workers-ai."),
        "{run:?}"
    );
    assert_eq!(server.request_count(), 0);

    rig.env
        .push(("CLOUDFLARE_ACCOUNT_ID".into(), "acct-1".into()));
    let run = rig.run(&args).await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "From Cloudflare.\n"),
        "{run:?}"
    );
    let requests = server.requests();
    assert_eq!(requests[0].path, "/accounts/acct-1/ai/v1/chat/completions");
    assert_eq!(requests[0].header("authorization"), Some("Bearer cf-key"));
}
