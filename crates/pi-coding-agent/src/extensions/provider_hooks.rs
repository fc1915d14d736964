//! The provider hooks: `before_provider_headers`, `before_provider_request`,
//! `after_provider_response`, installed by wrapping the session's stream function.
//!
//! Mirrors the `streamFn`/`onPayload`/`onResponse` wiring of pi-coding-agent 0.85.0
//! `core/sdk.ts`: each hook runs only when a handler for it exists. One difference: pi's
//! `transformHeaders` sees the provider's complete request headers; pi-ai's Rust stream
//! options only carry the extra headers (`StreamOptions::headers`, where `None` deletes a
//! default), so handlers see and change those (see `docs/extensions.md`).

use futures::FutureExt;
use pi_agent_core::StreamFn;
use pi_ai::{Model, ResponseInfo, StreamOptions};
use std::sync::Arc;

use super::events::{
    AfterProviderResponseEvent, BeforeProviderHeadersEvent, BeforeProviderRequestEvent,
};
use super::runner::ExtensionRunner;

impl ExtensionRunner {
    /// Wraps `inner` so every request goes through the provider hooks.
    ///
    /// `before_provider_request` replaces the payload (chained; after any `on_payload` the
    /// caller set), `after_provider_response` observes status and headers before the body,
    /// and `before_provider_headers` edits the request's headers before the request starts
    /// (the stream is then forwarded from a task; dropping it still cancels the request).
    pub fn wrap_stream_fn(&self, inner: StreamFn) -> StreamFn {
        let runner = self.clone();
        Arc::new(move |model: Model, context, mut options: StreamOptions| {
            runner.install_payload_hooks(&mut options);
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

    fn install_payload_hooks(&self, options: &mut StreamOptions) {
        if self.has_handlers::<BeforeProviderRequestEvent>() {
            let runner = self.clone();
            let previous = options.on_payload.take();
            options.on_payload = Some(Arc::new(move |payload, model: Model| {
                let runner = runner.clone();
                let previous = previous.clone();
                async move {
                    let payload = match previous {
                        Some(p) => p(payload.clone(), model).await?.unwrap_or(payload),
                        None => payload,
                    };
                    Ok(Some(runner.emit_before_provider_request(payload).await))
                }
                .boxed()
            }));
        }
        if self.has_handlers::<AfterProviderResponseEvent>() {
            let runner = self.clone();
            let previous = options.on_response.take();
            options.on_response = Some(Arc::new(move |response: ResponseInfo, model: Model| {
                let runner = runner.clone();
                let previous = previous.clone();
                async move {
                    if let Some(p) = previous {
                        p(response.clone(), model).await?;
                    }
                    runner
                        .emit(AfterProviderResponseEvent {
                            status: response.status,
                            headers: response.headers,
                        })
                        .await;
                    Ok(())
                }
                .boxed()
            }));
        }
    }
}
