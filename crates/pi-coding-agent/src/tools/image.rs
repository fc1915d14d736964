//! Image sniffing and preparation for the read tool.
//!
//! Mirrors pi 0.85.0 `utils/mime.ts` (`detectSupportedImageMimeType`), `utils/image-process.ts`
//! (`processImage`), `utils/image-resize-core.ts` (`resizeImageInProcess`) and
//! `formatDimensionNote`. pi decodes with Photon (which uses the `image` crate); pi-rs uses the
//! `image` crate directly (PNG, JPEG, GIF, WebP, BMP), so re-encoded bytes may differ from pi's
//! while sizes, formats, limits and texts are the same.
//!
//! Rules: PNG, JPEG, GIF and WebP are inlined as they are; BMP is converted to PNG. With
//! `images.autoResize` (default on) an image larger than 2000×2000 or whose base64 form is not
//! below 4.5 MiB is scaled to fit 2000×2000 (Lanczos3), then encoded as PNG or JPEG at quality
//! 80, 85, 70, 55, 40 — the first candidate under the limit wins — shrinking by 0.75 per round
//! until one fits. JPEG and WebP EXIF orientation is applied before measuring.

use std::io::Cursor;

use base64::Engine;
use image::codecs::jpeg::JpegEncoder;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, imageops::FilterType};

/// Bytes read from the start of a file to sniff its type (pi `IMAGE_TYPE_SNIFF_BYTES`).
pub(crate) const SNIFF_BYTES: usize = 4100;

/// Largest width and height kept by the resizer.
const MAX_DIMENSION: u32 = 2000;
/// Largest base64 payload: 4.5 MiB, below Anthropic's 5 MB limit.
const MAX_BASE64_BYTES: usize = 4_718_592;
/// JPEG qualities tried, in order.
const JPEG_QUALITIES: [u8; 5] = [80, 85, 70, 55, 40];

/// The image MIME type of a file from its first bytes, or `None` for anything pi reads as text:
/// JPEG (not JPEG-LS), non-animated PNG, GIF, WebP, and plausible BMP headers.
pub(crate) fn detect_image_mime_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0xff, 0xd8, 0xff]) {
        return (head.get(3) != Some(&0xf7)).then_some("image/jpeg");
    }
    if head.starts_with(&[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]) {
        return (is_png(head) && !is_animated_png(head)).then_some("image/png");
    }
    if head.starts_with(b"GIF") {
        return Some("image/gif");
    }
    if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        return Some("image/webp");
    }
    if head.starts_with(b"BM") && is_bmp(head) {
        return Some("image/bmp");
    }
    None
}

fn be32(b: &[u8], at: usize) -> u64 {
    (0..4).fold(0u64, |acc, i| {
        (acc << 8) | u64::from(*b.get(at + i).unwrap_or(&0))
    })
}

fn le32(b: &[u8], at: usize) -> u64 {
    (0..4).rev().fold(0u64, |acc, i| {
        (acc << 8) | u64::from(*b.get(at + i).unwrap_or(&0))
    })
}

fn le16(b: &[u8], at: usize) -> u64 {
    u64::from(*b.get(at).unwrap_or(&0)) | (u64::from(*b.get(at + 1).unwrap_or(&0)) << 8)
}

fn is_png(b: &[u8]) -> bool {
    b.len() >= 16 && be32(b, 8) == 13 && &b[12..16] == b"IHDR"
}

/// An `acTL` chunk before the first `IDAT` marks an animated PNG.
fn is_animated_png(b: &[u8]) -> bool {
    let mut offset = 8usize;
    while offset + 8 <= b.len() {
        let length = be32(b, offset) as usize;
        match &b[offset + 4..offset + 8] {
            b"acTL" => return true,
            b"IDAT" => return false,
            _ => {}
        }
        let next = offset.saturating_add(12).saturating_add(length);
        if next <= offset || next > b.len() {
            return false;
        }
        offset = next;
    }
    false
}

fn is_bmp(b: &[u8]) -> bool {
    if b.len() < 26 {
        return false;
    }
    let file_size = le32(b, 2);
    let pixel_offset = le32(b, 10);
    let dib_size = le32(b, 14);
    if file_size != 0 && file_size < 26 {
        return false;
    }
    if pixel_offset < 14 + dib_size || (file_size != 0 && pixel_offset >= file_size) {
        return false;
    }
    let (planes, bits) = if dib_size == 12 {
        (le16(b, 22), le16(b, 24))
    } else if (40..=124).contains(&dib_size) {
        if b.len() < 30 {
            return false;
        }
        (le16(b, 26), le16(b, 28))
    } else {
        return false;
    };
    planes == 1 && [1, 4, 8, 16, 24, 32].contains(&bits)
}

/// What the read tool sends for an image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ProcessedImage {
    /// Inline the image.
    Ok {
        /// Base64 bytes.
        data: String,
        /// MIME type of `data`.
        mime_type: String,
        /// Notes for the model (conversion, resizing), in order.
        hints: Vec<String>,
    },
    /// The image cannot be inlined; `message` says why.
    Omitted {
        /// pi's bracketed explanation.
        message: String,
    },
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Most memory an image file may take to decode: a pixel buffer of at most 512 MiB, and as
/// much again for the decoder's own buffers (the `image` crate's default allocation limit). A file whose header promises
/// more is refused before its pixels are allocated (a decompression bomb, a few bytes declaring
/// 60000×60000 pixels, fails earlier still, on its missing data); the read then says `[Image omitted: …]` as for any image that cannot
/// be converted or resized. pi decodes in Photon's WebAssembly memory (at most 4 GiB).
pub(crate) const MAX_DECODE_BYTES: u64 = 512 * 1024 * 1024;

/// Largest image file the read tool or an `@file` argument reads: 512 MiB, the size of the
/// largest pixel buffer pi-rs decodes (an encoded file is rarely larger than its pixels). The
/// size is checked before the file is read, so a huge file costs nothing. pi reads image files
/// whole, up to Node's 2 GiB `readFile` limit, and sends them on if it cannot decode them.
pub(crate) const MAX_IMAGE_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// What the read tool and `@file` arguments say for an image file past `limit` bytes (its
/// bytes unread): `[Image omitted: the file is larger than <limit> bytes, the limit of an
/// image file.]`.
pub(crate) fn oversized_image(limit: u64) -> ProcessedImage {
    ProcessedImage::Omitted {
        message: format!(
            "[Image omitted: the file is larger than {limit} bytes, the limit of an image file.]"
        ),
    }
}

/// Reads the image file at `path` if it holds at most `limit` bytes; `Ok(None)` when it is
/// larger. At most `limit + 1` bytes are read even when the file grows while it is read.
///
/// Errors: opening or reading the file.
pub(crate) fn read_image_file(
    path: &std::path::Path,
    limit: u64,
) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len > limit {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Ok(None);
    }
    Ok(Some(bytes))
}

/// Decodes `bytes`, applying the EXIF orientation of JPEG and WebP files as pi does.
fn decode(bytes: &[u8]) -> Option<DynamicImage> {
    decode_within(bytes, MAX_DECODE_BYTES).ok()
}

/// [`decode`] with an allocation limit of `max_alloc` bytes.
fn decode_within(bytes: &[u8], max_alloc: u64) -> image::ImageResult<DynamicImage> {
    let mut reader = ImageReader::new(Cursor::new(bytes)).with_guessed_format()?;
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(max_alloc);
    reader.limits(limits);
    let format = reader.format();
    let mut decoder = reader.into_decoder()?;
    // The reader's limit covers the decoder's own buffers; the pixel buffer that
    // `from_decoder` allocates is checked here.
    if decoder.total_bytes() > max_alloc {
        return Err(image::ImageError::Limits(
            image::error::LimitError::from_kind(image::error::LimitErrorKind::InsufficientMemory),
        ));
    }
    let orientation = match format {
        Some(ImageFormat::Jpeg | ImageFormat::WebP) => decoder.orientation().ok(),
        _ => None,
    };
    let mut image = DynamicImage::from_decoder(decoder)?;
    if let Some(o) = orientation {
        image.apply_orientation(o);
    }
    Ok(image)
}

fn encode_png(image: &DynamicImage) -> Option<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Png).ok()?;
    Some(out.into_inner())
}

fn encode_jpeg(image: &DynamicImage, quality: u8) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let rgb = image.to_rgb8();
    JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(&rgb)
        .ok()?;
    Some(out)
}

/// A resized (or untouched) image and its geometry.
struct Resized {
    data: String,
    mime_type: String,
    original: (u32, u32),
    size: (u32, u32),
    was_resized: bool,
}

/// JavaScript `Math.round` for non-negative values.
fn js_round(x: f64) -> u32 {
    (x + 0.5).floor() as u32
}

/// pi `resizeImageInProcess` with its default options.
fn resize(bytes: &[u8], mime_type: &str) -> Option<Resized> {
    let image = decode(bytes)?;
    let (width, height) = (image.width(), image.height());
    let base64_size = bytes.len().div_ceil(3) * 4;
    if width <= MAX_DIMENSION && height <= MAX_DIMENSION && base64_size < MAX_BASE64_BYTES {
        return Some(Resized {
            data: b64(bytes),
            mime_type: mime_type.to_owned(),
            original: (width, height),
            size: (width, height),
            was_resized: false,
        });
    }
    let (mut w, mut h) = (width, height);
    if w > MAX_DIMENSION {
        h = js_round(f64::from(h) * f64::from(MAX_DIMENSION) / f64::from(w));
        w = MAX_DIMENSION;
    }
    if h > MAX_DIMENSION {
        w = js_round(f64::from(w) * f64::from(MAX_DIMENSION) / f64::from(h));
        h = MAX_DIMENSION;
    }
    loop {
        let scaled = image.resize_exact(w.max(1), h.max(1), FilterType::Lanczos3);
        let candidates = std::iter::once(encode_png(&scaled).map(|b| (b, "image/png"))).chain(
            JPEG_QUALITIES
                .iter()
                .map(|&q| encode_jpeg(&scaled, q).map(|b| (b, "image/jpeg"))),
        );
        for (bytes, mime) in candidates.flatten() {
            let data = b64(&bytes);
            if data.len() < MAX_BASE64_BYTES {
                return Some(Resized {
                    data,
                    mime_type: mime.to_owned(),
                    original: (width, height),
                    size: (w, h),
                    was_resized: true,
                });
            }
        }
        if w == 1 && h == 1 {
            return None;
        }
        let next_w = if w == 1 {
            1
        } else {
            ((f64::from(w) * 0.75).floor() as u32).max(1)
        };
        let next_h = if h == 1 {
            1
        } else {
            ((f64::from(h) * 0.75).floor() as u32).max(1)
        };
        if (next_w, next_h) == (w, h) {
            return None;
        }
        (w, h) = (next_w, next_h);
    }
}

/// `x.toFixed(digits)` for finite non-negative `x`: the exact binary value rounded half up.
pub(crate) fn to_fixed(x: f64, digits: usize) -> String {
    // 80 fractional digits are exact for every double of magnitude >= 2^-26.
    let exact = format!("{x:.80}");
    let (int_part, frac_part) = exact.split_once('.').unwrap_or((&exact, ""));
    let mut kept: Vec<u8> =
        format!("{int_part}{}", &frac_part[..digits.min(frac_part.len())]).into_bytes();
    let round_up = frac_part.as_bytes().get(digits).is_some_and(|&d| d >= b'5');
    if round_up {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, b'1');
                break;
            }
            i -= 1;
            if kept[i] == b'9' {
                kept[i] = b'0';
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    let text = String::from_utf8_lossy(&kept).into_owned();
    if digits == 0 {
        return text;
    }
    let split = text.len() - digits;
    format!("{}.{}", &text[..split], &text[split..])
}

/// pi `processImage(bytes, mimeType, {autoResizeImages})`.
///
/// Texts: `[Image converted from image/bmp to image/png.]`, `[Image: original WxH, displayed at
/// wxh. Multiply coordinates by S to map to original image.]`, and the omissions
/// `[Image omitted: could not be converted to a supported inline image format.]` /
/// `[Image omitted: could not be resized below the inline image size limit.]`.
pub(crate) fn process_image(bytes: &[u8], mime_type: &str, auto_resize: bool) -> ProcessedImage {
    let (bytes, mime, converted_from) = match mime_type {
        "image/png" | "image/jpeg" | "image/gif" | "image/webp" => {
            (bytes.to_vec(), mime_type.to_owned(), None)
        }
        other => match decode(bytes).and_then(|i| encode_png(&i)) {
            Some(png) => (png, "image/png".to_owned(), Some(other.to_owned())),
            None => {
                return ProcessedImage::Omitted {
                    message: "[Image omitted: could not be converted to a supported inline image \
                              format.]"
                        .into(),
                };
            }
        },
    };
    let conversion_hint = |to: &str| {
        converted_from
            .as_deref()
            .filter(|from| *from != to)
            .map(|from| format!("[Image converted from {from} to {to}.]"))
    };
    if !auto_resize {
        return ProcessedImage::Ok {
            data: b64(&bytes),
            hints: conversion_hint(&mime).into_iter().collect(),
            mime_type: mime,
        };
    }
    let Some(resized) = resize(&bytes, &mime) else {
        return ProcessedImage::Omitted {
            message: "[Image omitted: could not be resized below the inline image size limit.]"
                .into(),
        };
    };
    let mut hints: Vec<String> = conversion_hint(&resized.mime_type).into_iter().collect();
    if resized.was_resized {
        let scale = f64::from(resized.original.0) / f64::from(resized.size.0);
        hints.push(format!(
            "[Image: original {}x{}, displayed at {}x{}. Multiply coordinates by {} to map to \
             original image.]",
            resized.original.0,
            resized.original.1,
            resized.size.0,
            resized.size.1,
            to_fixed(scale, 2)
        ));
    }
    ProcessedImage::Ok {
        data: resized.data,
        mime_type: resized.mime_type,
        hints,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_file_at_the_byte_limit_is_read_and_past_it_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.png");
        let bytes: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_image_file(&path, 5000).unwrap(), Some(bytes.clone()));
        assert_eq!(read_image_file(&path, 4999).unwrap(), None);
        assert_eq!(read_image_file(&path, 0).unwrap(), None);
        // The real limit: a sparse file one byte past it is refused without being read.
        let huge = dir.path().join("huge.png");
        let f = std::fs::File::create(&huge).unwrap();
        f.set_len(MAX_IMAGE_FILE_BYTES + 1).unwrap();
        let started = std::time::Instant::now();
        assert_eq!(read_image_file(&huge, MAX_IMAGE_FILE_BYTES).unwrap(), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(MAX_IMAGE_FILE_BYTES, 536_870_912);
        assert_eq!(
            oversized_image(MAX_IMAGE_FILE_BYTES),
            ProcessedImage::Omitted {
                message: "[Image omitted: the file is larger than 536870912 bytes, the limit of an image file.]".into()
            }
        );
    }

    /// pi's test fixture: a 1×1 red 24-bit BMP.
    pub(crate) fn tiny_bmp() -> Vec<u8> {
        let mut b = vec![0u8; 58];
        b[0..2].copy_from_slice(b"BM");
        b[2..6].copy_from_slice(&58u32.to_le_bytes());
        b[10..14].copy_from_slice(&54u32.to_le_bytes());
        b[14..18].copy_from_slice(&40u32.to_le_bytes());
        b[18..22].copy_from_slice(&1i32.to_le_bytes());
        b[22..26].copy_from_slice(&1i32.to_le_bytes());
        b[26..28].copy_from_slice(&1u16.to_le_bytes());
        b[28..30].copy_from_slice(&24u16.to_le_bytes());
        b[34..38].copy_from_slice(&4u32.to_le_bytes());
        b[56] = 0xff;
        b
    }

    fn png(width: u32, height: u32) -> Vec<u8> {
        let img = DynamicImage::new_rgb8(width, height);
        encode_png(&img).unwrap()
    }

    #[test]
    fn sniffs_by_magic_bytes() {
        assert_eq!(detect_image_mime_type(&png(1, 1)), Some("image/png"));
        assert_eq!(
            detect_image_mime_type(&[0xff, 0xd8, 0xff, 0xe0]),
            Some("image/jpeg")
        );
        assert_eq!(detect_image_mime_type(&[0xff, 0xd8, 0xff, 0xf7]), None);
        assert_eq!(detect_image_mime_type(b"GIF89a"), Some("image/gif"));
        assert_eq!(
            detect_image_mime_type(b"RIFF\0\0\0\0WEBPVP8 "),
            Some("image/webp")
        );
        assert_eq!(detect_image_mime_type(&tiny_bmp()), Some("image/bmp"));
        assert_eq!(
            detect_image_mime_type(b"BM not really a bitmap header"),
            None
        );
        assert_eq!(detect_image_mime_type(b"definitely not a png"), None);
        // An acTL chunk before IDAT: animated PNG, read as text.
        let mut apng = png(1, 1)[..33].to_vec();
        apng.extend_from_slice(&[0, 0, 0, 8]);
        apng.extend_from_slice(b"acTL");
        apng.extend_from_slice(&[0; 12]);
        assert_eq!(detect_image_mime_type(&apng), None);
    }

    /// CRC-32 (ISO-HDLC) of a PNG chunk's type and data.
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    /// A PNG of `width`×`height` 8-bit RGB pixels whose image data holds a single row: what
    /// a decompression bomb's header looks like.
    fn png_claiming(width: u32, height: u32) -> Vec<u8> {
        let mut bytes = png(width, 1);
        // IHDR data sits at bytes 16..29 (the height at 20..24), its CRC at 29..33.
        bytes[20..24].copy_from_slice(&height.to_be_bytes());
        let crc = crc32(&bytes[12..29]);
        bytes[29..33].copy_from_slice(&crc.to_be_bytes());
        bytes
    }

    /// A header promising 60000×60000 pixels (10.8 GB) over one row of data is refused without
    /// allocating the pixels, and the read omits the image with pi's text. The limit itself: a
    /// real image decodes at a limit of exactly its pixel buffer and is refused one byte
    /// below it.
    #[test]
    fn decoding_stops_at_the_allocation_limit() {
        let bomb = png_claiming(60_000, 60_000);
        assert!(decode_within(&bomb, MAX_DECODE_BYTES).is_err());
        match process_image(&bomb, "image/png", true) {
            ProcessedImage::Omitted { message } => assert_eq!(
                message,
                "[Image omitted: could not be resized below the inline image size limit.]"
            ),
            ProcessedImage::Ok { .. } => panic!("a bomb was inlined"),
        }
        // Without auto-resize nothing is decoded: the bytes go through as pi sends them.
        assert!(matches!(
            process_image(&bomb, "image/png", false),
            ProcessedImage::Ok { .. }
        ));
        let real = png(300, 200);
        let pixels = 300 * 200 * 3;
        assert_eq!(decode_within(&real, pixels).unwrap().width(), 300);
        assert!(matches!(
            decode_within(&real, pixels - 1),
            Err(image::ImageError::Limits(_))
        ));
    }

    #[test]
    fn small_images_pass_through_unchanged() {
        let bytes = png(3, 2);
        let ProcessedImage::Ok {
            data,
            mime_type,
            hints,
        } = process_image(&bytes, "image/png", true)
        else {
            panic!("omitted")
        };
        assert_eq!(data, b64(&bytes));
        assert_eq!(mime_type, "image/png");
        assert!(hints.is_empty());
    }

    #[test]
    fn bmp_is_converted_to_png() {
        for auto_resize in [true, false] {
            let ProcessedImage::Ok {
                data,
                mime_type,
                hints,
            } = process_image(&tiny_bmp(), "image/bmp", auto_resize)
            else {
                panic!("omitted")
            };
            assert_eq!(mime_type, "image/png");
            assert_eq!(
                hints,
                vec!["[Image converted from image/bmp to image/png.]"]
            );
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap();
            assert_eq!(bytes[0], 0x89);
        }
    }

    #[test]
    fn large_images_are_scaled_to_2000_with_a_dimension_note() {
        let ProcessedImage::Ok {
            data,
            mime_type,
            hints,
        } = process_image(&png(2400, 300), "image/png", true)
        else {
            panic!("omitted")
        };
        assert_eq!(mime_type, "image/png");
        assert_eq!(
            hints,
            vec![
                "[Image: original 2400x300, displayed at 2000x250. Multiply coordinates by 1.20 \
                 to map to original image.]"
            ]
        );
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        let decoded = image::load_from_memory(&bytes).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (2000, 250));
        // Without auto-resize the original is sent.
        let ProcessedImage::Ok { hints, .. } = process_image(&png(2400, 300), "image/png", false)
        else {
            panic!("omitted")
        };
        assert!(hints.is_empty());
    }

    #[test]
    fn undecodable_images_are_omitted() {
        assert_eq!(
            process_image(b"BM garbage", "image/bmp", true),
            ProcessedImage::Omitted {
                message: "[Image omitted: could not be converted to a supported inline image \
                          format.]"
                    .into()
            }
        );
        assert_eq!(
            process_image(b"GIF89a garbage", "image/gif", true),
            ProcessedImage::Omitted {
                message: "[Image omitted: could not be resized below the inline image size \
                          limit.]"
                    .into()
            }
        );
    }

    #[test]
    fn to_fixed_rounds_half_up_like_javascript() {
        assert_eq!(to_fixed(1.5, 2), "1.50");
        assert_eq!(to_fixed(1.125, 2), "1.13");
        assert_eq!(to_fixed(2.0 / 3.0, 2), "0.67");
        assert_eq!(to_fixed(9.999, 2), "10.00");
        assert_eq!(to_fixed(1.005, 2), "1.00"); // 1.005 is below 1.005 in binary
    }
}
