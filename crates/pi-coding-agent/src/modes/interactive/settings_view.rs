//! `/settings`: pi's settings rows (`components/settings-selector.js`, in pi's order), each
//! cycling through its values with Enter or Space and written at once to the same
//! `settings.json` keys; typing filters the rows by name, as pi's list does. Rows of pi's that
//! change nothing in pi-rs (transport, Mermaid, telemetry, the fullscreen scrollbar and copy
//! options, output padding, clear on shrink, terminal progress) are left out.

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
    /// `terminal.imageWidthCells`.
    ImageWidth,
    /// `images.autoResize`.
    AutoResizeImages,
    /// `images.blockImages`.
    BlockImages,
    /// `showHardwareCursor` (applies at the next start).
    HardwareCursor,
    /// `httpIdleTimeoutMs` (shown as pi's choices: `30 sec` … `disabled`).
    HttpIdleTimeout,
    /// `showCacheMissNotices`.
    CacheMissNotices,
    /// `defaultProjectTrust` (shown as `Ask`, `Always trust`, `Never trust`).
    DefaultProjectTrust,
}

/// pi's HTTP idle timeout choices (`core/http-dispatcher.js`): label and milliseconds.
const HTTP_IDLE_CHOICES: &[(&str, u64)] = &[
    ("30 sec", 30_000),
    ("1 min", 60_000),
    ("2 min", 120_000),
    ("5 min", 300_000),
    ("disabled", 0),
];

/// The labels of [`HTTP_IDLE_CHOICES`], in order.
const IDLE_LABELS: &[&str] = &["30 sec", "1 min", "2 min", "5 min", "disabled"];

/// The labels of [`TRUST_LABELS`], in order.
const TRUST_VALUE_LABELS: &[&str] = &["Ask", "Always trust", "Never trust"];

/// pi's labels of the `defaultProjectTrust` values.
const TRUST_LABELS: &[(&str, &str)] = &[
    ("ask", "Ask"),
    ("always", "Always trust"),
    ("never", "Never trust"),
];

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
            Setting::ImageWidth => "terminal.imageWidthCells",
            Setting::AutoResizeImages => "images.autoResize",
            Setting::BlockImages => "images.blockImages",
            Setting::HardwareCursor => "showHardwareCursor",
            Setting::HttpIdleTimeout => "httpIdleTimeoutMs",
            Setting::CacheMissNotices => "showCacheMissNotices",
            Setting::DefaultProjectTrust => "defaultProjectTrust",
        }
    }

    fn default_value(self) -> &'static str {
        match self {
            Setting::AutoCompact
            | Setting::ShowImages
            | Setting::SkillCommands
            | Setting::AutoResizeImages => "true",
            Setting::HideThinking
            | Setting::QuietStartup
            | Setting::CollapseChangelog
            | Setting::BlockImages
            | Setting::HardwareCursor
            | Setting::CacheMissNotices => "false",
            Setting::ImageWidth => "60",
            Setting::HttpIdleTimeout => "5 min",
            Setting::DefaultProjectTrust => "Ask",
            Setting::SteeringMode | Setting::FollowUpMode => "one-at-a-time",
            Setting::DoubleEscapeAction => "tree",
            Setting::TreeFilterMode => "default",
            Setting::AutocompleteMaxVisible => "5",
            Setting::EditorPadding => "0",
            Setting::TuiMode => "regular",
            Setting::Theme => "dark",
        }
    }

    /// The value as JSON: booleans and numbers typed, the rest strings; pi's labels become the
    /// values they stand for (`1 min` → `60000`, `Always trust` → `"always"`).
    pub fn json(self, value: &str) -> Value {
        if self == Setting::HttpIdleTimeout
            && let Some((_, ms)) = HTTP_IDLE_CHOICES.iter().find(|(l, _)| *l == value)
        {
            return Value::from(*ms);
        }
        if self == Setting::DefaultProjectTrust
            && let Some((v, _)) = TRUST_LABELS.iter().find(|(_, l)| *l == value)
        {
            return Value::from(*v);
        }
        match value {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            v => match v.parse::<u64>() {
                Ok(n)
                    if matches!(
                        self,
                        Setting::AutocompleteMaxVisible
                            | Setting::EditorPadding
                            | Setting::ImageWidth
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
        match (self, v) {
            (Setting::HttpIdleTimeout, Some(Value::Number(n))) => {
                let ms = n.as_f64().unwrap_or(300_000.0);
                HTTP_IDLE_CHOICES
                    .iter()
                    .find(|(_, c)| *c as f64 == ms)
                    .map_or_else(|| format!("{} sec", ms / 1000.0), |(l, _)| (*l).to_owned())
            }
            (Setting::DefaultProjectTrust, Some(Value::String(s))) => TRUST_LABELS
                .iter()
                .find(|(v, _)| v == s)
                .map_or("Ask", |(_, l)| l)
                .to_owned(),
            (_, Some(Value::Bool(b))) => b.to_string(),
            (_, Some(Value::String(s))) => s.clone(),
            (_, Some(Value::Number(n))) => n.to_string(),
            _ => self.default_value().to_owned(),
        }
    }
}

/// The selector.
pub struct SettingsView {
    rows: Vec<Row>,
    /// The search line.
    query: String,
    /// Indexes of the rows the search keeps.
    shown: Vec<usize>,
    /// Index into `shown`.
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
        const IMAGE_WIDTHS: &[&str] = &["60", "80", "120"];
        // The labels of HTTP_IDLE_CHOICES and TRUST_LABELS (a test checks they agree).
        let idle = IDLE_LABELS;
        let trust = TRUST_VALUE_LABELS;
        let rows = vec![
            row(
                Setting::AutoCompact,
                "Auto-compact",
                "Compact the context when it nears the window",
                BOOL,
            ),
            row(
                Setting::ShowImages,
                "Show images",
                "Draw images in the terminal where it can",
                BOOL,
            ),
            row(
                Setting::ImageWidth,
                "Image width",
                "Width of inline images in terminal cells",
                IMAGE_WIDTHS,
            ),
            row(
                Setting::AutoResizeImages,
                "Auto-resize images",
                "Scale large images down to 2000×2000 before sending them",
                BOOL,
            ),
            row(
                Setting::BlockImages,
                "Block images",
                "Never send images to the provider",
                BOOL,
            ),
            row(
                Setting::SkillCommands,
                "Skill commands",
                "Offer skills as /skill:name",
                BOOL,
            ),
            row(
                Setting::HardwareCursor,
                "Show hardware cursor",
                "Show the terminal's own cursor in the editor (applies at the next start)",
                BOOL,
            ),
            row(
                Setting::EditorPadding,
                "Editor padding",
                "Columns of padding inside the editor",
                &["0", "1", "2", "3"],
            ),
            row(
                Setting::AutocompleteMaxVisible,
                "Autocomplete rows",
                "Rows of the completion menu",
                &["3", "5", "8", "10", "15", "20"],
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
                Setting::HttpIdleTimeout,
                "HTTP idle timeout",
                "Longest silence of a provider before the request fails",
                idle,
            ),
            row(
                Setting::HideThinking,
                "Hide thinking",
                "Collapse thinking blocks",
                BOOL,
            ),
            row(
                Setting::CacheMissNotices,
                "Cache miss notices",
                "Say in the transcript when a request missed the provider's cache",
                BOOL,
            ),
            row(
                Setting::CollapseChangelog,
                "Collapse changelog",
                "Condense the changelog after updates",
                BOOL,
            ),
            row(
                Setting::QuietStartup,
                "Quiet startup",
                "Leave out the start-up header",
                BOOL,
            ),
            row(
                Setting::DefaultProjectTrust,
                "Default project trust",
                "What to do with a project that has no saved trust decision",
                trust,
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
        let shown = (0..rows.len()).collect();
        Self {
            rows,
            query: String::new(),
            shown,
            selected: 0,
            theme,
            keys,
        }
    }

    fn refilter(&mut self) {
        self.shown = if self.query.is_empty() {
            (0..self.rows.len()).collect()
        } else {
            let all: Vec<(usize, &'static str)> = self
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| (i, r.label))
                .collect();
            pi_tui::fuzzy::fuzzy_filter(all, &self.query, |(_, l)| l)
                .into_iter()
                .map(|(i, _)| i)
                .collect()
        };
        self.selected = 0;
    }

    /// Handles a key.
    pub fn handle_key(&mut self, k: &KeyEvent) -> Option<SettingsEvent> {
        let is = |a: &str| self.keys.matches(k, a);
        let n = self.shown.len();
        if is("tui.select.cancel") {
            return Some(SettingsEvent::Closed);
        }
        if is("tui.select.up") {
            if n > 0 {
                self.selected = (self.selected + n - 1) % n;
            }
        } else if is("tui.select.down") {
            if n > 0 {
                self.selected = (self.selected + 1) % n;
            }
        } else if is("tui.select.confirm") || k.code == KeyCode::Char(' ') {
            let &i = self.shown.get(self.selected)?;
            let row = &mut self.rows[i];
            let at = row.values.iter().position(|v| *v == row.value);
            let next = at.map_or(0, |i| (i + 1) % row.values.len());
            row.value = row.values[next].to_owned();
            return Some(SettingsEvent::Changed(row.setting, row.value.clone()));
        } else if super::picker::edit_search(&mut self.query, k) {
            self.refilter();
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
            fit(&format!(
                "{} {}",
                t.fg("accent", ">"),
                pi_tui::ansi::escape_control(&self.query)
            )),
            String::new(),
        ];
        let label_w = self.rows.iter().map(|r| r.label.len()).max().unwrap_or(0);
        // At most 10 rows at once (pi's list), the selected one in view.
        const VISIBLE: usize = 10;
        let n = self.shown.len();
        let start = self
            .selected
            .saturating_sub(VISIBLE / 2)
            .min(n.saturating_sub(VISIBLE));
        let end = (start + VISIBLE).min(n);
        if n == 0 {
            out.push(fit(&t.fg("muted", "  No matching settings")));
        }
        for (pos, &i) in self.shown[start..end].iter().enumerate() {
            let r = &self.rows[i];
            let sel = start + pos == self.selected;
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
        if start > 0 || end < n {
            out.push(t.fg("muted", &format!("  ({}/{n})", self.selected + 1)));
        }
        out.push(String::new());
        if let Some(r) = self.shown.get(self.selected).map(|&i| &self.rows[i]) {
            out.push(fit(&t.fg("dim", &format!("  {}", r.description))));
        }
        out.push(fit(&t.fg(
            "dim",
            "  Enter/Space to change · type to search · Esc to close",
        )));
        out.push(rule);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::Modifiers;

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
                .any(|l| l.contains("Auto-compact           true")),
            "{wide:?}"
        );
    }

    #[test]
    fn values_are_typed_as_pi_writes_them() {
        assert_eq!(Setting::QuietStartup.json("true"), Value::Bool(true));
        assert_eq!(Setting::AutocompleteMaxVisible.json("8"), Value::from(8));
        assert_eq!(Setting::SteeringMode.json("all"), Value::from("all"));
        assert_eq!(Setting::ShowImages.key(), "terminal.showImages");
        assert_eq!(Setting::HttpIdleTimeout.json("1 min"), Value::from(60_000));
        assert_eq!(Setting::HttpIdleTimeout.json("disabled"), Value::from(0));
        assert_eq!(
            Setting::DefaultProjectTrust.json("Always trust"),
            Value::from("always")
        );
        assert_eq!(Setting::ImageWidth.json("120"), Value::from(120));
    }

    #[test]
    fn the_value_lists_are_the_choices_labels() {
        let idle: Vec<&str> = HTTP_IDLE_CHOICES.iter().map(|(l, _)| *l).collect();
        assert_eq!(idle, IDLE_LABELS);
        let trust: Vec<&str> = TRUST_LABELS.iter().map(|(_, l)| *l).collect();
        assert_eq!(trust, TRUST_VALUE_LABELS);
    }

    #[test]
    fn labels_read_back_from_the_stored_values_and_search_filters_rows() {
        use pi_tui::keybindings::Platform;
        use pi_tui::terminal_colors::ColorScheme;
        use pi_tui::theme::ColorMode;
        let mut map = serde_json::Map::new();
        map.insert("httpIdleTimeoutMs".into(), Value::from(120_000));
        map.insert("defaultProjectTrust".into(), Value::from("never"));
        let settings = SettingsManager::in_memory(map);
        assert_eq!(Setting::HttpIdleTimeout.current(&settings), "2 min");
        assert_eq!(
            Setting::DefaultProjectTrust.current(&settings),
            "Never trust"
        );
        let theme = Arc::new(Theme::builtin(ColorScheme::Dark, ColorMode::None));
        let keys = Arc::new(Keybindings::with_user(
            Platform::current(),
            &Default::default(),
        ));
        let mut v = SettingsView::new(&settings, theme, keys);
        for c in "trust".chars() {
            v.handle_key(&KeyEvent::new(KeyCode::Char(c), Modifiers::NONE));
        }
        let lines = v.render(80).join("\n");
        assert!(lines.contains("Default project trust"), "{lines}");
        assert!(!lines.contains("Auto-compact"), "{lines}");
        // Enter cycles the row the search kept.
        let ev = v.handle_key(&KeyEvent::new(KeyCode::Enter, Modifiers::NONE));
        assert_eq!(
            ev,
            Some(SettingsEvent::Changed(
                Setting::DefaultProjectTrust,
                "Ask".into()
            ))
        );
    }
}
