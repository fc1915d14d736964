//! The autocomplete seam of the editor: a provider offers suggestions for the text before
//! the cursor and applies the one chosen (pi-tui's `AutocompleteProvider`,
//! `dist/autocomplete.d.ts`). The slash-command, `@` file and Tab path providers build on it.

use crate::components::select_list::SelectItem;

mod combined;
mod paths;

pub use combined::{ArgumentCompletions, CombinedAutocompleteProvider, SlashCommand};

/// Suggestions for the text before the cursor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestions {
    /// The choices, best first.
    pub items: Vec<SelectItem>,
    /// The text they would replace (e.g. `/mo` or `@src/ma`); handed back to
    /// [`AutocompleteProvider::apply_completion`].
    pub prefix: String,
}

/// The editor's text after a completion was applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// All lines.
    pub lines: Vec<String>,
    /// The cursor's line.
    pub cursor_line: usize,
    /// The cursor's byte offset in that line (clamped to a character boundary by the editor).
    pub cursor_col: usize,
}

/// A source of completions. Calls are synchronous and happen on keystrokes, so a provider
/// that searches files keeps its index ready instead of walking the tree per call.
pub trait AutocompleteProvider {
    /// Characters that open this provider's menu when typed at the start of a word, besides
    /// the editor's own `@` and `#`.
    fn trigger_characters(&self) -> Vec<char> {
        Vec::new()
    }

    /// Suggestions for the cursor at `cursor_line`/`cursor_col` (a byte offset) in `lines`;
    /// `force` is set for an explicit Tab. `None` or no items closes the menu.
    fn suggestions(
        &mut self,
        lines: &[String],
        cursor_line: usize,
        cursor_col: usize,
        force: bool,
    ) -> Option<Suggestions>;

    /// Applies `item` (offered for `prefix`) and returns the new text and cursor. The editor
    /// only calls it while `prefix` still ends the text before the cursor.
    fn apply_completion(
        &mut self,
        lines: &[String],
        cursor_line: usize,
        cursor_col: usize,
        item: &SelectItem,
        prefix: &str,
    ) -> Completion;

    /// Whether Tab should ask for file completion here (pi's `shouldTriggerFileCompletion`).
    fn should_trigger_file_completion(
        &self,
        _lines: &[String],
        _cursor_line: usize,
        _cursor_col: usize,
    ) -> bool {
        true
    }
}
