//! The seam between the runtime host and whoever knows how to build a session: a factory
//! that builds an [`AgentSession`] (and its extension hooks) for a given store.
//!
//! Mirrors pi-coding-agent 0.85.0 `CreateAgentSessionRuntimeFactory`
//! (`core/agent-session-runtime.ts`): the factory closes over the fixed inputs (command line,
//! settings, auth, resources) and is called once at start-up and again for every session
//! replacement with the new store and its working directory (and for `/reload`, with the
//! same store, asked to read its inputs again).

use std::path::PathBuf;
use std::sync::Arc;

use super::error::BuildError;
use crate::extensions::ExtensionHooks;
use crate::session::AgentSession;
use crate::storage::SessionStore;

/// What a session is built for: its store and the working directory it runs in (the
/// stored cwd of a resumed or forked session, else the host's).
#[derive(Debug)]
pub struct SessionTarget {
    /// The session store (new, opened or branched); not shared with anything yet.
    pub store: SessionStore,
    /// The working directory (tools, context files, system prompt).
    pub cwd: PathBuf,
    /// The build is `/reload`'s ([`super::RuntimeHost::reload`]): settings, extensions and
    /// resources are read again before the session is built, as pi's `AgentSession.reload`
    /// does; `false` for a new, resumed or forked session.
    pub reload: bool,
}

/// A built, not yet bound session.
pub struct BuiltSession {
    /// The session, built with the factory's configuration (model, thinking level, tools,
    /// system prompt, settings, hooks).
    pub session: AgentSession,
    /// The extension hooks the session was built with (a fresh runner: pi reloads the
    /// extensions for every new session, captured `pi` handles of the old one are stale).
    /// The host binds them ([`ExtensionHooks::bind`]: `session_start`, `resources_discover`).
    pub extensions: Option<Arc<ExtensionHooks>>,
}

impl std::fmt::Debug for BuiltSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltSession")
            .field("session", &self.session)
            .field("extensions", &self.extensions.is_some())
            .finish()
    }
}

impl From<AgentSession> for BuiltSession {
    fn from(session: AgentSession) -> Self {
        BuiltSession {
            session,
            extensions: None,
        }
    }
}

/// Builds a session for a target; a [`BuildError`] carries the text the caller reports (e.g.
/// a model that cannot be resolved).
pub type SessionFactory =
    Arc<dyn Fn(SessionTarget) -> Result<BuiltSession, BuildError> + Send + Sync>;
