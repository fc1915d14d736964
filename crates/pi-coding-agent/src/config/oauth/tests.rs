use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use super::*;

fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as f64
}

const TS_FILE: &str = r#"{
  "openai": {
    "type": "api_key",
    "key": "sk-keep"
  },
  "anthropic": {
    "type": "oauth",
    "refresh": "sk-ant-ort01-old",
    "access": "sk-ant-oat01-old",
    "expires": 1700000000000
  },
  "zai": {
    "type": "api_key",
    "key": "!echo z"
  }
}"#;

fn fresh_entry(refresh: &str) -> Map<String, Value> {
    json!({"type": "oauth", "refresh": refresh, "access": "sk-ant-oat01-new", "expires": now_ms() + 3_600_000.0})
        .as_object()
        .unwrap()
        .clone()
}

fn write(dir: &tempfile::TempDir, text: &str) -> std::path::PathBuf {
    let path = dir.path().join("auth.json");
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn an_expired_entry_is_refreshed_in_place_and_nothing_else_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, TS_FILE);
    let calls = AtomicUsize::new(0);
    let got = refresh_stored_with(&path, "anthropic", None, |current| {
        calls.fetch_add(1, Ordering::SeqCst);
        assert_eq!(current["refresh"], "sk-ant-ort01-old");
        async { Ok::<_, String>(fresh_entry("sk-ant-ort01-new")) }
    })
    .await
    .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let Refreshed::Entry(entry) = got else {
        panic!()
    };
    assert_eq!(entry["access"], "sk-ant-oat01-new");
    let text = std::fs::read_to_string(&path).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["openai", "anthropic", "zai"], "order kept");
    assert_eq!(v["openai"], json!({"type": "api_key", "key": "sk-keep"}));
    assert_eq!(v["zai"], json!({"type": "api_key", "key": "!echo z"}));
    assert_eq!(v["anthropic"]["refresh"], "sk-ant-ort01-new");
    assert!(
        text.starts_with("{\n  \"openai\": {\n    \"type\""),
        "pi's two-space JSON"
    );
    assert!(!dir.path().join("auth.json.lock").exists(), "lock released");
}

#[tokio::test]
async fn an_entry_fresh_under_the_lock_is_not_refreshed_again() {
    let dir = tempfile::tempdir().unwrap();
    // Another process refreshed it after our optimistic check.
    let text = serde_json::to_string_pretty(&json!({"anthropic": fresh_entry("r")})).unwrap();
    let path = write(&dir, &text);
    let got = refresh_stored_with(&path, "anthropic", None, |_| async {
        Err::<Map<String, Value>, _>("must not be called".to_owned())
    })
    .await
    .unwrap();
    assert!(matches!(got, Refreshed::Entry(e) if e["access"] == "sk-ant-oat01-new"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    // Logged out meanwhile.
    let path = write(&dir, r#"{"openai": {"type": "api_key", "key": "k"}}"#);
    let got = refresh_stored_with(&path, "anthropic", None, |_| async {
        Ok::<_, String>(fresh_entry("r"))
    })
    .await
    .unwrap();
    assert_eq!(got, Refreshed::Gone);
}

#[tokio::test]
async fn a_failed_refresh_writes_nothing_and_has_pi_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, TS_FILE);
    let err = refresh_stored_with(&path, "anthropic", None, |_| async {
        Err::<Map<String, Value>, _>(
            "Anthropic token refresh request failed. url=u; details=d".to_owned(),
        )
    })
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "OAuth refresh failed for anthropic: Anthropic token refresh request failed. url=u; details=d"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), TS_FILE);
    assert!(!dir.path().join("auth.json.lock").exists());
}

#[tokio::test]
async fn bad_files_are_errors_and_stay_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    for (text, expected) in [
        (
            "{\"anthropic\": ",
            "Credential store modify failed for anthropic: Unexpected end of JSON input",
        ),
        (
            r#"{"anthropic": {"type": "oauth", "access": "a", "expires": 1}}"#,
            "OAuth refresh failed for anthropic: Invalid auth.json credential for provider \"anthropic\"",
        ),
        (
            "[]",
            "Credential store modify failed for anthropic: Invalid auth.json: expected an object",
        ),
    ] {
        let path = write(&dir, text);
        let err = refresh_stored_with(&path, "anthropic", None, |_| async {
            Ok::<_, String>(fresh_entry("r"))
        })
        .await
        .unwrap_err();
        assert_eq!(err.to_string(), expected);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
    // An entry of a type pi does not know is not ours to refresh.
    let text = r#"{"anthropic": {"type": "passkey", "x": 1}}"#;
    let path = write(&dir, text);
    let got = refresh_stored_with(&path, "anthropic", None, |_| async {
        Ok::<_, String>(fresh_entry("r"))
    })
    .await
    .unwrap();
    assert_eq!(got, Refreshed::Gone);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[tokio::test]
async fn a_lock_left_by_a_dead_process_is_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, TS_FILE);
    let lock_dir = dir.path().join("auth.json.lock");
    std::fs::create_dir(&lock_dir).unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(31);
    std::fs::File::open(&lock_dir)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let started = std::time::Instant::now();
    refresh_stored_with(&path, "anthropic", None, |_| async {
        Ok::<_, String>(fresh_entry("n"))
    })
    .await
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!lock_dir.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_refreshes_make_one_request() {
    let dir = tempfile::tempdir().unwrap();
    let path = Arc::new(write(&dir, TS_FILE));
    let calls = Arc::new(AtomicUsize::new(0));
    let run = |path: Arc<std::path::PathBuf>, calls: Arc<AtomicUsize>| {
        tokio::spawn(async move {
            refresh_stored_with(&path, "anthropic", None, |_| async move {
                calls.fetch_add(1, Ordering::SeqCst);
                // Hold the lock long enough for the other task to wait on it.
                tokio::time::sleep(Duration::from_millis(200)).await;
                Ok::<_, String>(fresh_entry("n"))
            })
            .await
        })
    };
    let a = run(path.clone(), calls.clone());
    let b = run(path.clone(), calls.clone());
    let (a, b) = (a.await.unwrap().unwrap(), b.await.unwrap().unwrap());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let (Refreshed::Entry(a), Refreshed::Entry(b)) = (a, b) else {
        panic!()
    };
    assert_eq!(a["access"], b["access"]);
    assert_eq!(a["expires"].as_f64(), b["expires"].as_f64());
}

#[tokio::test]
async fn a_token_shorter_than_the_minimum_is_refused_after_being_stored() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, TS_FILE);
    let err = refresh_stored_with(
        &path,
        "anthropic",
        Some(Duration::from_secs(7200)),
        |_| async { Ok::<_, String>(fresh_entry("n")) },
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "OAuth refresh returned a token that expires too soon for anthropic"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["anthropic"]["refresh"], "n");
}
