//! The prompt editor, with pi-tui's `Editor` semantics (`dist/components/editor.js`):
//!
//! - multi-line text, word-wrapped to the width, scrolled vertically to keep the cursor in
//!   view (at most 30% of the terminal's rows, at least 5), between two horizontal rules that
//!   show `↑ N more` / `↓ N more` when lines are hidden;
//! - the keys of [`Keybindings`] (`tui.editor.*`, `tui.input.*`): Emacs movement and
//!   deletion, word navigation, a kill ring, undo with typing coalesced into words,
//!   character jumps, history on Up/Down at the top and bottom edges;
//! - bracketed paste: line endings normalised, tabs expanded, control characters dropped,
//!   and a large paste (more than 10 lines or 1,000 characters) kept aside behind an atomic
//!   marker `[paste #N +L lines]` / `[paste #N C chars]` that is expanded on submit;
//! - an autocomplete menu fed by an [`AutocompleteProvider`] (`/` at the start, `@`/`#` and the
//!   provider's trigger characters at a word start, Tab);
//! - [`CURSOR_MARKER`] before the cursor cell while focused, so the terminal's own cursor
//!   (and an IME candidate window) sits where the text goes.
//!
//! Cursor columns are byte offsets into the line (always on a grapheme boundary); the
//! sticky column of Up/Down is measured in cells, so it stays put across wide characters
//! (pi measures it in UTF-16 code units).

use std::collections::BTreeMap;
use std::sync::Arc;

use unicode_segmentation::UnicodeSegmentation;

use crate::component::{CURSOR_MARKER, Component};
use crate::components::autocomplete::AutocompleteProvider;
use crate::components::kill_ring::KillRing;
use crate::components::plain_text;
use crate::components::select_list::{SelectItem, SelectList, SelectListLayout, SelectListStyle};
use crate::components::text_segments::{self, Chunk, Mode, Segment};
use crate::components::undo_stack::UndoStack;
use crate::input::{InputEvent, KeyCode, KeyEvent, KeyEventKind, Modifiers};
use crate::keybindings::{KeySpec, Keybindings};
use crate::keys::printable_char;
use crate::paint::Paint;

/// A paste with more lines than this becomes a marker.
pub const LARGE_PASTE_LINES: usize = 10;
/// A paste with more characters than this becomes a marker.
pub const LARGE_PASTE_CHARS: usize = 1000;
/// Prompts kept for Up/Down history.
pub const HISTORY_CAPACITY: usize = 100;

/// The editor's colours.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EditorStyle {
    /// The rules above and below the text (pi colours them by thinking level, or by
    /// `bashMode` after `!`).
    pub border: Paint,
    /// The autocomplete menu.
    pub select_list: SelectListStyle,
}

impl EditorStyle {
    /// The theme's colours, as pi's `getEditorTheme`: `borderMuted` rules and the select
    /// list's colours. Interactive mode recolours the rules by thinking level with
    /// [`Editor::set_border`] and [`Theme::thinking_border`](crate::theme::Theme::thinking_border).
    pub fn from_theme(theme: &crate::theme::Theme) -> Self {
        Self {
            border: theme.fg_paint("borderMuted"),
            select_list: SelectListStyle::from_theme(theme),
        }
    }
}

/// What the editor reports, drained with [`Editor::take_events`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditorEvent {
    /// Enter: the text with paste markers expanded, trimmed. The editor is empty afterwards.
    Submit(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Snapshot {
    lines: Vec<String>,
    cursor_line: usize,
    cursor_col: usize,
    pastes: BTreeMap<u32, Arc<str>>,
    paste_counter: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LastAction {
    TypeWord,
    Kill,
    Yank,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Jump {
    Forward,
    Backward,
}

struct AutocompleteState {
    list: SelectList,
    prefix: String,
    forced: bool,
}

#[derive(Clone, Copy, Debug)]
struct VisualLine {
    line: usize,
    start: usize,
    end: usize,
}

/// The editor. See the [module docs](self).
pub struct Editor {
    /// A status drawn into the top rule (pi's working indicator).
    border_status: Option<BorderStatus>,
    lines: Vec<String>,
    cursor_line: usize,
    cursor_col: usize,
    focused: bool,
    padding_x: usize,
    terminal_rows: u16,
    layout_width: usize,
    scroll_offset: usize,
    style: EditorStyle,
    keybindings: Arc<Keybindings>,
    provider: Option<Box<dyn AutocompleteProvider>>,
    trigger_chars: Vec<char>,
    autocomplete: Option<AutocompleteState>,
    autocomplete_max_visible: usize,
    pastes: BTreeMap<u32, Arc<str>>,
    paste_counter: u32,
    history: Vec<String>,
    history_index: Option<usize>,
    history_draft: Option<(Vec<String>, usize, usize)>,
    kill_ring: KillRing,
    last_action: Option<LastAction>,
    jump: Option<Jump>,
    preferred_col: Option<usize>,
    snapped_from: Option<usize>,
    undo: UndoStack<Snapshot>,
    disable_submit: bool,
    events: Vec<EditorEvent>,
}

impl std::fmt::Debug for Editor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Editor")
            .field("lines", &self.lines)
            .field("cursor_line", &self.cursor_line)
            .field("cursor_col", &self.cursor_col)
            .finish_non_exhaustive()
    }
}

const DEFAULT_TRIGGERS: [char; 2] = ['@', '#'];

impl Editor {
    /// An empty editor using `keybindings`.
    pub fn new(keybindings: Arc<Keybindings>, style: EditorStyle) -> Self {
        Self {
            border_status: None,
            lines: vec![String::new()],
            cursor_line: 0,
            cursor_col: 0,
            focused: false,
            padding_x: 0,
            terminal_rows: 24,
            layout_width: 79,
            scroll_offset: 0,
            style,
            keybindings,
            provider: None,
            trigger_chars: DEFAULT_TRIGGERS.to_vec(),
            autocomplete: None,
            autocomplete_max_visible: 5,
            pastes: BTreeMap::new(),
            paste_counter: 0,
            history: Vec::new(),
            history_index: None,
            history_draft: None,
            kill_ring: KillRing::default(),
            last_action: None,
            jump: None,
            preferred_col: None,
            snapped_from: None,
            undo: UndoStack::default(),
            disable_submit: false,
            events: Vec::new(),
        }
    }

    // ----- configuration -----

    /// Whether the editor has focus (it then emits [`CURSOR_MARKER`]).
    pub fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

    /// The terminal's height in rows, which bounds the visible text (30%, at least 5 lines).
    pub fn set_terminal_rows(&mut self, rows: u16) {
        self.terminal_rows = rows;
    }

    /// Blank cells left and right of the text (at most half the width).
    pub fn set_padding_x(&mut self, padding: usize) {
        self.padding_x = padding;
    }

    /// Rows of the autocomplete menu, clamped to 3–20 as pi does.
    pub fn set_autocomplete_max_visible(&mut self, rows: usize) {
        self.autocomplete_max_visible = rows.clamp(3, 20);
    }

    /// Replaces the colours (a theme change, a new thinking level).
    pub fn set_style(&mut self, style: EditorStyle) {
        self.style = style;
    }

    /// Draws `status` into the top rule (`── ⠋ Working ───`), in the rule's colour, as pi's
    /// editor shows its working indicator; `None` restores the plain rule.
    pub fn set_border_status(&mut self, status: Option<BorderStatus>) {
        self.border_status = status;
    }

    /// Replaces only the rule colour.
    pub fn set_border(&mut self, border: Paint) {
        self.style.border = border;
    }

    /// Replaces the key table.
    pub fn set_keybindings(&mut self, keybindings: Arc<Keybindings>) {
        self.keybindings = keybindings;
    }

    /// When set, Enter does nothing (pi's `disableSubmit`).
    pub fn set_disable_submit(&mut self, disable: bool) {
        self.disable_submit = disable;
    }

    /// Installs the autocomplete provider (closing any open menu).
    pub fn set_autocomplete_provider(&mut self, provider: Box<dyn AutocompleteProvider>) {
        self.cancel_autocomplete();
        let mut triggers = DEFAULT_TRIGGERS.to_vec();
        for c in provider.trigger_characters() {
            if c != '/' && !c.is_whitespace() && !triggers.contains(&c) {
                triggers.push(c);
            }
        }
        self.trigger_chars = triggers;
        self.provider = Some(provider);
    }

    // ----- reading -----

    /// The text as shown (markers unexpanded), lines joined with `\n`.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// The text with paste markers replaced by what was pasted.
    pub fn expanded_text(&self) -> String {
        self.expand_markers(&self.text())
    }

    /// The lines.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The cursor as (line, byte offset).
    pub fn cursor(&self) -> (usize, usize) {
        (self.cursor_line, self.cursor_col)
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.lines.len() == 1 && self.lines[0].is_empty()
    }

    /// Whether the autocomplete menu is open.
    pub fn is_showing_autocomplete(&self) -> bool {
        self.autocomplete.is_some()
    }

    /// Takes what happened since the last call.
    pub fn take_events(&mut self) -> Vec<EditorEvent> {
        std::mem::take(&mut self.events)
    }

    // ----- programmatic edits -----

    /// Replaces the text (undoable), forgetting pastes; the cursor goes to the end.
    pub fn set_text(&mut self, text: &str) {
        self.cancel_autocomplete();
        self.last_action = None;
        self.exit_history();
        let normalized = normalize(text);
        if self.text() != normalized {
            self.push_undo();
        }
        self.pastes.clear();
        self.paste_counter = 0;
        self.set_text_internal(&normalized, false);
    }

    /// Inserts text at the cursor as one undo step (pi's `insertTextAtCursor`).
    pub fn insert_text_at_cursor(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.cancel_autocomplete();
        self.push_undo();
        self.last_action = None;
        self.exit_history();
        self.insert_text_internal(&sanitize(&normalize(text)));
    }

    /// Remembers a submitted prompt for Up/Down (trimmed; empty ones and a repeat of the
    /// newest are skipped).
    pub fn add_to_history(&mut self, text: &str) {
        let trimmed = text.trim();
        if trimmed.is_empty() || self.history.first().is_some_and(|h| h == trimmed) {
            return;
        }
        self.history.insert(0, trimmed.to_owned());
        self.history.truncate(HISTORY_CAPACITY);
    }

    // ----- internals: state -----

    fn valid_ids(&self) -> impl Fn(u32) -> bool + '_ {
        |id| self.pastes.contains_key(&id)
    }

    fn segs(&self, text: &str, mode: Mode) -> Vec<Segment> {
        text_segments::segments(text, mode, &self.valid_ids())
    }

    fn line(&self) -> &str {
        &self.lines[self.cursor_line]
    }

    fn set_col(&mut self, col: usize) {
        self.cursor_col = col;
        self.preferred_col = None;
        self.snapped_from = None;
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            lines: self.lines.clone(),
            cursor_line: self.cursor_line,
            cursor_col: self.cursor_col,
            pastes: self.pastes.clone(),
            paste_counter: self.paste_counter,
        }
    }

    fn push_undo(&mut self) {
        let snapshot = self.snapshot();
        self.undo.push(snapshot);
    }

    fn undo(&mut self) {
        self.exit_history();
        let Some(s) = self.undo.pop() else {
            return;
        };
        self.lines = s.lines;
        self.cursor_line = s.cursor_line.min(self.lines.len() - 1);
        self.cursor_col = s.cursor_col.min(self.lines[self.cursor_line].len());
        self.pastes = s.pastes;
        self.paste_counter = s.paste_counter;
        self.last_action = None;
        self.preferred_col = None;
        self.snapped_from = None;
    }

    fn set_text_internal(&mut self, text: &str, cursor_at_start: bool) {
        self.lines = text.split('\n').map(str::to_owned).collect();
        if self.lines.is_empty() {
            self.lines.push(String::new());
        }
        if cursor_at_start {
            self.cursor_line = 0;
            self.set_col(0);
        } else {
            self.cursor_line = self.lines.len() - 1;
            let len = self.lines[self.cursor_line].len();
            self.set_col(len);
        }
        self.scroll_offset = 0;
    }

    fn insert_text_internal(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let line = std::mem::take(&mut self.lines[self.cursor_line]);
        let (before, after) = line.split_at(self.cursor_col);
        let mut parts: Vec<&str> = text.split('\n').collect();
        if parts.len() == 1 {
            self.lines[self.cursor_line] = format!("{before}{text}{after}");
            let col = self.cursor_col + text.len();
            self.set_col(col);
            return;
        }
        let last = parts.pop().unwrap_or("");
        let first = parts.remove(0);
        let mut new_lines = Vec::with_capacity(parts.len() + 2);
        new_lines.push(format!("{before}{first}"));
        new_lines.extend(parts.iter().map(|s| (*s).to_owned()));
        new_lines.push(format!("{last}{after}"));
        let added = new_lines.len() - 1;
        self.lines
            .splice(self.cursor_line..=self.cursor_line, new_lines);
        self.cursor_line += added;
        self.set_col(last.len());
    }

    fn exit_history(&mut self) {
        self.history_index = None;
        self.history_draft = None;
    }

    fn expand_markers(&self, text: &str) -> String {
        if self.pastes.is_empty() {
            return text.to_owned();
        }
        let marks = text_segments::markers(text, &self.valid_ids());
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end, id) in marks {
            out.push_str(&text[at..start]);
            if let Some(content) = self.pastes.get(&id) {
                out.push_str(content);
            }
            at = end;
        }
        out.push_str(&text[at..]);
        out
    }

    // ----- layout -----

    fn wrap(&self, line: &str, width: usize) -> Vec<Chunk> {
        if line.is_empty() {
            return vec![Chunk { start: 0, end: 0 }];
        }
        if plain_text::width(line) <= width {
            return vec![Chunk {
                start: 0,
                end: line.len(),
            }];
        }
        let segs = self.segs(line, Mode::Grapheme);
        text_segments::wrap_line(line, width, &segs)
    }

    fn visual_lines(&self, width: usize) -> Vec<VisualLine> {
        let mut out = Vec::new();
        for (i, line) in self.lines.iter().enumerate() {
            for c in self.wrap(line, width) {
                out.push(VisualLine {
                    line: i,
                    start: c.start,
                    end: c.end,
                });
            }
        }
        out
    }

    fn is_last_of_line(vls: &[VisualLine], i: usize) -> bool {
        i + 1 >= vls.len() || vls[i + 1].line != vls[i].line
    }

    fn visual_line_at(vls: &[VisualLine], line: usize, col: usize) -> usize {
        for (i, vl) in vls.iter().enumerate() {
            if vl.line != line || col < vl.start {
                continue;
            }
            if col < vl.end || (Self::is_last_of_line(vls, i) && col == vl.end) {
                return i;
            }
        }
        vls.len().saturating_sub(1)
    }

    fn current_visual_line(&self, vls: &[VisualLine]) -> usize {
        Self::visual_line_at(vls, self.cursor_line, self.cursor_col)
    }

    fn max_visible_lines(&self) -> usize {
        (usize::from(self.terminal_rows) * 3 / 10).max(5)
    }

    // ----- input -----

    fn handle_key(&mut self, key: &KeyEvent) -> bool {
        let kb = Arc::clone(&self.keybindings);
        let is = |action: &str| kb.matches(key, action);

        if let Some(direction) = self.jump {
            if is("tui.editor.jumpForward") || is("tui.editor.jumpBackward") {
                self.jump = None;
                return true;
            }
            self.jump = None;
            if let Some(c) = printable_char(key) {
                self.jump_to_char(c, direction);
                return true;
            }
        }

        if is("tui.input.copy") {
            // Ctrl+C belongs to the application (clear / exit).
            return false;
        }
        if is("tui.editor.undo") {
            self.undo();
            return true;
        }

        if self.autocomplete.is_some() {
            if is("tui.select.cancel") {
                self.cancel_autocomplete();
                return true;
            }
            if is("tui.select.up") || is("tui.select.down") {
                if let Some(ac) = self.autocomplete.as_mut() {
                    ac.list
                        .move_selection(if is("tui.select.up") { -1 } else { 1 });
                }
                return true;
            }
            if is("tui.input.tab") {
                self.accept_autocomplete();
                return true;
            }
            if is("tui.select.confirm") {
                let slash = self
                    .autocomplete
                    .as_ref()
                    .is_some_and(|a| a.prefix.starts_with('/'));
                self.accept_autocomplete();
                if !slash {
                    return true;
                }
                // A slash command completes and submits in one Enter.
            }
        }

        if is("tui.input.tab") && self.autocomplete.is_none() {
            self.tab_completion();
            return true;
        }

        if is("tui.editor.deleteToLineEnd") {
            self.delete_to_line_end();
        } else if is("tui.editor.deleteToLineStart") {
            self.delete_to_line_start();
        } else if is("tui.editor.deleteWordBackward") {
            self.delete_word_backward();
        } else if is("tui.editor.deleteWordForward") {
            self.delete_word_forward();
        } else if is("tui.editor.deleteCharBackward")
            || is_key(key, KeyCode::Backspace, Modifiers::SHIFT)
        {
            self.backspace();
        } else if is("tui.editor.deleteCharForward")
            || is_key(key, KeyCode::Delete, Modifiers::SHIFT)
        {
            self.delete_forward();
        } else if is("tui.editor.yank") {
            self.yank();
        } else if is("tui.editor.yankPop") {
            self.yank_pop();
        } else if is("tui.editor.historyPrevious") {
            self.cancel_autocomplete();
            self.navigate_history(-1);
        } else if is("tui.editor.historyNext") {
            self.cancel_autocomplete();
            self.navigate_history(1);
        } else if is("tui.editor.cursorLineStart") {
            self.last_action = None;
            self.set_col(0);
        } else if is("tui.editor.cursorLineEnd") {
            self.move_to_line_end();
        } else if is("tui.editor.cursorWordLeft") {
            self.word_left();
        } else if is("tui.editor.cursorWordRight") {
            self.word_right();
        } else if is("tui.input.newLine") || is_key(key, KeyCode::Enter, Modifiers::ALT) {
            if self.should_submit_on_backslash_enter(key) {
                self.backspace();
                self.submit();
            } else {
                self.add_new_line();
            }
        } else if is("tui.input.submit") {
            if self.disable_submit {
                return true;
            }
            if self.cursor_col > 0 && self.line()[..self.cursor_col].ends_with('\\') {
                // Terminals without Shift+Enter: a trailing backslash asks for a new line.
                self.backspace();
                self.add_new_line();
            } else {
                self.submit();
            }
        } else if is("tui.editor.cursorUp") {
            self.arrow_up();
        } else if is("tui.editor.cursorDown") {
            self.arrow_down();
        } else if is("tui.editor.cursorRight") {
            self.move_horizontal(1);
        } else if is("tui.editor.cursorLeft") {
            self.move_horizontal(-1);
        } else if is("tui.editor.pageUp") {
            self.page_scroll(-1);
        } else if is("tui.editor.pageDown") {
            self.page_scroll(1);
        } else if is("tui.editor.jumpForward") {
            self.jump = Some(Jump::Forward);
        } else if is("tui.editor.jumpBackward") {
            self.jump = Some(Jump::Backward);
        } else if let Some(c) = printable_char(key) {
            self.insert_char(c);
        } else {
            return false;
        }
        if self.autocomplete.is_some() && !self.autocomplete_is_current() {
            // An edit or move that does not refresh the menu itself (Ctrl+A, a kill, a yank)
            // left it stale: ask again for where the cursor is now.
            self.update_autocomplete();
        }
        true
    }

    fn should_submit_on_backslash_enter(&self, key: &KeyEvent) -> bool {
        if self.disable_submit || !is_key(key, KeyCode::Enter, Modifiers::NONE) {
            return false;
        }
        let shift_enter = KeySpec {
            key: crate::keybindings::SpecKey::Code(KeyCode::Enter),
            modifiers: Modifiers::SHIFT,
        };
        self.keybindings
            .keys("tui.input.submit")
            .contains(&shift_enter)
            && self.cursor_col > 0
            && self.line()[..self.cursor_col].ends_with('\\')
    }

    fn submit(&mut self) {
        self.cancel_autocomplete();
        let result = self.expanded_text().trim().to_owned();
        self.lines = vec![String::new()];
        self.cursor_line = 0;
        self.cursor_col = 0;
        self.pastes.clear();
        self.paste_counter = 0;
        self.exit_history();
        self.scroll_offset = 0;
        self.undo.clear();
        self.last_action = None;
        self.preferred_col = None;
        self.snapped_from = None;
        self.events.push(EditorEvent::Submit(result));
    }

    fn insert_char(&mut self, c: char) {
        self.exit_history();
        if c.is_whitespace() || self.last_action != Some(LastAction::TypeWord) {
            self.push_undo();
        }
        self.last_action = Some(LastAction::TypeWord);
        let col = self.cursor_col;
        self.lines[self.cursor_line].insert(col, c);
        self.set_col(col + c.len_utf8());

        if self.autocomplete.is_some() {
            self.update_autocomplete();
            return;
        }
        let before = self.line()[..self.cursor_col].to_owned();
        if c == '/' && self.at_start_of_message() {
            self.request_autocomplete(false, false);
        } else if self.trigger_chars.contains(&c) {
            let mut prev = before.chars().rev();
            prev.next();
            match prev.next() {
                None | Some(' ' | '\t') => self.request_autocomplete(false, false),
                _ => {}
            }
        } else if (c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
            && (self.in_slash_context(&before) || self.in_trigger_context(&before))
        {
            self.request_autocomplete(false, false);
        }
    }

    fn handle_paste(&mut self, pasted: &str) {
        self.cancel_autocomplete();
        self.exit_history();
        self.last_action = None;
        self.push_undo();
        let mut text = sanitize(&normalize(&decode_csi_u_controls(pasted)));
        if text.starts_with(['/', '~', '.']) {
            let before = &self.line()[..self.cursor_col];
            if before
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                text.insert(0, ' ');
            }
        }
        let line_count = text.split('\n').count();
        let char_count = text.chars().count();
        if line_count > LARGE_PASTE_LINES || char_count > LARGE_PASTE_CHARS {
            self.paste_counter += 1;
            let id = self.paste_counter;
            self.pastes.insert(id, Arc::from(text));
            let marker = if line_count > LARGE_PASTE_LINES {
                format!("[paste #{id} +{line_count} lines]")
            } else {
                format!("[paste #{id} {char_count} chars]")
            };
            self.insert_text_internal(&marker);
            return;
        }
        self.insert_text_internal(&text);
    }

    fn add_new_line(&mut self) {
        self.cancel_autocomplete();
        self.exit_history();
        self.last_action = None;
        self.push_undo();
        let rest = self.lines[self.cursor_line].split_off(self.cursor_col);
        self.lines.insert(self.cursor_line + 1, rest);
        self.cursor_line += 1;
        self.set_col(0);
    }

    fn after_deletion(&mut self) {
        if self.autocomplete.is_some() {
            self.update_autocomplete();
            return;
        }
        let before = self.line()[..self.cursor_col].to_owned();
        if self.in_slash_context(&before) || self.in_trigger_context(&before) {
            self.request_autocomplete(false, false);
        }
    }

    fn join_with_previous_line(&mut self) {
        let current = self.lines.remove(self.cursor_line);
        self.cursor_line -= 1;
        let prev_len = self.lines[self.cursor_line].len();
        self.lines[self.cursor_line].push_str(&current);
        self.set_col(prev_len);
    }

    fn join_with_next_line(&mut self) {
        let next = self.lines.remove(self.cursor_line + 1);
        self.lines[self.cursor_line].push_str(&next);
    }

    fn backspace(&mut self) {
        self.exit_history();
        self.last_action = None;
        if self.cursor_col > 0 {
            self.push_undo();
            let before = &self.line()[..self.cursor_col];
            let last = self.segs(before, Mode::Grapheme).last().copied();
            let start = last.map_or(self.cursor_col - 1, |s| s.start);
            if let Some(seg) = last.filter(|s| s.atomic)
                && let Some((id, _)) = text_segments::marker_at(before, seg.start)
            {
                self.remove_paste(id);
            }
            let col = self.cursor_col;
            self.lines[self.cursor_line].replace_range(start..col, "");
            self.set_col(start);
        } else if self.cursor_line > 0 {
            self.push_undo();
            self.join_with_previous_line();
        }
        self.after_deletion();
    }

    /// Forgets paste `id` and renumbers the higher ones (and their markers) down by one, as
    /// pi does when a marker is deleted with Backspace.
    fn remove_paste(&mut self, id: u32) {
        self.pastes.remove(&id);
        self.paste_counter = self.paste_counter.saturating_sub(1);
        let higher: Vec<u32> = self.pastes.range(id + 1..).map(|(k, _)| *k).collect();
        for k in &higher {
            if let Some(v) = self.pastes.remove(k) {
                self.pastes.insert(k - 1, v);
            }
        }
        for line in &mut self.lines {
            if !line.contains("[paste #") {
                continue;
            }
            let marks = text_segments::markers(line, &|m| m > id);
            if marks.is_empty() {
                continue;
            }
            let mut out = String::with_capacity(line.len());
            let mut at = 0;
            for (start, end, m) in marks {
                out.push_str(&line[at..start]);
                let marker = &line[start..end];
                let digits = m.to_string();
                let tail = &marker["[paste #".len() + digits.len()..];
                out.push_str(&format!("[paste #{}{tail}", m - 1));
                at = end;
            }
            out.push_str(&line[at..]);
            *line = out;
        }
    }

    fn delete_forward(&mut self) {
        self.exit_history();
        self.last_action = None;
        if self.cursor_col < self.line().len() {
            self.push_undo();
            let after = &self.line()[self.cursor_col..];
            let len = self
                .segs(after, Mode::Grapheme)
                .first()
                .map_or(1, |s| s.end - s.start);
            let col = self.cursor_col;
            self.lines[self.cursor_line].replace_range(col..col + len, "");
        } else if self.cursor_line + 1 < self.lines.len() {
            self.push_undo();
            self.join_with_next_line();
        }
        self.after_deletion();
    }

    fn kill(&mut self, text: &str, prepend: bool) {
        let accumulate = self.last_action == Some(LastAction::Kill);
        self.kill_ring.push(text, prepend, accumulate);
        self.last_action = Some(LastAction::Kill);
    }

    fn delete_to_line_start(&mut self) {
        self.exit_history();
        if self.cursor_col > 0 {
            self.push_undo();
            let col = self.cursor_col;
            let killed: String = self.lines[self.cursor_line].drain(..col).collect();
            self.kill(&killed, true);
            self.set_col(0);
        } else if self.cursor_line > 0 {
            self.push_undo();
            self.kill("\n", true);
            self.join_with_previous_line();
        }
    }

    fn delete_to_line_end(&mut self) {
        self.exit_history();
        if self.cursor_col < self.line().len() {
            self.push_undo();
            let col = self.cursor_col;
            let killed = self.lines[self.cursor_line].split_off(col);
            self.kill(&killed, false);
        } else if self.cursor_line + 1 < self.lines.len() {
            self.push_undo();
            self.kill("\n", false);
            self.join_with_next_line();
        }
    }

    fn delete_word_backward(&mut self) {
        self.exit_history();
        if self.cursor_col == 0 {
            if self.cursor_line > 0 {
                self.push_undo();
                self.kill("\n", true);
                self.join_with_previous_line();
            }
            return;
        }
        self.push_undo();
        let from = text_segments::word_backward(self.line(), self.cursor_col, &self.valid_ids());
        let col = self.cursor_col;
        let killed: String = self.lines[self.cursor_line].drain(from..col).collect();
        self.kill(&killed, true);
        self.set_col(from);
    }

    fn delete_word_forward(&mut self) {
        self.exit_history();
        if self.cursor_col >= self.line().len() {
            if self.cursor_line + 1 < self.lines.len() {
                self.push_undo();
                self.kill("\n", false);
                self.join_with_next_line();
            }
            return;
        }
        self.push_undo();
        let to = text_segments::word_forward(self.line(), self.cursor_col, &self.valid_ids());
        let col = self.cursor_col;
        let killed: String = self.lines[self.cursor_line].drain(col..to).collect();
        self.kill(&killed, false);
    }

    fn yank(&mut self) {
        let Some(text) = self.kill_ring.peek().map(str::to_owned) else {
            return;
        };
        self.push_undo();
        self.exit_history();
        self.insert_text_internal(&text);
        self.last_action = Some(LastAction::Yank);
    }

    fn yank_pop(&mut self) {
        if self.last_action != Some(LastAction::Yank) || self.kill_ring.len() <= 1 {
            return;
        }
        self.push_undo();
        self.delete_yanked();
        self.kill_ring.rotate();
        if let Some(text) = self.kill_ring.peek().map(str::to_owned) {
            self.insert_text_internal(&text);
        }
        self.last_action = Some(LastAction::Yank);
    }

    /// Removes the text just yanked (the newest kill, which ends at the cursor).
    fn delete_yanked(&mut self) {
        let Some(text) = self.kill_ring.peek().map(str::to_owned) else {
            return;
        };
        let parts: Vec<&str> = text.split('\n').collect();
        if parts.len() == 1 {
            let start = self.cursor_col.saturating_sub(text.len());
            let col = self.cursor_col;
            if self.line().get(start..col) == Some(text.as_str()) {
                self.lines[self.cursor_line].replace_range(start..col, "");
                self.set_col(start);
            }
            return;
        }
        let Some(start_line) = self.cursor_line.checked_sub(parts.len() - 1) else {
            return;
        };
        let first = parts[0];
        let last = parts[parts.len() - 1];
        // Only remove what is really there (the text just yanked, ending at the cursor).
        let start_ok = self.lines[start_line].ends_with(first);
        let end_ok = self.line()[..self.cursor_col] == *last;
        if !start_ok || !end_ok {
            return;
        }
        let start_col = self.lines[start_line].len() - first.len();
        let after = self.lines[self.cursor_line][self.cursor_col..].to_owned();
        let before = self.lines[start_line][..start_col].to_owned();
        self.lines
            .splice(start_line..=self.cursor_line, [format!("{before}{after}")]);
        self.cursor_line = start_line;
        self.set_col(start_col);
    }

    fn move_to_line_end(&mut self) {
        self.last_action = None;
        let len = self.line().len();
        self.set_col(len);
    }

    fn word_left(&mut self) {
        self.last_action = None;
        if self.cursor_col == 0 {
            if self.cursor_line > 0 {
                self.cursor_line -= 1;
                let len = self.line().len();
                self.set_col(len);
            }
            return;
        }
        let col = text_segments::word_backward(self.line(), self.cursor_col, &self.valid_ids());
        self.set_col(col);
    }

    fn word_right(&mut self) {
        self.last_action = None;
        if self.cursor_col >= self.line().len() {
            if self.cursor_line + 1 < self.lines.len() {
                self.cursor_line += 1;
                self.set_col(0);
            }
            return;
        }
        let col = text_segments::word_forward(self.line(), self.cursor_col, &self.valid_ids());
        self.set_col(col);
    }

    fn jump_to_char(&mut self, c: char, direction: Jump) {
        self.last_action = None;
        let n = self.lines.len();
        let mut idx = self.cursor_line;
        loop {
            let line = &self.lines[idx];
            let found = if idx == self.cursor_line {
                match direction {
                    Jump::Forward => {
                        let from = line[self.cursor_col..]
                            .chars()
                            .next()
                            .map_or(line.len(), |ch| self.cursor_col + ch.len_utf8());
                        line[from..].find(c).map(|i| from + i)
                    }
                    Jump::Backward => line[..self.cursor_col].rfind(c),
                }
            } else {
                match direction {
                    Jump::Forward => line.find(c),
                    Jump::Backward => line.rfind(c),
                }
            };
            if let Some(col) = found {
                self.cursor_line = idx;
                self.set_col(col);
                return;
            }
            match direction {
                Jump::Forward if idx + 1 < n => idx += 1,
                Jump::Backward if idx > 0 => idx -= 1,
                _ => return,
            }
        }
    }

    fn navigate_history(&mut self, direction: isize) {
        self.last_action = None;
        if self.history.is_empty() {
            return;
        }
        let current: isize = self.history_index.map_or(-1, |i| i as isize);
        let next = current - direction;
        if next < -1 || next >= self.history.len() as isize {
            return;
        }
        if self.history_index.is_none() && next >= 0 {
            self.push_undo();
            self.history_draft = Some((self.lines.clone(), self.cursor_line, self.cursor_col));
        }
        if next < 0 {
            self.history_index = None;
            match self.history_draft.take() {
                Some((lines, line, col)) => {
                    self.lines = lines;
                    self.cursor_line = line;
                    self.set_col(col);
                    self.scroll_offset = 0;
                }
                None => self.set_text_internal("", false),
            }
        } else {
            let index = next as usize;
            self.history_index = Some(index);
            let entry = self.history[index].clone();
            // Older entries open with the cursor at the top, so Up keeps going back.
            self.set_text_internal(&entry, direction < 0);
        }
    }

    fn arrow_up(&mut self) {
        let vls = self.visual_lines(self.layout_width);
        let on_first = self.current_visual_line(&vls) == 0;
        if on_first && (self.is_empty() || self.history_index.is_some() || self.cursor_col == 0) {
            self.navigate_history(-1);
        } else if on_first {
            self.last_action = None;
            self.set_col(0);
        } else {
            self.move_vertical(-1);
        }
    }

    fn arrow_down(&mut self) {
        let vls = self.visual_lines(self.layout_width);
        let on_last = self.current_visual_line(&vls) + 1 >= vls.len();
        if self.history_index.is_some() && on_last {
            self.navigate_history(1);
        } else if on_last {
            self.move_to_line_end();
        } else {
            self.move_vertical(1);
        }
    }

    fn move_horizontal(&mut self, delta: isize) {
        self.last_action = None;
        if delta > 0 {
            if self.cursor_col < self.line().len() {
                let after = &self.line()[self.cursor_col..];
                let len = self
                    .segs(after, Mode::Grapheme)
                    .first()
                    .map_or(1, |s| s.end - s.start);
                let col = self.cursor_col + len;
                self.set_col(col);
            } else if self.cursor_line + 1 < self.lines.len() {
                self.cursor_line += 1;
                self.set_col(0);
            }
        } else if self.cursor_col > 0 {
            let before = &self.line()[..self.cursor_col];
            let start = self
                .segs(before, Mode::Grapheme)
                .last()
                .map_or(self.cursor_col - 1, |s| s.start);
            self.set_col(start);
        } else if self.cursor_line > 0 {
            self.cursor_line -= 1;
            let len = self.line().len();
            self.set_col(len);
        }
        if self.autocomplete.is_some() {
            self.update_autocomplete();
        }
    }

    fn move_vertical(&mut self, delta: isize) {
        self.last_action = None;
        let vls = self.visual_lines(self.layout_width);
        let current = self.current_visual_line(&vls);
        let target = current as isize + delta;
        if target >= 0 && (target as usize) < vls.len() {
            self.move_to_visual_line(&vls, current, target as usize);
        }
        if self.autocomplete.is_some() {
            self.update_autocomplete();
        }
    }

    fn page_scroll(&mut self, direction: isize) {
        self.last_action = None;
        let page = self.max_visible_lines() as isize;
        let vls = self.visual_lines(self.layout_width);
        let current = self.current_visual_line(&vls);
        let target = (current as isize + direction * page).clamp(0, vls.len() as isize - 1);
        self.move_to_visual_line(&vls, current, target as usize);
    }

    /// Cells from a visual line's start to `col`.
    fn col_width(&self, vl: &VisualLine, col: usize) -> usize {
        let line = &self.lines[vl.line];
        plain_text::width(&line[vl.start..col.clamp(vl.start, vl.end)])
    }

    /// The byte offset in `vl` at `cells` from its start, not past its end — nor onto its
    /// end when it is not the last visual line of its logical line (that position belongs
    /// to the next one).
    fn col_at_width(&self, vl: &VisualLine, cells: usize, is_last: bool) -> usize {
        let line = &self.lines[vl.line];
        let text = &line[vl.start..vl.end];
        let mut used = 0;
        let mut last_start = vl.start;
        for (i, g) in text.grapheme_indices(true) {
            let w = plain_text::grapheme_width(g);
            if used + w > cells {
                return vl.start + i;
            }
            used += w;
            last_start = vl.start + i;
        }
        if is_last || text.is_empty() {
            vl.end
        } else {
            last_start
        }
    }

    fn move_to_visual_line(&mut self, vls: &[VisualLine], current: usize, target: usize) {
        let (Some(cur), Some(tgt)) = (vls.get(current).copied(), vls.get(target).copied()) else {
            return;
        };
        let current_col = match self.snapped_from {
            Some(snap) => {
                let i = Self::visual_line_at(vls, cur.line, snap);
                self.col_width(&vls[i], snap)
            }
            None => self.col_width(&cur, self.cursor_col),
        };
        let source_last = Self::is_last_of_line(vls, current);
        let target_last = Self::is_last_of_line(vls, target);
        let source_width = self.col_width(&cur, cur.end);
        let target_width = self.col_width(&tgt, tgt.end);
        let source_max = if source_last {
            source_width
        } else {
            source_width.saturating_sub(1)
        };
        let target_max = if target_last {
            target_width
        } else {
            target_width.saturating_sub(1)
        };
        let move_to = self.vertical_move_column(current_col, source_max, target_max);
        self.cursor_line = tgt.line;
        self.cursor_col = self.col_at_width(&tgt, move_to, target_last);

        // Never land inside a paste marker: snap to its start, remembering where we were.
        let line = self.lines[tgt.line].clone();
        for seg in self.segs(&line, Mode::Grapheme) {
            if seg.start > self.cursor_col {
                break;
            }
            if !seg.atomic || self.cursor_col >= seg.end || self.cursor_col == seg.start {
                continue;
            }
            let continuation = seg.start < tgt.start;
            if continuation && target > current {
                // Moving down through a marker already visited: go past it.
                let mut next = target + 1;
                while next < vls.len() && vls[next].line == tgt.line && vls[next].start < seg.end {
                    next += 1;
                }
                if next < vls.len() {
                    self.move_to_visual_line(vls, current, next);
                    return;
                }
            }
            self.snapped_from = Some(self.cursor_col);
            self.cursor_col = seg.start;
            return;
        }
        self.snapped_from = None;
    }

    /// pi's sticky-column rule (`computeVerticalMoveColumn`), in cells.
    fn vertical_move_column(
        &mut self,
        current: usize,
        source_max: usize,
        target_max: usize,
    ) -> usize {
        let in_middle = current < source_max;
        let target_too_short = target_max < current;
        match self.preferred_col {
            Some(preferred) if !in_middle => {
                if target_too_short || target_max < preferred {
                    target_max
                } else {
                    self.preferred_col = None;
                    preferred
                }
            }
            _ => {
                if target_too_short {
                    self.preferred_col = Some(current);
                    target_max
                } else {
                    self.preferred_col = None;
                    current
                }
            }
        }
    }

    // ----- autocomplete -----

    fn at_start_of_message(&self) -> bool {
        if self.cursor_line != 0 {
            return false;
        }
        let before = self.line()[..self.cursor_col].trim();
        before.is_empty() || before == "/"
    }

    fn in_slash_context(&self, before: &str) -> bool {
        self.cursor_line == 0 && before.trim_start().starts_with('/')
    }

    fn in_trigger_context(&self, before: &str) -> bool {
        let token_start = before
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
        before[token_start..]
            .chars()
            .next()
            .is_some_and(|c| self.trigger_chars.contains(&c))
    }

    fn tab_completion(&mut self) {
        if self.provider.is_none() {
            return;
        }
        let before = self.line()[..self.cursor_col].to_owned();
        if self.in_slash_context(&before) && !before.trim_start().contains(' ') {
            self.request_autocomplete(false, true);
        } else {
            self.request_autocomplete(true, true);
        }
    }

    fn update_autocomplete(&mut self) {
        if let Some(forced) = self.autocomplete.as_ref().map(|a| a.forced) {
            self.request_autocomplete(forced, false);
        }
    }

    fn request_autocomplete(&mut self, force: bool, explicit_tab: bool) {
        let (line, col) = (self.cursor_line, self.cursor_col);
        let Some(provider) = self.provider.as_mut() else {
            return;
        };
        if force && !provider.should_trigger_file_completion(&self.lines, line, col) {
            return;
        }
        let suggestions = provider.suggestions(&self.lines, line, col, force);
        let Some(suggestions) = suggestions.filter(|s| !s.items.is_empty()) else {
            self.cancel_autocomplete();
            return;
        };
        if force && explicit_tab && suggestions.items.len() == 1 {
            let item = suggestions.items[0].clone();
            self.apply_completion(&item, &suggestions.prefix);
            return;
        }
        let best = best_match(&suggestions.items, &suggestions.prefix);
        let mut list = SelectList::new(
            suggestions.items,
            self.autocomplete_max_visible,
            self.style.select_list.clone(),
            Arc::clone(&self.keybindings),
        );
        if suggestions.prefix.starts_with('/') {
            list = list.with_layout(SelectListLayout {
                min_primary_width: 12,
                max_primary_width: 32,
            });
        }
        if let Some(i) = best {
            list.set_selected_index(i);
        }
        self.autocomplete = Some(AutocompleteState {
            list,
            prefix: suggestions.prefix,
            forced: force,
        });
    }

    fn apply_completion(&mut self, item: &SelectItem, prefix: &str) {
        let (line, col) = (self.cursor_line, self.cursor_col);
        let Some(provider) = self.provider.as_mut() else {
            return;
        };
        let result = provider.apply_completion(&self.lines, line, col, item, prefix);
        self.push_undo();
        self.last_action = None;
        self.lines = if result.lines.is_empty() {
            vec![String::new()]
        } else {
            result
                .lines
                .into_iter()
                .map(|l| sanitize(&normalize(&l)).replace('\n', " "))
                .collect()
        };
        self.cursor_line = result.cursor_line.min(self.lines.len() - 1);
        let line = &self.lines[self.cursor_line];
        let mut col = result.cursor_col.min(line.len());
        while !line.is_char_boundary(col) {
            col -= 1;
        }
        self.set_col(col);
    }

    /// Whether the open menu's prefix still ends the text before the cursor.
    fn autocomplete_is_current(&self) -> bool {
        self.autocomplete
            .as_ref()
            .is_some_and(|ac| self.line()[..self.cursor_col].ends_with(ac.prefix.as_str()))
    }

    fn accept_autocomplete(&mut self) {
        if !self.autocomplete_is_current() {
            // The cursor or text moved under the menu: its suggestions no longer apply.
            self.cancel_autocomplete();
            return;
        }
        let Some(ac) = self.autocomplete.take() else {
            return;
        };
        if let Some(item) = ac.list.selected_item().cloned() {
            self.apply_completion(&item, &ac.prefix);
        }
        self.cancel_autocomplete();
    }

    fn cancel_autocomplete(&mut self) {
        self.autocomplete = None;
    }

    fn border_line(&self, width: usize, arrow: &str, hidden: usize) -> String {
        if hidden == 0 {
            return self.style.border.apply(&"─".repeat(width));
        }
        let label = format!(" {arrow} {hidden} more ");
        let label_width = plain_text::width(&label);
        let text = if label_width + 2 <= width {
            let left = (width - label_width) / 2;
            format!(
                "{}{label}{}",
                "─".repeat(left),
                "─".repeat(width - left - label_width)
            )
        } else {
            plain_text::truncate(&label, width).to_owned()
                + &"─".repeat(width.saturating_sub(label_width))
        };
        self.style.border.apply(&text)
    }
}

fn is_key(key: &KeyEvent, code: KeyCode, modifiers: Modifiers) -> bool {
    key.kind != KeyEventKind::Release && key.code == code && key.modifiers == modifiers
}

/// Line endings to `\n`, tabs to four spaces (pi's `normalizeText`).
fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\t', "    ")
}

/// Drops control characters other than `\n` (pi keeps DEL and the C1 controls, which a
/// terminal would interpret).
fn sanitize(text: &str) -> String {
    text.chars()
        .filter(|&c| c == '\n' || !c.is_control())
        .collect()
}

/// Some terminals (tmux popups with `extended-keys-format csi-u`) re-encode control bytes
/// inside a paste as `ESC [ code ; 5 u`; turn those back into the bytes (pi does the same).
fn decode_csi_u_controls(text: &str) -> String {
    if !text.contains("\x1b[") {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("\x1b[") {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 2..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let decoded = (digits > 0 && digits <= 3 && after[digits..].starts_with(";5u"))
            .then(|| after[..digits].parse::<u32>().ok())
            .flatten()
            .and_then(|cp| match cp {
                97..=122 => char::from_u32(cp - 96),
                65..=90 => char::from_u32(cp - 64),
                _ => None,
            });
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &after[digits + 3..];
            }
            None => {
                out.push_str("\x1b[");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// pi's `getBestAutocompleteMatchIndex`: an exact value match, else the first value starting
/// with the prefix.
fn best_match(items: &[SelectItem], prefix: &str) -> Option<usize> {
    if prefix.is_empty() {
        return None;
    }
    items
        .iter()
        .position(|i| i.value == prefix)
        .or_else(|| items.iter().position(|i| i.value.starts_with(prefix)))
}

impl Component for Editor {
    fn render(&mut self, width: u16) -> Vec<String> {
        let width = usize::from(width.max(1));
        let padding = self.padding_x.min(width.saturating_sub(1) / 2);
        let content_width = width.saturating_sub(padding * 2).max(1);
        // Without padding one column is kept for the cursor at the end of a full line.
        let layout_width = content_width
            .saturating_sub(usize::from(padding == 0))
            .max(1);
        self.layout_width = layout_width;

        // Lay out: (line index, chunk) pairs and where the cursor is.
        let mut layout: Vec<(usize, Chunk)> = Vec::new();
        let mut cursor_row = 0;
        for (i, line) in self.lines.iter().enumerate() {
            let chunks = self.wrap(line, layout_width);
            let n = chunks.len();
            for (ci, c) in chunks.into_iter().enumerate() {
                if i == self.cursor_line {
                    let last = ci + 1 == n;
                    if self.cursor_col >= c.start && (last || self.cursor_col < c.end) {
                        cursor_row = layout.len();
                    }
                }
                layout.push((i, c));
            }
        }

        let max_visible = self.max_visible_lines();
        if cursor_row < self.scroll_offset {
            self.scroll_offset = cursor_row;
        } else if cursor_row >= self.scroll_offset + max_visible {
            self.scroll_offset = cursor_row + 1 - max_visible;
        }
        self.scroll_offset = self
            .scroll_offset
            .min(layout.len().saturating_sub(max_visible));
        let end = (self.scroll_offset + max_visible).min(layout.len());

        let pad = " ".repeat(padding);
        let mut out = Vec::with_capacity(end - self.scroll_offset + 2);
        let status_rule = self
            .border_status
            .as_ref()
            .and_then(|st| top_rule::with_status(st, width, self.scroll_offset));
        out.push(match status_rule {
            Some(rule) => self.style.border.apply(&rule),
            None => self.border_line(width, "↑", self.scroll_offset),
        });
        for (row, (li, chunk)) in layout[self.scroll_offset..end].iter().enumerate() {
            let row = row + self.scroll_offset;
            let line = &self.lines[*li];
            let mut text = &line[chunk.start..chunk.end];
            if plain_text::width(text) > content_width {
                // Only a unit wider than the whole line gets here (a wide character at
                // width 1): show what fits.
                text = plain_text::truncate(text, content_width);
            }
            let mut shown = String::with_capacity(text.len() + 16);
            let mut used = plain_text::width(text);
            let mut cursor_in_padding = false;
            if row == cursor_row {
                let at =
                    (self.cursor_col.clamp(chunk.start, chunk.end) - chunk.start).min(text.len());
                let (before, after) = text.split_at(at);
                shown.push_str(before);
                if self.focused {
                    shown.push_str(CURSOR_MARKER);
                }
                let first = self.segs(after, Mode::Grapheme).first().copied();
                match first {
                    Some(seg) => {
                        shown.push_str("\x1b[7m");
                        shown.push_str(&after[seg.start..seg.end]);
                        shown.push_str("\x1b[0m");
                        shown.push_str(&after[seg.end..]);
                    }
                    None if used < content_width + padding => {
                        shown.push_str("\x1b[7m \x1b[0m");
                        used += 1;
                        cursor_in_padding = used > content_width;
                    }
                    // No cell left for the cursor (a one-column editor): the marker alone.
                    None => {}
                }
            } else {
                shown.push_str(text);
            }
            let fill = " ".repeat(content_width.saturating_sub(used));
            let right = if cursor_in_padding {
                &pad[1..]
            } else {
                pad.as_str()
            };
            out.push(format!("{pad}{shown}{fill}{right}"));
        }
        out.push(self.border_line(width, "↓", layout.len() - end));

        if let Some(ac) = self.autocomplete.as_mut() {
            let cw = u16::try_from(content_width).unwrap_or(u16::MAX);
            for line in ac.list.render(cw) {
                let fill = " ".repeat(content_width.saturating_sub(visible_width(&line)));
                out.push(format!("{pad}{line}{fill}{pad}"));
            }
        }
        out
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        match event {
            InputEvent::Paste(text) => {
                self.jump = None;
                self.handle_paste(text);
                true
            }
            InputEvent::Key(key) if key.kind != KeyEventKind::Release => self.handle_key(key),
            _ => false,
        }
    }
}

/// Display width of a line that may hold SGR sequences (the select list's styled rows).
fn visible_width(line: &str) -> usize {
    let mut plain = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if ('\x40'..='\x7e').contains(&d) {
                    break;
                }
            }
            continue;
        }
        plain.push(c);
    }
    plain_text::width(&plain)
}

#[cfg(test)]
mod tests;
mod top_rule;

pub use top_rule::BorderStatus;
