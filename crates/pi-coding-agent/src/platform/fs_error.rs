//! Node-style texts for file-system errors.
//!
//! pi's tools let Node's `fs` errors through as the tool result, e.g.
//! `ENOENT: no such file or directory, access '/abs/path'`. This module spells an
//! [`std::io::Error`] the same way: `<CODE>: <libuv description>, <syscall>[ '<path>']`.

use std::io;
use std::path::Path;

/// The errno name Node reports (`ENOENT`, `EACCES`, …), `None` for errors without an OS code.
pub fn error_code(err: &io::Error) -> Option<&'static str> {
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
pub fn node_message(err: &io::Error, syscall: &str, path: Option<&Path>) -> String {
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
pub fn read_file_message(err: &io::Error, path: &Path) -> String {
    if err.raw_os_error() == Some(libc::EISDIR) {
        node_message(err, "read", None)
    } else {
        node_message(err, "open", Some(path))
    }
}

/// Node's `fs.writeFile(path, data)`: creates or truncates the file, then writes all of
/// `data`. A failed open is `<CODE>: <text>, open '<path>'`, a failed write `<CODE>: <text>,
/// write` (Node's write call has a descriptor, not a path).
pub async fn write_file(path: &Path, data: &[u8]) -> Result<(), String> {
    use tokio::io::AsyncWriteExt;
    let mut file = tokio::fs::File::create(path)
        .await
        .map_err(|e| node_message(&e, "open", Some(path)))?;
    file.write_all(data)
        .await
        .map_err(|e| node_message(&e, "write", None))?;
    // tokio writes in the background: the result of the last write arrives with the flush.
    file.flush()
        .await
        .map_err(|e| node_message(&e, "write", None))
}

#[cfg(test)]
mod tests {
    use super::*;

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
