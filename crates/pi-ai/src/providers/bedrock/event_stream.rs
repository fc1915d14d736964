//! The AWS binary event-stream framing of a ConverseStream body, decoded into events.
//!
//! Header decoding is `aws-smithy-eventstream`'s (the lengths and both CRC32s are checked
//! here first, to report them with the SDK's texts); this module maps
//! each message onto the stream's meaning as the AWS SDK for JavaScript does
//! (`@smithy/core` `getMessageUnmarshaller` and `getChunkedStream`):
//! - `:message-type: event` → an [`SseEvent`] named by `:event-type`, its payload (UTF-8,
//!   invalid sequences replaced as `TextDecoder` does) in `data`;
//! - `:message-type: exception` → the stream fails with the modeled exception's text
//!   (`Throttling error: <message>`, …) or, for a code Bedrock does not model, the payload;
//! - `:message-type: error` → fails with `:error-message` (else `UnknownError`) under its
//!   `:error-code`;
//! - any other message type → `Unrecognizable event type: <event-type>`.
//!
//! Failures carry the SDK's texts: a length below the framing's minimum (`Provided message
//! too short to accommodate event stream message overhead`), a bad checksum (`The message
//! checksum (<computed>) did not match the expected value of <sent>`, the prelude's likewise)
//! and a body ending inside a message (`Truncated event message received.`). Difference from the SDK: a body ending
//! with one to three stray bytes (less than a length prefix) is reported as truncated too,
//! where the SDK drops them.

use aws_smithy_eventstream::frame::read_message_from;
use aws_smithy_types::event_stream::{HeaderValue, Message};
use bytes::{Buf, BytesMut};

use super::errors::stream_exception;
use crate::providers::{BodyDecoder, StreamError};
use crate::sse::SseEvent;

/// The largest message accepted (the framing's own limit is 16 MiB).
const MAX_MESSAGE_BYTES: u32 = 16 * 1024 * 1024;
/// Prelude: total length, headers length, prelude CRC.
const PRELUDE_BYTES: usize = 12;

/// Decodes one ConverseStream body.
#[derive(Debug, Default)]
pub struct EventStreamDecoder {
    buffer: BytesMut,
    /// A failure ended the stream: later bytes are not read.
    failed: bool,
}

impl EventStreamDecoder {
    /// A decoder at the start of a body.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one complete message from the buffer, if there is one.
    fn next_message(&mut self) -> Result<Option<Message>, StreamError> {
        if self.buffer.len() < PRELUDE_BYTES {
            return Ok(None);
        }
        let mut prelude = &self.buffer[..PRELUDE_BYTES];
        let total = prelude.get_u32();
        let headers_len = prelude.get_u32();
        let prelude_crc = prelude.get_u32();
        // The SDK's first check, before the checksums.
        if (total as usize) < PRELUDE_BYTES + 4 {
            return Err(StreamError::Protocol(
                "Provided message too short to accommodate event stream message overhead".into(),
            ));
        }
        let computed = crc32fast::hash(&self.buffer[..8]);
        if computed != prelude_crc {
            return Err(StreamError::Protocol(format!(
                "The prelude checksum specified in the message ({prelude_crc}) does not match the calculated CRC32 checksum ({computed})"
            )));
        }
        if total > MAX_MESSAGE_BYTES
            || headers_len as usize > (total as usize).saturating_sub(PRELUDE_BYTES + 4)
        {
            return Err(StreamError::Protocol(
                "Reported message length does not match received message length".into(),
            ));
        }
        let total = total as usize;
        if self.buffer.len() < total {
            return Ok(None);
        }
        let frame = self.buffer.split_to(total).freeze();
        let crc_at = total - 4;
        let sent = (&frame[crc_at..]).get_u32();
        let computed = crc32fast::hash(&frame[..crc_at]);
        if computed != sent {
            return Err(StreamError::Protocol(format!(
                "The message checksum ({computed}) did not match the expected value of {sent}"
            )));
        }
        // The checksums match (checked here for the SDK's texts); the headers' encoding is
        // the crate's to decode.
        read_message_from(frame)
            .map(Some)
            .map_err(|e| StreamError::Protocol(format!("Invalid event stream message: {e}")))
    }

    fn decode(&mut self, out: &mut Vec<SseEvent>) -> Result<(), StreamError> {
        while let Some(message) = self.next_message()? {
            if let Some(event) = to_event(&message)? {
                out.push(event);
            }
        }
        Ok(())
    }
}

/// A string header's value.
fn header<'m>(message: &'m Message, name: &str) -> Option<&'m str> {
    message
        .headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| match h.value() {
            HeaderValue::String(s) => Some(s.as_str()),
            _ => None,
        })
}

/// One message as an event (`Ok(None)`: nothing to deliver), or the failure it reports.
fn to_event(message: &Message) -> Result<Option<SseEvent>, StreamError> {
    let payload = String::from_utf8_lossy(message.payload()).into_owned();
    match header(message, ":message-type") {
        Some("event") => Ok(Some(SseEvent {
            event: Some(
                header(message, ":event-type")
                    .unwrap_or("undefined")
                    .to_owned(),
            ),
            data: payload,
            id: None,
            retry: None,
        })),
        Some("exception") => {
            let code = header(message, ":exception-type").unwrap_or("undefined");
            Err(stream_exception(code, &payload))
        }
        Some("error") => {
            let text = header(message, ":error-message")
                .filter(|m| !m.is_empty())
                .unwrap_or("UnknownError");
            Err(StreamError::ProviderException {
                code: header(message, ":error-code").unwrap_or("").to_owned(),
                message: text.to_owned(),
            })
        }
        _ => Err(StreamError::Protocol(format!(
            "Unrecognizable event type: {}",
            header(message, ":event-type").unwrap_or("undefined")
        ))),
    }
}

impl BodyDecoder for EventStreamDecoder {
    fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), StreamError> {
        if self.failed {
            return Ok(());
        }
        self.buffer.extend_from_slice(chunk);
        let decoded = self.decode(out);
        if decoded.is_err() {
            self.failed = true;
            self.buffer.clear();
        }
        decoded
    }

    fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), StreamError> {
        if self.failed {
            return Ok(());
        }
        self.decode(out)?;
        if self.buffer.is_empty() {
            Ok(())
        } else {
            self.buffer.clear();
            self.failed = true;
            Err(StreamError::Protocol(
                "Truncated event message received.".into(),
            ))
        }
    }

    fn has_unterminated_event(&self) -> bool {
        !self.buffer.is_empty()
    }
}

#[cfg(test)]
#[path = "event_stream_tests.rs"]
mod tests;
