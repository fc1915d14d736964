//! # pi-coding-agent
//!
//! The product layer of pi-rs — the Rust port of pi-coding-agent 0.85.0: `AgentSession` and
//! its session events, extensions, compaction, auto-retry, JSONL session persistence, the
//! built-in tools, and the `pi` binary (print, json and rpc modes).
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

/// The version this build reports (`pi --version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The pi-coding-agent release whose behaviour this crate reproduces.
pub const REFERENCE_VERSION: &str = "0.85.0";

pub mod app;
pub mod auth_command;
pub mod cli;
pub mod compaction;
pub mod config;
pub mod extensions;
pub mod messages;
pub mod modes;
pub mod packages;
pub mod platform;
pub mod rpc;
pub mod runtime;
pub mod session;
pub mod storage;
mod sync;
pub mod tools;
