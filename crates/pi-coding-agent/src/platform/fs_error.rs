//! Node-style texts for file-system errors.
//!
//! pi's tools let Node's `fs` errors through as the tool result, e.g.
//! `ENOENT: no such file or directory, access '/abs/path'`. This module spells an
//! [`std::io::Error`] the same way: `<CODE>: <libuv description>, <syscall>[ '<path>']`.

use std::io;
use std::path::Path;

/// The errno name Node reports (`ENOENT`, `EACCES`, …), `None` for errors without an OS code.
pub(crate) fn error_code(err: &io::Error) -> Option<&'static str> {
    let code = err.raw_os_error()?;
    Some(match code {
        libc::ENOENT => "ENOENT",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::EISDIR => "EISDIR",
        libc::ENOTDIR => "ENOTDIR",
        libc::EEXIST => "EEXIST",
        libc::EROFS => "EROFS",
        libc::ENOSPC => "ENOSPC",
        libc::ELOOP => "ELOOP",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::EMFILE => "EMFILE",
        libc::ENFILE => "ENFILE",
        libc::EBUSY => "EBUSY",
        libc::EIO => "EIO",
        libc::EINVAL => "EINVAL",
        libc::ETXTBSY => "ETXTBSY",
        libc::EFBIG => "EFBIG",
        libc::EDQUOT => "EDQUOT",
        _ => return None,
    })
}

/// libuv's description of an errno name (`ENOENT` → `no such file or directory`).
fn description(code: &str) -> &'static str {
    match code {
        "ENOENT" => "no such file or directory",
        "EACCES" => "permission denied",
        "EPERM" => "operation not permitted",
        "EISDIR" => "illegal operation on a directory",
        "ENOTDIR" => "not a directory",
        "EEXIST" => "file already exists",
        "EROFS" => "read-only file system",
        "ENOSPC" => "no space left on device",
        "ELOOP" => "too many symbolic links encountered",
        "ENAMETOOLONG" => "name too long",
        "EMFILE" => "too many open files",
        "ENFILE" => "file table overflow",
        "EBUSY" => "resource busy or locked",
        "EIO" => "i/o error",
        "EINVAL" => "invalid argument",
        "ETXTBSY" => "text file is busy",
        "EFBIG" => "file too large",
        "EDQUOT" => "disk quota exceeded",
        _ => "unknown error",
    }
}

/// Node's message for a failed `syscall` on `path`: `ENOENT: no such file or directory, open
/// '/x'`; without a path (Node's `read` on a descriptor): `EISDIR: illegal operation on a
/// directory, read`. Errors without an OS code fall back to their own text.
pub(crate) fn node_message(err: &io::Error, syscall: &str, path: Option<&Path>) -> String {
    match error_code(err) {
        Some(code) => match path {
            Some(p) => format!("{code}: {}, {syscall} '{}'", description(code), p.display()),
            None => format!("{code}: {}, {syscall}", description(code)),
        },
        None => err.to_string(),
    }
}

/// Node's message for a failed `fs.readFile(path)`: `EISDIR` comes from the `read` call (no
/// path), everything else from `open '<path>'`.
pub(crate) fn read_file_message(err: &io::Error, path: &Path) -> String {
    if let Some(too_large) = err.get_ref().and_then(|e| e.downcast_ref::<FileTooLarge>()) {
        return too_large.to_string();
    }
    if err.raw_os_error() == Some(libc::EISDIR) {
        node_message(err, "read", None)
    } else {
        node_message(err, "open", Some(path))
    }
}

/// Largest file Node's `fs.readFile` reads whole: 2^31 − 1 bytes (`kIoMaxLength`).
pub(crate) const MAX_READ_FILE_BYTES: u64 = 2_147_483_647;

/// Node's `ERR_FS_FILE_TOO_LARGE`: `File size (<bytes>) is greater than 2 GiB`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("File size ({size}) is greater than 2 GiB")]
pub(crate) struct FileTooLarge {
    /// The file's size in bytes.
    pub size: u64,
}

/// Node's `fs.readFile(path)`: the whole file, refused past [`MAX_READ_FILE_BYTES`] before
/// anything is read (an `InvalidData` error carrying [`FileTooLarge`], which
/// [`read_file_message`] spells as Node does). At most the limit is read even if the file
/// grows meanwhile.
///
/// # Errors
/// Opening or reading the file; [`FileTooLarge`].
pub(crate) fn read_file(path: &Path) -> io::Result<Vec<u8>> {
    read_file_within(path, MAX_READ_FILE_BYTES)
}

/// [`read_file`] with a limit of `limit` bytes.
///
/// # Errors
/// As [`read_file`].
pub(crate) fn read_file_within(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    let too_large = |size| io::Error::new(io::ErrorKind::InvalidData, FileTooLarge { size });
    if size > limit {
        return Err(too_large(size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read_file`] on a blocking thread.
///
/// # Errors
/// As [`read_file`].
pub(crate) async fn read_file_async(path: &Path) -> io::Result<Vec<u8>> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || read_file(&path))
        .await
        .map_err(io::Error::other)?
}

/// A failed [`write_file`], worded as Node's `fs.writeFile` rejects.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteFileError {
    /// Creating or truncating the file failed: `<CODE>: <text>, open '<path>'`.
    #[error("{}", node_message(source, "open", Some(path)))]
    Open {
        /// The file being written.
        path: std::path::PathBuf,
        /// Why it could not be opened.
        source: io::Error,
    },
    /// Writing the bytes failed: `<CODE>: <text>, write` (Node's write call has a
    /// descriptor, not a path).
    #[error("{}", node_message(source, "write", None))]
    Write {
        /// Why the write failed.
        source: io::Error,
    },
}

/// Node's `fs.writeFile(path, data)`: creates or truncates the file, then writes all of
/// `data`.
pub(crate) async fn write_file(path: &Path, data: &[u8]) -> Result<(), WriteFileError> {
    use tokio::io::AsyncWriteExt;
    let mut file = tokio::fs::File::create(path)
        .await
        .map_err(|source| WriteFileError::Open {
            path: path.to_path_buf(),
            source,
        })?;
    file.write_all(data)
        .await
        .map_err(|source| WriteFileError::Write { source })?;
    // tokio writes in the background: the result of the last write arrives with the flush.
    file.flush()
        .await
        .map_err(|source| WriteFileError::Write { source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_past_the_read_limit_is_refused_with_node_s_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_file_within(&path, 5).unwrap(), b"12345");
        let e = read_file_within(&path, 4).unwrap_err();
        assert_eq!(
            read_file_message(&e, &path),
            "File size (5) is greater than 2 GiB"
        );
        // The real limit, on a sparse file one byte past it: refused without reading.
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(MAX_READ_FILE_BYTES + 1).unwrap();
        let e = read_file(&path).unwrap_err();
        assert_eq!(
            read_file_message(&e, &path),
            "File size (2147483648) is greater than 2 GiB"
        );
        assert_eq!(
            read_file_message(&read_file(&dir.path().join("none")).unwrap_err(), &path),
            format!(
                "ENOENT: no such file or directory, open '{}'",
                path.display()
            )
        );
    }

    #[test]
    fn spells_errors_as_node_does() {
        let err = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(
            node_message(&err, "access", Some(Path::new("/a/b"))),
            "ENOENT: no such file or directory, access '/a/b'"
        );
        let err = io::Error::from_raw_os_error(libc::EISDIR);
        assert_eq!(
            node_message(&err, "read", None),
            "EISDIR: illegal operation on a directory, read"
        );
        assert_eq!(error_code(&io::Error::other("x")), None);
        assert_eq!(
            node_message(&io::Error::other("boom"), "open", None),
            "boom"
        );
    }
}
