//! `pi --export <session.jsonl> [output.html]`.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/export-html/index.js` (`exportFromFile`): the input
//! resolves against the working directory (`~` expanded); a missing input is
//! `File not found: <abs>` (a directory: the store's `EISDIR: illegal operation on a
//! directory, read`); the default output is `pi-session-<input name without .jsonl>.html`
//! relative to the working directory, printed as `Exported to: <output>` as given.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::config::agent_paths::{expand_tilde, resolve_path};
use crate::platform::lexical_path::lexical_normalize;
use crate::storage::export::{HtmlExtras, export_html};
use crate::storage::{SessionStore, StoreError};

/// Why `--export` wrote nothing; the text is what follows `Error: `.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportError {
    /// The input does not exist (its absolute path).
    #[error("File not found: {}", .0.display())]
    NotFound(PathBuf),
    /// The input cannot be read as a session, or the HTML cannot be written.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The output's directory does not exist (the output as given: Node's `writeFileSync`
    /// message).
    #[error("ENOENT: no such file or directory, open '{}'", .0.display())]
    NoOutputDir(PathBuf),
}

/// Exports `input` as HTML and returns the output path as pi prints it.
pub(crate) fn export_from_file(
    input: &str,
    output: Option<&str>,
    cwd: &Path,
) -> Result<PathBuf, ExportError> {
    let resolved = lexical_normalize(&resolve_path(input, cwd));
    if !resolved.exists() {
        return Err(ExportError::NotFound(resolved));
    }
    let store = SessionStore::open(&resolved, &cwd.to_string_lossy())?;
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
        return Err(ExportError::NoOutputDir(output));
    }
    export_html(&store, Some(&target), &HtmlExtras::default())?;
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
