//! `/scoped-models`: which models Ctrl+P cycles through (pi's
//! `components/scoped-models-selector.js`). Enter toggles a model, Ctrl+A enables all (the
//! filtered ones while searching), Ctrl+X clears, Ctrl+P toggles the selected model's provider,
//! Alt+Up/Alt+Down reorder the enabled ones; every change applies to the session at once, and
//! Ctrl+S writes the selection to `enabledModels` in `settings.json`.
//!
//! The selection is a list of `provider/id` strings in cycling order, or `None` for "every
//! model" (pi's `null`); a list that covers every available model collapses back to `None`.

use std::sync::Arc;

use pi_ai::Model;
use pi_tui::keybindings::Keybindings;
use pi_tui::theme::Theme;
use pi_tui::{Component, KeyEvent};

/// Rows of the list shown at once (pi shows 8 here).
const MAX_VISIBLE: usize = 8;

/// What a key did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ScopedEvent {
    /// The selection changed (apply it to the session).
    Changed(Option<Vec<String>>),
    /// Ctrl+S: write the selection to the settings.
    Persist(Option<Vec<String>>),
    /// Esc.
    Closed,
}

/// `provider/id`.
pub(crate) fn full_id(m: &Model) -> String {
    format!("{}/{}", m.provider, m.id)
}

fn normalize(result: Vec<String>, all: &[String]) -> Option<Vec<String>> {
    let covers = result.len() == all.len() && result.iter().all(|id| all.contains(id));
    (!covers).then_some(result)
}

fn is_enabled(enabled: &Option<Vec<String>>, id: &str) -> bool {
    enabled.as_ref().is_none_or(|e| e.iter().any(|x| x == id))
}

/// Enables a disabled model (appended to the order) or disables an enabled one.
pub(crate) fn toggle(
    enabled: &Option<Vec<String>>,
    all: &[String],
    id: &str,
) -> Option<Vec<String>> {
    match enabled {
        None => Some(all.iter().filter(|x| *x != id).cloned().collect()),
        Some(list) => {
            if let Some(i) = list.iter().position(|x| x == id) {
                let mut l = list.clone();
                l.remove(i);
                Some(l)
            } else {
                let mut l = list.clone();
                l.push(id.to_owned());
                normalize(l, all)
            }
        }
    }
}

/// Enables `targets` (every model when `None`).
pub(crate) fn enable_all(
    enabled: &Option<Vec<String>>,
    all: &[String],
    targets: Option<&[String]>,
) -> Option<Vec<String>> {
    let list = enabled.as_ref()?;
    let mut result = list.clone();
    for id in targets.unwrap_or(all) {
        if !result.contains(id) {
            result.push(id.clone());
        }
    }
    normalize(result, all)
}

/// Disables `targets` (every enabled model when `None`).
pub(crate) fn clear_all(
    enabled: &Option<Vec<String>>,
    all: &[String],
    targets: Option<&[String]>,
) -> Option<Vec<String>> {
    match (enabled, targets) {
        (None, Some(t)) => Some(all.iter().filter(|id| !t.contains(id)).cloned().collect()),
        (None, None) => Some(Vec::new()),
        (Some(list), Some(t)) => Some(list.iter().filter(|id| !t.contains(id)).cloned().collect()),
        (Some(_), None) => Some(Vec::new()),
    }
}

/// The enabled models first (in their order), then the rest (in catalog order).
fn sorted_ids(enabled: &Option<Vec<String>>, all: &[String]) -> Vec<String> {
    match enabled {
        None => all.to_vec(),
        Some(list) => list
            .iter()
            .cloned()
            .chain(all.iter().filter(|id| !list.contains(id)).cloned())
            .collect(),
    }
}

/// The selector.
pub(crate) struct ScopedModelsView {
    models: Vec<Model>,
    all: Vec<String>,
    enabled: Option<Vec<String>>,
    query: String,
    /// The ids shown, in order.
    filtered: Vec<String>,
    selected: usize,
    dirty: bool,
    theme: Arc<Theme>,
    keys: Arc<Keybindings>,
}

impl ScopedModelsView {
    /// The selector over the available `models` with `enabled` (`provider/id`s, `None` = all).
    pub(crate) fn new(
        models: Vec<Model>,
        enabled: Option<Vec<String>>,
        theme: Arc<Theme>,
        keys: Arc<Keybindings>,
    ) -> Self {
        let all = models.iter().map(full_id).collect();
        let mut v = Self {
            models,
            all,
            enabled,
            query: String::new(),
            filtered: Vec::new(),
            selected: 0,
            dirty: false,
            theme,
            keys,
        };
        v.refresh();
        v
    }

    fn model(&self, id: &str) -> Option<&Model> {
        self.models.iter().find(|m| full_id(m) == id)
    }

    fn refresh(&mut self) {
        let ids = sorted_ids(&self.enabled, &self.all);
        self.filtered = if self.query.is_empty() {
            ids
        } else {
            let texts: Vec<(String, String)> = ids
                .into_iter()
                .map(|id| {
                    let text = match self.model(&id) {
                        Some(m) => format!(
                            "{p} {p}/{id} {p} {id} {name}",
                            p = m.provider,
                            id = m.id,
                            name = m.name
                        ),
                        None => id.clone(),
                    };
                    (id, text)
                })
                .collect();
            pi_tui::fuzzy::fuzzy_filter(texts, &self.query, |(_, t)| t.as_str())
                .into_iter()
                .map(|(id, _)| id)
                .collect()
        };
        self.selected = self.selected.min(self.filtered.len().saturating_sub(1));
    }

    fn changed(&mut self, next: Option<Vec<String>>) -> Option<ScopedEvent> {
        self.enabled = next;
        self.dirty = true;
        self.refresh();
        Some(ScopedEvent::Changed(self.enabled.clone()))
    }

    /// The targets of "all"/"clear": the filtered models while searching.
    fn targets(&self) -> Option<Vec<String>> {
        (!self.query.is_empty()).then(|| self.filtered.clone())
    }

    /// Handles a key; `Some` when something happened the caller acts on.
    pub(crate) fn handle_key(&mut self, k: &KeyEvent) -> Option<ScopedEvent> {
        let is = |a: &str| self.keys.matches(k, a);
        let n = self.filtered.len();
        if is("tui.select.cancel") {
            return Some(ScopedEvent::Closed);
        }
        let selected_id = self.filtered.get(self.selected).cloned();
        if is("app.models.reorderUp") || is("app.models.reorderDown") {
            let up = is("app.models.reorderUp");
            let (Some(list), Some(id)) = (self.enabled.clone(), selected_id) else {
                return None;
            };
            let i = list.iter().position(|x| *x == id)?;
            let j = if up { i.checked_sub(1)? } else { i + 1 };
            if j >= list.len() {
                return None;
            }
            let mut l = list;
            l.swap(i, j);
            self.selected = if up {
                self.selected.saturating_sub(1)
            } else {
                self.selected + 1
            };
            return self.changed(Some(l));
        }
        if is("tui.select.up") {
            if n > 0 {
                self.selected = self.selected.checked_sub(1).unwrap_or(n - 1);
            }
            return None;
        }
        if is("tui.select.down") {
            if n > 0 {
                self.selected = (self.selected + 1) % n;
            }
            return None;
        }
        if is("tui.select.confirm") {
            let id = selected_id?;
            let next = toggle(&self.enabled, &self.all, &id);
            return self.changed(next);
        }
        if is("app.models.enableAll") {
            let next = enable_all(&self.enabled, &self.all, self.targets().as_deref());
            return self.changed(next);
        }
        if is("app.models.clearAll") {
            let next = clear_all(&self.enabled, &self.all, self.targets().as_deref());
            return self.changed(next);
        }
        if is("app.models.toggleProvider") {
            let provider = self.model(&selected_id?)?.provider.clone();
            let ids: Vec<String> = self
                .models
                .iter()
                .filter(|m| m.provider == provider)
                .map(full_id)
                .collect();
            let all_on = ids.iter().all(|id| is_enabled(&self.enabled, id));
            let next = if all_on {
                clear_all(&self.enabled, &self.all, Some(&ids))
            } else {
                enable_all(&self.enabled, &self.all, Some(&ids))
            };
            return self.changed(next);
        }
        if is("app.models.save") {
            self.dirty = false;
            return Some(ScopedEvent::Persist(self.enabled.clone()));
        }
        if super::picker::edit_search(&mut self.query, k) {
            self.selected = 0;
            self.refresh();
        }
        None
    }

    /// Pasted text goes to the search line (its first line).
    pub(crate) fn paste(&mut self, text: &str) {
        let line = text.lines().next().unwrap_or_default();
        self.query.push_str(&pi_tui::ansi::escape_control(line));
        self.selected = 0;
        self.refresh();
    }

    fn key_text(&self, action: &str) -> String {
        self.keys
            .keys(action)
            .first()
            .map_or_else(|| "(unbound)".to_owned(), ToString::to_string)
    }

    fn footer(&self) -> String {
        let count = match &self.enabled {
            None => "all enabled".to_owned(),
            Some(list) => {
                let on = list.iter().filter(|id| self.all.contains(id)).count();
                let gone = list.len() - on;
                let gone = if gone > 0 {
                    format!(" · {gone} unavailable")
                } else {
                    String::new()
                };
                format!("{on}/{} enabled{gone}", self.all.len())
            }
        };
        let parts = [
            format!("{} toggle", self.key_text("tui.select.confirm")),
            format!("{} all", self.key_text("app.models.enableAll")),
            format!("{} clear", self.key_text("app.models.clearAll")),
            format!("{} provider", self.key_text("app.models.toggleProvider")),
            format!(
                "{}/{} reorder",
                self.key_text("app.models.reorderUp"),
                self.key_text("app.models.reorderDown")
            ),
            format!("{} save", self.key_text("app.models.save")),
            count,
        ];
        let text = self.theme.fg("dim", &format!("  {}", parts.join(" · ")));
        if self.dirty {
            format!("{text} {}", self.theme.fg("warning", "(unsaved)"))
        } else {
            text
        }
    }
}

impl Component for ScopedModelsView {
    fn render(&mut self, width: u16) -> Vec<String> {
        let w = usize::from(width);
        let t = &self.theme;
        let fit = |s: &str| pi_tui::ansi::truncate(s, w, "…");
        let rule = t.fg("border", &"─".repeat(w));
        let mut out = vec![rule.clone(), String::new()];
        out.push(fit(&t.fg("accent", "\x1b[1mModel Configuration\x1b[22m")));
        out.push(fit(&t.fg(
            "muted",
            &format!(
                "Session-only. {} to save to settings.",
                self.key_text("app.models.save")
            ),
        )));
        out.push(String::new());
        out.push(fit(&format!("{} {}", t.fg("accent", ">"), self.query)));
        out.push(String::new());
        let n = self.filtered.len();
        if n == 0 {
            out.push(fit(&t.fg("muted", "  No matching models")));
        } else {
            let start = self
                .selected
                .saturating_sub(MAX_VISIBLE / 2)
                .min(n.saturating_sub(MAX_VISIBLE));
            let end = (start + MAX_VISIBLE).min(n);
            for (i, id) in self.filtered[start..end].iter().enumerate() {
                let here = start + i == self.selected;
                let model = self.model(id);
                let prefix = if here {
                    t.fg("accent", "→ ")
                } else {
                    "  ".to_owned()
                };
                let status = if model.is_some() && is_enabled(&self.enabled, id) {
                    t.fg("accent", "✓ ")
                } else {
                    "  ".to_owned()
                };
                let name = model.map_or_else(
                    || format!("\x1b[9m{id}\x1b[29m"),
                    |m| pi_tui::ansi::escape_control(&m.id),
                );
                let name = if here { t.fg("accent", &name) } else { name };
                let badge = t.fg(
                    "muted",
                    &model.map_or_else(
                        || " [unavailable]".to_owned(),
                        |m| format!(" [{}]", m.provider),
                    ),
                );
                out.push(fit(&format!("{prefix}{status}{name}{badge}")));
            }
            if start > 0 || end < n {
                out.push(t.fg("muted", &format!("  ({}/{n})", self.selected + 1)));
            }
            out.push(String::new());
            let about = match self
                .filtered
                .get(self.selected)
                .and_then(|id| self.model(id))
            {
                Some(m) => format!("  Model Name: {}", pi_tui::ansi::escape_control(&m.name)),
                None => "  Model unavailable".to_owned(),
            };
            out.push(fit(&t.fg("muted", &about)));
        }
        out.push(String::new());
        // Wrapped, not cut: `(unsaved)` at its end must stay visible on narrow terminals.
        out.extend(pi_tui::ansi::wrap(&self.footer(), w));
        out.push(rule);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn toggling_from_all_disables_one_and_enabling_it_back_collapses_to_all() {
        let all = ids(&["a/1", "a/2", "b/1"]);
        let off = toggle(&None, &all, "a/2");
        assert_eq!(off, Some(ids(&["a/1", "b/1"])));
        assert_eq!(toggle(&off, &all, "a/2"), None);
        let one = Some(ids(&["b/1"]));
        assert_eq!(toggle(&one, &all, "a/1"), Some(ids(&["b/1", "a/1"])));
        assert_eq!(toggle(&one, &all, "b/1"), Some(Vec::new()));
    }

    #[test]
    fn enable_and_clear_follow_the_targets() {
        let all = ids(&["a/1", "a/2", "b/1"]);
        assert_eq!(enable_all(&None, &all, None), None);
        let some = Some(ids(&["b/1"]));
        assert_eq!(
            enable_all(&some, &all, Some(&ids(&["a/2"]))),
            Some(ids(&["b/1", "a/2"]))
        );
        assert_eq!(enable_all(&some, &all, None), None);
        assert_eq!(
            clear_all(&None, &all, Some(&ids(&["a/1", "a/2"]))),
            Some(ids(&["b/1"]))
        );
        assert_eq!(clear_all(&None, &all, None), Some(Vec::new()));
        assert_eq!(clear_all(&some, &all, None), Some(Vec::new()));
    }

    #[test]
    fn the_key_hint_line_wraps_so_unsaved_stays_visible() {
        use pi_tui::keybindings::Platform;
        use pi_tui::terminal_colors::ColorScheme;
        use pi_tui::theme::ColorMode;
        let theme = Arc::new(Theme::builtin(ColorScheme::Dark, ColorMode::None));
        let keys = Arc::new(Keybindings::defaults(Platform::Unix));
        let mut v = ScopedModelsView::new(Vec::new(), Some(Vec::new()), theme, keys);
        v.dirty = true;
        for width in [40u16, 80, 100, 120] {
            let lines = v.render(width);
            let text: Vec<String> = lines.iter().map(|l| pi_tui::ansi::strip(l)).collect();
            assert!(
                text.iter().any(|l| l.contains("(unsaved)")),
                "{width}: {text:#?}"
            );
            assert!(text.iter().any(|l| l.contains("0/0 enabled")), "{text:#?}");
            assert!(
                lines
                    .iter()
                    .all(|l| pi_tui::ansi::visible_width(l) <= usize::from(width))
            );
        }
    }

    #[test]
    fn enabled_models_come_first_in_their_order() {
        let all = ids(&["a/1", "a/2", "b/1"]);
        assert_eq!(
            sorted_ids(&Some(ids(&["b/1", "a/1"])), &all),
            ids(&["b/1", "a/1", "a/2"])
        );
        assert_eq!(sorted_ids(&None, &all), all);
    }
}
