//! Writes AWS binary event-stream bodies (Bedrock ConverseStream) for tests.
//!
//! An encoder of its own (prelude, string headers, payload, both CRC32s), independent of the
//! decoder under test, so framing mistakes on either side show up.

use serde_json::Value;

/// Builds an event-stream body message by message.
#[derive(Clone, Debug, Default)]
pub struct EventStreamBuilder {
    bytes: Vec<u8>,
}

/// One message: `headers` (all string-typed) and `payload`. Headers or payloads too large
/// for the framing's length fields are cut to fit (test input only).
pub fn frame(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut encoded = Vec::new();
    for (name, value) in headers {
        let name = &name.as_bytes()[..name.len().min(255)];
        let value = &value.as_bytes()[..value.len().min(u16::MAX as usize)];
        encoded.push(u8::try_from(name.len()).unwrap_or(u8::MAX));
        encoded.extend_from_slice(name);
        // Type 7: a UTF-8 string with a two-byte length.
        encoded.push(7);
        encoded.extend_from_slice(&u16::try_from(value.len()).unwrap_or(u16::MAX).to_be_bytes());
        encoded.extend_from_slice(value);
    }
    let total = 12 + encoded.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&u32::try_from(total).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(
        &u32::try_from(encoded.len())
            .unwrap_or(u32::MAX)
            .to_be_bytes(),
    );
    let prelude_crc = crc32fast::hash(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&encoded);
    out.extend_from_slice(payload);
    let message_crc = crc32fast::hash(&out);
    out.extend_from_slice(&message_crc.to_be_bytes());
    out
}

impl EventStreamBuilder {
    /// An empty body.
    pub fn new() -> Self {
        Self::default()
    }

    /// An `event` message of type `event_type` with `payload` as JSON.
    pub fn event(self, event_type: &str, payload: &Value) -> Self {
        let json = crate::json::to_vec(payload).unwrap_or_default();
        self.raw_message(
            &[
                (":event-type", event_type),
                (":content-type", "application/json"),
                (":message-type", "event"),
            ],
            &json,
        )
    }

    /// An `exception` message with `:exception-type` `code` and `payload` as JSON.
    pub fn exception(self, code: &str, payload: &Value) -> Self {
        let json = crate::json::to_vec(payload).unwrap_or_default();
        self.raw_message(
            &[
                (":exception-type", code),
                (":content-type", "application/json"),
                (":message-type", "exception"),
            ],
            &json,
        )
    }

    /// A message with the given headers and payload bytes.
    pub fn raw_message(mut self, headers: &[(&str, &str)], payload: &[u8]) -> Self {
        self.bytes.extend(frame(headers, payload));
        self
    }

    /// Raw bytes appended as they are (a cut frame, garbage).
    pub fn raw(mut self, bytes: &[u8]) -> Self {
        self.bytes.extend_from_slice(bytes);
        self
    }

    /// The body.
    pub fn build(self) -> Vec<u8> {
        self.bytes
    }
}
