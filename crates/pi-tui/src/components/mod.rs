//! Components that render to lines: text, markdown, streaming markdown, spinner and status
//! line, boxes, diffs, image placeholders, overlays, the editor and the select list.

mod boxed;
mod column;
mod diff;
mod image;
mod markdown;
mod status;
mod streaming;
mod text;

pub use boxed::BoxComponent;
pub use column::Column;
pub use diff::DiffView;
pub use image::{Image, ImageOptions, ImagePlaceholder, is_image_line};
pub use markdown::{Markdown, render_block, render_markdown};
pub use status::{FRAMES, StatusLine};
pub use streaming::{MarkdownBlock, StreamingMarkdown, render_final};
pub use text::Text;

pub mod autocomplete;
pub mod editor;
pub mod kill_ring;
pub(crate) mod plain_text;
pub mod select_list;
pub(crate) mod text_segments;
pub mod undo_stack;
