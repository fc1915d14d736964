//! `pi --mode rpc` in the binary: the session from the command line, then RPC on
//! stdin/stdout.
//!
//! Mirrors pi-coding-agent 0.85.0 `main.js` → `runRpcMode`: start-up errors
//! print `Error: …` on stderr and exit 1 (as in the other modes, [`crate::modes::setup`]);
//! otherwise [`serve_stdio`] runs until end of input (0), SIGTERM (143) or SIGHUP (129).
//! Nothing is written to stdout before the first command. Session replacement runs on a
//! [`RuntimeHost`] whose factory is the setup's ([`crate::modes::setup::SessionSetup`]);
//! `get_commands` lists the prompt templates and skills the setup loaded.

use std::io::Write;
use std::sync::Arc;

use super::{RpcRuntime, serve_stdio};
use crate::cli::ModeRequest;
use crate::config::paths::AgentPaths;
use crate::config::registry::ModelRegistry;
use crate::runtime::RuntimeHost;

/// Runs RPC mode for `request`; returns the exit status.
pub fn run_rpc_mode(request: ModeRequest, stderr: &mut dyn Write) -> i32 {
    let Some(runtime) = crate::modes::mode_runtime(stderr) else {
        return 1;
    };
    let code = runtime.block_on(async {
        let setup = match crate::modes::setup::build_session(&request, stderr) {
            Ok(s) => s,
            Err(e) => {
                let _ = writeln!(stderr, "{}", e.line());
                return 1;
            }
        };
        // The runtime host replaces the session (`new_session`, `switch_session`, `fork`,
        // `clone`) with sessions built like this one.
        let host = RuntimeHost::with_session(
            setup.factory,
            setup.session.clone().into(),
            request.cwd.clone(),
        );
        let mut rpc = RpcRuntime::new(setup.session);
        rpc.host = Some(Arc::new(host));
        rpc.templates = setup.templates;
        rpc.skills = setup.skills;
        // The available-models snapshot (models whose provider has auth), as pi's
        // `modelRuntime.getAvailableSnapshot()`.
        let registry = ModelRegistry::load(&AgentPaths::new(request.agent_dir.clone()));
        rpc.models = Some(Arc::new(move || {
            registry.available().into_iter().cloned().collect()
        }));
        serve_stdio(rpc).await
    });
    // A tool may still be blocked after a signal: do not wait for it.
    runtime.shutdown_background();
    code
}
