//! The start model of a new session with a `--models` scope, through the `pi` binary (pi 0.85.0
//! `buildSessionOptions`): the saved default (`defaultProvider`/`defaultModel`) when it is in
//! the scope, else the first scoped model.

use crate::support;

use pi_ai::testkit::ReplayServer;
use serde_json::json;
use support::anthropic_sse::anthropic_text;
use support::binary_rig::Rig;

const SCOPE: &str = "replay-openai/replay-model,replay-anthropic/replay-model";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_saved_default_in_the_scope_is_the_start_model() {
    let (_, server) = ReplayServer::start(vec![anthropic_text("From the default.")])
        .await
        .unwrap();
    let settings = json!({"retry": {"enabled": false},
        "defaultProvider": "replay-anthropic", "defaultModel": "replay-model"});
    let rig = Rig::new(&server.base_url(), &settings);
    let run = rig
        .run(&["--no-session", "--models", SCOPE, "-p", "hi"])
        .await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "From the default.\n"),
        "{run:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].path, "/v1/messages",
        "the Anthropic provider was asked"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_saved_default_in_the_scope_the_first_scoped_model_starts() {
    let (_, server) = ReplayServer::start(vec![anthropic_text("From the first.")])
        .await
        .unwrap();
    // The saved default exists but is outside the scope.
    let settings = json!({"retry": {"enabled": false},
        "defaultProvider": "replay-openai", "defaultModel": "replay-model"});
    let rig = Rig::new(&server.base_url(), &settings);
    let scope = "replay-anthropic/replay-model,replay-google/replay-model";
    let run = rig
        .run(&["--no-session", "--models", scope, "-p", "hi"])
        .await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "From the first.\n"),
        "{run:?}"
    );
    assert_eq!(server.requests()[0].path, "/v1/messages");
}
