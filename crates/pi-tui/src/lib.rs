//! `pi-tui`: the terminal toolkit under pi's interactive mode.
//!
//! It mirrors the contract of `@earendil-works/pi-tui` 0.85.1 — components render themselves to
//! lines of ANSI-styled text for a given width and take decoded input while focused — and
//! renders them differently: finished history is written to the terminal's scrollback once, and
//! only a live region at the bottom is repainted. This crate depends on no other pi-rs crate.
#![warn(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod ansi;
pub mod capabilities;
pub mod cells;
pub mod component;
pub mod components;
pub mod fullscreen;
pub mod fuzzy;
pub mod highlight;
pub mod history;
pub mod inline;
pub mod input;
pub mod input_seam;
pub mod keybindings;
pub mod keys;
pub mod overlay;
pub mod paint;
pub mod style;
pub mod terminal;
pub mod terminal_colors;
pub mod terminal_image;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod theme;
pub mod tui;

pub use component::{CURSOR_MARKER, Component};
pub use input::{InputEvent, KeyCode, KeyEvent, KeyEventKind, Modifiers};
