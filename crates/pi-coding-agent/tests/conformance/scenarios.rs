//! The conformance scenarios against our `pi` binary, compared with the TypeScript pi's
//! goldens (`tests/data/conformance/<scenario>/expected/`).
//!
//! Part of the default `cargo test`. `PI_CONFORMANCE_BIN=<path>` runs another binary instead
//! (the TypeScript reference, say, to check the harness itself).

use crate::support;

use std::path::Path;

use support::conformance::check_scenario;

async fn check(name: &str) {
    let bin = std::env::var_os("PI_CONFORMANCE_BIN").map_or_else(
        || Path::new(env!("CARGO_BIN_EXE_pi")).to_owned(),
        Into::into,
    );
    let diff = check_scenario(name, &bin).await;
    assert!(
        diff.is_empty(),
        "scenario {name} differs from the reference:\n{diff}"
    );
}

macro_rules! scenarios {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            check(stringify!($name)).await;
        }
    )*};
}

scenarios!(
    compaction_auto,
    retry_http_500,
    session_tool_read,
    stream_error_event,
    text_anthropic,
    text_google,
    text_mode_anthropic,
    text_openai_completions,
    text_openai_responses,
    thinking_anthropic,
    tool_bash,
    tool_edit,
    tool_invalid_args,
    tool_parallel_ls_read,
    tool_read,
);
