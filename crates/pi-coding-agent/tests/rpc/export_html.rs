//! RPC `export_html` through the `pi` binary: the default path and a path into a missing
//! directory, answered as pi 0.85.0 answers them.

use pi_ai::testkit::ReplayServer;
use serde_json::{Value, json};

use crate::support::anthropic_sse::anthropic_text;
use crate::support::binary_rig::{Rig, print_args};

#[tokio::test]
async fn rpc_export_html_answers_the_default_path_as_pi_does() {
    // pi 0.85.0 `exportSessionToHtml` writes `pi-session-<file stem>.html` relative to the
    // working directory and answers that relative path; a given path is answered as given.
    let (_, server) = ReplayServer::start(vec![anthropic_text("hello")])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    let sessions = rig.sessions();
    let first = rig.run(&print_args(&["--session-dir", &sessions])).await;
    assert_eq!(first.code, 0, "{}", first.stderr);
    let file = rig.session_files()[0].clone();
    let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
    let file = file.display().to_string();
    let input = "{\"type\":\"export_html\",\"id\":\"a\"}\n\
                 {\"type\":\"export_html\",\"outputPath\":\"out/x.html\",\"id\":\"b\"}\n";
    std::fs::create_dir(rig.path("work/out")).unwrap();
    let run = rig
        .run_with_input(
            &[
                "--mode",
                "rpc",
                "--session",
                &file,
                "--provider",
                "replay-anthropic",
                "--model",
                "replay-model",
            ],
            Some(input),
        )
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let responses: Vec<Value> = run
        .records()
        .into_iter()
        .filter(|r| r["type"] == "response")
        .collect();
    let default_name = format!("pi-session-{stem}.html");
    assert_eq!(
        responses[0],
        json!({"id": "a", "type": "response", "command": "export_html", "success": true,
               "data": {"path": default_name}})
    );
    assert_eq!(responses[1]["data"], json!({"path": "out/x.html"}));
    assert!(rig.path("work").join(&default_name).is_file());
    assert!(rig.path("work/out/x.html").is_file());
}

#[tokio::test]
async fn rpc_export_html_into_a_missing_directory_is_node_s_open_error() {
    // pi 0.85.0 writes the page with writeFileSync(outputPath): the error names the path as
    // given.
    let (_, server) = ReplayServer::start(vec![anthropic_text("hello")])
        .await
        .unwrap();
    let rig = Rig::new(&server.base_url(), &json!({}));
    let sessions = rig.sessions();
    let first = rig.run(&print_args(&["--session-dir", &sessions])).await;
    assert_eq!(first.code, 0, "{}", first.stderr);
    let file = rig.session_files()[0].display().to_string();
    let input = "{\"type\":\"export_html\",\"outputPath\":\"./a/../o.html\",\"id\":\"e\"}\n";
    let run = rig
        .run_with_input(
            &[
                "--mode",
                "rpc",
                "--session",
                &file,
                "--provider",
                "replay-anthropic",
                "--model",
                "replay-model",
            ],
            Some(input),
        )
        .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let response = run.records().into_iter().find(|r| r["id"] == "e").unwrap();
    assert_eq!(
        response,
        json!({"id": "e", "type": "response", "command": "export_html", "success": false,
               "error": "ENOENT: no such file or directory, open './a/../o.html'"})
    );
}
