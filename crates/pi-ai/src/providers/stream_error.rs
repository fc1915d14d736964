//! Why a request failed: the typed form of the `errorMessage` an `error` event carries.
//!
//! pi's adapters throw, and the stream's `error` event carries the thrown message. Here every
//! failure of the request path — building the request ([`super::WireApi::build_request`]), the
//! transport ([`super::driver`]), mapping the stream ([`super::StreamMapper`]), the caller's
//! hooks — is a [`StreamError`], and its `Display` text is exactly the `errorMessage` pi 0.85.1
//! reports for the same failure. The driver turns it into that text at the one place the
//! stream ends ([`super::driver::stream_wire`]); nothing above the stream sees the type.
//!
//! Layers: the mappers' own parse failures ([`crate::js_json_error`]), strict-schema failures
//! ([`StrictSchemaError`]) and hook failures ([`crate::StreamHookError`]) convert into a
//! variant here; the retry classifier ([`crate::retryable`]) reads the resulting text, as pi's
//! reads `errorMessage`.

use crate::sse::SseError;
use crate::types::StreamHookError;

/// A failure of one request, before or while streaming. `Display` is pi's `errorMessage`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// No key for the model's provider (the APIs that require one): `No API key for provider: <p>`.
    #[error("No API key for provider: {0}")]
    NoApiKey(String),
    /// The request URL (`baseUrl` + route) does not parse: `Invalid URL` (the WHATWG `URL`
    /// constructor's message); nothing is sent.
    #[error("Invalid URL")]
    InvalidUrl,
    /// A configured header name cannot be sent: `Invalid header name: <name>`.
    #[error("Invalid header name: {0}")]
    InvalidHeaderName(String),
    /// A configured header value cannot be sent (the value is not shown: it may be a
    /// credential): `Invalid value for header <name>`.
    #[error("Invalid value for header {0}")]
    InvalidHeaderValue(String),
    /// A tool with `constrainedSampling.strict: "require"` cannot be sent strictly:
    /// `Tool "<name>" requires JSON-schema constrained sampling, but <reason>.`
    #[error("Tool \"{tool}\" requires JSON-schema constrained sampling, but {reason}.")]
    ConstrainedSampling {
        /// The tool's name.
        tool: String,
        /// Why its schema has no strict form (or the API has no strict tools).
        reason: StrictSchemaError,
    },
    /// A model's thinking-level map names a level the API does not know:
    /// `Unsupported Google thinking level mapping for <provider>/<id>: <level> -> <mapped>`.
    #[error("Unsupported Google thinking level mapping for {model}: {level} -> {mapped}")]
    UnsupportedThinkingLevel {
        /// `<provider>/<id>`.
        model: String,
        /// The requested level.
        level: String,
        /// The map entry as JavaScript shows it (`null`, `undefined` or the string).
        mapped: String,
    },
    /// The provider's configuration (environment variables, `baseUrl`) cannot make a request,
    /// e.g. `Azure OpenAI base URL is required. …`: pi's text; nothing is sent.
    #[error("{0}")]
    Config(String),
    /// The request body could not be encoded as JSON (serde_json's message).
    #[error("{0}")]
    Encode(String),
    /// The proxy the environment names (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`) is unusable:
    /// its text; nothing is sent.
    #[error("{0}")]
    Proxy(String),
    /// The API's credentials could not be obtained (`WireApi::authorize`, e.g. Google Vertex
    /// application-default credentials): its text, as pi reports it.
    #[error("{0}")]
    Credentials(String),
    /// The caller cancelled before the response started: `Request aborted` (pi's retry
    /// wrapper).
    #[error("Request aborted")]
    RequestAborted,
    /// The caller cancelled mid-stream: the API's own text (`Request was aborted`,
    /// `This operation was aborted`).
    #[error("{0}")]
    Aborted(&'static str),
    /// No response headers: the API's connection-failure or timeout text
    /// (`Connection error.`, `Request timed out.`, `fetch failed`).
    #[error("{0}")]
    Transport(String),
    /// The body stalled past the idle limit or was cut: `terminated` (undici's body error).
    #[error("terminated")]
    Terminated,
    /// A non-2xx response, formatted as the API's SDK formats it (`<status> <body>`, …).
    #[error("{0}")]
    Http(String),
    /// A `retry-after` delay that is not a number: `Server requested an invalid retry delay.
    /// <error>`.
    #[error("Server requested an invalid retry delay. {message}")]
    InvalidRetryDelay {
        /// The failed attempt's `errorMessage`.
        message: String,
    },
    /// A `retry-after` delay above `maxRetryDelayMs`:
    /// `Server requested <n>s retry delay (max: <m>s). <error>`.
    #[error("Server requested {requested_s}s retry delay (max: {max_s}s). {message}")]
    RetryDelayTooLong {
        /// The requested delay, in whole seconds rounded up.
        requested_s: i64,
        /// The limit, in whole seconds rounded up.
        max_s: i64,
        /// The failed attempt's `errorMessage`.
        message: String,
    },
    /// The SSE framing failed (an oversized event).
    #[error(transparent)]
    Sse(#[from] SseError),
    /// A data line is not the JSON the API sends: JavaScript's `JSON.parse` message (as the
    /// SDK reports it).
    #[error("{0}")]
    Json(String),
    /// An event that parses but breaks the API's protocol (e.g. Google `partialArgs` out of
    /// order): what is wrong with it.
    #[error("{0}")]
    Protocol(String),
    /// The provider reported the failure itself (an error frame, a failed response, an error
    /// stop reason): its text, as pi builds it.
    #[error("{0}")]
    Provider(String),
    /// The provider reported the failure under an error code of its own (Bedrock's exception
    /// names, e.g. `ThrottlingException`): `Display` is `message`, pi's text; the code is
    /// for [`super::WireApi::failure_diagnostic`].
    #[error("{message}")]
    ProviderException {
        /// The provider's error code, as the stream named it.
        code: String,
        /// pi's `errorMessage`.
        message: String,
    },
    /// The stream ended before the API's terminal event, e.g. `Anthropic stream ended before
    /// message_stop`.
    #[error("{0}")]
    Incomplete(&'static str),
    /// A stop reason the API's mapping does not know: `Unhandled stop reason: <reason>`.
    #[error("Unhandled stop reason: {0}")]
    UnhandledStopReason(String),
    /// A response that ended failed without a message of its own: `An unknown error occurred`.
    #[error("An unknown error occurred")]
    Unknown,
    /// `on_payload` or `on_response` failed: its message.
    #[error(transparent)]
    Hook(#[from] StreamHookError),
}

/// Why a JSON schema has no strict (constrained-sampling) form; `Display` is pi's reason
/// (`makeStrictJsonSchema` in pi-ai 0.85.1 `api/constrained-sampling.js`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StrictSchemaError {
    /// The API has no strict tools.
    #[error("strict tools are unsupported")]
    StrictToolsUnsupported,
    /// The root is not an object schema.
    #[error("root schema must have type object")]
    RootNotObject,
    /// A `true`/`false` schema.
    #[error("boolean schemas are unsupported")]
    BooleanSchema,
    /// A keyword strict mode cannot express (`allOf`, `not`, `if`, …).
    #[error("{0} schemas are unsupported")]
    UnsupportedKeyword(&'static str),
    /// `anyOf: []`.
    #[error("anyOf must contain at least one schema")]
    EmptyAnyOf,
    /// An `anyOf` variant that is an object or array.
    #[error("object and array unions are unsupported")]
    StructuredUnion,
    /// `items` as an array (a tuple).
    #[error("tuple schemas are unsupported")]
    TupleSchema,
    /// `properties` without `type: object`.
    #[error("properties require type object")]
    PropertiesWithoutObject,
    /// `additionalProperties` other than `false`.
    #[error("schema-valued or true additionalProperties is unsupported")]
    AdditionalProperties,
    /// `properties` that is not a map.
    #[error("object properties must be a schema map")]
    PropertiesNotMap,
    /// `required` that is not an array of strings.
    #[error("object required must be a string array")]
    RequiredNotStrings,
    /// `required` names a property that `properties` lacks.
    #[error("required contains an unknown property")]
    RequiredUnknown,
}
