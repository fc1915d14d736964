//! `before_provider_headers`, installed by wrapping the session's stream function
//! (`before_provider_request` and `after_provider_response` come through the session's
//! `SessionHooks`, which installs the agent's `on_payload`/`on_response`).
//!
//! Mirrors the `streamFn` `transformHeaders` wiring of pi-coding-agent 0.85.0 `core/sdk.ts`:
//! the hook runs only when a handler exists. One difference: pi's `transformHeaders` sees the
//! provider's complete request headers; pi-ai's Rust stream options only carry the extra
//! headers (`StreamOptions::headers`, where `None` deletes a default), so handlers see and
//! change those (see `docs/extensions.md`).

use pi_agent_core::StreamFn;
use pi_ai::{Model, StreamOptions};
use std::sync::Arc;

use super::events::BeforeProviderHeadersEvent;
use super::runner::ExtensionRunner;

impl ExtensionRunner {
    /// Wraps `inner` so `before_provider_headers` handlers edit each request's headers
    /// before it starts (the stream is then forwarded from a task; dropping it still cancels
    /// the request). Without handlers, `inner` is called directly.
    pub fn wrap_stream_fn(&self, inner: StreamFn) -> StreamFn {
        let runner = self.clone();
        Arc::new(move |model: Model, context, mut options: StreamOptions| {
            if !runner.has_handlers::<BeforeProviderHeadersEvent>() {
                return inner(model, context, options);
            }
            let Ok(handle) = tokio::runtime::Handle::try_current() else {
                return inner(model, context, options);
            };
            let (mut sink, stream) = pi_ai::event_channel(None);
            let runner = runner.clone();
            let inner = Arc::clone(&inner);
            handle.spawn(async move {
                let headers = std::mem::take(&mut options.headers);
                options.headers = runner.emit_before_provider_headers(headers).await;
                let mut upstream = inner(model, context, options);
                while let Some(event) = upstream.next_event().await {
                    if !sink.push(event).await {
                        break;
                    }
                }
            });
            stream
        })
    }
}
