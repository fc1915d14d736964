//! Our SSE parser: bytes → [`SseEvent`]s, linear whatever the chunking.
//!
//! Implements the WHATWG "event stream interpretation" algorithm
//! (<https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>)
//! incrementally over network reads:
//!
//! - **Line framing.** A line ends at CRLF, LF or a lone CR. A CR that ends one read and an LF that
//!   starts the next are one terminator (rexxars/eventsource-parser#17: pi 0.85.1's own Anthropic
//!   splitter and several SDKs split the event there). The line is processed as soon as its CR
//!   arrives, so an event is dispatched without waiting for the next read.
//! - **Decoding.** Data bytes are kept as bytes and decoded when the event is dispatched, so a
//!   UTF-8 character split across reads is reassembled; invalid UTF-8 becomes U+FFFD instead of
//!   stalling the stream (decoding the joined lines gives the same text as decoding each line:
//!   the joining LF always ends an invalid sequence). One leading byte-order mark is stripped.
//! - **Fields.** `event` (empty or absent → `None`), `data` (lines joined with `\n`), `id`
//!   (ignored when it contains NUL; persists across events like the spec's last-event-ID
//!   buffer), `retry` (ASCII digits only). One space after the colon is removed. Lines starting
//!   with `:` are comments: they are counted ([`SseParser::comments_seen`]) and otherwise
//!   ignored. Unknown fields are ignored.
//! - **Dispatch.** A blank line dispatches the pending event; an event without any `data` line
//!   is not dispatched (the spec's empty-data-buffer rule), but its `event` field is reset.
//! - **Limit.** The bytes held for one event (its joined data plus the current line's field
//!   name or `event`/`id`/`retry` value) are capped by [`SseOptions::max_event_bytes`]
//!   (default 64 MiB); beyond it [`SseParser::feed`] fails with [`SseError::EventTooLarge`]
//!   and the parser stays failed. Whether an input fails does not depend on its chunking. The
//!   text of comments and the values of unknown fields are skipped, never held, so they don't
//!   count.
//!
//! Cost: every input byte is scanned once (`memchr`) and copied at most once: the value of a
//! `data` field goes straight from the read into the pending event's data as it arrives, even
//! when its line spans many reads; only a field name and the short values of `event`, `id` and
//! `retry` are buffered when a read cuts them. The total work is O(input) whatever the read
//! sizes, line lengths or number of lines per read (`cargo bench -p pi-ai --bench sse`: one
//! 4 MiB event in 4,096 reads costs at most 3× the single read).
//!
//! The project does not use `eventsource-stream` here; see `docs/architecture.md`
//! ("Why our own SSE parser").

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

/// Default of [`SseOptions::max_event_bytes`]: 64 MiB. Generous on purpose: a recorded
/// provider stream carries single events of several MiB (a whole message in a final event).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// Options of an [`SseParser`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseOptions {
    /// Most bytes the parser holds for one event: the pending event's `data` (lines joined
    /// with `\n`) plus the current line's field name or `event`/`id`/`retry` value (comment
    /// text and unknown fields' values are skipped, never held). Exceeding it is
    /// [`SseError::EventTooLarge`]. Default [`DEFAULT_MAX_EVENT_BYTES`].
    pub max_event_bytes: usize,
}

impl Default for SseOptions {
    fn default() -> Self {
        Self {
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
        }
    }
}

/// Why [`SseParser::feed`] failed. The stream cannot continue: the parser rejects every later
/// read with the same error until [`SseParser::finish`] resets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// One event (or one line) needed more than [`SseOptions::max_event_bytes`].
    #[error("server-sent event larger than {limit} bytes")]
    EventTooLarge {
        /// The limit that was exceeded, in bytes.
        limit: usize,
    },
}

/// The UTF-8 byte-order mark, stripped once from the start of the stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A field whose value is buffered and applied when its line ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ValueField {
    Event,
    Id,
    Retry,
}

/// Where the parser is inside the current line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum LineState {
    /// Reading the field name (buffered in `line` when a read cuts it); no colon seen yet.
    #[default]
    Name,
    /// After `data:`: one space may follow, then the value streams into `data`.
    DataSpace,
    /// Streaming a `data` value into `data`.
    Data,
    /// Buffering the value of `event`, `id` or `retry` in `line`.
    Value(ValueField),
    /// A comment or an unknown field: the rest of the line is skipped.
    Skip,
}

/// Incremental SSE parser; feed it network reads in order.
///
/// ```
/// use pi_ai::sse::SseParser;
/// let mut parser = SseParser::new();
/// let mut out = Vec::new();
/// parser.feed(b"event: ping\r", &mut out)?;
/// parser.feed(b"\ndata: {}\r\n\r\n", &mut out)?;
/// parser.finish(&mut out)?;
/// assert_eq!(out.len(), 1);
/// assert_eq!(out[0].event.as_deref(), Some("ping"));
/// assert_eq!(out[0].data, "{}");
/// # Ok::<(), pi_ai::sse::SseError>(())
/// ```
#[derive(Debug, Default)]
pub struct SseParser {
    /// Limits.
    options: SseOptions,
    /// Where the parser is inside the current line.
    state: LineState,
    /// The current line's buffered bytes: a field name cut by a read, or a buffered value.
    line: Vec<u8>,
    /// The previous read ended with CR: an LF at the start of the next read belongs to it.
    skip_lf: bool,
    /// No line has been completed yet (the BOM check applies to the first line only).
    started: bool,
    /// Event type of the pending event.
    event: Option<String>,
    /// Data of the pending event (lines joined with `\n`), undecoded.
    data: Vec<u8>,
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
    /// Set once a read failed; every later read fails the same way.
    failed: Option<SseError>,
    /// Something but whitespace arrived since the last blank line.
    tail: bool,
}

impl SseParser {
    /// A parser at the start of a stream, with the default [`SseOptions`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A parser at the start of a stream, with the given limits.
    pub fn with_options(options: SseOptions) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }

    /// Consumes one read, appending every event it completes to `out` (in stream order).
    ///
    /// Any byte sequence is valid input and nothing panics. Fails only when an event outgrows
    /// [`SseOptions::max_event_bytes`] ([`SseError::EventTooLarge`]); the events this read
    /// completed before that point are still in `out`, the pending event is dropped, its
    /// memory freed, and every later call fails with the same error until
    /// [`Self::finish`].
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if let Some(error) = self.failed {
            return Err(error);
        }
        let fed = self.feed_lines(chunk, out);
        if let Err(error) = fed {
            self.failed = Some(error);
            self.line = Vec::new();
            self.data = Vec::new();
        }
        fed
    }

    /// Ends the stream: an unterminated last line is processed as a line, then a pending event
    /// that has data is dispatched into `out`. The parser is reset for a new stream, except for
    /// [`Self::comments_seen`] and its options. After a failed [`Self::feed`] nothing is
    /// dispatched.
    ///
    /// Fails with the error of a failed [`Self::feed`], or when ending the last line passes the
    /// limit (a final `data` line's joining `\n`); the pending event is dropped then.
    ///
    /// The spec discards a pending event at end of input instead. pi differs per wire API:
    /// its own Anthropic splitter flushes like this method (`anthropic-messages.js`
    /// `iterateSseMessages`), while the OpenAI SDK (Completions, Responses) and the Google SDK
    /// discard it; to mirror those, drop the parser instead of calling `finish`.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let ended = match self.failed {
            Some(error) => Err(error),
            None if self.state != LineState::Name || !self.line.is_empty() => {
                self.line_bytes(&[], true, out)
            }
            None => Ok(()),
        };
        if ended.is_ok() {
            self.dispatch(out);
        }
        *self = Self {
            comments: self.comments,
            options: self.options,
            ..Self::default()
        };
        ended
    }

    /// Whether the input since the last blank line holds anything but whitespace (complete
    /// lines or an unterminated one): the stream would end inside an event. Call before
    /// [`Self::finish`]. The Google SDK fails such a stream (`Incomplete JSON segment at the
    /// end`) where this parser would flush the event.
    pub fn has_unterminated_event(&self) -> bool {
        self.tail
    }

    /// Number of comment lines (`:` …, e.g. OpenRouter's `: OPENROUTER PROCESSING` keep-alives)
    /// seen so far, counted as soon as their colon arrives. Callers need not treat them as
    /// activity specially: every byte read is activity for an idle timeout.
    pub fn comments_seen(&self) -> u64 {
        self.comments
    }

    /// The last valid `retry:` value seen on the stream, in milliseconds (the spec's
    /// reconnection time), even if its event was never dispatched.
    pub fn reconnection_ms(&self) -> Option<u64> {
        self.reconnection_ms
    }

    /// Splits one read into line pieces and terminators.
    fn feed_lines(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut rest = chunk;
        if self.skip_lf && !rest.is_empty() {
            self.skip_lf = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(pos) = memchr::memchr2(b'\r', b'\n', rest) {
            let terminator = rest[pos];
            self.line_bytes(&rest[..pos], true, out)?;
            rest = &rest[pos + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
        if rest.is_empty() {
            Ok(())
        } else {
            self.line_bytes(rest, false, out)
        }
    }

    /// Consumes `piece`, the next bytes of the current line; `ends` = the line ends after it.
    ///
    /// A piece that holds a whole line is handled without buffering; otherwise only a field
    /// name or an `event`/`id`/`retry` value is buffered, and `data` values stream into the
    /// pending data.
    fn line_bytes(
        &mut self,
        mut piece: &[u8],
        ends: bool,
        out: &mut Vec<SseEvent>,
    ) -> Result<(), SseError> {
        // Usually decided by the piece's first byte, and skipped once set.
        if !self.tail && !piece.iter().all(u8::is_ascii_whitespace) {
            self.tail = true;
        }
        loop {
            match self.state {
                LineState::Name => match memchr::memchr(b':', piece) {
                    Some(colon) => {
                        self.state = if self.line.is_empty() {
                            self.field_with_colon(&piece[..colon])?
                        } else {
                            self.hold(&piece[..colon])?;
                            let name = std::mem::take(&mut self.line);
                            let state = self.field_with_colon(&name);
                            self.line = recycle(name);
                            state?
                        };
                        piece = &piece[colon + 1..];
                    }
                    None if ends => {
                        if self.line.is_empty() {
                            self.field_without_colon(piece, out)?;
                        } else {
                            self.hold(piece)?;
                            let name = std::mem::take(&mut self.line);
                            let applied = self.field_without_colon(&name, out);
                            self.line = recycle(name);
                            applied?;
                        }
                        break;
                    }
                    None => return self.hold(piece),
                },
                LineState::DataSpace => match piece.first() {
                    None => break,
                    Some(&first) => {
                        if first == b' ' {
                            piece = &piece[1..];
                        }
                        self.state = LineState::Data;
                    }
                },
                LineState::Data => {
                    self.append_data(piece)?;
                    break;
                }
                LineState::Value(field) if ends => {
                    if self.line.is_empty() {
                        self.apply_value(field, piece)?;
                    } else {
                        self.hold(piece)?;
                        let value = std::mem::take(&mut self.line);
                        let applied = self.apply_value(field, &value);
                        self.line = recycle(value);
                        applied?;
                    }
                    break;
                }
                LineState::Value(_) => return self.hold(piece),
                LineState::Skip => break,
            }
        }
        if ends {
            self.state = LineState::Name;
            self.started = true;
        }
        Ok(())
    }

    /// The field name `raw` (everything before the first colon) starts a field; returns how
    /// the rest of the line is read. Strips the BOM on the first line, counts comments, and
    /// joins a `data` line to the previous one.
    fn field_with_colon(&mut self, raw: &[u8]) -> Result<LineState, SseError> {
        self.check_line(raw.len())?;
        Ok(match self.strip_bom(raw) {
            b"" => {
                self.comments += 1;
                LineState::Skip
            }
            b"data" => {
                self.start_data_line()?;
                LineState::DataSpace
            }
            b"event" => LineState::Value(ValueField::Event),
            b"id" => LineState::Value(ValueField::Id),
            b"retry" => LineState::Value(ValueField::Retry),
            _ => LineState::Skip,
        })
    }

    /// A whole line without a colon: blank (dispatch) or a field with an empty value.
    fn field_without_colon(&mut self, raw: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        self.check_line(raw.len())?;
        match self.strip_bom(raw) {
            b"" => {
                self.tail = false;
                self.dispatch(out);
            }
            b"data" => self.start_data_line()?,
            b"event" => self.apply_value(ValueField::Event, b"")?,
            b"id" => self.apply_value(ValueField::Id, b"")?,
            _ => {}
        }
        Ok(())
    }

    /// `raw` without a leading BOM when it starts the stream's first line.
    fn strip_bom<'a>(&self, raw: &'a [u8]) -> &'a [u8] {
        if self.started {
            raw
        } else {
            raw.strip_prefix(BOM).unwrap_or(raw)
        }
    }

    /// A `data` line begins: joins it to the previous one with `\n` (a byte that counts
    /// towards the limit: a flood of empty `data` lines must not grow without bound).
    fn start_data_line(&mut self) -> Result<(), SseError> {
        if self.has_data {
            self.append_data(b"\n")?;
        }
        self.has_data = true;
        Ok(())
    }

    /// Applies a complete `event`/`id`/`retry` value (one leading space is removed).
    fn apply_value(&mut self, field: ValueField, raw: &[u8]) -> Result<(), SseError> {
        self.check_line(raw.len())?;
        let raw = raw.strip_prefix(b" ").unwrap_or(raw);
        let value = String::from_utf8_lossy(raw);
        match field {
            ValueField::Event => self.event = (!value.is_empty()).then(|| value.into_owned()),
            ValueField::Id if !value.contains('\0') => self.last_id = Some(value.into_owned()),
            ValueField::Id => {}
            // Digits only; a value beyond u64 is ignored like any invalid one.
            ValueField::Retry => {
                if !value.is_empty()
                    && value.bytes().all(|b| b.is_ascii_digit())
                    && let Ok(ms) = value.parse::<u64>()
                {
                    self.retry = Some(ms);
                    self.reconnection_ms = Some(ms);
                }
            }
        }
        Ok(())
    }

    /// Fails when a field name or value of `len` bytes would not fit beside the pending data.
    /// Whole lines handled without buffering are checked like buffered ones, so whether an
    /// input fails does not depend on how it was split into reads.
    fn check_line(&self, len: usize) -> Result<(), SseError> {
        let limit = self.options.max_event_bytes;
        if len > limit.saturating_sub(self.data.len()) {
            return Err(SseError::EventTooLarge { limit });
        }
        Ok(())
    }

    /// Appends part of a `data` value to the pending data, within the limit.
    fn append_data(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        let used = self.data.len() + self.line.len();
        reserve_within(
            &mut self.data,
            used,
            bytes.len(),
            self.options.max_event_bytes,
        )?;
        self.data.extend_from_slice(bytes);
        Ok(())
    }

    /// Buffers part of the current line, within the limit.
    fn hold(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        let used = self.data.len() + self.line.len();
        reserve_within(
            &mut self.line,
            used,
            bytes.len(),
            self.options.max_event_bytes,
        )?;
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// Blank line: dispatches the pending event if it has data, and resets it either way.
    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        let retry = self.retry.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let data = String::from_utf8(std::mem::take(&mut self.data))
            .unwrap_or_else(|invalid| String::from_utf8_lossy(invalid.as_bytes()).into_owned());
        out.push(SseEvent {
            event,
            data,
            id: self.last_id.clone(),
            retry,
        });
    }
}

/// An emptied buffer, its allocation kept for the next line.
fn recycle(mut buffer: Vec<u8>) -> Vec<u8> {
    buffer.clear();
    buffer
}

/// Makes room in `buffer` for `extra` more bytes when the parser already holds `used` bytes,
/// or fails when that would pass `limit`. Growth doubles (amortised O(1) per byte) but never
/// reserves past the limit, so a buffer's capacity stays within `limit` bytes.
fn reserve_within(
    buffer: &mut Vec<u8>,
    used: usize,
    extra: usize,
    limit: usize,
) -> Result<(), SseError> {
    if extra > limit.saturating_sub(used) {
        return Err(SseError::EventTooLarge { limit });
    }
    let needed = buffer.len() + extra;
    if needed > buffer.capacity() {
        let room = limit - (used - buffer.len());
        let target = needed.max(buffer.capacity() * 2).min(room);
        buffer.reserve_exact(target - buffer.len());
    }
    Ok(())
}

/// Parses a whole body at once: `feed` of all bytes, then `finish`. A body whose events
/// outgrow [`DEFAULT_MAX_EVENT_BYTES`] yields the events before the oversized one.
pub fn parse_all(bytes: &[u8]) -> Vec<SseEvent> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    if parser.feed(bytes, &mut out).is_ok() {
        // A failure leaves the events before the oversized one in `out`.
        let _ = parser.finish(&mut out);
    }
    out
}

#[cfg(test)]
mod tests;
