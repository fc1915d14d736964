//! An extension process as one more [`Extension`] of the runner: started and asked what it
//! registers once ([`RemoteExtension::start`]), then registered into every runner the run
//! builds, in load order with the Rust extensions. Each subscribed event becomes a handler
//! that forwards it and awaits the answer within the manifest's deadline; a missed deadline
//! or a dead process is the handler's error, which the runner turns into pi's fail-safe
//! outcome (a blocked `tool_call`, a skipped `input`/`context`/`before_*`, an
//! `extension_error` for observers).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::connection::{CallError, Connection};
use super::events::RemoteEvent;
use super::host_requests::{self, CommandSlot, PiSlot};
use super::manifest::Manifest;
use super::mirror::Mirror;
use super::tool::{RemoteTool, ToolSpec};
use crate::extensions::context::ExtensionContext;
use crate::extensions::errors::{HandlerError, Mode};
use crate::extensions::events as ev;
use crate::extensions::extension::{
    Extension, ExtensionApi, ExtensionLoadError, FlagType, FlagValue,
};
use crate::extensions::runner::ExtensionRunner;
use crate::sync::lock;

/// The protocol version this host speaks.
pub const PROTOCOL_VERSION: u64 = 1;

#[derive(Clone, Debug, Deserialize)]
struct CommandReg {
    name: String,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
struct ShortcutReg {
    key: String,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Clone, Debug, Deserialize)]
struct FlagReg {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    default: Option<Value>,
    #[serde(default)]
    description: Option<String>,
}

/// What the handshake registered.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Registration {
    protocol_version: u64,
    #[serde(default)]
    tools: Vec<ToolSpec>,
    #[serde(default)]
    commands: Vec<CommandReg>,
    #[serde(default)]
    flags: Vec<FlagReg>,
    #[serde(default)]
    shortcuts: Vec<ShortcutReg>,
    #[serde(default)]
    events: Vec<String>,
}

/// A started extension process and what it registered.
pub struct RemoteExtension {
    conn: Arc<Connection>,
    registration: Registration,
    pi: PiSlot,
    mirror: Arc<Mutex<Mirror>>,
    /// The `ctx` of each command running now, innermost last: what its `ctx.newSession`,
    /// `ctx.fork`, … requests act on.
    commands: CommandSlot,
}

impl std::fmt::Debug for RemoteExtension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteExtension")
            .field("path", &self.conn.path())
            .finish()
    }
}

fn call_error_text(path: &str, event: &str, e: CallError) -> String {
    match e {
        CallError::Remote(message) => message,
        CallError::Timeout(d) => format!(
            "Extension \"{path}\" did not answer {event} within {} ms",
            d.as_millis()
        ),
        CallError::Aborted => {
            format!("Extension \"{path}\" did not answer {event} after cancellation")
        }
        CallError::Dead(why) => format!("Extension \"{path}\" is not running: {why}"),
        CallError::TooLarge(len) => format!(
            "Extension \"{path}\": {event} not sent: {len} bytes, more than the {}-byte limit of a protocol record",
            super::framing::MAX_RECORD_BYTES
        ),
    }
}

impl RemoteExtension {
    /// Starts the extension of the manifest at `manifest_path` in `cwd` and runs the
    /// handshake (blocking, at most the manifest's event deadline).
    ///
    /// # Errors
    /// `Failed to load extension "<path>": <why>`: a bad manifest, a process that cannot
    /// start, an error answer, a wrong protocol version, no answer in time.
    pub fn start(
        manifest_path: &Path,
        cwd: &Path,
        mode: Mode,
        has_ui: bool,
    ) -> Result<Arc<RemoteExtension>, ExtensionLoadError> {
        let manifest = Manifest::load(manifest_path).map_err(|e| ExtensionLoadError {
            path: manifest_path.display().to_string(),
            error: e.to_string(),
        })?;
        RemoteExtension::start_manifest(manifest, cwd, mode, has_ui)
    }

    /// [`RemoteExtension::start`] with a manifest built by the caller (the Node host's for
    /// a `.ts`/`.js` extension); `manifest.path` is the extension's path.
    ///
    /// # Errors
    /// As [`RemoteExtension::start`].
    pub fn start_manifest(
        manifest: Manifest,
        cwd: &Path,
        mode: Mode,
        has_ui: bool,
    ) -> Result<Arc<RemoteExtension>, ExtensionLoadError> {
        let path = manifest.path.display().to_string();
        let fail = |error: String| ExtensionLoadError {
            path: path.clone(),
            error,
        };
        let deadline = manifest.event_timeout;
        let conn = Connection::spawn(manifest, cwd).map_err(|e| fail(e.to_string()))?;
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "piVersion": crate::VERSION,
            "extensionPath": path,
            "cwd": cwd.display().to_string(),
            "mode": mode,
            "hasUI": has_ui,
        });
        let answer = conn
            .call_blocking("initialize", params, deadline)
            .map_err(|e| {
                conn.kill("handshake failed");
                fail(call_error_text(&path, "initialize", e))
            })?;
        let registration: Registration = serde_json::from_value(answer).map_err(|e| {
            conn.kill("handshake failed");
            fail(format!("invalid initialize result: {e}"))
        })?;
        if registration.protocol_version != PROTOCOL_VERSION {
            conn.kill("handshake failed");
            return Err(fail(format!(
                "unsupported protocol version {} (pi-rs speaks {PROTOCOL_VERSION})",
                registration.protocol_version
            )));
        }
        let pi: PiSlot = Arc::default();
        let commands: CommandSlot = Arc::default();
        let (serve_pi, serve_commands) = (Arc::clone(&pi), Arc::clone(&commands));
        conn.set_request_handler(Arc::new(move |conn, id, method, params| {
            let slots = (Arc::clone(&serve_pi), Arc::clone(&serve_commands));
            host_requests::serve(conn, slots, id, method, params);
        }));
        let sink_pi = Arc::clone(&pi);
        let sink_path = path.clone();
        conn.set_problem_sink(Arc::new(move |event, text| {
            let runner = lock(&sink_pi)
                .as_ref()
                .and_then(|p| p.runner.get().and_then(ExtensionRunner::from_weak));
            match runner {
                Some(r) => r.report(&sink_path, event, text),
                None => eprintln!("Extension error ({sink_path}): {text}"),
            }
        }));
        Ok(Arc::new(RemoteExtension {
            conn,
            registration,
            pi,
            mirror: Arc::default(),
            commands,
        }))
    }

    /// The extension's path (the manifest file).
    pub fn path(&self) -> String {
        self.conn.path()
    }

    /// The names of the flags it registered.
    pub fn flag_names(&self) -> Vec<String> {
        self.registration
            .flags
            .iter()
            .map(|f| f.name.clone())
            .collect()
    }

    /// The names of its `boolean` flags.
    pub fn boolean_flag_names(&self) -> Vec<String> {
        self.registration
            .flags
            .iter()
            .filter(|f| f.kind == "boolean")
            .map(|f| f.name.clone())
            .collect()
    }

    /// Ends the process (`shutdown`, then its process group is killed after `wait`).
    pub fn shutdown(&self, wait: Duration) {
        self.conn.shutdown(wait);
    }

    /// Brings the extension's mirror up to date with `ctx` before pi-rs asks it something
    /// that may read the session synchronously (an event, a command, a shortcut).
    fn syncer(&self) -> impl Fn(&ExtensionContext) + Send + Sync + 'static {
        let conn = Arc::clone(&self.conn);
        let mirror = Arc::clone(&self.mirror);
        let pi = Arc::clone(&self.pi);
        let flags = self.flag_names();
        move |ctx| {
            let current = lock(&pi).clone();
            lock(&mirror).sync(&conn, ctx, current.as_ref(), &flags);
        }
    }

    fn on<E: RemoteEvent>(&self, api: &mut ExtensionApi<'_>) {
        let conn = Arc::clone(&self.conn);
        let mirror = Arc::clone(&self.mirror);
        let pi = Arc::clone(&self.pi);
        let flags = self.flag_names();
        api.on::<E, _>(move |event, ctx| {
            let conn = Arc::clone(&conn);
            let mirror = Arc::clone(&mirror);
            let pi = Arc::clone(&pi);
            let flags = flags.clone();
            Box::pin(async move {
                {
                    let current = lock(&pi).clone();
                    lock(&mirror).sync(&conn, ctx, current.as_ref(), &flags);
                }
                let deadline = conn.manifest().event_timeout;
                let params = json!({"type": E::NAME, "event": event.to_wire()});
                let id = conn.next_id();
                let answer = conn
                    .call_with_id(
                        id,
                        "event",
                        params,
                        Some(deadline),
                        event.signal(),
                        Duration::ZERO,
                    )
                    .await;
                let answer = match answer {
                    Ok(a) => a,
                    // The operation was aborted while the extension was asked: nothing to
                    // answer, and nothing went wrong in the extension.
                    Err(CallError::Aborted) => return Ok(None),
                    Err(e) => {
                        if matches!(e, CallError::Timeout(_)) {
                            check_alive(&conn);
                        }
                        return Err(HandlerError::new(call_error_text(&conn.path(), E::NAME, e)));
                    }
                };
                event
                    .read_answer(&answer)
                    .map_err(|e| HandlerError::new(e.to_string()))
            })
        });
    }
}

/// After a missed deadline: a process that does not answer a ping within the deadline
/// either (a busy loop, a deadlock) is stopped, so later calls fail at once instead of
/// each waiting out its deadline.
fn check_alive(conn: &Arc<Connection>) {
    let Some(rt) = conn.runtime() else {
        return;
    };
    let conn = Arc::clone(conn);
    rt.spawn(async move {
        let deadline = conn.manifest().event_timeout;
        if let Err(CallError::Timeout(_)) = conn.call("$/ping", json!({}), Some(deadline)).await {
            conn.kill("did not answer a ping after a missed deadline; stopped");
        }
    });
}

impl Extension for Arc<RemoteExtension> {
    fn path(&self) -> &str {
        // The manifest path is fixed at start; the runner copies it once per load.
        self.conn
            .manifest()
            .path
            .to_str()
            .unwrap_or("<non-UTF-8 extension path>")
    }

    fn register(&self, api: &mut ExtensionApi<'_>) -> Result<(), HandlerError> {
        self.conn.remember_runtime();
        *lock(&self.pi) = Some(api.pi());
        for tool in &self.registration.tools {
            api.register_tool(Arc::new(RemoteTool::new(
                tool.clone(),
                Arc::clone(&self.conn),
            )));
        }
        for command in &self.registration.commands {
            let conn = Arc::clone(&self.conn);
            let commands = Arc::clone(&self.commands);
            let sync = self.syncer();
            let name = command.name.clone();
            api.register_command(
                command.name.clone(),
                command.description.clone(),
                move |args, ctx| {
                    let conn = Arc::clone(&conn);
                    let name = name.clone();
                    sync(&ctx);
                    let running = RunningCommand::enter(&commands, ctx);
                    Box::pin(async move {
                        let _running = running;
                        conn.call("command/run", json!({"name": name, "args": args}), None)
                            .await
                            .map(|_| ())
                            .map_err(|e| {
                                HandlerError::new(call_error_text(&conn.path(), "command", e))
                            })
                    })
                },
            );
        }
        for shortcut in &self.registration.shortcuts {
            let conn = Arc::clone(&self.conn);
            let key = shortcut.key.clone();
            // No deadline, as for commands: the handler may open dialogs.
            let sync = self.syncer();
            api.register_shortcut(
                shortcut.key.clone(),
                shortcut.description.clone(),
                move |ctx| {
                    sync(&ctx);
                    let conn = Arc::clone(&conn);
                    let key = key.clone();
                    Box::pin(async move {
                        conn.call("shortcut/run", json!({"key": key}), None)
                            .await
                            .map(|_| ())
                            .map_err(|e| {
                                HandlerError::new(call_error_text(&conn.path(), "shortcut", e))
                            })
                    })
                },
            );
        }
        for flag in &self.registration.flags {
            let kind = match flag.kind.as_str() {
                "boolean" => FlagType::Boolean,
                "string" => FlagType::String,
                other => {
                    return Err(HandlerError::new(format!(
                        "Invalid type for flag \"{}\": {other}",
                        flag.name
                    )));
                }
            };
            let default = match &flag.default {
                Some(Value::Bool(b)) => Some(FlagValue::Bool(*b)),
                Some(Value::String(s)) => Some(FlagValue::String(s.clone())),
                _ => None,
            };
            api.register_flag(flag.name.clone(), kind, default, flag.description.clone())?;
        }
        for event in &self.registration.events {
            match event.as_str() {
                "session_start" => self.on::<ev::SessionStartEvent>(api),
                "session_shutdown" => self.on::<ev::SessionShutdownEvent>(api),
                "session_info_changed" => self.on::<ev::SessionInfoChangedEvent>(api),
                "thinking_level_select" => self.on::<ev::ThinkingLevelSelectEvent>(api),
                "agent_start" => self.on::<ev::AgentStartEvent>(api),
                "agent_end" => self.on::<ev::AgentEndEvent>(api),
                "turn_start" => self.on::<ev::TurnStartEvent>(api),
                "turn_end" => self.on::<ev::TurnEndEvent>(api),
                "message_start" => self.on::<ev::MessageStartEvent>(api),
                "message_end" => self.on::<ev::MessageEndEvent>(api),
                "tool_execution_start" => self.on::<ev::ToolExecutionStartEvent>(api),
                "tool_execution_update" => self.on::<ev::ToolExecutionUpdateEvent>(api),
                "tool_execution_end" => self.on::<ev::ToolExecutionEndEvent>(api),
                "tool_call" => self.on::<ev::ToolCallEvent>(api),
                "tool_result" => self.on::<ev::ToolResultEvent>(api),
                "input" => self.on::<ev::InputEvent>(api),
                "before_agent_start" => self.on::<ev::BeforeAgentStartEvent>(api),
                "context" => self.on::<ev::ContextEvent>(api),
                "before_provider_request" => self.on::<ev::BeforeProviderRequestEvent>(api),
                "before_provider_headers" => self.on::<ev::BeforeProviderHeadersEvent>(api),
                "session_before_switch" => self.on::<ev::SessionBeforeSwitchEvent>(api),
                "session_before_fork" => self.on::<ev::SessionBeforeForkEvent>(api),
                "resources_discover" => self.on::<ev::ResourcesDiscoverEvent>(api),
                "agent_settled" => self.on::<ev::AgentSettledEvent>(api),
                "message_update" => self.on::<ev::MessageUpdateEvent>(api),
                "ui_prompt_start" => self.on::<ev::UiPromptStartEvent>(api),
                "ui_prompt_end" => self.on::<ev::UiPromptEndEvent>(api),
                "after_provider_response" => self.on::<ev::AfterProviderResponseEvent>(api),
                "session_before_compact" => self.on::<ev::SessionBeforeCompactEvent>(api),
                "session_compact" => self.on::<ev::SessionCompactEvent>(api),
                "session_compact_failed" => self.on::<ev::SessionCompactFailedEvent>(api),
                "session_before_tree" => self.on::<ev::SessionBeforeTreeEvent>(api),
                "session_tree" => self.on::<ev::SessionTreeEvent>(api),
                "model_select" => self.on::<ev::ModelSelectEvent>(api),
                "project_trust" => self.on::<ev::ProjectTrustEvent>(api),
                "user_bash" => self.on::<ev::UserBashEvent>(api),
                // pi accepts any name (removed ones such as `session_switch` included); an
                // unknown event never fires.
                _ => {}
            }
        }
        Ok(())
    }
}

/// Keeps a command's `ctx` in the extension's [`CommandSlot`] while the command runs (also
/// when its future is dropped or panics).
struct RunningCommand {
    slot: CommandSlot,
}

impl RunningCommand {
    fn enter(slot: &CommandSlot, ctx: ExtensionContext) -> Self {
        lock(slot).push(ctx);
        RunningCommand {
            slot: Arc::clone(slot),
        }
    }
}

impl Drop for RunningCommand {
    fn drop(&mut self) {
        lock(&self.slot).pop();
    }
}
