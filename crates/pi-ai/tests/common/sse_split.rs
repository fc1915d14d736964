//! Test-only SSE splitter with the interface of `pi_ai::sse::SseParser`, used until the
//! crate's parser lands (then this file is deleted). CR, LF and CRLF end lines, also when a
//! CR and its LF arrive in different reads; a pending event is flushed at the end.

use pi_ai::sse::SseEvent;

#[derive(Default)]
pub struct SseParser {
    line: Vec<u8>,
    pending_cr: bool,
    started: bool,
    event: Option<String>,
    data: Option<String>,
    id: Option<String>,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        for &b in bytes {
            if std::mem::take(&mut self.pending_cr) && b == b'\n' {
                continue;
            }
            match b {
                b'\r' => {
                    self.end_line(out);
                    self.pending_cr = true;
                }
                b'\n' => self.end_line(out),
                _ => self.line.push(b),
            }
        }
    }

    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            self.end_line(out);
        }
        self.dispatch(out);
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let raw = std::mem::take(&mut self.line);
        let mut line = String::from_utf8_lossy(&raw).into_owned();
        if !self.started {
            self.started = true;
            if let Some(rest) = line.strip_prefix('\u{feff}') {
                line = rest.to_owned();
            }
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f.to_owned(), v.strip_prefix(' ').unwrap_or(v).to_owned()),
            None => (line.clone(), String::new()),
        };
        match field.as_str() {
            "event" => self.event = Some(value),
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(&value);
                }
                None => self.data = Some(value),
            },
            "id" => self.id = Some(value),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if let Some(data) = self.data.take() {
            out.push(SseEvent {
                event,
                data,
                id: self.id.clone(),
                retry: None,
            });
        }
    }
}
