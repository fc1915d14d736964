//! The extension's requests to pi-rs: `pi.*` actions (queued for the session, as a Rust
//! extension's are) and `ctx.ui.*` (the mode's UI). Each request is served on its own task,
//! so the extension may ask while pi-rs waits for its answer to an event.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_ai::ModelThinkingLevel;
use serde_json::{Value, json};

use super::connection::Connection;
use super::tool::{RemoteTool, ToolSpec};
use crate::extensions::api::{DeliverAs, Pi, SendMessageOptions};
use crate::extensions::command_actions::NewSessionOptions;
use crate::extensions::context::{
    DialogOptions, ExtensionContext, NotifyLevel, WidgetPlacement, WorkingIndicator,
};
use crate::extensions::events::{CustomMessageSpec, StreamingBehavior};
use crate::extensions::exec::ExecOptions;
use crate::extensions::runner::ExtensionRunner;
use crate::session::NavigateTreeOptions;
use crate::storage::ForkPosition;
use crate::sync::lock;

/// JSON-RPC's `Method not found`.
const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC's `Invalid params`.
const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC's `Internal error`.
const INTERNAL: i64 = -32603;

type Answer = Result<Value, (i64, String)>;

/// The `pi` of the runner the extension is loaded into now (replaced on every load).
pub type PiSlot = Arc<Mutex<Option<Pi>>>;

/// The `ctx` of each of the extension's commands running now, innermost last.
pub type CommandSlot = Arc<Mutex<Vec<ExtensionContext>>>;

/// Serves request `id` on the connection's runtime.
pub fn serve(
    conn: Arc<Connection>,
    (pi, commands): (PiSlot, CommandSlot),
    id: Value,
    method: String,
    params: Value,
) {
    let Some(rt) = conn.runtime() else {
        conn.respond(
            id,
            Err((INTERNAL, "no runtime to serve requests".to_owned())),
        );
        return;
    };
    rt.spawn(async move {
        let current = lock(&pi).clone();
        let answer = match current {
            _ if method.starts_with("cmd.") => {
                let ctx = lock(&commands).last().cloned();
                handle_command_ctx(ctx, &method["cmd.".len()..], &params).await
            }
            Some(pi) if method == "pi.registerTool" => register_tool(&pi, &conn, &params),
            Some(pi) => handle(&pi, &method, &params).await,
            None => Err((INTERNAL, "extension not bound to a session yet".to_owned())),
        };
        conn.respond(id, answer);
    });
}

/// `pi.registerTool` after the handshake (`{tool}`, shaped as the handshake's tools): the
/// tool runs on this connection and joins the session's tools as pi's run-time registration
/// does.
fn register_tool(pi: &Pi, conn: &Arc<Connection>, p: &Value) -> Answer {
    let spec: ToolSpec = serde_json::from_value(p.get("tool").cloned().unwrap_or(Value::Null))
        .map_err(|e| invalid(&format!("tool: {e}")))?;
    pi.register_tool(Arc::new(RemoteTool::new(spec, Arc::clone(conn))))
        .map_err(stale)?;
    ok()
}

fn invalid(what: &str) -> (i64, String) {
    (INVALID_PARAMS, format!("invalid params: {what}"))
}

fn text(p: &Value, name: &str) -> Result<String, (i64, String)> {
    p.get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| invalid(&format!("\"{name}\" must be a string")))
}

fn opt_text(p: &Value, name: &str) -> Option<String> {
    p.get(name).and_then(Value::as_str).map(str::to_owned)
}

fn stale(e: impl std::fmt::Display) -> (i64, String) {
    (INTERNAL, e.to_string())
}

fn context(pi: &Pi) -> Option<ExtensionContext> {
    pi.runner
        .get()
        .and_then(ExtensionRunner::from_weak)
        .map(|r| r.context())
}

fn dialog(p: &Value) -> DialogOptions {
    DialogOptions {
        timeout_ms: p.get("timeout").and_then(Value::as_u64),
        signal: None,
    }
}

fn ok() -> Answer {
    Ok(Value::Null)
}

async fn handle(pi: &Pi, method: &str, p: &Value) -> Answer {
    if method == "$/ping" {
        return Ok(json!("pong"));
    }
    if let Some(ui_method) = method.strip_prefix("ctx.") {
        let ctx = context(pi).ok_or_else(|| (INTERNAL, "no runner".to_owned()))?;
        return handle_ctx(&ctx, ui_method, p).await;
    }
    match method {
        "pi.sendMessage" => {
            let m = p.get("message").ok_or_else(|| invalid("no message"))?;
            let message = CustomMessageSpec {
                custom_type: text(m, "customType")?,
                content: m.get("content").cloned().unwrap_or(json!("")),
                display: m.get("display").and_then(Value::as_bool).unwrap_or(true),
                details: m.get("details").filter(|d| !d.is_null()).cloned(),
            };
            let o = p.get("options").cloned().unwrap_or(Value::Null);
            let options = SendMessageOptions {
                trigger_turn: o.get("triggerTurn").and_then(Value::as_bool),
                deliver_as: match o.get("deliverAs").and_then(Value::as_str) {
                    Some("steer") => Some(DeliverAs::Steer),
                    Some("followUp") => Some(DeliverAs::FollowUp),
                    Some("nextTurn") => Some(DeliverAs::NextTurn),
                    _ => None,
                },
            };
            pi.send_message(message, options).map_err(stale)?;
            ok()
        }
        "pi.sendUserMessage" => {
            let content = match p.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(blocks)) => blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => return Err(invalid("\"content\" must be a string or blocks")),
            };
            let deliver = p
                .get("options")
                .and_then(|o| o.get("deliverAs"))
                .and_then(|d| serde_json::from_value::<StreamingBehavior>(d.clone()).ok());
            pi.send_user_message(content, Vec::new(), deliver)
                .map_err(stale)?;
            ok()
        }
        "pi.appendEntry" => {
            let data = p.get("data").filter(|d| !d.is_null()).cloned();
            pi.append_entry(text(p, "customType")?, data)
                .map_err(stale)?;
            ok()
        }
        "pi.setSessionName" => {
            pi.set_session_name(text(p, "name")?).map_err(stale)?;
            ok()
        }
        "pi.setLabel" => {
            pi.set_label(text(p, "entryId")?, opt_text(p, "label"))
                .map_err(stale)?;
            ok()
        }
        "pi.setActiveTools" => {
            let names = p
                .get("toolNames")
                .and_then(Value::as_array)
                .ok_or_else(|| invalid("\"toolNames\" must be an array"))?
                .iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect();
            pi.set_active_tools(names).map_err(stale)?;
            ok()
        }
        "pi.setModel" => {
            // pi's `setModel(model)` answers `false` for a model without auth; one that is
            // not available at all is the same answer.
            let found = pi
                .find_available_model(&text(p, "provider")?, &text(p, "id")?)
                .map_err(stale)?;
            match found {
                Some(model) => Ok(Value::Bool(pi.set_model(model).map_err(stale)?)),
                None => Ok(Value::Bool(false)),
            }
        }
        "pi.setThinkingLevel" => {
            let level = ModelThinkingLevel::parse(&text(p, "level")?)
                .ok_or_else(|| invalid("unknown thinking level"))?;
            pi.set_thinking_level(level).map_err(stale)?;
            ok()
        }
        "pi.exec" => {
            let command = text(p, "command")?;
            let args: Vec<String> = p
                .get("args")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let o = p.get("options").cloned().unwrap_or(Value::Null);
            let options = ExecOptions {
                signal: None,
                timeout: o
                    .get("timeout")
                    .and_then(Value::as_u64)
                    .map(Duration::from_millis),
                cwd: opt_text(&o, "cwd").map(std::path::PathBuf::from),
            };
            let r = pi.exec(&command, &args, options).await.map_err(stale)?;
            Ok(json!({"stdout": r.stdout, "stderr": r.stderr, "code": r.code, "killed": r.killed}))
        }
        "pi.events.emit" => {
            let data = p.get("data").cloned().unwrap_or(Value::Null);
            pi.events().emit(&text(p, "channel")?, &data);
            ok()
        }
        other => Err((METHOD_NOT_FOUND, format!("Method not found: {other}"))),
    }
}

/// A command `ctx`'s session actions (`cmd.<name>`), on the `ctx` of the innermost command
/// running now; outside a command, pi's error.
async fn handle_command_ctx(ctx: Option<ExtensionContext>, method: &str, p: &Value) -> Answer {
    let Some(ctx) = ctx else {
        return Err((
            INTERNAL,
            format!("ctx.{method}() is only available in command handlers"),
        ));
    };
    let failed = |e: crate::extensions::HandlerError| (INTERNAL, e.to_string());
    let outcome = match method {
        "waitForIdle" => {
            ctx.wait_for_idle().await.map_err(failed)?;
            return ok();
        }
        "newSession" => {
            let options = NewSessionOptions {
                parent_session: opt_text(p, "parentSession"),
            };
            ctx.new_session(options).await.map_err(failed)?
        }
        "fork" => {
            let position = match opt_text(p, "position").as_deref() {
                Some("at") => ForkPosition::At,
                Some("before") | None => ForkPosition::Before,
                Some(other) => return Err(invalid(&format!("unknown fork position {other:?}"))),
            };
            ctx.fork(text(p, "entryId")?, position)
                .await
                .map_err(failed)?
        }
        "navigateTree" => {
            let o = p.get("options").cloned().unwrap_or(Value::Null);
            let options = NavigateTreeOptions {
                summarize: o.get("summarize").and_then(Value::as_bool).unwrap_or(false),
                custom_instructions: opt_text(&o, "customInstructions"),
                replace_instructions: o.get("replaceInstructions").and_then(Value::as_bool),
                label: opt_text(&o, "label"),
            };
            ctx.navigate_tree(text(p, "targetId")?, options)
                .await
                .map_err(failed)?
        }
        "switchSession" => ctx
            .switch_session(text(p, "sessionPath")?)
            .await
            .map_err(failed)?,
        other => return Err((METHOD_NOT_FOUND, format!("Method not found: ctx.{other}"))),
    };
    Ok(json!({"cancelled": outcome.cancelled}))
}

async fn handle_ctx(ctx: &ExtensionContext, method: &str, p: &Value) -> Answer {
    let ui = ctx.ui();
    match method {
        "ui.notify" => {
            let level = match p.get("type").and_then(Value::as_str) {
                Some("warning") => NotifyLevel::Warning,
                Some("error") => NotifyLevel::Error,
                _ => NotifyLevel::Info,
            };
            ui.notify(&text(p, "message")?, level);
            ok()
        }
        "ui.confirm" => {
            let answer = ui
                .confirm_with(&text(p, "title")?, &text(p, "message")?, dialog(p))
                .await;
            Ok(Value::Bool(answer))
        }
        "ui.select" => {
            let options: Vec<String> = p
                .get("options")
                .and_then(Value::as_array)
                .ok_or_else(|| invalid("\"options\" must be an array"))?
                .iter()
                .filter_map(|o| o.as_str().map(str::to_owned))
                .collect();
            let answer = ui
                .select_with(&text(p, "title")?, &options, dialog(p))
                .await;
            Ok(answer.map_or(Value::Null, Value::String))
        }
        "ui.input" => {
            let placeholder = opt_text(p, "placeholder");
            let answer = ui
                .input_with(&text(p, "title")?, placeholder.as_deref(), dialog(p))
                .await;
            Ok(answer.map_or(Value::Null, Value::String))
        }
        "ui.editor" => {
            let prefill = opt_text(p, "prefill");
            let answer = ui.editor(&text(p, "title")?, prefill.as_deref()).await;
            Ok(answer.map_or(Value::Null, Value::String))
        }
        "ui.setStatus" => {
            ui.set_status(&text(p, "key")?, opt_text(p, "text").as_deref());
            ok()
        }
        "ui.setWidget" => {
            let lines: Option<Vec<String>> = p.get("lines").and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(|l| l.as_str().map(str::to_owned))
                    .collect()
            });
            let placement = opt_text(p, "placement").map(|n| WidgetPlacement::from_name(&n));
            ui.set_widget(&text(p, "key")?, lines.as_deref(), placement);
            ok()
        }
        "ui.setWorkingMessage" => {
            ui.set_working_message(opt_text(p, "message").as_deref());
            ok()
        }
        "ui.setWorkingIndicator" => {
            let frames: Option<Vec<String>> = p.get("frames").and_then(Value::as_array).map(|a| {
                a.iter()
                    .filter_map(|f| f.as_str().map(str::to_owned))
                    .collect()
            });
            let interval_ms = p.get("intervalMs").and_then(Value::as_u64);
            let indicator =
                (frames.is_some() || interval_ms.is_some()).then_some(WorkingIndicator {
                    frames,
                    interval_ms,
                });
            ui.set_working_indicator(indicator);
            ok()
        }
        // Component factories cannot cross the pipe: pi's RPC mode ignores them too, so an
        // extension that calls them anyway keeps the built-in header and footer.
        "ui.setHeader" | "ui.setFooter" => ok(),
        "ui.setTitle" => {
            ui.set_title(&text(p, "title")?);
            ok()
        }
        "ui.setEditorText" => {
            ui.set_editor_text(&text(p, "text")?);
            ok()
        }
        "abort" => {
            ctx.abort();
            ok()
        }
        "shutdown" => {
            ctx.shutdown();
            ok()
        }
        "compact" => {
            ctx.compact(opt_text(p, "customInstructions"));
            ok()
        }
        other => Err((METHOD_NOT_FOUND, format!("Method not found: ctx.{other}"))),
    }
}
