//! LF-delimited JSON records with a size cap (see `docs/extension-protocol.md`).
//!
//! Only LF ends a record: U+2028/U+2029 are ordinary characters inside JSON strings, which
//! a line splitter that follows Unicode line breaks would wrongly cut at.

use std::io::{BufRead, Write};

/// The largest record either side may send (64 MiB).
pub const MAX_RECORD_BYTES: usize = 64 * 1024 * 1024;

/// Why reading a record stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A record longer than the cap.
    #[error("record exceeds {MAX_RECORD_BYTES} bytes")]
    TooLong,
    /// The pipe failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Reads the next record (without its LF; a final record without LF counts). `Ok(None)` at
/// the end of input. A CR before the LF is kept: JSON parsing ignores it as whitespace.
pub fn read_record(reader: &mut impl BufRead, limit: usize) -> Result<Option<Vec<u8>>, ReadError> {
    let mut record = Vec::new();
    loop {
        let chunk = match reader.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if chunk.is_empty() {
            return Ok((!record.is_empty()).then_some(record));
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if record.len().saturating_add(take) > limit {
            return Err(ReadError::TooLong);
        }
        record.extend_from_slice(&chunk[..take]);
        let consumed = if done { take.saturating_add(1) } else { take };
        reader.consume(consumed);
        if done {
            return Ok(Some(record));
        }
    }
}

/// Writes one record and its LF, then flushes.
///
/// One `write` for both: on an unbuffered pipe two writes wake the reader twice (a Node host
/// reads the body, then again for the LF), which doubled the cost of an event round trip.
pub fn write_record(writer: &mut impl Write, record: &[u8]) -> std::io::Result<()> {
    let mut line = Vec::with_capacity(record.len().saturating_add(1));
    line.extend_from_slice(record);
    line.push(b'\n');
    writer.write_all(&line)?;
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records each `write` call separately.
    #[derive(Default)]
    struct Writes(Vec<Vec<u8>>);

    impl Write for Writes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_record_and_its_lf_go_out_in_one_write() {
        let mut w = Writes::default();
        write_record(&mut w, b"{\"id\":1}").unwrap();
        write_record(&mut w, b"").unwrap();
        assert_eq!(w.0, [b"{\"id\":1}\n".to_vec(), b"\n".to_vec()]);
    }

    #[test]
    fn splits_on_lf_only_and_keeps_unicode_separators() {
        let text = "{\"a\":\"x\u{2028}y\"}\n{\"b\":1}\r\nlast";
        let mut r = std::io::BufReader::with_capacity(4, text.as_bytes());
        let first = read_record(&mut r, 1024).unwrap().unwrap();
        assert_eq!(String::from_utf8(first).unwrap(), "{\"a\":\"x\u{2028}y\"}");
        let second = read_record(&mut r, 1024).unwrap().unwrap();
        assert_eq!(second, b"{\"b\":1}\r");
        assert_eq!(read_record(&mut r, 1024).unwrap().unwrap(), b"last");
        assert!(read_record(&mut r, 1024).unwrap().is_none());
    }

    #[test]
    fn a_record_over_the_cap_is_an_error() {
        let text = "0123456789\n";
        let mut r = std::io::BufReader::with_capacity(3, text.as_bytes());
        assert!(matches!(read_record(&mut r, 5), Err(ReadError::TooLong)));
        let mut ok = std::io::BufReader::new("01234\n".as_bytes());
        assert_eq!(read_record(&mut ok, 5).unwrap().unwrap(), b"01234");
    }
}
