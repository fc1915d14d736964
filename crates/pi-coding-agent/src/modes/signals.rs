//! Terminating signals in the non-interactive modes.
//!
//! Mirrors pi-coding-agent 0.85.0: SIGTERM and SIGHUP kill the
//! tools' child process groups, print nothing more and exit with 143 / 129. On SIGINT the
//! reference dies of the signal and leaves bash children running; pi-rs does the same
//! clean-up as for SIGTERM first and then dies of SIGINT (a documented improvement).
//!
//! "Pending session appends finish": session writes happen under the store's mutex, so
//! [`settle_store`] takes that lock — an append in progress completes, none starts after.

use std::sync::{Mutex, MutexGuard};

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::storage::SessionStore;
use crate::tools::bash::executor::{kill_process_group, kill_tracked_process_groups};

/// A terminating signal the modes handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Terminate {
    /// SIGTERM: exit status 143.
    Term,
    /// SIGHUP: exit status 129.
    Hup,
    /// SIGINT: the process dies of the signal.
    Int,
}

impl Terminate {
    /// The exit status pi uses (128 + signal number).
    pub(crate) fn exit_code(self) -> i32 {
        match self {
            Terminate::Term => 143,
            Terminate::Hup => 129,
            Terminate::Int => 130,
        }
    }
}

/// The installed handlers (installing them replaces the default actions).
pub(crate) struct Signals {
    term: Signal,
    hup: Signal,
    int: Signal,
}

impl Signals {
    /// Installs handlers for SIGTERM, SIGHUP and SIGINT. Must run inside a tokio runtime.
    ///
    /// # Errors
    /// The OS refused a handler.
    pub(crate) fn install() -> std::io::Result<Self> {
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// Waits for the next terminating signal.
    pub(crate) async fn recv(&mut self) -> Terminate {
        tokio::select! {
            _ = self.term.recv() => Terminate::Term,
            _ = self.hup.recv() => Terminate::Hup,
            _ = self.int.recv() => Terminate::Int,
        }
    }
}

/// Waits until no session append is in progress and keeps further appends out (the guard
/// is held until the process exits).
pub(crate) fn settle_store(store: &Mutex<SessionStore>) -> MutexGuard<'_, SessionStore> {
    crate::sync::lock(store)
}

/// Kills every tool process group still running: the tracked ones, and the group of every
/// direct child process (a shell whose spawn has not returned yet is not tracked yet; tool
/// shells lead their own group, so killing a child's group kills its whole tree; a child
/// that leads no group is killed alone).
pub(crate) fn kill_children() {
    kill_tracked_process_groups();
    for pid in direct_children() {
        kill_process_group(Some(pid));
    }
}

/// The pids whose parent is this process (Linux `/proc`; empty elsewhere).
fn direct_children() -> Vec<i32> {
    let me = std::process::id().to_string();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // `pid (comm) state ppid …`; comm may contain spaces and parentheses.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1).map(|p| p == me))
                    .unwrap_or(false)
            })
        })
        .collect()
}

/// Restores SIGINT's default action and raises it: the process dies of the signal (its
/// parent sees `WIFSIGNALED`, as with the reference). Returns only if the signal could not
/// be delivered.
pub(crate) fn die_of_sigint() {
    // SAFETY: plain syscalls resetting a disposition and raising a signal in this process.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::raise(libc::SIGINT);
    }
}
