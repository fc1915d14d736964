//! Atomic replacement of a small configuration file (`settings.json`, `auth.json`, `trust.json`).
//!
//! pi 0.85.0 rewrites these files in place (`writeFileSync` after truncation), so a process
//! killed during the write leaves a truncated file, and a reader that runs at the same time
//! (another `pi` reading without the lock) can see half a file. pi-rs writes the new text to a
//! temporary file beside the target, flushes it to disk and renames it over the target: every
//! reader sees either the old or the new file, and a crash leaves the old one (plus, at worst,
//! a `.<name>.<pid>.<n>.tmp` file that nothing reads). This is a deliberate difference from the
//! reference; the bytes written are the same.
//!
//! What is kept of the old file: its permission bits (a `0640` `auth.json` stays `0640`) and a
//! symbolic link at the path (the link's final target is replaced, the link stays). What is
//! not: hard links to the old file (they keep the old contents) and its owner, when the writer
//! is not the owner.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Distinguishes the temporary files of one process.
static NEXT_TEMP: AtomicU32 = AtomicU32::new(0);

/// Symbolic links followed at most before giving up (as the kernel's `ELOOP` limit).
const MAX_LINKS: usize = 40;

/// Replaces the contents of `path` with `bytes`, atomically.
///
/// `new_mode` is the permission mode of a file that does not exist yet (subject to the umask,
/// as `open(2)`'s mode); an existing file keeps its own. The parent directory must exist.
///
/// Errors: the I/O error of resolving a link, creating, writing or syncing the temporary file,
/// or renaming it; the target is untouched then and the temporary file removed.
pub(crate) fn replace_file(path: &Path, bytes: &[u8], new_mode: u32) -> io::Result<()> {
    let target = resolve_links(path)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let existing_mode = fs::metadata(&target).ok().map(|m| m.permissions());
    let (temp_path, mut file) = create_temp(&dir, &target, new_mode)?;
    let written = (|| {
        if let Some(perm) = existing_mode {
            file.set_permissions(perm)?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&temp_path, &target)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&temp_path);
        return Err(e);
    }
    sync_dir(&dir);
    Ok(())
}

/// The path a write to `path` lands on: `path` itself, or the final target of a chain of
/// symbolic links (relative links resolve against their own directory). A dangling link
/// resolves to the missing file, which the write then creates.
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) if link.is_relative() => parent.join(link),
                    _ => link,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::other(format!(
        "too many levels of symbolic links: {}",
        path.display()
    )))
}

/// Creates `<dir>/.<name>.<pid>.<n>.tmp` exclusively; a name in use is skipped.
fn create_temp(dir: &Path, target: &Path, mode: u32) -> io::Result<(PathBuf, File)> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pid = std::process::id();
    loop {
        let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{name}.{pid}.{n}.tmp"));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(mode);
        }
        #[cfg(not(unix))]
        let _ = mode;
        match options.open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Makes the rename itself durable (best effort: some file systems refuse to sync a directory).
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests;
