//! A scrolling, filterable list of choices, as pi-tui's `SelectList`
//! (`dist/components/select-list.js`): a value column and an optional description column,
//! the selection marked, wrap-around Up/Down, a `(n/total)` line when it scrolls.

use std::sync::Arc;

use crate::component::Component;
use crate::components::plain_text;
use crate::input::InputEvent;
use crate::keybindings::Keybindings;
use crate::paint::Paint;

/// One choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectItem {
    /// What selecting it means (what the filter matches against).
    pub value: String,
    /// What is shown; the value when empty.
    pub label: String,
    /// Shown beside it when there is room, on one line.
    pub description: Option<String>,
}

impl SelectItem {
    /// An item showing its value.
    pub fn new(value: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            label: String::new(),
            description: None,
        }
    }

    /// With a label.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// With a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    fn display(&self) -> &str {
        if self.label.is_empty() {
            &self.value
        } else {
            &self.label
        }
    }
}

/// The list's colours.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SelectListStyle {
    /// The selected row.
    pub selected: Paint,
    /// Descriptions of unselected rows.
    pub description: Paint,
    /// The `(n/total)` line.
    pub scroll_info: Paint,
    /// The "no matches" line.
    pub no_match: Paint,
}

impl SelectListStyle {
    /// The theme's colours for it, as pi's `getSelectListTheme`: the selection in `accent`,
    /// descriptions, the scroll line and "no matches" in `muted`.
    pub fn from_theme(theme: &crate::theme::Theme) -> Self {
        Self {
            selected: theme.fg_paint("accent"),
            description: theme.fg_paint("muted"),
            scroll_info: theme.fg_paint("muted"),
            no_match: theme.fg_paint("muted"),
        }
    }
}

/// Width bounds of the value column, in cells (pi's `SelectListLayoutOptions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelectListLayout {
    /// Narrowest value column.
    pub min_primary_width: usize,
    /// Widest value column.
    pub max_primary_width: usize,
}

impl Default for SelectListLayout {
    fn default() -> Self {
        Self {
            min_primary_width: 32,
            max_primary_width: 32,
        }
    }
}

/// What happened in the list, drained with [`SelectList::take_events`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SelectListEvent {
    /// Enter on an item.
    Selected(SelectItem),
    /// Escape / Ctrl+C.
    Cancelled,
    /// The highlighted item changed.
    SelectionChanged(SelectItem),
}

const COLUMN_GAP: usize = 2;
const MIN_DESCRIPTION_WIDTH: usize = 10;
const NO_MATCH: &str = "  No matches";

/// The list. See the [module docs](self).
#[derive(Debug)]
pub struct SelectList {
    items: Vec<SelectItem>,
    /// Indices into `items` that pass the filter.
    filtered: Vec<usize>,
    selected: usize,
    max_visible: usize,
    style: SelectListStyle,
    layout: SelectListLayout,
    keybindings: Arc<Keybindings>,
    events: Vec<SelectListEvent>,
}

impl SelectList {
    /// A list showing at most `max_visible` rows (at least 1).
    pub fn new(
        items: Vec<SelectItem>,
        max_visible: usize,
        style: SelectListStyle,
        keybindings: Arc<Keybindings>,
    ) -> Self {
        let filtered = (0..items.len()).collect();
        Self {
            items,
            filtered,
            selected: 0,
            max_visible: max_visible.max(1),
            style,
            layout: SelectListLayout::default(),
            keybindings,
            events: Vec::new(),
        }
    }

    /// Sets the value-column bounds.
    pub fn with_layout(mut self, layout: SelectListLayout) -> Self {
        self.layout = layout;
        self
    }

    /// Keeps the items whose value starts with `filter`, ignoring case (pi's filter), and
    /// selects the first.
    pub fn set_filter(&mut self, filter: &str) {
        let needle = filter.to_lowercase();
        self.filtered = self
            .items
            .iter()
            .enumerate()
            .filter(|(_, item)| item.value.to_lowercase().starts_with(&needle))
            .map(|(i, _)| i)
            .collect();
        self.selected = 0;
    }

    /// Selects the `index`-th visible item (clamped).
    pub fn set_selected_index(&mut self, index: usize) {
        self.selected = index.min(self.filtered.len().saturating_sub(1));
    }

    /// The index of the selected item among the filtered ones.
    pub fn selected_index(&self) -> usize {
        self.selected
    }

    /// The selected item, if any passes the filter.
    pub fn selected_item(&self) -> Option<&SelectItem> {
        self.filtered.get(self.selected).map(|&i| &self.items[i])
    }

    /// How many items pass the filter.
    pub fn visible_count(&self) -> usize {
        self.filtered.len()
    }

    /// Moves the selection up (`-1`) or down (`1`), wrapping around.
    pub fn move_selection(&mut self, delta: isize) {
        let n = self.filtered.len();
        if n == 0 {
            return;
        }
        self.selected = if delta < 0 {
            if self.selected == 0 {
                n - 1
            } else {
                self.selected - 1
            }
        } else if self.selected + 1 >= n {
            0
        } else {
            self.selected + 1
        };
        if let Some(item) = self.selected_item().cloned() {
            self.events.push(SelectListEvent::SelectionChanged(item));
        }
    }

    /// Takes what happened since the last call.
    pub fn take_events(&mut self) -> Vec<SelectListEvent> {
        std::mem::take(&mut self.events)
    }

    fn visible_range(&self) -> (usize, usize) {
        let n = self.filtered.len();
        let half = self.max_visible / 2;
        let start = self
            .selected
            .saturating_sub(half)
            .min(n.saturating_sub(self.max_visible));
        (start, (start + self.max_visible).min(n))
    }

    fn primary_width(&self) -> usize {
        let min = self
            .layout
            .min_primary_width
            .min(self.layout.max_primary_width)
            .max(1);
        let max = self
            .layout
            .min_primary_width
            .max(self.layout.max_primary_width)
            .max(1);
        let widest = self
            .filtered
            .iter()
            .map(|&i| plain_text::width(self.items[i].display()) + COLUMN_GAP)
            .max()
            .unwrap_or(0);
        widest.clamp(min, max)
    }

    fn render_item(
        &self,
        item: &SelectItem,
        selected: bool,
        width: usize,
        primary: usize,
    ) -> String {
        let prefix = if selected { "→ " } else { "  " };
        let prefix_width = 2;
        let description = item.description.as_deref().map(plain_text::single_line);
        let value = plain_text::single_line(item.display());
        if let Some(desc) = description.filter(|d| !d.is_empty())
            && width > 40
        {
            let column = primary.min(width.saturating_sub(prefix_width + 4)).max(1);
            let max_value = column.saturating_sub(COLUMN_GAP).max(1);
            let shown = plain_text::truncate(&value, max_value);
            let shown_width = plain_text::width(shown);
            let spacing = " ".repeat(column.saturating_sub(shown_width).max(1));
            let desc_start = prefix_width + shown_width + spacing.len();
            let remaining = width.saturating_sub(desc_start + 2);
            if remaining > MIN_DESCRIPTION_WIDTH {
                let desc = plain_text::truncate(&desc, remaining);
                if selected {
                    return self
                        .style
                        .selected
                        .apply(&format!("{prefix}{shown}{spacing}{desc}"));
                }
                return format!(
                    "{prefix}{shown}{}",
                    self.style.description.apply(&format!("{spacing}{desc}"))
                );
            }
        }
        let shown = plain_text::truncate(&value, width.saturating_sub(prefix_width + 2));
        let row = format!("{prefix}{shown}");
        let row = plain_text::truncate(&row, width);
        if selected {
            self.style.selected.apply(row)
        } else {
            row.to_owned()
        }
    }
}

impl Component for SelectList {
    fn render(&mut self, width: u16) -> Vec<String> {
        let width = usize::from(width.max(1));
        if self.filtered.is_empty() {
            return vec![
                self.style
                    .no_match
                    .apply(plain_text::truncate(NO_MATCH, width)),
            ];
        }
        let primary = self.primary_width();
        let (start, end) = self.visible_range();
        let mut lines: Vec<String> = (start..end)
            .map(|i| {
                let item = &self.items[self.filtered[i]];
                self.render_item(item, i == self.selected, width, primary)
            })
            .collect();
        if start > 0 || end < self.filtered.len() {
            let info = format!("  ({}/{})", self.selected + 1, self.filtered.len());
            lines.push(
                self.style
                    .scroll_info
                    .apply(plain_text::truncate(&info, width.saturating_sub(2))),
            );
        }
        lines
    }

    fn handle_input(&mut self, event: &InputEvent) -> bool {
        let InputEvent::Key(key) = event else {
            return false;
        };
        let kb = Arc::clone(&self.keybindings);
        if kb.matches(key, "tui.select.up") {
            self.move_selection(-1);
        } else if kb.matches(key, "tui.select.down") {
            self.move_selection(1);
        } else if kb.matches(key, "tui.select.pageUp") {
            let step = self.max_visible.min(self.selected);
            self.set_selected_index(self.selected - step);
        } else if kb.matches(key, "tui.select.pageDown") {
            self.set_selected_index(self.selected.saturating_add(self.max_visible));
        } else if kb.matches(key, "tui.select.confirm") {
            if let Some(item) = self.selected_item().cloned() {
                self.events.push(SelectListEvent::Selected(item));
            }
        } else if kb.matches(key, "tui.select.cancel") {
            self.events.push(SelectListEvent::Cancelled);
        } else {
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{KeyCode, KeyEvent, Modifiers};
    use crate::keybindings::Platform;

    fn list(n: usize, max_visible: usize) -> SelectList {
        let items = (0..n)
            .map(|i| {
                SelectItem::new(format!("item{i}")).with_description(format!("does thing {i}"))
            })
            .collect();
        SelectList::new(
            items,
            max_visible,
            SelectListStyle::default(),
            Arc::new(Keybindings::defaults(Platform::Unix)),
        )
    }

    fn key(code: KeyCode) -> InputEvent {
        InputEvent::Key(KeyEvent::new(code, Modifiers::NONE))
    }

    #[test]
    fn renders_with_descriptions_and_scroll_info() {
        let mut l = list(8, 3);
        insta::assert_snapshot!(l.render(60).join("\n"));
        // Narrow: no descriptions.
        insta::assert_snapshot!(l.render(20).join("\n"));
        for w in 1..80u16 {
            for line in l.render(w) {
                assert!(plain_text::width(&line) <= usize::from(w), "{w}: {line:?}");
            }
        }
    }

    #[test]
    fn navigation_wraps_and_keeps_the_selection_centred() {
        let mut l = list(8, 3);
        assert!(l.handle_input(&key(KeyCode::Up)));
        assert_eq!(l.selected_item().map(|i| i.value.as_str()), Some("item7"));
        insta::assert_snapshot!(l.render(20).join("\n"));
        l.handle_input(&key(KeyCode::Down));
        assert_eq!(l.selected_index(), 0);
        l.handle_input(&key(KeyCode::Down));
        l.handle_input(&key(KeyCode::Down));
        l.handle_input(&key(KeyCode::Down));
        insta::assert_snapshot!(l.render(20).join("\n"));
        l.handle_input(&key(KeyCode::Enter));
        l.handle_input(&key(KeyCode::Escape));
        let events = l.take_events();
        assert_eq!(events.len(), 7);
        assert!(matches!(&events[5], SelectListEvent::Selected(i) if i.value == "item3"));
        assert_eq!(events[6], SelectListEvent::Cancelled);
        assert!(!l.handle_input(&key(KeyCode::Char('x'))));
    }

    #[test]
    fn filtering() {
        let mut l = list(12, 5);
        l.set_filter("ITEM1");
        assert_eq!(l.visible_count(), 3);
        assert_eq!(l.selected_item().map(|i| i.value.as_str()), Some("item1"));
        l.set_filter("nothing");
        assert_eq!(l.selected_item(), None);
        assert_eq!(l.render(40), vec!["  No matches".to_owned()]);
        l.handle_input(&key(KeyCode::Enter));
        l.handle_input(&key(KeyCode::Down));
        assert!(l.take_events().is_empty());
    }
}
