//! `pi-tui`: the terminal toolkit under pi's interactive mode.
//!
//! It mirrors the contract of `@earendil-works/pi-tui` 0.85.1 — components render themselves to
//! lines of ANSI-styled text for a given width and take decoded input while focused — and
//! renders them differently: finished history is written to the terminal's scrollback once, and
//! only a live region at the bottom is repainted. This crate depends on no other pi-rs crate.
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod component;
pub mod components;
pub mod input;
pub mod keybindings;
pub mod keys;
pub mod style;
pub mod terminal_colors;
pub mod theme;

pub use component::{CURSOR_MARKER, Component};
pub use input::{InputEvent, KeyCode, KeyEvent, KeyEventKind, Modifiers};
