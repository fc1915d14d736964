//! Stand-in for `crate::sse::SseParser` until the real parser lands on main.
//!
//! Same surface the driver uses (`new`, `feed`, `finish`); line framing on LF, CRLF and CR
//! (a CR at the end of one read paired with an LF at the start of the next), the `event`,
//! `data`, `id` and `retry` fields, comments ignored. Replaced by `crate::sse::SseParser`.

use crate::sse::SseEvent;

/// Incremental SSE parser.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    after_cr: bool,
    event: Option<String>,
    data: Option<String>,
    id: Option<String>,
    retry: Option<u64>,
}

impl SseParser {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes, returning the events they complete.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(&mut out),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut out);
                }
                _ => self.line.push(b),
            }
        }
        out
    }

    /// Ends the input, flushing a pending event.
    pub(crate) fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            self.end_line(&mut out);
        }
        self.end_line(&mut out);
        out
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let line = String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned();
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(SseEvent {
                    event: self.event.take(),
                    data,
                    id: self.id.clone(),
                    retry: self.retry,
                });
            }
            self.event = None;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line.as_str(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "id" => self.id = Some(value.to_owned()),
            "retry" => {
                if let Ok(n) = value.parse() {
                    self.retry = Some(n);
                }
            }
            _ => {}
        }
    }
}
