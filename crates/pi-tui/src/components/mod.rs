//! Components that render to lines: text, markdown, streaming markdown, spinner and status
//! line, boxes, diffs, image placeholders, and overlays.

mod text;

pub use text::Text;
