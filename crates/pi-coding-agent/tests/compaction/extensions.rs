//! The reference's `compaction-extensions.test.ts` (network there; the faux provider here):
//! `session_before_compact` and `session_compact` through the real extension runner — their
//! order and data, the entry already saved when `session_compact` runs, a throwing handler
//! falling back to the default summary, several extensions in load order, and an extension's
//! result used whatever its values.

use crate::extensions_rig;
use crate::session_support;

use std::sync::{Arc, Mutex};

use pi_ai::providers::faux::FauxProvider;
use pi_coding_agent::compaction::CompactionResult;
use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use pi_coding_agent::session::auto_compaction::AutoCompactor;
use pi_coding_agent::session::{AgentSession, PromptOptions};
use pi_coding_agent::storage::{EntryKind, SessionStore};
use serde_json::json;

use extensions_rig::ext;
use session_support::text;

type Log = Arc<Mutex<Vec<String>>>;

/// A boxed extension as the runner's builder takes it.
struct Boxed(Box<dyn Extension>);

impl Extension for Boxed {
    fn path(&self) -> &str {
        self.0.path()
    }
    fn register(&self, pi: &mut ExtensionApi<'_>) -> Result<(), HandlerError> {
        self.0.register(pi)
    }
}

struct Setup {
    faux: FauxProvider,
    session: AgentSession,
    store: Arc<Mutex<SessionStore>>,
}

/// A session with automatic compaction (`keepRecentTokens: 1`, no retries) and `extensions`,
/// after two prompts answered `one` and `two`; `summary_steps` answer the summary calls.
async fn setup(
    summary_steps: Vec<&'static str>,
    extensions: impl FnOnce(Arc<Mutex<SessionStore>>) -> Vec<Box<dyn Extension>>,
) -> Setup {
    let faux = FauxProvider::default();
    let mut steps = vec![text("one"), text("two")];
    steps.extend(summary_steps.into_iter().map(text));
    faux.set_responses(steps);
    let store = Arc::new(Mutex::new(SessionStore::in_memory("/tmp")));
    let mut b = ExtensionRunner::builder("/tmp");
    for e in extensions(store.clone()) {
        b = b.extension(Boxed(e));
    }
    let runner = b.build();
    let hooks = ExtensionHooks::new(runner.clone());
    let serde_json::Value::Object(settings) =
        json!({"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 1}})
    else {
        unreachable!()
    };
    let f = faux.clone();
    let session = AgentSession::builder()
        .model(faux.model())
        .store(store.clone())
        .system_prompt("base prompt")
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .settings(Arc::new(Mutex::new(SettingsManager::in_memory(settings))))
        .compactor(Arc::new(AutoCompactor::new()))
        .hooks(hooks.clone())
        .build()
        .unwrap();
    hooks.attach(&session);
    for p in ["first", "second"] {
        session.prompt(p, PromptOptions::default()).await.unwrap();
    }
    Setup {
        faux,
        session,
        store,
    }
}

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

/// An extension logging both events as `<name>:before:…` / `<name>:compact:…`.
fn observer(name: &'static str, seen: Log) -> Box<dyn Extension> {
    ext(&format!("{name}.ts"), move |pi| {
        let before = seen.clone();
        pi.on::<SessionBeforeCompactEvent, _>(move |e, _| {
            before.lock().unwrap().push(format!(
                "{name}:before:{:?}:{}:{}:{}:{}",
                e.reason,
                e.custom_instructions.clone().unwrap_or_default(),
                e.preparation.messages_to_summarize.len()
                    + e.preparation.turn_prefix_messages.len(),
                e.branch_entries.len(),
                e.preparation.tokens_before > 0,
            ));
            Box::pin(async { Ok(None) })
        });
        let compact = seen.clone();
        pi.on::<SessionCompactEvent, _>(move |e, _| {
            compact.lock().unwrap().push(format!(
                "{name}:compact:{}:{}",
                e.compaction_entry.kind.type_name(),
                e.from_extension
            ));
            Box::pin(async { Ok(None) })
        });
        Ok(())
    })
}

#[tokio::test]
async fn before_compact_then_compact_with_their_data() {
    let seen = log();
    let s = {
        let seen = seen.clone();
        setup(vec!["SUMMARY", "PREFIX"], move |_| {
            vec![observer("a", seen)]
        })
        .await
    };
    let result = s
        .session
        .compact(Some("keep the tests".into()))
        .await
        .unwrap();
    assert!(result.summary.starts_with("SUMMARY"));
    // user, assistant, user summarized (history + split-turn prefix); the branch has the
    // two model/thinking entries and four messages.
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "a:before:Manual:keep the tests:3:6:true",
            "a:compact:compaction:false"
        ]
    );
    assert_eq!(s.faux.call_count(), 4);
}

#[tokio::test]
async fn the_entry_is_saved_when_session_compact_runs() {
    let seen = log();
    let s = {
        let seen = seen.clone();
        setup(vec!["SUMMARY", "PREFIX"], move |store| {
            vec![ext("check.ts", move |pi| {
                let store = store.clone();
                let seen = seen.clone();
                pi.on::<SessionCompactEvent, _>(move |e, ctx| {
                    let saved = store.lock().unwrap().contains(&e.compaction_entry.id);
                    let first = ctx
                        .session()
                        .and_then(|s| s.messages().first().map(|m| m.role().to_owned()));
                    seen.lock()
                        .unwrap()
                        .push(format!("saved:{saved}:{}", first.unwrap_or_default()));
                    Box::pin(async { Ok(None) })
                });
                Ok(())
            })]
        })
        .await
    };
    s.session.compact(None).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), ["saved:true:compactionSummary"]);
}

#[tokio::test]
async fn a_throwing_handler_falls_back_to_the_default_summary() {
    let seen = log();
    let s = {
        let seen = seen.clone();
        setup(vec!["SUMMARY", "PREFIX"], move |_| {
            vec![
                ext("throws.ts", |pi| {
                    pi.on::<SessionBeforeCompactEvent, _>(|_, _| {
                        Box::pin(async { Err(HandlerError::new("boom")) })
                    });
                    Ok(())
                }),
                observer("after", seen),
            ]
        })
        .await
    };
    let result = s.session.compact(None).await.unwrap();
    assert!(result.summary.starts_with("SUMMARY"), "{}", result.summary);
    assert_eq!(s.faux.call_count(), 4, "the default summary was requested");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen[0].starts_with("after:before:"));
    assert_eq!(seen[1], "after:compact:compaction:false");
}

/// An extension supplying `summary` (or cancelling) from `session_before_compact`.
fn supplier(name: &'static str, summary: Option<&'static str>, seen: Log) -> Box<dyn Extension> {
    ext(&format!("{name}.ts"), move |pi| {
        let seen = seen.clone();
        pi.on::<SessionBeforeCompactEvent, _>(move |e, _| {
            seen.lock().unwrap().push(name.to_owned());
            let out = summary.map(|s| CompactResult {
                cancel: false,
                compaction: Some(CompactionResult {
                    summary: s.into(),
                    first_kept_entry_id: e.preparation.first_kept_entry_id.clone(),
                    tokens_before: 999,
                    usage: None,
                    details: json!({"by": name}),
                }),
            });
            Box::pin(async move { Ok(out) })
        });
        Ok(())
    })
}

#[tokio::test]
async fn several_extensions_run_in_load_order_and_the_last_result_wins() {
    let seen = log();
    let s = {
        let seen = seen.clone();
        setup(vec![], move |_| {
            vec![
                supplier("first", Some("from first"), seen.clone()),
                supplier("second", None, seen.clone()),
                supplier("third", Some("from third"), seen.clone()),
                observer("watch", seen),
            ]
        })
        .await
    };
    let result = s.session.compact(None).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[..3], ["first", "second", "third"]);
    assert!(seen[3].starts_with("watch:before:"), "{seen:?}");
    // `session_compact` says the content came from an extension.
    assert_eq!(seen[4], "watch:compact:compaction:true");
    assert_eq!(result.summary, "from third");
    assert_eq!(s.faux.call_count(), 2, "no summary request");
    // The extension's values are written as given, with fromHook.
    let store = s.store.lock().unwrap();
    let entry = store
        .entries()
        .unwrap()
        .into_iter()
        .find(|e| e.kind.type_name() == "compaction")
        .unwrap();
    let EntryKind::Compaction {
        summary,
        tokens_before,
        details,
        from_hook,
        ..
    } = &entry.kind
    else {
        unreachable!()
    };
    assert_eq!(summary, "from third");
    assert_eq!(*tokens_before, 999);
    assert_eq!(details.as_ref(), Some(&json!({"by": "third"})));
    assert_eq!(*from_hook, Some(true));
}

/// An extension that supplies a summary (`supply`) or cancels from `session_before_compact`,
/// optionally aborting the compaction's signal first, and logs every
/// `session_compact_failed` payload as pi's JSON.
fn failing_supplier(supply: bool, abort_signal: bool, seen: Log) -> Box<dyn Extension> {
    ext("supplier.ts", move |pi| {
        pi.on::<SessionBeforeCompactEvent, _>(move |e, _| {
            if abort_signal {
                e.signal.cancel();
            }
            let out = CompactResult {
                cancel: !supply,
                compaction: supply.then(|| CompactionResult {
                    summary: "from the extension".into(),
                    first_kept_entry_id: e.preparation.first_kept_entry_id.clone(),
                    tokens_before: 999,
                    usage: None,
                    details: json!({}),
                }),
            };
            Box::pin(async move { Ok(Some(out)) })
        });
        let failed = seen.clone();
        pi.on::<SessionCompactFailedEvent, _>(move |e, _| {
            failed
                .lock()
                .unwrap()
                .push(serde_json::to_string(e).unwrap());
            Box::pin(async { Ok(None) })
        });
        Ok(())
    })
}

#[tokio::test]
async fn a_failure_after_an_extension_supplied_the_summary_says_from_extension() {
    // pi 0.85.0 `compact()`: the signal aborted after the extension supplied the content →
    // `Compaction cancelled`, `session_compact_failed {aborted:true, fromExtension:true}`.
    let seen = log();
    let s = {
        let seen = seen.clone();
        setup(vec![], move |_| vec![failing_supplier(true, true, seen)]).await
    };
    assert_eq!(
        s.session.compact(None).await.unwrap_err().to_string(),
        "Compaction cancelled"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [r#"{"reason":"manual","aborted":true,"willRetry":false,"fromExtension":true}"#]
    );
    assert_eq!(s.faux.call_count(), 2, "no summary request");
    let store = s.store.lock().unwrap();
    assert!(
        !store
            .entries()
            .unwrap()
            .iter()
            .any(|e| e.kind.type_name() == "compaction"),
        "no compaction entry is written"
    );
}

#[tokio::test]
async fn an_extension_cancel_is_not_from_extension() {
    let seen = log();
    let s = {
        let seen = seen.clone();
        setup(vec![], move |_| vec![failing_supplier(false, false, seen)]).await
    };
    assert_eq!(
        s.session.compact(None).await.unwrap_err().to_string(),
        "Compaction cancelled"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [r#"{"reason":"manual","aborted":true,"willRetry":false,"fromExtension":false}"#]
    );
}
