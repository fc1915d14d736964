//! The theme engine: pi's theme JSON (`vars`, the colour tokens of its
//! `theme-schema.json`, the `export` colours for HTML export), validated by our own code,
//! turned into escape sequences for the terminal's colour depth (true colour, 256, 16, or
//! none under `NO_COLOR`), plus the dark/light detection pi uses to pick a default.
//!
//! A colour value is `"#rrggbb"`, a 256-colour index `0..=255`, `""` (the terminal's default
//! colour) or the name of a variable in `vars` (which may name another variable).
//!
//! The built-in `dark` and `light` themes are ours (`themes/*.json` in this crate), with
//! pi's token names.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crate::paint::Paint;
use crate::terminal_colors::{ColorScheme, Rgb};

/// One colour token of pi's theme schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenDef {
    /// Its name in `colors`.
    pub name: &'static str,
    /// Whether a background colour (SGR 48) rather than a foreground (SGR 38).
    pub background: bool,
    /// For an optional token, the token it falls back to; `None` means required.
    pub fallback: Option<&'static str>,
}

const fn fg(name: &'static str) -> TokenDef {
    TokenDef {
        name,
        background: false,
        fallback: None,
    }
}

const fn bg(name: &'static str) -> TokenDef {
    TokenDef {
        name,
        background: true,
        fallback: None,
    }
}

const fn optional(mut def: TokenDef, fallback: &'static str) -> TokenDef {
    def.fallback = Some(fallback);
    def
}

/// The 56 tokens of pi's schema, in its order: 51 required, 5 optional with fallbacks.
pub const TOKENS: &[TokenDef] = &[
    fg("accent"),
    fg("border"),
    fg("borderAccent"),
    fg("borderMuted"),
    fg("success"),
    fg("error"),
    fg("warning"),
    fg("muted"),
    fg("dim"),
    fg("text"),
    fg("thinkingText"),
    bg("selectedBg"),
    optional(fg("scrollbarTrack"), "muted"),
    optional(fg("scrollbarThumb"), "text"),
    optional(bg("searchMatchBg"), "selectedBg"),
    optional(fg("searchMatchText"), "text"),
    bg("userMessageBg"),
    fg("userMessageText"),
    bg("customMessageBg"),
    fg("customMessageText"),
    fg("customMessageLabel"),
    bg("toolPendingBg"),
    bg("toolSuccessBg"),
    bg("toolErrorBg"),
    fg("toolTitle"),
    fg("toolOutput"),
    fg("mdHeading"),
    fg("mdLink"),
    fg("mdLinkUrl"),
    fg("mdCode"),
    fg("mdCodeBlock"),
    fg("mdCodeBlockBorder"),
    fg("mdQuote"),
    fg("mdQuoteBorder"),
    fg("mdHr"),
    fg("mdListBullet"),
    fg("toolDiffAdded"),
    fg("toolDiffRemoved"),
    fg("toolDiffContext"),
    fg("syntaxComment"),
    fg("syntaxKeyword"),
    fg("syntaxFunction"),
    fg("syntaxVariable"),
    fg("syntaxString"),
    fg("syntaxNumber"),
    fg("syntaxType"),
    fg("syntaxOperator"),
    fg("syntaxPunctuation"),
    fg("thinkingOff"),
    fg("thinkingMinimal"),
    fg("thinkingLow"),
    fg("thinkingMedium"),
    fg("thinkingHigh"),
    fg("thinkingXhigh"),
    optional(fg("thinkingMax"), "thinkingXhigh"),
    fg("bashMode"),
];

/// The keys of the `export` section.
pub const EXPORT_KEYS: &[&str] = &["pageBg", "cardBg", "infoBg"];

/// A resolved colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Color {
    /// The terminal's default (`""`).
    Default,
    /// A 256-colour palette index.
    Index(u8),
    /// A 24-bit colour.
    Rgb(Rgb),
}

impl Color {
    /// The colour as `#rrggbb` (palette indices through the xterm palette); `None` for the
    /// terminal default.
    pub fn to_hex(self) -> Option<String> {
        let rgb = match self {
            Self::Default => return None,
            Self::Index(i) => ansi256_to_rgb(i),
            Self::Rgb(rgb) => rgb,
        };
        Some(format!("#{:02x}{:02x}{:02x}", rgb.r, rgb.g, rgb.b))
    }
}

/// How many colours the terminal shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorMode {
    /// 24-bit colour (`38;2;r;g;b`).
    TrueColor,
    /// The 256-colour palette (`38;5;n`), pi's fallback.
    Ansi256,
    /// The 16 basic colours (`30–37`, `90–97`), for consoles without the palette.
    Ansi16,
    /// No colour at all (`NO_COLOR`, `TERM=dumb`).
    None,
}

impl ColorMode {
    /// The mode for an environment: `NO_COLOR` (non-empty) or `TERM=dumb` is
    /// [`None`](Self::None); `PI_TRUE_COLOR=1`/`0` forces true colour / 256 colours; else
    /// pi's terminal detection (`COLORTERM=truecolor|24bit`, or a terminal known to support
    /// it: kitty, Ghostty, WezTerm, Warp, iTerm2, Windows Terminal, Alacritty, VS Code, Zed,
    /// JetBrains; never assumed inside tmux or screen); a Linux console or VT terminal gets
    /// 16 colours; everything else 256.
    pub fn detect(env: impl Fn(&str) -> Option<String>) -> Self {
        let get = |name: &str| env(name).unwrap_or_default();
        if !get("NO_COLOR").is_empty() {
            return Self::None;
        }
        let term = get("TERM").to_ascii_lowercase();
        if term == "dumb" {
            return Self::None;
        }
        match get("PI_TRUE_COLOR").as_str() {
            "1" => return Self::TrueColor,
            "0" => return Self::Ansi256,
            _ => {}
        }
        let color_term = get("COLORTERM").to_ascii_lowercase();
        let hint = color_term == "truecolor" || color_term == "24bit";
        let program = get("TERM_PROGRAM").to_ascii_lowercase();
        let set = |name: &str| !get(name).is_empty();
        let true_color = if set("TMUX") || term.starts_with("tmux") || term.starts_with("screen") {
            hint
        } else {
            hint || set("KITTY_WINDOW_ID")
                || program == "kitty"
                || program == "ghostty"
                || term.contains("ghostty")
                || set("GHOSTTY_RESOURCES_DIR")
                || set("WEZTERM_PANE")
                || program == "wezterm"
                || program == "warpterminal"
                || set("WARP_SESSION_ID")
                || set("ITERM_SESSION_ID")
                || program == "iterm.app"
                || set("WT_SESSION")
                || matches!(program.as_str(), "alacritty" | "vscode" | "zed")
                || get("TERMINAL_EMULATOR").eq_ignore_ascii_case("jetbrains-jediterm")
                || cfg!(windows)
        };
        if true_color {
            Self::TrueColor
        } else if matches!(
            term.as_str(),
            "linux" | "vt100" | "vt102" | "vt220" | "ansi" | "cons25"
        ) {
            Self::Ansi16
        } else {
            Self::Ansi256
        }
    }

    /// [`detect`](Self::detect) over the process environment.
    pub fn from_env() -> Self {
        Self::detect(|name| std::env::var(name).ok())
    }
}

/// A problem that stops a theme from loading.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ThemeError {
    /// Not JSON.
    #[error("Failed to parse theme {label}: {message}")]
    Json {
        /// Where it came from (a path or a name).
        label: String,
        /// The parser's message.
        message: String,
    },
    /// JSON, but not a valid theme.
    #[error("{}", invalid_message(.label, .missing, .errors))]
    Invalid {
        /// Where it came from.
        label: String,
        /// Required colour tokens that are absent, sorted.
        missing: Vec<String>,
        /// Other problems, each `path: message`.
        errors: Vec<String>,
    },
}

fn invalid_message(label: &str, missing: &[String], errors: &[String]) -> String {
    // pi's wording (`validateThemeJson`): users compare it with pi's docs and issues.
    let mut out = format!("Invalid theme \"{label}\":\n");
    if !missing.is_empty() {
        out.push_str("\nMissing required color tokens:");
        for m in missing {
            out.push_str("\n  - ");
            out.push_str(m);
        }
        out.push_str("\n\nPlease add these colors to your theme's \"colors\" object.");
        out.push_str("\nSee the built-in themes (dark.json, light.json) for reference values.");
    }
    if !errors.is_empty() {
        out.push_str("\n\nOther errors:");
        for e in errors {
            out.push_str("\n  - ");
            out.push_str(e);
        }
    }
    out
}

/// Something odd in a theme that does not stop it from loading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThemeWarning {
    /// A key the schema does not define (`path` is e.g. `/colors/acent`); ignored.
    UnknownKey {
        /// JSON pointer of the key.
        path: String,
    },
}

impl fmt::Display for ThemeWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownKey { path } => write!(f, "unknown theme key {path} ignored"),
        }
    }
}

/// A loaded theme, ready to colour text.
#[derive(Clone, Debug)]
pub struct Theme {
    name: String,
    mode: ColorMode,
    colors: HashMap<&'static str, Color>,
    fg: HashMap<&'static str, String>,
    bg: HashMap<&'static str, String>,
    export: BTreeMap<&'static str, Color>,
}

/// The built-in dark theme's JSON.
pub const DARK_JSON: &str = include_str!("../themes/dark.json");
/// The built-in light theme's JSON.
pub const LIGHT_JSON: &str = include_str!("../themes/light.json");

/// The raw, unresolved value of a colour entry.
enum RawValue<'a> {
    Str(&'a str),
    Index(u8),
}

fn raw_value<'a>(
    path: &str,
    v: &'a serde_json::Value,
    errors: &mut Vec<String>,
) -> Option<RawValue<'a>> {
    match v {
        serde_json::Value::String(s) => Some(RawValue::Str(s)),
        serde_json::Value::Number(n) => match n.as_u64().and_then(|i| u8::try_from(i).ok()) {
            Some(i) => Some(RawValue::Index(i)),
            None => {
                errors.push(format!(
                    "{path}: {n} is not a 256-color index (an integer 0-255)"
                ));
                None
            }
        },
        other => {
            errors.push(format!(
                "{path}: expected a color (\"#rrggbb\", a variable name, \"\" or 0-255), got {}",
                json_kind(other)
            ));
            None
        }
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Why one colour reference in a theme does not resolve; each text is one entry of
/// [`ThemeError::Invalid`]'s `errors`, prefixed by the JSON path of the reference.
#[derive(Debug, thiserror::Error)]
enum ColorRefError {
    #[error("{path}: invalid hex color {value:?} (expected #rrggbb)")]
    BadHex { path: String, value: String },
    #[error("{path}: circular variable reference {chain}")]
    Cycle { path: String, chain: String },
    #[error("{path}: variable {name:?} is not defined in vars")]
    Undefined { path: String, name: String },
    #[error("{path}: variable {name:?} is {number}, not a 256-color index")]
    NotAnIndex {
        path: String,
        name: String,
        number: serde_json::Number,
    },
    #[error("{path}: variable {name:?} is {kind}, not a color")]
    NotAColor {
        path: String,
        name: String,
        kind: &'static str,
    },
}

/// Resolves a colour string through `vars`, following chains and rejecting cycles.
fn resolve(
    path: &str,
    value: &RawValue<'_>,
    vars: &serde_json::Map<String, serde_json::Value>,
) -> Result<Color, ColorRefError> {
    let mut chain: Vec<&str> = Vec::new();
    let mut current = match value {
        RawValue::Index(i) => return Ok(Color::Index(*i)),
        RawValue::Str(s) => *s,
    };
    loop {
        if current.is_empty() {
            return Ok(Color::Default);
        }
        if current.starts_with('#') {
            return Rgb::from_hex(current)
                .map(Color::Rgb)
                .ok_or_else(|| ColorRefError::BadHex {
                    path: path.to_owned(),
                    value: current.to_owned(),
                });
        }
        if chain.contains(&current) {
            chain.push(current);
            return Err(ColorRefError::Cycle {
                path: path.to_owned(),
                chain: chain.join(" -> "),
            });
        }
        chain.push(current);
        let Some(next) = vars.get(current) else {
            return Err(ColorRefError::Undefined {
                path: path.to_owned(),
                name: current.to_owned(),
            });
        };
        match next {
            serde_json::Value::String(s) => current = s,
            serde_json::Value::Number(n) => {
                return n
                    .as_u64()
                    .and_then(|i| u8::try_from(i).ok())
                    .map(Color::Index)
                    .ok_or_else(|| ColorRefError::NotAnIndex {
                        path: path.to_owned(),
                        name: current.to_owned(),
                        number: n.clone(),
                    });
            }
            other => {
                return Err(ColorRefError::NotAColor {
                    path: path.to_owned(),
                    name: current.to_owned(),
                    kind: json_kind(other),
                });
            }
        }
    }
}

impl Theme {
    /// Loads a theme from its JSON text. `label` names it in errors (a path or a name).
    /// Returns the theme and any warnings (unknown keys), or every problem found.
    pub fn from_json(
        label: &str,
        json: &str,
        mode: ColorMode,
    ) -> Result<(Self, Vec<ThemeWarning>), ThemeError> {
        let text = json.strip_prefix('\u{feff}').unwrap_or(json);
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ThemeError::Json {
                label: label.to_owned(),
                message: e.to_string(),
            })?;
        let mut errors = Vec::new();
        let mut missing = Vec::new();
        let mut warnings = Vec::new();
        let invalid = |missing, errors| ThemeError::Invalid {
            label: label.to_owned(),
            missing,
            errors,
        };
        let serde_json::Value::Object(root) = &value else {
            return Err(invalid(
                vec![],
                vec![format!("/: expected an object, got {}", json_kind(&value))],
            ));
        };
        for key in root.keys() {
            if !matches!(
                key.as_str(),
                "$schema" | "name" | "vars" | "colors" | "export"
            ) {
                warnings.push(ThemeWarning::UnknownKey {
                    path: format!("/{key}"),
                });
            }
        }
        let name = match root.get("name") {
            Some(serde_json::Value::String(n)) if n.is_empty() => {
                errors.push("/name: must not be empty".to_owned());
                String::new()
            }
            Some(serde_json::Value::String(n)) if n.contains('/') => {
                errors.push(format!(
                    "/name: {n:?} contains \"/\", which is reserved for light/dark theme settings"
                ));
                String::new()
            }
            Some(serde_json::Value::String(n)) => n.clone(),
            Some(other) => {
                errors.push(format!(
                    "/name: expected a string, got {}",
                    json_kind(other)
                ));
                String::new()
            }
            None => {
                errors.push("/name: required".to_owned());
                String::new()
            }
        };
        let empty = serde_json::Map::new();
        let vars = match root.get("vars") {
            None => &empty,
            Some(serde_json::Value::Object(v)) => {
                for (k, val) in v {
                    raw_value(&format!("/vars/{k}"), val, &mut errors);
                }
                v
            }
            Some(other) => {
                errors.push(format!(
                    "/vars: expected an object, got {}",
                    json_kind(other)
                ));
                &empty
            }
        };
        let mut colors: HashMap<&'static str, Color> = HashMap::new();
        match root.get("colors") {
            Some(serde_json::Value::Object(map)) => {
                for key in map.keys() {
                    if !TOKENS.iter().any(|t| t.name == key) {
                        warnings.push(ThemeWarning::UnknownKey {
                            path: format!("/colors/{key}"),
                        });
                    }
                }
                for token in TOKENS {
                    let path = format!("/colors/{}", token.name);
                    match map.get(token.name) {
                        Some(v) => {
                            if let Some(raw) = raw_value(&path, v, &mut errors) {
                                match resolve(&path, &raw, vars) {
                                    Ok(c) => {
                                        colors.insert(token.name, c);
                                    }
                                    Err(e) => errors.push(e.to_string()),
                                }
                            }
                        }
                        None if token.fallback.is_none() => missing.push(token.name.to_owned()),
                        None => {}
                    }
                }
            }
            Some(other) => errors.push(format!(
                "/colors: expected an object, got {}",
                json_kind(other)
            )),
            None => errors.push("/colors: required".to_owned()),
        }
        let mut export = BTreeMap::new();
        match root.get("export") {
            None => {}
            Some(serde_json::Value::Object(map)) => {
                for (key, v) in map {
                    let path = format!("/export/{key}");
                    let Some(&known) = EXPORT_KEYS.iter().find(|k| **k == key) else {
                        warnings.push(ThemeWarning::UnknownKey { path });
                        continue;
                    };
                    if let Some(raw) = raw_value(&path, v, &mut errors) {
                        match resolve(&path, &raw, vars) {
                            Ok(c) => {
                                export.insert(known, c);
                            }
                            Err(e) => errors.push(e.to_string()),
                        }
                    }
                }
            }
            Some(other) => errors.push(format!(
                "/export: expected an object, got {}",
                json_kind(other)
            )),
        }
        if !missing.is_empty() || !errors.is_empty() {
            missing.sort();
            return Err(invalid(missing, errors));
        }
        // Optional tokens take their fallbacks (which are always required tokens).
        for token in TOKENS {
            if let Some(fallback) = token.fallback
                && !colors.contains_key(token.name)
                && let Some(c) = colors.get(fallback).copied()
            {
                colors.insert(token.name, c);
            }
        }
        Ok((Self::build(name, mode, colors, export), warnings))
    }

    fn build(
        name: String,
        mode: ColorMode,
        colors: HashMap<&'static str, Color>,
        export: BTreeMap<&'static str, Color>,
    ) -> Self {
        let mut fg = HashMap::new();
        let mut bg = HashMap::new();
        for token in TOKENS {
            let color = colors.get(token.name).copied().unwrap_or(Color::Default);
            if token.background {
                bg.insert(token.name, sgr(color, mode, true));
            } else {
                fg.insert(token.name, sgr(color, mode, false));
            }
        }
        Self {
            name,
            mode,
            colors,
            fg,
            bg,
            export,
        }
    }

    /// The built-in theme for a colour scheme.
    pub fn builtin(scheme: ColorScheme, mode: ColorMode) -> Self {
        let json = match scheme {
            ColorScheme::Dark => DARK_JSON,
            ColorScheme::Light => LIGHT_JSON,
        };
        match Self::from_json(scheme.as_str(), json, mode) {
            Ok((theme, _)) => theme,
            // The built-ins are tested to load; should they not, plain defaults beat a panic.
            Err(_) => Self::build(
                scheme.as_str().to_owned(),
                mode,
                HashMap::new(),
                BTreeMap::new(),
            ),
        }
    }

    /// The same theme rendered for another colour depth.
    pub fn with_mode(&self, mode: ColorMode) -> Self {
        Self::build(
            self.name.clone(),
            mode,
            self.colors.clone(),
            self.export.clone(),
        )
    }

    /// The theme's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The colour depth it renders for.
    pub fn mode(&self) -> ColorMode {
        self.mode
    }

    /// A token's resolved colour (`None` for an unknown token).
    pub fn color(&self, token: &str) -> Option<Color> {
        self.colors.get(token).copied()
    }

    /// The sequence that sets a foreground token (empty in [`ColorMode::None`] and for
    /// background or unknown tokens).
    pub fn fg_ansi(&self, token: &str) -> &str {
        self.fg.get(token).map_or("", String::as_str)
    }

    /// The sequence that sets a background token.
    pub fn bg_ansi(&self, token: &str) -> &str {
        self.bg.get(token).map_or("", String::as_str)
    }

    /// A [`Paint`] for a foreground token, reset with `CSI 39 m` (only the foreground).
    pub fn fg_paint(&self, token: &str) -> Paint {
        let start = self.fg_ansi(token);
        if start.is_empty() {
            Paint::plain()
        } else {
            Paint::new(start, "\x1b[39m")
        }
    }

    /// A [`Paint`] for a background token, reset with `CSI 49 m`.
    pub fn bg_paint(&self, token: &str) -> Paint {
        let start = self.bg_ansi(token);
        if start.is_empty() {
            Paint::plain()
        } else {
            Paint::new(start, "\x1b[49m")
        }
    }

    /// `text` in a foreground token's colour.
    pub fn fg(&self, token: &str, text: &str) -> String {
        self.fg_paint(token).apply(text)
    }

    /// `text` on a background token's colour.
    pub fn bg(&self, token: &str, text: &str) -> String {
        self.bg_paint(token).apply(text)
    }

    /// The theme as the [`Style`](crate::style::Style) the markdown, diff and status
    /// components draw with: each field takes its pi token (`mdHeading` → `md_heading`,
    /// `toolDiffAdded` → `diff_added`, `syntaxKeyword` → `syntax_keyword`, …), headings bold,
    /// links underlined and quotes italic as pi's markdown theme draws them; `box_bg` is
    /// `userMessageBg`. With [`ColorMode::None`] only the attributes remain.
    pub fn markdown_style(&self, hyperlinks: bool) -> crate::style::Style {
        let fg = |token: &str| self.fg_ansi(token).to_owned();
        let with = |attr: &str, token: &str| format!("{attr}{}", self.fg_ansi(token));
        crate::style::Style {
            md_heading: with("\x1b[1m", "mdHeading"),
            md_link: with("\x1b[4m", "mdLink"),
            md_link_url: fg("mdLinkUrl"),
            md_code: fg("mdCode"),
            md_code_block: fg("mdCodeBlock"),
            md_code_block_border: fg("mdCodeBlockBorder"),
            md_quote: with("\x1b[3m", "mdQuote"),
            md_quote_border: fg("mdQuoteBorder"),
            md_hr: fg("mdHr"),
            md_list_bullet: fg("mdListBullet"),
            md_table_border: fg("borderMuted"),
            bold: "\x1b[1m".into(),
            italic: "\x1b[3m".into(),
            strikethrough: "\x1b[9m".into(),
            underline: "\x1b[4m".into(),
            muted: with(
                if self.mode == ColorMode::None {
                    "\x1b[2m"
                } else {
                    ""
                },
                "muted",
            ),
            dim: with("\x1b[2m", "dim"),
            accent: fg("accent"),
            error: fg("error"),
            success: fg("success"),
            warning: fg("warning"),
            diff_added: fg("toolDiffAdded"),
            diff_removed: fg("toolDiffRemoved"),
            diff_context: fg("toolDiffContext"),
            syntax_keyword: fg("syntaxKeyword"),
            syntax_string: fg("syntaxString"),
            syntax_comment: fg("syntaxComment"),
            syntax_number: fg("syntaxNumber"),
            syntax_type: fg("syntaxType"),
            spinner: fg("accent"),
            box_bg: self.bg_ansi("userMessageBg").to_owned(),
            hyperlinks,
        }
    }

    /// The editor rule colour for a thinking level (`off`, `minimal`, `low`, `medium`,
    /// `high`, `xhigh`, `max`; anything else is `off`), as pi's `getThinkingBorderColor`.
    pub fn thinking_border(&self, level: &str) -> Paint {
        let token = match level {
            "minimal" => "thinkingMinimal",
            "low" => "thinkingLow",
            "medium" => "thinkingMedium",
            "high" => "thinkingHigh",
            "xhigh" => "thinkingXhigh",
            "max" => "thinkingMax",
            _ => "thinkingOff",
        };
        self.fg_paint(token)
    }

    /// The `export` colours that are set (`pageBg`, `cardBg`, `infoBg`) as `#rrggbb`;
    /// `""` values are left out, as pi does.
    pub fn export_colors(&self) -> BTreeMap<&'static str, String> {
        self.export
            .iter()
            .filter_map(|(k, c)| c.to_hex().map(|h| (*k, h)))
            .collect()
    }
}

/// The SGR sequence for a colour at a depth.
fn sgr(color: Color, mode: ColorMode, background: bool) -> String {
    let base = if background { 48 } else { 38 };
    match (mode, color) {
        (ColorMode::None, _) => String::new(),
        (_, Color::Default) => format!("\x1b[{}m", base + 1),
        (ColorMode::TrueColor, Color::Rgb(c)) => format!("\x1b[{base};2;{};{};{}m", c.r, c.g, c.b),
        (ColorMode::TrueColor | ColorMode::Ansi256, Color::Index(i)) => {
            format!("\x1b[{base};5;{i}m")
        }
        (ColorMode::Ansi256, Color::Rgb(c)) => format!("\x1b[{base};5;{}m", rgb_to_256(c)),
        (ColorMode::Ansi16, c) => {
            let index = match c {
                Color::Index(i) if i < 16 => i,
                Color::Index(i) => rgb_to_16(ansi256_to_rgb(i)),
                Color::Rgb(rgb) => rgb_to_16(rgb),
                Color::Default => 0,
            };
            let code = if index < 8 {
                u16::from(index) + 30
            } else {
                u16::from(index) - 8 + 90
            };
            format!("\x1b[{}m", if background { code + 10 } else { code })
        }
    }
}

/// The xterm palette's 16 basic colours (what pi assumes for HTML export).
const BASIC: [(u8, u8, u8); 16] = [
    (0x00, 0x00, 0x00),
    (0x80, 0x00, 0x00),
    (0x00, 0x80, 0x00),
    (0x80, 0x80, 0x00),
    (0x00, 0x00, 0x80),
    (0x80, 0x00, 0x80),
    (0x00, 0x80, 0x80),
    (0xc0, 0xc0, 0xc0),
    (0x80, 0x80, 0x80),
    (0xff, 0x00, 0x00),
    (0x00, 0xff, 0x00),
    (0xff, 0xff, 0x00),
    (0x00, 0x00, 0xff),
    (0xff, 0x00, 0xff),
    (0x00, 0xff, 0xff),
    (0xff, 0xff, 0xff),
];

const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// A palette index as RGB (basic colours, the 6×6×6 cube, the grey ramp).
pub fn ansi256_to_rgb(index: u8) -> Rgb {
    let (r, g, b) = match index {
        0..=15 => BASIC[usize::from(index)],
        16..=231 => {
            let i = index - 16;
            (
                CUBE[usize::from(i / 36)],
                CUBE[usize::from(i % 36 / 6)],
                CUBE[usize::from(i % 6)],
            )
        }
        _ => {
            let v = 8 + (index - 232) * 10;
            (v, v, v)
        }
    };
    Rgb { r, g, b }
}

fn distance(a: Rgb, b: (u8, u8, u8)) -> f64 {
    let d = |x: u8, y: u8| f64::from(x) - f64::from(y);
    let (dr, dg, db) = (d(a.r, b.0), d(a.g, b.1), d(a.b, b.2));
    dr * dr * 0.299 + dg * dg * 0.587 + db * db * 0.114
}

fn nearest_cube(v: u8) -> usize {
    (0..6)
        .min_by_key(|&i| (i16::from(CUBE[i]) - i16::from(v)).abs())
        .unwrap_or(0)
}

/// The closest palette index for an RGB colour: the colour cube, or the grey ramp for
/// near-neutral colours that are closer to it (so tinted greys keep their tint).
pub fn rgb_to_256(c: Rgb) -> u8 {
    let (ri, gi, bi) = (nearest_cube(c.r), nearest_cube(c.g), nearest_cube(c.b));
    let cube = (CUBE[ri], CUBE[gi], CUBE[bi]);
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let grey_level =
        (0.299 * f64::from(c.r) + 0.587 * f64::from(c.g) + 0.114 * f64::from(c.b)).round();
    let grey_i = ((grey_level - 8.0) / 10.0).round().clamp(0.0, 23.0) as u8;
    let grey_v = 8 + grey_i * 10;
    let spread = c.r.max(c.g).max(c.b) - c.r.min(c.g).min(c.b);
    let index = if spread < 10 && distance(c, (grey_v, grey_v, grey_v)) < distance(c, cube) {
        232 + usize::from(grey_i)
    } else {
        cube_index
    };
    u8::try_from(index).unwrap_or(231)
}

/// The closest of the 16 basic colours.
pub fn rgb_to_16(c: Rgb) -> u8 {
    (0u8..16)
        .min_by(|&a, &b| {
            distance(c, BASIC[usize::from(a)]).total_cmp(&distance(c, BASIC[usize::from(b)]))
        })
        .unwrap_or(7)
}

/// Where a dark/light decision came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemeSource {
    /// The terminal's colour-scheme report (`CSI ? 997 ; n n`).
    ColorSchemeReport,
    /// The OSC 11 background colour.
    Background,
    /// The `COLORFGBG` variable.
    ColorFgBg,
    /// Nothing known: dark, pi's default.
    Fallback,
}

/// pi's reading of `COLORFGBG` (`fg;bg`, sometimes `fg;other;bg`): the last field that is an
/// integer 0–255 is the background palette index; light when its luminance is at least 0.5.
pub fn scheme_from_colorfgbg(value: &str) -> Option<ColorScheme> {
    let bg = value
        .split(';')
        .rev()
        .find_map(|p| p.trim().parse::<u8>().ok())?;
    Some(ColorScheme::for_background(ansi256_to_rgb(bg)))
}

/// Decides dark or light the way pi does for an automatic theme: the colour-scheme report
/// wins, then the OSC 11 background, then `COLORFGBG`, else dark. `report` and
/// `background` are the replies that arrived before the caller's timeout (`None` when the
/// terminal did not answer).
pub fn detect_scheme(
    report: Option<ColorScheme>,
    background: Option<Rgb>,
    env: impl Fn(&str) -> Option<String>,
) -> (ColorScheme, SchemeSource) {
    if let Some(s) = report {
        return (s, SchemeSource::ColorSchemeReport);
    }
    if let Some(rgb) = background {
        return (ColorScheme::for_background(rgb), SchemeSource::Background);
    }
    if let Some(s) = env("COLORFGBG").as_deref().and_then(scheme_from_colorfgbg) {
        return (s, SchemeSource::ColorFgBg);
    }
    (ColorScheme::Dark, SchemeSource::Fallback)
}

/// pi's automatic theme setting `lightTheme/darkTheme` (exactly one `/`, both sides
/// non-empty after trimming): the two names.
pub fn parse_auto_theme_setting(setting: &str) -> Option<(&str, &str)> {
    let (light, dark) = setting.split_once('/')?;
    if dark.contains('/') {
        return None;
    }
    let (light, dark) = (light.trim(), dark.trim());
    (!light.is_empty() && !dark.is_empty()).then_some((light, dark))
}

#[cfg(test)]
mod tests;
