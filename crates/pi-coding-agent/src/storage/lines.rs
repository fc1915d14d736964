//! Line-by-line reading of a session file without copying each line.
//!
//! [`std::io::BufRead::read_until`] copies every line into a caller buffer; on a 100 MiB
//! session that is a second pass over every byte. [`Lines`] reads large blocks and hands out
//! lines as slices of its block, moving only the unfinished tail of a block to the front
//! before the next read. A line longer than the block grows the block, up to the reader's
//! line limit ([`MAX_LINE_BYTES`] unless told otherwise): a longer line is an error, so one
//! line cannot make a reader hold more than the limit in memory.

use std::io::{ErrorKind, Read};

/// Longest session line pi-rs reads, without its `\n`: 512 MiB. pi 0.85.0 accumulates a line
/// in one JavaScript string (`loadEntriesFromFile`), which V8 caps at 2^29 − 24 UTF-16 units,
/// so a session file pi can load has no longer line of ASCII text; past that pi fails to load
/// the file with `RangeError: Invalid string length`.
pub const MAX_LINE_BYTES: usize = 512 * 1024 * 1024;

/// A line longer than its reader's limit. Reading stops there; nothing was changed.
///
/// Carried inside an [`std::io::Error`] of kind [`ErrorKind::InvalidData`] (see
/// [`LineTooLong::of`]), with the 1-based number of the line among the lines read and the
/// byte offset of its start relative to the reader's first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line} (at byte {offset}) is longer than {limit} bytes")]
pub struct LineTooLong {
    /// The 1-based line number.
    pub line: usize,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// The limit, in bytes (without the line's `\n`).
    pub limit: usize,
}

impl LineTooLong {
    /// The [`LineTooLong`] inside `e`, if `e` is one.
    pub fn of(e: &std::io::Error) -> Option<LineTooLong> {
        e.get_ref()?.downcast_ref::<LineTooLong>().copied()
    }

    /// The error moved by `lines` lines and `bytes` bytes (a reader that started inside a
    /// file reports positions relative to its own start).
    pub(crate) fn shifted(self, lines: usize, bytes: u64) -> Self {
        LineTooLong {
            line: self.line.saturating_add(lines),
            offset: self.offset.saturating_add(bytes),
            limit: self.limit,
        }
    }

    /// As an I/O error of kind [`ErrorKind::InvalidData`].
    pub(crate) fn into_io(self) -> std::io::Error {
        std::io::Error::new(ErrorKind::InvalidData, self)
    }
}

/// Initial block size: large enough that block boundaries are rare, small enough to stay in
/// the CPU's cache between the kernel's copy and the scan that follows it (and to come from
/// the heap rather than fresh zeroed pages). 256 KiB blocks made opening a 100 MiB session
/// with two threads spend a third of its time in that copy.
const BLOCK: usize = 64 * 1024;

/// Yields the lines of a reader in order, each with its `\n` when it has one (the last line
/// of a file may lack it).
pub(crate) struct Lines<R> {
    inner: R,
    buf: Vec<u8>,
    /// Start of the next line in `buf`.
    start: usize,
    /// End of the bytes read into `buf`.
    end: usize,
    /// `buf[start..scanned]` is known to hold no `\n`.
    scanned: usize,
    eof: bool,
    /// Longest line accepted, without its `\n`.
    limit: usize,
    /// Lines handed out so far, and the bytes they held (for [`LineTooLong`]).
    lines: usize,
    consumed: u64,
}

impl<R: Read> Lines<R> {
    /// Reads `inner` from its current position, with the [`MAX_LINE_BYTES`] limit.
    pub(crate) fn new(inner: R) -> Self {
        Self::with_limit(inner, MAX_LINE_BYTES)
    }

    /// Reads `inner` from its current position; lines may hold at most `limit` bytes besides
    /// their `\n`.
    pub(crate) fn with_limit(inner: R, limit: usize) -> Self {
        Lines {
            inner,
            buf: vec![0; BLOCK.min(limit.saturating_add(1))],
            start: 0,
            end: 0,
            scanned: 0,
            eof: false,
            limit,
            lines: 0,
            consumed: 0,
        }
    }

    /// The next line, including its `\n` if it has one; `None` at end of input.
    ///
    /// Errors: the reader's (interrupted reads are retried); a line longer than the limit is
    /// an [`ErrorKind::InvalidData`] error carrying [`LineTooLong`], found after reading at
    /// most `limit + 1` of its bytes.
    pub(crate) fn next_line(&mut self) -> std::io::Result<Option<&[u8]>> {
        loop {
            if let Some(pos) = memchr::memchr(b'\n', &self.buf[self.scanned..self.end]) {
                let line = self.start..self.scanned + pos + 1;
                if line.len() - 1 > self.limit {
                    return Err(self.too_long());
                }
                return Ok(Some(self.hand_out(line)));
            }
            self.scanned = self.end;
            if self.end - self.start > self.limit {
                return Err(self.too_long());
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let line = self.start..self.end;
                return Ok(Some(self.hand_out(line)));
            }
            self.refill()?;
        }
    }

    fn hand_out(&mut self, line: std::ops::Range<usize>) -> &[u8] {
        self.start = line.end;
        self.scanned = line.end;
        self.lines += 1;
        self.consumed += line.len() as u64;
        &self.buf[line]
    }

    fn too_long(&self) -> std::io::Error {
        LineTooLong {
            line: self.lines + 1,
            offset: self.consumed,
            limit: self.limit,
        }
        .into_io()
    }

    /// Moves the unfinished line to the front (growing the block if it fills it) and reads
    /// more; sets `eof` when the reader has no more.
    fn refill(&mut self) -> std::io::Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.scanned -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            // Never more than the limit plus the byte that proves a line too long.
            let cap = self.limit.saturating_add(1).max(self.buf.len() + 1);
            self.buf
                .resize(self.buf.len().saturating_mul(2).min(cap), 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that returns at most `step` bytes per read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(out.len()).min(self.data.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn collect(data: &[u8], step: usize) -> Vec<Vec<u8>> {
        let mut lines = Lines::new(Trickle { data, step });
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            out.push(line.to_vec());
        }
        out
    }

    #[test]
    fn lines_keep_their_newline_and_the_last_may_lack_it() {
        for step in [1, 3, 1 << 20] {
            assert_eq!(
                collect(b"a\n\nbc\nd", step),
                [&b"a\n"[..], b"\n", b"bc\n", b"d"],
                "{step}"
            );
            assert_eq!(collect(b"a\n", step), [b"a\n"]);
            assert!(collect(b"", step).is_empty());
        }
    }

    fn collect_limited(data: &[u8], step: usize, limit: usize) -> std::io::Result<Vec<Vec<u8>>> {
        let mut lines = Lines::with_limit(Trickle { data, step }, limit);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line()? {
            out.push(line.to_vec());
        }
        Ok(out)
    }

    #[test]
    fn a_line_at_the_limit_is_read_and_one_past_it_is_refused_with_its_number() {
        let limit = BLOCK * 3 + 5;
        for step in [1000, BLOCK, usize::MAX] {
            for tail in [&b"\n"[..], b""] {
                let mut at = b"a\nbc\n".to_vec();
                at.extend(std::iter::repeat_n(b'x', limit));
                at.extend_from_slice(tail);
                let lines = collect_limited(&at, step, limit).unwrap();
                assert_eq!(lines.len(), 3, "{step}");
                assert_eq!(lines[2].len(), limit + tail.len());

                let mut past = b"a\nbc\n".to_vec();
                past.extend(std::iter::repeat_n(b'x', limit + 1));
                past.extend_from_slice(tail);
                past.extend_from_slice(b"\nd\n");
                let err = collect_limited(&past, step, limit).unwrap_err();
                assert_eq!(err.kind(), ErrorKind::InvalidData);
                assert_eq!(
                    LineTooLong::of(&err),
                    Some(LineTooLong {
                        line: 3,
                        offset: 5,
                        limit
                    }),
                    "{step}"
                );
                assert_eq!(
                    err.to_string(),
                    format!("line 3 (at byte 5) is longer than {limit} bytes")
                );
            }
        }
    }

    #[test]
    fn memory_stays_bounded_by_the_limit() {
        // An endless line without a newline: the reader stops after limit + 1 bytes.
        struct Endless(u64);
        impl Read for Endless {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                out.fill(b'y');
                self.0 += out.len() as u64;
                Ok(out.len())
            }
        }
        let limit = BLOCK * 5;
        let mut lines = Lines::with_limit(Endless(0), limit);
        let err = lines.next_line().unwrap_err();
        assert!(LineTooLong::of(&err).is_some());
        assert!(lines.buf.len() <= limit + 1, "{}", lines.buf.len());
        assert!(lines.inner.0 <= (limit + 1) as u64, "{}", lines.inner.0);
        assert_eq!(MAX_LINE_BYTES, 536_870_912);
    }

    #[test]
    fn lines_longer_than_the_block_and_across_block_boundaries() {
        let long = vec![b'x'; BLOCK * 2 + 17];
        let mut data = Vec::new();
        for len in [BLOCK - 1, 5, BLOCK + 3] {
            data.extend(std::iter::repeat_n(b'y', len));
            data.push(b'\n');
        }
        data.extend_from_slice(&long);
        for step in [4096, BLOCK, usize::MAX] {
            let lines = collect(&data, step);
            let lens: Vec<usize> = lines.iter().map(Vec::len).collect();
            assert_eq!(lens, [BLOCK, 6, BLOCK + 4, long.len()], "{step}");
            assert_eq!(lines.concat(), data);
        }
    }
}
