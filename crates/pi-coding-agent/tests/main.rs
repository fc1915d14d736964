//! One integration-test binary for the crate: every file beside this one is a module of it
//! (one link instead of one per file keeps the debug build small). Helpers are declared
//! here once; test files reach them with `use crate::<helper>;`. Two files are binaries of their
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

mod abort_loop;
mod auth_broken_binary;
mod bad_files;
mod bash_tool;
mod cli;
mod cli_pty;
mod compaction;
mod compaction_extensions;
mod compaction_fit;
mod compaction_ports;
mod compaction_retry;
mod compaction_retry_binary;
mod compaction_session;
mod config_startup;
mod conformance;
mod conformance_normalize;
mod doc_snippets;
mod edit_diff_reference;
mod extension_commands;
mod extensions_api;
mod extensions_chaining;
mod extensions_config;
mod extensions_exec;
mod extensions_lifecycle;
mod extensions_process;
mod extensions_runner;
mod extensions_session;
mod fault_injection;
mod grep_find;
mod hostile_input;
mod html_viewer;
mod interactive;
mod interactive_commands;
mod interactive_ext_ui;
mod interactive_keys;
mod interactive_start;
mod interactive_themes;
mod kill_durability;
mod library_use;
mod listeners_load;
mod model_cycling;
mod model_scope_binary;
mod modes_runs;
mod modes_signals;
mod newuser_tryout;
mod oauth_binary;
mod providers_binary;
mod read_ls_reference;
mod request_headers_binary;
mod resources_binary;
mod rpc_binary;
mod rpc_command_actions;
mod rpc_kill;
mod rpc_mode;
mod rpc_runtime;
mod rpc_ui;
mod runtime_host;
mod secrets_binary;
mod session_features;
mod session_goldens;
mod session_hooks;
mod session_lifecycle;
mod session_ports;
mod session_retry;
mod session_robustness;
mod session_selection;
mod session_store;
mod session_tree_export;
mod store_barrier;
mod streams;
mod streams_check;
mod tool_prompts;
mod tools_files;
mod tree_navigation;
