//! Errors raised before a stream exists.
//!
//! Failures during a request are reported inside the stream as an `error` event;
//! only the entry points that fail early (`stream_simple` without a key, an unknown
//! API) return [`Error`].

/// pi-ai's error type.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `No API key for provider: <p>`.
    #[error("No API key for provider: {0}")]
    NoApiKey(String),
    /// `No API provider registered for api: <api>`.
    #[error("No API provider registered for api: {0}")]
    UnknownApi(String),
    /// `Mismatched api: <x> expected <y>`.
    #[error("Mismatched api: {got} expected {expected}")]
    MismatchedApi {
        /// The model's api.
        got: String,
        /// The adapter's api.
        expected: String,
    },
    /// Tool-argument validation failure (text as pi formats it).
    #[error("{0}")]
    Validation(String),
}

/// `Result<T, pi_ai::Error>`.
pub type Result<T> = std::result::Result<T, Error>;
