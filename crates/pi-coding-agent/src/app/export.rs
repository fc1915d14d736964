//! `pi --export <session.jsonl> [output.html]`.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/export-html/index.js` (`exportFromFile`): the input
//! resolves against the working directory (`~` expanded); a missing input is
//! `File not found: <abs>` (a directory: the store's `EISDIR: illegal operation on a
//! directory, read`); the default output is `pi-session-<input name without .jsonl>.html`
//! relative to the working directory, printed as `Exported to: <output>` as given.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::config::paths::{expand_tilde, resolve_path};
use crate::platform::path::lexical_normalize;
use crate::storage::SessionStore;
use crate::storage::export::{HtmlExtras, export_html};

/// Exports `input` as HTML and returns the output path as pi prints it; the error is the text
/// after `Error: `.
pub(crate) fn export_from_file(
    input: &str,
    output: Option<&str>,
    cwd: &Path,
) -> Result<PathBuf, String> {
    let resolved = lexical_normalize(&resolve_path(input, cwd));
    if !resolved.exists() {
        return Err(format!("File not found: {}", resolved.display()));
    }
    let store = SessionStore::open(&resolved, &cwd.to_string_lossy()).map_err(|e| e.to_string())?;
    let output = match output {
        Some(o) => expand_tilde(o),
        None => {
            let name = resolved
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
            PathBuf::from(format!("pi-session-{stem}.html"))
        }
    };
    let target = if output.is_absolute() {
        output.clone()
    } else {
        cwd.join(&output)
    };
    if target.parent().is_some_and(|dir| !dir.is_dir()) {
        // Node's writeFileSync message for a missing directory, with the path as given.
        return Err(format!(
            "ENOENT: no such file or directory, open '{}'",
            output.display()
        ));
    }
    export_html(&store, Some(&target), &HtmlExtras::default()).map_err(|e| e.to_string())?;
    Ok(output)
}

/// `--export`: exports and prints `Exported to: <output>` on stdout (exit 0), or `Error: …`
/// on stderr (exit 1).
pub(crate) fn run_export(
    input: &str,
    output: Option<&str>,
    cwd: &Path,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    match export_from_file(input, output, cwd) {
        Ok(path) => {
            let _ = writeln!(stdout, "Exported to: {}", path.display());
            0
        }
        Err(e) => {
            let _ = writeln!(stderr, "Error: {e}");
            1
        }
    }
}
