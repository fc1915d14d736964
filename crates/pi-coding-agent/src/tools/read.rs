//! The `read` tool: file contents for the model.
//!
//! Mirrors pi 0.85.0 `core/tools/read.ts`: parameters `{path, offset?, limit?}` (1-based line
//! offset). Images (sniffed by magic bytes, `super::image`) become
//! `[text "Read image file [<mime>]" + hints, image]`. Text is returned verbatim (no line
//! numbers), decoded as UTF-8 with replacement characters, split on `\n`, sliced by
//! offset/limit, then head-truncated to 2000 lines / 50 KB with pi's continuation notices:
//! `[Showing lines A-B of T. Use offset=N to continue.]`, the `(50.0KB limit)` variant,
//! `[Line N is <size>, exceeds 50.0KB limit. Use bash: sed -n 'Np' <path> | head -c 51200]`,
//! and `[R more lines in file. Use offset=N to continue.]` when the model's limit stopped early.
//! Truncation puts `{truncation}` in details; otherwise there are none. Errors: Node's
//! (`ENOENT: no such file or directory, access '<abs>'`), `Offset N is beyond end of file
//! (M lines total)`, `Operation aborted`.

use std::ffi::CString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::{ImageContent, UserContent};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::image::{
    MAX_IMAGE_FILE_BYTES, ProcessedImage, SNIFF_BYTES, detect_image_mime_type, oversized_image,
    process_image, read_image_file,
};
use super::path_args::resolve_read_path;
use super::truncate::{
    DEFAULT_MAX_BYTES, TruncatedBy, TruncationOptions, format_size, truncate_head,
};
use super::{aborted, check_aborted, js_number, optional_number, required_str};
use crate::platform::fs_error::{node_message, read_file_async, read_file_message};

/// Answers whether the current model accepts image input.
pub type ImageSupportFn = Arc<dyn Fn() -> bool + Send + Sync>;

/// The note added to image reads for a model without image input.
pub const NON_VISION_NOTE: &str =
    "[Current model does not support images. The image will be omitted from this request.]";

/// Options of the read tool.
#[derive(Clone)]
pub struct ReadToolOptions {
    /// Scale large images down (settings `images.autoResize`, default `true`).
    pub auto_resize_images: bool,
    /// Whether the session's current model takes images; `None` when no model is known (no
    /// note is added then, as in pi without a model).
    pub model_supports_images: Option<ImageSupportFn>,
}

impl Default for ReadToolOptions {
    fn default() -> Self {
        ReadToolOptions {
            auto_resize_images: true,
            model_supports_images: None,
        }
    }
}

/// The `read` tool bound to a working directory.
pub struct ReadTool {
    cwd: PathBuf,
    options: ReadToolOptions,
    parameters: Value,
}

impl ReadTool {
    /// A read tool resolving relative paths against `cwd`.
    pub fn new(cwd: PathBuf, options: ReadToolOptions) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "File to read, relative to the working directory or absolute"
                },
                "offset": {
                    "type": "number",
                    "description": "First line to return, counting from 1"
                },
                "limit": {
                    "type": "number",
                    "description": "Most lines to return"
                }
            },
            "required": ["path"]
        });
        ReadTool {
            cwd,
            options,
            parameters,
        }
    }

    async fn run(&self, args: Value) -> Result<AgentToolResult, ToolError> {
        let path = required_str(&args, "path")?;
        let offset = optional_number(&args, "offset");
        let limit = optional_number(&args, "limit");
        let absolute = resolve_read_path(path, &self.cwd);
        check_readable(&absolute)
            .map_err(|e| ToolError::new(node_message(&e, "access", Some(&absolute))))?;
        let head = read_head(&absolute)
            .await
            .map_err(|e| ToolError::new(read_file_message(&e, &absolute)))?;
        if let Some(mime) = detect_image_mime_type(&head) {
            return self.image_result(&absolute, mime).await;
        }
        let bytes = read_file_async(&absolute)
            .await
            .map_err(|e| ToolError::new(read_file_message(&e, &absolute)))?;
        read_text(&String::from_utf8_lossy(&bytes), path, offset, limit)
    }

    /// The image at `absolute`: read only when it is within [`MAX_IMAGE_FILE_BYTES`].
    async fn image_result(
        &self,
        absolute: &Path,
        mime: &str,
    ) -> Result<AgentToolResult, ToolError> {
        let auto_resize = self.options.auto_resize_images;
        let owned = absolute.to_path_buf();
        let mime_owned = mime.to_owned();
        let processed = tokio::task::spawn_blocking(move || {
            Ok(match read_image_file(&owned, MAX_IMAGE_FILE_BYTES)? {
                Some(bytes) => process_image(&bytes, &mime_owned, auto_resize),
                None => oversized_image(MAX_IMAGE_FILE_BYTES),
            })
        })
        .await
        .unwrap_or_else(|_| {
            Ok(ProcessedImage::Omitted {
                message: "[Image omitted: could not be resized below the inline image size limit.]"
                    .into(),
            })
        })
        .map_err(|e: std::io::Error| ToolError::new(read_file_message(&e, absolute)))?;
        let note = self
            .options
            .model_supports_images
            .as_ref()
            .filter(|supports| !supports())
            .map(|_| NON_VISION_NOTE);
        let mut content = Vec::new();
        match processed {
            ProcessedImage::Omitted { message } => {
                let mut text = format!("Read image file [{mime}]\n{message}");
                if let Some(note) = note {
                    text.push('\n');
                    text.push_str(note);
                }
                content.push(UserContent::text(text));
            }
            ProcessedImage::Ok {
                data,
                mime_type,
                hints,
            } => {
                let mut text = format!("Read image file [{mime_type}]");
                for line in hints.iter().map(String::as_str).chain(note) {
                    text.push('\n');
                    text.push_str(line);
                }
                content.push(UserContent::text(text));
                content.push(UserContent::Image(ImageContent { data, mime_type }));
            }
        }
        Ok(AgentToolResult {
            content,
            ..Default::default()
        })
    }
}

/// `access(path, R_OK)`, as pi checks before reading.
fn check_readable(path: &Path) -> std::io::Result<()> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call; `access` only
    // reads it.
    let rc = unsafe { libc::access(c_path.as_ptr(), libc::R_OK) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The first [`SNIFF_BYTES`] bytes of the file.
async fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let file = std::fs::File::open(&path)?;
        let mut head = Vec::with_capacity(SNIFF_BYTES);
        file.take(SNIFF_BYTES as u64).read_to_end(&mut head)?;
        Ok(head)
    })
    .await
    .map_err(std::io::Error::other)?
}

/// The text branch of pi's read: offset/limit slicing, head truncation and notices.
/// `path` is the path as the model gave it (used in the bash hint).
pub fn read_text(
    text: &str,
    path: &str,
    offset: Option<f64>,
    limit: Option<f64>,
) -> Result<AgentToolResult, ToolError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let total = lines.len() as f64;
    // pi's arithmetic is on JavaScript numbers: `offset ? Math.max(0, offset - 1) : 0` keeps a
    // fraction (Array.slice cuts it, the notices print it) and `Math.min(start + limit, n)`
    // may be negative (Array.slice then counts from the end).
    let start = match offset {
        Some(o) if o != 0.0 && !o.is_nan() => (o - 1.0).max(0.0),
        _ => 0.0,
    };
    if start >= total {
        return Err(ToolError::new(format!(
            "Offset {} is beyond end of file ({} lines total)",
            offset.map(js_number).unwrap_or_default(),
            lines.len()
        )));
    }
    let display_start = start + 1.0;
    let first = js_slice_index(start, lines.len());
    let (selected, user_limited) = match limit {
        Some(l) => {
            let end = (start + l).min(total);
            let last = js_slice_index(end, lines.len());
            let slice = if last > first {
                &lines[first..last]
            } else {
                &[][..]
            };
            (slice.join("\n"), Some(end - start))
        }
        None => (lines[first..].join("\n"), None),
    };
    let truncation = truncate_head(&selected, TruncationOptions::default());
    let limit_text = format_size(DEFAULT_MAX_BYTES as u64);
    let truncation_details = || -> Result<Option<Value>, ToolError> {
        let value = serde_json::to_value(&truncation).map_err(|e| ToolError::new(e.to_string()))?;
        Ok(Some(json!({ "truncation": value })))
    };

    let display_start = js_number(display_start);
    if truncation.first_line_exceeds_limit {
        let size = format_size(lines[first].len() as u64);
        let text = format!(
            "[Line {display_start} is {size}, exceeds {limit_text} limit. Use bash: sed -n \
             '{display_start}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        );
        return Ok(AgentToolResult::text(text, truncation_details()?));
    }
    if truncation.truncated {
        let end = start + truncation.output_lines as f64;
        let (end_display, next, total) = (js_number(end), js_number(end + 1.0), lines.len());
        let notice = match truncation.truncated_by {
            Some(TruncatedBy::Lines) => format!(
                "[Showing lines {display_start}-{end_display} of {total}. Use offset={next} to \
                 continue.]"
            ),
            _ => format!(
                "[Showing lines {display_start}-{end_display} of {total} ({limit_text} limit). \
                 Use offset={next} to continue.]"
            ),
        };
        let text = format!("{}\n\n{notice}", truncation.content);
        return Ok(AgentToolResult::text(text, truncation_details()?));
    }
    if let Some(count) = user_limited
        && start + count < total
    {
        let remaining = js_number(total - (start + count));
        let next = js_number(start + count + 1.0);
        let text = format!(
            "{}\n\n[{remaining} more lines in file. Use offset={next} to continue.]",
            truncation.content
        );
        return Ok(AgentToolResult::text(text, None));
    }
    Ok(AgentToolResult::text(truncation.content, None))
}

/// `Array.prototype.slice`'s reading of an index into `len` items: the fraction cut, a
/// negative index counted from the end, the result clamped to `0..=len`.
fn js_slice_index(index: f64, len: usize) -> usize {
    let i = index.trunc();
    if i < 0.0 {
        (len as f64 + i).max(0.0) as usize
    } else {
        i.min(len as f64) as usize
    }
}

impl AgentTool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn label(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        "Read a file. Text files come back as they are, at most 2000 lines or 50KB per call \
         (continue with offset to read more); images (jpg, png, gif, webp, bmp) are attached \
         for viewing."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Read file contents (text and images)")
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        ["Prefer read over cat or sed to look at a file."]
            .map(String::from)
            .to_vec()
    }
    fn execute<'a>(
        &'a self,
        _tool_call_id: &'a str,
        args: Value,
        cancel: CancellationToken,
        _on_update: Option<ToolUpdateFn>,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        async move {
            check_aborted(&cancel)?;
            tokio::select! {
                result = self.run(args) => result,
                () = cancel.cancelled() => Err(aborted()),
            }
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(result: &AgentToolResult) -> &str {
        result.content[0].as_text().unwrap()
    }

    fn numbered(n: usize) -> String {
        (1..=n)
            .map(|i| format!("Line {i}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A 2×2 PNG, extended by `extra` zero bytes (a sparse tail: nothing is written).
    fn png_file(path: &Path, extra: u64) {
        let mut buf = std::io::Cursor::new(Vec::new());
        image::RgbImage::new(2, 2)
            .write_to(&mut buf, image::ImageFormat::Png)
            .unwrap();
        let png = buf.into_inner();
        std::fs::write(path, &png).unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.set_len(png.len() as u64 + extra).unwrap();
    }

    #[tokio::test]
    async fn an_image_file_past_the_byte_limit_is_omitted_unread() {
        let dir = tempfile::tempdir().unwrap();
        let tool = ReadTool::new(dir.path().to_owned(), ReadToolOptions::default());
        let small = dir.path().join("small.png");
        png_file(&small, 0);
        let r = tool.run(json!({"path": "small.png"})).await.unwrap();
        assert_eq!(text_of(&r), "Read image file [image/png]");
        assert!(matches!(r.content[1], UserContent::Image(_)));

        let huge = dir.path().join("huge.png");
        png_file(&huge, MAX_IMAGE_FILE_BYTES);
        let r = tool.run(json!({"path": "huge.png"})).await.unwrap();
        assert_eq!(
            text_of(&r),
            "Read image file [image/png]\n[Image omitted: the file is larger than 536870912 bytes, the limit of an image file.]"
        );
        assert_eq!(r.content.len(), 1);
    }

    #[tokio::test]
    async fn a_text_file_past_node_s_read_limit_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let tool = ReadTool::new(dir.path().to_owned(), ReadToolOptions::default());
        let path = dir.path().join("huge.txt");
        std::fs::write(&path, "text").unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(crate::platform::fs_error::MAX_READ_FILE_BYTES + 1)
            .unwrap();
        let e = tool.run(json!({"path": "huge.txt"})).await.unwrap_err();
        assert_eq!(e.0, "File size (2147483648) is greater than 2 GiB");
    }

    #[test]
    fn offset_beyond_end() {
        let err = read_text("Line 1\nLine 2\nLine 3", "f", Some(100.0), None).unwrap_err();
        assert_eq!(err.0, "Offset 100 is beyond end of file (3 lines total)");
        // A trailing newline makes an empty last line, as in pi.
        let err = read_text("a\n", "f", Some(3.0), None).unwrap_err();
        assert_eq!(err.0, "Offset 3 is beyond end of file (2 lines total)");
        assert_eq!(
            text_of(&read_text("a\n", "f", Some(2.0), None).unwrap()),
            ""
        );
    }

    #[test]
    fn limit_and_offset_notices() {
        let text = numbered(100);
        let r = read_text(&text, "f", None, Some(10.0)).unwrap();
        assert_eq!(
            text_of(&r),
            format!(
                "{}\n\n[90 more lines in file. Use offset=11 to continue.]",
                numbered(10)
            )
        );
        assert_eq!(r.details, None);
        let r = read_text(&text, "f", Some(41.0), Some(20.0)).unwrap();
        assert!(text_of(&r).starts_with("Line 41\n"));
        assert!(
            text_of(&r).ends_with("Line 60\n\n[40 more lines in file. Use offset=61 to continue.]")
        );
        let r = read_text(&text, "f", Some(51.0), None).unwrap();
        assert!(text_of(&r).starts_with("Line 51\n") && text_of(&r).ends_with("Line 100"));
        // Extreme numbers neither overflow nor panic.
        assert_eq!(
            text_of(&read_text("a\nb", "f", None, Some(1e300)).unwrap()),
            "a\nb"
        );
        assert_eq!(
            read_text("a", "f", Some(1e300), None).unwrap_err().0,
            "Offset 1e+300 is beyond end of file (1 lines total)"
        );
        // offset 0 means the start, as in pi.
        assert_eq!(
            text_of(&read_text("a\nb", "f", Some(0.0), None).unwrap()),
            "a\nb"
        );
    }

    #[test]
    fn line_limit_truncation() {
        let r = read_text(&numbered(2500), "f", None, None).unwrap();
        let out = text_of(&r);
        assert!(out.ends_with(
            "Line 2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"
        ));
        let t = &r.details.as_ref().unwrap()["truncation"];
        assert_eq!(t["truncated"], json!(true));
        assert_eq!(t["truncatedBy"], json!("lines"));
        assert_eq!(t["totalLines"], json!(2500));
        assert_eq!(t["outputLines"], json!(2000));
    }

    #[test]
    fn byte_limit_truncation() {
        let text = (1..=500)
            .map(|i| format!("Line {i}: {}", "x".repeat(200)))
            .collect::<Vec<_>>()
            .join("\n");
        let r = read_text(&text, "f", None, None).unwrap();
        // Lines cost 208-211 bytes with their separator; 243 of them fit in 51200 bytes.
        assert!(text_of(&r).ends_with(
            "\n\n[Showing lines 1-243 of 500 (50.0KB limit). Use offset=244 to continue.]"
        ));
        assert_eq!(
            r.details.as_ref().unwrap()["truncation"]["truncatedBy"],
            json!("bytes")
        );
    }

    #[test]
    fn first_line_over_the_byte_limit_points_at_bash() {
        let text = format!("short\n{}\nafter", "y".repeat(60_000));
        let r = read_text(&text, "big.txt", Some(2.0), None).unwrap();
        assert_eq!(
            text_of(&r),
            "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' big.txt | head -c 51200]"
        );
        assert_eq!(
            r.details.as_ref().unwrap()["truncation"]["firstLineExceedsLimit"],
            json!(true)
        );
    }
}
