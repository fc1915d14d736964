//! What the terminal can show, from the environment, as pi-tui detects it
//! (`dist/terminal-image.js` `detectCapabilities`), with pi's overrides: `PI_HYPERLINKS`,
//! `PI_TRUE_COLOR` (`1`/`0`), `PI_IMAGE_PROTOCOL` (`kitty`, `iterm2`, `none`),
//! `PI_HARDWARE_CURSOR=1`, and `NO_COLOR` (any non-empty value: no colours at all).

/// An inline image protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageProtocol {
    /// Kitty graphics protocol.
    Kitty,
    /// iTerm2 inline images (OSC 1337).
    Iterm2,
}

/// How many colours to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ColorDepth {
    /// No colour (`NO_COLOR`): attributes like bold stay.
    None,
    /// The 16 ANSI colours.
    Ansi16,
    /// The xterm 256-colour palette.
    Ansi256,
    /// 24-bit colour.
    TrueColor,
}

/// The capabilities in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// Inline images, if a protocol is known to work.
    pub images: Option<ImageProtocol>,
    /// Colour depth.
    pub color: ColorDepth,
    /// OSC 8 hyperlinks (else links print as `text (url)`).
    pub hyperlinks: bool,
    /// Show the hardware cursor at the editor's cursor.
    pub hardware_cursor: bool,
}

fn flag(v: Option<String>) -> Option<bool> {
    match v.as_deref() {
        Some("1") => Some(true),
        Some("0") => Some(false),
        _ => None,
    }
}

impl Capabilities {
    /// Detects from the process environment; under tmux, asks tmux whether it forwards
    /// hyperlinks (unless `PI_HYPERLINKS` decides).
    pub fn detect() -> Self {
        Self::from_env(|k| std::env::var(k).ok(), probe_tmux_hyperlinks)
    }

    /// Detects from `env` (a variable lookup); `tmux_hyperlinks` is asked only under tmux.
    pub fn from_env(
        env: impl Fn(&str) -> Option<String>,
        tmux_hyperlinks: impl Fn() -> bool,
    ) -> Self {
        let low = |k: &str| env(k).unwrap_or_default().to_lowercase();
        let (term_program, term, colorterm) = (low("TERM_PROGRAM"), low("TERM"), low("COLORTERM"));
        let tc_hint = colorterm == "truecolor" || colorterm == "24bit";
        let link_override = flag(env("PI_HYPERLINKS"));
        let has = |k: &str| env(k).is_some_and(|v| !v.is_empty());
        let (images, true_color, hyperlinks) = if has("TMUX") || term.starts_with("tmux") {
            (
                None,
                tc_hint,
                link_override.unwrap_or_else(&tmux_hyperlinks),
            )
        } else if term.starts_with("screen") {
            (None, tc_hint, false)
        } else if has("KITTY_WINDOW_ID")
            || term_program == "kitty"
            || term_program == "ghostty"
            || term.contains("ghostty")
            || has("GHOSTTY_RESOURCES_DIR")
            || has("WEZTERM_PANE")
            || term_program == "wezterm"
            || term_program == "warpterminal"
            || has("WARP_SESSION_ID")
            || has("WARP_TERMINAL_SESSION_UUID")
        {
            (Some(ImageProtocol::Kitty), true, true)
        } else if has("ITERM_SESSION_ID") || term_program == "iterm.app" {
            (Some(ImageProtocol::Iterm2), true, true)
        } else if has("WT_SESSION")
            || matches!(term_program.as_str(), "alacritty" | "vscode" | "zed")
        {
            (None, true, true)
        } else if low("TERMINAL_EMULATOR") == "jetbrains-jediterm" {
            (None, true, false)
        } else {
            (None, tc_hint, false)
        };
        let images = match low("PI_IMAGE_PROTOCOL").as_str() {
            "kitty" => Some(ImageProtocol::Kitty),
            "iterm2" => Some(ImageProtocol::Iterm2),
            "none" | "0" => None,
            _ => images,
        };
        let true_color = flag(env("PI_TRUE_COLOR")).unwrap_or(true_color);
        let color = if has("NO_COLOR") {
            ColorDepth::None
        } else if true_color {
            ColorDepth::TrueColor
        } else if term.contains("256") || term.starts_with("tmux") || term.starts_with("screen") {
            ColorDepth::Ansi256
        } else if term == "dumb" {
            ColorDepth::None
        } else {
            ColorDepth::Ansi16
        };
        Self {
            images,
            color,
            hyperlinks: link_override.unwrap_or(hyperlinks),
            hardware_cursor: env("PI_HARDWARE_CURSOR").as_deref() == Some("1"),
        }
    }
}

/// Asks tmux whether the client forwards OSC 8 (`client_termfeatures` lists `hyperlinks`).
pub fn probe_tmux_hyperlinks() -> bool {
    std::process::Command::new("tmux")
        .args(["display-message", "-p", "#{client_termfeatures}"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split(',')
                .any(|f| f.trim() == "hyperlinks")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn caps(vars: &[(&str, &str)]) -> Capabilities {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Capabilities::from_env(|k| m.get(k).cloned(), || true)
    }

    #[test]
    fn terminals_and_overrides() {
        let k = caps(&[("TERM", "xterm-kitty"), ("KITTY_WINDOW_ID", "1")]);
        assert_eq!(k.images, Some(ImageProtocol::Kitty));
        assert!(k.hyperlinks);
        assert_eq!(k.color, ColorDepth::TrueColor);
        let plain = caps(&[("TERM", "xterm-256color")]);
        assert!(!plain.hyperlinks);
        assert_eq!(plain.color, ColorDepth::Ansi256);
        assert!(caps(&[("TERM", "xterm"), ("PI_HYPERLINKS", "1")]).hyperlinks);
        assert!(!caps(&[("TMUX", "/tmp/x"), ("PI_HYPERLINKS", "0")]).hyperlinks);
        assert!(
            caps(&[("TMUX", "/tmp/x")]).hyperlinks,
            "tmux probe says yes"
        );
        assert_eq!(
            caps(&[("TERM", "xterm"), ("PI_TRUE_COLOR", "1")]).color,
            ColorDepth::TrueColor
        );
        assert_eq!(
            caps(&[
                ("COLORTERM", "truecolor"),
                ("PI_TRUE_COLOR", "0"),
                ("TERM", "xterm")
            ])
            .color,
            ColorDepth::Ansi16
        );
        assert_eq!(
            caps(&[("TERM", "xterm"), ("NO_COLOR", "1")]).color,
            ColorDepth::None
        );
        assert_eq!(
            caps(&[("TERM", "xterm"), ("NO_COLOR", "")]).color,
            ColorDepth::Ansi16
        );
        assert!(caps(&[("PI_HARDWARE_CURSOR", "1")]).hardware_cursor);
        assert_eq!(
            caps(&[("KITTY_WINDOW_ID", "1"), ("PI_IMAGE_PROTOCOL", "none")]).images,
            None
        );
    }
}
