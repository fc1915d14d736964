//! The footer under the editor: where the session runs and what it costs.
//!
//! Mirrors pi-coding-agent 0.85.0 `modes/interactive/components/footer.js`: line 1 is the
//! working directory (`~` for the home directory), the git branch in parentheses and the
//! session name after ` • `; line 2 is the usage totals of every session entry on the left
//! (`↑input ↓output Rcache-read Wcache-write CHhit% $cost`, then the context use
//! `pct%/window (auto)`), and on the right the model with its thinking level. The texts and
//! number formats are pi's; the colours are the theme's `dim`, `warning` and `error`.

use std::path::{Component as PathPart, Path};

use pi_tui::ansi::{truncate, visible_width};
use pi_tui::theme::Theme;

use crate::tools::image::to_fixed;

/// pi's `formatTokens`: `999`, `1.2k`, `12k`, `1.2M`, `12M`.
pub(crate) fn format_tokens(count: f64) -> String {
    let count = if count.is_finite() {
        count.max(0.0)
    } else {
        0.0
    };
    if count < 1000.0 {
        to_fixed(count, 0)
    } else if count < 10_000.0 {
        format!("{}k", to_fixed(count / 1000.0, 1))
    } else if count < 1_000_000.0 {
        format!("{}k", to_fixed((count / 1000.0).round(), 0))
    } else if count < 10_000_000.0 {
        format!("{}M", to_fixed(count / 1_000_000.0, 1))
    } else {
        format!("{}M", to_fixed((count / 1_000_000.0).round(), 0))
    }
}

/// pi's `formatCwdForFooter`: the home directory as `~`, a path inside it as `~/rest`,
/// anything else unchanged.
pub(crate) fn format_cwd(cwd: &Path, home: Option<&Path>) -> String {
    let Some(home) = home.filter(|h| !h.as_os_str().is_empty()) else {
        return cwd.display().to_string();
    };
    match cwd.strip_prefix(home) {
        Ok(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Ok(rest) if !rest.components().any(|c| c == PathPart::ParentDir) => {
            format!("~/{}", rest.display())
        }
        _ => cwd.display().to_string(),
    }
}

/// What the footer shows; filled from the session after each change.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FooterData {
    /// Working directory, already formatted ([`format_cwd`]).
    pub cwd: String,
    /// Current git branch.
    pub branch: Option<String>,
    /// Session name.
    pub session_name: Option<String>,
    /// Usage totals of all entries.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Cache reads.
    pub cache_read: f64,
    /// Cache writes.
    pub cache_write: f64,
    /// Cache hit rate of the latest assistant message, in percent.
    pub cache_hit_rate: Option<f64>,
    /// Total cost in dollars.
    pub cost: f64,
    /// Whether the model's provider is reached through a subscription (OAuth).
    pub subscription: bool,
    /// Context use in percent (`None` after a compaction until the next answer: `?`).
    pub context_percent: Option<f64>,
    /// The model's context window.
    pub context_window: u64,
    /// Whether auto-compaction is on (` (auto)`).
    pub auto_compact: bool,
    /// Model id (`no-model` when none).
    pub model: Option<String>,
    /// The model's provider, shown when more than one provider is available.
    pub provider: Option<String>,
    /// Whether the model reasons (then the thinking level is shown).
    pub reasoning: bool,
    /// The thinking level's name.
    pub thinking: String,
    /// How many providers have models available.
    pub provider_count: usize,
    /// Extension statuses (`ctx.ui.setStatus`), sorted by key: one line under the rest.
    pub statuses: Vec<String>,
}

/// The footer's lines for `width` cells.
pub(crate) fn render(d: &FooterData, width: usize, theme: &Theme) -> Vec<String> {
    let mut pwd = d.cwd.clone();
    if let Some(b) = &d.branch {
        pwd = format!("{pwd} ({b})");
    }
    if let Some(n) = &d.session_name {
        pwd = format!("{pwd} • {n}");
    }
    let mut parts: Vec<String> = Vec::new();
    if d.input > 0.0 {
        parts.push(format!("↑{}", format_tokens(d.input)));
    }
    if d.output > 0.0 {
        parts.push(format!("↓{}", format_tokens(d.output)));
    }
    if d.cache_read > 0.0 {
        parts.push(format!("R{}", format_tokens(d.cache_read)));
    }
    if d.cache_write > 0.0 {
        parts.push(format!("W{}", format_tokens(d.cache_write)));
    }
    if (d.cache_read > 0.0 || d.cache_write > 0.0)
        && let Some(rate) = d.cache_hit_rate
    {
        parts.push(format!("CH{}%", to_fixed(rate.max(0.0), 1)));
    }
    if d.cost > 0.0 || d.subscription {
        let sub = if d.subscription { " (sub)" } else { "" };
        parts.push(format!("${}{sub}", to_fixed(d.cost.max(0.0), 3)));
    }
    let auto = if d.auto_compact { " (auto)" } else { "" };
    let window = format_tokens(d.context_window as f64);
    let ctx = match d.context_percent {
        Some(p) => format!("{}%/{window}{auto}", to_fixed(p.max(0.0), 1)),
        None => format!("?/{window}{auto}"),
    };
    let pct = d.context_percent.unwrap_or(0.0);
    let ctx_token = if pct > 90.0 {
        Some("error")
    } else if pct > 70.0 {
        Some("warning")
    } else {
        None
    };
    let plain_left = {
        let mut p = parts.clone();
        p.push(ctx.clone());
        p.join(" ")
    };
    let model = d.model.clone().unwrap_or_else(|| "no-model".to_owned());
    let mut right = if d.reasoning {
        if d.thinking == "off" {
            format!("{model} • thinking off")
        } else {
            format!("{model} • {}", d.thinking)
        }
    } else {
        model
    };
    let left_width = visible_width(&plain_left).min(width);
    if d.provider_count > 1
        && let Some(p) = &d.provider
    {
        let with = format!("({p}) {right}");
        if left_width + 2 + visible_width(&with) <= width {
            right = with;
        }
    }
    let left_text = if visible_width(&plain_left) > width {
        truncate(&plain_left, width, "...")
    } else {
        plain_left
    };
    let right_width = visible_width(&right);
    let padding_and_right = if left_width + 2 + right_width <= width {
        format!("{}{right}", " ".repeat(width - left_width - right_width))
    } else if width > left_width + 2 {
        let r = truncate(&right, width - left_width - 2, "");
        format!(
            "{}{r}",
            " ".repeat(width.saturating_sub(left_width + visible_width(&r)))
        )
    } else {
        String::new()
    };
    // The context figure keeps its own colour inside the dim line.
    let left = match ctx_token {
        Some(token) if left_text.ends_with(&ctx) => {
            let head = &left_text[..left_text.len() - ctx.len()];
            format!("{}{}", theme.fg("dim", head), theme.fg(token, &ctx))
        }
        _ => theme.fg("dim", &left_text),
    };
    let mut lines = vec![
        truncate(&theme.fg("dim", &pwd), width, &theme.fg("dim", "...")),
        format!("{left}{}", theme.fg("dim", &padding_and_right)),
    ];
    if !d.statuses.is_empty() {
        let line = pi_tui::ansi::escape_control(&d.statuses.join(" ").replace('\n', " "));
        lines.push(truncate(&line, width, &theme.fg("dim", "...")));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::terminal_colors::ColorScheme;
    use pi_tui::theme::ColorMode;

    fn plain() -> Theme {
        Theme::builtin(ColorScheme::Dark, ColorMode::None)
    }

    #[test]
    fn token_counts_as_pi_formats_them() {
        let cases = [
            (0.0, "0"),
            (999.0, "999"),
            (1000.0, "1.0k"),
            (1234.0, "1.2k"),
            (12_345.0, "12k"),
            (999_499.0, "999k"),
            (1_250_000.0, "1.3M"),
            (12_500_000.0, "13M"),
        ];
        for (n, want) in cases {
            assert_eq!(format_tokens(n), want, "{n}");
        }
    }

    #[test]
    fn cwd_uses_tilde_inside_home_only() {
        let home = Path::new("/home/u");
        assert_eq!(format_cwd(Path::new("/home/u"), Some(home)), "~");
        assert_eq!(format_cwd(Path::new("/home/u/p/q"), Some(home)), "~/p/q");
        assert_eq!(
            format_cwd(Path::new("/home/user2"), Some(home)),
            "/home/user2"
        );
        assert_eq!(format_cwd(Path::new("/tmp"), None), "/tmp");
    }

    #[test]
    fn the_lines_pi_shows_after_a_tool_round_trip() {
        let d = FooterData {
            cwd: "/tmp/tsrun/work".into(),
            input: 300.0,
            output: 57.0,
            cache_read: 100.0,
            cache_hit_rate: Some(35.7),
            context_percent: Some(0.2),
            context_window: 128_000,
            auto_compact: true,
            model: Some("replay-model".into()),
            reasoning: true,
            thinking: "medium".into(),
            provider_count: 1,
            ..FooterData::default()
        };
        let lines = render(&d, 100, &plain());
        assert_eq!(lines[0], "/tmp/tsrun/work");
        // The TS pi 0.85.0 footer at 100 columns, byte for byte (colours aside).
        assert_eq!(
            lines[1],
            "↑300 ↓57 R100 CH35.7% 0.2%/128k (auto)                                         replay-model • medium"
        );
    }

    #[test]
    fn fresh_session_narrow_terminal_and_names() {
        let d = FooterData {
            cwd: "~/p".into(),
            branch: Some("main".into()),
            session_name: Some("refactor".into()),
            context_percent: Some(0.0),
            context_window: 200_000,
            model: Some("claude".into()),
            provider: Some("anthropic".into()),
            provider_count: 2,
            reasoning: true,
            thinking: "off".into(),
            ..FooterData::default()
        };
        let lines = render(&d, 60, &plain());
        assert_eq!(lines[0], "~/p (main) • refactor");
        assert!(lines[1].starts_with("0.0%/200k"), "{:?}", lines[1]);
        assert!(lines[1].ends_with("(anthropic) claude • thinking off"));
        assert_eq!(visible_width(&lines[1]), 60);
        for w in [1usize, 5, 12, 20] {
            for l in render(&d, w, &plain()) {
                assert!(visible_width(&l) <= w, "{w}: {l:?}");
            }
        }
        let none = FooterData::default();
        assert!(render(&none, 40, &plain())[1].ends_with("no-model"));
    }
}
