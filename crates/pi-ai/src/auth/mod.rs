//! Provider authentication beyond a plain API key: OAuth credentials, their refresh and what
//! a request derives from them (mirrors pi-ai 0.85.1 `auth/`).

pub mod oauth;
