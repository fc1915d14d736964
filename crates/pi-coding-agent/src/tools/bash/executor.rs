//! Runs one shell command in its own session and process group, streaming its output.
//!
//! Mirrors pi 0.85.0 `createLocalBashOperations().exec` (`core/tools/bash.ts`), `killProcessTree`
//! (`utils/shell.ts`) and `waitForChildProcess` (`utils/child-process.ts`), Unix only:
//!
//! - the command runs as `<shell> -c <command>` with stdin from `/dev/null`, stdout and stderr
//!   piped and delivered interleaved, in arrival order, to the caller;
//! - the shell is started with `setsid()` (pi's `detached: true`), so it leads a new session and
//!   process group whose id is its pid; abort and timeout send `SIGKILL` to that whole group,
//!   grandchildren included;
//! - the wait ends when the shell has exited and both pipes reached end of file, or when the
//!   pipes stay quiet for 100 ms after the exit (a background grandchild may hold them open;
//!   each chunk arriving after the exit re-arms that grace period). Such grandchildren are
//!   left running, as in pi;
//! - if the future is dropped before it completes, the process group is killed;
//! - running groups are tracked so a terminating signal can kill them all
//!   ([`kill_tracked_process_groups`], pi `killTrackedDetachedChildren` on SIGTERM/SIGHUP).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use pi_agent_core::ToolError;
use tokio::io::AsyncReadExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::shell::{Env, resolve_shell};

/// How long the pipes may stay quiet after the shell exited before the wait ends anyway.
pub const EXIT_STDIO_GRACE: Duration = Duration::from_millis(100);

/// One command to run.
#[derive(Clone, Debug, Default)]
pub struct ExecRequest {
    /// The full command text (any `shellCommandPrefix` already prepended).
    pub command: String,
    /// Working directory; it must exist.
    pub cwd: PathBuf,
    /// Explicit shell (settings `shellPath`); `None` resolves `/bin/bash`, `bash`, `sh`.
    pub shell_path: Option<PathBuf>,
    /// The complete child environment (nothing else is inherited).
    pub env: Env,
    /// Kill the process group after this long.
    pub timeout: Option<Duration>,
}

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecOutcome {
    /// The shell exited on its own: `Some(code)`, or `None` when a signal not sent by us
    /// terminated it (pi's `exitCode: null`).
    Exited(Option<i32>),
    /// The timeout elapsed and the process group was killed.
    TimedOut,
    /// `cancel` fired (before or during the run); the process group was killed.
    Aborted,
}

/// Runs `req`, calling `on_data` with each raw chunk of stdout or stderr.
///
/// Checks, in pi's order: an already-cancelled token → `Ok(Aborted)` without spawning; the
/// shell (`Custom shell path not found: <path>`); the working directory
/// (`Working directory does not exist: <cwd>\nCannot execute bash commands.`). A failed spawn
/// reports like Node (`spawn <shell> ENOENT`).
pub async fn run_command(
    req: &ExecRequest,
    cancel: &CancellationToken,
    mut on_data: impl FnMut(&[u8]),
) -> Result<ExecOutcome, ToolError> {
    if cancel.is_cancelled() {
        return Ok(ExecOutcome::Aborted);
    }
    let shell = resolve_shell(req.shell_path.as_deref())?;
    if !req.cwd.exists() {
        return Err(ToolError::new(format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            req.cwd.display()
        )));
    }

    let mut cmd = tokio::process::Command::new(&shell.shell);
    cmd.args(&shell.args)
        .arg(&req.command)
        .current_dir(&req.cwd)
        .env_clear()
        .envs(&req.env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: `setsid` is async-signal-safe and touches no memory of the parent; it runs in
    // the forked child before exec. It makes the shell a session and process-group leader so
    // the whole tree can be signalled through its pid and it has no controlling terminal.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|err| ToolError::new(spawn_error_text(&shell.shell, &err)))?;
    let pid = child.id().and_then(|p| i32::try_from(p).ok());
    let mut guard = GroupGuard { pid, armed: true };
    let _tracked = Tracked::new(pid);

    let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(ToolError::new("spawn failed: missing stdio pipes"));
    };
    let mut out_buf = vec![0u8; 64 * 1024];
    let mut err_buf = vec![0u8; 64 * 1024];
    let (mut out_open, mut err_open) = (true, true);
    let mut status: Option<std::process::ExitStatus> = None;
    let far_future = Instant::now() + Duration::from_secs(60 * 60 * 24 * 365);
    let deadline = req.timeout.map(|t| Instant::now() + t);
    let mut grace: Option<Instant> = None;
    let (mut killed, mut timed_out) = (false, false);

    loop {
        if status.is_some() && !out_open && !err_open {
            break;
        }
        tokio::select! {
            // Abort and timeout first, so a command flooding its pipes cannot starve them;
            // then stdout before stderr, so output written in that order is seen in order.
            biased;
            _ = cancel.cancelled(), if !killed => {
                kill_process_group(pid);
                killed = true;
            },
            _ = tokio::time::sleep_until(deadline.unwrap_or(far_future)),
                if deadline.is_some() && !killed => {
                timed_out = true;
                kill_process_group(pid);
                killed = true;
            },
            read = stdout.read(&mut out_buf), if out_open => match read {
                Ok(0) | Err(_) => out_open = false,
                Ok(n) => {
                    on_data(&out_buf[..n]);
                    if status.is_some() {
                        grace = Some(Instant::now() + EXIT_STDIO_GRACE);
                    }
                }
            },
            read = stderr.read(&mut err_buf), if err_open => match read {
                Ok(0) | Err(_) => err_open = false,
                Ok(n) => {
                    on_data(&err_buf[..n]);
                    if status.is_some() {
                        grace = Some(Instant::now() + EXIT_STDIO_GRACE);
                    }
                }
            },
            waited = child.wait(), if status.is_none() => {
                let exit = waited.map_err(|e| ToolError::new(e.to_string()))?;
                status = Some(exit);
                grace = Some(Instant::now() + EXIT_STDIO_GRACE);
            },
            _ = tokio::time::sleep_until(grace.unwrap_or(far_future)), if grace.is_some() => break,
        }
    }
    guard.armed = false;

    if cancel.is_cancelled() {
        return Ok(ExecOutcome::Aborted);
    }
    if timed_out {
        return Ok(ExecOutcome::TimedOut);
    }
    Ok(ExecOutcome::Exited(status.and_then(|s| s.code())))
}

/// Kills the process group on drop while armed (the run future was dropped mid-way).
struct GroupGuard {
    pid: Option<i32>,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_process_group(self.pid);
        }
    }
}

/// Process groups of commands still running (pi `trackedDetachedChildPids`).
static TRACKED: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Registers a running group for [`kill_tracked_process_groups`]; unregisters on drop.
struct Tracked(Option<i32>);

impl Tracked {
    fn new(pid: Option<i32>) -> Self {
        if let Some(pid) = pid {
            crate::sync::lock(&TRACKED).insert(pid);
        }
        Tracked(pid)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            crate::sync::lock(&TRACKED).remove(&pid);
        }
    }
}

/// Kills the process group of every command still running (bash tool and user bash) and
/// forgets them. For the binary's SIGTERM/SIGHUP handling (pi kills them before exiting with
/// 143/129).
pub fn kill_tracked_process_groups() {
    let pids = std::mem::take(&mut *crate::sync::lock(&TRACKED));
    for pid in pids {
        kill_process_group(Some(pid));
    }
}

/// `SIGKILL` to the process group `pid` leads, falling back to the process alone
/// (pi `killProcessTree` on Unix). Errors (already gone) are ignored.
pub fn kill_process_group(pid: Option<i32>) {
    let Some(pid) = pid.filter(|&p| p > 0) else {
        return;
    };
    // SAFETY: plain syscalls with integer arguments; a stale pid at worst yields ESRCH.
    unsafe {
        if libc::kill(-pid, libc::SIGKILL) != 0 {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// Node's spawn error text: `spawn <file> <ERRNO NAME>`.
fn spawn_error_text(shell: &Path, err: &std::io::Error) -> String {
    let code = match err.raw_os_error() {
        Some(libc::ENOENT) => "ENOENT",
        Some(libc::EACCES) => "EACCES",
        Some(libc::ENOTDIR) => "ENOTDIR",
        Some(libc::ENOEXEC) => "ENOEXEC",
        Some(libc::E2BIG) => "E2BIG",
        Some(libc::EPERM) => "EPERM",
        _ => return format!("spawn {} {err}", shell.display()),
    };
    format!("spawn {} {code}", shell.display())
}
