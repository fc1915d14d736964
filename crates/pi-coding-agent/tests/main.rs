//! One integration-test binary for the crate (one link instead of one per file keeps the debug
//! build small). The test files are grouped by behaviour, a directory a group, declared below;
//! helpers are declared here once and reached with `use crate::<helper>;`. Two files are binaries of their
//! own, for process-wide effects: `secrets.rs` (sets an environment variable, installs a
//! tracing subscriber) and `bash_kill_tracked.rs` (kills every bash command of the process).

mod extensions_rig;
mod extensions_support;
mod rpc_support;
mod session_support;
mod support {
    pub(crate) mod anthropic_sse;
    pub(crate) mod binary_rig;
    pub(crate) mod conformance;
    pub(crate) mod kill_loop;
    pub(crate) mod node_host;
    pub(crate) mod pi_bin;
    pub(crate) mod pty_rig;
    pub(crate) mod replay_env;
    pub(crate) mod rpc_kill;
    pub(crate) mod streams;
}

/// The agent loop and providers: aborts, listeners under load, provider wire formats and request headers.
mod streaming {
    mod abort;
    mod listeners_load;
    mod providers;
    mod request_headers;
}
/// The shared conformance scenarios and the recorded provider streams, diffed with the TS goldens.
mod conformance {
    mod normalize;
    mod scenarios;
    mod streams;
    mod streams_check;
}
/// The built-in tools: bash, read, write, edit, ls, grep, find, their schemas and prompts.
mod tools {
    mod bash;
    mod edge_cases;
    mod edit_diff;
    mod files;
    mod grep_find;
    mod prompts;
    mod read_ls;
}
/// Sessions: the JSONL store, goldens the TS pi wrote, lifecycle, hooks, retry, tree navigation, models.
mod sessions {
    mod features;
    mod goldens;
    mod hooks;
    mod library_use;
    mod lifecycle;
    mod model_cycling;
    mod retry;
    mod robustness;
    mod selection;
    mod slow_handlers;
    mod store;
    mod store_barrier;
    mod tree_export;
    mod tree_navigation;
}
/// Compaction: planning the cut, the summary request, fitting, retry, extension hooks.
mod compaction {
    mod extensions;
    mod fit;
    mod planning;
    mod retry;
    mod retry_binary;
    mod session;
    mod summary_request;
}
/// Extensions: the Rust API and runner, chaining, configuration, exec, extension processes.
mod extensions {
    mod api;
    mod chaining;
    mod commands;
    mod config;
    mod exec;
    mod lifecycle;
    mod process;
    mod runner;
    mod session;
}
/// RPC mode: the protocol over stdin/stdout, its commands, UI requests and the runtime host.
mod rpc {
    mod binary;
    mod command_actions;
    mod export_html;
    mod kill;
    mod mode;
    mod runtime;
    mod runtime_host;
    mod ui;
}
/// The command line: arguments, terminals and pipes, start-up, modes, signals, logins, export.
mod cli {
    mod args;
    mod auth_broken;
    mod config_startup;
    mod doc_snippets;
    mod html_viewer;
    mod model_scope;
    mod modes_runs;
    mod oauth;
    mod packages;
    mod resources;
    mod secrets;
    mod session_paths;
    mod signals;
    mod terminals;
}
/// The interactive mode in a pty with a screen model: chat, keys, commands, themes, extension UI.
mod interactive {
    mod chat;
    mod commands;
    mod extension_ui;
    mod keys;
    mod start;
    mod themes;
}
/// Hostile and broken input, injected faults and kills: the run completes and no data is lost.
mod robustness {
    mod bad_files;
    mod fault_injection;
    mod hostile_input;
    mod kill_durability;
}
