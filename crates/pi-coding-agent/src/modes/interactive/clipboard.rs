//! Ctrl+V: an image from the system clipboard, attached by path, else the clipboard's text,
//! as pi 0.85.0 does (`utils/clipboard-image.js`, `handleClipboardPaste`).
//!
//! On Linux the image comes from `wl-paste` (Wayland or WSL, then `xclip`) or `xclip` (X11):
//! the preferred type among the clipboard's targets (PNG, JPEG, WebP, GIF, then any image);
//! other formats (a BMP from WSLg) are converted to PNG. Under WSL, where a Windows screenshot
//! never reaches the Linux clipboard, Windows' clipboard is asked through `powershell.exe`
//! (saving its image as PNG to a file named with `wslpath -w`), as pi does. On macOS the image
//! comes from `osascript` (the clipboard as PNG) and the text from `pbpaste`, where pi uses its
//! native clipboard addon. The bytes are written to `<tmp>/pi-clipboard-<uuid>.<ext>` and that
//! path goes into the editor at the cursor, so the prompt names the file. Without an image the
//! clipboard's text is inserted (`wl-paste` on Wayland; pi asks its native addon elsewhere,
//! pi-rs asks `xclip`). Termux and other systems have no clipboard image here; failures are
//! silent, as in pi.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// pi's timeout for listing the clipboard's types.
const LIST_TIMEOUT: Duration = Duration::from_millis(1000);
/// pi's timeout for reading the clipboard.
const READ_TIMEOUT: Duration = Duration::from_millis(3000);
/// pi's timeout for PowerShell reading Windows' clipboard under WSL.
const POWERSHELL_TIMEOUT: Duration = Duration::from_millis(5000);
/// pi's limit on what a clipboard tool may print, in bytes.
const MAX_BYTES: u64 = 50 * 1024 * 1024;

/// The image types pi attaches as they are, in its order of preference.
const SUPPORTED: [&str; 4] = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/// What the clipboard held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pasted {
    /// An image, written to this file.
    Image(PathBuf),
    /// Text.
    Text(String),
}

/// The parts of the environment that choose the clipboard tools.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ClipboardEnv {
    /// `WAYLAND_DISPLAY` set or `XDG_SESSION_TYPE=wayland`.
    pub wayland: bool,
    /// `WAYLAND_DISPLAY` set (pi reads text with `wl-paste` only then).
    pub wayland_display: bool,
    /// Windows Subsystem for Linux (`WSL_DISTRO_NAME`, `WSLENV`, or `/proc/version`).
    pub wsl: bool,
    /// Termux: pi reads no clipboard image there.
    pub termux: bool,
    /// Linux.
    pub linux: bool,
    /// macOS (`osascript` and `pbpaste`).
    pub macos: bool,
}

impl ClipboardEnv {
    /// From this process's environment.
    pub(crate) fn detect() -> Self {
        let var = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
        let wayland_display = var("WAYLAND_DISPLAY");
        let wsl = var("WSL_DISTRO_NAME")
            || var("WSLENV")
            || std::fs::read_to_string("/proc/version").is_ok_and(|v| {
                let v = v.to_lowercase();
                v.contains("microsoft") || v.contains("wsl")
            });
        Self {
            wayland: wayland_display
                || std::env::var("XDG_SESSION_TYPE").as_deref() == Ok("wayland"),
            wayland_display,
            wsl,
            termux: var("TERMUX_VERSION"),
            linux: cfg!(target_os = "linux"),
            macos: cfg!(target_os = "macos"),
        }
    }
}

/// Reads the clipboard: an image (written under `tmp`), else text; `None` when it holds
/// neither or no tool answers.
pub(crate) fn paste(env: ClipboardEnv, tmp: &Path) -> Option<Pasted> {
    if let Some((bytes, mime)) = read_image(env, tmp) {
        let (bytes, ext) = match extension(&mime) {
            Some(ext) => (bytes, ext),
            None => (to_png(&bytes)?, "png"),
        };
        let path = tmp.join(format!("pi-clipboard-{}.{ext}", uuid::Uuid::new_v4()));
        std::fs::write(&path, bytes).ok()?;
        return Some(Pasted::Image(path));
    }
    read_text(env).filter(|t| !t.is_empty()).map(Pasted::Text)
}

/// The file extension pi gives a supported image type.
fn extension(mime: &str) -> Option<&'static str> {
    match base(mime).as_str() {
        "image/png" => Some("png"),
        "image/jpeg" => Some("jpg"),
        "image/webp" => Some("webp"),
        "image/gif" => Some("gif"),
        _ => None,
    }
}

/// `image/png; charset=…` → `image/png`, lower case.
fn base(mime: &str) -> String {
    mime.split(';').next().unwrap_or(mime).trim().to_lowercase()
}

/// The type to ask for among the clipboard's `types` (pi's preference order, then any
/// image type).
fn preferred(types: &[String]) -> Option<String> {
    let listed: Vec<(&String, String)> = types
        .iter()
        .map(|t| (t, base(t)))
        .filter(|(t, _)| !t.trim().is_empty())
        .collect();
    SUPPORTED
        .iter()
        .find_map(|want| listed.iter().find(|(_, b)| b == want))
        .or_else(|| listed.iter().find(|(_, b)| b.starts_with("image/")))
        .map(|(t, _)| t.trim().to_owned())
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

fn read_image(env: ClipboardEnv, tmp: &Path) -> Option<(Vec<u8>, String)> {
    if env.termux {
        return None;
    }
    if env.macos {
        return via_osascript(tmp);
    }
    if !env.linux {
        return None;
    }
    let mut image = None;
    if env.wayland || env.wsl {
        image = via_wl_paste().or_else(via_xclip);
    }
    if image.is_none() && env.wsl {
        image = via_powershell(tmp);
    }
    if image.is_none() && !env.wayland {
        image = via_xclip();
    }
    image
}

/// A file under `tmp` for a tool to write an image into, removed when dropped.
struct TempImage(PathBuf);

impl TempImage {
    fn new(tmp: &Path, prefix: &str) -> Self {
        Self(tmp.join(format!("{prefix}-{}.png", uuid::Uuid::new_v4())))
    }

    /// The bytes the tool wrote (`None` when it wrote nothing).
    fn bytes(&self) -> Option<Vec<u8>> {
        let len = std::fs::metadata(&self.0).ok()?.len();
        if len == 0 || len > MAX_BYTES {
            return None;
        }
        std::fs::read(&self.0).ok()
    }
}

impl Drop for TempImage {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// WSL: Windows' clipboard image, saved as PNG by PowerShell into a file both sides can name.
fn via_powershell(tmp: &Path) -> Option<(Vec<u8>, String)> {
    let file = TempImage::new(tmp, "pi-wsl-clip");
    let unix = file.0.to_str()?;
    let windows = String::from_utf8(run("wslpath", &["-w", unix], LIST_TIMEOUT)?).ok()?;
    let windows = windows.trim();
    if windows.is_empty() {
        return None;
    }
    // A PowerShell single-quoted string: a quote is doubled.
    let quoted = windows.replace('\'', "''");
    let script = format!(
        "Add-Type -AssemblyName System.Windows.Forms; Add-Type -AssemblyName System.Drawing; \
         $path = '{quoted}'; $img = [System.Windows.Forms.Clipboard]::GetImage(); \
         if ($img) {{ $img.Save($path, [System.Drawing.Imaging.ImageFormat]::Png); \
         Write-Output 'ok' }} else {{ Write-Output 'empty' }}"
    );
    let out = run(
        "powershell.exe",
        &["-NoProfile", "-Command", &script],
        POWERSHELL_TIMEOUT,
    )?;
    if String::from_utf8_lossy(&out).trim() != "ok" {
        return None;
    }
    Some((file.bytes()?, "image/png".to_owned()))
}

/// macOS: the clipboard as PNG (`«class PNGf»`), written to a file by AppleScript; fails
/// (and gives nothing) when the clipboard holds no image.
fn via_osascript(tmp: &Path) -> Option<(Vec<u8>, String)> {
    let file = TempImage::new(tmp, "pi-mac-clip");
    let path = file.0.to_str()?;
    // An AppleScript string literal: backslashes and quotes escaped.
    let quoted = path.replace('\\', "\\\\").replace('"', "\\\"");
    let script = format!(
        "set png to (the clipboard as «class PNGf»)\n\
         set f to open for access (POSIX file \"{quoted}\") with write permission\n\
         set eof f to 0\nwrite png to f\nclose access f"
    );
    run("osascript", &["-e", &script], READ_TIMEOUT)?;
    Some((file.bytes()?, "image/png".to_owned()))
}

fn via_wl_paste() -> Option<(Vec<u8>, String)> {
    let types = lines(&run("wl-paste", &["--list-types"], LIST_TIMEOUT)?);
    let mime = preferred(&types)?;
    let bytes = run("wl-paste", &["--type", &mime, "--no-newline"], READ_TIMEOUT)?;
    (!bytes.is_empty()).then(|| (bytes, base(&mime)))
}

fn via_xclip() -> Option<(Vec<u8>, String)> {
    let targets = run(
        "xclip",
        &["-selection", "clipboard", "-t", "TARGETS", "-o"],
        LIST_TIMEOUT,
    )
    .map(|b| lines(&b))
    .unwrap_or_default();
    let mut tries: Vec<String> = preferred(&targets).into_iter().collect();
    tries.extend(SUPPORTED.iter().map(|s| (*s).to_owned()));
    tries.into_iter().find_map(|mime| {
        let bytes = run(
            "xclip",
            &["-selection", "clipboard", "-t", &mime, "-o"],
            READ_TIMEOUT,
        )?;
        (!bytes.is_empty()).then(|| (bytes, base(&mime)))
    })
}

fn read_text(env: ClipboardEnv) -> Option<String> {
    if env.macos {
        let bytes = run("pbpaste", &[], READ_TIMEOUT)?;
        return Some(String::from_utf8_lossy(&bytes).into_owned());
    }
    if !env.linux {
        return None;
    }
    let bytes = if env.wayland && env.wayland_display {
        run(
            "wl-paste",
            &["--no-newline", "--type", "text"],
            READ_TIMEOUT,
        )
    } else {
        None
    }
    .or_else(|| run("xclip", &["-selection", "clipboard", "-o"], READ_TIMEOUT))?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// An image in another format as PNG (`None` when it cannot be decoded).
pub(super) fn to_png(bytes: &[u8]) -> Option<Vec<u8>> {
    let img = image::load_from_memory(bytes).ok()?;
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).ok()?;
    Some(out.into_inner())
}

/// Runs `program args` with no input and returns its output when it exits 0 within
/// `timeout` (killed otherwise) and prints at most [`MAX_BYTES`].
fn run(program: &str, args: &[&str], timeout: Duration) -> Option<Vec<u8>> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let r = (&mut stdout).take(MAX_BYTES + 1).read_to_end(&mut buf);
        r.ok().map(|_| buf)
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    // Killed on time: its output is not waited for (a descendant may hold the pipe).
    let status = status?;
    let out = reader.join().ok().flatten()?;
    let too_big = u64::try_from(out.len()).map_or(true, |n| n > MAX_BYTES);
    (status.success() && !too_big).then_some(out)
}

impl super::App {
    /// Ctrl+V (`app.clipboard.pasteImage`): the clipboard's image path or text at the
    /// editor's cursor.
    pub(super) fn paste_clipboard(&mut self) {
        match paste(ClipboardEnv::detect(), &std::env::temp_dir()) {
            // As a pasted path: a space goes before it after a word (pi inserts it bare,
            // so `look at` + Ctrl+V gives `look at/tmp/…`).
            Some(Pasted::Image(path)) => {
                let path = path.display().to_string();
                use pi_tui::Component as _;
                self.editor.handle_input(&pi_tui::InputEvent::Paste(path));
            }
            Some(Pasted::Text(text)) => self.editor.insert_text_at_cursor(&text),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn types(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn pi_order_of_preference() {
        assert_eq!(
            preferred(&types(&["TARGETS", "image/gif", "image/png"])).as_deref(),
            Some("image/png")
        );
        assert_eq!(
            preferred(&types(&["text/plain", "image/JPEG; q=1"])).as_deref(),
            Some("image/JPEG; q=1")
        );
        assert_eq!(
            preferred(&types(&["image/bmp", "text/plain"])).as_deref(),
            Some("image/bmp")
        );
        assert_eq!(preferred(&types(&["text/plain", "UTF8_STRING"])), None);
        assert_eq!(extension("image/JPEG; q=1"), Some("jpg"));
        assert_eq!(extension("image/bmp"), None);
    }

    #[test]
    fn other_formats_become_png_and_garbage_nothing() {
        let mut bmp = std::io::Cursor::new(Vec::new());
        image::RgbImage::new(2, 2)
            .write_to(&mut bmp, image::ImageFormat::Bmp)
            .unwrap();
        let png = to_png(bmp.get_ref()).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert_eq!(to_png(b"not an image"), None);
    }

    #[test]
    fn a_tool_that_fails_hangs_or_is_missing_gives_nothing() {
        assert_eq!(
            run("sh", &["-c", "printf hi"], READ_TIMEOUT),
            Some(b"hi".to_vec())
        );
        assert_eq!(run("sh", &["-c", "printf hi; exit 1"], READ_TIMEOUT), None);
        let t = Instant::now();
        assert_eq!(
            run("sh", &["-c", "exec sleep 5"], Duration::from_millis(100)),
            None
        );
        assert!(t.elapsed() < Duration::from_secs(3));
        assert_eq!(run("pi-no-such-clipboard-tool", &[], READ_TIMEOUT), None);
        assert_eq!(
            paste(ClipboardEnv::default(), Path::new("/nonexistent")),
            None
        );
    }
}
