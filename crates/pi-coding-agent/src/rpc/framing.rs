//! Strict JSONL framing of the RPC input.
//!
//! Mirrors pi-coding-agent 0.85.0 `modes/rpc/jsonl.js` (`attachJsonlLineReader`):
//! records are split on LF only — U+2028/U+2029 (and a lone CR inside a line) are data — one
//! trailing CR is stripped from each record, and an unterminated last record is still
//! delivered at end of input. Bytes that are not UTF-8 become U+FFFD (Node's `StringDecoder`).
//!
//! One difference: a record longer than [`MAX_RECORD_BYTES`] is read and dropped as it arrives
//! (memory stays bounded) and reported as [`RecordTooLong`]; pi's reader grows until V8's
//! string limit (about 512 MiB) and then crashes.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// Longest RPC record (a command line without its LF): 256 MiB, far above any command (a
/// prompt's images are base64 of a few MiB each) and half of what pi's reader can hold at all.
pub const MAX_RECORD_BYTES: usize = 256 * 1024 * 1024;

/// A record longer than the reader's limit; its bytes were consumed and dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("command line longer than {limit} bytes")]
pub struct RecordTooLong {
    /// The limit, in bytes.
    pub limit: usize,
}

/// Reads LF-framed records from an [`AsyncRead`].
pub struct LineReader<R> {
    inner: BufReader<R>,
    buf: Vec<u8>,
    limit: usize,
}

impl<R> std::fmt::Debug for LineReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineReader")
            .field("buffered", &self.buf.len())
            .field("limit", &self.limit)
            .finish()
    }
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader over `reader` with the [`MAX_RECORD_BYTES`] limit.
    pub fn new(reader: R) -> Self {
        Self::with_limit(reader, MAX_RECORD_BYTES)
    }

    /// A reader over `reader` whose records may hold at most `limit` bytes.
    pub fn with_limit(reader: R, limit: usize) -> Self {
        LineReader {
            inner: BufReader::new(reader),
            buf: Vec::new(),
            limit,
        }
    }

    /// The next record without its LF (and without one trailing CR); `None` at end of input.
    /// An empty line is a record (`""`); an unterminated non-empty tail is the last record.
    ///
    /// # Errors
    /// Read errors of the underlying reader; a record past the limit is an
    /// [`std::io::ErrorKind::InvalidData`] error carrying [`RecordTooLong`] (reading may go on
    /// after it; [`LineReader::next_record`] reports it without an error).
    pub async fn next_line(&mut self) -> std::io::Result<Option<String>> {
        match self.next_record().await? {
            Some(Ok(line)) => Ok(Some(line)),
            Some(Err(too_long)) => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                too_long,
            )),
            None => Ok(None),
        }
    }

    /// [`LineReader::next_line`], with a record past the limit as `Some(Err(RecordTooLong))`;
    /// reading goes on after it.
    ///
    /// # Errors
    /// Read errors of the underlying reader.
    pub async fn next_record(&mut self) -> std::io::Result<Option<Result<String, RecordTooLong>>> {
        self.buf.clear();
        let mut seen = false;
        let mut over = false;
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                break;
            }
            seen = true;
            let (take, done) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            // Room for the record plus its CR and LF.
            if !over && self.buf.len().saturating_add(take) > self.limit.saturating_add(2) {
                over = true;
                self.buf = Vec::new();
            }
            if !over {
                self.buf.extend_from_slice(&chunk[..take]);
            }
            self.inner.consume(take);
            if done {
                break;
            }
        }
        if !seen {
            return Ok(None);
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        if over || self.buf.len() > self.limit {
            self.buf = Vec::new();
            return Ok(Some(Err(RecordTooLong { limit: self.limit })));
        }
        Ok(Some(Ok(String::from_utf8_lossy(&self.buf).into_owned())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8]) -> Vec<String> {
        let mut r = LineReader::new(input);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().await.unwrap() {
            out.push(l);
        }
        out
    }

    /// A record of exactly the limit is delivered (with or without CR); one byte more is
    /// reported and dropped, whatever the read sizes, and the next record still arrives.
    #[tokio::test]
    async fn records_past_the_limit_are_reported_and_skipped() {
        let limit = 10;
        let at = "a".repeat(limit);
        let past = "b".repeat(limit + 1);
        let input = format!(
            "{at}\n{at}\r\n{past}\n{past}\r\n{}\nok\n{past}",
            "c".repeat(100_000)
        );
        for capacity in [1, 3, 8192] {
            let reader = BufReader::with_capacity(capacity, input.as_bytes());
            let mut r = LineReader::with_limit(reader, limit);
            let mut got = Vec::new();
            while let Some(l) = r.next_record().await.unwrap() {
                got.push(l);
            }
            let too_long = || Err(RecordTooLong { limit });
            assert_eq!(
                got,
                [
                    Ok(at.clone()),
                    Ok(at.clone()),
                    too_long(),
                    too_long(),
                    too_long(),
                    Ok("ok".to_owned()),
                    too_long()
                ],
                "capacity {capacity}"
            );
            assert!(
                r.buf.capacity() <= 4 * limit + capacity,
                "capacity {capacity}"
            );
        }
        assert_eq!(
            RecordTooLong {
                limit: MAX_RECORD_BYTES
            }
            .to_string(),
            "command line longer than 268435456 bytes"
        );
    }

    #[tokio::test]
    async fn splits_on_lf_only_and_strips_one_trailing_cr() {
        assert_eq!(
            lines("a\r\nb\u{2028}c\u{2029}d\n\ne\rf\r\r\n".as_bytes()).await,
            ["a", "b\u{2028}c\u{2029}d", "", "e\rf\r"]
        );
    }

    #[tokio::test]
    async fn unterminated_last_line_is_delivered_at_eof() {
        assert_eq!(lines(b"x\ny").await, ["x", "y"]);
        assert_eq!(lines(b"x\ny\r").await, ["x", "y"]);
        assert_eq!(lines(b"").await, Vec::<String>::new());
    }

    #[tokio::test]
    async fn invalid_utf8_becomes_replacement_characters() {
        assert_eq!(lines(b"a\xffb\n").await, ["a\u{fffd}b"]);
    }
}
