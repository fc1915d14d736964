//! [`SseBuilder`]: SSE bodies for tests.

use serde_json::Value;

/// Builds an SSE body frame by frame; every frame ends with a blank line.
///
/// ```
/// use pi_ai::testkit::SseBuilder;
/// let body = SseBuilder::new()
///     .event("message_start", &serde_json::json!({"type": "message_start"}))
///     .data(&serde_json::json!({"n": 1.5}))
///     .data_raw("[DONE]")
///     .build();
/// assert_eq!(
///     body,
///     "event: message_start\ndata: {\"type\":\"message_start\"}\n\ndata: {\"n\":1.5}\n\ndata: [DONE]\n\n"
/// );
/// ```
#[derive(Clone, Debug, Default)]
pub struct SseBuilder {
    body: String,
}

impl SseBuilder {
    /// An empty body.
    pub fn new() -> Self {
        Self::default()
    }

    /// `event: <name>` + `data: <json>` (numbers as JavaScript writes them).
    pub fn event(self, name: &str, json: &Value) -> Self {
        let data = crate::json::to_string(json).unwrap_or_default();
        self.event_raw(name, &data)
    }

    /// `event: <name>` + one `data:` line per line of `data`.
    pub fn event_raw(mut self, name: &str, data: &str) -> Self {
        self.body.push_str("event: ");
        self.body.push_str(name);
        self.body.push('\n');
        self.data_lines(data);
        self
    }

    /// A `data: <json>` frame without an event name.
    pub fn data(self, json: &Value) -> Self {
        let data = crate::json::to_string(json).unwrap_or_default();
        self.data_raw(&data)
    }

    /// A frame of `data:` lines (one per line of `data`), e.g. `[DONE]`.
    pub fn data_raw(mut self, data: &str) -> Self {
        self.data_lines(data);
        self
    }

    /// A comment frame (`: <text>`), as keep-alive pings are sent.
    pub fn comment(mut self, text: &str) -> Self {
        self.body.push_str(": ");
        self.body.push_str(text);
        self.body.push_str("\n\n");
        self
    }

    /// Appends raw text unchanged (for malformed or CRLF input).
    pub fn raw(mut self, text: &str) -> Self {
        self.body.push_str(text);
        self
    }

    /// The body text.
    pub fn build(self) -> String {
        self.body
    }

    /// The body bytes.
    pub fn build_bytes(self) -> Vec<u8> {
        self.body.into_bytes()
    }

    fn data_lines(&mut self, data: &str) {
        for line in data.split('\n') {
            self.body.push_str("data: ");
            self.body.push_str(line);
            self.body.push('\n');
        }
        self.body.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_end_with_a_blank_line() {
        let body = SseBuilder::new()
            .comment("ping")
            .event_raw("error", "a\nb")
            .data(&json!({"cost": 0.0, "x": 1.5e-6}))
            .build();
        assert_eq!(
            body,
            ": ping\n\nevent: error\ndata: a\ndata: b\n\ndata: {\"cost\":0,\"x\":0.0000015}\n\n"
        );
    }
}
