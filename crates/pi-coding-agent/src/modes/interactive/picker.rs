//! The selectors that take the editor's place (pi's `showSelector`: the model, thinking-level,
//! session and fork selectors): rules above and below, optional notes, a search line that
//! filters as you type (pi's fuzzy ranking), the list with the current item ticked, a hint.

use std::sync::Arc;

use pi_tui::keybindings::Keybindings;
use pi_tui::theme::Theme;
use pi_tui::{Component, KeyCode, KeyEvent, Modifiers};

/// Rows of the list shown at once (pi's selectors show 10).
const MAX_VISIBLE: usize = 10;

/// A key typed into a search line: Backspace deletes the last character, a printable
/// character (plain or with Shift) is appended. Returns whether `query` changed.
pub(crate) fn edit_search(query: &mut String, k: &KeyEvent) -> bool {
    match k.code {
        KeyCode::Backspace => query.pop().is_some(),
        KeyCode::Char(c)
            if (k.modifiers == Modifiers::NONE || k.modifiers == Modifiers::SHIFT)
                && !c.is_control() =>
        {
            query.push(c);
            true
        }
        _ => false,
    }
}

/// One choice.
#[derive(Clone, Debug)]
pub(crate) struct PickItem {
    /// What choosing it hands back.
    pub key: String,
    /// The main text.
    pub label: String,
    /// Muted text after the label (`[provider]`, a time).
    pub badge: Option<String>,
    /// What the search matches against.
    pub search: String,
    /// The current one (ticked).
    pub current: bool,
    /// Drawn before the label while nothing is searched (a tree's branch lines).
    pub prefix: String,
}

impl PickItem {
    /// An item whose search text is its label.
    pub(crate) fn new(key: impl Into<String>, label: impl Into<String>) -> Self {
        let label = label.into();
        Self {
            key: key.into(),
            search: label.clone(),
            label,
            badge: None,
            current: false,
            prefix: String::new(),
        }
    }
}

/// What a key did to the picker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PickerEvent {
    /// Enter on an item (its key).
    Chosen(String),
    /// Ctrl+S on an item: choose it and make it the default (pi's model and thinking
    /// selectors).
    ChosenAsDefault(String),
    /// Esc.
    Cancelled,
    /// A key of one of the picker's extra actions ([`Picker::with_actions`]): the action and
    /// the selected item's key.
    Action(&'static str, Option<String>),
}

/// A search matcher: from the query, a scorer of an item's search text (its score, lower
/// first; `None`: no match). The query is parsed once per change.
pub(crate) type Matcher = Box<dyn Fn(&str) -> Scorer + Send>;

/// What a [`Matcher`] makes of a query.
pub(crate) type Scorer = Box<dyn Fn(&str) -> Option<f64>>;

/// A selector in the editor's place.
pub(crate) struct Picker {
    title: String,
    notes: Vec<(String, &'static str)>,
    searchable: bool,
    /// A text question: Enter answers the typed line, there is no list.
    text_input: bool,
    /// The typed text is a secret: drawn as `•`s.
    secret: bool,
    /// Keybinding actions handed back as [`PickerEvent::Action`].
    actions: Vec<&'static str>,
    query: String,
    items: Vec<PickItem>,
    filtered: Vec<usize>,
    selected: usize,
    hint: String,
    empty_text: String,
    /// A search keeps the items' order (pi's `Recent` sessions) instead of ranking them.
    keep_order: bool,
    /// The search's own matcher (query, item search text → score, lower first), instead of
    /// the fuzzy one.
    matcher: Option<Matcher>,
    theme: Arc<Theme>,
    keys: Arc<Keybindings>,
}

impl Picker {
    /// A picker over `items`, the current one selected.
    pub(crate) fn new(
        title: impl Into<String>,
        items: Vec<PickItem>,
        theme: Arc<Theme>,
        keys: Arc<Keybindings>,
    ) -> Self {
        let selected = items.iter().position(|i| i.current).unwrap_or(0);
        let filtered = (0..items.len()).collect();
        Self {
            title: title.into(),
            notes: Vec::new(),
            searchable: false,
            text_input: false,
            secret: false,
            actions: Vec::new(),
            query: String::new(),
            items,
            filtered,
            selected,
            hint: "Enter to select · Esc to cancel".into(),
            empty_text: "No matches".into(),
            keep_order: false,
            matcher: None,
            theme,
            keys,
        }
    }

    /// A Yes/No question (`yes`/`no` keys), `message` as its notes.
    pub(crate) fn yes_no(
        title: impl Into<String>,
        message: &str,
        theme: Arc<Theme>,
        keys: Arc<Keybindings>,
    ) -> Self {
        let items = vec![PickItem::new("yes", "Yes"), PickItem::new("no", "No")];
        let mut p = Self::new(title, items, theme, keys);
        for line in message.lines() {
            p = p.with_note(line.to_owned(), "text");
        }
        p
    }

    /// With a search line, filled with `initial`.
    pub(crate) fn searchable(mut self, initial: &str) -> Self {
        self.searchable = true;
        self.query = initial.to_owned();
        if !initial.is_empty() {
            self.refilter();
        }
        self
    }

    /// A one-line text question (no list): Enter answers what was typed, from `initial`.
    pub(crate) fn text_input(mut self, initial: &str) -> Self {
        self.searchable = true;
        self.text_input = true;
        self.query = initial.to_owned();
        self
    }

    /// The text typed into a [`Picker::text_input`] is drawn masked (an API key).
    pub(crate) fn secret(mut self) -> Self {
        self.secret = true;
        self
    }

    /// Keys of these keybinding actions end the picker with [`PickerEvent::Action`] (checked
    /// before the list's own keys).
    pub(crate) fn with_actions(mut self, actions: &[&'static str]) -> Self {
        self.actions = actions.to_vec();
        self
    }

    /// With a note line above the list in a theme colour.
    pub(crate) fn with_note(mut self, text: impl Into<String>, color: &'static str) -> Self {
        self.notes.push((text.into(), color));
        self
    }

    /// With this hint line.
    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = hint.into();
        self
    }

    /// With this text for an empty list.
    pub(crate) fn with_empty_text(mut self, text: impl Into<String>) -> Self {
        self.empty_text = text.into();
        self
    }

    /// Searches with `matcher` instead of the fuzzy match; ties keep the items' order.
    pub(crate) fn with_matcher(mut self, matcher: Matcher) -> Self {
        self.matcher = Some(matcher);
        self.refilter();
        self
    }

    /// A search filters without reordering.
    pub(crate) fn keeping_order(mut self) -> Self {
        self.keep_order = true;
        self.refilter();
        self
    }

    /// The search line.
    pub(crate) fn query(&self) -> &str {
        &self.query
    }

    /// Selects the item with `key`, if shown.
    pub(crate) fn select_key(&mut self, key: &str) {
        if let Some(p) = self.filtered.iter().position(|&i| self.items[i].key == key) {
            self.selected = p;
        }
    }

    fn refilter(&mut self) {
        if self.text_input {
            return;
        }
        self.filtered = if self.query.trim().is_empty() {
            (0..self.items.len()).collect()
        } else {
            if let Some(m) = &self.matcher {
                let score = m(&self.query);
                let mut scored: Vec<(usize, f64)> = self
                    .items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, it)| score(&it.search).map(|s| (i, s)))
                    .collect();
                if !self.keep_order {
                    scored.sort_by(|a, b| a.1.total_cmp(&b.1));
                }
                self.filtered = scored.into_iter().map(|(i, _)| i).collect();
                self.selected = 0;
                return;
            }
            let all: Vec<(usize, &PickItem)> = self.items.iter().enumerate().collect();
            let mut v: Vec<usize> =
                pi_tui::fuzzy::fuzzy_filter(all, &self.query, |(_, item)| item.search.as_str())
                    .into_iter()
                    .map(|(i, _)| i)
                    .collect();
            if self.keep_order {
                v.sort_unstable();
            }
            v
        };
        self.selected = 0;
    }

    /// Draws with another theme (a theme preview).
    pub(crate) fn set_theme(&mut self, theme: Arc<Theme>) {
        self.theme = theme;
    }

    /// The key of the selected item.
    pub(crate) fn selected_key(&self) -> Option<String> {
        self.filtered
            .get(self.selected)
            .map(|&i| self.items[i].key.clone())
    }

    /// Handles a key; `Some` when the picker is done.
    pub(crate) fn handle_key(&mut self, k: &KeyEvent) -> Option<PickerEvent> {
        let is = |a: &str| self.keys.matches(k, a);
        let n = self.filtered.len();
        if is("tui.select.cancel") {
            return Some(PickerEvent::Cancelled);
        }
        if let Some(action) = self.actions.iter().copied().find(|a| is(a)) {
            return Some(PickerEvent::Action(action, self.selected_key()));
        }
        if is("tui.select.up") {
            if n > 0 {
                self.selected = if self.selected == 0 {
                    n - 1
                } else {
                    self.selected - 1
                };
            }
        } else if is("tui.select.down") {
            if n > 0 {
                self.selected = (self.selected + 1) % n;
            }
        } else if is("tui.select.confirm") {
            if self.text_input {
                return Some(PickerEvent::Chosen(self.query.clone()));
            }
            return self.selected_key().map(PickerEvent::Chosen);
        } else if k.code == KeyCode::Char('s') && k.modifiers == Modifiers::CTRL {
            return self.selected_key().map(PickerEvent::ChosenAsDefault);
        } else if self.searchable && edit_search(&mut self.query, k) {
            self.refilter();
        }
        None
    }

    /// Pasted text goes to the search line (one line of it).
    pub(crate) fn paste(&mut self, text: &str) {
        if self.searchable {
            let line = text.lines().next().unwrap_or_default();
            self.query.push_str(&pi_tui::ansi::escape_control(line));
            self.refilter();
        }
    }
}

impl Component for Picker {
    fn render(&mut self, width: u16) -> Vec<String> {
        let w = usize::from(width);
        let t = &self.theme;
        let fit = |s: &str| pi_tui::ansi::truncate(s, w, "…");
        let rule = t.fg("border", &"─".repeat(w));
        let mut out = vec![rule.clone()];
        out.push(fit(
            &t.fg("accent", &format!("\x1b[1m{}\x1b[22m", self.title))
        ));
        for (note, color) in &self.notes {
            out.push(fit(&t.fg(color, note)));
        }
        if self.searchable {
            out.push(String::new());
            let q = if self.secret {
                "•".repeat(self.query.chars().count())
            } else {
                pi_tui::ansi::escape_control(&self.query)
            };
            out.push(fit(&format!(
                "{} {q}{}",
                t.fg("accent", ">"),
                pi_tui::CURSOR_MARKER
            )));
        }
        out.push(String::new());
        if self.text_input {
            out.push(fit(&t.fg("dim", &format!("  {}", self.hint))));
            out.push(rule);
            return out;
        }
        let n = self.filtered.len();
        let start = self
            .selected
            .saturating_sub(MAX_VISIBLE / 2)
            .min(n.saturating_sub(MAX_VISIBLE));
        let end = (start + MAX_VISIBLE).min(n);
        for (row, &i) in self.filtered[start..end].iter().enumerate() {
            let item = &self.items[i];
            let selected = start + row == self.selected;
            let cursor = if selected {
                t.fg("accent", "→ ")
            } else {
                "  ".into()
            };
            let tick = if item.current {
                t.fg("accent", "✓ ")
            } else {
                "  ".into()
            };
            let label = pi_tui::ansi::escape_control(&item.label.replace('\n', " "));
            let label = if self.query.trim().is_empty() && !item.prefix.is_empty() {
                format!("{}{label}", t.fg("dim", &item.prefix))
            } else {
                label
            };
            let label = if selected {
                t.fg("accent", &label)
            } else {
                label
            };
            let badge = item
                .badge
                .as_deref()
                .map(|b| format!(" {}", t.fg("muted", b)))
                .unwrap_or_default();
            out.push(fit(&format!("{cursor}{tick}{label}{badge}")));
        }
        if start > 0 || end < n {
            out.push(t.fg("muted", &format!("  ({}/{n})", self.selected + 1)));
        }
        if n == 0 {
            out.push(t.fg("muted", &format!("  {}", self.empty_text)));
        }
        out.push(String::new());
        for line in self.hint.split('\n') {
            out.push(fit(&t.fg("dim", &format!("  {line}"))));
        }
        out.push(rule);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::keybindings::Platform;
    use pi_tui::terminal_colors::ColorScheme;
    use pi_tui::theme::ColorMode;

    fn picker(items: Vec<PickItem>) -> Picker {
        let theme = Arc::new(Theme::builtin(ColorScheme::Dark, ColorMode::None));
        let keys = Arc::new(Keybindings::with_user(
            Platform::current(),
            &Default::default(),
        ));
        Picker::new("Select", items, theme, keys).searchable("")
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, Modifiers::NONE)
    }

    #[test]
    fn search_filters_and_enter_chooses() {
        let mut items = vec![
            PickItem::new("a/one", "one"),
            PickItem::new("b/two", "two"),
            PickItem::new("c/three", "three"),
        ];
        items[1].current = true;
        let mut p = picker(items);
        // The current item starts selected.
        assert_eq!(p.selected_key().as_deref(), Some("b/two"));
        for c in "th".chars() {
            assert_eq!(p.handle_key(&key(KeyCode::Char(c))), None);
        }
        let screen = p.render(40).join("\n");
        assert!(
            screen.contains("three") && !screen.contains("two"),
            "{screen}"
        );
        assert_eq!(
            p.handle_key(&key(KeyCode::Enter)),
            Some(PickerEvent::Chosen("c/three".into()))
        );
        p.handle_key(&key(KeyCode::Backspace));
        p.handle_key(&key(KeyCode::Backspace));
        p.handle_key(&key(KeyCode::Char('z')));
        assert!(p.render(40).join("\n").contains("No matches"));
        assert_eq!(p.handle_key(&key(KeyCode::Enter)), None);
        assert_eq!(
            p.handle_key(&key(KeyCode::Escape)),
            Some(PickerEvent::Cancelled)
        );
    }

    #[test]
    fn up_and_down_wrap_and_scroll() {
        let items = (0..25)
            .map(|i| PickItem::new(i.to_string(), format!("item {i}")))
            .collect();
        let mut p = picker(items);
        p.handle_key(&key(KeyCode::Up));
        assert_eq!(p.selected_key().as_deref(), Some("24"));
        let screen = p.render(40).join("\n");
        assert!(
            screen.contains("(25/25)") && screen.contains("item 24"),
            "{screen}"
        );
        p.handle_key(&key(KeyCode::Down));
        assert_eq!(p.selected_key().as_deref(), Some("0"));
    }
}
