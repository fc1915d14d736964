//! The initial prompt: piped stdin, `@file` arguments and the first message.
//!
//! Mirrors pi-coding-agent 0.85.0 `main.js` (`readPipedStdin`), `cli/file-processor.js`
//! (`processFileArguments`) and `cli/initial-message.js` (`buildInitialMessage`).

use std::io::Read;
use std::path::{Path, PathBuf};

use pi_ai::ImageContent;

use crate::cli::args::trim_js;
use crate::tools::image::{
    MAX_IMAGE_FILE_BYTES, ProcessedImage, SNIFF_BYTES, detect_image_mime_type, oversized_image,
    process_image, read_image_file,
};
use crate::tools::path_args::resolve_read_path;

/// Reads piped stdin to its end (invalid UTF-8 becomes U+FFFD) and trims it (JavaScript
/// `trim`); `None` when nothing but white space arrived. Callers skip this when stdin is a
/// terminal or in rpc mode (stdin carries the commands there).
pub(crate) fn read_piped_stdin(mut input: impl Read) -> std::io::Result<Option<String>> {
    let mut bytes = Vec::new();
    input.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let trimmed = trim_js(&text);
    Ok((!trimmed.is_empty()).then(|| trimmed.to_owned()))
}

/// What the `@file` arguments contribute to the first prompt.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FileInput {
    /// `<file name="ABS">\n{content}\n</file>\n` per text file; `<file name="ABS">{hints}</file>\n`
    /// per image (hints joined by `\n`, often empty), in argument order.
    pub text: String,
    /// The attached images, in argument order.
    pub images: Vec<ImageContent>,
}

/// An `@file` argument that cannot be used; the text follows `Error: ` on stderr.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileArgError {
    /// Nothing exists at the resolved path.
    #[error("File not found: {}", .0.display())]
    NotFound(PathBuf),
    /// The file exists but reading it failed.
    #[error("Could not read file {}: {}", path.display(), io_reason(source))]
    Unreadable {
        /// The resolved path.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
}

/// Reads the `@file` arguments (without their `@`) against `cwd`.
///
/// Paths resolve as the read tool's (`~`, Unicode spaces, one more leading `@`, macOS
/// variants). Empty files are skipped; images (by magic bytes) are attached through the read
/// tool's image processing (`auto_resize` = setting `images.autoResize`), an image that cannot
/// be inlined contributes its bracketed explanation instead; text files lose a UTF-8 BOM.
///
/// Errors: [`FileArgError::NotFound`] when nothing exists there,
/// [`FileArgError::Unreadable`] when it cannot be read.
pub(crate) fn process_file_args(
    file_args: &[String],
    cwd: &Path,
    auto_resize: bool,
) -> Result<FileInput, FileArgError> {
    let mut out = FileInput::default();
    for arg in file_args {
        let path = resolve_read_path(arg, cwd);
        let shown = path.display().to_string();
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(_) => return Err(FileArgError::NotFound(path)),
        };
        if meta.len() == 0 {
            continue;
        }
        let read_error = |source: std::io::Error| FileArgError::Unreadable {
            path: path.clone(),
            source,
        };
        // pi sniffs the type from the file's first bytes, then reads it.
        let mut head = Vec::with_capacity(SNIFF_BYTES);
        std::fs::File::open(&path)
            .and_then(|f| f.take(SNIFF_BYTES as u64).read_to_end(&mut head))
            .map_err(read_error)?;
        match detect_image_mime_type(&head) {
            Some(mime) => match read_image_file(&path, MAX_IMAGE_FILE_BYTES)
                .map_err(read_error)?
                .map_or_else(
                    || oversized_image(MAX_IMAGE_FILE_BYTES),
                    |bytes| process_image(&bytes, mime, auto_resize),
                ) {
                ProcessedImage::Omitted { message } => {
                    out.text
                        .push_str(&format!("<file name=\"{shown}\">{message}</file>\n"));
                }
                ProcessedImage::Ok {
                    data,
                    mime_type,
                    hints,
                } => {
                    out.images.push(ImageContent { data, mime_type });
                    out.text.push_str(&format!(
                        "<file name=\"{shown}\">{}</file>\n",
                        hints.join("\n")
                    ));
                }
            },
            None => {
                let bytes = crate::platform::fs_error::read_file(&path).map_err(read_error)?;
                let text = String::from_utf8_lossy(&bytes);
                let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
                out.text
                    .push_str(&format!("<file name=\"{shown}\">\n{text}\n</file>\n"));
            }
        }
    }
    Ok(out)
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::IsADirectory => "EISDIR: illegal operation on a directory, read".into(),
        _ => e.to_string(),
    }
}

/// The first prompt and the prompts sent after it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct InitialMessage {
    /// stdin text + file text + first message, concatenated without separator; `None` when
    /// all three are absent.
    pub text: Option<String>,
    /// Images from `@file` arguments (attached to the first prompt).
    pub images: Vec<ImageContent>,
    /// The other messages, each sent as its own prompt after the previous run settled.
    pub rest: Vec<String>,
}

/// pi's `buildInitialMessage`.
pub(crate) fn build_initial_message(
    stdin: Option<String>,
    files: FileInput,
    messages: &[String],
) -> InitialMessage {
    let mut parts = Vec::new();
    parts.extend(stdin);
    if !files.text.is_empty() {
        parts.push(files.text);
    }
    let mut rest = messages.iter().cloned();
    parts.extend(rest.next());
    InitialMessage {
        text: (!parts.is_empty()).then(|| parts.concat()),
        images: files.images,
        rest: rest.collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdin_is_trimmed_and_blank_is_none() {
        assert_eq!(
            read_piped_stdin(&b"  hi there \n\n"[..]).unwrap(),
            Some("hi there".into())
        );
        assert_eq!(read_piped_stdin(&b" \n\t "[..]).unwrap(), None);
        assert_eq!(
            read_piped_stdin(&b"a\xffb"[..]).unwrap(),
            Some("a\u{fffd}b".into())
        );
    }

    #[test]
    fn files_are_wrapped_skipped_or_missing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "\u{feff}alpha").unwrap();
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        let png = {
            let mut buf = std::io::Cursor::new(Vec::new());
            image::RgbImage::new(2, 2)
                .write_to(&mut buf, image::ImageFormat::Png)
                .unwrap();
            buf.into_inner()
        };
        std::fs::write(dir.path().join("p.png"), &png).unwrap();
        let args: Vec<String> = ["a.txt", "empty.txt", "p.png"].map(String::from).to_vec();
        let got = process_file_args(&args, dir.path(), true).unwrap();
        let a = dir.path().join("a.txt").display().to_string();
        let p = dir.path().join("p.png").display().to_string();
        assert_eq!(
            got.text,
            format!("<file name=\"{a}\">\nalpha\n</file>\n<file name=\"{p}\"></file>\n")
        );
        assert_eq!(got.images.len(), 1);
        assert_eq!(got.images[0].mime_type, "image/png");
        let missing = process_file_args(&["nope.md".into()], dir.path(), true).unwrap_err();
        assert_eq!(
            missing.to_string(),
            format!("File not found: {}", dir.path().join("nope.md").display())
        );
    }

    #[test]
    fn an_image_file_past_the_byte_limit_is_omitted_unread() {
        let dir = tempfile::tempdir().unwrap();
        let mut buf = std::io::Cursor::new(Vec::new());
        image::RgbImage::new(2, 2)
            .write_to(&mut buf, image::ImageFormat::Png)
            .unwrap();
        let path = dir.path().join("huge.png");
        std::fs::write(&path, buf.into_inner()).unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(MAX_IMAGE_FILE_BYTES + 1).unwrap();
        let got = process_file_args(&["huge.png".into()], dir.path(), false).unwrap();
        assert_eq!(
            got.text,
            format!(
                "<file name=\"{}\">[Image omitted: the file is larger than 536870912 bytes, the limit of an image file.]</file>\n",
                path.display()
            )
        );
        assert!(got.images.is_empty());
    }

    #[test]
    fn initial_message_concatenates_without_separator() {
        let files = FileInput {
            text: "<file name=\"/x\">\nX\n</file>\n".into(),
            images: vec![],
        };
        let m = build_initial_message(Some("IN".into()), files, &["first".into(), "second".into()]);
        assert_eq!(
            m.text.as_deref(),
            Some("IN<file name=\"/x\">\nX\n</file>\nfirst")
        );
        assert_eq!(m.rest, ["second"]);
        let none = build_initial_message(None, FileInput::default(), &[]);
        assert_eq!(none, InitialMessage::default());
    }

    #[test]
    fn a_directory_argument_cannot_be_read_with_node_s_reason() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let err = process_file_args(&["sub".into()], dir.path(), true).unwrap_err();
        assert!(
            matches!(&err, FileArgError::Unreadable { path, .. } if *path == dir.path().join("sub"))
        );
        assert_eq!(
            err.to_string(),
            format!(
                "Could not read file {}: EISDIR: illegal operation on a directory, read",
                dir.path().join("sub").display()
            )
        );
    }
}
