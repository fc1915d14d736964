//! `pi --mode rpc` in the binary: RPC on stdin/stdout over the session the launch built.
//!
//! Mirrors pi-coding-agent 0.85.0 `main.js` → `runRpcMode`: [`serve_stdio`] runs until end of
//! input (0), SIGTERM (143) or SIGHUP (129). Nothing is written to stdout before the first
//! command but the extension UI requests of `session_start` handlers. Session replacement runs on the launch's runtime host ([`crate::app::Running`]);
//! `get_commands` lists the prompt templates and skills loaded with the first session.

use super::{RpcRuntime, serve_stdio};
use crate::app::Running;

/// Serves `running` on stdin/stdout; returns the exit status. Must run inside a tokio
/// runtime.
pub(crate) async fn serve(running: Running) -> i32 {
    let extensions = running.host.extensions();
    let mut rpc = RpcRuntime::new(running.session);
    // `session_start` runs once the RPC UI is bound: its notifications and dialogs reach the
    // client, as in pi.
    rpc.bind_startup = true;
    rpc.extensions = extensions;
    rpc.host = Some(running.host);
    rpc.templates = running.templates;
    rpc.skills = running.skills;
    rpc.models = Some(running.available_models);
    serve_stdio(rpc).await
}
