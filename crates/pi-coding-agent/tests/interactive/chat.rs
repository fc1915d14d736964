//! The interactive mode through the real binary in a pty, its output in the test kit's screen
//! model, against the replay server: what a user of `pi` in a terminal sees and leaves behind
//! (the screen, the scrollback, the session file, the resume hint).

use std::time::Duration;

use pi_ai::testkit::Reply;
use pi_tui::testkit::ScreenModel;
use serde_json::{Value, json};

use crate::support::anthropic_sse::{anthropic_text, anthropic_tools};
use crate::support::binary_rig::{file_records, slot};
use crate::support::pty_rig::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_terminals_start_the_interactive_mode_with_the_first_message() {
    let _slot = slot();
    let srv = server(vec![anthropic_text("Hi there, user.")]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = root.spawn_replay(&["hello pi"], 30, 100);
    wait_text(&mut s, "Hi there, user.");
    wait_ready(&mut s);
    let screen = s.model().screen_text();
    assert!(
        screen.contains(&format!("pi v{}", pi_coding_agent::VERSION)),
        "{screen}"
    );
    assert!(screen.contains("hello pi"), "{screen}");
    assert!(screen.contains("replay-model"), "{screen}");
    assert_eq!(request_user_texts(&srv, 0), ["hello pi"]);
    let all = quit(&mut s).replace('\n', "");
    assert!(
        all.contains("To resume this session: pi --session "),
        "{all}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_round_trip_streams_to_the_screen_and_the_session_file() {
    let _slot = slot();
    let srv = server(vec![
        anthropic_tools(&[("toolu_1", "read", json!({"path": "hello.txt"}))]),
        anthropic_text("The file says: \"Hello from the scratch dir!\""),
    ])
    .await;
    let root = Root::new(&srv.base_url(), json!({}));
    let dir = root.sessions();
    let mut s = root.spawn_replay(&["--session-dir", &dir], 30, 100);
    wait_ready(&mut s);
    type_line(&mut s, "What does hello.txt say?");
    wait_text(&mut s, "The file says:");
    ok(s.settle(Duration::from_millis(300)));
    let m = s.model();
    assert_once(m, "What does hello.txt say?");
    assert_once(m, "read hello.txt");
    assert_once(m, "The file says: \"Hello from the scratch dir!\"");
    // The read box is collapsed; Ctrl+O shows the file's text inside it.
    assert!(!m.screen_text().contains("Hello from the scratch dir!\n"));
    ok(s.send(b"\x0f"));
    wait_text(&mut s, " Hello from the scratch dir!");
    ok(s.send(b"\x0f"));
    ok(s.settle(Duration::from_millis(200)));
    let all = quit(&mut s).replace('\n', "");
    let files = root.session_files();
    assert_eq!(files.len(), 1);
    let id = file_records(&files[0])[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        all.contains(&format!(
            "To resume this session: pi --session-dir {dir} --session {id}"
        )),
        "{all}"
    );
    let roles: Vec<String> = file_records(&files[0])
        .iter()
        .filter(|r| r["type"] == "message")
        .map(|r| r["message"]["role"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);

    // A resumed session shows its history once, and its prompts are in the editor history.
    let mut s = root.spawn(&["--session-dir", &dir, "-c"], 30, 100);
    wait_ready(&mut s);
    wait_text(&mut s, "The file says:");
    // The stored usage fills the footer (read in the background after the first frame).
    wait_text(&mut s, "↑20 ↓10");
    assert_once(s.model(), "What does hello.txt say?");
    ok(s.send(b"\x1b[A"));
    ok(s.wait_for("the last prompt recalled", WAIT, |m| {
        m.screen_lines()
            .iter()
            .filter(|l| l.contains("What does hello.txt say?"))
            .count()
            == 2
    }));
    ok(s.send(b"\x03"));
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bang_command_runs_in_the_shell_and_is_recorded() {
    let _slot = slot();
    let srv = server(vec![anthropic_text("I saw it.")]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let dir = root.sessions();
    let mut s = root.spawn_replay(&["--session-dir", &dir], 30, 80);
    wait_ready(&mut s);
    type_line(&mut s, "!echo from-the-shell; seq 1 24");
    wait_text(&mut s, "... 5 more lines (ctrl+o to expand)");
    assert_once(s.model(), "$ echo from-the-shell; seq 1 24");
    let screen = s.model().screen_text();
    // The last 20 of 25 lines, with pi's hint for the rest.
    assert!(!screen.contains("from-the-shell\n"), "{screen}");
    assert!(
        screen.contains(" 5\n") && screen.contains(" 24\n"),
        "{screen}"
    );
    assert_eq!(srv.request_count(), 0, "a command asks no model");
    // The command's output is in the next request's context.
    type_line(&mut s, "what did it print?");
    wait_text(&mut s, "I saw it.");
    let body = srv.requests()[0].body_json().unwrap().to_string();
    assert!(body.contains("from-the-shell"), "{body}");
    quit(&mut s);
    let files = root.session_files();
    let records = file_records(&files[0]);
    let rec = records
        .iter()
        .find(|r| r["message"]["role"] == "bashExecution")
        .expect("the command's record");
    assert_eq!(rec["message"]["command"], "echo from-the-shell; seq 1 24");
    assert!(
        rec["message"]["output"]
            .as_str()
            .unwrap()
            .starts_with("from-the-shell\n1\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_tab_and_ctrl_p_change_the_footer() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    // Two reasoning models of one provider.
    let model = |id: &str| json!({"id": id, "reasoning": true, "contextWindow": 128000, "maxTokens": 16384});
    let models = json!({"providers": {"replay-anthropic": {
        "baseUrl": srv.base_url(), "api": "anthropic-messages", "apiKey": "replay-test-key",
        "models": [model("replay-model"), model("replay-other")]
    }}});
    std::fs::write(root.path("agent/models.json"), models.to_string()).unwrap();
    let mut s = root.spawn_replay(&[], 24, 120);
    wait_ready(&mut s);
    let footer = |m: &mut ScreenModel| {
        m.screen_lines()
            .into_iter()
            .rfind(|l| l.contains("(auto)"))
            .unwrap_or_default()
    };
    let before = footer(s.model());
    assert!(
        before.trim_end().ends_with("replay-model • medium"),
        "{before}"
    );
    ok(s.send(b"\x1b[Z"));
    ok(s.wait_for("the next thinking level", WAIT, |m| {
        footer(m).trim_end().ends_with("replay-model • high")
    }));
    wait_text(&mut s, "Thinking level: high");
    // Ctrl+P moves to the next available model.
    ok(s.send(b"\x10"));
    ok(s.wait_for("the other model", WAIT, |m| {
        footer(m).trim_end().ends_with("replay-other • high")
    }));
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_submitted_while_streaming_steers() {
    let _slot = slot();
    // A slow answer: 40 words 60 ms apart, so the test can type while it streams.
    let words: Vec<String> = (1..=40).map(|i| format!("word{i}")).collect();
    let slow = anthropic_text(&words.join(" "))
        .chunk_size(7)
        .event_delay(Duration::from_millis(60));
    let srv = server(vec![
        slow,
        anthropic_text("Steered answer."),
        anthropic_text("unused"),
    ])
    .await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = root.spawn_replay(&[], 30, 100);
    wait_ready(&mut s);
    type_line(&mut s, "start slowly");
    wait_text(&mut s, "Working");
    type_line(&mut s, "go this way instead");
    wait_text(&mut s, "Steered answer.");
    assert_eq!(
        request_user_texts(&srv, 1),
        ["start slowly", "go this way instead"]
    );
    assert_once(s.model(), "go this way instead");

    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_aborts_a_running_tool_and_resize_keeps_the_screen_whole() {
    let _slot = slot();
    let srv = server(vec![
        anthropic_tools(&[(
            "toolu_1",
            "bash",
            json!({"command": "echo started; sleep 30"}),
        )]),
        anthropic_text("after the abort"),
    ])
    .await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = root.spawn_replay(&[], 30, 100);
    wait_ready(&mut s);
    type_line(&mut s, "run something long");
    wait_text(&mut s, "Elapsed");
    ok(s.resize(24, 70));
    // The running box repaints its time all along: pump a while rather than wait for quiet.
    pump_for(&mut s, Duration::from_millis(400));
    wait_text(&mut s, "$ echo started; sleep 30");
    ok(s.send(b"\x1b"));
    wait_text(&mut s, "Operation aborted");
    wait_text(&mut s, "Command aborted");
    ok(s.settle(Duration::from_millis(300)));
    assert_eq!(srv.request_count(), 1, "no request after the abort");
    let m = s.model();
    assert_once(m, "run something long");
    assert!(
        m.scrollback_clears().len() <= 1,
        "one replay for the width change"
    );
    for l in m.screen_lines() {
        assert!(pi_tui::ansi::visible_width(&l) <= 70, "{l:?}");
    }
    // The editor still works after the abort.
    type_line(&mut s, "!echo still-usable");
    wait_text(&mut s, "still-usable");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_output_mode_on_terminals_is_interactive_and_a_refusal_keeps_it_usable() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    // No models at all: the first prompt gets pi's refusal in the transcript.
    std::fs::write(root.path("agent/models.json"), "{}").unwrap();
    let mut s = root.spawn(&["--mode", "text", "hello"], 30, 100);
    wait_ready(&mut s);
    wait_text(
        &mut s,
        "Warning: No models available. Use /login to log into a provider",
    );
    wait_text(&mut s, "No API key found");
    assert!(s.model().screen_text().contains("no-model"));
    type_line(&mut s, "!echo alive");
    wait_text(&mut s, "alive");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alt_enter_queues_a_follow_up_shown_until_delivered() {
    let _slot = slot();
    let words: Vec<String> = (1..=30).map(|i| format!("w{i}")).collect();
    let slow = anthropic_text(&words.join(" "))
        .chunk_size(7)
        .event_delay(Duration::from_millis(60));
    let srv = server(vec![slow, anthropic_text("Followed up.")]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = root.spawn_replay(&[], 30, 100);
    wait_ready(&mut s);
    type_line(&mut s, "first task");
    wait_text(&mut s, "Working");
    ok(s.send(b"then this"));
    ok(s.send(b"\x1b\r"));
    wait_text(&mut s, "Follow-up: then this");
    wait_text(&mut s, "Followed up.");
    ok(s.settle(Duration::from_millis(300)));
    assert!(!s.model().screen_text().contains("Follow-up: then this"));
    assert_eq!(request_user_texts(&srv, 1), ["first task", "then this"]);
    assert_once(s.model(), "then this");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_clears_the_editor_and_twice_exits() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = root.spawn_replay(&[], 24, 80);
    wait_ready(&mut s);
    ok(s.send(b"draft text"));
    wait_text(&mut s, "draft text");
    ok(s.send(b"\x03"));
    ok(s.wait_for("the editor cleared", WAIT, |m| {
        !m.screen_text().contains("draft text")
    }));
    std::thread::sleep(Duration::from_millis(600));
    // Once more after a pause only clears; twice in a row exits.
    ok(s.send(b"\x03"));
    pump_for(&mut s, Duration::from_millis(100));
    ok(s.send(b"\x03"));
    assert_eq!(ok(s.wait_exit(WAIT)), 0);
    assert!(!s.model().bracketed_paste());
    // No session file was written, so there is nothing to resume.
    assert!(!s.model().all_lines().join("\n").contains("To resume"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_is_shown_and_ctrl_t_collapses_it() {
    let _slot = slot();
    let sse = pi_ai::testkit::SseBuilder::new()
        .event(
            "message_start",
            &json!({"type":"message_start","message":{"id":"m","type":"message",
            "role":"assistant","model":"replay-model","content":[],"stop_reason":null,
            "stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}),
        )
        .event(
            "content_block_start",
            &json!({"type":"content_block_start","index":0,
            "content_block":{"type":"thinking","thinking":"","signature":""}}),
        )
        .event(
            "content_block_delta",
            &json!({"type":"content_block_delta","index":0,
            "delta":{"type":"thinking_delta","thinking":"Pondering the question deeply."}}),
        )
        .event(
            "content_block_delta",
            &json!({"type":"content_block_delta","index":0,
            "delta":{"type":"signature_delta","signature":"sig"}}),
        )
        .event(
            "content_block_stop",
            &json!({"type":"content_block_stop","index":0}),
        )
        .event(
            "content_block_start",
            &json!({"type":"content_block_start","index":1,
            "content_block":{"type":"text","text":""}}),
        )
        .event(
            "content_block_delta",
            &json!({"type":"content_block_delta","index":1,
            "delta":{"type":"text_delta","text":"The answer is 42."}}),
        )
        .event(
            "content_block_stop",
            &json!({"type":"content_block_stop","index":1}),
        )
        .event(
            "message_delta",
            &json!({"type":"message_delta","delta":{"stop_reason":"end_turn",
            "stop_sequence":null},"usage":{"output_tokens":5}}),
        )
        .event("message_stop", &json!({"type":"message_stop"}))
        .build();
    let srv = server(vec![Reply::sse(sse)]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = root.spawn_replay(&[], 30, 100);
    wait_ready(&mut s);
    type_line(&mut s, "think first");
    wait_text(&mut s, "The answer is 42.");
    ok(s.settle(Duration::from_millis(200)));
    let screen = s.model().screen_text();
    let think = screen
        .find("Pondering the question deeply.")
        .expect("thinking shown");
    assert!(
        think < screen.find("The answer is 42.").unwrap(),
        "{screen}"
    );
    ok(s.send(b"\x14"));
    ok(s.wait_for("thinking collapsed", WAIT, |m| {
        let t = m.screen_text();
        t.contains("Thinking...") && !t.contains("Pondering")
    }));
    assert_once(s.model(), "The answer is 42.");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_kills_the_running_tool_restores_the_terminal_and_exits_0() {
    let _slot = slot();
    let srv = server(vec![anthropic_tools(&[(
        "toolu_1",
        "bash",
        json!({"command": "echo $$ > shell.pid; sleep 30"}),
    )])])
    .await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = root.spawn_replay(&[], 30, 100);
    wait_ready(&mut s);
    type_line(&mut s, "run it");
    wait_text(&mut s, "Elapsed");
    let pid_file = root.path("work/shell.pid");
    ok(s.wait_for("the shell's pid", WAIT, |_| {
        std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n'))
    }));
    let shell: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let pi = i32::try_from(s.pid().unwrap()).unwrap();
    // SAFETY: signals to processes this test started.
    unsafe {
        libc::kill(pi, libc::SIGTERM);
    }
    assert_eq!(ok(s.wait_exit(WAIT)), 0);
    let m = s.model();
    assert!(!m.bracketed_paste() && !m.cursor_hidden());
    assert!(!m.all_lines().join("\n").contains("To resume"));
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    // SAFETY: signal 0 only checks for existence.
    while unsafe { libc::kill(shell, 0) } == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the tool's shell survived"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_startup_leaves_out_the_header_and_fullscreen_uses_the_alternate_screen() {
    let _slot = slot();
    let srv = server(vec![anthropic_text("Shown in fullscreen.")]).await;
    let root = Root::new(&srv.base_url(), json!({"quietStartup": true}));
    let mut s = root.spawn_replay(&["--tui-mode", "fullscreen"], 24, 90);
    wait_ready(&mut s);
    assert!(s.model().alternate_screen());
    assert!(
        !s.model().screen_text().contains("pi v"),
        "{}",
        s.model().screen_text()
    );
    type_line(&mut s, "hello");
    wait_text(&mut s, "Shown in fullscreen.");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_resumed_session_draws_its_last_messages_and_counts_the_rest() {
    use pi_agent_core::AgentMessage;
    use pi_ai::{AssistantContent, AssistantMessage, TextContent, UserMessage};
    use pi_coding_agent::storage::{EntryKind, SessionStore};
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let cwd = root.path("work").canonicalize().unwrap();
    let mut store =
        SessionStore::create(&root.path("sessions"), &cwd.display().to_string(), None).unwrap();
    for i in 0..250 {
        let user = UserMessage {
            content: pi_ai::UserMessageContent::Text(format!("question {i}")),
            ..UserMessage::default()
        };
        store
            .append(EntryKind::Message {
                message: AgentMessage::from(user),
            })
            .unwrap();
        let mut a =
            AssistantMessage::empty("anthropic-messages", "replay-anthropic", "replay-model");
        a.content = vec![AssistantContent::Text(TextContent::new(format!(
            "answer {i}"
        )))];
        store
            .append(EntryKind::Message {
                message: AgentMessage::from(a),
            })
            .unwrap();
    }
    store.sync().unwrap();
    let dir = root.sessions();
    let mut s = root.spawn(&["--session-dir", &dir, "-c"], 30, 100);
    wait_ready(&mut s);
    wait_text(&mut s, "answer 249");
    let all = s.model().all_lines().join("\n");
    assert!(
        all.contains("··· 300 earlier messages of this session not shown ···"),
        "{all}"
    );
    assert!(
        all.contains("question 150") && !all.contains("question 149\n"),
        "{all}"
    );
    // The editor history still has every prompt: Up recalls the last one.
    ok(s.send(b"\x1b[A"));
    ok(s.wait_for("the last prompt recalled", WAIT, |m| {
        m.screen_lines()
            .iter()
            .filter(|l| l.contains("question 249"))
            .count()
            == 2
    }));
    ok(s.send(b"\x03"));
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_x_copies_the_last_reply_through_osc_52() {
    use base64::Engine as _;
    let _slot = slot();
    let srv = server(vec![anthropic_text("Copy me, please.")]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = root.spawn_replay(&[], 24, 90);
    wait_ready(&mut s);
    ok(s.send(b"\x18"));
    wait_text(&mut s, "No agent messages to copy yet.");
    type_line(&mut s, "say something");
    wait_text(&mut s, "Copy me, please.");
    ok(s.send(b"\x18"));
    wait_text(&mut s, "Copied last agent message to clipboard");
    let want = format!(
        "\x1b]52;c;{}\x07",
        base64::engine::general_purpose::STANDARD.encode("Copy me, please.")
    );
    let bytes = String::from_utf8_lossy(s.model().bytes()).into_owned();
    assert!(bytes.contains(&want), "no OSC 52 with the reply");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_g_edits_the_prompt_in_the_external_editor() {
    use std::os::unix::fs::PermissionsExt as _;
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let script = root.path("editor.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\ncat \"$1\" > \"$1.seen\"\nprintf 'rewritten by the editor\\n' > \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let settings =
        json!({"retry": {"enabled": false}, "externalEditor": script.display().to_string()});
    std::fs::write(root.path("agent/settings.json"), settings.to_string()).unwrap();
    let mut s = root.spawn_replay(&[], 24, 90);
    wait_ready(&mut s);
    ok(s.send(b"first draft"));
    wait_text(&mut s, "first draft");
    ok(s.send(b"\x07"));
    wait_text(&mut s, "rewritten by the editor");
    assert!(!s.model().screen_text().contains("first draft"));
    let seen: Vec<String> = std::fs::read_dir(root.path("tmp"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "seen"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert_eq!(seen, ["first draft"]);
    // The editor file is removed afterwards; the terminal is ours again.
    ok(s.send(b"\x03"));
    quit(&mut s);
    let left: Vec<_> = std::fs::read_dir(root.path("tmp"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .collect();
    assert!(left.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_with_pi_resources_asks_for_trust_first() {
    let _slot = slot();
    let srv = server(vec![]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    std::fs::create_dir_all(root.path("work/.pi")).unwrap();
    std::fs::write(root.path("work/.pi/settings.json"), "{}").unwrap();
    // Declined (Esc): nothing is recorded, the session starts untrusted.
    let mut s = root.spawn_replay(&[], 30, 100);
    wait_text(&mut s, "Trust project folder?");
    wait_text(&mut s, "Do not trust");
    ok(s.send(b"\x1b"));
    wait_ready(&mut s);
    quit(&mut s);
    assert!(!root.path("agent/trust.json").exists());
    // Asked again; Enter takes the first option, "Trust", which is written to trust.json.
    let mut s = root.spawn_replay(&[], 30, 100);
    wait_text(&mut s, "Trust project folder?");
    ok(s.send(b"\r"));
    wait_ready(&mut s);
    quit(&mut s);
    let trust: Value =
        serde_json::from_str(&std::fs::read_to_string(root.path("agent/trust.json")).unwrap())
            .unwrap();
    let cwd = root.path("work").canonicalize().unwrap();
    assert_eq!(trust[cwd.display().to_string()], true, "{trust}");
    // Decided: no question the third time.
    let mut s = root.spawn_replay(&[], 30, 100);
    wait_ready(&mut s);
    assert!(
        !s.model()
            .all_lines()
            .join("\n")
            .contains("Trust project folder?")
    );
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_returns_queued_messages_to_the_editor() {
    let _slot = slot();
    let words: Vec<String> = (1..=60).map(|i| format!("w{i}")).collect();
    let slow = anthropic_text(&words.join(" "))
        .chunk_size(5)
        .event_delay(Duration::from_millis(80));
    let srv = server(vec![slow, anthropic_text("unused")]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let mut s = root.spawn_replay(&[], 30, 100);
    wait_ready(&mut s);
    type_line(&mut s, "long task");
    wait_text(&mut s, "Working");
    type_line(&mut s, "steer me later");
    wait_text(&mut s, "Steering: steer me later");
    ok(s.send(b"\x1b"));
    wait_text(&mut s, "Operation aborted");
    ok(s.settle(Duration::from_millis(300)));
    let screen = s.model().screen_text();
    assert!(!screen.contains("Steering: steer me later"), "{screen}");
    // The editor holds the queued text again (between the rules, not as a queue line).
    let lines = s.model().screen_lines();
    let rule = lines.iter().rposition(|l| l.starts_with("──")).unwrap();
    assert!(
        lines[..rule].iter().any(|l| l.trim() == "steer me later"),
        "{screen}"
    );
    // Nothing was sent after the abort (the steering message was never delivered).
    assert!(srv.request_count() <= 1);
    ok(s.send(b"\x03"));
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_name_session_and_quit() {
    let _slot = slot();
    let srv = server(vec![anthropic_text("Noted.")]).await;
    let root = Root::new(&srv.base_url(), json!({}));
    let dir = root.sessions();
    let mut s = root.spawn_replay(&["--session-dir", &dir], 30, 100);
    wait_ready(&mut s);
    type_line(&mut s, "/name");
    wait_text(&mut s, "Warning: Usage: /name <name>");
    type_line(&mut s, "/name  refactor work ");
    wait_text(&mut s, "Session name set: refactor work");
    ok(s.wait_for("the name in the footer", WAIT, |m| {
        m.screen_text().contains("work • refactor work")
    }));
    type_line(&mut s, "remember this");
    wait_text(&mut s, "Noted.");
    type_line(&mut s, "/session");
    wait_text(&mut s, "Session Info");
    let screen = s.model().screen_text();
    assert!(screen.contains("Name: refactor work"), "{screen}");
    assert!(
        screen.contains("User: 1") && screen.contains("Assistant: 1"),
        "{screen}"
    );
    ok(s.send(b"\x1b[Z"));
    wait_text(&mut s, "Current model does not support thinking");
    // No command reached the model.
    assert_eq!(request_user_texts(&srv, 0), ["remember this"]);
    type_line(&mut s, "/quit");
    assert_eq!(ok(s.wait_exit(WAIT)), 0);
    let all = s.model().all_lines().join("\n").replace('\n', "");
    assert!(
        all.contains("To resume this session: pi --session-dir"),
        "{all}"
    );
    let names: Vec<Value> = file_records(&root.session_files()[0])
        .into_iter()
        .filter(|r| r["type"] == "session_info")
        .map(|r| r["name"].clone())
        .collect();
    assert_eq!(names, [json!("refactor work")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_footer_stays_on_the_last_row_once_the_screen_is_full() {
    let _slot = slot();
    let answer: Vec<String> = (1..=12).map(|i| format!("Answer line {i}.")).collect();
    let srv = server(vec![
        anthropic_tools(&[("toolu_1", "bash", json!({"command": "seq 1 4"}))]),
        anthropic_text(&answer.join("\n")),
        anthropic_tools(&[("toolu_2", "bash", json!({"command": "seq 5 8"}))]),
        anthropic_text("Done again."),
    ])
    .await;
    let root = Root::new(&srv.base_url(), json!({}));
    let rows = 18;
    let mut s = root.spawn_replay(&[], rows, 80);
    wait_ready(&mut s);
    for (prompt, last) in [
        ("first run", "Answer line 12."),
        ("!seq 1 6", "$ seq 1 6"),
        ("second run", "Done again."),
        ("!seq 10 16", "16"),
    ] {
        type_line(&mut s, prompt);
        wait_text(&mut s, last);
        ok(s.wait_for("the run to settle", WAIT, |m| {
            let t = m.screen_text();
            !t.contains("Working") && !t.contains("Running...")
        }));
        ok(s.settle(Duration::from_millis(300)));
        let lines = s.model().screen_lines();
        assert!(
            lines[usize::from(rows) - 1].contains("(auto)"),
            "the footer is not on the last row:\n{}",
            lines.join("\n")
        );
    }
    let m = s.model();
    assert_once(m, "Answer line 1.");
    assert_once(m, "$ seq 5 8");
    quit(&mut s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_shows_what_its_summaries_cost() {
    use pi_agent_core::AgentMessage;
    use pi_ai::{UserMessage, UserMessageContent};
    use pi_coding_agent::storage::{EntryKind, SessionStore};
    let _slot = slot();
    let srv = server(vec![]).await;
    let user = |text: &str| EntryKind::Message {
        message: AgentMessage::from(UserMessage {
            content: UserMessageContent::Text(text.to_owned()),
            ..UserMessage::default()
        }),
    };
    for notices in [true, false] {
        let root = Root::new(&srv.base_url(), json!({"showCacheMissNotices": notices}));
        let cwd = root.path("work").canonicalize().unwrap();
        let mut store =
            SessionStore::create(&root.path("sessions"), &cwd.display().to_string(), None).unwrap();
        let first = store.append(user("before the compaction")).unwrap();
        // pi writes a session file from its first assistant message on.
        let mut a = pi_ai::AssistantMessage::empty(
            "anthropic-messages",
            "replay-anthropic",
            "replay-model",
        );
        a.content = vec![pi_ai::AssistantContent::Text(pi_ai::TextContent::new(
            "an answer",
        ))];
        store
            .append(EntryKind::Message {
                message: AgentMessage::from(a),
            })
            .unwrap();
        store
            .append(EntryKind::Compaction {
                summary: "The user asked things.".into(),
                first_kept_entry_id: first,
                tokens_before: 50_000,
                details: None,
                usage: Some(json!({"input": 12000, "output": 900, "cacheRead": 0,
                    "cacheWrite": 0, "cost": {"total": 0.0412}})),
                from_hook: None,
            })
            .unwrap();
        let kept = store.append(user("after the compaction")).unwrap();
        store
            .append(EntryKind::BranchSummary {
                from_id: kept,
                summary: "An abandoned branch.".into(),
                details: None,
                usage: Some(json!({"input": 500, "output": 20, "cacheRead": 0,
                    "cacheWrite": 0, "cost": {"total": 0.001}})),
                from_hook: None,
            })
            .unwrap();
        store.append(user("on the new branch")).unwrap();
        store.sync().unwrap();
        let file = store.path().unwrap().display().to_string();
        let mut s = root.spawn(&["--session", &file], 30, 100);
        wait_ready(&mut s);
        wait_text(&mut s, "on the new branch");
        ok(s.settle(Duration::from_millis(200)));
        let all = s.model().all_lines().join("\n");
        let compaction = "Compaction: 13k tokens billed (~$0.04)";
        let branch = "Branch summary: 520 tokens billed";
        if notices {
            let (c, b) = (all.find(compaction), all.find(branch));
            assert!(
                matches!((c, b), (Some(c), Some(b)) if c < b),
                "both notices, in order:\n{all}"
            );
            assert!(
                !all.contains("520 tokens billed (~$"),
                "no cost under a cent"
            );
        } else {
            assert!(
                !all.contains("tokens billed"),
                "notices off by default:\n{all}"
            );
        }
        quit(&mut s);
    }
}
