//! Our SSE parser: bytes → [`SseEvent`]s, linear whatever the chunking.
//!
//! Implements the WHATWG "event stream interpretation" algorithm
//! (<https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>)
//! incrementally over network reads:
//!
//! - **Line framing.** A line ends at CRLF, LF or a lone CR. A CR that ends one read and an LF
//!   that starts the next are one terminator (BUG-01: pi 0.85.1's own Anthropic splitter and
//!   several SDKs split the event there). The line is processed as soon as its CR arrives, so an
//!   event is dispatched without waiting for the next read.
//! - **Decoding.** Bytes are buffered per line and decoded when the line is complete, so a UTF-8
//!   character split across reads is reassembled; invalid UTF-8 becomes U+FFFD instead of
//!   stalling the stream. One leading byte-order mark is stripped.
//! - **Fields.** `event` (empty or absent → `None`), `data` (lines joined with `\n`), `id`
//!   (ignored when it contains NUL; persists across events like the spec's last-event-ID
//!   buffer), `retry` (ASCII digits only). One space after the colon is removed. Lines starting
//!   with `:` are comments: they are counted ([`SseParser::comments_seen`]) and otherwise
//!   ignored. Unknown fields are ignored.
//! - **Dispatch.** A blank line dispatches the pending event; an event without any `data` line
//!   is not dispatched (the spec's empty-data-buffer rule), but its `event` field is reset.
//!
//! Cost: every input byte is scanned once (`memchr`) and copied at most once (only the
//! unterminated tail of a read is buffered), so the total work is O(input) whatever the read
//! sizes, line lengths or number of lines per read.
//!
//! The project does not use `eventsource-stream` here; see `docs/architecture.md`
//! ("Why our own SSE parser").

use std::borrow::Cow;

/// One dispatched server-sent event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `None` when absent (or empty, which the spec treats the same way:
    /// the default type `message`).
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last `id:` field seen on the stream up to this event (it persists across events, as
    /// the spec's last-event-ID buffer does); `None` until one arrives.
    pub id: Option<String>,
    /// The `retry:` field (digits only) seen in this event's lines, in milliseconds; `None`
    /// when absent or not a valid base-ten integer.
    pub retry: Option<u64>,
}

/// The UTF-8 byte-order mark, stripped once from the start of the stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Incremental SSE parser; feed it network reads in order.
///
/// ```
/// use pi_ai::sse::SseParser;
/// let mut parser = SseParser::new();
/// let mut out = Vec::new();
/// parser.feed(b"event: ping\r", &mut out);
/// parser.feed(b"\ndata: {}\r\n\r\n", &mut out);
/// parser.finish(&mut out);
/// assert_eq!(out.len(), 1);
/// assert_eq!(out[0].event.as_deref(), Some("ping"));
/// assert_eq!(out[0].data, "{}");
/// ```
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the current, not yet terminated line (only ever the tail of a read).
    line: Vec<u8>,
    /// The previous read ended with CR: an LF at the start of the next read belongs to it.
    skip_lf: bool,
    /// No line has been completed yet (the BOM check applies to the first line only).
    started: bool,
    /// Event type of the pending event.
    event: Option<String>,
    /// Data of the pending event (lines joined with `\n`).
    data: String,
    /// The pending event has at least one `data` line.
    has_data: bool,
    /// `retry` of the pending event.
    retry: Option<u64>,
    /// Last event ID (persists across events).
    last_id: Option<String>,
    /// Last valid `retry` value on the stream (the spec's reconnection time).
    reconnection_ms: Option<u64>,
    /// Comment lines seen.
    comments: u64,
    /// A non-blank line was completed since the last blank line.
    tail_lines: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Consumes one read, appending every event it completes to `out` (in stream order).
    ///
    /// Never fails and never panics: any byte sequence is a valid input.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        let mut rest = chunk;
        if self.skip_lf && !rest.is_empty() {
            self.skip_lf = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(pos) = memchr::memchr2(b'\r', b'\n', rest) {
            let terminator = rest[pos];
            if self.line.is_empty() {
                self.process_line(&rest[..pos], out);
            } else {
                self.line.extend_from_slice(&rest[..pos]);
                // Take the buffer to lend it out, then give its allocation back.
                let mut line = std::mem::take(&mut self.line);
                self.process_line(&line, out);
                line.clear();
                self.line = line;
            }
            rest = &rest[pos + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
        self.line.extend_from_slice(rest);
    }

    /// Ends the stream: an unterminated last line is processed as a line, then a pending event
    /// that has data is dispatched into `out`. The parser is reset for a new stream, except for
    /// [`Self::comments_seen`].
    ///
    /// The spec discards a pending event at end of input instead. pi differs per wire API:
    /// its own Anthropic splitter flushes like this method (`anthropic-messages.js`
    /// `iterateSseMessages`), while the OpenAI SDK (Completions, Responses) and the Google SDK
    /// discard it; to mirror those, drop the parser instead of calling `finish`.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, out);
        }
        self.dispatch(out);
        let comments = self.comments;
        *self = Self {
            comments,
            ..Self::default()
        };
    }

    /// Whether the input since the last blank line holds anything but whitespace (complete
    /// lines or an unterminated one): the stream would end inside an event. Call before
    /// [`Self::finish`]. The Google SDK fails such a stream (`Incomplete JSON segment at the
    /// end`) where this parser would flush the event.
    pub fn has_unterminated_event(&self) -> bool {
        self.tail_lines || !self.line.iter().all(u8::is_ascii_whitespace)
    }

    /// Number of comment lines (`:` …, e.g. OpenRouter's `: OPENROUTER PROCESSING` keep-alives)
    /// seen so far. Callers need not treat them as activity specially: every byte read is
    /// activity for an idle timeout.
    pub fn comments_seen(&self) -> u64 {
        self.comments
    }

    /// The last valid `retry:` value seen on the stream, in milliseconds (the spec's
    /// reconnection time), even if its event was never dispatched.
    pub fn reconnection_ms(&self) -> Option<u64> {
        self.reconnection_ms
    }

    /// Handles one complete line (without its terminator).
    fn process_line(&mut self, raw: &[u8], out: &mut Vec<SseEvent>) {
        let mut raw = raw;
        if !self.started {
            self.started = true;
            raw = raw.strip_prefix(BOM).unwrap_or(raw);
        }
        if raw.is_empty() {
            self.tail_lines = false;
            self.dispatch(out);
            return;
        }
        if !raw.iter().all(u8::is_ascii_whitespace) {
            self.tail_lines = true;
        }
        if raw[0] == b':' {
            self.comments += 1;
            return;
        }
        let line: Cow<'_, str> = String::from_utf8_lossy(raw);
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => self.event = (!value.is_empty()).then(|| value.to_owned()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            // Digits only; a value beyond u64 is ignored like any invalid one.
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(ms);
                    self.reconnection_ms = Some(ms);
                }
            }
            _ => {}
        }
    }

    /// Blank line: dispatches the pending event if it has data, and resets it either way.
    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        let retry = self.retry.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.last_id.clone(),
            retry,
        });
    }
}

/// Parses a whole body at once: `feed` of all bytes, then `finish`.
pub fn parse_all(bytes: &[u8]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.feed(bytes, &mut out);
    parser.finish(&mut out);
    out
}

#[cfg(test)]
mod tests;
