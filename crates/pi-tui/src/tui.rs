//! The frame scheduler: owns the history, turns the live components into frames through the
//! inline or the fullscreen renderer, throttles frames, debounces width changes and
//! composites overlays.
//!
//! It produces bytes; writing them is the [`crate::terminal`]'s job, so that everything here
//! runs the same against a real terminal, a pty or a screen model.

use std::time::{Duration, Instant};

use crate::component::Component;
use crate::fullscreen::{self, FullscreenRenderer, Scroll};
use crate::history::{Block, History, render_clipped};
use crate::inline::{InlineRenderer, SYNC_BEGIN, SYNC_END};
use crate::overlay::{self, OverlayOptions};

/// Settings of the scheduler.
#[derive(Clone, Debug)]
pub struct TuiOptions {
    /// Least time between two frames (pi throttles to 16 ms); input frames skip it.
    pub min_frame_interval: Duration,
    /// How long the width must stay put before history is replayed at the new width.
    pub resize_debounce: Duration,
    /// History lines replayed after a width change at most; earlier blocks are announced by a
    /// single line instead.
    pub max_replay_lines: usize,
    /// Show the hardware cursor at the cursor marker (`PI_HARDWARE_CURSOR`).
    pub hardware_cursor: bool,
}

impl Default for TuiOptions {
    fn default() -> Self {
        Self {
            min_frame_interval: Duration::from_millis(16),
            resize_debounce: Duration::from_millis(100),
            max_replay_lines: 5_000,
            hardware_cursor: false,
        }
    }
}

/// Which screen the transcript is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// The main screen: history in the terminal's scrollback, a live region below (pi's
    /// `--tui-mode regular`).
    #[default]
    Inline,
    /// The alternate screen with a scroll view (pi's `--tui-mode fullscreen`).
    Fullscreen,
}

struct OverlayEntry {
    id: u64,
    component: Box<dyn Component + Send>,
    options: OverlayOptions,
    hidden: bool,
}

/// Identifies a shown overlay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OverlayId(u64);

/// The scheduler. Feed it commits, resizes and frames; it returns what to write.
pub struct Tui {
    opts: TuiOptions,
    mode: Mode,
    width: u16,
    height: u16,
    history: History,
    /// Committed lines not yet written (inline mode).
    pending: Vec<String>,
    inline: InlineRenderer,
    full: FullscreenRenderer,
    /// A width change waiting for its debounce: (width, height, when it was seen).
    pending_resize: Option<(u16, u16, Instant)>,
    last_frame: Option<Instant>,
    overlays: Vec<OverlayEntry>,
    next_overlay: u64,
    /// The last view height of the fullscreen scroll view.
    view_rows: usize,
    frames: u64,
    bytes: u64,
}

/// The announcement replayed in place of history beyond the replay cap.
pub fn earlier_history_line(blocks: usize) -> String {
    format!("\x1b[2m··· {blocks} earlier blocks not replayed at this width ···\x1b[0m")
}

impl Tui {
    /// A scheduler for a `width`×`height` terminal.
    pub fn new(width: u16, height: u16, opts: TuiOptions) -> Self {
        let (width, height) = (width.max(1), height.max(1));
        let mut inline = InlineRenderer::new(width, height);
        inline.set_show_cursor(opts.hardware_cursor);
        Self {
            opts,
            mode: Mode::Inline,
            width,
            height,
            history: History::new(width),
            pending: Vec::new(),
            inline,
            full: FullscreenRenderer::new(width, height),
            pending_resize: None,
            last_frame: None,
            overlays: Vec::new(),
            next_overlay: 0,
            view_rows: usize::from(height),
            frames: 0,
            bytes: 0,
        }
    }

    /// The screen row (0-based) where the live region starts, from a cursor position report
    /// before the first frame ([`crate::terminal::Terminal::cursor_row`]). With it, commits
    /// insert their lines above the live region instead of redrawing it.
    pub fn set_cursor_row(&mut self, row: u16) {
        self.inline.set_cursor_row(row);
    }

    /// The size laid out for.
    pub fn size(&self) -> (u16, u16) {
        (self.width, self.height)
    }

    /// The history.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Frames written and bytes in them so far.
    pub fn stats(&self) -> (u64, u64) {
        (self.frames, self.bytes)
    }

    /// Appends a finished block to the history. Inline, its lines are written above the live
    /// region by the next frame, once.
    pub fn commit(&mut self, block: Block) {
        let lines = self.history.push(block);
        if self.mode == Mode::Inline {
            self.pending.extend_from_slice(lines);
        }
    }

    /// The terminal's new size. A height-only change is applied at once (the live region is
    /// redrawn); a width change waits for the debounce, then the next frame replays the
    /// history. Returns bytes to write now.
    pub fn resize(&mut self, width: u16, height: u16, now: Instant) -> String {
        let (width, height) = (width.max(1), height.max(1));
        if width != self.width || self.pending_resize.is_some() {
            self.pending_resize = Some((width, height, now));
            return String::new();
        }
        if height == self.height {
            return String::new();
        }
        self.height = height;
        match self.mode {
            Mode::Inline => self.inline.set_height(height),
            Mode::Fullscreen => {
                self.full.reset(width, height);
                String::new()
            }
        }
    }

    /// When the next frame may be built: the end of the throttle or of a resize debounce.
    pub fn next_deadline(&self) -> Option<Instant> {
        let throttle = self.last_frame.map(|t| t + self.opts.min_frame_interval);
        let resize = self
            .pending_resize
            .map(|(_, _, t)| t + self.opts.resize_debounce);
        match (throttle, resize) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// Shows an overlay above everything.
    pub fn show_overlay(
        &mut self,
        component: Box<dyn Component + Send>,
        options: OverlayOptions,
    ) -> OverlayId {
        self.next_overlay += 1;
        self.overlays.push(OverlayEntry {
            id: self.next_overlay,
            component,
            options,
            hidden: false,
        });
        OverlayId(self.next_overlay)
    }

    /// Removes an overlay; returns its component.
    pub fn hide_overlay(&mut self, id: OverlayId) -> Option<Box<dyn Component + Send>> {
        let i = self.overlays.iter().position(|o| o.id == id.0)?;
        Some(self.overlays.remove(i).component)
    }

    /// Hides or shows an overlay without removing it.
    pub fn set_overlay_hidden(&mut self, id: OverlayId, hidden: bool) {
        if let Some(o) = self.overlays.iter_mut().find(|o| o.id == id.0) {
            o.hidden = hidden;
        }
    }

    /// The topmost visible overlay's component (it has the focus).
    pub fn focused_overlay(&mut self) -> Option<&mut (dyn Component + Send + 'static)> {
        self.overlays
            .iter_mut()
            .rev()
            .find(|o| !o.hidden)
            .map(|o| &mut *o.component)
    }

    /// Scrolls the fullscreen view (no effect inline, where the terminal scrolls).
    pub fn scroll(&mut self, s: Scroll) {
        let total = self.history.lines().len();
        self.full.scroll(s, total, self.view_rows);
    }

    /// Switches between the main and the alternate screen. Entering fullscreen leaves the
    /// main screen's scrollback as it is; leaving it redraws the live region below it.
    pub fn set_mode(&mut self, mode: Mode) -> String {
        if mode == self.mode {
            return String::new();
        }
        self.mode = mode;
        self.last_frame = None;
        match mode {
            Mode::Fullscreen => {
                let mut out = self.inline.set_height(self.height);
                out.push_str(fullscreen::ENTER);
                self.full.reset(self.width, self.height);
                self.pending.clear();
                out
            }
            Mode::Inline => {
                // Lines committed while fullscreen were never written to the main screen.
                let mut out = String::from(fullscreen::LEAVE);
                out.push_str(&self.replay_now());
                out
            }
        }
    }

    /// Forgets the history and clears the screen and scrollback (inline) or the view
    /// (fullscreen): pi's `chatContainer.clear()` when the conversation changes (a new,
    /// resumed or forked session, a move in the tree).
    pub fn clear_history(&mut self) -> String {
        self.history.clear();
        self.replay()
    }

    /// Replays the history at the current size: an explicit display toggle (pi's tool
    /// output expansion, thinking visibility, a theme change). The only clear of the
    /// scrollback besides a width change and [`Tui::clear_history`].
    pub fn replay(&mut self) -> String {
        self.history.rerender();
        if self.mode == Mode::Fullscreen {
            self.full.reset(self.width, self.height);
            return String::new();
        }
        self.replay_now()
    }

    fn replay_now(&mut self) -> String {
        self.pending.clear();
        let (skipped, tail) = self.history.replay_tail(self.opts.max_replay_lines);
        let mut lines = Vec::with_capacity(tail.len() + 1);
        if skipped > 0 {
            lines.extend(crate::ansi::wrap(
                &earlier_history_line(skipped),
                usize::from(self.width),
            ));
        }
        lines.extend_from_slice(tail);
        self.inline.replay(self.width, self.height, &lines)
    }

    /// Builds a frame from the live transcript tail (`live`: streaming message, running tools,
    /// queue, status) and the docked bottom (`dock`: editor, footer), if one is due: not
    /// before the throttle allows (unless `force`, for input) and not while a width change
    /// is being debounced. Returns the bytes to write, or `None` when no frame was built.
    pub fn frame(
        &mut self,
        live: &mut dyn Component,
        dock: &mut dyn Component,
        now: Instant,
        force: bool,
    ) -> Option<String> {
        let mut out = String::new();
        if let Some((w, h, at)) = self.pending_resize {
            if now < at + self.opts.resize_debounce {
                return None;
            }
            self.pending_resize = None;
            let width_changed = w != self.width;
            self.width = w;
            self.height = h;
            self.history.set_width(w);
            match self.mode {
                Mode::Inline if width_changed => out.push_str(&self.replay_now()),
                Mode::Inline => out.push_str(&self.inline.set_height(h)),
                Mode::Fullscreen => self.full.reset(w, h),
            }
        } else if !force
            && let Some(t) = self.last_frame
            && now < t + self.opts.min_frame_interval
        {
            return None;
        }
        let live_lines = render_clipped(live, self.width);
        let dock_lines = render_clipped(dock, self.width);
        let bytes = match self.mode {
            Mode::Inline => {
                let mut lines = live_lines;
                lines.extend(dock_lines);
                self.composite_overlays(&mut lines);
                let commit = std::mem::take(&mut self.pending);
                self.inline.frame(&commit, &lines)
            }
            Mode::Fullscreen => {
                let mut dock = dock_lines;
                let view = usize::from(self.height).saturating_sub(dock.len());
                self.view_rows = view;
                let total = self.history.lines().len() + live_lines.len();
                // Overlays are placed on the whole screen: composite them onto the visible
                // rows, so build the screen lines first.
                if self.overlays.iter().any(|o| !o.hidden) {
                    let range = self.full.window(total, view);
                    let hist = self.history.lines();
                    let mut screen: Vec<String> = range
                        .map(|i| {
                            if i < hist.len() {
                                hist[i].clone()
                            } else {
                                live_lines[i - hist.len()].clone()
                            }
                        })
                        .collect();
                    while screen.len() < view {
                        screen.push(String::new());
                    }
                    screen.append(&mut dock);
                    self.composite_overlays(&mut screen);
                    // The composited rows go in as one docked block.
                    self.full.frame(&[], &[], &screen)
                } else {
                    self.full.frame(self.history.lines(), &live_lines, &dock)
                }
            }
        };
        out.push_str(&bytes);
        self.last_frame = Some(now);
        if out.is_empty() {
            return Some(out);
        }
        self.frames += 1;
        self.bytes += out.len() as u64;
        Some(out)
    }

    fn composite_overlays(&mut self, lines: &mut Vec<String>) {
        let (tw, th) = (self.width, self.height);
        for o in self.overlays.iter_mut().filter(|o| !o.hidden) {
            let layout = overlay::resolve(&o.options, 0, tw, th);
            let mut ol = render_clipped(&mut *o.component, layout.width);
            if let Some(m) = layout.max_height {
                ol.truncate(usize::from(m));
            }
            let h = u16::try_from(ol.len()).unwrap_or(u16::MAX);
            let layout = overlay::resolve(&o.options, h, tw, th);
            // Rows are relative to the viewport: the last `th` lines (padded to reach).
            let need = usize::from(layout.row) + ol.len();
            let view_start = lines.len().saturating_sub(usize::from(th));
            while lines.len() < view_start + need.min(usize::from(th)) {
                lines.push(String::new());
            }
            let view_start = lines.len().saturating_sub(usize::from(th));
            overlay::composite(
                lines,
                &ol,
                view_start + usize::from(layout.row),
                usize::from(layout.col),
                usize::from(layout.width),
            );
        }
        let max = usize::from(th);
        if lines.len() > max && self.mode == Mode::Fullscreen {
            lines.truncate(max);
        }
    }

    /// The bytes that end the session on this screen: the cursor below the live region (or
    /// the main screen back), shown again.
    pub fn finish(&mut self) -> String {
        match self.mode {
            Mode::Inline => {
                let mut out = String::from(SYNC_BEGIN);
                out.push_str(&self.inline.finish());
                out.push_str(SYNC_END);
                out
            }
            Mode::Fullscreen => format!("{}\x1b[?25h", fullscreen::LEAVE),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::Text;
    use crate::testkit::{Answers, ScreenModel};

    fn t0() -> Instant {
        Instant::now()
    }

    #[test]
    fn frames_are_throttled_unless_forced() {
        let mut tui = Tui::new(40, 10, TuiOptions::default());
        let mut live = Text::new("a");
        let mut dock = Text::new("> ");
        let t = t0();
        assert!(tui.frame(&mut live, &mut dock, t, false).is_some());
        live.set_text("b");
        assert!(
            tui.frame(&mut live, &mut dock, t + Duration::from_millis(5), false)
                .is_none()
        );
        assert!(
            tui.frame(&mut live, &mut dock, t + Duration::from_millis(5), true)
                .is_some()
        );
        assert_eq!(tui.next_deadline(), Some(t + Duration::from_millis(21)));
    }

    #[test]
    fn width_change_is_debounced_and_replays_from_source() {
        let mut m = ScreenModel::new(10, 40, Answers::default());
        let mut tui = Tui::new(40, 10, TuiOptions::default());
        let mut live = Text::new("live");
        let mut dock = Text::new("> ");
        let t = t0();
        tui.commit(Box::new(Text::new("one two three four five six")));
        m.feed(
            tui.frame(&mut live, &mut dock, t, true)
                .unwrap_or_default()
                .as_bytes(),
        );
        m.resize(10, 12);
        assert!(tui.resize(12, 10, t).is_empty());
        // During the debounce no frame is built.
        assert!(
            tui.frame(&mut live, &mut dock, t + Duration::from_millis(50), true)
                .is_none()
        );
        let b = tui
            .frame(&mut live, &mut dock, t + Duration::from_millis(120), false)
            .unwrap_or_default();
        m.feed(b.as_bytes());
        assert_eq!(m.scrollback_clears().len(), 1);
        assert_eq!(
            m.all_lines(),
            ["one two", "three four", "five six", "live", ">"]
        );
    }

    #[test]
    fn replay_is_capped_with_a_marker() {
        let mut m = ScreenModel::new(10, 40, Answers::default());
        let opts = TuiOptions {
            max_replay_lines: 4,
            ..TuiOptions::default()
        };
        let mut tui = Tui::new(40, 10, opts);
        for i in 0..10 {
            tui.commit(Box::new(Text::new(format!("block {i}\nsecond {i}"))));
        }
        let (mut live, mut dock) = (Text::new(""), Text::new("> "));
        let t = t0();
        m.feed(
            tui.frame(&mut live, &mut dock, t, true)
                .unwrap_or_default()
                .as_bytes(),
        );
        m.resize(10, 30);
        tui.resize(30, 10, t);
        let b = tui
            .frame(&mut live, &mut dock, t + Duration::from_secs(1), false)
            .unwrap_or_default();
        m.feed(b.as_bytes());
        let all = m.all_lines();
        assert_eq!(
            all[..2],
            ["··· 8 earlier blocks not", "replayed at this width ···"]
        );
        assert_eq!(all[2..6], ["block 8", "second 8", "block 9", "second 9"]);
    }

    #[test]
    fn overlays_are_drawn_over_the_live_region_and_removed() {
        let mut m = ScreenModel::new(8, 30, Answers::default());
        let mut tui = Tui::new(30, 8, TuiOptions::default());
        let (mut live, mut dock) = (Text::new("live text"), Text::new("> "));
        let t = t0();
        let id = tui.show_overlay(
            Box::new(Text::new("OVERLAY")),
            OverlayOptions {
                width: Some(overlay::SizeValue::Cells(9)),
                anchor: overlay::Anchor::TopLeft,
                ..OverlayOptions::default()
            },
        );
        m.feed(
            tui.frame(&mut live, &mut dock, t, true)
                .unwrap_or_default()
                .as_bytes(),
        );
        assert_eq!(m.screen_lines()[0], "OVERLAY");
        tui.hide_overlay(id);
        m.feed(
            tui.frame(&mut live, &mut dock, t, true)
                .unwrap_or_default()
                .as_bytes(),
        );
        assert_eq!(m.screen_lines()[..2], ["live text", ">"]);
    }

    #[test]
    fn fullscreen_shows_history_and_returns_to_the_main_screen() {
        let mut m = ScreenModel::new(6, 30, Answers::default());
        let mut tui = Tui::new(30, 6, TuiOptions::default());
        let (mut live, mut dock) = (Text::new("live"), Text::new("> "));
        let t = t0();
        tui.commit(Box::new(Text::new("first")));
        m.feed(
            tui.frame(&mut live, &mut dock, t, true)
                .unwrap_or_default()
                .as_bytes(),
        );
        m.feed(tui.set_mode(Mode::Fullscreen).as_bytes());
        tui.commit(Box::new(Text::new("second")));
        m.feed(
            tui.frame(&mut live, &mut dock, t, true)
                .unwrap_or_default()
                .as_bytes(),
        );
        assert!(m.alternate_screen());
        assert_eq!(m.screen_lines()[..3], ["first", "second", "live"]);
        m.feed(tui.set_mode(Mode::Inline).as_bytes());
        m.feed(
            tui.frame(&mut live, &mut dock, t, true)
                .unwrap_or_default()
                .as_bytes(),
        );
        assert!(!m.alternate_screen());
        let all = m.all_lines();
        assert_eq!(all, ["first", "second", "live", ">"]);
    }
}
