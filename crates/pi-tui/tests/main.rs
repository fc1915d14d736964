//! pi-tui's integration tests: the chat example in a pty against the screen model, tmux, and
//! bad input through the whole frame pipeline.

mod bad_input;
mod pty_chat;
mod support;
mod tmux;
