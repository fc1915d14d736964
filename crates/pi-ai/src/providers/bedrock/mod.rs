//! The `bedrock-converse-stream` wire API: Amazon Bedrock's ConverseStream over the AWS
//! binary event stream, signed with SigV4 or sent with a Bedrock API key.
//!
//! Mirrors pi-ai 0.85.1 `api/bedrock-converse-stream.js` without the AWS SDK.
//! Layout: `event_stream` (body framing), `mapper` (stream mapping), `errors` (pi's texts).

mod errors;
pub mod event_stream;
pub mod mapper;

pub use event_stream::EventStreamDecoder;
pub use mapper::BedrockMapper;
