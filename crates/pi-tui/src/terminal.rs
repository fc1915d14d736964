//! The real terminal: raw mode and size through crossterm, the setup and restore sequences,
//! and restoring on every exit path — drop (normal exit and `?` errors), a panic (a panic
//! hook), SIGTERM and SIGHUP (restore, then exit 128 + signal), Ctrl+Z ([`Terminal::suspend`]:
//! restore, stop, set up again on resume) and an outside SIGTSTP/SIGCONT.
//!
//! Input is read as raw bytes and handed out unchanged ([`TermEvent::Input`]): decoding keys
//! is the job of the key decoder, which plugs in on those bytes.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, Once};
use std::time::Duration;

use signal_hook::consts::signal::{SIGCONT, SIGHUP, SIGTERM, SIGWINCH};

use crate::inline::SYNC_END;

/// What can go wrong with the terminal.
#[derive(Debug, thiserror::Error)]
pub enum TerminalError {
    /// Standard input or output is not a terminal.
    #[error("not a terminal (interactive mode needs a tty)")]
    NotATerminal,
    /// Raw mode, a write or the signal setup failed.
    #[error("terminal: {0}")]
    Io(#[from] io::Error),
}

/// Which input modes to turn on.
#[derive(Clone, Copy, Debug)]
pub struct TerminalOptions {
    /// Bracketed paste (`CSI ? 2004 h`).
    pub bracketed_paste: bool,
    /// Push these Kitty keyboard protocol flags (`CSI > flags u`; pi pushes 7); popped on
    /// restore.
    pub kitty_flags: Option<u8>,
    /// xterm `modifyOtherKeys` level 2 (`CSI > 4 ; 2 m`), the fallback where Kitty is absent
    /// (what tmux forwards).
    pub modify_other_keys: bool,
    /// Focus reports (`CSI ? 1004 h`).
    pub focus_events: bool,
    /// SIGTERM and SIGHUP arrive as [`TermEvent::Terminate`] for the application to shut
    /// down itself (and restore the terminal, by drop or [`Terminal::restore`]); otherwise
    /// the toolkit restores the terminal and exits with 128 + the signal number.
    pub terminate_events: bool,
}

impl Default for TerminalOptions {
    fn default() -> Self {
        Self {
            bracketed_paste: true,
            kitty_flags: None,
            modify_other_keys: false,
            focus_events: false,
            terminate_events: false,
        }
    }
}

/// Something from the terminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TermEvent {
    /// Bytes typed or pasted, as read (for the key decoder).
    Input(Vec<u8>),
    /// The window changed size (cols, rows).
    Resize(u16, u16),
    /// The process was continued after a stop; the screen must be drawn again.
    Resumed,
    /// A [`Waker`] was woken: something outside the terminal (a session event, a finished
    /// task) wants the loop to look at its own queue.
    Wake,
    /// SIGTERM or SIGHUP (the signal number), with [`TerminalOptions::terminate_events`].
    Terminate(i32),
}

/// Wakes a loop blocked in [`Terminal::recv`] from another thread; cheap to clone.
#[derive(Clone, Debug)]
pub struct Waker(Sender<TermEvent>);

impl Waker {
    /// Delivers [`TermEvent::Wake`]; a terminal already dropped ignores it.
    pub fn wake(&self) {
        let _ = self.0.send(TermEvent::Wake);
    }
}

/// Sets the window title (pi writes OSC 0, which also sets the icon name). Control
/// characters in the title are dropped.
pub fn title_sequence(title: &str) -> String {
    let t: String = title.chars().filter(|c| !c.is_control()).collect();
    format!("\x1b]0;{t}\x07")
}

/// Terminal progress (OSC 9;4): indeterminate while working (`9;4;3`), cleared (`9;4;0`), as
/// pi-tui's `setProgress`.
pub fn progress_sequence(active: bool) -> &'static str {
    if active {
        "\x1b]9;4;3\x07"
    } else {
        "\x1b]9;4;0\x07"
    }
}

/// The bytes that set the input modes up.
pub fn setup_sequence(o: &TerminalOptions) -> String {
    let mut s = String::from("\x1b[?25l");
    if o.bracketed_paste {
        s.push_str("\x1b[?2004h");
    }
    if let Some(f) = o.kitty_flags {
        s.push_str(&format!("\x1b[>{f}u"));
    }
    if o.modify_other_keys {
        s.push_str("\x1b[>4;2m");
    }
    if o.focus_events {
        s.push_str("\x1b[?1004h");
    }
    s
}

/// The bytes that undo everything the toolkit may have turned on: synchronized output ended,
/// the alternate screen left (when `alt_screen`: leaving it restores the cursor saved on
/// entry, which on the main screen would move the cursor to wherever that was, the top left
/// if nothing was saved), input modes off, progress cleared, cursor shown, style reset. Safe
/// to send when some were never on.
pub fn restore_sequence(o: &TerminalOptions, alt_screen: bool) -> String {
    let mut s = String::from(SYNC_END);
    if alt_screen {
        s.push_str(crate::fullscreen::LEAVE);
    }
    if o.focus_events {
        s.push_str("\x1b[?1004l");
    }
    if o.modify_other_keys {
        s.push_str("\x1b[>4;0m");
    }
    if o.kitty_flags.is_some() {
        s.push_str("\x1b[<u");
    }
    s.push_str("\x1b[?2004l");
    s.push_str(progress_sequence(false));
    s.push_str("\x1b[0m\x1b[?25h");
    s
}

/// The options of the terminal in use, for the panic hook and signal handler.
static ACTIVE: Mutex<Option<TerminalOptions>> = Mutex::new(None);
static HOOK: Once = Once::new();
static SIGNALS: Once = Once::new();
static EVENTS: Mutex<Option<Sender<TermEvent>>> = Mutex::new(None);
static STOPPED: AtomicBool = AtomicBool::new(false);
/// The input reader leaves standard input alone while set.
static INPUT_PAUSED: AtomicBool = AtomicBool::new(false);
/// The reader's poll interval, ms: how soon a pause is seen.
const INPUT_POLL_MS: libc::c_int = 25;

/// Whether the last screen switch written entered the alternate screen.
static ALT_SCREEN: AtomicBool = AtomicBool::new(false);

/// Notes the screen switches in bytes about to be written (the last one counts).
fn track_alt_screen(s: &str) {
    let enter = s.rfind(crate::fullscreen::ENTER_MODE);
    let leave = s.rfind(crate::fullscreen::LEAVE);
    match (enter, leave) {
        (Some(e), Some(l)) => ALT_SCREEN.store(e > l, Ordering::SeqCst),
        (Some(_), None) => ALT_SCREEN.store(true, Ordering::SeqCst),
        (None, Some(_)) => ALT_SCREEN.store(false, Ordering::SeqCst),
        (None, None) => {}
    }
}

/// Restores the terminal if the toolkit has it; idempotent. Called by drop, the panic hook
/// and the signal handler.
pub fn restore_now() {
    let opts = ACTIVE.lock().ok().and_then(|mut g| g.take());
    if let Some(o) = opts {
        let mut out = io::stdout();
        let alt = ALT_SCREEN.swap(false, Ordering::SeqCst);
        let _ = out.write_all(restore_sequence(&o, alt).as_bytes());
        let _ = out.flush();
        if o.kitty_flags.is_some() {
            // Key releases already on their way would land in the shell: let them arrive,
            // then discard them.
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: tcflush on fd 0 only discards pending input; an error (not a tty) is
        // ignored.
        unsafe {
            libc::tcflush(0, libc::TCIFLUSH);
        }
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

fn install_hooks() {
    HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_now();
            prev(info);
        }));
    });
    SIGNALS.call_once(|| {
        let Ok(mut signals) =
            signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGWINCH, SIGCONT])
        else {
            return;
        };
        std::thread::spawn(move || {
            for sig in signals.forever() {
                match sig {
                    SIGTERM | SIGHUP => {
                        let delegated = ACTIVE
                            .lock()
                            .ok()
                            .and_then(|g| *g)
                            .is_some_and(|o| o.terminate_events);
                        if delegated {
                            send(TermEvent::Terminate(sig));
                        } else {
                            restore_now();
                            std::process::exit(128 + sig);
                        }
                    }
                    SIGWINCH => send(TermEvent::Resize(size().0, size().1)),
                    SIGCONT => {
                        // Stopped from outside (not through `suspend`): set up again.
                        if !STOPPED.swap(false, Ordering::SeqCst)
                            && let Ok(g) = ACTIVE.lock()
                            && let Some(o) = *g
                        {
                            let _ = crossterm::terminal::enable_raw_mode();
                            let mut out = io::stdout();
                            let _ = out.write_all(setup_sequence(&o).as_bytes());
                            let _ = out.flush();
                        }
                        send(TermEvent::Resumed);
                    }
                    _ => {}
                }
            }
        });
    });
}

fn send(e: TermEvent) {
    if let Ok(g) = EVENTS.lock()
        && let Some(tx) = &*g
    {
        let _ = tx.send(e);
    }
}

/// The terminal size (cols, rows); 80×24 when it cannot be read. A dimension the terminal
/// reports as 0 (a pty whose size was never set) counts as unknown, 80 columns or 24 rows, as
/// pi-tui falls back to `columns || 80`.
pub fn size() -> (u16, u16) {
    match crossterm::terminal::size() {
        Ok((c, r)) => known_size(c, r),
        Err(_) => (80, 24),
    }
}

fn known_size(cols: u16, rows: u16) -> (u16, u16) {
    (
        if cols == 0 { 80 } else { cols },
        if rows == 0 { 24 } else { rows },
    )
}

/// The terminal, in raw mode with the toolkit's input modes, until dropped.
pub struct Terminal {
    opts: TerminalOptions,
    events: Receiver<TermEvent>,
    waker: Waker,
    cursor_row: Option<u16>,
    /// Tells the input reader to stop; it is joined on drop, so that a terminal taken again
    /// afterwards (a question before the main UI) is the only reader of standard input.
    reader_stop: std::sync::Arc<AtomicBool>,
    reader: Option<std::thread::JoinHandle<()>>,
}

/// How long [`Terminal::enter`] waits for the answer to its cursor position query.
pub const CURSOR_QUERY_TIMEOUT: Duration = Duration::from_millis(200);

/// Finds a cursor position report (`CSI row ; col R`) in `buf`: (start, end, 0-based row).
pub fn find_cursor_report(buf: &[u8]) -> Option<(usize, usize, u16)> {
    let mut i = 0;
    while let Some(p) = buf[i..].windows(2).position(|w| w == b"\x1b[") {
        let start = i + p;
        let rest = &buf[start + 2..];
        let end = rest
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b';'));
        if let Some(e) = end
            && rest[e] == b'R'
            && let Some((r, c)) = std::str::from_utf8(&rest[..e])
                .ok()
                .and_then(|t| t.split_once(';'))
            && !c.is_empty()
            && let Ok(row) = r.parse::<u16>()
            && row >= 1
        {
            return Some((start, start + 2 + e + 1, row - 1));
        }
        i = start + 1;
    }
    None
}

/// Asks the terminal where the cursor is and waits up to [`CURSOR_QUERY_TIMEOUT`]; returns
/// the row and any other input that arrived meanwhile (kept for the application).
fn query_cursor_row(out: &mut io::Stdout) -> (Option<u16>, Vec<u8>) {
    let mut got = Vec::new();
    if out
        .write_all(b"\x1b[6n")
        .and_then(|()| out.flush())
        .is_err()
    {
        return (None, got);
    }
    let deadline = std::time::Instant::now() + CURSOR_QUERY_TIMEOUT;
    let mut buf = [0u8; 256];
    loop {
        if let Some((s, e, row)) = find_cursor_report(&got) {
            got.drain(s..e);
            return (Some(row), got);
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return (None, got);
        }
        let mut pfd = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polls one descriptor we pass by pointer, for at most `left`.
        let r = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(1000) as libc::c_int) };
        if r <= 0 {
            continue;
        }
        // SAFETY: reads into a buffer we own, of its length.
        let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return (None, got);
        }
        got.extend_from_slice(&buf[..n as usize]);
    }
}

impl Terminal {
    /// Takes the terminal: raw mode, input modes, the panic hook and signal handlers, and a
    /// reader of standard input.
    ///
    /// Errors: standard input is not a terminal, raw mode failed.
    pub fn enter(opts: TerminalOptions) -> Result<Self, TerminalError> {
        // SAFETY: isatty only inspects the descriptor.
        if unsafe { libc::isatty(0) } != 1 {
            return Err(TerminalError::NotATerminal);
        }
        let (tx, rx) = channel();
        if let Ok(mut g) = EVENTS.lock() {
            *g = Some(tx.clone());
        }
        install_hooks();
        crossterm::terminal::enable_raw_mode()?;
        if let Ok(mut g) = ACTIVE.lock() {
            *g = Some(opts);
        }
        let mut out = io::stdout();
        out.write_all(setup_sequence(&opts).as_bytes())?;
        out.flush()?;
        let (cursor_row, early) = query_cursor_row(&mut out);
        if !early.is_empty() {
            let _ = tx.send(TermEvent::Input(early));
        }
        let reader_tx = tx.clone();
        let reader_stop = std::sync::Arc::new(AtomicBool::new(false));
        let stop = reader_stop.clone();
        let reader = std::thread::spawn(move || {
            let tx = reader_tx;
            let mut buf = [0u8; 4096];
            loop {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                // Wait for input in short polls so that a pause (another program owns the
                // terminal, `Terminal::run_outside`) takes effect before the next read.
                let mut pfd = libc::pollfd {
                    fd: 0,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: polls one descriptor we pass by pointer.
                let r = unsafe { libc::poll(&mut pfd, 1, INPUT_POLL_MS) };
                if r == 0 || INPUT_PAUSED.load(Ordering::SeqCst) || stop.load(Ordering::SeqCst) {
                    if INPUT_PAUSED.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(INPUT_POLL_MS as u64));
                    }
                    continue;
                }
                if r < 0 {
                    if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    break;
                }
                // SAFETY: reads into a buffer we own, of its length.
                let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
                if n < 0 {
                    if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    break;
                }
                if n == 0
                    || tx
                        .send(TermEvent::Input(buf[..n as usize].to_vec()))
                        .is_err()
                {
                    break;
                }
            }
        });
        Ok(Self {
            opts,
            waker: Waker(tx),
            events: rx,
            cursor_row,
            reader_stop,
            reader: Some(reader),
        })
    }

    /// The screen row (0-based) the cursor was on when the terminal was taken, if the
    /// terminal answered the position query in time.
    pub fn cursor_row(&self) -> Option<u16> {
        self.cursor_row
    }

    /// Writes bytes (a frame) and flushes.
    ///
    /// Errors: the write failed (the terminal is gone).
    pub fn write(&mut self, s: &str) -> io::Result<()> {
        if s.is_empty() {
            return Ok(());
        }
        track_alt_screen(s);
        let mut out = io::stdout().lock();
        out.write_all(s.as_bytes())?;
        out.flush()
    }

    /// A handle that wakes [`recv`](Self::recv) from another thread.
    pub fn waker(&self) -> Waker {
        self.waker.clone()
    }

    /// Waits up to `timeout` for the next event.
    pub fn recv(&self, timeout: Duration) -> Option<TermEvent> {
        self.events.recv_timeout(timeout).ok()
    }

    /// Sets the window title (OSC 0).
    ///
    /// Errors: the write failed.
    pub fn set_title(&mut self, title: &str) -> io::Result<()> {
        self.write(&title_sequence(title))
    }

    /// Shows or clears terminal progress (OSC 9;4).
    ///
    /// Errors: the write failed.
    pub fn set_progress(&mut self, active: bool) -> io::Result<()> {
        self.write(progress_sequence(active))
    }

    /// Ctrl+Z: restores the terminal, stops the process (SIGTSTP), and when the shell
    /// continues it, takes the terminal again. The caller then replays the screen.
    ///
    /// Errors: raw mode could not be entered again.
    pub fn suspend(&mut self) -> Result<(), TerminalError> {
        restore_now();
        STOPPED.store(true, Ordering::SeqCst);
        let _ = signal_hook::low_level::raise(libc::SIGTSTP);
        // Continued.
        STOPPED.store(false, Ordering::SeqCst);
        crossterm::terminal::enable_raw_mode()?;
        if let Ok(mut g) = ACTIVE.lock() {
            *g = Some(self.opts);
        }
        self.write(&setup_sequence(&self.opts))?;
        Ok(())
    }

    /// Hands the terminal to another program for the time `f` runs (an external editor): the
    /// input reader pauses, the terminal is restored to its normal state, then taken again.
    /// The caller replays the screen afterwards.
    ///
    /// Errors: raw mode could not be entered again.
    pub fn run_outside<R>(&mut self, f: impl FnOnce() -> R) -> Result<R, TerminalError> {
        INPUT_PAUSED.store(true, Ordering::SeqCst);
        // Let a poll in progress see the pause before the other program reads.
        std::thread::sleep(Duration::from_millis(2 * INPUT_POLL_MS as u64));
        restore_now();
        let result = f();
        crossterm::terminal::enable_raw_mode()?;
        if let Ok(mut g) = ACTIVE.lock() {
            *g = Some(self.opts);
        }
        self.write(&setup_sequence(&self.opts))?;
        INPUT_PAUSED.store(false, Ordering::SeqCst);
        Ok(result)
    }

    /// Restores the terminal now (also done on drop).
    pub fn restore(&mut self) {
        restore_now();
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        restore_now();
        self.reader_stop.store(true, Ordering::SeqCst);
        if let Some(r) = self.reader.take() {
            // Within one poll interval.
            let _ = r.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restore_undoes_setup() {
        let o = TerminalOptions {
            bracketed_paste: true,
            kitty_flags: Some(7),
            modify_other_keys: true,
            focus_events: true,
            terminate_events: false,
        };
        let mut m = crate::testkit::ScreenModel::new(5, 20, crate::testkit::Answers::default());
        m.feed(setup_sequence(&o).as_bytes());
        m.feed(b"\x1b[?1049h");
        assert!(m.bracketed_paste() && m.cursor_hidden() && m.alternate_screen());
        m.feed(restore_sequence(&o, true).as_bytes());
        assert!(!m.bracketed_paste() && !m.cursor_hidden() && !m.alternate_screen());
        // Never on the alternate screen: the cursor stays where the session left it.
        let mut main = crate::testkit::ScreenModel::new(5, 20, crate::testkit::Answers::default());
        main.feed(b"a\r\nb\r\nc");
        main.feed(restore_sequence(&o, false).as_bytes());
        assert_eq!(main.cursor(), (2, 1));
        let r = restore_sequence(&o, true);
        assert!(r.contains("\x1b[<u") && r.contains("\x1b[>4;0m") && r.contains("\x1b[?1004l"));
        assert!(r.starts_with("\x1b[?2026l"));
    }

    #[test]
    fn finds_cursor_reports_among_other_input() {
        assert_eq!(find_cursor_report(b"ab\x1b[12;40Rcd"), Some((2, 10, 11)));
        assert_eq!(find_cursor_report(b"\x1b[A\x1b[3;1R"), Some((3, 9, 2)));
        assert_eq!(find_cursor_report(b"\x1b[1;2P"), None);
        assert_eq!(find_cursor_report(b"\x1b[12R"), None);
        assert_eq!(find_cursor_report(b"\x1b[0;1R"), None);
    }

    #[test]
    fn a_zero_size_is_unknown() {
        assert_eq!(known_size(0, 0), (80, 24));
        assert_eq!(known_size(0, 40), (80, 40));
        assert_eq!(known_size(120, 0), (120, 24));
        assert_eq!(known_size(1, 1), (1, 1));
    }

    #[test]
    fn title_and_progress() {
        assert_eq!(title_sequence("pi\x07 - x"), "\x1b]0;pi - x\x07");
        let mut m = crate::testkit::ScreenModel::new(5, 20, crate::testkit::Answers::default());
        m.feed(title_sequence("π project").as_bytes());
        assert_eq!(m.titles(), ["π project"]);
        assert_eq!(progress_sequence(true), "\x1b]9;4;3\x07");
    }
}
