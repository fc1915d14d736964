//! Every RPC command against the session.
//!
//! Mirrors pi-coding-agent 0.85.0 `modes/rpc/rpc-mode.js` `handleCommand`, with
//! the data shapes of `rpc-types.d.ts`. Where the session has no such operation, it is
//! composed here from the session's public API (queue modes, model and thinking cycling,
//! fork messages, entries, tree). A thrown error becomes `{success:false, error:<message>}`.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use pi_agent_core::AgentMessage;
use pi_ai::{Model, ModelThinkingLevel};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::commands::{RpcCommand, error_response, success_response};
use super::server::Shared;
use crate::extensions::command_info::{CommandInfo, command_infos};
use crate::extensions::events::UserBashEvent;
use crate::session::queues::content_text;
use crate::session::{AgentSession, ExecuteBashOptions, InputSource, PromptOptions};
use crate::storage::{ForkPosition, SessionStore, TreeNode};

/// What a command answers.
enum Reply {
    /// `success:true` with this data (JSON text), or none.
    Data(Option<String>),
    /// The response was (or will be) written elsewhere (`prompt`).
    Deferred,
}

/// Why a command failed; the text is the `error` of its `success:false` response.
#[derive(Debug, thiserror::Error)]
enum CommandError {
    /// The runtime was started without the piece this command needs (no session host, …).
    #[error("{0} is not available in this pi-rs runtime")]
    Unavailable(&'static str),
    /// `clone` on a session with no current entry.
    #[error("Cannot clone session: no current entry selected")]
    NoEntryToClone,
    /// `set_model` for a model that is not available.
    #[error("Model not found: {provider}/{model_id}")]
    ModelNotFound { provider: String, model_id: String },
    /// `set_thinking_level` with an unknown level.
    #[error("Invalid thinking level: {0}")]
    InvalidThinkingLevel(String),
    /// `get_messages_since` for an entry the session does not have.
    #[error("Entry not found: {0}")]
    EntryNotFound(String),
    /// `set_session_name` with an empty (or blank) name.
    #[error("Session name cannot be empty")]
    EmptySessionName,
    /// The session host could not replace the session (its text, e.g. `Invalid entry ID
    /// for forking`).
    #[error(transparent)]
    Host(#[from] crate::runtime::HostError),
    /// `compact` failed (`Already compacted`, `Summarization failed: …`, …).
    #[error(transparent)]
    Compaction(#[from] crate::compaction::CompactionError),
    /// A value that could not be written as JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A failure of the session or its host, which report text; shown as it is.
    #[error("{0}")]
    Failed(String),
}

/// The session and host layers still report failures as text: it passes through unchanged.
impl From<String> for CommandError {
    fn from(text: String) -> Self {
        CommandError::Failed(text)
    }
}

type Outcome = Result<Reply, CommandError>;

fn json_text<T: Serialize + ?Sized>(v: &T) -> Result<String, CommandError> {
    Ok(pi_ai::json::to_string(v)?)
}

fn data<T: Serialize + ?Sized>(v: &T) -> Outcome {
    Ok(Reply::Data(Some(json_text(v)?)))
}

fn done() -> Outcome {
    Ok(Reply::Data(None))
}

fn missing(what: &'static str) -> CommandError {
    CommandError::Unavailable(what)
}

/// Runs one command and writes its response (`prompt` writes its own).
pub(crate) async fn handle(
    shared: &Arc<Shared>,
    id: Option<Value>,
    name: String,
    command: RpcCommand,
) {
    match run(shared, &id, command).await {
        Ok(Reply::Data(d)) => shared
            .out
            .send(success_response(id.as_ref(), &name, d.as_deref())),
        Ok(Reply::Deferred) => {}
        Err(e) => shared.out.send(error_response(
            id.as_ref(),
            Some(&Value::from(name)),
            &e.to_string(),
        )),
    }
    shared.shutdown.check();
}

fn store_of(session: &AgentSession) -> std::sync::MutexGuard<'_, SessionStore> {
    crate::sync::lock(session.store())
}

fn available_models(shared: &Shared, session: &AgentSession) -> Vec<Model> {
    match &shared.runtime.models {
        Some(source) => source(),
        None => session.model().into_iter().collect(),
    }
}

async fn run(shared: &Arc<Shared>, id: &Option<Value>, command: RpcCommand) -> Outcome {
    let session = shared.session();
    match command {
        RpcCommand::Prompt {
            message,
            images,
            streaming_behavior,
        } => {
            let accepted = Arc::new(AtomicBool::new(false));
            let (flag, out, rid) = (Arc::clone(&accepted), shared.out.clone(), id.clone());
            let options = PromptOptions {
                images,
                streaming_behavior,
                source: InputSource::Rpc,
                preflight_result: Some(Box::new(move |ok| {
                    if ok {
                        flag.store(true, Ordering::SeqCst);
                        out.send(success_response(rid.as_ref(), "prompt", None));
                    }
                })),
                ..Default::default()
            };
            match session.prompt(message, options).await {
                Err(e) if !accepted.load(Ordering::SeqCst) => Err(e.to_string().into()),
                _ => Ok(Reply::Deferred),
            }
        }
        RpcCommand::Steer { message, images } => {
            session.steer(&message, images).map_err(|e| e.to_string())?;
            done()
        }
        RpcCommand::FollowUp { message, images } => {
            session
                .follow_up(&message, images)
                .map_err(|e| e.to_string())?;
            done()
        }
        RpcCommand::Abort => {
            session.abort().await;
            done()
        }
        RpcCommand::ClearQueue => {
            let (steering, follow_up) = session.clear_queue().map_err(|e| e.to_string())?;
            data(&json!({"steering": steering, "followUp": follow_up}))
        }
        RpcCommand::NewSession { parent_session } => {
            let host = shared
                .runtime
                .host
                .clone()
                .ok_or_else(|| missing("new_session"))?;
            let next = host.new_session(session, parent_session).await?;
            replaced(shared, next)
        }
        RpcCommand::SwitchSession { session_path } => {
            let host = shared
                .runtime
                .host
                .clone()
                .ok_or_else(|| missing("switch_session"))?;
            let next = host
                .switch_session(session, resolve_session_path(&session_path))
                .await?;
            replaced(shared, next)
        }
        RpcCommand::Fork { entry_id } => {
            let host = shared.runtime.host.clone().ok_or_else(|| missing("fork"))?;
            let (next, text) = host.fork(session, entry_id, ForkPosition::Before).await?;
            match next {
                Some(next) => {
                    shared.rebind(next);
                    data(&json!({"text": text, "cancelled": false}))
                }
                // pi: `{text: undefined, cancelled: true}` → the key is omitted.
                None => data(&json!({"cancelled": true})),
            }
        }
        RpcCommand::Clone => {
            let Some(leaf) = session.leaf_id() else {
                return Err(CommandError::NoEntryToClone);
            };
            let host = shared
                .runtime
                .host
                .clone()
                .ok_or_else(|| missing("clone"))?;
            let (next, _) = host.fork(session, leaf, ForkPosition::At).await?;
            replaced(shared, next)
        }
        RpcCommand::GetState => data(&Value::Object(state(&session))),
        RpcCommand::SetModel { provider, model_id } => {
            let model = available_models(shared, &session)
                .into_iter()
                .find(|m| m.provider == provider && m.id == model_id)
                .ok_or_else(|| CommandError::ModelNotFound {
                    provider: provider.clone(),
                    model_id: model_id.clone(),
                })?;
            session
                .set_model(model.clone(), false)
                .await
                .map_err(|e| e.to_string())?;
            data(&model)
        }
        RpcCommand::CycleModel => {
            let models = available_models(shared, &session);
            let result = session
                .cycle_model(true, &models, false)
                .await
                .map_err(|e| e.to_string())?;
            match result {
                Some(r) => data(&r),
                None => data(&Value::Null),
            }
        }
        RpcCommand::GetAvailableModels => {
            data(&json!({"models": available_models(shared, &session)}))
        }
        RpcCommand::SetThinkingLevel { level } => {
            let level = ModelThinkingLevel::parse(&level)
                .ok_or_else(|| CommandError::InvalidThinkingLevel(level.clone()))?;
            session
                .set_thinking_level(level)
                .map_err(|e| e.to_string())?;
            done()
        }
        RpcCommand::CycleThinkingLevel => {
            match session.cycle_thinking_level().map_err(|e| e.to_string())? {
                Some(level) => data(&json!({ "level": level })),
                None => data(&Value::Null),
            }
        }
        RpcCommand::GetAvailableThinkingLevels => {
            data(&json!({"levels": session.available_thinking_levels()}))
        }
        RpcCommand::SetSteeringMode { mode } => {
            session.set_steering_mode(mode);
            done()
        }
        RpcCommand::SetFollowUpMode { mode } => {
            session.set_follow_up_mode(mode);
            done()
        }
        RpcCommand::Compact {
            custom_instructions,
        } => data(&session.compact(custom_instructions).await?),
        RpcCommand::SetAutoCompaction { enabled } => {
            session.set_auto_compaction_enabled(enabled);
            done()
        }
        RpcCommand::SetAutoRetry { enabled } => {
            session.set_auto_retry_enabled(enabled);
            done()
        }
        RpcCommand::AbortRetry => {
            session.abort_retry();
            done()
        }
        RpcCommand::Bash {
            command,
            exclude_from_context,
        } => bash(shared, &session, id, command, exclude_from_context).await,
        RpcCommand::AbortBash => {
            session.abort_bash();
            done()
        }
        RpcCommand::GetSessionStats => {
            let stats = session.session_stats().map_err(|e| e.to_string())?;
            data(&stats)
        }
        RpcCommand::ExportHtml { output_path } => {
            let extras = session.html_extras();
            let store = store_of(&session);
            let path = crate::storage::export::export_html(
                &store,
                output_path.as_deref().map(Path::new),
                &extras,
            )
            .map_err(|e| e.to_string())?;
            data(&json!({"path": path.display().to_string()}))
        }
        RpcCommand::GetForkMessages => {
            let store = store_of(&session);
            let entries = store.entries().map_err(|e| e.to_string())?;
            let messages: Vec<Value> = entries
                .iter()
                .filter_map(|e| match e.message()? {
                    AgentMessage::User(u) => {
                        let text = content_text(&u.content);
                        (!text.is_empty()).then(|| json!({"entryId": e.id, "text": text}))
                    }
                    _ => None,
                })
                .collect();
            data(&json!({ "messages": messages }))
        }
        RpcCommand::GetEntries { since } => {
            let store = store_of(&session);
            let entries = store.entries().map_err(|e| e.to_string())?;
            let start = match &since {
                None => 0,
                Some(since) => {
                    entries
                        .iter()
                        .position(|e| &e.id == since)
                        .ok_or_else(|| CommandError::EntryNotFound(since.clone()))?
                        + 1
                }
            };
            let mut text = String::from("{\"entries\":[");
            for (i, e) in entries[start..].iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                text.push_str(&e.to_line());
            }
            text.push_str("],\"leafId\":");
            text.push_str(&json_text(&store.leaf_id())?);
            text.push('}');
            Ok(Reply::Data(Some(text)))
        }
        RpcCommand::GetTree => {
            let store = store_of(&session);
            let tree = crate::storage::get_tree(&store).map_err(|e| e.to_string())?;
            let mut text = String::from("{\"tree\":");
            tree_json(&tree, &mut text)?;
            text.push_str(",\"leafId\":");
            text.push_str(&json_text(&store.leaf_id())?);
            text.push('}');
            Ok(Reply::Data(Some(text)))
        }
        RpcCommand::GetLastAssistantText => {
            let mut m = Map::new();
            if let Some(t) = session.last_assistant_text() {
                m.insert("text".into(), t.into());
            }
            data(&Value::Object(m))
        }
        RpcCommand::SetSessionName { name } => {
            let name = name.trim();
            if name.is_empty() {
                return Err(CommandError::EmptySessionName);
            }
            session.set_session_name(name).map_err(|e| e.to_string())?;
            done()
        }
        RpcCommand::GetMessages => data(&json!({"messages": session.messages()})),
        RpcCommand::GetCommands => data(&json!({"commands": commands(shared)})),
    }
}

fn replaced(shared: &Arc<Shared>, next: Option<AgentSession>) -> Outcome {
    let cancelled = next.is_none();
    if let Some(next) = next {
        shared.rebind(next);
    }
    data(&json!({ "cancelled": cancelled }))
}

/// `get_state` → `{model?, thinkingLevel, isStreaming, isCompacting, steeringMode,
/// followUpMode, sessionFile?, sessionId, sessionName?, autoCompactionEnabled, messageCount,
/// pendingMessageCount}`.
fn state(session: &AgentSession) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(model) = session.model() {
        m.insert(
            "model".into(),
            serde_json::to_value(model).unwrap_or(Value::Null),
        );
    }
    m.insert(
        "thinkingLevel".into(),
        session.thinking_level().as_str().into(),
    );
    m.insert("isStreaming".into(), session.is_streaming().into());
    m.insert("isCompacting".into(), session.is_compacting().into());
    m.insert(
        "steeringMode".into(),
        session.steering_mode().as_str().into(),
    );
    m.insert(
        "followUpMode".into(),
        session.follow_up_mode().as_str().into(),
    );
    if let Some(f) = session.session_file() {
        m.insert("sessionFile".into(), f.display().to_string().into());
    }
    m.insert("sessionId".into(), session.session_id().into());
    if let Some(n) = session.session_name() {
        m.insert("sessionName".into(), n.into());
    }
    m.insert(
        "autoCompactionEnabled".into(),
        session.auto_compaction_enabled().into(),
    );
    m.insert("messageCount".into(), session.message_count().into());
    m.insert(
        "pendingMessageCount".into(),
        session.pending_message_count().into(),
    );
    m
}

/// RPC `bash`: `user_bash` handlers first (a `{result}` is recorded as if run), else the
/// session runs it with `bash_execution_update {id}` per chunk.
async fn bash(
    shared: &Arc<Shared>,
    session: &AgentSession,
    id: &Option<Value>,
    command: String,
    exclude_from_context: Option<bool>,
) -> Outcome {
    if let Some(ext) = &shared.extensions() {
        let cwd = store_of(session).header().cwd.clone();
        let handled = ext
            .runner()
            .emit_user_bash(UserBashEvent {
                command: command.clone(),
                exclude_from_context: exclude_from_context.unwrap_or(false),
                cwd,
            })
            .await;
        if let Some(r) = handled {
            session
                .record_bash_result(&command, &r.result, exclude_from_context)
                .map_err(|e| e.to_string())?;
            return data(&r.result);
        }
    }
    let rid = id.as_ref().map(|v| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let result = session
        .execute_bash(
            &command,
            ExecuteBashOptions {
                exclude_from_context,
                id: rid,
            },
            |_| {},
        )
        .await
        .map_err(|e| e.to_string())?;
    data(&result)
}

/// `get_commands`: extension commands, prompt templates, skills (`{name, description?,
/// source, sourceInfo}`; pi-rs's `sourceInfo` carries only `path`).
fn commands(shared: &Shared) -> Vec<Value> {
    let extensions = shared.extensions();
    command_infos(
        extensions.as_ref().map(|e| e.runner()),
        &shared.runtime.templates,
        &shared.runtime.skills,
    )
    .iter()
    .map(CommandInfo::to_json)
    .collect()
}

/// Writes `[{entry, children:[…], label?}, …]` without recursion (session chains can be far
/// deeper than the stack).
fn tree_json(roots: &[TreeNode], out: &mut String) -> Result<(), CommandError> {
    struct Frame<'a> {
        children: std::slice::Iter<'a, TreeNode>,
        first: bool,
        label: Option<&'a str>,
    }
    out.push('[');
    let mut stack = vec![Frame {
        children: roots.iter(),
        first: true,
        label: None,
    }];
    while let Some(top) = stack.last_mut() {
        match top.children.next() {
            Some(node) => {
                if !top.first {
                    out.push(',');
                }
                top.first = false;
                out.push_str("{\"entry\":");
                out.push_str(&node.entry.to_line());
                out.push_str(",\"children\":[");
                stack.push(Frame {
                    children: node.children.iter(),
                    first: true,
                    label: node.label.as_deref(),
                });
            }
            None => {
                let label = top.label;
                stack.pop();
                out.push(']');
                if !stack.is_empty() {
                    if let Some(l) = label {
                        out.push_str(",\"label\":");
                        out.push_str(&json_text(l)?);
                    }
                    out.push('}');
                }
            }
        }
    }
    Ok(())
}

/// pi's `SessionManager.open` reads `resolvePath(path)`: `~` expanded, then resolved against
/// the process's working directory with `.`, `..` and a trailing slash folded.
fn resolve_session_path(path: &str) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    crate::platform::lexical_path::lexical_normalize(&crate::config::agent_paths::resolve_path(
        path, &cwd,
    ))
    .display()
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `error` texts of failed commands, as the RPC client reads them.
    #[test]
    fn command_errors_read_as_before() {
        assert_eq!(
            missing("fork").to_string(),
            "fork is not available in this pi-rs runtime"
        );
        assert_eq!(
            CommandError::NoEntryToClone.to_string(),
            "Cannot clone session: no current entry selected"
        );
        assert_eq!(
            CommandError::ModelNotFound {
                provider: "p".into(),
                model_id: "m".into()
            }
            .to_string(),
            "Model not found: p/m"
        );
        assert_eq!(
            CommandError::from("Already compacted".to_owned()).to_string(),
            "Already compacted"
        );
    }
}
