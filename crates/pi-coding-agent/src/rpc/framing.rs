//! Strict JSONL framing of the RPC input.
//!
//! Mirrors pi-coding-agent 0.85.0 `modes/rpc/jsonl.js` (`attachJsonlLineReader`):
//! records are split on LF only — U+2028/U+2029 (and a lone CR inside a line) are data — one
//! trailing CR is stripped from each record, and an unterminated last record is still
//! delivered at end of input. Bytes that are not UTF-8 become U+FFFD (Node's `StringDecoder`).

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// Reads LF-framed records from an [`AsyncRead`].
pub struct LineReader<R> {
    inner: BufReader<R>,
    buf: Vec<u8>,
}

impl<R> std::fmt::Debug for LineReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineReader")
            .field("buffered", &self.buf.len())
            .finish()
    }
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader over `reader`.
    pub fn new(reader: R) -> Self {
        LineReader {
            inner: BufReader::new(reader),
            buf: Vec::new(),
        }
    }

    /// The next record without its LF (and without one trailing CR); `None` at end of input.
    /// An empty line is a record (`""`); an unterminated non-empty tail is the last record.
    ///
    /// # Errors
    /// Read errors of the underlying reader.
    pub async fn next_line(&mut self) -> std::io::Result<Option<String>> {
        self.buf.clear();
        let n = self.inner.read_until(b'\n', &mut self.buf).await?;
        if n == 0 {
            return Ok(None);
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(Some(String::from_utf8_lossy(&self.buf).into_owned()))
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
