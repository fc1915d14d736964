//! Extensions as processes: any program that speaks the extension protocol
//! (`docs/extension-protocol.md`), started from a manifest and plugged into the
//! [`ExtensionRunner`](super::ExtensionRunner) as one more extension.
//!
//! | module | job |
//! |---|---|
//! | [`manifest`] | the manifest `{command, args, env, eventTimeoutMs, cancelGraceMs}` |
//! | [`framing`] | LF-delimited records with a size cap |
//! | [`connection`] | the process (own group, fds 3/4) and its JSON-RPC calls, deadlines, death |
//! | [`extension`] | [`RemoteExtension`]: the handshake and the registration into a runner |
//! | [`events`] | each event's object and answer on the wire |
//! | [`tool`] | a registered tool: streamed, cancellable `tool/execute` |
//! | [`mirror`] | the incremental copy of the session the extension reads `ctx` from |
//! | [`host_requests`] | the extension's `pi.*` and `ctx.ui.*` requests |

pub mod connection;
pub mod events;
pub mod extension;
pub mod framing;
pub mod host_requests;
pub mod manifest;
pub mod mirror;
pub mod tool;

pub use extension::{PROTOCOL_VERSION, RemoteExtension};
pub use manifest::Manifest;
