//! The project-trust question before the session is built, as pi asks it in its TUI
//! (`core/project-trust.js`): the question text, then a select of pi's options; Enter picks,
//! Esc or Ctrl+C declines (pi treats a cancelled select as "not trusted, nothing saved").

use std::sync::Arc;
use std::time::Instant;

use pi_tui::components::select_list::{SelectItem, SelectList, SelectListEvent, SelectListStyle};
use pi_tui::keybindings::{Keybindings, Platform, UserBindings};
use pi_tui::keys::Decoded;
use pi_tui::terminal::{self, Terminal, TerminalOptions};
use pi_tui::terminal_colors::ColorScheme;
use pi_tui::theme::{ColorMode, Theme};
use pi_tui::tui::{Tui, TuiOptions};
use pi_tui::{Component, InputEvent};

use crate::config::trust::TrustOption;

struct Question<'a> {
    text: &'a [String],
    list: &'a mut SelectList,
}

impl Component for Question<'_> {
    fn render(&mut self, width: u16) -> Vec<String> {
        let w = usize::from(width.saturating_sub(1)).max(1);
        let mut out = vec![String::new()];
        for line in self.text {
            for l in pi_tui::ansi::wrap(line, w) {
                out.push(format!(" {l}"));
            }
        }
        out.push(String::new());
        out.extend(self.list.render(width));
        out.push(String::new());
        out
    }
}

struct Nothing;

impl Component for Nothing {
    fn render(&mut self, _width: u16) -> Vec<String> {
        Vec::new()
    }
}

/// Asks `message` with `options` in the terminal; the index picked, or `None` when declined
/// or the terminal cannot be used.
pub(crate) fn ask(
    agent_dir: &std::path::Path,
    message: &str,
    options: &[TrustOption],
) -> Option<usize> {
    let mut term = Terminal::enter(TerminalOptions::default()).ok()?;
    let theme = Theme::builtin(ColorScheme::Dark, ColorMode::from_env());
    let (user, _) = UserBindings::load(&agent_dir.join("keybindings.json"));
    let keys = Arc::new(Keybindings::with_user(Platform::current(), &user));
    let items = options
        .iter()
        .map(|o| SelectItem::new(o.label.clone()))
        .collect();
    let mut list = SelectList::new(items, 8, SelectListStyle::from_theme(&theme), keys);
    let text: Vec<String> = message
        .split('\n')
        .enumerate()
        .map(|(i, l)| {
            let l = pi_tui::ansi::escape_control(l);
            if i == 0 {
                theme.fg("accent", &format!("\x1b[1m{l}\x1b[22m"))
            } else {
                l
            }
        })
        .collect();
    let (cols, rows) = terminal::size();
    let mut tui = Tui::new(cols, rows, TuiOptions::default());
    if let Some(row) = term.cursor_row() {
        tui.set_cursor_row(row);
    }
    let mut input = super::standalone_input::StandaloneInput::new();
    let mut answer = None;
    let mut force = true;
    'outer: loop {
        let now = Instant::now();
        let mut q = Question {
            text: &text,
            list: &mut list,
        };
        if let Some(bytes) = tui.frame(&mut q, &mut Nothing, now, force) {
            let _ = term.write(&bytes);
            force = false;
        }
        let decoded = match input.poll(&mut term, &mut tui) {
            super::standalone_input::Polled::Input(d) => d,
            super::standalone_input::Polled::Redraw => {
                force = true;
                continue;
            }
            super::standalone_input::Polled::Terminate => break,
        };
        for d in decoded {
            if let Decoded::Input(e @ InputEvent::Key(_)) = d {
                list.handle_input(&e);
                force = true;
                for ev in list.take_events() {
                    match ev {
                        SelectListEvent::Selected(item) => {
                            answer = options.iter().position(|o| o.label == item.value);
                            break 'outer;
                        }
                        SelectListEvent::Cancelled => break 'outer,
                        SelectListEvent::SelectionChanged(_) => {}
                    }
                }
            }
        }
    }
    // The question stays in the scrollback with the answer, as a finished block.
    let picked = answer.map_or("(declined)".to_owned(), |i| options[i].label.clone());
    let mut done = pi_tui::components::Text::new(format!(
        "{}\n {}",
        text.iter()
            .map(|l| format!(" {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
        theme.fg("muted", &format!("→ {picked}"))
    ));
    let _ = tui
        .frame(&mut done, &mut Nothing, Instant::now(), true)
        .map(|b| term.write(&b));
    let _ = term.write(&tui.finish());
    term.restore();
    answer
}
