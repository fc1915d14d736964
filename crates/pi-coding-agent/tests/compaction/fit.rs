//! The summarization request fits the summarizing model's window (pi-rs's own behaviour,
//! `compaction::fit`): a session whose context is three times the window compacts, every
//! summary request the faux provider receives fits `contextWindow − maxTokens`, and the
//! session goes on; the split turn's two requests and the update of a previous summary are
//! fitted too.

use crate::session_support;

use std::sync::{Arc, Mutex};

use pi_agent_core::AgentMessage;
use pi_ai::providers::faux::{
    FauxMessageOptions, FauxModelDefinition, FauxOptions, FauxProvider, FauxStep,
    faux_assistant_message, faux_text,
};
use pi_ai::{Context, Message, StreamOptions, UserContent, UserMessage};
use pi_coding_agent::compaction::fit::{estimate_text_tokens, js_len};
use pi_coding_agent::compaction::{
    CompactionPreparation, CompactionSettings, FileOps, Summarizer, SummaryRetry,
};
use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::session::auto_compaction::AutoCompactor;
use pi_coding_agent::session::{AgentSession, AgentSessionEvent, PromptOptions};
use pi_coding_agent::storage::SessionStore;
use serde_json::{Value, json};
use session_support::{Echo, echo_call, text};
use tokio_util::sync::CancellationToken;

const WINDOW: u64 = 8000;

fn faux() -> FauxProvider {
    FauxProvider::new(FauxOptions {
        models: vec![FauxModelDefinition {
            id: "small-window".into(),
            context_window: Some(WINDOW),
            max_tokens: Some(4096),
            ..Default::default()
        }],
        ..Default::default()
    })
}

/// `ceil(chars / 4)` of the request's system prompt and message texts.
fn request_tokens(context: &Context) -> u64 {
    let mut chars = context.system_prompt.as_deref().map_or(0, js_len);
    for m in &context.messages {
        if let Message::User(u) = m {
            chars += u
                .content
                .to_blocks()
                .iter()
                .filter_map(UserContent::as_text)
                .map(js_len)
                .sum::<usize>();
        }
    }
    estimate_text_tokens(chars)
}

/// What a summary request looked like: `(estimated tokens, maxTokens, whether messages were
/// left out)`.
type Seen = Arc<Mutex<Vec<(u64, u64, bool)>>>;

/// A summary answer that first checks the request fits `window − maxTokens` (an error
/// response otherwise, which fails the compaction) and records it in `seen`.
fn fitting_summary(answer: &'static str, seen: Seen) -> FauxStep {
    FauxStep::factory(
        move |context: &Context, options: &StreamOptions, _, model| {
            let max = options.max_tokens.unwrap_or(0);
            let tokens = request_tokens(context);
            let dropped = format!("{:?}", context.messages).contains("earlier messages omitted");
            seen.lock().unwrap().push((tokens, max, dropped));
            if tokens > model.context_window - max {
                return Err(format!(
                    "summary request of {tokens} tokens exceeds {} − {max}",
                    model.context_window
                )
                .into());
            }
            Ok(faux_assistant_message(
                vec![faux_text(answer)],
                FauxMessageOptions::default(),
            ))
        },
    )
}

fn settings(v: Value) -> Arc<Mutex<SettingsManager>> {
    let Value::Object(m) = v else { unreachable!() };
    Arc::new(Mutex::new(SettingsManager::in_memory(m)))
}

#[tokio::test]
async fn a_session_three_times_the_window_compacts_and_goes_on() {
    let faux = faux();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut steps = Vec::new();
    for i in 0..5 {
        steps.push(echo_call(&format!("c{i}"), &format!("{i}").repeat(8000)));
        steps.push(text(&format!("done {i}")));
    }
    steps.push(fitting_summary("HISTORY", seen.clone()));
    steps.push(fitting_summary("PREFIX", seen.clone()));
    let next_context = Arc::new(Mutex::new(0u64));
    let sink = next_context.clone();
    steps.push(FauxStep::factory(move |context, _, _, _| {
        *sink.lock().unwrap() = request_tokens(context);
        Ok(faux_assistant_message(
            vec![faux_text("continued")],
            FauxMessageOptions::default(),
        ))
    }));
    faux.set_responses(steps);
    let f = faux.clone();
    let store = Arc::new(Mutex::new(SessionStore::in_memory("/tmp")));
    let session = AgentSession::builder()
        .model(faux.model())
        .store(store.clone())
        .tools(vec![Arc::new(Echo)])
        .system_prompt("base prompt")
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .settings(settings(json!({
            "retry": {"enabled": false},
            "compaction": {"enabled": false, "reserveTokens": 2000, "keepRecentTokens": 1000}
        })))
        .compactor(Arc::new(AutoCompactor::new()))
        .build()
        .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let events_sink = events.clone();
    session.subscribe(move |e| {
        events_sink.lock().unwrap().push(e.clone());
        Ok(())
    });
    for i in 0..5 {
        let prompt = format!("question {i} ").repeat(500);
        session
            .prompt(&prompt, PromptOptions::default())
            .await
            .unwrap();
    }
    let context: u64 = session
        .messages()
        .iter()
        .map(pi_coding_agent::compaction::estimate_tokens)
        .sum();
    assert!(context >= 3 * WINDOW, "the context is {context} tokens");

    session.set_auto_compaction_enabled(true);
    session
        .prompt("next", PromptOptions::default())
        .await
        .unwrap();

    // Two summary requests (history, then the split turn's prefix), each within its budget.
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].1, 1600, "0.8 × reserveTokens");
    assert_eq!(seen[1].1, 1000, "0.5 × reserveTokens");
    for (tokens, max, _) in &seen {
        assert!(tokens + max <= WINDOW, "{seen:?}");
    }
    // The history request had to leave things out; the compaction says what.
    let end = events
        .lock()
        .unwrap()
        .iter()
        .find_map(|e| match e {
            AgentSessionEvent::CompactionEnd { result, .. } => Some(result.clone()),
            _ => None,
        })
        .flatten()
        .expect("a successful compaction");
    let details = end.details.unwrap();
    let omitted = &details["omitted"];
    assert!(omitted["messages"].as_u64().unwrap() > 0, "{details}");
    assert!(
        omitted["truncatedToolResults"].as_u64().unwrap() > 0,
        "{details}"
    );
    assert!(end.summary.starts_with("HISTORY"), "{}", end.summary);
    // The entry records the same details.
    let stored = store
        .lock()
        .unwrap()
        .entries()
        .unwrap()
        .into_iter()
        .find_map(|e| match &e.kind {
            pi_coding_agent::storage::EntryKind::Compaction { details, .. } => details.clone(),
            _ => None,
        })
        .unwrap();
    assert_eq!(stored, details);
    assert!(end.summary.contains("PREFIX"), "{}", end.summary);

    // The next prompt went on with the small, compacted context.
    assert_eq!(session.last_assistant_text().as_deref(), Some("continued"));
    let next = *next_context.lock().unwrap();
    assert!(next > 0 && next < WINDOW, "{next}");
    assert_eq!(session.messages()[0].role(), "compactionSummary");
}

fn summarizer(faux: &FauxProvider) -> Summarizer {
    let f = faux.clone();
    Summarizer {
        model: faux.model(),
        stream: Arc::new(move |m, c, o| f.stream(&m, &c, o)),
        api_key: None,
        headers: Vec::new(),
        thinking_level: pi_ai::ModelThinkingLevel::Off,
        session_id: None,
        signal: CancellationToken::new(),
        retry: SummaryRetry {
            enabled: false,
            ..Default::default()
        },
        on_retry: None,
    }
}

fn user(t: String) -> AgentMessage {
    AgentMessage::from(Message::User(UserMessage::text(t)))
}

fn preparation(
    messages: Vec<AgentMessage>,
    prefix: Vec<AgentMessage>,
    previous_summary: Option<String>,
) -> CompactionPreparation {
    CompactionPreparation {
        first_kept_entry_id: "kept".into(),
        is_split_turn: !prefix.is_empty(),
        messages_to_summarize: messages,
        turn_prefix_messages: prefix,
        tokens_before: 30_000,
        previous_summary,
        file_ops: FileOps::default(),
        settings: CompactionSettings {
            enabled: true,
            reserve_tokens: 2000,
            keep_recent_tokens: 1000,
        },
    }
}

#[tokio::test]
async fn the_update_of_a_previous_summary_fits_with_the_previous_summary() {
    let faux = faux();
    let seen = Arc::new(Mutex::new(Vec::new()));
    faux.set_responses(vec![fitting_summary("UPDATED", seen.clone())]);
    let messages = (0..10).map(|i| user(format!("{i}").repeat(3000))).collect();
    let previous = "P".repeat(8000);
    let prep = preparation(messages, Vec::new(), Some(previous));
    let result = summarizer(&faux).compact(&prep, None).await.unwrap();
    assert_eq!(result.summary, "UPDATED");
    let (tokens, max, _) = seen.lock().unwrap()[0];
    assert!(tokens + max <= WINDOW, "{tokens} + {max}");
    // 10 × 3000 chars cannot fit in 6400 tokens beside a 2000-token summary: the oldest go.
    let dropped = result.details["omitted"]["messages"].as_u64().unwrap();
    assert!((3..10).contains(&dropped), "{}", result.details);
    assert_eq!(result.details["omitted"]["truncatedToolResults"], 0);
    assert_eq!(
        result.details,
        json!({"readFiles": [], "modifiedFiles": [], "omitted": {"messages": dropped, "truncatedToolResults": 0}})
    );
}

#[tokio::test]
async fn both_halves_of_a_split_turn_are_fitted_and_their_omissions_summed() {
    let faux = faux();
    let seen = Arc::new(Mutex::new(Vec::new()));
    faux.set_responses(vec![
        fitting_summary("HISTORY", seen.clone()),
        fitting_summary("PREFIX", seen.clone()),
    ]);
    let history = (0..10)
        .map(|i| user(format!("h{i}").repeat(2000)))
        .collect();
    let prefix = (0..10)
        .map(|i| user(format!("p{i}").repeat(2000)))
        .collect();
    let prep = preparation(history, prefix, None);
    let result = summarizer(&faux).compact(&prep, None).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|(t, m, _)| t + m <= WINDOW), "{seen:?}");
    // Each half alone is 40 000 chars: both shed messages (the prefix call, with the larger
    // budget of 0.5 × reserve, fewer), and the counts add up.
    assert!(seen.iter().all(|(_, _, dropped)| *dropped), "{seen:?}");
    assert_eq!(
        result.details["omitted"],
        json!({"messages": 8, "truncatedToolResults": 0})
    );
    assert!(result.summary.starts_with("HISTORY"));
    assert!(
        result
            .summary
            .ends_with("**Turn Context (split turn):**\n\nPREFIX")
    );
}

#[tokio::test]
async fn a_request_that_fits_leaves_details_as_pi_writes_them() {
    let faux = faux();
    let seen = Arc::new(Mutex::new(Vec::new()));
    faux.set_responses(vec![fitting_summary("S", seen.clone())]);
    let prep = preparation(vec![user("small".into())], Vec::new(), None);
    let result = summarizer(&faux).compact(&prep, None).await.unwrap();
    assert_eq!(
        pi_ai::json::to_string(&result.details).unwrap(),
        r#"{"readFiles":[],"modifiedFiles":[]}"#
    );
}
