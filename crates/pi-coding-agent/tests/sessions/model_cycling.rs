//! Model and thinking-level switching with extensions: `model_select {source}` from
//! `set_model` / `cycle_model`, `thinking_level_select` from `set_thinking_level` /
//! `cycle_thinking_level` and from the clamp of a model switch, and the saved thinking
//! preference kept through a non-reasoning model. Ports the offline case of pi 0.85.0's
//! `agent-session-model-switch-thinking.test.ts` onto the faux provider.

use crate::extensions_rig;

use std::sync::{Arc, Mutex};

use pi_ai::ModelThinkingLevel;
use pi_ai::providers::faux::{FauxModelDefinition, FauxOptions, FauxProvider};
use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::extensions::events::*;
use pi_coding_agent::extensions::*;
use pi_coding_agent::session::{AgentSession, ScopedModel};
use pi_coding_agent::storage::{EntryKind, SessionStore};
use serde_json::{Map, json};

use extensions_rig::{Log, entries, ext, log};

struct Fixture {
    faux: FauxProvider,
    session: AgentSession,
    hooks: Arc<ExtensionHooks>,
    settings: Arc<Mutex<SettingsManager>>,
    store: Arc<Mutex<SessionStore>>,
}

/// Models `reasoner` (reasoning) and `plain` (not); the session starts on `reasoner` at
/// `high` with settings `defaultThinkingLevel: high` and an extension logging
/// `model_select` and `thinking_level_select`.
fn fixture(l: &Log) -> Fixture {
    let faux = FauxProvider::new(FauxOptions {
        models: vec![
            FauxModelDefinition {
                id: "reasoner".into(),
                reasoning: true,
                ..Default::default()
            },
            FauxModelDefinition {
                id: "plain".into(),
                ..Default::default()
            },
        ],
        ..Default::default()
    });
    let (a, b) = (l.clone(), l.clone());
    let runner = ExtensionRunner::builder("/tmp")
        .extension(FnExtension::new("watch.ts", move |pi| {
            let a = a.clone();
            pi.on::<ModelSelectEvent, _>(move |e, _| {
                let line = format!(
                    "model:{}<-{}:{}",
                    e.model.id,
                    e.previous_model.as_ref().map_or("none", |m| m.id.as_str()),
                    serde_json::to_value(e.source).unwrap().as_str().unwrap()
                );
                a.lock().unwrap().push(line);
                Box::pin(async { Ok(None) })
            });
            let b = b.clone();
            pi.on::<ThinkingLevelSelectEvent, _>(move |e, _| {
                let line = format!(
                    "thinking:{}<-{}",
                    e.level.as_str(),
                    e.previous_level.as_str()
                );
                b.lock().unwrap().push(line);
                Box::pin(async { Ok(None) })
            });
            Ok(())
        }))
        .build();
    let hooks = ExtensionHooks::new(runner.clone());
    let mut global = Map::new();
    global.insert("defaultThinkingLevel".into(), json!("high"));
    let settings = Arc::new(Mutex::new(SettingsManager::in_memory(global)));
    let store = Arc::new(Mutex::new(SessionStore::in_memory("/tmp")));
    let f = faux.clone();
    let session = AgentSession::builder()
        .model(faux.get_model("reasoner").unwrap())
        .thinking_level(ModelThinkingLevel::High)
        .settings(settings.clone())
        .store(store.clone())
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .hooks(hooks.clone())
        .build()
        .unwrap();
    hooks.attach(&session);
    Fixture {
        faux,
        session,
        hooks,
        settings,
        store,
    }
}

impl Fixture {
    fn model(&self, id: &str) -> pi_ai::Model {
        self.faux.get_model(id).unwrap()
    }

    fn all(&self) -> Vec<pi_ai::Model> {
        vec![self.model("reasoner"), self.model("plain")]
    }

    fn default_level(&self) -> Option<ModelThinkingLevel> {
        self.settings.lock().unwrap().default_thinking_level()
    }

    /// The `thinkingLevel` of every `thinking_level_change` entry.
    fn level_entries(&self) -> Vec<String> {
        let store = self.store.lock().unwrap();
        store
            .entries()
            .unwrap()
            .iter()
            .filter_map(|e| match &e.kind {
                EntryKind::ThinkingLevelChange { thinking_level } => Some(thinking_level.clone()),
                _ => None,
            })
            .collect()
    }

    /// Every logged line, in the order the handlers ran.
    async fn flushed_in_order(&self, l: &Log) -> Vec<String> {
        self.hooks.runner().flush_detached().await;
        std::mem::take(&mut *l.lock().unwrap())
    }

    /// The logged `model_select` and `thinking_level_select` lines, each in its own order.
    async fn flushed(&self, l: &Log) -> (Vec<String>, Vec<String>) {
        self.hooks.runner().flush_detached().await;
        std::mem::take(&mut *l.lock().unwrap())
            .into_iter()
            .partition(|line| line.starts_with("model:"))
    }
}

#[tokio::test]
async fn the_saved_thinking_preference_survives_a_non_reasoning_model() {
    let l = log();
    let f = fixture(&l);
    let initial = f.level_entries().len();
    f.session.set_scoped_models(vec![
        ScopedModel {
            model: f.model("reasoner"),
            thinking_level: None,
        },
        ScopedModel {
            model: f.model("plain"),
            thinking_level: None,
        },
    ]);

    f.session.set_model(f.model("plain"), false).await.unwrap();
    assert_eq!(f.session.thinking_level(), ModelThinkingLevel::Off);
    assert_eq!(f.default_level(), Some(ModelThinkingLevel::High));

    f.session
        .set_model(f.model("reasoner"), false)
        .await
        .unwrap();
    assert_eq!(f.session.thinking_level(), ModelThinkingLevel::High);

    f.session.cycle_model(true, &f.all(), false).await.unwrap();
    assert_eq!(f.session.thinking_level(), ModelThinkingLevel::Off);
    assert_eq!(f.default_level(), Some(ModelThinkingLevel::High));

    f.session.cycle_model(true, &f.all(), false).await.unwrap();
    assert_eq!(f.session.thinking_level(), ModelThinkingLevel::High);
    assert_eq!(f.default_level(), Some(ModelThinkingLevel::High));
    assert_eq!(f.level_entries()[initial..], ["off", "high", "off", "high"]);

    // As in pi: a switch's `thinking_level_select` handlers run before its `model_select`.
    assert_eq!(
        f.flushed_in_order(&l).await,
        [
            "thinking:off<-high",
            "model:plain<-reasoner:set",
            "thinking:high<-off",
            "model:reasoner<-plain:set",
            "thinking:off<-high",
            "model:plain<-reasoner:cycle",
            "thinking:high<-off",
            "model:reasoner<-plain:cycle",
        ]
    );
}

#[tokio::test]
async fn cycling_fires_model_select_with_source_cycle_and_thinking_level_select() {
    let l = log();
    let f = fixture(&l);
    // Forward from `reasoner` to `plain`, backward (wrapping) to `reasoner` again.
    let r = f
        .session
        .cycle_model(true, &f.all(), false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((r.model.id.as_str(), r.is_scoped), ("plain", false));
    let r = f
        .session
        .cycle_model(false, &f.all(), false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.model.id, "reasoner");
    assert_eq!(r.thinking_level, ModelThinkingLevel::High);
    // One model: nothing to cycle, no event.
    assert!(
        f.session
            .cycle_model(true, &f.all()[..1], false)
            .await
            .unwrap()
            .is_none()
    );

    let levels = f.session.available_thinking_levels();
    let high = levels
        .iter()
        .position(|l| *l == ModelThinkingLevel::High)
        .unwrap();
    let next = f.session.cycle_thinking_level().unwrap().unwrap();
    assert_eq!(next, levels[(high + 1) % levels.len()]);
    // Setting the current level again fires nothing.
    f.session.set_thinking_level(next).unwrap();

    let expected_cycle = format!("thinking:{}<-high", next.as_str());
    let (models, levels) = f.flushed(&l).await;
    assert_eq!(
        models,
        ["model:plain<-reasoner:cycle", "model:reasoner<-plain:cycle"]
    );
    assert_eq!(
        levels,
        [
            "thinking:off<-high",
            "thinking:high<-off",
            expected_cycle.as_str(),
        ]
    );

    // A model that does not reason has no levels to cycle.
    f.session.set_model(f.model("plain"), false).await.unwrap();
    f.flushed(&l).await;
    assert_eq!(f.session.cycle_thinking_level().unwrap(), None);
    assert_eq!(f.flushed(&l).await, (vec![], vec![]));
}

#[tokio::test]
async fn user_bash_from_an_extension_is_recorded_and_unhandled_commands_run() {
    let l = log();
    let a = l.clone();
    let r = extensions_rig::rig(
        vec![],
        vec![ext("bash.ts", move |pi| {
            let a = a.clone();
            pi.on::<UserBashEvent, _>(move |e, _| {
                a.lock().unwrap().push(format!(
                    "user_bash:{}:{}:{}",
                    e.command, e.exclude_from_context, e.cwd
                ));
                let handled = e.command == "fake";
                Box::pin(async move {
                    Ok(handled.then(|| UserBashResult {
                        result: pi_coding_agent::tools::bash::user::BashResult {
                            output: "from extension".into(),
                            exit_code: Some(3),
                            ..Default::default()
                        },
                    }))
                })
            });
            Ok(())
        })],
    );
    let opts = |exclude| pi_coding_agent::session::ExecuteBashOptions {
        exclude_from_context: Some(exclude),
        id: None,
    };
    let fake = r
        .hooks
        .user_bash(&r.session, "fake", opts(false), |_| {})
        .await
        .unwrap();
    assert_eq!(
        (fake.output.as_str(), fake.exit_code),
        ("from extension", Some(3))
    );
    let real = r
        .hooks
        .user_bash(&r.session, "printf real", opts(true), |_| {})
        .await
        .unwrap();
    assert_eq!((real.output.as_str(), real.exit_code), ("real", Some(0)));
    assert_eq!(
        entries(&l),
        [
            "user_bash:fake:false:/tmp",
            "user_bash:printf real:true:/tmp"
        ]
    );
    // Both are in the transcript as bash executions; only the first counts for the model.
    let recorded: Vec<serde_json::Value> = r
        .session
        .messages()
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .filter(|m| m["role"] == "bashExecution")
        .map(|m| {
            json!([
                m["command"],
                m["output"],
                m["exitCode"],
                m["excludeFromContext"]
            ])
        })
        .collect();
    assert_eq!(
        recorded,
        [
            json!(["fake", "from extension", 3, false]),
            json!(["printf real", "real", 0, true]),
        ]
    );
}
