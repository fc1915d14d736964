//! `cargo run -p pi-tui --example chat [-- --fullscreen]`: a transcript with the toolkit's
//! editor. Type a prompt and press Enter: a fake answer streams in as markdown; finished
//! blocks go to the scrollback once, the open block, the status line, the editor and the footer
//! are the live region. Keys are decoded by the full decoder (Kitty keyboard protocol,
//! `modifyOtherKeys`, legacy sequences, bracketed paste, the Esc timeout of
//! `PI_TUI_ESC_TIMEOUT`), and the editor has pi's keys: Shift+Enter or Ctrl+J for a new line,
//! emacs movement and kill ring, undo (Ctrl+-), history on Up/Down, large pastes collapsed to a
//! marker.
//!
//! Keys of the example: Enter submit · Ctrl+C clear / exit when empty · Ctrl+D exit when empty ·
//! Ctrl+Z suspend · Ctrl+O replay the history (an explicit display toggle) · Ctrl+F fullscreen
//! on/off · PageUp/PageDown/Home/End scroll (fullscreen).
//!
//! Settings for scripted runs: `PI_TUI_CHAT_DELTA_MS` (time between deltas, default 15),
//! `PI_TUI_CHAT_STATS=1` (print frames and bytes written on exit); the prompt `/panic` panics
//! (to see the terminal restored by the panic hook).

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tui::capabilities::Capabilities;
use pi_tui::components::editor::{Editor, EditorEvent, EditorStyle};
use pi_tui::components::{BoxComponent, StatusLine, StreamingMarkdown, Text};
use pi_tui::fullscreen::Scroll;
use pi_tui::keybindings::{Keybindings, Platform};
use pi_tui::keys::{Decoded, Decoder, TerminalReply, escape_timeout_from_env};
use pi_tui::terminal::{self, TermEvent, Terminal, TerminalOptions};
use pi_tui::terminal_colors::ColorScheme;
use pi_tui::theme::{ColorMode, Theme};
use pi_tui::tui::{Mode, Tui, TuiOptions};
use pi_tui::{Component, InputEvent, KeyCode, KeyEvent, Modifiers};

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

/// The docked bottom: the editor (it draws its own rules) and a footer.
struct Dock {
    editor: Editor,
    footer: String,
}

impl Component for Dock {
    fn render(&mut self, width: u16) -> Vec<String> {
        let mut out = self.editor.render(width);
        out.push(pi_tui::ansi::truncate(
            &self.footer,
            usize::from(width),
            "…",
        ));
        out
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
    let theme = Theme::builtin(ColorScheme::Dark, ColorMode::from_env());
    let style = Arc::new(theme.markdown_style(caps.hyperlinks));
    let delta_ms: u64 = std::env::var("PI_TUI_CHAT_DELTA_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let fullscreen = std::env::args().any(|a| a == "--fullscreen");

    // pi's input modes: the Kitty keyboard protocol (flags 7) where the terminal has it, else
    // xterm's modifyOtherKeys (what tmux forwards), so Shift+Enter reaches the editor.
    let mut term = Terminal::enter(TerminalOptions {
        kitty_flags: Some(7),
        modify_other_keys: true,
        ..TerminalOptions::default()
    })?;
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
    let keys = Arc::new(Keybindings::defaults(Platform::current()));
    let mut editor = Editor::new(keys.clone(), EditorStyle::from_theme(&theme));
    editor.set_focused(true);
    editor.set_terminal_rows(rows);
    let mut dock = Dock {
        editor,
        footer: footer(&style.muted, cols, rows),
    };
    let mut decoder = Decoder::new().with_escape_timeout(escape_timeout_from_env());
    let mut decoded = Vec::new();
    // When the decoder holds a lone Esc (or an incomplete sequence): since when.
    let mut pending_since: Option<Instant> = None;
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
        if let (Some(since), Some(timeout)) = (pending_since, decoder.pending_timeout()) {
            let due = since + timeout;
            if now >= due {
                decoder.flush_pending(&mut decoded);
                pending_since = None;
            } else {
                wait = wait.min(due - now);
            }
        }
        let ev = if decoded.is_empty() {
            match term.recv(wait) {
                Some(ev) => Some(ev),
                None => continue,
            }
        } else {
            None
        };
        match ev {
            Some(TermEvent::Resize(c, r)) => {
                term.write(&tui.resize(c, r, Instant::now()))?;
                dock.editor.set_terminal_rows(r);
                dock.footer = footer(&style.muted, c, r);
                dirty = true;
            }
            Some(TermEvent::Wake | TermEvent::Terminate(_)) | None => {}
            Some(TermEvent::Resumed) => {
                term.write(&tui.replay())?;
                force = true;
            }
            Some(TermEvent::Input(bytes)) => {
                decoder.feed(&bytes, &mut decoded);
                pending_since = decoder.pending_timeout().map(|_| Instant::now());
            }
        }
        for item in std::mem::take(&mut decoded) {
            let event = match item {
                Decoded::Input(e) => e,
                Decoded::Reply(TerminalReply::KittyFlags(flags)) => {
                    decoder.set_kitty_active(flags != 0);
                    continue;
                }
                Decoded::Reply(_) | Decoded::Unrecognized(_) => continue,
            };
            force = true;
            if let InputEvent::Key(k) = &event
                && let Some(action) = app_key(k, dock.editor.is_empty())
            {
                match action {
                    AppKey::Quit => quit = true,
                    AppKey::Clear => dock.editor.set_text(""),
                    AppKey::Suspend => {
                        term.suspend()?;
                        term.write(&tui.replay())?;
                    }
                    AppKey::Replay => term.write(&tui.replay())?,
                    AppKey::ToggleFullscreen => {
                        let next = if tui.mode() == Mode::Inline {
                            Mode::Fullscreen
                        } else {
                            Mode::Inline
                        };
                        term.write(&tui.set_mode(next))?;
                    }
                    AppKey::Scroll(to) => tui.scroll(to),
                }
                continue;
            }
            dock.editor.handle_input(&event);
            for EditorEvent::Submit(prompt) in dock.editor.take_events() {
                if prompt.trim().is_empty() {
                    continue;
                }
                if prompt == "/panic" {
                    // For the test of the panic hook's terminal restore.
                    panic!("panic requested from the prompt");
                }
                dock.editor.add_to_history(&prompt);
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

fn footer(muted: &str, cols: u16, rows: u16) -> String {
    format!("{muted}{cols}x{rows} · ctrl+o replay · ctrl+f fullscreen\x1b[0m")
}

/// A key the example handles itself instead of the editor.
enum AppKey {
    Quit,
    Clear,
    Suspend,
    Replay,
    ToggleFullscreen,
    Scroll(Scroll),
}

fn app_key(k: &KeyEvent, editor_empty: bool) -> Option<AppKey> {
    if k.kind == pi_tui::KeyEventKind::Release {
        return None;
    }
    let ctrl = k.modifiers == Modifiers::CTRL;
    Some(match k.code {
        KeyCode::Char('d') if ctrl && editor_empty => AppKey::Quit,
        KeyCode::Char('c') if ctrl && editor_empty => AppKey::Quit,
        KeyCode::Char('c') if ctrl => AppKey::Clear,
        KeyCode::Char('z') if ctrl => AppKey::Suspend,
        KeyCode::Char('o') if ctrl => AppKey::Replay,
        KeyCode::Char('f') if ctrl => AppKey::ToggleFullscreen,
        KeyCode::PageUp => AppKey::Scroll(Scroll::PageUp),
        KeyCode::PageDown => AppKey::Scroll(Scroll::PageDown),
        KeyCode::Home if editor_empty => AppKey::Scroll(Scroll::Top),
        KeyCode::End if editor_empty => AppKey::Scroll(Scroll::Bottom),
        _ => return None,
    })
}
