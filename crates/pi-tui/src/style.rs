//! The colour seam: the SGR sequences components draw with. A theme fills a [`Style`]; the
//! components only concatenate its strings, so they never know about colour depth or
//! `NO_COLOR`. An empty string means "no styling".

use crate::ansi::RESET;
use crate::capabilities::ColorDepth;

/// SGR sequences for each thing components draw. Field names follow pi's theme tokens where
/// one exists (`mdHeading` → `md_heading`, `toolDiffAdded` → `diff_added`, …).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct Style {
    pub md_heading: String,
    pub md_link: String,
    pub md_link_url: String,
    pub md_code: String,
    pub md_code_block: String,
    pub md_code_block_border: String,
    pub md_quote: String,
    pub md_quote_border: String,
    pub md_hr: String,
    pub md_list_bullet: String,
    pub md_table_border: String,
    pub bold: String,
    pub italic: String,
    pub strikethrough: String,
    pub underline: String,
    pub muted: String,
    pub dim: String,
    pub accent: String,
    pub error: String,
    pub success: String,
    pub warning: String,
    pub diff_added: String,
    pub diff_removed: String,
    pub diff_context: String,
    pub syntax_keyword: String,
    pub syntax_string: String,
    pub syntax_comment: String,
    pub syntax_number: String,
    pub syntax_type: String,
    pub spinner: String,
    pub box_bg: String,
    /// Whether links are drawn as OSC 8 hyperlinks (else `text (url)`).
    pub hyperlinks: bool,
}

/// A foreground colour for a depth: true colour, the nearest of the 256 palette, or the
/// nearest of the 16; nothing under [`ColorDepth::None`].
pub fn fg(rgb: (u8, u8, u8), depth: ColorDepth) -> String {
    color(rgb, depth, 38)
}

/// A background colour for a depth (as [`fg`]).
pub fn bg(rgb: (u8, u8, u8), depth: ColorDepth) -> String {
    color(rgb, depth, 48)
}

fn color((r, g, b): (u8, u8, u8), depth: ColorDepth, base: u8) -> String {
    match depth {
        ColorDepth::None => String::new(),
        ColorDepth::TrueColor => format!("\x1b[{base};2;{r};{g};{b}m"),
        ColorDepth::Ansi256 => format!("\x1b[{base};5;{}m", rgb_to_256(r, g, b)),
        ColorDepth::Ansi16 => {
            let i = rgb_to_16(r, g, b);
            let code = if i < 8 { base - 8 + i } else { base + 44 + i };
            format!("\x1b[{code}m")
        }
    }
}

/// The nearest xterm-256 palette index (6×6×6 cube or grey ramp).
pub fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    const STEPS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let near = |v: u8| {
        (0..6)
            .min_by_key(|&i| (i16::from(STEPS[i]) - i16::from(v)).abs())
            .unwrap_or(0) as u8
    };
    let (ri, gi, bi) = (near(r), near(g), near(b));
    let cube = 16 + 36 * ri + 6 * gi + bi;
    let dist = |a: (u8, u8, u8)| -> i32 {
        let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
        d(a.0, r) + d(a.1, g) + d(a.2, b)
    };
    let cube_rgb = (STEPS[ri as usize], STEPS[gi as usize], STEPS[bi as usize]);
    let avg = ((u16::from(r) + u16::from(g) + u16::from(b)) / 3) as u8;
    let gi = (avg.saturating_sub(3) / 10).min(23);
    let grey = 8 + 10 * gi;
    if dist((grey, grey, grey)) < dist(cube_rgb) {
        232 + gi
    } else {
        cube
    }
}

/// The nearest of the 16 ANSI colours (0–7 normal, 8–15 bright).
pub fn rgb_to_16(r: u8, g: u8, b: u8) -> u8 {
    const PALETTE: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    let d = |p: (u8, u8, u8)| {
        let s = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
        s(p.0, r) + s(p.1, g) + s(p.2, b)
    };
    (0..16).min_by_key(|&i| d(PALETTE[i])).unwrap_or(0) as u8
}

impl Style {
    /// Attributes only (bold, italic, underline, dim), no colour: what `NO_COLOR` gets, and
    /// what tests snapshot.
    pub fn plain() -> Self {
        Self {
            md_heading: "\x1b[1m".into(),
            md_link: "\x1b[4m".into(),
            md_code: String::new(),
            bold: "\x1b[1m".into(),
            italic: "\x1b[3m".into(),
            strikethrough: "\x1b[9m".into(),
            underline: "\x1b[4m".into(),
            dim: "\x1b[2m".into(),
            muted: "\x1b[2m".into(),
            ..Self::default()
        }
    }

    /// A dark-background style at a colour depth, with or without hyperlinks. The theme
    /// engine replaces this with the theme's colours.
    pub fn dark(depth: ColorDepth, hyperlinks: bool) -> Self {
        let c = |rgb| fg(rgb, depth);
        let mut s = Self::plain();
        s.hyperlinks = hyperlinks;
        if depth == ColorDepth::None {
            return s;
        }
        s.md_heading = format!("\x1b[1m{}", c((240, 198, 116)));
        s.md_link = format!("\x1b[4m{}", c((129, 162, 190)));
        s.md_link_url = c((102, 102, 102));
        s.md_code = c((138, 190, 183));
        s.md_code_block = c((181, 189, 104));
        s.md_code_block_border = c((128, 128, 128));
        s.md_quote = format!("\x1b[3m{}", c((128, 128, 128)));
        s.md_quote_border = c((128, 128, 128));
        s.md_hr = c((128, 128, 128));
        s.md_list_bullet = c((138, 190, 183));
        s.md_table_border = c((128, 128, 128));
        s.muted = c((128, 128, 128));
        s.accent = c((138, 190, 183));
        s.error = c((204, 102, 102));
        s.success = c((181, 189, 104));
        s.warning = c((255, 255, 0));
        s.diff_added = c((181, 189, 104));
        s.diff_removed = c((204, 102, 102));
        s.diff_context = c((128, 128, 128));
        s.syntax_keyword = c((86, 156, 214));
        s.syntax_string = c((206, 145, 120));
        s.syntax_comment = c((106, 153, 85));
        s.syntax_number = c((181, 206, 168));
        s.syntax_type = c((78, 201, 176));
        s.spinner = c((138, 190, 183));
        s.box_bg = bg((40, 40, 50), depth);
        s
    }
}

/// `text` in `sgr`, reset after (just `text` when `sgr` is empty).
pub fn paint(sgr: &str, text: &str) -> String {
    if sgr.is_empty() || text.is_empty() {
        text.to_owned()
    } else {
        format!("{sgr}{text}{RESET}")
    }
}

/// An OSC 8 hyperlink around `text`.
pub fn hyperlink(text: &str, url: &str) -> String {
    let url: String = url.chars().filter(|c| !c.is_control()).collect();
    format!("\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_fallbacks() {
        assert_eq!(fg((255, 0, 0), ColorDepth::TrueColor), "\x1b[38;2;255;0;0m");
        assert_eq!(fg((255, 0, 0), ColorDepth::Ansi256), "\x1b[38;5;196m");
        assert_eq!(fg((255, 0, 0), ColorDepth::Ansi16), "\x1b[91m");
        assert_eq!(fg((0, 0, 0), ColorDepth::Ansi16), "\x1b[30m");
        assert_eq!(bg((128, 128, 128), ColorDepth::Ansi256), "\x1b[48;5;244m");
        assert_eq!(fg((1, 2, 3), ColorDepth::None), "");
        let s = Style::dark(ColorDepth::None, false);
        assert_eq!(s, Style::plain());
    }
}
