//! `/settings`: pi's settings rows (`components/settings-selector.js`), each cycling through
//! its values with Enter or Space and written at once to the same `settings.json` keys.

use std::sync::Arc;

use pi_tui::keybindings::Keybindings;
use pi_tui::theme::Theme;
use pi_tui::{Component, KeyCode, KeyEvent};
use serde_json::Value;

use crate::config::settings::SettingsManager;

/// A setting the selector changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `compaction.enabled`.
    AutoCompact,
    /// `steeringMode`.
    SteeringMode,
    /// `followUpMode`.
    FollowUpMode,
    /// `hideThinkingBlock`.
    HideThinking,
    /// `quietStartup`.
    QuietStartup,
    /// `collapseChangelog`.
    CollapseChangelog,
    /// `doubleEscapeAction`.
    DoubleEscapeAction,
    /// `treeFilterMode`.
    TreeFilterMode,
    /// `terminal.showImages`.
    ShowImages,
    /// `enableSkillCommands`.
    SkillCommands,
    /// `autocompleteMaxVisible`.
    AutocompleteMaxVisible,
    /// `editorPaddingX`.
    EditorPadding,
    /// `tuiMode`.
    TuiMode,
    /// `theme`.
    Theme,
}

struct Row {
    setting: Setting,
    label: &'static str,
    description: &'static str,
    values: &'static [&'static str],
    value: String,
}

const BOOL: &[&str] = &["true", "false"];
const QUEUE: &[&str] = &["one-at-a-time", "all"];

impl Setting {
    /// The key in `settings.json` (`parent.child` for nested ones).
    pub fn key(self) -> &'static str {
        match self {
            Setting::AutoCompact => "compaction.enabled",
            Setting::SteeringMode => "steeringMode",
            Setting::FollowUpMode => "followUpMode",
            Setting::HideThinking => "hideThinkingBlock",
            Setting::QuietStartup => "quietStartup",
            Setting::CollapseChangelog => "collapseChangelog",
            Setting::DoubleEscapeAction => "doubleEscapeAction",
            Setting::TreeFilterMode => "treeFilterMode",
            Setting::ShowImages => "terminal.showImages",
            Setting::SkillCommands => "enableSkillCommands",
            Setting::AutocompleteMaxVisible => "autocompleteMaxVisible",
            Setting::EditorPadding => "editorPaddingX",
            Setting::TuiMode => "tuiMode",
            Setting::Theme => "theme",
        }
    }

    fn default_value(self) -> &'static str {
        match self {
            Setting::AutoCompact | Setting::ShowImages | Setting::SkillCommands => "true",
            Setting::HideThinking | Setting::QuietStartup | Setting::CollapseChangelog => "false",
            Setting::SteeringMode | Setting::FollowUpMode => "one-at-a-time",
            Setting::DoubleEscapeAction => "tree",
            Setting::TreeFilterMode => "default",
            Setting::AutocompleteMaxVisible => "5",
            Setting::EditorPadding => "0",
            Setting::TuiMode => "regular",
            Setting::Theme => "dark",
        }
    }

    /// The value as JSON: booleans and numbers typed, the rest strings.
    pub fn json(self, value: &str) -> Value {
        match value {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            v => match v.parse::<u64>() {
                Ok(n)
                    if matches!(
                        self,
                        Setting::AutocompleteMaxVisible | Setting::EditorPadding
                    ) =>
                {
                    Value::from(n)
                }
                _ => Value::from(v),
            },
        }
    }

    /// Writes `value` to the global settings file.
    pub fn persist(self, settings: &mut SettingsManager, value: &str) {
        let v = self.json(value);
        match self.key().split_once('.') {
            Some((parent, child)) => settings.set_global_nested(parent, child, v),
            None => settings.set_global(self.key(), Some(v)),
        }
    }

    fn current(self, settings: &SettingsManager) -> String {
        let v = match self.key().split_once('.') {
            Some((parent, child)) => settings.get_nested(parent, child),
            None => settings.get(self.key()),
        };
        match v {
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => self.default_value().to_owned(),
        }
    }
}

/// The selector.
pub struct SettingsView {
    rows: Vec<Row>,
    selected: usize,
    theme: Arc<Theme>,
    keys: Arc<Keybindings>,
}

/// What a key did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettingsEvent {
    /// A setting took this value (already persisted by the caller).
    Changed(Setting, String),
    /// Esc.
    Closed,
}

impl SettingsView {
    /// The rows with the effective values of `settings`.
    pub fn new(settings: &SettingsManager, theme: Arc<Theme>, keys: Arc<Keybindings>) -> Self {
        let row = |setting: Setting,
                   label: &'static str,
                   description: &'static str,
                   values: &'static [&'static str]| Row {
            setting,
            label,
            description,
            values,
            value: setting.current(settings),
        };
        let rows = vec![
            row(
                Setting::AutoCompact,
                "Auto-compact",
                "Compact the context when it nears the window",
                BOOL,
            ),
            row(
                Setting::SteeringMode,
                "Steering mode",
                "How many steering messages a turn takes",
                QUEUE,
            ),
            row(
                Setting::FollowUpMode,
                "Follow-up mode",
                "How many follow-up messages a run takes",
                QUEUE,
            ),
            row(
                Setting::HideThinking,
                "Hide thinking",
                "Collapse thinking blocks",
                BOOL,
            ),
            row(
                Setting::QuietStartup,
                "Quiet startup",
                "Leave out the start-up header",
                BOOL,
            ),
            row(
                Setting::CollapseChangelog,
                "Collapse changelog",
                "Condense the changelog after updates",
                BOOL,
            ),
            row(
                Setting::DoubleEscapeAction,
                "Double-escape action",
                "What Esc twice on an empty editor opens",
                &["tree", "fork", "none"],
            ),
            row(
                Setting::TreeFilterMode,
                "Tree filter mode",
                "The /tree filter to start with",
                &["default", "no-tools", "user-only", "labeled-only", "all"],
            ),
            row(
                Setting::ShowImages,
                "Show images",
                "Draw images in the terminal where it can",
                BOOL,
            ),
            row(
                Setting::SkillCommands,
                "Skill commands",
                "Offer skills as /skill:name",
                BOOL,
            ),
            row(
                Setting::AutocompleteMaxVisible,
                "Autocomplete rows",
                "Rows of the completion menu",
                &["3", "5", "8", "10", "15", "20"],
            ),
            row(
                Setting::EditorPadding,
                "Editor padding",
                "Columns of padding inside the editor",
                &["0", "1", "2", "3"],
            ),
            row(
                Setting::TuiMode,
                "TUI mode",
                "Inline (scrollback) or full screen",
                &["regular", "fullscreen"],
            ),
            row(
                Setting::Theme,
                "Theme",
                "Colour theme (applies at the next start)",
                &["dark", "light"],
            ),
        ];
        Self {
            rows,
            selected: 0,
            theme,
            keys,
        }
    }

    /// Handles a key.
    pub fn handle_key(&mut self, k: &KeyEvent) -> Option<SettingsEvent> {
        let is = |a: &str| self.keys.matches(k, a);
        let n = self.rows.len();
        if is("tui.select.cancel") {
            return Some(SettingsEvent::Closed);
        }
        if is("tui.select.up") {
            self.selected = (self.selected + n - 1) % n;
        } else if is("tui.select.down") {
            self.selected = (self.selected + 1) % n;
        } else if is("tui.select.confirm") || k.code == KeyCode::Char(' ') {
            let row = &mut self.rows[self.selected];
            let at = row.values.iter().position(|v| *v == row.value);
            let next = at.map_or(0, |i| (i + 1) % row.values.len());
            row.value = row.values[next].to_owned();
            return Some(SettingsEvent::Changed(row.setting, row.value.clone()));
        }
        None
    }
}

impl Component for SettingsView {
    fn render(&mut self, width: u16) -> Vec<String> {
        let w = usize::from(width);
        let t = &self.theme;
        let fit = |s: &str| pi_tui::ansi::truncate(s, w, "…");
        let rule = t.fg("border", &"─".repeat(w));
        let mut out = vec![
            rule.clone(),
            fit(&t.fg("accent", "\x1b[1mSettings\x1b[22m")),
            String::new(),
        ];
        let label_w = self.rows.iter().map(|r| r.label.len()).max().unwrap_or(0);
        for (i, r) in self.rows.iter().enumerate() {
            let sel = i == self.selected;
            let cursor = if sel {
                t.fg("accent", "→ ")
            } else {
                "  ".into()
            };
            // Narrow terminals: no column padding, so the value stays in view.
            let (label, gap) = if w < label_w + 4 + r.value.len() {
                (format!("{}:", r.label), " ")
            } else {
                (format!("{:<label_w$}", r.label), "  ")
            };
            let label = if sel { t.fg("accent", &label) } else { label };
            out.push(fit(&format!(
                "{cursor}{label}{gap}{}",
                t.fg("muted", &r.value)
            )));
        }
        out.push(String::new());
        if let Some(r) = self.rows.get(self.selected) {
            out.push(fit(&t.fg("dim", &format!("  {}", r.description))));
        }
        out.push(fit(&t.fg("dim", "  Enter/Space to change · Esc to close")));
        out.push(rule);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narrow_terminal_still_shows_the_values() {
        use pi_tui::keybindings::Platform;
        use pi_tui::terminal_colors::ColorScheme;
        use pi_tui::theme::ColorMode;
        let theme = Arc::new(Theme::builtin(ColorScheme::Dark, ColorMode::None));
        let keys = Arc::new(Keybindings::with_user(
            Platform::current(),
            &Default::default(),
        ));
        let settings = SettingsManager::in_memory(serde_json::Map::new());
        let mut v = SettingsView::new(&settings, theme, keys);
        let lines = v.render(22);
        assert!(
            lines.iter().any(|l| l.contains("Auto-compact: true")),
            "{lines:?}"
        );
        let wide = v.render(80);
        assert!(
            wide.iter()
                .any(|l| l.contains("Auto-compact          true")),
            "{wide:?}"
        );
    }

    #[test]
    fn values_are_typed_as_pi_writes_them() {
        assert_eq!(Setting::QuietStartup.json("true"), Value::Bool(true));
        assert_eq!(Setting::AutocompleteMaxVisible.json("8"), Value::from(8));
        assert_eq!(Setting::SteeringMode.json("all"), Value::from("all"));
        assert_eq!(Setting::ShowImages.key(), "terminal.showImages");
    }
}
