//! The layering rules: each library crate depends only on the layer below, and inside each
//! crate the top-level modules form layers ([`modules`]).

#[path = "layers/modules.rs"]
mod modules;

use std::process::Command;

use serde_json::Value;

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

fn normal_workspace_deps(meta: &Value, package: &str) -> Vec<String> {
    let pkg = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == package)
        .unwrap_or_else(|| panic!("package {package} is in the workspace"));
    let mut deps: Vec<String> = pkg["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"].is_null())
        .filter_map(|d| d["name"].as_str())
        .filter(|n| n.starts_with("pi-"))
        .map(str::to_owned)
        .collect();
    deps.sort();
    deps
}

#[test]
fn each_library_depends_only_on_the_layers_below() {
    let meta = metadata();
    assert_eq!(normal_workspace_deps(&meta, "pi-ai"), Vec::<String>::new());
    assert_eq!(normal_workspace_deps(&meta, "pi-agent-core"), vec!["pi-ai"]);
    assert_eq!(normal_workspace_deps(&meta, "pi-tui"), Vec::<String>::new());
    assert_eq!(
        normal_workspace_deps(&meta, "pi-coding-agent"),
        vec!["pi-agent-core", "pi-ai", "pi-tui"]
    );
}
