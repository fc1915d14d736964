//! The `pi` command line: argument parsing, start-up checks, the initial prompt, mode choice.
//!
//! Mirrors pi-coding-agent 0.85.0 `cli/args.js`, `cli/file-processor.js`,
//! `cli/initial-message.js` and `main.js`. The modes themselves run behind
//! [`mode::run_mode`].

pub mod args;
pub mod export;
pub mod help;
pub mod input;
pub mod mode;
pub mod startup;

pub use args::{Args, parse_args};
pub use mode::{AppMode, ModeRequest, resolve_app_mode, run_mode};
pub use startup::{Host, run};
