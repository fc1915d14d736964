//! Inline images, as pi-tui 0.85.1 draws them (`dist/terminal-image.js`): the Kitty graphics
//! protocol (`ESC _ G … ESC \`, the base64 payload in chunks of 4096) and iTerm2's inline
//! images (`OSC 1337 ; File=…`), sized in cells from the image's pixels and the terminal's
//! cell size (the `CSI 16 t` reply, 9×18 px until one comes), else pi's text fallback
//! `[Image: [image/png] 800x600]`. Which protocol applies comes from
//! [`Capabilities`](crate::capabilities::Capabilities).

use std::sync::atomic::{AtomicU32, Ordering};

/// How a Kitty graphics command starts.
pub const KITTY_PREFIX: &str = "\x1b_G";
/// How an iTerm2 inline image starts.
pub const ITERM2_PREFIX: &str = "\x1b]1337;File=";

/// The Kitty protocol's payload chunk, in base64 characters (pi-tui's `CHUNK_SIZE`).
pub const KITTY_CHUNK: usize = 4096;

/// An image's size in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageDimensions {
    /// Width in pixels.
    pub width_px: u32,
    /// Height in pixels.
    pub height_px: u32,
}

/// A terminal cell's size in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellDimensions {
    /// Width in pixels.
    pub width_px: u32,
    /// Height in pixels.
    pub height_px: u32,
}

impl Default for CellDimensions {
    /// pi-tui's default until the terminal answers: 9×18.
    fn default() -> Self {
        Self {
            width_px: 9,
            height_px: 18,
        }
    }
}

static CELL_WIDTH: AtomicU32 = AtomicU32::new(9);
static CELL_HEIGHT: AtomicU32 = AtomicU32::new(18);

/// The cell size images are laid out with (process-wide, as in pi-tui).
pub fn cell_dimensions() -> CellDimensions {
    CellDimensions {
        width_px: CELL_WIDTH.load(Ordering::Relaxed),
        height_px: CELL_HEIGHT.load(Ordering::Relaxed),
    }
}

/// Sets the cell size (from the terminal's reply); zero sizes are ignored.
pub fn set_cell_dimensions(d: CellDimensions) {
    if d.width_px > 0 && d.height_px > 0 {
        CELL_WIDTH.store(d.width_px, Ordering::Relaxed);
        CELL_HEIGHT.store(d.height_px, Ordering::Relaxed);
    }
}

/// The query for the cell size in pixels (`CSI 16 t`); the reply is `CSI 6 ; h ; w t`.
pub const CELL_SIZE_QUERY: &str = "\x1b[16t";

/// Parses a cell-size reply, `ESC [ 6 ; <height> ; <width> t`, exactly.
pub fn parse_cell_size_reply(text: &str) -> Option<CellDimensions> {
    let body = text.strip_prefix("\x1b[6;")?.strip_suffix('t')?;
    let (h, w) = body.split_once(';')?;
    let num = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    Some(CellDimensions {
        width_px: num(w)?,
        height_px: num(h)?,
    })
}

/// Options of a Kitty transmission (pi-tui's `encodeKitty`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KittyOptions {
    /// Columns to fill (`c=`).
    pub columns: Option<u32>,
    /// Rows to fill (`r=`).
    pub rows: Option<u32>,
    /// Image id (`i=`), so a later transmission replaces it.
    pub image_id: Option<u32>,
    /// `false`: the cursor stays where it was (`C=1`).
    pub move_cursor: bool,
}

/// The Kitty graphics command that transmits and shows a PNG given as base64 (`a=T,f=100,
/// q=2`, then `C=1`, `c=`, `r=`, `i=` as asked). A payload over [`KITTY_CHUNK`] characters
/// is split: the first command carries the keys and `m=1`, the middle ones `m=1`, the last
/// `m=0`.
pub fn encode_kitty(base64: &str, o: &KittyOptions) -> String {
    let mut params = vec!["a=T".to_owned(), "f=100".into(), "q=2".into()];
    if !o.move_cursor {
        params.push("C=1".into());
    }
    if let Some(c) = o.columns.filter(|c| *c > 0) {
        params.push(format!("c={c}"));
    }
    if let Some(r) = o.rows.filter(|r| *r > 0) {
        params.push(format!("r={r}"));
    }
    if let Some(i) = o.image_id.filter(|i| *i > 0) {
        params.push(format!("i={i}"));
    }
    let params = params.join(",");
    // base64 is ASCII: byte chunks are character chunks (anything else is not sent raw).
    let data: String = base64
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))
        .collect();
    if data.len() <= KITTY_CHUNK {
        return format!("\x1b_G{params};{data}\x1b\\");
    }
    let mut out = String::with_capacity(data.len() + data.len() / KITTY_CHUNK * 16 + 64);
    let chunks: Vec<&str> = data
        .as_bytes()
        .chunks(KITTY_CHUNK)
        .map(|c| std::str::from_utf8(c).unwrap_or(""))
        .collect();
    let last = chunks.len() - 1;
    for (i, chunk) in chunks.iter().enumerate() {
        if i == 0 {
            out.push_str(&format!("\x1b_G{params},m=1;{chunk}\x1b\\"));
        } else if i == last {
            out.push_str(&format!("\x1b_Gm=0;{chunk}\x1b\\"));
        } else {
            out.push_str(&format!("\x1b_Gm=1;{chunk}\x1b\\"));
        }
    }
    out
}

/// Deletes a Kitty image and frees its data (`a=d,d=I`).
pub fn delete_kitty_image(image_id: u32) -> String {
    format!("\x1b_Ga=d,d=I,i={image_id},q=2\x1b\\")
}

/// Options of an iTerm2 inline image (pi-tui's `encodeITerm2`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Iterm2Options {
    /// `width=` (cells, or `auto`).
    pub width: Option<String>,
    /// `height=`.
    pub height: Option<String>,
    /// `name=` (sent base64-encoded).
    pub name: Option<String>,
    /// `false` adds `preserveAspectRatio=0`.
    pub preserve_aspect_ratio: bool,
}

/// The number of bytes a base64 text decodes to, as Node's `Buffer.byteLength(s, "base64")`.
pub fn base64_decoded_len(base64: &str) -> usize {
    let b = base64.as_bytes();
    let mut len = b.len();
    for _ in 0..2 {
        if len > 0 && b[len - 1] == b'=' {
            len -= 1;
        }
    }
    len * 3 / 4
}

fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(chunk.get(1).copied().unwrap_or(0)) << 8)
            | u32::from(chunk.get(2).copied().unwrap_or(0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The iTerm2 inline image command: `ESC ] 1337 ; File=inline=1;size=<bytes>[;width=…]
/// [;height=…][;name=<base64>][;preserveAspectRatio=0] : <base64> BEL`.
pub fn encode_iterm2(base64: &str, o: &Iterm2Options) -> String {
    let data: String = base64
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))
        .collect();
    let mut params = vec![
        "inline=1".to_owned(),
        format!("size={}", base64_decoded_len(&data)),
    ];
    let clean = |s: &str| {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '%')
            .collect::<String>()
    };
    if let Some(w) = &o.width {
        params.push(format!("width={}", clean(w)));
    }
    if let Some(h) = &o.height {
        params.push(format!("height={}", clean(h)));
    }
    if let Some(name) = &o.name {
        params.push(format!("name={}", base64_encode(name.as_bytes())));
    }
    if !o.preserve_aspect_ratio {
        params.push("preserveAspectRatio=0".into());
    }
    format!("\x1b]1337;File={}:{data}\x07", params.join(";"))
}

/// The cells an image takes (pi-tui's `calculateImageCellSize`): scaled to fit `max_width`
/// columns and, when given, `max_height` rows, keeping its aspect; at least 1×1.
pub fn image_cell_size(
    image: ImageDimensions,
    max_width: u32,
    max_height: Option<u32>,
    cell: CellDimensions,
) -> (u32, u32) {
    let max_w = f64::from(max_width.max(1));
    let max_h = max_height.map(|h| f64::from(h.max(1)));
    let (cw, ch) = (
        f64::from(cell.width_px.max(1)),
        f64::from(cell.height_px.max(1)),
    );
    let (iw, ih) = (
        f64::from(image.width_px.max(1)),
        f64::from(image.height_px.max(1)),
    );
    let width_scale = max_w * cw / iw;
    let height_scale = max_h.map_or(width_scale, |h| h * ch / ih);
    let scale = width_scale.min(height_scale);
    let cols = (iw * scale / cw).ceil();
    let rows = (ih * scale / ch).ceil();
    let cols = cols.min(max_w).max(1.0);
    let rows = max_h.map_or(rows, |h| rows.min(h)).max(1.0);
    // Both are at most the (u32) limits, or the ceiling of a finite ratio of u32s.
    (cols as u32, rows.min(f64::from(u32::MAX)) as u32)
}

fn be16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_be_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
    ])))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_le_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
    ])))
}

/// An image's pixel size read from its header, for PNG, JPEG, GIF and WebP as pi-tui reads
/// them; `None` for other types or a header it cannot read.
pub fn image_dimensions(bytes: &[u8], mime: &str) -> Option<ImageDimensions> {
    let dims = |w: u32, h: u32| {
        Some(ImageDimensions {
            width_px: w,
            height_px: h,
        })
    };
    match mime {
        "image/png" => {
            if bytes.len() < 24 || !bytes.starts_with(b"\x89PNG") {
                return None;
            }
            let be32 = |at: usize| {
                u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
            };
            dims(be32(16), be32(20))
        }
        "image/jpeg" => {
            if !bytes.starts_with(&[0xff, 0xd8]) {
                return None;
            }
            let mut at = 2;
            while at + 9 < bytes.len() {
                if bytes[at] != 0xff {
                    at += 1;
                    continue;
                }
                let marker = bytes[at + 1];
                if (0xc0..=0xc2).contains(&marker) {
                    return dims(be16(bytes, at + 7)?, be16(bytes, at + 5)?);
                }
                let len = usize::try_from(be16(bytes, at + 2)?).ok()?;
                if len < 2 {
                    return None;
                }
                at = at.checked_add(2 + len)?;
            }
            None
        }
        "image/gif" => {
            if bytes.len() < 10 || !(bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a")) {
                return None;
            }
            dims(le16(bytes, 6)?, le16(bytes, 8)?)
        }
        "image/webp" => {
            if bytes.len() < 30 || &bytes[0..4] != b"RIFF" || &bytes[8..12] != b"WEBP" {
                return None;
            }
            match &bytes[12..16] {
                b"VP8 " => dims(le16(bytes, 26)? & 0x3fff, le16(bytes, 28)? & 0x3fff),
                b"VP8L" => {
                    let bits = u32::from_le_bytes([bytes[21], bytes[22], bytes[23], bytes[24]]);
                    dims((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1)
                }
                b"VP8X" => {
                    let b3 = |at: usize| {
                        u32::from(bytes[at])
                            | (u32::from(bytes[at + 1]) << 8)
                            | (u32::from(bytes[at + 2]) << 16)
                    };
                    dims(b3(24) + 1, b3(27) + 1)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// pi's text fallback for an image the terminal cannot show:
/// `[Image: <file> [<mime>] <w>x<h>]` (the file and size when known; control characters
/// escaped).
pub fn image_fallback(mime: &str, dims: Option<ImageDimensions>, filename: Option<&str>) -> String {
    let mut parts = Vec::new();
    if let Some(f) = filename {
        parts.push(crate::ansi::escape_control(f));
    }
    parts.push(format!("[{}]", crate::ansi::escape_control(mime)));
    if let Some(d) = dims {
        parts.push(format!("{}x{}", d.width_px, d.height_px));
    }
    format!("[Image: {}]", parts.join(" "))
}

/// A fresh Kitty image id in `1..=0xffff_fffe` (random, as pi-tui's, so ids of separate
/// processes sharing a terminal rarely collide).
pub fn allocate_image_id() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    (h.finish() % 0xffff_fffe) as u32 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kitty_small_payloads_are_one_command() {
        let o = KittyOptions {
            columns: Some(10),
            rows: Some(4),
            image_id: Some(7),
            move_cursor: false,
        };
        assert_eq!(
            encode_kitty("iVBORw0KGgo=", &o),
            "\x1b_Ga=T,f=100,q=2,C=1,c=10,r=4,i=7;iVBORw0KGgo=\x1b\\"
        );
        let moving = KittyOptions {
            move_cursor: true,
            ..KittyOptions::default()
        };
        assert_eq!(
            encode_kitty("QUJD", &moving),
            "\x1b_Ga=T,f=100,q=2;QUJD\x1b\\"
        );
    }

    #[test]
    fn kitty_chunks_at_4096() {
        let data = "A".repeat(KITTY_CHUNK * 2 + 10);
        let o = KittyOptions {
            image_id: Some(3),
            ..KittyOptions::default()
        };
        let s = encode_kitty(&data, &o);
        let cmds: Vec<&str> = s.split("\x1b\\").filter(|c| !c.is_empty()).collect();
        assert_eq!(cmds.len(), 3);
        assert_eq!(
            cmds[0],
            format!("\x1b_Ga=T,f=100,q=2,C=1,i=3,m=1;{}", "A".repeat(4096))
        );
        assert_eq!(cmds[1], format!("\x1b_Gm=1;{}", "A".repeat(4096)));
        assert_eq!(cmds[2], format!("\x1b_Gm=0;{}", "A".repeat(10)));
        // Exactly one chunk's worth: still one command.
        let one = encode_kitty(&"A".repeat(KITTY_CHUNK), &o);
        assert_eq!(one.matches("\x1b_G").count(), 1);
        // Two exact chunks: the second is the last.
        let two = encode_kitty(&"A".repeat(KITTY_CHUNK * 2), &o);
        assert!(two.ends_with(&format!("\x1b_Gm=0;{}\x1b\\", "A".repeat(4096))));
        // Nothing but base64 reaches the terminal.
        assert_eq!(
            encode_kitty("QU\x1b]0;x\x07JD", &o),
            "\x1b_Ga=T,f=100,q=2,C=1,i=3;QU0xJD\x1b\\"
        );
    }

    #[test]
    fn iterm2_inline_image_bytes() {
        let o = Iterm2Options {
            width: Some("20".into()),
            height: Some("auto".into()),
            name: Some("a.png".into()),
            preserve_aspect_ratio: true,
        };
        // "QUJDRA==" decodes to 4 bytes ("ABCD"); "a.png" is YS5wbmc=.
        assert_eq!(
            encode_iterm2("QUJDRA==", &o),
            "\x1b]1337;File=inline=1;size=4;width=20;height=auto;name=YS5wbmc=:QUJDRA==\x07"
        );
        let plain = encode_iterm2("QUJD", &Iterm2Options::default());
        assert_eq!(
            plain,
            "\x1b]1337;File=inline=1;size=3;preserveAspectRatio=0:QUJD\x07"
        );
        assert_eq!(base64_decoded_len("QUJDRA="), 4);
        assert_eq!(base64_encode(b"ABCDE"), "QUJDREU=");
    }

    #[test]
    fn cell_sizes_keep_the_aspect_within_limits() {
        let cell = CellDimensions::default();
        let img = |w, h| ImageDimensions {
            width_px: w,
            height_px: h,
        };
        // 800×600 at 60 columns: 540 px wide, 405 px high → 23 rows.
        assert_eq!(image_cell_size(img(800, 600), 60, None, cell), (60, 23));
        // A tall image is bound by the height.
        assert_eq!(image_cell_size(img(100, 1000), 60, Some(10), cell), (2, 10));
        assert_eq!(image_cell_size(img(0, 0), 0, Some(0), cell), (1, 1));
    }

    #[test]
    fn headers_give_the_pixel_size() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(
            image_dimensions(&png, "image/png"),
            Some(ImageDimensions {
                width_px: 640,
                height_px: 480
            })
        );
        let gif = b"GIF89a\x20\x00\x10\x00";
        assert_eq!(
            image_dimensions(gif, "image/gif"),
            Some(ImageDimensions {
                width_px: 32,
                height_px: 16
            })
        );
        // SOI, an APP0 segment of 16 bytes, then SOF0 with height 2, width 3.
        let mut jpeg = vec![0xff, 0xd8, 0xff, 0xe0, 0, 16];
        jpeg.extend_from_slice(&[0; 14]);
        jpeg.extend_from_slice(&[0xff, 0xc0, 0, 17, 8, 0, 2, 0, 3, 3, 1, 2, 3]);
        assert_eq!(
            image_dimensions(&jpeg, "image/jpeg"),
            Some(ImageDimensions {
                width_px: 3,
                height_px: 2
            })
        );
        assert_eq!(image_dimensions(b"\x89PNG", "image/png"), None);
        assert_eq!(
            image_dimensions(&[0xff, 0xd8, 0xff, 0xe0, 0, 0, 0, 0, 0, 0, 0], "image/jpeg"),
            None
        );
        assert_eq!(image_dimensions(&png, "image/bmp"), None);
    }

    #[test]
    fn fallback_text_and_cell_size_reply() {
        let d = ImageDimensions {
            width_px: 800,
            height_px: 600,
        };
        assert_eq!(
            image_fallback("image/png", Some(d), None),
            "[Image: [image/png] 800x600]"
        );
        assert_eq!(
            image_fallback("image/png", None, Some("~/a\x1b.png")),
            "[Image: ~/a\\x1b.png [image/png]]"
        );
        assert_eq!(
            parse_cell_size_reply("\x1b[6;20;10t"),
            Some(CellDimensions {
                width_px: 10,
                height_px: 20
            })
        );
        assert_eq!(parse_cell_size_reply("\x1b[6;20t"), None);
        assert_eq!(parse_cell_size_reply("\x1b[6;-1;10t"), None);
        let id = allocate_image_id();
        assert!((1..=0xffff_fffe).contains(&id));
    }
}
