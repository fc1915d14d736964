//! Writing an extension: a factory gets an [`ExtensionApi`] (pi's `pi` during the
//! factory) and registers handlers with [`ExtensionApi::on`], tools, commands and flags.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/extensions/loader.ts` (`createExtensionAPI`,
//! `loadExtensionFromFactory`): registrations made by a factory commit only if it succeeds;
//! a failure is `Failed to load extension "<path>": <error>`.
//!
//! ```
//! use pi_coding_agent::extensions::{ExtensionApi, HandlerError, events::ToolCallEvent, events::ToolCallResult};
//!
//! fn guard(pi: &mut ExtensionApi<'_>) -> Result<(), HandlerError> {
//!     pi.on::<ToolCallEvent, _>(|event, _ctx| {
//!         Box::pin(async move {
//!             let cmd = event.input["command"].as_str().unwrap_or_default();
//!             if event.tool_name == "bash" && cmd.contains("rm -rf") {
//!                 return Ok(Some(ToolCallResult::block("Recursive deletion is disabled")));
//!             }
//!             Ok(None)
//!         })
//!     });
//!     Ok(())
//! }
//! # let _ = guard;
//! ```

use futures::future::BoxFuture;
use pi_agent_core::AgentTool;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

use super::api::Pi;
use super::context::ExtensionContext;
use super::errors::{HandlerError, HandlerResult};
use super::events::ExtensionEvent;

/// A registered handler of event `E`: gets the (chained, mutable) event and `ctx`.
pub type Handler<E> = Arc<
    dyn for<'a> Fn(
            &'a mut E,
            &'a ExtensionContext,
        ) -> BoxFuture<'a, HandlerResult<<E as ExtensionEvent>::Output>>
        + Send
        + Sync,
>;

/// A flag value (`--name` boolean or `--name value` string).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlagValue {
    /// `type: "boolean"`.
    Bool(bool),
    /// `type: "string"`.
    String(String),
}

impl FlagValue {
    fn type_name(&self) -> &'static str {
        match self {
            FlagValue::Bool(_) => "boolean",
            FlagValue::String(_) => "string",
        }
    }
}

/// A flag's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagType {
    /// `boolean`
    Boolean,
    /// `string`
    String,
}

impl FlagType {
    fn name(self) -> &'static str {
        match self {
            FlagType::Boolean => "boolean",
            FlagType::String => "string",
        }
    }
}

/// `registerFlag(name, {type, default?, description?})`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlagSpec {
    /// Flag name without `--`.
    pub name: String,
    /// Its type.
    pub kind: FlagType,
    /// Default value.
    pub default: Option<FlagValue>,
    /// Help text.
    pub description: Option<String>,
    /// The registering extension.
    pub extension_path: String,
}

/// A command handler: `(args, ctx)`.
pub type CommandHandler = Arc<
    dyn Fn(String, ExtensionContext) -> BoxFuture<'static, Result<(), HandlerError>> + Send + Sync,
>;

/// `registerCommand(name, {description?, handler})`.
#[derive(Clone)]
pub struct CommandSpec {
    /// The name as registered.
    pub name: String,
    /// Help text.
    pub description: Option<String>,
    /// The handler.
    pub handler: CommandHandler,
    /// The registering extension.
    pub extension_path: String,
}

impl std::fmt::Debug for CommandSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandSpec")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("extension_path", &self.extension_path)
            .finish()
    }
}

/// A shortcut handler: `(ctx)`.
pub type ShortcutHandler =
    Arc<dyn Fn(ExtensionContext) -> BoxFuture<'static, Result<(), HandlerError>> + Send + Sync>;

/// `registerShortcut(key, {description?, handler})`.
#[derive(Clone)]
pub struct ShortcutSpec {
    /// The key as registered, in pi's key-id syntax (`ctrl+shift+k`).
    pub key: String,
    /// Help text for `/hotkeys`.
    pub description: Option<String>,
    /// The handler.
    pub handler: ShortcutHandler,
    /// The registering extension.
    pub extension_path: String,
}

impl std::fmt::Debug for ShortcutSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShortcutSpec")
            .field("key", &self.key)
            .field("description", &self.description)
            .field("extension_path", &self.extension_path)
            .finish()
    }
}

/// One loaded extension: its path and everything it registered, in registration order.
#[derive(Default)]
pub struct LoadedExtension {
    pub(crate) path: String,
    /// `TypeId` of the event → `Vec<Handler<E>>`.
    pub(crate) handlers: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    pub(crate) tools: Vec<Arc<dyn AgentTool>>,
    pub(crate) commands: Vec<CommandSpec>,
    pub(crate) flags: Vec<FlagSpec>,
    pub(crate) shortcuts: Vec<ShortcutSpec>,
}

impl LoadedExtension {
    pub(crate) fn handlers<E: ExtensionEvent>(&self) -> &[Handler<E>] {
        self.handlers
            .get(&TypeId::of::<E>())
            .and_then(|b| b.downcast_ref::<Vec<Handler<E>>>())
            .map_or(&[], Vec::as_slice)
    }

    /// The extension's path.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// pi's `pi` inside the factory: registration plus the run-time handle [`ExtensionApi::pi`].
pub struct ExtensionApi<'a> {
    pub(crate) ext: &'a mut LoadedExtension,
    pub(crate) pi: Pi,
}

impl ExtensionApi<'_> {
    /// `pi.on(event, handler)`: handlers of one extension run in registration order.
    pub fn on<E, F>(&mut self, handler: F)
    where
        E: ExtensionEvent,
        F: for<'a> Fn(&'a mut E, &'a ExtensionContext) -> BoxFuture<'a, HandlerResult<E::Output>>
            + Send
            + Sync
            + 'static,
    {
        let handler: Handler<E> = Arc::new(handler);
        let slot = self
            .ext
            .handlers
            .entry(TypeId::of::<E>())
            .or_insert_with(|| Box::new(Vec::<Handler<E>>::new()));
        if let Some(list) = slot.downcast_mut::<Vec<Handler<E>>>() {
            list.push(handler);
        }
    }

    /// `pi.registerTool(def)` (first registration of a name wins across extensions).
    pub fn register_tool(&mut self, tool: Arc<dyn AgentTool>) {
        self.ext.tools.push(tool);
    }

    /// `pi.registerCommand(name, {description, handler})`. Registering a name again in the
    /// same extension replaces the earlier command in place; across extensions duplicates
    /// get numbered invocation names ([`ExtensionRunner::commands`](super::ExtensionRunner::commands)).
    pub fn register_command<F>(
        &mut self,
        name: impl Into<String>,
        description: Option<String>,
        handler: F,
    ) where
        F: Fn(String, ExtensionContext) -> BoxFuture<'static, Result<(), HandlerError>>
            + Send
            + Sync
            + 'static,
    {
        let spec = CommandSpec {
            name: name.into(),
            description,
            handler: Arc::new(handler),
            extension_path: self.ext.path.clone(),
        };
        // pi keeps commands in a `Map`: re-registering replaces in place.
        match self.ext.commands.iter_mut().find(|c| c.name == spec.name) {
            Some(slot) => *slot = spec,
            None => self.ext.commands.push(spec),
        }
    }

    /// `pi.registerShortcut(key, {description, handler})`. Registering a key again in the
    /// same extension replaces the earlier shortcut in place (pi keeps them in a `Map`).
    pub fn register_shortcut<F>(
        &mut self,
        key: impl Into<String>,
        description: Option<String>,
        handler: F,
    ) where
        F: Fn(ExtensionContext) -> BoxFuture<'static, Result<(), HandlerError>>
            + Send
            + Sync
            + 'static,
    {
        let spec = ShortcutSpec {
            key: key.into(),
            description,
            handler: Arc::new(handler),
            extension_path: self.ext.path.clone(),
        };
        match self.ext.shortcuts.iter_mut().find(|s| s.key == spec.key) {
            Some(slot) => *slot = spec,
            None => self.ext.shortcuts.push(spec),
        }
    }

    /// `pi.registerFlag(name, {type, default?, description?})`.
    ///
    /// Errors: a default of the other type →
    /// `Invalid default for flag "<name>": expected <type>, got <type>`.
    pub fn register_flag(
        &mut self,
        name: impl Into<String>,
        kind: FlagType,
        default: Option<FlagValue>,
        description: Option<String>,
    ) -> Result<(), HandlerError> {
        let name = name.into();
        if let Some(d) = &default
            && d.type_name() != kind.name()
        {
            return Err(HandlerError::new(format!(
                "Invalid default for flag \"{name}\": expected {}, got {}",
                kind.name(),
                d.type_name()
            )));
        }
        let spec = FlagSpec {
            name,
            kind,
            default,
            description,
            extension_path: self.ext.path.clone(),
        };
        match self.ext.flags.iter_mut().find(|f| f.name == spec.name) {
            Some(slot) => *slot = spec,
            None => self.ext.flags.push(spec),
        }
        Ok(())
    }

    /// The run-time `pi` handle: clone it into handlers (send messages, append entries, the
    /// event bus, flags).
    pub fn pi(&self) -> Pi {
        self.pi.clone()
    }

    /// The extension's path.
    pub fn path(&self) -> &str {
        &self.ext.path
    }
}

/// An extension: a path (its id in error records and load order) and a factory (pi's
/// default export `(pi) => void`).
pub trait Extension: Send + Sync {
    /// The extension's path or name.
    fn path(&self) -> &str;

    /// Registers handlers, tools, commands and flags. An `Err` (or a panic) discards every
    /// registration of this extension.
    fn register(&self, pi: &mut ExtensionApi<'_>) -> Result<(), HandlerError>;
}

/// An [`Extension`] made of a path and a closure.
pub struct FnExtension<F> {
    path: String,
    factory: F,
}

impl<F> FnExtension<F>
where
    F: Fn(&mut ExtensionApi<'_>) -> Result<(), HandlerError> + Send + Sync,
{
    /// An extension named `path` whose factory is `factory`.
    pub fn new(path: impl Into<String>, factory: F) -> Self {
        FnExtension {
            path: path.into(),
            factory,
        }
    }
}

impl<F> Extension for FnExtension<F>
where
    F: Fn(&mut ExtensionApi<'_>) -> Result<(), HandlerError> + Send + Sync,
{
    fn path(&self) -> &str {
        &self.path
    }

    fn register(&self, pi: &mut ExtensionApi<'_>) -> Result<(), HandlerError> {
        (self.factory)(pi)
    }
}

/// `Failed to load extension "<path>": <error>`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("Failed to load extension \"{path}\": {error}")]
pub struct ExtensionLoadError {
    /// The extension's path.
    pub path: String,
    /// The factory's error.
    pub error: String,
}
