//! The screen-level test kit (feature `testkit`): a terminal screen model that answers the
//! queries a terminal answers, and a pty to run a real program against it.
//!
//! The screen model is the vt100 crate's emulator with a large scrollback. vt100 does not
//! answer queries, so [`ScreenModel`] does: cursor position (`CSI 6n`), primary device
//! attributes (`CSI c`), the Kitty keyboard flags (`CSI ? u`) and the background colour
//! (`OSC 11 ; ?`), each through an [`Answers`] setting, and can be told to answer nothing
//! (a terminal that times out every query).

mod pty;
mod screen;

pub use portable_pty::CommandBuilder;
pub use pty::{PtyError, PtySession};
pub use screen::{Answers, ScreenModel};
