//! Colours the terminal reports about itself: the OSC 11 background reply and the
//! colour-scheme report (`CSI ? 997 ; 1|2 n`), as pi-tui's `dist/terminal-colors.js` reads
//! them.

/// An 8-bit-per-channel colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rgb {
    /// Red, 0–255.
    pub r: u8,
    /// Green, 0–255.
    pub g: u8,
    /// Blue, 0–255.
    pub b: u8,
}

impl Rgb {
    /// Parses `#rrggbb` (the form theme files use). `None` for anything else.
    pub fn from_hex(hex: &str) -> Option<Self> {
        let digits = hex.strip_prefix('#')?;
        if digits.len() != 6 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let channel = |i: usize| u8::from_str_radix(&digits[i..i + 2], 16).ok();
        Some(Self {
            r: channel(0)?,
            g: channel(2)?,
            b: channel(4)?,
        })
    }

    /// WCAG relative luminance in 0.0–1.0 (pi's `getRgbColorLuminance`).
    pub fn luminance(self) -> f64 {
        fn linear(channel: u8) -> f64 {
            let v = f64::from(channel) / 255.0;
            if v <= 0.03928 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        }
        0.2126 * linear(self.r) + 0.7152 * linear(self.g) + 0.0722 * linear(self.b)
    }
}

/// Whether the terminal background is dark or light.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColorScheme {
    /// A dark background (pi's default when nothing is known).
    Dark,
    /// A light background.
    Light,
}

impl ColorScheme {
    /// The scheme for a background colour: light when its luminance is at least 0.5, as pi
    /// decides (`getThemeForRgbColor`).
    pub fn for_background(rgb: Rgb) -> Self {
        if rgb.luminance() >= 0.5 {
            Self::Light
        } else {
            Self::Dark
        }
    }

    /// pi's name for it: `"dark"` or `"light"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dark => "dark",
            Self::Light => "light",
        }
    }
}

/// Scales a hex channel of 1–4 digits to 0–255, as X11 colour specs mean it (`f` = 255,
/// `ffff` = 255, `8000` ≈ 128).
fn hex_channel(channel: &str) -> Option<u8> {
    if channel.is_empty() || channel.len() > 4 || !channel.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let value = u32::from_str_radix(channel, 16).ok()?;
    let max = (1u32 << (4 * channel.len() as u32)) - 1;
    let scaled = (f64::from(value) / f64::from(max) * 255.0).round();
    Some(scaled.clamp(0.0, 255.0) as u8)
}

/// Parses the payload of an OSC 11 reply — the text between `ESC ] 11 ;` and the
/// terminator: `rgb:RRRR/GGGG/BBBB` (1–4 hex digits per channel, also `rgba:`), `#rrggbb` or
/// `#rrrrggggbbbb`. `None` when it is none of those.
pub fn parse_osc11_payload(payload: &str) -> Option<Rgb> {
    let value = payload.trim();
    if let Some(hex) = value.strip_prefix('#') {
        return match hex.len() {
            6 => Rgb::from_hex(value),
            12 => Some(Rgb {
                r: hex_channel(&hex[0..4])?,
                g: hex_channel(&hex[4..8])?,
                b: hex_channel(&hex[8..12])?,
            }),
            _ => None,
        };
    }
    let lower = value.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("rgba:")
        .or_else(|| lower.strip_prefix("rgb:"))
        .unwrap_or(&lower);
    let mut parts = rest.split('/');
    let r = hex_channel(parts.next()?)?;
    let g = hex_channel(parts.next()?)?;
    let b = hex_channel(parts.next()?)?;
    Some(Rgb { r, g, b })
}

/// Parses a whole OSC 11 reply (`ESC ] 11 ; … BEL` or `… ESC \`).
pub fn parse_osc11_reply(reply: &str) -> Option<Rgb> {
    let body = reply.strip_prefix("\x1b]11;")?;
    let payload = body
        .strip_suffix('\x07')
        .or_else(|| body.strip_suffix("\x1b\\"))?;
    if payload.contains(['\x07', '\x1b']) {
        return None;
    }
    parse_osc11_payload(payload)
}

/// Parses a colour-scheme report `CSI ? 997 ; 1 n` (dark) or `; 2 n` (light).
pub fn parse_color_scheme_report(report: &str) -> Option<ColorScheme> {
    match report {
        "\x1b[?997;1n" => Some(ColorScheme::Dark),
        "\x1b[?997;2n" => Some(ColorScheme::Light),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc11_forms() {
        let white = Some(Rgb {
            r: 255,
            g: 255,
            b: 255,
        });
        assert_eq!(parse_osc11_reply("\x1b]11;rgb:ffff/ffff/ffff\x07"), white);
        assert_eq!(parse_osc11_reply("\x1b]11;rgb:ffff/ffff/ffff\x1b\\"), white);
        assert_eq!(parse_osc11_reply("\x1b]11;#ffffff\x07"), white);
        assert_eq!(parse_osc11_reply("\x1b]11;rgba:ff/ff/ff/ff\x07"), white);
        assert_eq!(
            parse_osc11_reply("\x1b]11;rgb:1e1e/2020/8000\x07"),
            Some(Rgb {
                r: 30,
                g: 32,
                b: 128
            })
        );
        assert_eq!(
            parse_osc11_reply("\x1b]11;#1e1e20208000\x07"),
            Some(Rgb {
                r: 30,
                g: 32,
                b: 128
            })
        );
        assert_eq!(parse_osc11_reply("\x1b]11;rgb:zz/00/00\x07"), None);
        assert_eq!(parse_osc11_reply("\x1b]11;rgb:00/00\x07"), None);
        assert_eq!(parse_osc11_reply("\x1b]10;rgb:00/00/00\x07"), None);
        assert_eq!(parse_osc11_reply("\x1b]11;rgb:00000/0/0\x07"), None);
    }

    #[test]
    fn scheme_from_background_and_report() {
        assert_eq!(
            ColorScheme::for_background(Rgb { r: 0, g: 0, b: 0 }),
            ColorScheme::Dark
        );
        assert_eq!(
            ColorScheme::for_background(Rgb {
                r: 250,
                g: 250,
                b: 250
            }),
            ColorScheme::Light
        );
        // Mid grey (#808080) has a luminance of about 0.22: dark.
        assert_eq!(
            ColorScheme::for_background(Rgb {
                r: 128,
                g: 128,
                b: 128
            }),
            ColorScheme::Dark
        );
        assert_eq!(
            parse_color_scheme_report("\x1b[?997;2n"),
            Some(ColorScheme::Light)
        );
        assert_eq!(
            parse_color_scheme_report("\x1b[?997;1n"),
            Some(ColorScheme::Dark)
        );
        assert_eq!(parse_color_scheme_report("\x1b[?997;3n"), None);
    }
}
