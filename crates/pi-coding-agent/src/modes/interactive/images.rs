//! Images of messages and tool results in the transcript, as pi 0.85.0 shows them in a tool
//! box (`components/tool-execution.js`): each below the box after a blank line, drawn inline
//! where the terminal has a protocol and `terminal.showImages` is on, at most
//! `terminal.imageWidthCells` columns (60). Kitty is given PNG only: other formats are
//! converted first (pi converts too and leaves the image out until that is done). Without a
//! protocol nothing is drawn besides the result's own `[image: …]` line. pi-rs shows the
//! images of user messages the same way; pi shows only their text.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use base64::Engine as _;
use pi_ai::ImageContent;
use pi_tui::Component;
use pi_tui::capabilities::ImageProtocol;
use pi_tui::components::{Image, ImageOptions};
use pi_tui::terminal_image::image_dimensions;
use pi_tui::theme::Theme;

use super::transcript::Display;

/// How much of the base64 text is decoded to read an image's header (its size).
const HEADER_CHARS: usize = 64 * 1024;

/// The images of one message or result, drawn when the display allows.
pub(crate) struct ImageList {
    images: Vec<ImageContent>,
    drawn: Option<Vec<Image>>,
    theme: Arc<Theme>,
    display: Arc<Display>,
}

impl ImageList {
    /// The images of `content`'s image blocks.
    pub(crate) fn new(images: Vec<ImageContent>, theme: Arc<Theme>, display: Arc<Display>) -> Self {
        Self {
            images,
            drawn: None,
            theme,
            display,
        }
    }

    /// Whether there is nothing to draw.
    pub(crate) fn is_empty(&self) -> bool {
        self.images.is_empty()
    }

    fn protocol(&self) -> Option<ImageProtocol> {
        let d = &self.display;
        if !d.show_images.load(Ordering::Relaxed) {
            return None;
        }
        d.image_protocol.get().copied()
    }

    fn build(&self, protocol: ImageProtocol) -> Vec<Image> {
        let width = match self.display.image_width.load(Ordering::Relaxed) {
            0 => 60,
            w => w,
        };
        let sgr = self.theme.fg_ansi("toolOutput").to_owned();
        self.images
            .iter()
            .filter_map(|img| {
                let (data, mime) =
                    if protocol == ImageProtocol::Kitty && img.mime_type != "image/png" {
                        (to_png_base64(&img.data)?, "image/png".to_owned())
                    } else {
                        (img.data.clone(), img.mime_type.clone())
                    };
                let dims = header_bytes(&data).and_then(|b| image_dimensions(&b, &mime));
                Some(Image::new(
                    data,
                    mime,
                    dims,
                    Some(protocol),
                    ImageOptions {
                        max_width_cells: Some(width),
                        max_height_cells: None,
                    },
                    sgr.clone(),
                ))
            })
            .collect()
    }
}

impl Component for ImageList {
    fn render(&mut self, width: u16) -> Vec<String> {
        let Some(protocol) = self.protocol() else {
            return Vec::new();
        };
        if self.drawn.is_none() {
            self.drawn = Some(self.build(protocol));
        }
        let mut out = Vec::new();
        for img in self.drawn.iter_mut().flatten() {
            out.push(String::new());
            out.extend(img.render(width));
        }
        out
    }
}

/// The first bytes of a base64 image (enough for its header).
fn header_bytes(data: &str) -> Option<Vec<u8>> {
    let n = data.len().min(HEADER_CHARS) / 4 * 4;
    let head = data.get(..n)?;
    base64::engine::general_purpose::STANDARD.decode(head).ok()
}

/// A base64 image in another format as base64 PNG (`None` when it cannot be decoded).
fn to_png_base64(data: &str) -> Option<String> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let bytes = b64.decode(data).ok()?;
    let png = super::clipboard::to_png(&bytes)?;
    Some(b64.encode(png))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::terminal_colors::ColorScheme;
    use pi_tui::theme::ColorMode;

    fn png_base64(w: u32, h: u32) -> String {
        let mut out = std::io::Cursor::new(Vec::new());
        image::RgbImage::new(w, h)
            .write_to(&mut out, image::ImageFormat::Png)
            .unwrap();
        base64::engine::general_purpose::STANDARD.encode(out.get_ref())
    }

    fn list(images: Vec<ImageContent>, display: Arc<Display>) -> ImageList {
        let theme = Arc::new(Theme::builtin(ColorScheme::Dark, ColorMode::None));
        ImageList::new(images, theme, display)
    }

    #[test]
    fn drawn_with_kitty_when_shown_and_nothing_otherwise() {
        let display = Arc::new(Display::default());
        let png = ImageContent {
            data: png_base64(90, 36),
            mime_type: "image/png".into(),
        };
        let mut l = list(vec![png.clone()], display.clone());
        assert!(l.render(80).is_empty(), "no protocol yet");
        display.image_protocol.set(ImageProtocol::Kitty).unwrap();
        assert!(l.render(80).is_empty(), "showImages off");
        display.show_images.store(true, Ordering::Relaxed);
        display.image_width.store(10, Ordering::Relaxed);
        let lines = l.render(80);
        // A blank line, then 10 columns × 2 rows of a 90×36 image.
        assert_eq!(lines.len(), 3);
        assert!(lines[0].is_empty());
        assert!(
            lines[1].starts_with("\x1b_Ga=T,f=100,q=2,C=1,c=10,r=2,i="),
            "{:?}",
            lines[1]
        );
        assert!(lines[1].ends_with(&format!(";{}\x1b\\", png.data)));
    }

    #[test]
    fn kitty_gets_png_from_other_formats() {
        let display = Arc::new(Display::default());
        display.image_protocol.set(ImageProtocol::Kitty).unwrap();
        display.show_images.store(true, Ordering::Relaxed);
        let mut gif = std::io::Cursor::new(Vec::new());
        image::RgbImage::new(4, 4)
            .write_to(&mut gif, image::ImageFormat::Gif)
            .unwrap();
        let b64 = base64::engine::general_purpose::STANDARD;
        let img = ImageContent {
            data: b64.encode(gif.get_ref()),
            mime_type: "image/gif".into(),
        };
        let bad = ImageContent {
            data: "bm90IGFuIGltYWdl".into(),
            mime_type: "image/jpeg".into(),
        };
        let lines = list(vec![img, bad], display).render(40);
        let payload = lines[1]
            .split(';')
            .nth(1)
            .unwrap()
            .trim_end_matches("\x1b\\");
        assert!(b64.decode(payload).unwrap().starts_with(b"\x89PNG"));
        // The image that cannot be read is left out.
        assert_eq!(lines.iter().filter(|l| l.starts_with("\x1b_G")).count(), 1);
    }
}
