//! [`run_rpc`]: the RPC read loop, event forwarding and lifecycle.
//!
//! Mirrors pi-coding-agent 0.85.0 `modes/rpc/rpc-mode.js` (`runRpcMode`):
//! - every record is handled **concurrently**: a command that waits (prompt, abort, bash,
//!   model changes, compaction, session replacement) runs as its own task; the others finish
//!   without waiting and are answered in input order. Responses may overtake each other and
//!   interleave with events; clients correlate them by `id`;
//! - every session event is written in the json-mode projection (a `message_end` once its
//!   entry is in the session file), extension errors as
//!   `{"type":"extension_error", extensionPath, event, error}`;
//! - the extension UI is [`RpcUi`] (`extension_ui_response` records are routed to it);
//! - end of input: the event subscription is dropped, the session is shut down
//!   (`session_shutdown {reason:"quit"}` — pi's `runtimeHost.dispose()`: runs are aborted,
//!   open dialogs resolve to their defaults, user commands are killed), the commands still in
//!   flight finish and are answered, the output is flushed, and the exit status is 0. As in
//!   pi, a run still going at end of input is aborted and its later events are not written.
//!
//! - `ctx.shutdown()` (with extension hooks): the same shutdown, at once when the session is
//!   idle, else after the next command or at the next `agent_settled`.
//!
//! Signals (SIGTERM → 143, SIGHUP → 129) are [`super::stdio`]'s.

use std::sync::{Arc, Mutex};

use std::sync::atomic::{AtomicBool, Ordering};

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;
use tokio::task::JoinSet;

use super::RpcRuntime;
use super::commands::{Incoming, parse_line};
use super::framing::LineReader;
use super::handlers;
use super::output::{Output, spawn_writer};
use super::ui::RpcUi;
use crate::extensions::ExtensionHooks;
use crate::session::{AgentSession, AgentSessionEvent, SessionSubscription};

/// `ctx.shutdown()`: requested by an extension, carried out by the read loop.
#[derive(Default)]
pub(crate) struct ShutdownFlag {
    requested: AtomicBool,
    now: Notify,
}

impl ShutdownFlag {
    /// Wakes the read loop if a shutdown was requested (after a command, at `agent_settled`).
    pub(crate) fn check(&self) {
        if self.requested.load(Ordering::SeqCst) {
            self.now.notify_one();
        }
    }
}

/// State shared by the read loop and the command tasks.
pub(crate) struct Shared {
    pub runtime: RpcRuntime,
    session: Mutex<AgentSession>,
    extensions: Mutex<Option<Arc<ExtensionHooks>>>,
    subscription: Mutex<Option<SessionSubscription>>,
    pub out: Output,
    pub ui: Arc<RpcUi>,
    pub shutdown: Arc<ShutdownFlag>,
}

use crate::sync::lock;

impl Shared {
    /// The current session.
    pub(crate) fn session(&self) -> AgentSession {
        lock(&self.session).clone()
    }

    /// Writes every event of `session` (json-mode projection).
    fn subscribe(&self, session: &AgentSession) {
        let out = self.out.clone();
        let shutdown = Arc::clone(&self.shutdown);
        let durability = session.durability();
        let sub = session.subscribe(move |event| {
            // A `message_end` waits for its entry's append (see `session::durability`).
            out.send_after(event.to_json_line(), durability.barrier());
            if matches!(event, AgentSessionEvent::AgentSettled) {
                shutdown.check();
            }
            Ok(())
        });
        if let Some(old) = lock(&self.subscription).replace(sub) {
            old.unsubscribe();
        }
    }

    fn unsubscribe(&self) {
        if let Some(old) = lock(&self.subscription).take() {
            old.unsubscribe();
        }
    }

    /// The extension hooks of the current session.
    pub(crate) fn extensions(&self) -> Option<Arc<ExtensionHooks>> {
        lock(&self.extensions).clone()
    }

    /// Makes `session` current (after a session-replacing command) and re-subscribes; a
    /// session already current (the host's rebind callback ran) is left alone.
    pub(crate) fn rebind(&self, session: AgentSession) {
        if Arc::ptr_eq(self.session().store(), session.store()) {
            return;
        }
        self.subscribe(&session);
        *lock(&self.session) = session;
    }

    /// pi's `rebindSession`: the extension hooks get the RPC UI, the `extension_error`
    /// output and the `ctx.shutdown()` handler; the session's events are written.
    fn bind(self: &Arc<Self>, session: &AgentSession, extensions: Option<&Arc<ExtensionHooks>>) {
        if let Some(ext) = extensions {
            ext.runner().set_ui(self.ui.clone());
            let o = self.out.clone();
            ext.runner()
                .on_error(Arc::new(move |record| o.send(record.rpc_record())));
            let shared = Arc::downgrade(self);
            ext.set_shutdown_handler(Arc::new(move || {
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                shared.shutdown.requested.store(true, Ordering::SeqCst);
                if shared.session().is_idle() {
                    shared.shutdown.check();
                }
            }));
        }
        *lock(&self.extensions) = extensions.cloned();
        self.rebind(session.clone());
    }
}

/// Runs RPC mode: reads commands from `reader` until end of input, writes responses and
/// events to `writer`, then shuts the session down. Returns the exit status (0).
///
/// `runtime` is an [`RpcRuntime`] (or just an [`AgentSession`]). When it carries extension
/// hooks, their runner gets the RPC UI and an error listener writing `extension_error`
/// records.
pub async fn run_rpc<R, W>(runtime: impl Into<RpcRuntime>, reader: R, writer: W) -> i32
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let runtime = runtime.into();
    let (out, writer_task) = spawn_writer(writer);
    let ui = Arc::new(RpcUi::new(out.clone()));
    let shutdown = Arc::new(ShutdownFlag::default());
    let session = runtime.session.clone();
    let extensions = runtime.extensions.clone();
    let host = runtime.host.clone();
    let shared = Arc::new(Shared {
        runtime,
        session: Mutex::new(session.clone()),
        extensions: Mutex::new(None),
        subscription: Mutex::new(None),
        out: out.clone(),
        ui,
        shutdown,
    });
    shared.subscribe(&session);
    shared.bind(&session, extensions.as_ref());
    if let Some(host) = &host {
        let weak = Arc::downgrade(&shared);
        host.set_rebind(Some(Arc::new(move |session, extensions| {
            if let Some(shared) = weak.upgrade() {
                shared.bind(session, extensions);
            }
        })));
    }

    if shared.runtime.bind_startup {
        crate::app::extensions::bind_startup(extensions.as_ref(), &session).await;
    }

    let mut lines = LineReader::new(reader);
    let mut tasks = JoinSet::new();
    loop {
        let line = tokio::select! {
            line = lines.next_record() => match line {
                Ok(Some(Ok(line))) => line,
                Ok(Some(Err(too_long))) => {
                    shared.out.send(super::commands::error_response(
                        None,
                        Some(&serde_json::Value::from("parse")),
                        &format!("Failed to parse command: {too_long}"),
                    ));
                    continue;
                }
                _ => break,
            },
            () = shared.shutdown.now.notified() => break,
        };
        match parse_line(&line) {
            Incoming::Invalid(response) => shared.out.send(response),
            Incoming::UiResponse { id, response } => {
                shared.ui.resolve(&id, response);
            }
            Incoming::Command { id, name, command } if command.is_immediate() => {
                handlers::handle(&shared, id, name, command).await;
            }
            Incoming::Command { id, name, command } => {
                let s = Arc::clone(&shared);
                tasks.spawn(async move { handlers::handle(&s, id, name, command).await });
            }
        }
        while tasks.try_join_next().is_some() {}
    }

    // End of input or `ctx.shutdown()`: pi's shutdown().
    if let Some(host) = &host {
        host.set_rebind(None);
    }
    shared.unsubscribe();
    shared.ui.close();
    shared
        .session()
        .shutdown(crate::session::ShutdownReason::Quit, None)
        .await;
    // Runs are aborted, dialogs released and user commands killed: what is still in flight
    // finishes now and its response is written.
    while tasks.join_next().await.is_some() {}
    out.close();
    let _ = writer_task.await;
    0
}
