//! The API key of each request, resolved inside the request's stream.
//!
//! Mirrors pi-coding-agent 0.85.0 `sdk.js` + pi-ai 0.85.1 `lazyStream`: the session's stream
//! function asks the model runtime for the provider's auth as the request is set up, and a
//! failure there (a `models.json` key command that exits non-zero, an unset `$VAR`) ends that
//! request as a stream error, not the run: the assistant message has no content,
//! `stopReason: "error"` and the resolver's text (`API key auth failed for provider <p>:
//! <cause>`), and the loop ends normally (`turn_end`, `agent_end` with every message of the
//! run, the auto-retry check). pi-agent-core's `getApiKey` hook, whose failure fails the whole
//! run, is not what pi uses.

use std::sync::Arc;

use pi_agent_core::StreamFn;
use pi_ai::{AssistantMessage, AssistantMessageEventStream};

use super::prompt::AuthSource;

/// `stream_fn` with the base URL, key and headers of `auth` filled in for each request
/// ([`AuthSource::request_base_url`] replaces the model's URL when it has placeholders): a key the
/// request already carries wins (pi: `options.apiKey ?? auth.apiKey`), an empty key counts as
/// none; the configured headers ([`AuthSource::request_headers`]) go before the request's own
/// headers, which win. A resolution error is returned as an error-only stream with
/// [`AssistantMessage::setup_error`], and nothing is sent.
///
/// When the provider's OAuth credential is due for a refresh ([`AuthSource::prepare_request`]),
/// the request waits for it inside the returned stream; a failed refresh ends the request with
/// its text, before anything is sent.
pub fn with_request_auth(auth: Arc<dyn AuthSource>, stream_fn: StreamFn) -> StreamFn {
    Arc::new(move |model: pi_ai::Model, context, options| {
        let Some(prepare) = auth.prepare_request(&model) else {
            return apply_auth(auth.as_ref(), &stream_fn, model, context, options);
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return apply_auth(auth.as_ref(), &stream_fn, model, context, options);
        };
        let (mut sink, stream) = pi_ai::event_channel(None);
        let auth = Arc::clone(&auth);
        let stream_fn = Arc::clone(&stream_fn);
        runtime.spawn(async move {
            let mut inner = match prepare.await {
                Ok(()) => apply_auth(auth.as_ref(), &stream_fn, model, context, options),
                Err(e) => AssistantMessageEventStream::error_only(AssistantMessage::setup_error(
                    &model.api,
                    &model.provider,
                    &model.id,
                    e.to_string(),
                )),
            };
            while let Some(event) = inner.next_event().await {
                if !sink.push(event).await {
                    break;
                }
            }
        });
        stream
    })
}

fn apply_auth(
    auth: &dyn AuthSource,
    stream_fn: &StreamFn,
    mut model: pi_ai::Model,
    context: pi_ai::Context,
    mut options: pi_ai::StreamOptions,
) -> AssistantMessageEventStream {
    {
        if let Some(url) = auth.request_base_url(&model) {
            model.base_url = url;
        }
        let fail = |text: String| {
            AssistantMessageEventStream::error_only(AssistantMessage::setup_error(
                &model.api,
                &model.provider,
                &model.id,
                text,
            ))
        };
        if options.api_key.as_deref().is_none_or(str::is_empty) {
            match auth.resolve_api_key(&model.provider) {
                Ok(key) => options.api_key = key.filter(|k| !k.is_empty()),
                Err(e) => return fail(e.to_string()),
            }
        }
        match auth.request_headers(&model, options.api_key.as_deref()) {
            Ok(headers) if headers.is_empty() => {}
            Ok(headers) => {
                let own = std::mem::take(&mut options.headers);
                options.headers = headers;
                options.headers.extend(own);
            }
            Err(e) => return fail(e.to_string()),
        }
        stream_fn(model, context, options)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use pi_ai::{Context, Model, StopReason, StreamOptions};

    use super::*;
    use crate::config::registry::RequestAuthError;
    use crate::config::resolve_value::ResolveError;

    /// A configured key per provider: `Ok` for `good` and `headers`, empty for `blank`, an
    /// error otherwise; headers for `headers` (an error for `bad-header`).
    struct Keys;
    impl AuthSource for Keys {
        fn has_auth(&self, _provider: &str) -> bool {
            true
        }
        fn resolve_api_key(&self, provider: &str) -> Result<Option<String>, RequestAuthError> {
            match provider {
                "good" | "headers" | "bad-header" => Ok(Some("configured".into())),
                "blank" => Ok(Some(String::new())),
                p => Err(RequestAuthError::ProviderAuth {
                    provider: p.to_owned(),
                    cause: ResolveError::Command {
                        description: format!("API key for provider \"{p}\""),
                        command: "exit 3".into(),
                    },
                }),
            }
        }
        fn request_headers(
            &self,
            model: &Model,
            api_key: Option<&str>,
        ) -> Result<Vec<(String, Option<String>)>, RequestAuthError> {
            match model.provider.as_str() {
                "headers" => Ok(vec![
                    ("X-Team".into(), Some("blue".into())),
                    ("X-Key".into(), Some(api_key.unwrap_or("none").into())),
                    ("X-Over".into(), Some("configured".into())),
                ]),
                "bad-header" => Err(RequestAuthError::Resolve(ResolveError::Unresolved {
                    description: "model \"bad-header/m\" header".into(),
                })),
                _ => Ok(Vec::new()),
            }
        }
    }

    /// A stream function that records the key of each request (and its headers, in
    /// `headers`) and answers with an empty message.
    fn recording(seen: Arc<Mutex<Vec<Option<String>>>>) -> StreamFn {
        recording_with_headers(seen, Arc::default())
    }

    type Headers = Arc<Mutex<Vec<Vec<(String, Option<String>)>>>>;

    fn recording_with_headers(seen: Arc<Mutex<Vec<Option<String>>>>, headers: Headers) -> StreamFn {
        Arc::new(move |model: Model, _context, options: StreamOptions| {
            seen.lock().unwrap().push(options.api_key.clone());
            headers.lock().unwrap().push(options.headers.clone());
            let mut m = AssistantMessage::empty(&model.api, &model.provider, &model.id);
            m.stop_reason = StopReason::Stop;
            AssistantMessageEventStream::from_events(vec![pi_ai::AssistantMessageEvent::Done {
                reason: StopReason::Stop,
                message: Box::new(m),
            }])
        })
    }

    fn model(provider: &str) -> Model {
        Model {
            id: "m".into(),
            api: "openai-completions".into(),
            provider: provider.into(),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn the_resolved_key_fills_a_request_without_one() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let f = with_request_auth(Arc::new(Keys), recording(seen.clone()));
        f(model("good"), Context::default(), StreamOptions::default())
            .result()
            .await;
        let carried = StreamOptions {
            api_key: Some("given".into()),
            ..Default::default()
        };
        f(model("good"), Context::default(), carried).result().await;
        // A key the request carries wins, even where resolving would fail.
        let carried = StreamOptions {
            api_key: Some("given".into()),
            ..Default::default()
        };
        f(model("broken"), Context::default(), carried)
            .result()
            .await;
        f(model("blank"), Context::default(), StreamOptions::default())
            .result()
            .await;
        assert_eq!(
            *seen.lock().unwrap(),
            [
                Some("configured".into()),
                Some("given".into()),
                Some("given".into()),
                None
            ]
        );
    }

    #[tokio::test]
    async fn a_resolution_error_ends_the_request_before_it_is_sent() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let f = with_request_auth(Arc::new(Keys), recording(seen.clone()));
        let m = f(
            model("broken"),
            Context::default(),
            StreamOptions::default(),
        )
        .result()
        .await;
        assert!(seen.lock().unwrap().is_empty(), "nothing was sent");
        assert_eq!(m.stop_reason, StopReason::Error);
        assert!(m.content.is_empty());
        assert!(m.error_before_timestamp);
        assert_eq!(
            m.error_message.as_deref(),
            Some(
                "API key auth failed for provider broken: Failed to resolve API key for provider \"broken\" from shell command: exit 3"
            )
        );
        assert_eq!(
            (m.api.as_str(), m.provider.as_str(), m.model.as_str()),
            ("openai-completions", "broken", "m")
        );
    }

    /// Configured headers go before the request's own (which win in the provider's merge) and
    /// see the key the request carries; a header that cannot be resolved ends the request.
    #[tokio::test]
    async fn configured_headers_come_first_and_a_failing_one_ends_the_request() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let headers: Headers = Arc::default();
        let f = with_request_auth(
            Arc::new(Keys),
            recording_with_headers(seen.clone(), headers.clone()),
        );
        let own = StreamOptions {
            headers: vec![
                ("X-Over".into(), Some("own".into())),
                ("X-Gone".into(), None),
            ],
            ..Default::default()
        };
        f(model("headers"), Context::default(), own).result().await;
        f(model("good"), Context::default(), StreamOptions::default())
            .result()
            .await;
        let some = |k: &str, v: &str| (k.to_owned(), Some(v.to_owned()));
        assert_eq!(
            *headers.lock().unwrap(),
            [
                vec![
                    some("X-Team", "blue"),
                    some("X-Key", "configured"),
                    some("X-Over", "configured"),
                    some("X-Over", "own"),
                    ("X-Gone".to_owned(), None),
                ],
                vec![],
            ]
        );
        let m = f(
            model("bad-header"),
            Context::default(),
            StreamOptions::default(),
        )
        .result()
        .await;
        assert_eq!(
            seen.lock().unwrap().len(),
            2,
            "the failing request was not sent"
        );
        assert_eq!(
            m.error_message.as_deref(),
            Some("Failed to resolve model \"bad-header/m\" header")
        );
        assert!(m.error_before_timestamp && m.content.is_empty());
    }
}
