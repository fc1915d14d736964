//! Line-by-line reading of a session file without copying each line.
//!
//! [`std::io::BufRead::read_until`] copies every line into a caller buffer; on a 100 MiB
//! session that is a second pass over every byte. [`Lines`] reads large blocks and hands out
//! lines as slices of its block, moving only the unfinished tail of a block to the front
//! before the next read. A line longer than the block grows the block.

use std::io::{ErrorKind, Read};

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
}

impl<R: Read> Lines<R> {
    /// Reads `inner` from its current position.
    pub(crate) fn new(inner: R) -> Self {
        Lines {
            inner,
            buf: vec![0; BLOCK],
            start: 0,
            end: 0,
            scanned: 0,
            eof: false,
        }
    }

    /// The next line, including its `\n` if it has one; `None` at end of input.
    ///
    /// Errors: the reader's (interrupted reads are retried).
    pub(crate) fn next_line(&mut self) -> std::io::Result<Option<&[u8]>> {
        loop {
            if let Some(pos) = memchr::memchr(b'\n', &self.buf[self.scanned..self.end]) {
                let line = self.start..self.scanned + pos + 1;
                self.start = line.end;
                self.scanned = line.end;
                return Ok(Some(&self.buf[line]));
            }
            self.scanned = self.end;
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let line = self.start..self.end;
                self.start = self.end;
                return Ok(Some(&self.buf[line]));
            }
            self.refill()?;
        }
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
            self.buf.resize(self.buf.len() * 2, 0);
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
