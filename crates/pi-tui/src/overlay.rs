//! Overlays: components drawn on top of the frame, placed as pi-tui places them
//! (`OverlayOptions` in `dist/tui.d.ts`: nine anchors, absolute or percentage sizes and
//! positions, offsets and margins, clamped to the screen).

use crate::ansi;

/// An absolute number of cells or a percentage of the terminal's size (pi's `SizeValue`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeValue {
    /// Cells.
    Cells(u16),
    /// Percent of the terminal's width or height (for a position: 0 % = top/left, 100 % =
    /// bottom/right, the overlay staying within bounds).
    Percent(f32),
}

impl SizeValue {
    fn resolve(self, total: u16) -> u16 {
        match self {
            SizeValue::Cells(n) => n,
            SizeValue::Percent(p) => {
                let p = if p.is_finite() {
                    p.clamp(0.0, 100.0)
                } else {
                    0.0
                };
                (f32::from(total) * p / 100.0).floor() as u16
            }
        }
    }
}

/// Where an overlay sits (pi's `OverlayAnchor`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Anchor {
    /// Centred (the default).
    #[default]
    Center,
    /// Top left corner.
    TopLeft,
    /// Top right corner.
    TopRight,
    /// Bottom left corner.
    BottomLeft,
    /// Bottom right corner.
    BottomRight,
    /// Top edge, centred.
    TopCenter,
    /// Bottom edge, centred.
    BottomCenter,
    /// Left edge, centred.
    LeftCenter,
    /// Right edge, centred.
    RightCenter,
}

impl Anchor {
    /// All nine anchors.
    pub const ALL: [Anchor; 9] = [
        Anchor::Center,
        Anchor::TopLeft,
        Anchor::TopRight,
        Anchor::BottomLeft,
        Anchor::BottomRight,
        Anchor::TopCenter,
        Anchor::BottomCenter,
        Anchor::LeftCenter,
        Anchor::RightCenter,
    ];

    /// pi's name for it (`"top-left"` …).
    pub fn name(self) -> &'static str {
        match self {
            Anchor::Center => "center",
            Anchor::TopLeft => "top-left",
            Anchor::TopRight => "top-right",
            Anchor::BottomLeft => "bottom-left",
            Anchor::BottomRight => "bottom-right",
            Anchor::TopCenter => "top-center",
            Anchor::BottomCenter => "bottom-center",
            Anchor::LeftCenter => "left-center",
            Anchor::RightCenter => "right-center",
        }
    }

    /// The anchor of a pi name.
    pub fn from_name(name: &str) -> Option<Anchor> {
        Anchor::ALL.into_iter().find(|a| a.name() == name)
    }

    fn vertical(self) -> i8 {
        match self {
            Anchor::TopLeft | Anchor::TopRight | Anchor::TopCenter => -1,
            Anchor::BottomLeft | Anchor::BottomRight | Anchor::BottomCenter => 1,
            _ => 0,
        }
    }

    fn horizontal(self) -> i8 {
        match self {
            Anchor::TopLeft | Anchor::BottomLeft | Anchor::LeftCenter => -1,
            Anchor::TopRight | Anchor::BottomRight | Anchor::RightCenter => 1,
            _ => 0,
        }
    }
}

/// Placement of an overlay (pi's `OverlayOptions`, without the callbacks).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OverlayOptions {
    /// Width; default min(80, available width).
    pub width: Option<SizeValue>,
    /// Minimum width in cells.
    pub min_width: Option<u16>,
    /// Maximum height; lines beyond it are cut.
    pub max_height: Option<SizeValue>,
    /// Anchor (when `row`/`col` are not given).
    pub anchor: Anchor,
    /// Cells right of the anchored position (negative = left).
    pub offset_x: i32,
    /// Rows below the anchored position (negative = up).
    pub offset_y: i32,
    /// Explicit row (overrides the anchor vertically).
    pub row: Option<SizeValue>,
    /// Explicit column (overrides the anchor horizontally).
    pub col: Option<SizeValue>,
    /// Margins from the edges: top, right, bottom, left.
    pub margin: [u16; 4],
}

/// Where an overlay lands: row, column, width and the height cap, in cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Top row.
    pub row: u16,
    /// Left column.
    pub col: u16,
    /// Width.
    pub width: u16,
    /// Height cap, if any.
    pub max_height: Option<u16>,
}

/// Resolves the placement of an overlay `height` rows tall on a `term_w`×`term_h` screen, as
/// pi-tui's `resolveOverlayLayout` does.
pub fn resolve(opt: &OverlayOptions, height: u16, term_w: u16, term_h: u16) -> Layout {
    let [mt, mr, mb, ml] = opt.margin;
    let avail_w = term_w.saturating_sub(ml).saturating_sub(mr).max(1);
    let avail_h = term_h.saturating_sub(mt).saturating_sub(mb).max(1);
    let mut width = opt.width.map_or(avail_w.min(80), |w| w.resolve(term_w));
    if let Some(m) = opt.min_width {
        width = width.max(m);
    }
    let width = width.min(avail_w).max(1);
    let max_height = opt
        .max_height
        .map(|h| h.resolve(term_h).min(avail_h).max(1));
    let eff_h = max_height.map_or(height, |m| height.min(m));
    let row = match opt.row {
        Some(SizeValue::Percent(p)) => {
            mt + SizeValue::Percent(p).resolve(avail_h.saturating_sub(eff_h))
        }
        Some(SizeValue::Cells(r)) => r,
        None => anchor_pos(opt.anchor.vertical(), eff_h, avail_h, mt),
    };
    let col = match opt.col {
        Some(SizeValue::Percent(p)) => {
            ml + SizeValue::Percent(p).resolve(avail_w.saturating_sub(width))
        }
        Some(SizeValue::Cells(c)) => c,
        None => anchor_pos(opt.anchor.horizontal(), width, avail_w, ml),
    };
    let clamp = |v: i64, lo: u16, hi: i64| -> u16 {
        let hi = hi.max(i64::from(lo));
        v.clamp(i64::from(lo), hi) as u16
    };
    let row = clamp(
        i64::from(row) + i64::from(opt.offset_y),
        mt,
        i64::from(term_h) - i64::from(mb) - i64::from(eff_h),
    );
    let col = clamp(
        i64::from(col) + i64::from(opt.offset_x),
        ml,
        i64::from(term_w) - i64::from(mr) - i64::from(width),
    );
    Layout {
        row,
        col,
        width,
        max_height,
    }
}

fn anchor_pos(side: i8, size: u16, avail: u16, margin: u16) -> u16 {
    match side {
        -1 => margin,
        1 => margin + avail.saturating_sub(size),
        _ => margin + avail.saturating_sub(size) / 2,
    }
}

/// Draws `overlay` lines over `base` lines at `row`/`col` (cells), each overlay line padded or
/// cut to `width`. Base lines are added when the overlay reaches below them.
pub fn composite(base: &mut Vec<String>, overlay: &[String], row: usize, col: usize, width: usize) {
    for (i, ol) in overlay.iter().enumerate() {
        let r = row + i;
        while base.len() <= r {
            base.push(String::new());
        }
        let line = &base[r];
        let left = ansi::pad(&ansi::slice(line, 0, col), col);
        let mid = ansi::pad(&ansi::truncate(ol, width, ""), width);
        let right = ansi::slice(line, col + width, usize::MAX / 2);
        base[r] = format!("{left}{}{mid}{}{right}", ansi::RESET, ansi::RESET);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_anchors_on_an_80_by_24_screen() {
        let mut got = Vec::new();
        for a in Anchor::ALL {
            let o = OverlayOptions {
                width: Some(SizeValue::Cells(20)),
                anchor: a,
                ..OverlayOptions::default()
            };
            let l = resolve(&o, 5, 80, 24);
            got.push(format!("{:13} row {:2} col {:2}", a.name(), l.row, l.col));
        }
        insta::assert_snapshot!(got.join("\n"), @r"
        center        row  9 col 30
        top-left      row  0 col  0
        top-right     row  0 col 60
        bottom-left   row 19 col  0
        bottom-right  row 19 col 60
        top-center    row  0 col 30
        bottom-center row 19 col 30
        left-center   row  9 col  0
        right-center  row  9 col 60
        ");
    }

    #[test]
    fn percentages_margins_offsets_and_clamping() {
        let o = OverlayOptions {
            width: Some(SizeValue::Percent(50.0)),
            max_height: Some(SizeValue::Percent(25.0)),
            row: Some(SizeValue::Percent(100.0)),
            col: Some(SizeValue::Percent(0.0)),
            margin: [1, 2, 1, 2],
            ..OverlayOptions::default()
        };
        let l = resolve(&o, 50, 100, 40);
        assert_eq!(
            l,
            Layout {
                row: 29,
                col: 2,
                width: 50,
                max_height: Some(10)
            }
        );
        let off = OverlayOptions {
            width: Some(SizeValue::Cells(10)),
            offset_x: 1000,
            offset_y: -1000,
            ..OverlayOptions::default()
        };
        let l = resolve(&off, 3, 40, 10);
        assert_eq!((l.row, l.col), (0, 30));
        // A 0×0 terminal: no panic, width at least 1.
        let l = resolve(&OverlayOptions::default(), 5, 0, 0);
        assert_eq!(l.width, 1);
        assert_eq!(
            Anchor::from_name("bottom-center"),
            Some(Anchor::BottomCenter)
        );
    }

    #[test]
    fn composite_keeps_the_base_around_the_overlay() {
        let mut base = vec!["0123456789".to_string(), "abcdefghij".to_string()];
        composite(&mut base, &["XY".into(), "Z".into(), "W".into()], 0, 3, 3);
        let plain: Vec<String> = base.iter().map(|l| ansi::strip(l)).collect();
        assert_eq!(plain, ["012XY 6789", "abcZ  ghij", "   W  "]);
    }
}
