//! Exporting a session: JSONL (the current branch, re-chained) and one self-contained HTML page.
//!
//! Mirrors pi-coding-agent 0.85.0 `session-export` and `export-html`: default names
//! `session-<ISO time with : and . as ->.jsonl` and `pi-session-<file stem>.html` in the
//! process's working directory. The HTML page embeds everything (no network assets) and shows
//! every message, thinking block, tool call and tool result of the session.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantContent, UserContent};
use serde_json::Value;

use super::context::path_to_leaf;
use super::entry::{EntryKind, SessionEntry, SessionHeader};
use super::paths::iso_now;
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

fn pretty(v: &Value) -> String {
    pi_ai::json::to_string_pretty(v).unwrap_or_default()
}

fn user_blocks(html: &mut String, blocks: &[UserContent]) {
    for b in blocks {
        match b {
            UserContent::Text(t) => {
                let _ = write!(html, "<pre class=\"text\">{}</pre>", esc(&t.text));
            }
            UserContent::Image(i) => {
                let _ = write!(
                    html,
                    "<img alt=\"image\" src=\"data:{};base64,{}\">",
                    esc(&i.mime_type),
                    esc(&i.data)
                );
            }
        }
    }
}

fn message_html(html: &mut String, m: &AgentMessage) {
    match m {
        AgentMessage::User(u) => {
            html.push_str("<section class=\"msg user\"><h3>User</h3>");
            user_blocks(html, &u.content.to_blocks());
            html.push_str("</section>");
        }
        AgentMessage::Assistant(a) => {
            let _ = write!(
                html,
                "<section class=\"msg assistant\"><h3>Assistant <small>{}/{} · {}</small></h3>",
                esc(&a.provider),
                esc(&a.model),
                esc(a.stop_reason.as_str())
            );
            for c in &a.content {
                match c {
                    AssistantContent::Text(t) => {
                        let _ = write!(html, "<pre class=\"text\">{}</pre>", esc(&t.text));
                    }
                    AssistantContent::Thinking(t) => {
                        let _ = write!(
                            html,
                            "<details class=\"thinking\" open><summary>Thinking</summary><pre>{}</pre></details>",
                            esc(&t.thinking)
                        );
                    }
                    AssistantContent::ToolCall(tc) => {
                        let _ = write!(
                            html,
                            "<div class=\"toolcall\"><b>{}</b> <code>{}</code><pre>{}</pre></div>",
                            esc(&tc.name),
                            esc(&tc.id),
                            esc(&pretty(&Value::Object(tc.arguments.clone())))
                        );
                    }
                }
            }
            if let Some(e) = &a.error_message {
                let _ = write!(html, "<pre class=\"error\">{}</pre>", esc(e));
            }
            html.push_str("</section>");
        }
        AgentMessage::ToolResult(r) => {
            let _ = write!(
                html,
                "<section class=\"msg toolresult{}\"><h3>Tool result <small>{} · {}</small></h3>",
                if r.is_error { " error" } else { "" },
                esc(&r.tool_name),
                esc(&r.tool_call_id)
            );
            user_blocks(html, &r.content);
            html.push_str("</section>");
        }
        AgentMessage::Custom(map) => {
            let role = map.get("role").and_then(Value::as_str).unwrap_or("custom");
            let _ = write!(
                html,
                "<section class=\"msg custom\"><h3>{}</h3><pre>{}</pre></section>",
                esc(role),
                esc(&pretty(&Value::Object((**map).clone())))
            );
        }
    }
}

/// Renders every entry of the session (all branches, file order) as one HTML page.
pub fn render_html(store: &SessionStore) -> Result<String, StoreError> {
    let h = store.header();
    let mut html = String::with_capacity(16 * 1024);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>pi session {}</title><style>{}</style></head><body><header><h1>pi session</h1><p>id <code>{}</code> · cwd <code>{}</code> · {}</p></header><main>",
        esc(&h.id),
        STYLE,
        esc(&h.id),
        esc(&h.cwd),
        esc(&h.timestamp)
    );
    for e in store.entries()? {
        match &e.kind {
            EntryKind::Message { message } => message_html(&mut html, message),
            EntryKind::Compaction { summary, .. } => {
                let _ = write!(
                    html,
                    "<section class=\"msg summary\"><h3>Compaction summary</h3><pre>{}</pre></section>",
                    esc(summary)
                );
            }
            EntryKind::BranchSummary { summary, .. } => {
                let _ = write!(
                    html,
                    "<section class=\"msg summary\"><h3>Branch summary</h3><pre>{}</pre></section>",
                    esc(summary)
                );
            }
            EntryKind::CustomMessage {
                custom_type,
                content,
                ..
            } => {
                let text = match content {
                    Value::String(s) => s.clone(),
                    other => pretty(other),
                };
                let _ = write!(
                    html,
                    "<section class=\"msg custom\"><h3>{}</h3><pre>{}</pre></section>",
                    esc(custom_type),
                    esc(&text)
                );
            }
            EntryKind::ModelChange { provider, model_id } => {
                let _ = write!(
                    html,
                    "<p class=\"meta\">model → {}/{}</p>",
                    esc(provider),
                    esc(model_id)
                );
            }
            EntryKind::ThinkingLevelChange { thinking_level } => {
                let _ = write!(
                    html,
                    "<p class=\"meta\">thinking → {}</p>",
                    esc(thinking_level)
                );
            }
            _ => {}
        }
    }
    html.push_str("</main></body></html>\n");
    Ok(html)
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;background:#fafafa;color:#222}pre{white-space:pre-wrap;word-break:break-word;margin:.3rem 0}.msg{border:1px solid #ddd;border-radius:6px;padding:.5rem 1rem;margin:.8rem 0;background:#fff}.user{border-left:4px solid #36c}.assistant{border-left:4px solid #3a3}.toolresult{border-left:4px solid #999}.error{color:#b00}.thinking{color:#666}.meta{color:#888;font-size:.85em}img{max-width:100%}";

/// Writes the HTML export; default `pi-session-<file stem>.html` in the working directory.
/// Returns the path as pi reports it: `output` as given, else the default's relative name.
///
/// Errors (mirrors pi 0.85.0 `exportSessionToHtml`): [`StoreError::InMemoryExport`] for an
/// in-memory store, [`StoreError::NothingToExport`] while the session file is not on disk yet
/// (before the first assistant message); I/O errors are Node's (`ENOENT: no such file or
/// directory, open '<output as given>'`).
pub fn export_html(store: &SessionStore, output: Option<&Path>) -> Result<PathBuf, StoreError> {
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
    let html = render_html(store)?;
    // pi's writeFileSync: a failed open names the path as given, a failed write no path.
    let mut file = std::fs::File::create(&path)
        .map_err(|e| StoreError::Fs(node_message(&e, "open", Some(&shown))))?;
    file.write_all(html.as_bytes())
        .map_err(|e| StoreError::Fs(node_message(&e, "write", None)))?;
    Ok(shown)
}
