//! [`RuntimeHost`]: owns the current session and replaces it (new, resume, fork, clone).
//!
//! Mirrors pi-coding-agent 0.85.0 `AgentSessionRuntime` (`core/agent-session-runtime.ts`).
//! Every replacement runs in this order:
//! 1. `session_before_switch {reason:"new"|"resume", targetSessionFile?}` or
//!    `session_before_fork {entryId, position}` on the current session's hooks; a cancel
//!    ends the replacement (`{cancelled: true}`), nothing else happens;
//! 2. the target store ([`super::targets`]): a new session in the same directory (with
//!    `parentSession` when given), the opened file (its stored cwd must exist), or the
//!    branched copy;
//! 3. teardown: abort, `session_shutdown {reason, targetSessionFile}`, dispose
//!    ([`AgentSession::shutdown`]);
//! 4. the [`SessionFactory`] builds the next session;
//! 5. the host's listeners move to it and the mode's rebind callback runs (RPC: UI, error
//!    listener, event output);
//! 6. bind: `session_start {reason, previousSessionFile}` (with extensions also
//!    `resources_discover`).
//!
//! Replacements are serialized. A factory failure after the teardown is returned as is
//! (as in pi, the old session is gone by then).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pi_agent_core::ListenerError;

use super::actions::HostActions;
use super::error::HostError;
use super::factory::{BuiltSession, SessionFactory, SessionTarget};
use super::session_host::{ForkReplacement, RebindFn, Replacement, SessionHost};
use super::targets::{assert_session_cwd_exists, fork_store, new_session_store, session_dir_of};
use crate::extensions::ExtensionHooks;
use crate::session::{
    AgentSession, AgentSessionEvent, ReplaceReason, SessionListener, SessionStartReason,
    SessionSubscription, ShutdownReason, SwitchReason,
};
use crate::storage::{ForkPosition, SessionStore};

use crate::sync::lock;

/// The outcome of [`RuntimeHost::fork`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForkOutcome {
    /// An extension cancelled the fork.
    pub cancelled: bool,
    /// The forked user message's text ([`ForkPosition::Before`] only).
    pub selected_text: Option<String>,
}

struct Current {
    session: AgentSession,
    extensions: Option<Arc<ExtensionHooks>>,
    cwd: PathBuf,
    subscriptions: Vec<SessionSubscription>,
}

struct Inner {
    factory: SessionFactory,
    current: Mutex<Current>,
    listeners: Mutex<(u64, Vec<(u64, SessionListener)>)>,
    rebind: Mutex<Option<RebindFn>>,
    replacing: tokio::sync::Mutex<()>,
}

/// The runtime host (a cheap, shared handle).
#[derive(Clone)]
pub struct RuntimeHost {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for RuntimeHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeHost")
            .field("session", &self.session())
            .finish_non_exhaustive()
    }
}

/// A weak handle on a [`RuntimeHost`] (what the session's own parts keep).
#[derive(Clone, Debug)]
pub struct WeakRuntimeHost(std::sync::Weak<Inner>);

impl WeakRuntimeHost {
    /// The host, if it still exists.
    pub fn upgrade(&self) -> Option<RuntimeHost> {
        self.0.upgrade().map(|inner| RuntimeHost { inner })
    }
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inner").finish_non_exhaustive()
    }
}

/// Removes a host listener ([`RuntimeHost::subscribe`]); dropping it keeps the listener.
#[derive(Debug)]
pub struct HostSubscription {
    host: std::sync::Weak<Inner>,
    id: u64,
}

impl HostSubscription {
    /// Removes the listener from the host and from later sessions. Returns `false` when it
    /// was already gone. (The current session keeps delivering to it until it is replaced.)
    pub fn unsubscribe(&self) -> bool {
        let Some(inner) = self.host.upgrade() else {
            return false;
        };
        let mut l = lock(&inner.listeners);
        let before = l.1.len();
        l.1.retain(|(i, _)| *i != self.id);
        l.1.len() != before
    }
}

fn subscribe_listener(session: &AgentSession, listener: SessionListener) -> SessionSubscription {
    session.subscribe(
        move |event: &AgentSessionEvent| -> Result<(), ListenerError> { listener(event) },
    )
}

impl RuntimeHost {
    /// pi's `createAgentSessionRuntime`: checks the stored cwd of `target.store`
    /// ([`assert_session_cwd_exists`] against `target.cwd`), builds the first session with
    /// `factory` and binds it with `session_start {reason:"startup"}`.
    ///
    /// # Errors
    /// The missing-cwd text, or the factory's error.
    pub async fn start(factory: SessionFactory, target: SessionTarget) -> Result<Self, HostError> {
        assert_session_cwd_exists(&target.store, &target.cwd)?;
        let cwd = target.cwd.clone();
        let built = factory(target)?;
        let host = RuntimeHost::with_session(factory, built, cwd);
        host.bind(SessionStartReason::Startup, None).await;
        Ok(host)
    }

    /// A host around an already built and bound session (the caller ran `session_start`).
    /// The session's extension commands get the host's actions ([`HostActions`]).
    pub fn with_session(factory: SessionFactory, built: BuiltSession, cwd: PathBuf) -> Self {
        let extensions = built.extensions.clone();
        let host = RuntimeHost {
            inner: Arc::new(Inner {
                factory,
                current: Mutex::new(Current {
                    session: built.session,
                    extensions: built.extensions,
                    cwd,
                    subscriptions: Vec::new(),
                }),
                listeners: Mutex::new((0, Vec::new())),
                rebind: Mutex::new(None),
                replacing: tokio::sync::Mutex::new(()),
            }),
        };
        if let Some(ext) = extensions {
            ext.set_command_actions(Arc::new(HostActions(host.downgrade())));
        }
        host
    }

    /// A weak handle on this host.
    pub fn downgrade(&self) -> WeakRuntimeHost {
        WeakRuntimeHost(Arc::downgrade(&self.inner))
    }

    /// The current session.
    pub fn session(&self) -> AgentSession {
        lock(&self.inner.current).session.clone()
    }

    /// The extension hooks of the current session.
    pub fn extensions(&self) -> Option<Arc<ExtensionHooks>> {
        lock(&self.inner.current).extensions.clone()
    }

    /// The current working directory (the stored cwd of the last resumed or forked session).
    pub fn cwd(&self) -> PathBuf {
        lock(&self.inner.current).cwd.clone()
    }

    /// Adds a listener to the current session and to every later one (in subscription
    /// order, after the listeners the factory's session already had).
    pub fn subscribe(
        &self,
        f: impl Fn(&AgentSessionEvent) -> Result<(), ListenerError> + Send + Sync + 'static,
    ) -> HostSubscription {
        let listener: SessionListener = Arc::new(f);
        let id = {
            let mut l = lock(&self.inner.listeners);
            l.0 += 1;
            let id = l.0;
            l.1.push((id, Arc::clone(&listener)));
            id
        };
        let mut cur = lock(&self.inner.current);
        let sub = subscribe_listener(&cur.session, listener);
        cur.subscriptions.push(sub);
        HostSubscription {
            host: Arc::downgrade(&self.inner),
            id,
        }
    }

    /// Installs the mode's rebind callback (pi's `setRebindSession`): called with every
    /// replacement session and its extension hooks, after it is built and before
    /// `session_start` is emitted.
    pub fn set_rebind(&self, rebind: Option<RebindFn>) {
        *lock(&self.inner.rebind) = rebind;
    }

    /// `newSession({parentSession?})`: `session_before_switch {reason:"new"}`; a new session
    /// in the current session's directory (in memory when the current one is) with
    /// `parentSession` in its header; `session_shutdown {reason:"new", targetSessionFile}`;
    /// `session_start {reason:"new", previousSessionFile}`. Returns `true` when cancelled.
    ///
    /// # Errors
    /// The factory's error.
    pub async fn new_session(&self, parent_session: Option<String>) -> Result<bool, HostError> {
        let _guard = self.inner.replacing.lock().await;
        let (current, cwd) = self.current();
        if current
            .hooks()
            .session_before_switch(SwitchReason::New, None)
            .await
        {
            return Ok(true);
        }
        let dir = session_dir_of(&lock(current.store()));
        let store = new_session_store(dir.as_deref(), &cwd.display().to_string(), parent_session)?;
        self.replace(&current, ReplaceReason::New, store, cwd)
            .await?;
        Ok(false)
    }

    /// `switchSession(path)`: `session_before_switch {reason:"resume", targetSessionFile:
    /// path}`; opens `path` (a missing file becomes a new session bound to it) and checks its
    /// stored cwd; `session_shutdown {reason:"resume"}`; `session_start {reason:"resume"}`.
    /// The next session runs in the stored cwd. Returns `true` when cancelled.
    ///
    /// # Errors
    /// `Session file is not a valid pi session: <path>`, `Stored session working directory
    /// does not exist: …`, I/O errors, the factory's error.
    pub async fn switch_session(&self, path: &Path) -> Result<bool, HostError> {
        let _guard = self.inner.replacing.lock().await;
        let (current, cwd) = self.current();
        let target = path.display().to_string();
        if current
            .hooks()
            .session_before_switch(SwitchReason::Resume, Some(target))
            .await
        {
            return Ok(true);
        }
        let store = SessionStore::open(path, &cwd.display().to_string())?;
        assert_session_cwd_exists(&store, &cwd)?;
        let next_cwd = stored_cwd(&store, &cwd);
        self.replace(&current, ReplaceReason::Resume, store, next_cwd)
            .await?;
        Ok(false)
    }

    /// `fork(entryId, {position})`: `session_before_fork {entryId, position}`; the branch
    /// ([`fork_store`]); `session_shutdown {reason:"fork"}`; `session_start
    /// {reason:"fork"}`.
    ///
    /// # Errors
    /// `Invalid entry ID for forking`, `This session has not been saved yet. …`, the
    /// factory's error.
    pub async fn fork(
        &self,
        entry_id: &str,
        position: ForkPosition,
    ) -> Result<ForkOutcome, HostError> {
        let _guard = self.inner.replacing.lock().await;
        let (current, cwd) = self.current();
        if current
            .hooks()
            .session_before_fork(entry_id, position)
            .await
        {
            return Ok(ForkOutcome {
                cancelled: true,
                selected_text: None,
            });
        }
        let (store, selected_text) = fork_store(&lock(current.store()), entry_id, position)?;
        let next_cwd = stored_cwd(&store, &cwd);
        self.replace(&current, ReplaceReason::Fork, store, next_cwd)
            .await?;
        Ok(ForkOutcome {
            cancelled: false,
            selected_text,
        })
    }

    /// Clone: a fork at the current leaf (`Cannot clone session: no current entry selected`
    /// without one). Returns `true` when cancelled.
    ///
    /// # Errors
    /// As [`RuntimeHost::fork`].
    pub async fn clone_session(&self) -> Result<bool, HostError> {
        let leaf = self.session().leaf_id().ok_or(HostError::NothingToClone)?;
        Ok(self.fork(&leaf, ForkPosition::At).await?.cancelled)
    }

    /// pi's `reload()` (`/reload`): `session_shutdown {reason:"reload"}`, then the same
    /// store built again with [`SessionTarget::reload`] set (the factory reads settings,
    /// extensions and resources anew), the session's model scope carried over, and
    /// `session_start {reason:"reload"}`. The session file is not written.
    ///
    /// # Errors
    /// The factory's error (the old session is shut down by then, as in pi).
    pub async fn reload(&self) -> Result<(), HostError> {
        let _guard = self.inner.replacing.lock().await;
        let (current, cwd) = self.current();
        let scoped = current.scoped_models();
        current.shutdown(ShutdownReason::Reload, None).await;
        let store = {
            let placeholder = SessionStore::in_memory(&cwd.display().to_string());
            std::mem::replace(&mut *lock(current.store()), placeholder)
        };
        self.install(ReplaceReason::Reload, store, cwd, None, true)
            .await?;
        self.session().set_scoped_models(scoped);
        Ok(())
    }

    /// pi's `dispose()`: `session_shutdown {reason:"quit"}` and teardown of the current
    /// session.
    pub async fn dispose(&self) {
        let _guard = self.inner.replacing.lock().await;
        self.session().shutdown(ShutdownReason::Quit, None).await;
    }

    fn current(&self) -> (AgentSession, PathBuf) {
        let cur = lock(&self.inner.current);
        (cur.session.clone(), cur.cwd.clone())
    }

    /// Steps 3–6 of the module docs.
    async fn replace(
        &self,
        current: &AgentSession,
        reason: ReplaceReason,
        store: SessionStore,
        cwd: PathBuf,
    ) -> Result<(), HostError> {
        let previous = current.session_file().map(|p| p.display().to_string());
        let target_file = store.path().map(|p| p.display().to_string());
        current.shutdown(reason.into(), target_file).await;
        self.install(reason, store, cwd, previous, false).await
    }

    /// Builds the session for `store`, makes it current (listeners, rebind) and binds it.
    async fn install(
        &self,
        reason: ReplaceReason,
        store: SessionStore,
        cwd: PathBuf,
        previous: Option<String>,
        reload: bool,
    ) -> Result<(), HostError> {
        let built = (self.inner.factory)(SessionTarget {
            store,
            cwd: cwd.clone(),
            reload,
        })?;
        if let Some(ext) = &built.extensions {
            ext.set_command_actions(Arc::new(HostActions(self.downgrade())));
        }
        let listeners: Vec<SessionListener> = lock(&self.inner.listeners)
            .1
            .iter()
            .map(|(_, l)| Arc::clone(l))
            .collect();
        let subscriptions = listeners
            .into_iter()
            .map(|l| subscribe_listener(&built.session, l))
            .collect();
        {
            let mut cur = lock(&self.inner.current);
            *cur = Current {
                session: built.session.clone(),
                extensions: built.extensions.clone(),
                cwd,
                subscriptions,
            };
        }
        let rebind = lock(&self.inner.rebind).clone();
        if let Some(rebind) = rebind {
            rebind(&built.session, built.extensions.as_ref());
        }
        self.bind(reason.into(), previous).await;
        Ok(())
    }

    /// `session_start {reason, previousSessionFile}` on the current session.
    async fn bind(&self, reason: SessionStartReason, previous: Option<String>) {
        let (session, extensions) = {
            let cur = lock(&self.inner.current);
            (cur.session.clone(), cur.extensions.clone())
        };
        match extensions {
            Some(ext) => {
                ext.bind(&session, reason, previous).await;
            }
            None => session.bind_hooks(reason, previous).await,
        }
    }
}

/// The stored cwd of `store`, else `fallback` (in memory, or an empty header cwd).
fn stored_cwd(store: &SessionStore, fallback: &Path) -> PathBuf {
    let cwd = &store.header().cwd;
    if store.path().is_none() || cwd.is_empty() {
        fallback.to_path_buf()
    } else {
        PathBuf::from(cwd)
    }
}

/// The host as RPC mode's [`SessionHost`]. The host owns the current session: the
/// `current` argument (RPC's view of it) is not used.
impl SessionHost for RuntimeHost {
    fn new_session(
        &self,
        _current: AgentSession,
        parent_session: Option<String>,
    ) -> BoxFuture<'_, Replacement> {
        Box::pin(async move {
            let cancelled = RuntimeHost::new_session(self, parent_session).await?;
            Ok((!cancelled).then(|| self.session()))
        })
    }

    fn switch_session(&self, _current: AgentSession, path: String) -> BoxFuture<'_, Replacement> {
        Box::pin(async move {
            let cancelled = RuntimeHost::switch_session(self, Path::new(&path)).await?;
            Ok((!cancelled).then(|| self.session()))
        })
    }

    fn fork(
        &self,
        _current: AgentSession,
        entry_id: String,
        position: ForkPosition,
    ) -> BoxFuture<'_, ForkReplacement> {
        Box::pin(async move {
            let outcome = RuntimeHost::fork(self, &entry_id, position).await?;
            let next = (!outcome.cancelled).then(|| self.session());
            Ok((next, outcome.selected_text.unwrap_or_default()))
        })
    }

    fn extensions(&self) -> Option<Arc<ExtensionHooks>> {
        RuntimeHost::extensions(self)
    }

    fn set_rebind(&self, rebind: Option<RebindFn>) {
        RuntimeHost::set_rebind(self, rebind);
    }
}
