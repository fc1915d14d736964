//! Images in the transcript: [`Image`] draws one inline through the Kitty or iTerm2
//! protocol (pi-tui's `components/image.js`) or, without one, pi's text fallback; and the
//! [`ImagePlaceholder`] line `[image: image/png 800×600]`, fitted to the width.

use crate::ansi;
use crate::capabilities::ImageProtocol;
use crate::component::Component;
use crate::style::paint;
use crate::terminal_image::{
    self, ImageDimensions, Iterm2Options, KittyOptions, allocate_image_id, cell_dimensions,
    encode_iterm2, encode_kitty, image_cell_size, image_fallback,
};

/// Sizes of an [`Image`], in cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImageOptions {
    /// At most this many columns (pi's `imageWidthCells`; 60 when unset).
    pub max_width_cells: Option<u32>,
    /// At most this many rows (unset: as many as a square of the width takes).
    pub max_height_cells: Option<u32>,
}

/// An image drawn inline where the terminal has a protocol for it, else as pi's text
/// fallback (`[Image: [image/png] 800x600]`). The image's lines are escape sequences and
/// blank rows for its height: the renderer writes them as they are (see
/// [`Row`](crate::cells::Row)); the image belongs in the history, which is written once.
pub struct Image {
    base64: String,
    mime: String,
    dims: ImageDimensions,
    known_dims: bool,
    protocol: Option<ImageProtocol>,
    options: ImageOptions,
    filename: Option<String>,
    fallback_sgr: String,
    image_id: Option<u32>,
}

impl Image {
    /// An image of `mime` given as base64, of pixel size `dims` (pi assumes 800×600 when
    /// unknown), shown with `protocol` (none: the fallback, painted with `fallback_sgr`).
    pub fn new(
        base64: impl Into<String>,
        mime: impl Into<String>,
        dims: Option<ImageDimensions>,
        protocol: Option<ImageProtocol>,
        options: ImageOptions,
        fallback_sgr: impl Into<String>,
    ) -> Self {
        Self {
            base64: base64.into(),
            mime: mime.into(),
            dims: dims.unwrap_or(ImageDimensions {
                width_px: 800,
                height_px: 600,
            }),
            known_dims: dims.is_some(),
            protocol,
            options,
            filename: None,
            fallback_sgr: fallback_sgr.into(),
            image_id: None,
        }
    }

    /// Names the image's file in the fallback text.
    pub fn with_filename(mut self, name: impl Into<String>) -> Self {
        self.filename = Some(name.into());
        self
    }

    /// The Kitty image id, once drawn with Kitty.
    pub fn image_id(&self) -> Option<u32> {
        self.image_id
    }
}

impl Component for Image {
    fn render(&mut self, width: u16) -> Vec<String> {
        let max_width = u32::from(width)
            .saturating_sub(2)
            .min(self.options.max_width_cells.unwrap_or(60))
            .max(1);
        let cell = cell_dimensions();
        let default_height = (f64::from(max_width) * f64::from(cell.width_px)
            / f64::from(cell.height_px.max(1)))
        .ceil()
        .max(1.0) as u32;
        let max_height = self.options.max_height_cells.unwrap_or(default_height);
        let (columns, rows) = image_cell_size(self.dims, max_width, Some(max_height), cell);
        let blank = |n: u32| std::iter::repeat_n(String::new(), n as usize);
        match self.protocol {
            Some(ImageProtocol::Kitty) => {
                let id = *self.image_id.get_or_insert_with(allocate_image_id);
                let seq = encode_kitty(
                    &self.base64,
                    &KittyOptions {
                        columns: Some(columns),
                        rows: Some(rows),
                        image_id: Some(id),
                        move_cursor: false,
                    },
                );
                std::iter::once(seq).chain(blank(rows - 1)).collect()
            }
            Some(ImageProtocol::Iterm2) => {
                let seq = encode_iterm2(
                    &self.base64,
                    &Iterm2Options {
                        width: Some(columns.to_string()),
                        height: Some("auto".into()),
                        name: None,
                        preserve_aspect_ratio: true,
                    },
                );
                let up = if rows > 1 {
                    format!("\x1b[{}A", rows - 1)
                } else {
                    String::new()
                };
                blank(rows - 1).chain(std::iter::once(up + &seq)).collect()
            }
            None => {
                let dims = self.known_dims.then_some(self.dims);
                let text = image_fallback(&self.mime, dims, self.filename.as_deref());
                vec![ansi::truncate(
                    &paint(&self.fallback_sgr, &text),
                    usize::from(width),
                    "",
                )]
            }
        }
    }
}

/// The protocol's escape-sequence prefixes, for telling an image line from text.
pub fn is_image_line(line: &str) -> bool {
    line.contains(terminal_image::KITTY_PREFIX) || line.contains(terminal_image::ITERM2_PREFIX)
}

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

    fn dims(w: u32, h: u32) -> Option<ImageDimensions> {
        Some(ImageDimensions {
            width_px: w,
            height_px: h,
        })
    }

    #[test]
    fn kitty_images_take_their_rows_below_one_sequence() {
        let mut i = Image::new(
            "QUJD",
            "image/png",
            dims(800, 600),
            Some(ImageProtocol::Kitty),
            ImageOptions::default(),
            "",
        );
        let lines = i.render(40);
        // 38 columns of 9 px: 342 × 256.5 px → 15 rows of 18 px.
        assert_eq!(lines.len(), 15);
        let id = i.image_id().unwrap();
        assert_eq!(
            lines[0],
            format!("\x1b_Ga=T,f=100,q=2,C=1,c=38,r=15,i={id};QUJD\x1b\\")
        );
        assert!(lines[1..].iter().all(String::is_empty));
        assert!(is_image_line(&lines[0]) && !is_image_line("text"));
        // The id stays with the image: a replay replaces it instead of adding one.
        assert_eq!(i.render(30)[0].matches(&format!("i={id};")).count(), 1);
    }

    #[test]
    fn iterm2_images_draw_from_their_last_row_up() {
        let mut i = Image::new(
            "QUJD",
            "image/png",
            dims(90, 36),
            Some(ImageProtocol::Iterm2),
            ImageOptions {
                max_width_cells: Some(10),
                max_height_cells: None,
            },
            "",
        );
        let lines = i.render(80);
        // 10 columns: 90 × 36 px → 2 rows.
        assert_eq!(
            lines,
            [
                String::new(),
                "\x1b[1A\x1b]1337;File=inline=1;size=3;width=10;height=auto:QUJD\x07".to_owned()
            ]
        );
    }

    #[test]
    fn without_a_protocol_the_fallback_text() {
        let mut i = Image::new(
            "QUJD",
            "image/png",
            dims(800, 600),
            None,
            ImageOptions::default(),
            "",
        );
        assert_eq!(i.render(80), ["[Image: [image/png] 800x600]"]);
        let mut unknown = Image::new("QUJD", "image/png", None, None, ImageOptions::default(), "")
            .with_filename("a.png");
        assert_eq!(unknown.render(14), ["[Image: a.png "]);
    }
}
