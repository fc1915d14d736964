//! What pi inherits from its Node.js runtime and pi-rs reproduces for every layer: the texts
//! of file-system errors and the lexical normalization of `path.resolve`.
//!
//! The bottom layer of the crate: it uses no other module of it.

pub(crate) mod fs_error;
pub(crate) mod lexical_path;
