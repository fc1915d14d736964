//! Decoded terminal input: the vocabulary shared by the key decoder, the keybinding table and
//! the components.

/// One thing the terminal told us.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputEvent {
    /// A key press, repeat or release.
    Key(KeyEvent),
    /// Text delivered by bracketed paste, without the paste markers.
    Paste(String),
    /// The terminal window gained focus (focus reporting, `CSI I`).
    FocusGained,
    /// The terminal window lost focus (`CSI O`).
    FocusLost,
    /// The terminal's size changed, in cells.
    Resize {
        /// Columns.
        cols: u16,
        /// Rows.
        rows: u16,
    },
}

/// A key with its modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyEvent {
    /// Which key.
    pub code: KeyCode,
    /// Modifiers held with it.
    pub modifiers: Modifiers,
    /// Press, repeat or release (repeat and release only arrive under the Kitty protocol).
    pub kind: KeyEventKind,
}

impl KeyEvent {
    /// A press of `code` with `modifiers`.
    pub const fn new(code: KeyCode, modifiers: Modifiers) -> Self {
        Self {
            code,
            modifiers,
            kind: KeyEventKind::Press,
        }
    }
}

/// The key itself, independent of modifiers. Letters arrive as their unshifted lower-case
/// character with [`Modifiers::SHIFT`] when shift was held and the protocol says so; text typed
/// with shift (`A`, `!`) arrives as that character.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyCode {
    /// A character key.
    Char(char),
    /// Enter / Return.
    Enter,
    /// Tab.
    Tab,
    /// Backspace.
    Backspace,
    /// Escape.
    Escape,
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Arrow left.
    Left,
    /// Arrow right.
    Right,
    /// Home.
    Home,
    /// End.
    End,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
    /// Insert.
    Insert,
    /// Delete (forward).
    Delete,
    /// A function key, F1 = `F(1)`.
    F(u8),
}

/// Modifier keys, as a bit set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Modifiers(u8);

impl Modifiers {
    /// No modifier.
    pub const NONE: Self = Self(0);
    /// Shift.
    pub const SHIFT: Self = Self(1);
    /// Alt / Option (also what a legacy `ESC` prefix means).
    pub const ALT: Self = Self(2);
    /// Control.
    pub const CTRL: Self = Self(4);
    /// Super / Command (Kitty protocol only).
    pub const SUPER: Self = Self(8);

    /// Whether every modifier of `other` is held.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The union of two sets.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether no modifier is held.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The raw bits (shift 1, alt 2, ctrl 4, super 8).
    pub const fn bits(self) -> u8 {
        self.0
    }
}

impl std::ops::BitOr for Modifiers {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        self.union(rhs)
    }
}

/// Whether a key went down, repeats, or went up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum KeyEventKind {
    /// Pressed (the only kind legacy terminals report).
    #[default]
    Press,
    /// Held down and repeating.
    Repeat,
    /// Released.
    Release,
}
