//! `/settings`: pi's settings rows (`components/settings-selector.js`), with pi's labels and
//! descriptions in pi's order (the image rows only where the terminal draws images), each
//! cycling through its values with Enter or Space and written at once to the same
//! `settings.json` keys; typing filters the rows by name, as pi's list does. The theme and
//! per-model thinking rows open selectors of the mode, the warnings row a submenu here.
//! Rows whose feature pi-rs lacks (transport, Mermaid, telemetry, output padding, clear on
//! shrink, the fullscreen exit/scrollbar/copy options) still write their key, so pi reads
//! the choice; docs/interactive.md lists them.

use std::sync::Arc;

use pi_tui::keybindings::Keybindings;
use pi_tui::theme::Theme;
use pi_tui::{Component, KeyCode, KeyEvent};
use serde_json::Value;

use crate::config::settings::SettingsManager;

/// A setting the selector changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Setting {
    /// `compaction.enabled`.
    AutoCompact,
    /// `steeringMode`.
    SteeringMode,
    /// `followUpMode`.
    FollowUpMode,
    /// `transport`.
    Transport,
    /// `hideThinkingBlock`.
    HideThinking,
    /// `markdown.mermaid` (pi-rs draws no diagrams; the value is kept for pi).
    Mermaid,
    /// `quietStartup`.
    QuietStartup,
    /// `collapseChangelog`.
    CollapseChangelog,
    /// `enableInstallTelemetry` (pi-rs sends no telemetry; the value is kept for pi).
    InstallTelemetry,
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
    /// `outputPad` (kept for pi; pi-rs pads its messages one column).
    OutputPad,
    /// `terminal.clearOnShrink` (kept for pi; pi-rs always clears).
    ClearOnShrink,
    /// `terminal.showTerminalProgress`.
    TerminalProgress,
    /// `tuiMode`.
    TuiMode,
    /// `fullscreenExitOutput` (kept for pi).
    FullscreenExitOutput,
    /// `fullscreenScrollbar` (kept for pi).
    FullscreenScrollbar,
    /// `fullscreenCopyOnSelect` (kept for pi).
    FullscreenCopyOnSelect,
    /// `theme` (a submenu: the theme selector).
    Theme,
    /// `warnings` (a submenu of one row).
    Warnings,
    /// `warnings.anthropicExtraUsage`.
    AnthropicExtraUsage,
    /// `modelThinkingLevels` (a submenu: a model, then its level).
    ModelThinking,
    /// `terminal.imageWidthCells`.
    ImageWidth,
    /// `images.autoResize`.
    AutoResizeImages,
    /// `images.blockImages`.
    BlockImages,
    /// `showHardwareCursor`.
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
    description: String,
    /// The values Enter cycles through; empty for a submenu row.
    values: &'static [&'static str],
    value: String,
}

const BOOL: &[&str] = &["true", "false"];
const QUEUE: &[&str] = &["one-at-a-time", "all"];

impl Setting {
    /// The key in `settings.json` (`parent.child` for nested ones).
    pub(crate) fn key(self) -> &'static str {
        match self {
            Setting::AutoCompact => "compaction.enabled",
            Setting::SteeringMode => "steeringMode",
            Setting::FollowUpMode => "followUpMode",
            Setting::Transport => "transport",
            Setting::HideThinking => "hideThinkingBlock",
            Setting::Mermaid => "markdown.mermaid",
            Setting::QuietStartup => "quietStartup",
            Setting::CollapseChangelog => "collapseChangelog",
            Setting::InstallTelemetry => "enableInstallTelemetry",
            Setting::DoubleEscapeAction => "doubleEscapeAction",
            Setting::TreeFilterMode => "treeFilterMode",
            Setting::ShowImages => "terminal.showImages",
            Setting::SkillCommands => "enableSkillCommands",
            Setting::AutocompleteMaxVisible => "autocompleteMaxVisible",
            Setting::EditorPadding => "editorPaddingX",
            Setting::OutputPad => "outputPad",
            Setting::ClearOnShrink => "terminal.clearOnShrink",
            Setting::TerminalProgress => "terminal.showTerminalProgress",
            Setting::TuiMode => "tuiMode",
            Setting::FullscreenExitOutput => "fullscreenExitOutput",
            Setting::FullscreenScrollbar => "fullscreenScrollbar",
            Setting::FullscreenCopyOnSelect => "fullscreenCopyOnSelect",
            Setting::Theme => "theme",
            Setting::Warnings => "warnings",
            Setting::AnthropicExtraUsage => "warnings.anthropicExtraUsage",
            Setting::ModelThinking => "modelThinkingLevels",
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
            | Setting::AutoResizeImages
            | Setting::InstallTelemetry
            | Setting::FullscreenCopyOnSelect
            | Setting::AnthropicExtraUsage => "true",
            Setting::HideThinking
            | Setting::QuietStartup
            | Setting::CollapseChangelog
            | Setting::BlockImages
            | Setting::HardwareCursor
            | Setting::CacheMissNotices
            | Setting::TerminalProgress => "false",
            // pi: the setting, else `PI_CLEAR_ON_SHRINK=1`.
            Setting::ClearOnShrink => {
                if std::env::var("PI_CLEAR_ON_SHRINK").as_deref() == Ok("1") {
                    "true"
                } else {
                    "false"
                }
            }
            Setting::ImageWidth => "60",
            Setting::HttpIdleTimeout => "5 min",
            Setting::DefaultProjectTrust => "Ask",
            Setting::SteeringMode | Setting::FollowUpMode => "one-at-a-time",
            Setting::Transport => "auto",
            Setting::Mermaid => "streaming",
            Setting::DoubleEscapeAction => "tree",
            Setting::TreeFilterMode => "default",
            Setting::AutocompleteMaxVisible => "5",
            Setting::EditorPadding => "0",
            Setting::OutputPad => "1",
            Setting::TuiMode => "regular",
            Setting::FullscreenExitOutput => "transcript",
            Setting::FullscreenScrollbar => "auto",
            Setting::Theme => "dark",
            Setting::Warnings => "configure",
            Setting::ModelThinking => "none",
        }
    }

    /// The value as JSON: booleans and numbers typed, the rest strings; pi's labels become the
    /// values they stand for (`1 min` → `60000`, `Always trust` → `"always"`).
    pub(crate) fn json(self, value: &str) -> Value {
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
                            | Setting::OutputPad
                    ) =>
                {
                    Value::from(n)
                }
                _ => Value::from(v),
            },
        }
    }

    /// Writes `value` to the global settings file.
    pub(crate) fn persist(self, settings: &mut SettingsManager, value: &str) {
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
            (Setting::Warnings, _) => "configure".to_owned(),
            (Setting::ModelThinking, Some(Value::Object(m))) if !m.is_empty() => {
                format!("{} configured", m.len())
            }
            (Setting::ModelThinking, _) => "none".to_owned(),
            // pi reads anything but 0 as 1.
            (Setting::OutputPad, Some(v)) => {
                if v.as_f64() == Some(0.0) { "0" } else { "1" }.to_owned()
            }
            (_, Some(Value::Bool(b))) => b.to_string(),
            (_, Some(Value::String(s))) => s.clone(),
            (_, Some(Value::Number(n))) => n.to_string(),
            _ => self.default_value().to_owned(),
        }
    }
}

/// The selector.
pub(crate) struct SettingsView {
    title: Option<&'static str>,
    rows: Vec<Row>,
    /// The search line.
    query: String,
    /// Indexes of the rows the search keeps.
    shown: Vec<usize>,
    /// Index into `shown`.
    selected: usize,
    /// An open submenu (the warnings), drawn and keyed instead.
    child: Option<Box<SettingsView>>,
    theme: Arc<Theme>,
    keys: Arc<Keybindings>,
}

/// What a key did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SettingsEvent {
    /// A setting took this value (already persisted by the caller).
    Changed(Setting, String),
    /// Enter on a submenu row the caller draws (the theme, the per-model thinking levels).
    Open(Setting),
    /// Esc.
    Closed,
}

/// pi's key names for descriptions (`keyDisplayText`): each part capitalised, `/` between
/// the keys of an action.
fn key_display(keys: &Keybindings, action: &str) -> String {
    keys.keys(action)
        .iter()
        .map(|k| {
            k.to_string()
                .split('+')
                .map(|p| {
                    let mut c = p.chars();
                    c.next()
                        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect::<Vec<_>>()
        .join("/")
}

impl SettingsView {
    /// The rows with the effective values of `settings`, in pi's order; the image rows only
    /// when the terminal draws images (`images`), as pi shows them.
    pub(crate) fn new(
        settings: &SettingsManager,
        images: bool,
        theme: Arc<Theme>,
        keys: Arc<Keybindings>,
    ) -> Self {
        let row = |setting: Setting,
                   label: &'static str,
                   description: &str,
                   values: &'static [&'static str]| Row {
            setting,
            label,
            description: description.to_owned(),
            values,
            value: setting.current(settings),
        };
        let follow_up = key_display(&keys, "app.message.followUp");
        let cycle_thinking = key_display(&keys, "app.thinking.cycle");
        let mut rows = vec![row(
            Setting::AutoCompact,
            "Auto-compact",
            "Automatically compact context when it gets too large",
            BOOL,
        )];
        if images {
            rows.push(row(
                Setting::ShowImages,
                "Show images",
                "Render images inline in terminal",
                BOOL,
            ));
            rows.push(row(
                Setting::ImageWidth,
                "Image width",
                "Preferred inline image width in terminal cells",
                &["60", "80", "120"],
            ));
        }
        rows.extend([
            row(
                Setting::AutoResizeImages,
                "Auto-resize images",
                "Resize large images to 2000x2000 max for better model compatibility",
                BOOL,
            ),
            row(
                Setting::BlockImages,
                "Block images",
                "Prevent images from being sent to LLM providers",
                BOOL,
            ),
            row(
                Setting::SkillCommands,
                "Skill commands",
                "Register skills as /skill:name commands",
                BOOL,
            ),
            row(
                Setting::HardwareCursor,
                "Show hardware cursor",
                "Show the terminal cursor while still positioning it for IME support",
                BOOL,
            ),
            row(
                Setting::EditorPadding,
                "Editor padding",
                "Horizontal padding for input editor (0-3)",
                &["0", "1", "2", "3"],
            ),
            row(
                Setting::OutputPad,
                "Output padding",
                "Horizontal padding for user messages, assistant messages, and thinking",
                &["0", "1"],
            ),
            row(
                Setting::AutocompleteMaxVisible,
                "Autocomplete max items",
                "Max visible items in autocomplete dropdown (3-20)",
                &["3", "5", "7", "10", "15", "20"],
            ),
            row(
                Setting::ClearOnShrink,
                "Clear on shrink",
                "Clear empty rows when content shrinks (may cause flicker)",
                BOOL,
            ),
            row(
                Setting::TerminalProgress,
                "Terminal progress",
                "Show OSC 9;4 progress indicators in the terminal tab bar",
                BOOL,
            ),
            row(
                Setting::SteeringMode,
                "Steering mode",
                "Enter while streaming queues steering messages. 'one-at-a-time': deliver one, wait for response. 'all': deliver all at once.",
                QUEUE,
            ),
            row(
                Setting::FollowUpMode,
                "Follow-up mode",
                &format!("{follow_up} queues follow-up messages until agent stops. 'one-at-a-time': deliver one, wait for response. 'all': deliver all at once."),
                QUEUE,
            ),
            row(
                Setting::Transport,
                "Transport",
                "Preferred transport for providers that support multiple transports",
                &["sse", "websocket", "websocket-cached", "auto"],
            ),
            row(
                Setting::HttpIdleTimeout,
                "HTTP idle timeout",
                "Maximum idle gap while waiting for HTTP headers or body chunks. Disable for local models that pause longer than five minutes.",
                IDLE_LABELS,
            ),
            row(
                Setting::HideThinking,
                "Hide thinking",
                "Hide thinking blocks in assistant responses",
                BOOL,
            ),
            row(
                Setting::Mermaid,
                "Mermaid diagrams",
                "Render Mermaid code blocks as Unicode diagrams",
                &["off", "final", "streaming"],
            ),
            row(
                Setting::CacheMissNotices,
                "Cache miss notices",
                "Show transcript notices for cache costs and provider recovery diagnostics",
                BOOL,
            ),
            row(
                Setting::CollapseChangelog,
                "Collapse changelog",
                "Show condensed changelog after updates",
                BOOL,
            ),
            row(
                Setting::QuietStartup,
                "Quiet startup",
                "Disable verbose printing at startup",
                BOOL,
            ),
            row(
                Setting::InstallTelemetry,
                "Install telemetry",
                "Send an anonymous version/update ping after changelog-detected updates",
                BOOL,
            ),
            row(
                Setting::DefaultProjectTrust,
                "Default project trust",
                "Fallback behavior when no extension or saved trust decision decides project trust",
                TRUST_VALUE_LABELS,
            ),
            row(
                Setting::DoubleEscapeAction,
                "Double-escape action",
                "Action when pressing Escape twice with empty editor",
                &["tree", "fork", "none"],
            ),
            row(
                Setting::TreeFilterMode,
                "Tree filter mode",
                "Default filter when opening /tree",
                &["default", "no-tools", "user-only", "labeled-only", "all"],
            ),
            row(
                Setting::Warnings,
                "Warnings",
                "Enable or disable individual warnings",
                &[],
            ),
            row(
                Setting::ModelThinking,
                "Default thinking level per model",
                &format!("Override the default thinking level for specific models. {cycle_thinking} cycles in-session."),
                &[],
            ),
            row(
                Setting::TuiMode,
                "TUI mode",
                "Interface layout; fullscreen mode is experimental",
                &["regular", "fullscreen"],
            ),
            row(
                Setting::FullscreenExitOutput,
                "Fullscreen exit output",
                "Print the transcript or only a session resume hint when exiting fullscreen mode",
                &["transcript", "resume-hint"],
            ),
            row(
                Setting::FullscreenScrollbar,
                "Fullscreen scrollbar",
                "Scrollbar behavior in fullscreen mode; has no effect in regular mode",
                &["auto", "always", "hidden"],
            ),
            row(
                Setting::FullscreenCopyOnSelect,
                "Fullscreen copy on select",
                "Automatically copy selected text in fullscreen mode; disable to copy selections with Ctrl+X",
                BOOL,
            ),
            row(
                Setting::Theme,
                "Theme",
                "Color theme for the interface",
                &[],
            ),
        ]);
        Self::with_rows(None, rows, theme, keys)
    }

    /// pi's warnings submenu.
    fn warnings(settings: &SettingsManager, theme: Arc<Theme>, keys: Arc<Keybindings>) -> Self {
        let rows = vec![Row {
            setting: Setting::AnthropicExtraUsage,
            label: "Anthropic extra usage",
            description: "Warn when Anthropic subscription auth may use paid extra usage".into(),
            values: BOOL,
            value: Setting::AnthropicExtraUsage.current(settings),
        }];
        Self::with_rows(Some("Warnings"), rows, theme, keys)
    }

    fn with_rows(
        title: Option<&'static str>,
        rows: Vec<Row>,
        theme: Arc<Theme>,
        keys: Arc<Keybindings>,
    ) -> Self {
        let shown = (0..rows.len()).collect();
        Self {
            title,
            rows,
            query: String::new(),
            shown,
            selected: 0,
            child: None,
            theme,
            keys,
        }
    }

    /// Opens pi's warnings submenu (after [`SettingsEvent::Open`] of [`Setting::Warnings`]).
    pub(crate) fn open_warnings(&mut self, settings: &SettingsManager) {
        self.child = Some(Box::new(Self::warnings(
            settings,
            self.theme.clone(),
            self.keys.clone(),
        )));
    }

    /// Selects the row of `setting`, if shown.
    pub(crate) fn select(&mut self, setting: Setting) {
        if let Some(p) = self
            .shown
            .iter()
            .position(|&i| self.rows[i].setting == setting)
        {
            self.selected = p;
        }
    }

    /// Shows `value` for `setting` (a submenu's result, a refused change).
    pub(crate) fn set_value(&mut self, setting: Setting, value: &str) {
        if let Some(r) = self.rows.iter_mut().find(|r| r.setting == setting) {
            r.value = value.to_owned();
        }
    }

    /// Draws with another theme (a preview, a reload).
    pub(crate) fn set_theme(&mut self, theme: Arc<Theme>) {
        if let Some(c) = self.child.as_mut() {
            c.set_theme(theme.clone());
        }
        self.theme = theme;
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
    pub(crate) fn handle_key(&mut self, k: &KeyEvent) -> Option<SettingsEvent> {
        if let Some(child) = self.child.as_mut() {
            return match child.handle_key(k) {
                Some(SettingsEvent::Closed) => {
                    self.child = None;
                    None
                }
                other => other,
            };
        }
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
            if row.values.is_empty() {
                return Some(SettingsEvent::Open(row.setting));
            }
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
        if let Some(c) = self.child.as_mut() {
            return c.render(width);
        }
        let w = usize::from(width);
        let t = &self.theme;
        let fit = |s: &str| pi_tui::ansi::truncate(s, w, "…");
        let rule = t.fg("border", &"─".repeat(w));
        let mut out = vec![
            rule.clone(),
            fit(&t.fg(
                "accent",
                &format!("\x1b[1m{}\x1b[22m", self.title.unwrap_or("Settings")),
            )),
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
            for l in pi_tui::ansi::wrap(&r.description, w.saturating_sub(2).max(1)) {
                out.push(fit(&t.fg("dim", &format!("  {l}"))));
            }
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
        let mut v = SettingsView::new(&settings, true, theme, keys);
        let lines = v.render(22);
        assert!(
            lines.iter().any(|l| l.contains("Auto-compact: true")),
            "{lines:?}"
        );
        let wide = v.render(80);
        assert!(
            wide.iter()
                .any(|l| l.contains(&format!("Auto-compact{}true", " ".repeat(22)))),
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
        let mut v = SettingsView::new(&settings, true, theme, keys);
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
