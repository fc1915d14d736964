//! Components that render to lines: text, markdown, streaming markdown, spinner and status
//! line, boxes, diffs, image placeholders, and overlays.

mod markdown;
mod streaming;
mod text;

pub use markdown::{Markdown, render_block, render_markdown};
pub use streaming::{MarkdownBlock, StreamingMarkdown, render_final};
pub use text::Text;
