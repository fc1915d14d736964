//! Cross-crate library tests for the pi-rs workspace live in `tests/tests/`.
