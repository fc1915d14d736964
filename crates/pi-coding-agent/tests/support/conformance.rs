//! The conformance harness in Rust: the shared `conformance/` scenarios (vendored under
//! `tests/data/conformance/`) run against the `pi` binary with the test kit's replay server,
//! normalized exactly as `conformance/README.md` rules 1–11 (a port of `run_pi.py`), and
//! compared with the goldens of the TypeScript pi 0.85.0 (`expected/`).

#![allow(dead_code)]

pub(crate) mod diff;
pub(crate) mod normalize;
pub(crate) mod pyjson;
pub(crate) mod run;

use std::path::{Path, PathBuf};

pub(crate) use normalize::{ARTIFACTS, RawRun, normalize};

/// `tests/data/conformance`.
pub(crate) fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance")
}

/// Every vendored scenario name, sorted.
pub(crate) fn scenario_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(data_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("script.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The goldens of a scenario (`expected/<artifact>` files that exist).
pub(crate) fn read_expected(name: &str) -> Vec<(&'static str, String)> {
    let dir = data_dir().join(name).join("expected");
    ARTIFACTS
        .iter()
        .filter_map(|a| std::fs::read_to_string(dir.join(a)).ok().map(|t| (*a, t)))
        .collect()
}

/// The raw TypeScript run kept beside the goldens (`raw.json`, see `make_raw.py`).
pub(crate) fn read_raw(name: &str) -> RawRun {
    let text = std::fs::read_to_string(data_dir().join(name).join("raw.json")).unwrap();
    RawRun::from_json(&serde_json::from_str(&text).unwrap())
}

/// Runs `pi` on a scenario and returns the diff against its goldens (`""` when equal).
pub(crate) async fn check_scenario(name: &str, pi: &Path) -> String {
    let raw = run::run_scenario(&data_dir().join(name), pi).await;
    diff::diff_artifacts(&read_expected(name), &normalize(&raw), "expected", "actual")
}
