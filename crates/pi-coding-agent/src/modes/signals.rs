//! Terminating signals in the non-interactive modes.
//!
//! Mirrors pi-coding-agent 0.85.0 (spec Corrections box, §6.5): SIGTERM and SIGHUP kill the
//! tools' child process groups, print nothing more and exit with 143 / 129. On SIGINT the
//! reference dies of the signal and leaves bash children running; pi-rs does the same
//! clean-up as for SIGTERM first and then dies of SIGINT (a documented improvement).
//!
//! "Pending session appends finish": session writes happen under the store's mutex, so
//! [`settle_store`] takes that lock — an append in progress completes, none starts after.

use std::sync::{Mutex, MutexGuard};

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::storage::SessionStore;
use crate::tools::bash::executor::kill_tracked_process_groups;

/// A terminating signal the modes handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terminate {
    /// SIGTERM: exit status 143.
    Term,
    /// SIGHUP: exit status 129.
    Hup,
    /// SIGINT: the process dies of the signal.
    Int,
}

impl Terminate {
    /// The exit status pi uses (128 + signal number).
    pub fn exit_code(self) -> i32 {
        match self {
            Terminate::Term => 143,
            Terminate::Hup => 129,
            Terminate::Int => 130,
        }
    }
}

/// The installed handlers (installing them replaces the default actions).
pub struct Signals {
    term: Signal,
    hup: Signal,
    int: Signal,
}

impl Signals {
    /// Installs handlers for SIGTERM, SIGHUP and SIGINT. Must run inside a tokio runtime.
    ///
    /// # Errors
    /// The OS refused a handler.
    pub fn install() -> std::io::Result<Self> {
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// Waits for the next terminating signal.
    pub async fn recv(&mut self) -> Terminate {
        tokio::select! {
            _ = self.term.recv() => Terminate::Term,
            _ = self.hup.recv() => Terminate::Hup,
            _ = self.int.recv() => Terminate::Int,
        }
    }
}

/// Waits until no session append is in progress and keeps further appends out (the guard
/// is held until the process exits).
pub fn settle_store(store: &Mutex<SessionStore>) -> MutexGuard<'_, SessionStore> {
    store.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kills every tool process group still running.
pub fn kill_children() {
    kill_tracked_process_groups();
}

/// Restores SIGINT's default action and raises it: the process dies of the signal (its
/// parent sees `WIFSIGNALED`, as with the reference). Returns only if the signal could not
/// be delivered.
pub fn die_of_sigint() {
    // SAFETY: plain syscalls resetting a disposition and raising a signal in this process.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::raise(libc::SIGINT);
    }
}
