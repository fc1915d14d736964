//! Shared helpers: where the example binary is, and how to start it in a pty.

use std::path::PathBuf;
use std::time::Duration;

use pi_tui::testkit::CommandBuilder;
use pi_tui::testkit::{Answers, PtySession};

/// The chat example built by `cargo test` (examples are built with the tests), next to this
/// test binary's directory.
pub(crate) fn chat_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .map(PathBuf::from)
        .unwrap_or_default();
    let p = dir.join("examples").join("chat");
    assert!(
        p.exists(),
        "{} missing: `cargo test -p pi-tui` builds it; with `--test integration` alone, build it \
         first (`cargo build -p pi-tui --example chat`), or a stale one runs",
        p.display()
    );
    p
}

/// Starts the chat example in a `rows`×`cols` pty with fast deltas.
pub(crate) fn spawn_chat(
    rows: u16,
    cols: u16,
    answers: Answers,
    extra_env: &[(&str, &str)],
) -> PtySession {
    let mut cmd = CommandBuilder::new(chat_binary());
    cmd.env("PI_TUI_CHAT_DELTA_MS", "1");
    cmd.env_remove("TMUX");
    cmd.env("NO_COLOR", "1");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    match PtySession::spawn(cmd, rows, cols, answers) {
        Ok(s) => s,
        Err(e) => panic!("spawn: {e}"),
    }
}

/// Generous time for a debug build on a loaded machine.
pub(crate) const WAIT: Duration = Duration::from_secs(30);

/// The lines of the final render of the fake answer at `width`, as the example styles it
/// under `NO_COLOR`.
pub(crate) fn answer_lines(width: u16) -> Vec<String> {
    let src = include_str!("data/answers/mixed-long.md");
    let style = pi_tui::style::Style::dark(pi_tui::capabilities::ColorDepth::None, false);
    pi_tui::components::render_markdown(src, width, &style)
        .iter()
        .map(|l| pi_tui::ansi::strip(l).trim_end().to_owned())
        .collect()
}
