//! The `pi` surface at run time: a cheap handle ([`Pi`]) that handlers capture
//! and that turns each call into an [`ExtensionRequest`] the session executes, plus the
//! event bus between extensions.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/extensions/loader.ts` (the `pi` object's actions) and
//! `core/event-bus.ts`. After [`ExtensionRunner::invalidate`](super::ExtensionRunner::invalidate)
//! every call fails with [`STALE_MESSAGE`].

use pi_agent_core::AgentTool;
use pi_ai::{ImageContent, Model, ModelThinkingLevel};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::command_info::{CommandInfo, extension_commands};
use super::context::SessionView;
use super::errors::{HandlerError, panic_message};
use super::events::{CustomMessageSpec, StreamingBehavior};
use super::exec::{ExecOptions, ExecResult};
use super::extension::FlagValue;
use super::tool_info::ToolInfo;

/// pi's text for any use of a captured `pi`/`ctx` after session replacement or reload.
pub const STALE_MESSAGE: &str = "This extension ctx is stale after session replacement or reload. Do not use a captured pi or command ctx after ctx.newSession(), ctx.fork(), ctx.switchSession(), or ctx.reload(). For newSession, fork, and switchSession, move post-replacement work into withSession and use the ctx passed to withSession. For reload, do not use the old ctx after await ctx.reload().";

/// How `sendMessage` delivers (`deliverAs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliverAs {
    /// Steering message while streaming.
    Steer,
    /// Follow-up while streaming (default).
    FollowUp,
    /// Held for the next prompt.
    NextTurn,
}

/// Options of `sendMessage` (`{triggerTurn?, deliverAs?}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendMessageOptions {
    /// Start (or continue) a run with the message.
    pub trigger_turn: Option<bool>,
    /// How to deliver it.
    pub deliver_as: Option<DeliverAs>,
}

/// A request from an extension, executed by the session in the order queued.
#[derive(Clone)]
pub enum ExtensionRequest {
    /// `pi.sendMessage(message, options)`; failures are reported as `send_message` errors.
    SendMessage {
        /// The sending extension.
        extension_path: String,
        /// The custom message.
        message: CustomMessageSpec,
        /// Delivery options.
        options: SendMessageOptions,
    },
    /// `pi.sendUserMessage(content, {deliverAs})`; failures are reported as
    /// `send_user_message` errors.
    SendUserMessage {
        /// The sending extension.
        extension_path: String,
        /// The text (text blocks joined with `\n`).
        text: String,
        /// Images.
        images: Vec<ImageContent>,
        /// Queueing while streaming.
        deliver_as: Option<StreamingBehavior>,
    },
    /// `pi.appendEntry(customType, data)` → a `custom` entry and `entry_appended`.
    AppendEntry {
        /// The entry's `customType`.
        custom_type: String,
        /// Its `data`.
        data: Option<Value>,
    },
    /// `pi.setSessionName(name)`.
    SetSessionName(String),
    /// `pi.setLabel(entryId, label)` (`None` clears it).
    SetLabel {
        /// The labelled entry.
        entry_id: String,
        /// The label.
        label: Option<String>,
    },
    /// `pi.setActiveTools(names)`.
    SetActiveTools(Vec<String>),
    /// `pi.registerTool(def)` after loading (registry refresh).
    RegisterTool {
        /// The registering extension.
        extension_path: String,
        /// The tool.
        tool: Arc<dyn AgentTool>,
    },
    /// `pi.setThinkingLevel(level)`.
    SetThinkingLevel(ModelThinkingLevel),
    /// `pi.setModel(model)` once its provider was found to have auth (the session's
    /// `set_model`, not persisted as the default).
    SetModel(Box<Model>),
    /// `ctx.abort()`.
    Abort,
    /// `ctx.shutdown()`.
    Shutdown,
    /// `ctx.compact({customInstructions})`.
    Compact {
        /// Extra summary instructions.
        custom_instructions: Option<String>,
    },
}

impl std::fmt::Debug for ExtensionRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExtensionRequest::RegisterTool { tool, .. } => {
                write!(f, "RegisterTool({})", tool.name())
            }
            ExtensionRequest::SendMessage { message, .. } => {
                write!(f, "SendMessage({})", message.custom_type)
            }
            ExtensionRequest::SendUserMessage { text, .. } => {
                write!(f, "SendUserMessage({text:?})")
            }
            ExtensionRequest::AppendEntry { custom_type, .. } => {
                write!(f, "AppendEntry({custom_type})")
            }
            ExtensionRequest::SetSessionName(n) => write!(f, "SetSessionName({n:?})"),
            ExtensionRequest::SetLabel { entry_id, label } => {
                write!(f, "SetLabel({entry_id}, {label:?})")
            }
            ExtensionRequest::SetActiveTools(t) => write!(f, "SetActiveTools({t:?})"),
            ExtensionRequest::SetThinkingLevel(l) => write!(f, "SetThinkingLevel({l:?})"),
            ExtensionRequest::SetModel(m) => write!(f, "SetModel({}/{})", m.provider, m.id),
            ExtensionRequest::Abort => f.write_str("Abort"),
            ExtensionRequest::Shutdown => f.write_str("Shutdown"),
            ExtensionRequest::Compact {
                custom_instructions,
            } => write!(f, "Compact({custom_instructions:?})"),
        }
    }
}

/// The queue shared by every [`Pi`] handle and `ctx` of one runner.
#[derive(Clone, Default)]
pub(crate) struct RequestQueue {
    inner: Arc<QueueInner>,
}

#[derive(Default)]
struct QueueInner {
    queue: Mutex<VecDeque<ExtensionRequest>>,
    stale: AtomicBool,
}

impl RequestQueue {
    /// Queues `request`; a stale queue drops it.
    pub(crate) fn push(&self, request: ExtensionRequest) {
        if self.is_stale() {
            return;
        }
        if let Ok(mut q) = self.inner.queue.lock() {
            q.push_back(request);
        }
    }

    pub(crate) fn drain(&self) -> Vec<ExtensionRequest> {
        self.inner
            .queue
            .lock()
            .map(|mut q| q.drain(..).collect())
            .unwrap_or_default()
    }

    pub(crate) fn invalidate(&self) {
        self.inner.stale.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_stale(&self) -> bool {
        self.inner.stale.load(Ordering::SeqCst)
    }
}

/// A use of a stale `pi` handle (the text is [`STALE_MESSAGE`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{STALE_MESSAGE}")]
pub struct StaleError;

/// The run-time `pi` of one extension: clone it into handlers. Each call queues an
/// [`ExtensionRequest`]; the session executes them in order.
#[derive(Clone)]
pub struct Pi {
    pub(crate) path: Arc<str>,
    pub(crate) requests: RequestQueue,
    pub(crate) bus: EventBus,
    pub(crate) flags: Arc<Mutex<HashMap<String, FlagValue>>>,
    pub(crate) own_flags: Arc<Mutex<Vec<String>>>,
    /// The bound session's view (shared with the runner), for the `get_*` reads.
    pub(crate) session: SessionSlot,
    /// The runner, once built (weak: the runner owns the handles).
    pub(crate) runner: RunnerSlot,
}

/// The runner a `pi` handle belongs to, set when the runner is built.
pub(crate) type RunnerSlot = Arc<std::sync::OnceLock<std::sync::Weak<super::runner::Inner>>>;

/// The runner's bound session view, shared with every `pi` handle.
pub(crate) type SessionSlot = Arc<std::sync::RwLock<Option<Arc<dyn SessionView>>>>;

impl Pi {
    fn send(&self, request: ExtensionRequest) -> Result<(), StaleError> {
        if self.requests.is_stale() {
            return Err(StaleError);
        }
        self.requests.push(request);
        Ok(())
    }

    /// The extension's path (its id in error records).
    pub fn extension_path(&self) -> &str {
        &self.path
    }

    /// `pi.sendMessage(message, options)`.
    pub fn send_message(
        &self,
        message: CustomMessageSpec,
        options: SendMessageOptions,
    ) -> Result<(), StaleError> {
        self.send(ExtensionRequest::SendMessage {
            extension_path: self.path.to_string(),
            message,
            options,
        })
    }

    /// `pi.sendUserMessage(content, {deliverAs})`.
    pub fn send_user_message(
        &self,
        text: impl Into<String>,
        images: Vec<ImageContent>,
        deliver_as: Option<StreamingBehavior>,
    ) -> Result<(), StaleError> {
        self.send(ExtensionRequest::SendUserMessage {
            extension_path: self.path.to_string(),
            text: text.into(),
            images,
            deliver_as,
        })
    }

    /// `pi.appendEntry(customType, data)`.
    pub fn append_entry(
        &self,
        custom_type: impl Into<String>,
        data: Option<Value>,
    ) -> Result<(), StaleError> {
        self.send(ExtensionRequest::AppendEntry {
            custom_type: custom_type.into(),
            data,
        })
    }

    /// `pi.setSessionName(name)`.
    pub fn set_session_name(&self, name: impl Into<String>) -> Result<(), StaleError> {
        self.send(ExtensionRequest::SetSessionName(name.into()))
    }

    /// `pi.setLabel(entryId, label)`.
    pub fn set_label(
        &self,
        entry_id: impl Into<String>,
        label: Option<String>,
    ) -> Result<(), StaleError> {
        self.send(ExtensionRequest::SetLabel {
            entry_id: entry_id.into(),
            label,
        })
    }

    /// `pi.setActiveTools(names)`.
    pub fn set_active_tools(&self, names: Vec<String>) -> Result<(), StaleError> {
        self.send(ExtensionRequest::SetActiveTools(names))
    }

    /// `pi.registerTool(def)` at run time.
    pub fn register_tool(&self, tool: Arc<dyn AgentTool>) -> Result<(), StaleError> {
        self.send(ExtensionRequest::RegisterTool {
            extension_path: self.path.to_string(),
            tool,
        })
    }

    /// `pi.getActiveTools()`: the active tool names, in order (empty before a session is
    /// bound). A `set_active_tools` queued by a handler shows once the session executed it.
    pub fn get_active_tools(&self) -> Result<Vec<String>, StaleError> {
        Ok(self
            .session_view()?
            .map(|s| s.active_tools())
            .unwrap_or_default())
    }

    /// `pi.getAllTools()`: every tool of the session's registry (see [`ToolInfo`]; empty
    /// before a session is bound).
    pub fn get_all_tools(&self) -> Result<Vec<ToolInfo>, StaleError> {
        Ok(self
            .session_view()?
            .map(|s| s.all_tools())
            .unwrap_or_default())
    }

    /// `pi.exec(command, args, options)`: runs `command` without a shell in `options.cwd`,
    /// else the runner's working directory (see [`super::exec`] for kills, codes and output).
    pub async fn exec(
        &self,
        command: &str,
        args: &[String],
        mut options: ExecOptions,
    ) -> Result<ExecResult, StaleError> {
        if self.requests.is_stale() {
            return Err(StaleError);
        }
        let cwd = match options.cwd.take() {
            Some(cwd) => cwd,
            None => self
                .runner
                .get()
                .and_then(super::runner::ExtensionRunner::from_weak)
                .map(|r| r.cwd().to_path_buf())
                .unwrap_or_else(|| std::path::PathBuf::from(".")),
        };
        Ok(super::exec::exec_command(command, args, &cwd, options).await)
    }

    /// `pi.getCommands()`: the extensions' commands (invocation names), then the bound
    /// session's prompt templates and skills (see [`CommandInfo`]).
    pub fn get_commands(&self) -> Result<Vec<CommandInfo>, StaleError> {
        let session = self.session_view()?;
        let runner = self
            .runner
            .get()
            .and_then(super::runner::ExtensionRunner::from_weak);
        let mut out = runner.as_ref().map(extension_commands).unwrap_or_default();
        out.extend(session.map(|s| s.resource_commands()).unwrap_or_default());
        Ok(out)
    }

    fn session_view(&self) -> Result<Option<Arc<dyn SessionView>>, StaleError> {
        if self.requests.is_stale() {
            return Err(StaleError);
        }
        Ok(self.session.read().ok().and_then(|s| s.clone()))
    }

    /// `pi.setModel(model)`: `false` (and nothing queued) when the model's provider has no
    /// configured auth or no session is bound; otherwise the switch is queued (the session's
    /// `set_model`: a `model_change` entry, the level for the switch, `model_select`) and
    /// `true` returned. The default model is not changed.
    pub fn set_model(&self, model: Model) -> Result<bool, StaleError> {
        let authorized = self
            .session_view()?
            .is_some_and(|s| s.has_auth(&model.provider));
        if authorized {
            self.send(ExtensionRequest::SetModel(Box::new(model)))?;
        }
        Ok(authorized)
    }

    /// The available model `provider`/`id` (see [`SessionView::available_models`]): what an
    /// extension process's `pi.setModel` names.
    ///
    /// # Errors
    /// [`StaleError`] after session replacement.
    pub fn find_available_model(
        &self,
        provider: &str,
        id: &str,
    ) -> Result<Option<Model>, StaleError> {
        Ok(self.session_view()?.and_then(|s| {
            s.available_models()
                .into_iter()
                .find(|m| m.provider == provider && m.id == id)
        }))
    }

    /// `pi.setThinkingLevel(level)`.
    pub fn set_thinking_level(&self, level: ModelThinkingLevel) -> Result<(), StaleError> {
        self.send(ExtensionRequest::SetThinkingLevel(level))
    }

    /// `pi.getFlag(name)`: only this extension's flags; the CLI value beats the default.
    pub fn get_flag(&self, name: &str) -> Result<Option<FlagValue>, StaleError> {
        if self.requests.is_stale() {
            return Err(StaleError);
        }
        let own = self.own_flags.lock().map(|f| f.iter().any(|n| n == name));
        if !own.unwrap_or(false) {
            return Ok(None);
        }
        Ok(self.flags.lock().ok().and_then(|f| f.get(name).cloned()))
    }

    /// `pi.events`: the bus shared by all extensions of the runner.
    pub fn events(&self) -> &EventBus {
        &self.bus
    }
}

type BusHandler = Arc<dyn Fn(&Value) -> Result<(), HandlerError> + Send + Sync>;
type BusErrorSink = Arc<dyn Fn(String) + Send + Sync>;

/// `pi.events`: channels between extensions. `emit` calls every subscriber of the channel
/// synchronously, in subscription order; a failing or panicking subscriber is logged as
/// `Event handler error (<channel>): <error>` on stderr and the others still run.
#[derive(Clone, Default)]
pub struct EventBus {
    inner: Arc<BusInner>,
}

#[derive(Default)]
struct BusInner {
    next: AtomicU64,
    subscribers: Mutex<Vec<(u64, String, BusHandler)>>,
    errors: Mutex<Option<BusErrorSink>>,
}

/// Removes a bus subscription (pi: the function `events.on` returns).
pub struct Unsubscribe {
    bus: EventBus,
    id: u64,
}

impl Unsubscribe {
    /// Removes the subscription.
    pub fn unsubscribe(self) {
        if let Ok(mut s) = self.bus.inner.subscribers.lock() {
            s.retain(|(id, _, _)| *id != self.id);
        }
    }
}

impl EventBus {
    /// `events.on(channel, handler)`.
    pub fn on(
        &self,
        channel: impl Into<String>,
        handler: impl Fn(&Value) -> Result<(), HandlerError> + Send + Sync + 'static,
    ) -> Unsubscribe {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut s) = self.inner.subscribers.lock() {
            s.push((id, channel.into(), Arc::new(handler)));
        }
        Unsubscribe {
            bus: self.clone(),
            id,
        }
    }

    /// `events.emit(channel, data)`.
    pub fn emit(&self, channel: &str, data: &Value) {
        let handlers: Vec<BusHandler> = match self.inner.subscribers.lock() {
            Ok(s) => s
                .iter()
                .filter(|(_, c, _)| c == channel)
                .map(|(_, _, h)| Arc::clone(h))
                .collect(),
            Err(_) => return,
        };
        for h in handlers {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h(data)));
            let error = match outcome {
                Ok(Ok(())) => continue,
                Ok(Err(e)) => e.to_string(),
                Err(p) => panic_message(p),
            };
            let line = format!("Event handler error ({channel}): {error}");
            let sink = self.inner.errors.lock().ok().and_then(|s| s.clone());
            match sink {
                Some(sink) => sink(line),
                None => eprintln!("{line}"),
            }
        }
    }

    /// Redirects the `Event handler error (<channel>): …` lines (default: stderr).
    pub fn set_error_sink(&self, sink: impl Fn(String) + Send + Sync + 'static) {
        if let Ok(mut s) = self.inner.errors.lock() {
            *s = Some(Arc::new(sink));
        }
    }
}

impl From<StaleError> for HandlerError {
    fn from(e: StaleError) -> Self {
        super::errors::HandlerError::new(e.to_string())
    }
}
