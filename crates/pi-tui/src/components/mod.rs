//! Components: the editor, the select list and their parts.

pub mod autocomplete;
pub mod editor;
pub mod kill_ring;
pub(crate) mod plain_text;
pub mod select_list;
pub(crate) mod text_segments;
pub mod undo_stack;
