//! `pi.exec(command, args, options)`: runs a program without a shell and collects its output.
//!
//! Mirrors pi-coding-agent 0.85.0 `core/exec.js` (`execCommand`) and
//! `utils/child-process.js` (`waitForChildProcess`):
//! - the program is spawned directly (no shell) in `options.cwd`, else the extension's
//!   working directory, with stdin closed and stdout/stderr captured;
//! - a cancelled `signal` (already, or later) or an elapsed `timeout` kills it: `SIGTERM`,
//!   then `SIGKILL` if it is still there 5 s later; the result says `killed: true`;
//! - `code` is the exit status; a process ended by a signal reports 0 (Node's exit code is
//!   `null` then, and pi writes `code ?? 0`); a program that cannot be started gives code 1
//!   with empty output;
//! - after the process exits, output still arriving (a background child holding the pipes)
//!   is read until the pipes stay quiet for 100 ms.
//!
//! Output is decoded as UTF-8 once it is complete (invalid bytes become U+FFFD); Node decodes
//! each chunk separately, which can also split a character at a chunk boundary.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How long a process may ignore `SIGTERM` before it gets `SIGKILL`.
pub const KILL_GRACE: Duration = Duration::from_secs(5);

/// How long the pipes may stay quiet after the exit before the output counts as complete.
pub const EXIT_STDIO_GRACE: Duration = Duration::from_millis(100);

/// `options` of `pi.exec`.
#[derive(Clone, Debug, Default)]
pub struct ExecOptions {
    /// Cancelling it kills the process.
    pub signal: Option<CancellationToken>,
    /// Kills the process when it runs longer (none or zero: no limit).
    pub timeout: Option<Duration>,
    /// The working directory (default: the extension's).
    pub cwd: Option<std::path::PathBuf>,
}

/// What `pi.exec` resolves to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecResult {
    /// Everything the process wrote to stdout.
    pub stdout: String,
    /// Everything it wrote to stderr.
    pub stderr: String,
    /// The exit status (0 after a signal, 1 when it could not be started).
    pub code: i32,
    /// Whether the signal or the timeout killed it.
    pub killed: bool,
}

enum Chunk {
    Out(Vec<u8>),
    Err(Vec<u8>),
}

fn pump<R>(mut reader: R, tx: mpsc::UnboundedSender<Chunk>, out: bool)
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let chunk = buf[..n].to_vec();
                    let sent = tx.send(if out {
                        Chunk::Out(chunk)
                    } else {
                        Chunk::Err(chunk)
                    });
                    if sent.is_err() {
                        break;
                    }
                }
            }
        }
    });
}

fn send_sigterm(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: signalling our own child, which has not been reaped yet (we still hold it).
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
}

/// Runs `command` with `args` in `cwd` (see the module docs).
pub async fn exec_command(
    command: &str,
    args: &[String],
    cwd: &Path,
    options: ExecOptions,
) -> ExecResult {
    let spawned = tokio::process::Command::new(command)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(_) => {
            return ExecResult {
                code: 1,
                ..ExecResult::default()
            };
        }
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    if let Some(out) = child.stdout.take() {
        pump(out, tx.clone(), true);
    }
    if let Some(err) = child.stderr.take() {
        pump(err, tx, false);
    }
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let mut take = |chunk: Chunk| match chunk {
        Chunk::Out(c) => stdout.extend_from_slice(&c),
        Chunk::Err(c) => stderr.extend_from_slice(&c),
    };

    let signal = options.signal.unwrap_or_default();
    let deadline = options
        .timeout
        .filter(|t| !t.is_zero())
        .map(|t| tokio::time::Instant::now() + t);
    let mut killed = false;
    let mut kill_at: Option<tokio::time::Instant> = None;
    let status = loop {
        let timeout = async {
            match deadline {
                Some(d) if !killed => tokio::time::sleep_until(d).await,
                _ => std::future::pending().await,
            }
        };
        let force = async {
            match kill_at {
                Some(k) => tokio::time::sleep_until(k).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            status = child.wait() => break status.ok(),
            Some(chunk) = rx.recv() => take(chunk),
            _ = signal.cancelled(), if !killed => {
                killed = true;
                send_sigterm(child.id());
                kill_at = Some(tokio::time::Instant::now() + KILL_GRACE);
            }
            _ = timeout => {
                killed = true;
                send_sigterm(child.id());
                kill_at = Some(tokio::time::Instant::now() + KILL_GRACE);
            }
            _ = force => {
                let _ = child.start_kill();
                kill_at = None;
            }
        }
    };
    // The pipes until they close, or stay quiet for the grace after the exit.
    while let Ok(Some(chunk)) = tokio::time::timeout(EXIT_STDIO_GRACE, rx.recv()).await {
        take(chunk);
    }
    ExecResult {
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        code: status.and_then(|s| s.code()).unwrap_or(0),
        killed,
    }
}
