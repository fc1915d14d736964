//! Where the workspace is, and how xtask runs cargo in it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root (the parent of `xtask/`).
pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The cargo target directory: `$CARGO_TARGET_DIR` (relative to the root when relative) or
/// `<root>/target`.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => root.join(d),
        None => root.join("target"),
    }
}

/// A `cargo` command for the builds and benches xtask starts.
///
/// `cargo xtask` runs under `cargo run`, which sets `CARGO_MANIFEST_DIR`, `CARGO_PKG_*` and
/// the like for xtask; inherited by a nested cargo they change the `rerun-if-env-changed`
/// inputs of build scripts (ring's watches `CARGO_MANIFEST_DIR` and `CARGO_PKG_NAME`), so
/// every run recompiled ring, rustls, reqwest and the workspace. They are removed here.
pub(crate) fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    for (key, _) in std::env::vars_os() {
        let Some(k) = key.to_str() else { continue };
        if k.starts_with("CARGO_PKG_")
            || k.starts_with("CARGO_MANIFEST_")
            || matches!(
                k,
                "CARGO_CRATE_NAME" | "CARGO_BIN_NAME" | "CARGO_PRIMARY_PACKAGE" | "OUT_DIR"
            )
        {
            cmd.env_remove(&key);
        }
    }
    cmd
}

/// `cargo build -p pi-coding-agent --bin pi`: the debug `pi`'s path.
///
/// Errors: the build failed or could not start.
pub(crate) fn build_debug_pi(root: &Path) -> Result<PathBuf, String> {
    eprintln!("== cargo build -p pi-coding-agent --bin pi");
    let status = cargo()
        .current_dir(root)
        .args(["build", "-p", "pi-coding-agent", "--bin", "pi"])
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build failed ({status})"));
    }
    Ok(target_dir(root).join("debug/pi"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_cargo_does_not_inherit_the_package_variables_of_cargo_run() {
        // This test runs under cargo, which sets CARGO_MANIFEST_DIR and CARGO_PKG_NAME.
        assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
        let cmd = cargo();
        let removed: Vec<String> = cmd
            .get_envs()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert!(
            removed.iter().any(|k| k == "CARGO_MANIFEST_DIR"),
            "{removed:?}"
        );
        assert!(removed.iter().any(|k| k == "CARGO_PKG_NAME"), "{removed:?}");
        assert!(
            !removed
                .iter()
                .any(|k| k == "CARGO_TARGET_DIR" || k == "CARGO_HOME")
        );
    }
}
