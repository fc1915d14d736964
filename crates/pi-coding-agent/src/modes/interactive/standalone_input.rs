//! The input loop of the screens that run before (or instead of) the interactive mode — the
//! project-trust question and `pi config`: terminal events decoded into keys, with the Esc
//! timeout, resizes and resumes handled the same way for both.

use std::time::{Duration, Instant};

use pi_tui::keys::{Decoded, Decoder, escape_timeout_from_env};
use pi_tui::terminal::{TermEvent, Terminal};
use pi_tui::tui::Tui;

/// What one wait for the terminal gave.
pub(crate) enum Polled {
    /// Decoded input (possibly none).
    Input(Vec<Decoded>),
    /// The screen must be drawn again in full (resumed after Ctrl+Z).
    Redraw,
    /// SIGTERM or SIGHUP: the screen ends.
    Terminate,
}

/// The decoder and its pending-Esc state.
pub(crate) struct StandaloneInput {
    decoder: Decoder,
    pending_since: Option<Instant>,
}

impl StandaloneInput {
    /// A decoder with the environment's Esc timeout (`PI_TUI_ESC_TIMEOUT`).
    pub(crate) fn new() -> Self {
        Self {
            decoder: Decoder::new().with_escape_timeout(escape_timeout_from_env()),
            pending_since: None,
        }
    }

    /// Waits up to 200 ms (less while an Esc is pending) for the terminal; a resize is
    /// applied to `tui` at once.
    pub(crate) fn poll(&mut self, term: &mut Terminal, tui: &mut Tui) -> Polled {
        let now = Instant::now();
        let wait = match (self.pending_since, self.decoder.pending_timeout()) {
            (Some(since), Some(t)) => (since + t).saturating_duration_since(now),
            _ => Duration::from_millis(200),
        };
        let mut decoded = Vec::new();
        match term.recv(wait) {
            Some(TermEvent::Input(bytes)) => {
                self.decoder.feed(&bytes, &mut decoded);
                self.pending_since = self
                    .decoder
                    .pending_timeout()
                    .map(|_| self.pending_since.unwrap_or_else(Instant::now));
            }
            Some(TermEvent::Resize(c, r)) => {
                let _ = term.write(&tui.resize(c, r, Instant::now()));
            }
            Some(TermEvent::Resumed) => return Polled::Redraw,
            Some(TermEvent::Terminate(_)) => return Polled::Terminate,
            Some(TermEvent::Wake) => {}
            None => {
                if self.pending_since.take().is_some() {
                    self.decoder.flush_pending(&mut decoded);
                }
            }
        }
        Polled::Input(decoded)
    }
}
