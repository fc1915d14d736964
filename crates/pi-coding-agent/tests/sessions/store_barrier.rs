//! The library side of "a printed event means the entry is in the file": a session listener
//! sees `message_end` before the entry is appended (pi's order), and the
//! `AgentSession::store_barrier` it takes passes once the entry is written.

use std::sync::{Arc, Mutex};

use pi_agent_core::{AgentEvent, AgentMessage};
use pi_ai::providers::faux::{FauxOptions, FauxProvider, faux_assistant_message, faux_text};
use pi_coding_agent::session::{AgentSession, AgentSessionEvent, PromptOptions};
use pi_coding_agent::storage::SessionStore;

/// What the listener saw for one `message_end`.
#[derive(Debug)]
struct Seen {
    role: String,
    text: String,
    entries_in_listener: usize,
    passed_in_listener: bool,
    waiter: std::thread::JoinHandle<(usize, String)>,
}

fn text_of(message: &AgentMessage) -> String {
    serde_json::to_value(message).unwrap()["content"]
        .as_array()
        .and_then(|c| c.first())
        .map(|b| b["text"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_waiting_on_the_store_barrier_of_message_end_finds_the_entry_written() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Mutex::new(
        SessionStore::create(dir.path(), "/w", None).unwrap(),
    ));
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![
        faux_assistant_message(vec![faux_text("first answer")], Default::default()).into(),
        faux_assistant_message(vec![faux_text("second answer")], Default::default()).into(),
    ]);
    let f = faux.clone();
    let session = AgentSession::builder()
        .model(faux.model())
        .store(store.clone())
        .stream_fn(Arc::new(move |m, c, o| f.stream(&m, &c, o)))
        .build()
        .unwrap();

    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let (s, st, durability) = (seen.clone(), store.clone(), session.durability());
    let others_passed = Arc::new(Mutex::new(true));
    let o = others_passed.clone();
    session.subscribe(move |event| {
        let barrier = durability.barrier();
        let AgentSessionEvent::Agent(inner) = event else {
            *o.lock().unwrap() &= barrier.is_passed();
            return Ok(());
        };
        let AgentEvent::MessageEnd { message } = &**inner else {
            *o.lock().unwrap() &= barrier.is_passed();
            return Ok(());
        };
        let entries_in_listener = st.lock().unwrap().len();
        let passed_in_listener = barrier.is_passed();
        let st = st.clone();
        // Another thread waits for the barrier, then looks at the store and the file.
        let waiter = std::thread::spawn(move || {
            barrier.wait_blocking();
            let store = st.lock().unwrap();
            let file = store
                .path()
                .and_then(|p| std::fs::read_to_string(p).ok())
                .unwrap_or_default();
            (store.len(), file)
        });
        s.lock().unwrap().push(Seen {
            role: message.role().to_owned(),
            text: text_of(message),
            entries_in_listener,
            passed_in_listener,
            waiter,
        });
        Ok(())
    });

    // Entries before the prompts: model and thinking-level changes.
    let initial = store.lock().unwrap().len();
    session
        .prompt("first question", PromptOptions::default())
        .await
        .unwrap();
    session
        .prompt("second question", PromptOptions::default())
        .await
        .unwrap();

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    let roles: Vec<&str> = seen.iter().map(|s| s.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    for (i, s) in seen.into_iter().enumerate() {
        // pi's order: the listener runs before the append…
        assert_eq!(s.entries_in_listener, initial + i, "{s:?}");
        assert!(!s.passed_in_listener, "{s:?}");
        // …and the barrier passes once it is done.
        let (entries, file) = s.waiter.join().unwrap();
        assert!(entries > initial + i, "{} not appended", s.text);
        // The first user message waits in memory for the first assistant message (as pi).
        if i > 0 {
            assert!(file.contains(&s.text), "{} not in the file", s.text);
        }
    }
    assert!(
        *others_passed.lock().unwrap(),
        "an event without a pending write never waits"
    );
    // Nothing is left pending once the run settled.
    assert!(session.store_barrier().is_passed());
    assert!(!session.durability().is_pending());
}
