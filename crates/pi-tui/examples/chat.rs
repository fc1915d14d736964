//! `cargo run -p pi-tui --example chat [-- --fullscreen]`: a transcript with a simple input
//! line. Type a prompt and press Enter: a fake answer streams in as markdown; finished
//! blocks go to the scrollback once, the open block, the status line and the input line are
//! the live region.
//!
//! Keys: Enter submit · Ctrl+C clear / exit when empty · Ctrl+D exit when empty · Ctrl+Z
//! suspend · Ctrl+O replay the history (an explicit display toggle) · Ctrl+F fullscreen on/off ·
//! PageUp/PageDown/Home/End scroll (fullscreen).
//!
//! Settings for scripted runs: `PI_TUI_CHAT_DELTA_MS` (time between deltas, default 15),
//! `PI_TUI_CHAT_STATS=1` (print frames and bytes written on exit); the prompt `/panic` panics
//! (to see the terminal restored by the panic hook).

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tui::capabilities::Capabilities;
use pi_tui::components::{BoxComponent, StatusLine, StreamingMarkdown, Text};
use pi_tui::fullscreen::Scroll;
use pi_tui::input_seam::{InputDecoder, PassThrough};
use pi_tui::style::Style;
use pi_tui::terminal::{self, TermEvent, Terminal, TerminalOptions};
use pi_tui::tui::{Mode, Tui, TuiOptions};
use pi_tui::{CURSOR_MARKER, Component, InputEvent, KeyCode, Modifiers};

const ANSWER: &str = include_str!("../tests/data/answers/mixed-long.md");

/// The live transcript tail: the streaming answer and the status line.
struct Live {
    answer: Option<StreamingMarkdown>,
    status: StatusLine,
}

impl Component for Live {
    fn render(&mut self, width: u16) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(a) = &mut self.answer {
            out.extend(a.render(width));
        }
        let s = self.status.render(width);
        if !s.is_empty() {
            out.push(String::new());
            out.extend(s);
        }
        out
    }
}

/// The docked bottom: the input line between two rules, and a footer.
struct Dock {
    input: String,
    footer: String,
    rule: String,
}

impl Component for Dock {
    fn render(&mut self, width: u16) -> Vec<String> {
        let w = usize::from(width);
        let rule = format!("{}{}\x1b[0m", self.rule, "─".repeat(w));
        let prompt = format!("> {}{CURSOR_MARKER}", self.input);
        // Keep the end of a long input visible.
        let shown = if pi_tui::ansi::visible_width(&prompt) >= w {
            let skip = pi_tui::ansi::visible_width(&prompt) + 1 - w;
            format!("…{}", pi_tui::ansi::slice(&prompt, skip + 1, w)) + CURSOR_MARKER
        } else {
            prompt
        };
        vec![
            rule.clone(),
            shown,
            rule,
            pi_tui::ansi::truncate(&self.footer, w, "…"),
        ]
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("chat: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let caps = Capabilities::detect();
    let style = Arc::new(Style::dark(caps.color, caps.hyperlinks));
    let delta_ms: u64 = std::env::var("PI_TUI_CHAT_DELTA_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let fullscreen = std::env::args().any(|a| a == "--fullscreen");

    let mut term = Terminal::enter(TerminalOptions::default())?;
    term.set_title("pi-tui chat")?;
    let (cols, rows) = terminal::size();
    let mut tui = Tui::new(
        cols,
        rows,
        TuiOptions {
            hardware_cursor: caps.hardware_cursor,
            ..TuiOptions::default()
        },
    );
    if let Some(row) = term.cursor_row() {
        tui.set_cursor_row(row);
    }
    if fullscreen {
        term.write(&tui.set_mode(Mode::Fullscreen))?;
    }
    tui.commit(Box::new(Text::new(format!(
        "{}pi-tui chat{} — type a prompt, Enter to send, Ctrl+D to quit",
        style.bold, "\x1b[0m"
    ))));
    let mut live = Live {
        answer: None,
        status: StatusLine::new(style.muted.clone(), style.spinner.clone()),
    };
    let mut dock = Dock {
        input: String::new(),
        footer: format!(
            "{}{}x{} · ctrl+o replay · ctrl+f fullscreen{}",
            style.muted, cols, rows, "\x1b[0m"
        ),
        rule: style.muted.clone(),
    };
    let mut decoder = PassThrough::default();
    let mut pending: Option<(usize, Instant)> = None; // (offset into ANSWER, next delta time)
    let mut turn = 0usize;
    let mut dirty = true;
    let mut force = true;
    let mut quit = false;

    while !quit {
        let now = Instant::now();
        // Stream the fake answer.
        if let Some((at, next)) = pending
            && now >= next
        {
            let n = 3 + (at * 7 + turn) % 10;
            let mut end = (at + n).min(ANSWER.len());
            while !ANSWER.is_char_boundary(end) {
                end += 1;
            }
            if let Some(a) = &mut live.answer {
                a.push(&ANSWER[at..end]);
                for b in a.take_finished() {
                    tui.commit(Box::new(b));
                }
                if end >= ANSWER.len() {
                    for b in a.finish() {
                        tui.commit(Box::new(b));
                    }
                    live.answer = None;
                    live.status.stop();
                    term.set_progress(false)?;
                    pending = None;
                } else {
                    pending = Some((end, next + Duration::from_millis(delta_ms)));
                }
            }
            dirty = true;
        }
        if live.status.tick(now) {
            dirty = true;
        }
        if (dirty || force)
            && let Some(bytes) = tui.frame(&mut live, &mut dock, now, force)
        {
            term.write(&bytes)?;
            dirty = false;
            force = false;
        }
        // Wait for input, the next delta, the next frame or the next spinner step.
        let mut wait = Duration::from_millis(80);
        if let Some((_, next)) = pending {
            wait = wait.min(next.saturating_duration_since(now));
        }
        if let Some(d) = tui.next_deadline()
            && (dirty || force)
        {
            wait = wait.min(
                d.saturating_duration_since(now)
                    .max(Duration::from_millis(1)),
            );
        }
        let Some(ev) = term.recv(wait) else { continue };
        match ev {
            TermEvent::Resize(c, r) => {
                term.write(&tui.resize(c, r, Instant::now()))?;
                dock.footer = format!(
                    "{}{}x{} · ctrl+o replay · ctrl+f fullscreen{}",
                    style.muted, c, r, "\x1b[0m"
                );
                dirty = true;
            }
            TermEvent::Wake | TermEvent::Terminate(_) => {}
            TermEvent::Resumed => {
                term.write(&tui.replay())?;
                force = true;
            }
            TermEvent::Input(bytes) => {
                for e in decoder.feed(&bytes) {
                    force = true;
                    match e {
                        InputEvent::Paste(t) => dock.input.push_str(&t.replace(['\r', '\n'], " ")),
                        InputEvent::Key(k) => match (k.code, k.modifiers) {
                            (KeyCode::Char('d'), m)
                                if m == Modifiers::CTRL && dock.input.is_empty() =>
                            {
                                quit = true;
                            }
                            (KeyCode::Char('c'), m) if m == Modifiers::CTRL => {
                                if dock.input.is_empty() {
                                    quit = true;
                                } else {
                                    dock.input.clear();
                                }
                            }
                            (KeyCode::Char('z'), m) if m == Modifiers::CTRL => {
                                term.suspend()?;
                                term.write(&tui.replay())?;
                            }
                            (KeyCode::Char('o'), m) if m == Modifiers::CTRL => {
                                term.write(&tui.replay())?;
                            }
                            (KeyCode::Char('f'), m) if m == Modifiers::CTRL => {
                                let next = if tui.mode() == Mode::Inline {
                                    Mode::Fullscreen
                                } else {
                                    Mode::Inline
                                };
                                term.write(&tui.set_mode(next))?;
                            }
                            (KeyCode::PageUp, _) => tui.scroll(Scroll::PageUp),
                            (KeyCode::PageDown, _) => tui.scroll(Scroll::PageDown),
                            (KeyCode::Home, _) => tui.scroll(Scroll::Top),
                            (KeyCode::End, _) => tui.scroll(Scroll::Bottom),
                            (KeyCode::Backspace, _) => {
                                dock.input.pop();
                            }
                            (KeyCode::Enter, _) => {
                                let prompt = std::mem::take(&mut dock.input);
                                if prompt.trim().is_empty() {
                                    continue;
                                }
                                if prompt == "/panic" {
                                    // For the test of the panic hook's terminal restore.
                                    panic!("panic requested from the prompt");
                                }
                                // Finish a running answer before the next turn starts.
                                if let Some(a) = &mut live.answer {
                                    for b in a.finish() {
                                        tui.commit(Box::new(b));
                                    }
                                }
                                turn += 1;
                                tui.commit(Box::new(Text::new(String::new())));
                                tui.commit(Box::new(BoxComponent::new(
                                    Box::new(Text::untrusted(&prompt)),
                                    style.box_bg.clone(),
                                    1,
                                    0,
                                )));
                                tui.commit(Box::new(Text::new(String::new())));
                                live.answer = Some(StreamingMarkdown::new(style.clone()));
                                live.status.start("Working", Instant::now());
                                term.set_progress(true)?;
                                pending = Some((0, Instant::now()));
                            }
                            (KeyCode::Char(c), m) if m.is_empty() || m == Modifiers::SHIFT => {
                                dock.input.push(c);
                            }
                            _ => {}
                        },
                        _ => {}
                    }
                }
            }
        }
    }
    term.write(&tui.finish())?;
    if std::env::var("PI_TUI_CHAT_STATS").as_deref() == Ok("1") {
        let (frames, bytes) = tui.stats();
        term.write(&format!("frames={frames} bytes={bytes}\r\n"))?;
    }
    term.restore();
    Ok(())
}
