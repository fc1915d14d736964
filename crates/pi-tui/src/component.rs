//! The component contract, as pi-tui's `Component` interface (`dist/tui.d.ts`).

use crate::input::InputEvent;

/// Where a focused component wants the hardware cursor (for IME candidate windows): a
/// zero-width APC sequence, pi-tui's `CURSOR_MARKER`. The renderer finds it in a rendered line,
/// strips it and places the cursor there.
pub const CURSOR_MARKER: &str = "\x1b_pi:c\x07";

/// Something that draws itself as lines of text.
///
/// A line is a `String` that may hold ANSI SGR sequences, OSC 8 hyperlinks and
/// [`CURSOR_MARKER`]; its display width (escape sequences excluded, wide characters counted as
/// two cells) must not exceed the width asked for. Lines hold no `\n`.
pub trait Component {
    /// Renders for a viewport `width` in terminal cells (at least 1).
    fn render(&mut self, width: u16) -> Vec<String>;

    /// Handles one input event while this component has focus; returns whether it consumed
    /// it. Components without input ignore everything.
    fn handle_input(&mut self, _event: &InputEvent) -> bool {
        false
    }

    /// Drops any cached rendering (a theme change, a display toggle).
    fn invalidate(&mut self) {}

    /// Whether key release events reach this component (Kitty keyboard protocol); pi-tui's
    /// `wantsKeyRelease`, false by default.
    fn wants_key_release(&self) -> bool {
        false
    }
}
