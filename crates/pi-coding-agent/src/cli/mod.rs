//! The `pi` command line: argv → a validated [`Command`] (a [`LaunchConfig`] for a run).
//!
//! Mirrors pi-coding-agent 0.85.0 `cli/args.js` and the argument checks of `main.js`. This
//! module only parses: it reads no file and starts nothing. What follows the command line
//! (the session, the modes) lives in [`crate::app`], [`crate::modes`] and [`crate::rpc`];
//! the binary's `main` dispatches between them.
//!
//! | module | job |
//! |---|---|
//! | [`args`] | the hand-written scanner: argv → raw [`Args`] and its diagnostics |
//! | [`launch`] | pi's order of checks: raw arguments → [`Command`] / [`LaunchConfig`] |
//! | [`mode`] | the mode a run uses ([`AppMode`]) |
//! | [`help`] | the `--help` text |
//! | [`packages`] | the arguments of `pi install/remove/update/list` |

pub(crate) mod args;
pub(crate) mod help;
pub(crate) mod launch;
pub(crate) mod mode;
pub(crate) mod packages;

pub(crate) use launch::{CliEnv, Command, LaunchConfig, SessionFlags, is_truthy_env_flag, parse};
pub(crate) use mode::AppMode;
