//! Bounded accumulation of streamed command output with tail truncation and a temp file.
//!
//! Mirrors pi 0.85.0 `core/tools/output-accumulator.ts`: chunks are decoded as UTF-8 across
//! chunk boundaries (invalid bytes become U+FFFD), only a rolling decoded tail is kept in
//! memory, and once the output exceeds the limits the raw bytes (all of them, from the first)
//! go to `$TMPDIR/<prefix>-<16 hex>.log` (mode 0600, the output may hold secrets).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::tools::truncate::{TruncatedBy, TruncationOptions, TruncationResult, truncate_tail};

/// A view of the output so far: the tail-truncated text, its truncation record (counting
/// the whole output) and the temp file, once created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputSnapshot {
    /// The kept tail (the whole output when not truncated).
    pub content: String,
    /// `totalLines`/`totalBytes` cover everything appended; the rest describes `content`.
    pub truncation: TruncationResult,
    /// Where the full raw output is written, if a temp file was opened.
    pub full_output_path: Option<PathBuf>,
}

/// Incremental UTF-8 decoder: keeps an incomplete trailing sequence for the next chunk.
#[derive(Debug, Default)]
struct Utf8Decoder {
    pending: Vec<u8>,
}

impl Utf8Decoder {
    fn decode(&mut self, chunk: &[u8], out: &mut String) {
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(chunk);
        let mut rest: &[u8] = &buf;
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    out.push_str(valid);
                    return;
                }
                Err(err) => {
                    let (valid, after) = rest.split_at(err.valid_up_to());
                    // `valid` is valid UTF-8 by construction.
                    out.push_str(&String::from_utf8_lossy(valid));
                    match err.error_len() {
                        Some(bad) => {
                            out.push('\u{FFFD}');
                            rest = &after[bad..];
                        }
                        None => {
                            self.pending = after.to_vec();
                            return;
                        }
                    }
                }
            }
        }
    }

    fn finish(&mut self, out: &mut String) {
        if !self.pending.is_empty() {
            self.pending.clear();
            out.push('\u{FFFD}');
        }
    }
}

/// Accumulates streamed output. Memory stays bounded by about four times `max_bytes`.
#[derive(Debug)]
pub struct OutputAccumulator {
    opts: TruncationOptions,
    rolling_bytes: usize,
    temp_prefix: String,
    temp_dir: PathBuf,
    decoder: Utf8Decoder,
    raw_chunks: Vec<Vec<u8>>,
    tail: String,
    tail_at_line_start: bool,
    total_raw_bytes: usize,
    total_bytes: usize,
    completed_lines: usize,
    current_line_bytes: usize,
    last_completed_line_bytes: usize,
    open_line: bool,
    temp_path: Option<PathBuf>,
    temp_file: Option<File>,
    temp_error: bool,
}

impl OutputAccumulator {
    /// A new accumulator with the given limits; temp files are named
    /// `<temp_dir>/<temp_prefix>-<16 hex>.log` (pi uses prefix `pi-bash` and the OS temp dir).
    pub fn new(opts: TruncationOptions, temp_prefix: &str, temp_dir: &Path) -> Self {
        OutputAccumulator {
            opts,
            rolling_bytes: (opts.max_bytes * 2).max(1),
            temp_prefix: temp_prefix.to_owned(),
            temp_dir: temp_dir.to_path_buf(),
            decoder: Utf8Decoder::default(),
            raw_chunks: Vec::new(),
            tail: String::new(),
            tail_at_line_start: true,
            total_raw_bytes: 0,
            total_bytes: 0,
            completed_lines: 0,
            current_line_bytes: 0,
            last_completed_line_bytes: 0,
            open_line: false,
            temp_path: None,
            temp_file: None,
            temp_error: false,
        }
    }

    /// Appends a raw chunk (stdout and stderr interleaved as they arrive).
    pub fn append(&mut self, data: &[u8]) {
        self.total_raw_bytes += data.len();
        let mut text = String::new();
        self.decoder.decode(data, &mut text);
        self.append_text(&text);
        if self.temp_file.is_some() || self.over_limits() {
            self.ensure_temp_file();
            self.write_temp(data);
        } else if !data.is_empty() {
            self.raw_chunks.push(data.to_vec());
        }
    }

    /// Flushes the decoder (a dangling partial character becomes U+FFFD) and opens the temp
    /// file if the output exceeds the limits.
    pub fn finish(&mut self) {
        let mut text = String::new();
        self.decoder.finish(&mut text);
        self.append_text(&text);
        if self.over_limits() {
            self.ensure_temp_file();
        }
        if let Some(file) = self.temp_file.as_mut() {
            // Best effort: a failed flush leaves a shorter file, never a failed command.
            let _ = file.flush();
        }
    }

    /// The current view. With `persist_if_truncated`, a truncated view always names a temp file.
    pub fn snapshot(&mut self, persist_if_truncated: bool) -> OutputSnapshot {
        let text = self.snapshot_text();
        let tail = truncate_tail(text, self.opts);
        let total_lines = self.total_lines();
        let truncated = total_lines > self.opts.max_lines || self.total_bytes > self.opts.max_bytes;
        let truncated_by = if truncated {
            tail.truncated_by
                .or(Some(if self.total_bytes > self.opts.max_bytes {
                    TruncatedBy::Bytes
                } else {
                    TruncatedBy::Lines
                }))
        } else {
            None
        };
        let truncation = TruncationResult {
            truncated,
            truncated_by,
            total_lines,
            total_bytes: self.total_bytes,
            ..tail
        };
        if persist_if_truncated && truncated {
            self.ensure_temp_file();
        }
        OutputSnapshot {
            content: truncation.content.clone(),
            truncation,
            full_output_path: self.temp_path.clone(),
        }
    }

    /// UTF-8 bytes of the output's last line (after its last `\n` when the output does not end
    /// with one, else of the line that newline terminates).
    pub fn last_line_bytes(&self) -> usize {
        if self.open_line {
            self.current_line_bytes
        } else {
            self.last_completed_line_bytes
        }
    }

    /// Total lines so far (a trailing unterminated line counts).
    pub fn total_lines(&self) -> usize {
        self.completed_lines + usize::from(self.open_line)
    }

    fn over_limits(&self) -> bool {
        self.total_raw_bytes > self.opts.max_bytes
            || self.total_bytes > self.opts.max_bytes
            || self.total_lines() > self.opts.max_lines
    }

    fn append_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.total_bytes += text.len();
        self.tail.push_str(text);
        if self.tail.len() > self.rolling_bytes * 2 {
            self.trim_tail();
        }
        match text.rfind('\n') {
            None => {
                self.current_line_bytes += text.len();
                self.open_line = true;
            }
            Some(last) => {
                self.last_completed_line_bytes = match text[..last].rfind('\n') {
                    Some(prev) => last - prev - 1,
                    None => self.current_line_bytes + last,
                };
                self.completed_lines += text.bytes().filter(|&b| b == b'\n').count();
                self.current_line_bytes = text.len() - last - 1;
                self.open_line = self.current_line_bytes > 0;
            }
        }
    }

    fn trim_tail(&mut self) {
        let mut start = self.tail.len() - self.rolling_bytes;
        while !self.tail.is_char_boundary(start) {
            start += 1;
        }
        if start > 0 {
            self.tail_at_line_start = self.tail.as_bytes()[start - 1] == b'\n';
            self.tail.drain(..start);
        }
    }

    /// The tail as complete lines: a leading fragment cut by trimming is dropped.
    fn snapshot_text(&self) -> &str {
        if self.tail_at_line_start {
            return &self.tail;
        }
        match self.tail.find('\n') {
            Some(i) => &self.tail[i + 1..],
            None => &self.tail,
        }
    }

    fn ensure_temp_file(&mut self) {
        if self.temp_path.is_some() || self.temp_error {
            return;
        }
        let path = self
            .temp_dir
            .join(format!("{}-{}.log", self.temp_prefix, random_hex16()));
        match create_private(&path) {
            Ok(file) => {
                self.temp_file = Some(file);
                self.temp_path = Some(path);
                for chunk in std::mem::take(&mut self.raw_chunks) {
                    self.write_temp(&chunk);
                }
            }
            Err(err) => {
                tracing::warn!(
                    "could not create bash output file {}: {err}",
                    path.display()
                );
                self.temp_error = true;
                self.raw_chunks.clear();
            }
        }
    }

    fn write_temp(&mut self, data: &[u8]) {
        if let Some(file) = self.temp_file.as_mut()
            && let Err(err) = file.write_all(data)
        {
            tracing::warn!("could not write bash output file: {err}");
            self.temp_file = None;
        }
    }
}

/// Creates `path` exclusively with mode 0600.
fn create_private(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

/// 16 random lowercase hex digits (8 random bytes, as pi's `randomBytes(8).toString("hex")`).
pub(crate) fn random_hex16() -> String {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    // Bytes 6 and 8 of a v4 UUID carry the version and variant bits; the others are random.
    [0usize, 1, 2, 3, 4, 5, 9, 10]
        .iter()
        .map(|&i| format!("{:02x}", bytes[i]))
        .collect()
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
