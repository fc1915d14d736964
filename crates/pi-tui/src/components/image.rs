//! The placeholder drawn for an image where the terminal shows no inline images (or while
//! they are off): `[image: image/png 800×600]`, fitted to the width.

use crate::ansi;
use crate::component::Component;
use crate::style::paint;

/// An image placeholder.
#[derive(Clone, Debug)]
pub struct ImagePlaceholder {
    mime: String,
    size: Option<(u32, u32)>,
    sgr: String,
}

impl ImagePlaceholder {
    /// A placeholder for an image of `mime` type and pixel `size`, drawn in `sgr`.
    pub fn new(mime: &str, size: Option<(u32, u32)>, sgr: impl Into<String>) -> Self {
        Self {
            mime: ansi::escape_control(mime),
            size,
            sgr: sgr.into(),
        }
    }
}

impl Component for ImagePlaceholder {
    fn render(&mut self, width: u16) -> Vec<String> {
        let text = match self.size {
            Some((w, h)) => format!("[image: {} {w}×{h}]", self.mime),
            None => format!("[image: {}]", self.mime),
        };
        vec![ansi::truncate(
            &paint(&self.sgr, &text),
            usize::from(width),
            "…",
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_the_image_within_the_width() {
        let mut i = ImagePlaceholder::new("image/png", Some((800, 600)), "");
        assert_eq!(i.render(40), ["[image: image/png 800×600]"]);
        assert_eq!(i.render(10), ["[image: i…"]);
        let mut n = ImagePlaceholder::new("image/\x1bx", None, "");
        assert_eq!(n.render(40), ["[image: image/\\x1bx]"]);
    }
}
