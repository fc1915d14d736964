//! The 25 recorded real provider streams (vendored by pi-ai) through our `pi` binary in json
//! mode, checked as `conformance/check_streams.py` does (see `support/streams.rs`).
//!
//! Part of the default `cargo test`; `PI_CONFORMANCE_BIN=<path>` runs another binary instead.

use crate::support;

use std::path::Path;

use support::streams::{check_stream, streams};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_streams_give_the_expected_messages() {
    let bin = std::env::var_os("PI_CONFORMANCE_BIN").map_or_else(
        || Path::new(env!("CARGO_BIN_EXE_pi")).to_owned(),
        Into::into,
    );
    let all = streams();
    assert_eq!(all.len(), 25);
    let mut failed = Vec::new();
    for (api, name, body, expected) in &all {
        let verdict = check_stream(&bin, body, expected).await;
        println!(
            "{} {api}/{name}",
            if verdict.is_ok() { "PASS" } else { "FAIL" }
        );
        if let Err(why) = verdict {
            failed.push(format!("{api}/{name}: {why}"));
        }
    }
    println!(
        "{} passed, {} failed",
        all.len() - failed.len(),
        failed.len()
    );
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
