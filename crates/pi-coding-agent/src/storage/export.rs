//! Exporting a session: JSONL (the current branch, re-chained) and one self-contained HTML page.
//!
//! Mirrors pi-coding-agent 0.85.0 `session-export` and `export-html`: default names
//! `session-<ISO time with : and . as ->.jsonl` and `pi-session-<file stem>.html` in the
//! process's working directory. The HTML page is our own viewer (not pi's template): it embeds
//! everything (no network assets) and shows every entry of the session's tree.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::context::path_to_leaf;
use super::entry::{SessionEntry, SessionHeader};
use super::session_paths::iso_now;
use super::store::{SessionStore, StoreError};
use crate::platform::fs_error::node_message;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

fn resolve_output(output: Option<&Path>, default_name: String) -> PathBuf {
    match output {
        Some(p) => p.to_owned(),
        None => std::env::current_dir()
            .unwrap_or_default()
            .join(default_name),
    }
}

/// Writes the current branch as a new JSONL file: a header with the same id and cwd and a new
/// timestamp, then the branch's entries with their parents re-chained linearly. Returns the
/// path written.
pub fn export_jsonl(store: &SessionStore, output: Option<&Path>) -> Result<PathBuf, StoreError> {
    let ts = iso_now();
    let default = format!("session-{}.jsonl", ts.replace([':', '.'], "-"));
    let path = resolve_output(output, default);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let header = SessionHeader {
        version: super::entry::SESSION_VERSION,
        id: store.session_id().to_owned(),
        timestamp: ts,
        cwd: store.header().cwd.clone(),
        parent_session: None,
        extra: Default::default(),
    };
    let mut out = pi_ai::json::to_string(&header).unwrap_or_default();
    out.push('\n');
    let mut parent: Option<String> = None;
    for i in path_to_leaf(store) {
        let mut e: SessionEntry = (*store.entry_at(i)?).clone();
        e.parent_id = parent.take();
        parent = Some(e.id.clone());
        out.push_str(&e.to_line());
        out.push('\n');
    }
    std::fs::write(&path, out).map_err(io(&path))?;
    Ok(path)
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// What a live session adds to the file's entries in the viewer, as pi's `/export` passes the
/// agent's system prompt and tools (`--export` of a file has neither).
#[derive(Clone, Debug, Default)]
pub struct HtmlExtras {
    /// The effective system prompt.
    pub system_prompt: Option<String>,
    /// The active tools: name, description and JSON-Schema parameters.
    pub tools: Vec<ExportedTool>,
}

/// One tool as the viewer lists it (pi's `{name, description, parameters}`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct ExportedTool {
    /// Tool name.
    pub name: String,
    /// Tool description.
    pub description: String,
    /// JSON Schema of the parameters.
    pub parameters: Value,
}

const VIEWER_JS: &str = include_str!("export/viewer.js");
const VIEWER_CSS: &str = include_str!("export/viewer.css");

/// The session as the viewer reads it: `{"header", "entries", "leafId", "systemPrompt",
/// "tools"}` (pi's session data, with the entries exactly as their lines in the file). Every
/// `<` is written `\u003c`, which JSON reads back unchanged, so no text of the session can end
/// the `<script>` element that holds it.
fn session_data(store: &SessionStore, extras: &HtmlExtras) -> Result<String, StoreError> {
    let mut data = String::with_capacity(16 * 1024);
    data.push_str("{\"header\":");
    data.push_str(&pi_ai::json::to_string(store.header()).unwrap_or_else(|_| "null".into()));
    data.push_str(",\"entries\":[");
    for (i, e) in store.entries()?.iter().enumerate() {
        if i > 0 {
            data.push(',');
        }
        data.push_str(&e.to_line());
    }
    data.push_str("],\"leafId\":");
    data.push_str(&pi_ai::json::to_string(&store.leaf_id()).unwrap_or_else(|_| "null".into()));
    data.push_str(",\"systemPrompt\":");
    data.push_str(&pi_ai::json::to_string(&extras.system_prompt).unwrap_or_else(|_| "null".into()));
    data.push_str(",\"tools\":");
    if extras.tools.is_empty() {
        data.push_str("null");
    } else {
        data.push_str(&pi_ai::json::to_string(&extras.tools).unwrap_or_else(|_| "null".into()));
    }
    data.push('}');
    Ok(data.replace('<', "\\u003c"))
}

/// Renders the session as one self-contained HTML page: the session's data, our viewer's
/// script and style, nothing fetched from the network. The viewer shows the tree of every
/// entry and one branch at a time (the current leaf first; `#leaf=<id>` in the URL picks
/// another), with search, thinking and tool-output toggles, images, the system prompt and tools.
pub fn render_html(store: &SessionStore, extras: &HtmlExtras) -> Result<String, StoreError> {
    let data = session_data(store, extras)?;
    let mut html = String::with_capacity(data.len() + VIEWER_JS.len() + VIEWER_CSS.len() + 1024);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"pi-rs {}\">\
         <title>pi session {}</title><style>{}</style></head>\n<body>\
         <div id=\"app\"><header id=\"top\"></header><nav id=\"tree\"></nav><main id=\"chat\"></main></div>\
         <noscript>This session viewer needs JavaScript.</noscript>\n\
         <script type=\"application/json\" id=\"pi-session-data\">{}</script>\n<script>{}</script>\n</body></html>\n",
        env!("CARGO_PKG_VERSION"),
        esc(store.session_id()),
        VIEWER_CSS,
        data,
        VIEWER_JS,
    );
    Ok(html)
}

/// Writes the HTML export; default `pi-session-<file stem>.html` in the working directory.
/// Returns the path as pi reports it: `output` as given, else the default's relative name.
///
/// Errors (mirrors pi 0.85.0 `exportSessionToHtml`): [`StoreError::InMemoryExport`] for an
/// in-memory store, [`StoreError::NothingToExport`] while the session file is not on disk yet
/// (before the first assistant message); I/O errors are Node's (`ENOENT: no such file or
/// directory, open '<output as given>'`).
pub fn export_html(
    store: &SessionStore,
    output: Option<&Path>,
    extras: &HtmlExtras,
) -> Result<PathBuf, StoreError> {
    let file = store.path().ok_or(StoreError::InMemoryExport)?;
    if !store.is_persisted() && !file.exists() {
        return Err(StoreError::NothingToExport);
    }
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| store.session_id().to_owned());
    let default_name = format!("pi-session-{stem}.html");
    let shown = output.map_or_else(|| PathBuf::from(&default_name), Path::to_path_buf);
    let path = resolve_output(output, default_name);
    let html = render_html(store, extras)?;
    // pi's writeFileSync: a failed open names the path as given, a failed write no path.
    let mut file = std::fs::File::create(&path)
        .map_err(|e| StoreError::Fs(node_message(&e, "open", Some(&shown))))?;
    file.write_all(html.as_bytes())
        .map_err(|e| StoreError::Fs(node_message(&e, "write", None)))?;
    Ok(shown)
}
