//! RPC mode on the process's stdin/stdout, with its terminating signals.
//!
//! Mirrors pi-coding-agent 0.85.0 `runRpcMode` (`registerSignalHandlers`, `shutdown`):
//! SIGTERM and SIGHUP kill the tracked child process groups (bash
//! tool and user bash) and end the process with 143 / 129, writing nothing more. SIGINT keeps
//! its default action (the process dies of the signal), as in pi's RPC mode. End of input is
//! [`run_rpc`]'s normal end (exit 0).

use super::{RpcRuntime, run_rpc};
use crate::tools::bash::executor::kill_tracked_process_groups;

/// Serves `runtime` on stdin/stdout until end of input (0) or SIGTERM (143) / SIGHUP (129).
/// Must run inside a tokio runtime; the caller exits with the returned status.
pub async fn serve_stdio(runtime: RpcRuntime) -> i32 {
    use tokio::signal::unix::{SignalKind, signal};
    let (term, hup) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    );
    let serve = run_rpc(runtime, tokio::io::stdin(), tokio::io::stdout());
    let (Ok(mut term), Ok(mut hup)) = (term, hup) else {
        // Without handlers the signals keep their default actions.
        return serve.await;
    };
    tokio::select! {
        code = serve => code,
        _ = term.recv() => {
            kill_tracked_process_groups();
            143
        }
        _ = hup.recv() => {
            kill_tracked_process_groups();
            129
        }
    }
}
